/*
 * Occupancy rules and their application (see occupancy.h).
 *
 * DESIGN
 * The rules table below is the only place numbers of an architecture
 * appear. Sources (docs/model.md gives them per number):
 *   [PG]  CUDA C++ Programming Guide, "Compute Capabilities", table
 *         "Technical Specifications per Compute Capability": warps, blocks,
 *         threads, registers per SM and per block and per thread, shared
 *         memory per SM, per block and with opt-in, the supported shared
 *         memory capacities ("carve-outs") per architecture, and the 1 KB
 *         the system reserves per block on 8.0 and later.
 *   [OCC] cuda_occupancy.h, NVIDIA's occupancy calculator shipped with the
 *         toolkit: register allocation unit (256 per warp) and the split
 *         over 4 sub-partitions with the per-block check on warps rounded
 *         up to the sub-partitions, shared allocation unit (256 bytes before
 *         8.0, 128 from 8.0), carve-out alignment, barrier factor.
 * The 9.0 row was checked against cuOccupancyMaxActiveBlocksPerMultiprocessor
 * on an H200 over every configuration of tests/fixtures/occupancy/.
 * Each resource's limit is its own small function; occ_compute takes the
 * least and records which gave it.
 */
#include "model/occupancy.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define KIB 1024
#define NO_LIMIT INT_MAX

/* Steps of the shared-memory capacity per SM, in KiB [PG], [OCC]. */
#define STEPS_VOLTA {0, 8, 16, 32, 64, 96}, 6
#define STEPS_TURING {32, 64}, 2
#define STEPS_A100 {0, 8, 16, 32, 64, 100, 132, 164}, 8
#define STEPS_GA10X {0, 8, 16, 32, 64, 100}, 6
#define STEPS_HOPPER {0, 8, 16, 32, 64, 100, 132, 164, 196, 228}, 10

static const struct occ_rules rules[] = {
    /* cc    warp thr/blk warps/SM blk/SM regs/SM regs/blk regs/thr unit sub
     *       smem/SM       smem/blk   opt-in        reserve alloc steps barrier-factor */
    {7, 0, 32, 1024, 64, 32, 65536, 65536, 255, 256, 4,
     96 * KIB, 48 * KIB, 96 * KIB, 0, 256, STEPS_VOLTA, 2},
    {7, 5, 32, 1024, 32, 16, 65536, 65536, 255, 256, 4,
     64 * KIB, 48 * KIB, 64 * KIB, 0, 256, STEPS_TURING, 2},
    {8, 0, 32, 1024, 64, 32, 65536, 65536, 255, 256, 4,
     164 * KIB, 48 * KIB, 163 * KIB, 1 * KIB, 128, STEPS_A100, 2},
    {8, 6, 32, 1024, 48, 16, 65536, 65536, 255, 256, 4,
     100 * KIB, 48 * KIB, 99 * KIB, 1 * KIB, 128, STEPS_GA10X, 1},
    {8, 9, 32, 1024, 48, 24, 65536, 65536, 255, 256, 4,
     100 * KIB, 48 * KIB, 99 * KIB, 1 * KIB, 128, STEPS_GA10X, 1},
    {9, 0, 32, 1024, 64, 32, 65536, 65536, 255, 256, 4,
     228 * KIB, 48 * KIB, 227 * KIB, 1 * KIB, 128, STEPS_HOPPER, 2},
};
#define NRULES (sizeof rules / sizeof rules[0])

const struct occ_rules *occ_rules_for(int cc_major, int cc_minor)
{
    for (size_t i = 0; i < NRULES; i++)
        if (rules[i].cc_major == cc_major && rules[i].cc_minor == cc_minor)
            return &rules[i];
    return NULL;
}

const struct occ_rules *occ_rules_at(size_t i)
{
    return i < NRULES ? &rules[i] : NULL;
}

size_t occ_rules_count(void)
{
    return NRULES;
}

static const char *const limit_names[OCC_LIMIT_COUNT] = {
    "warps", "registers", "shared_memory", "blocks", "barriers",
};

const char *occ_limit_name(enum occ_limit l)
{
    return (unsigned)l < OCC_LIMIT_COUNT ? limit_names[l] : "unknown";
}

void occ_input_init(struct occ_input *in, int block_threads, int regs_per_thread)
{
    memset(in, 0, sizeof *in);
    in->block_threads = block_threads;
    in->regs_per_thread = regs_per_thread;
    in->max_dynamic_smem = OCC_MAX_DYNAMIC_DEFAULT;
    in->carveout_pct = OCC_CARVEOUT_DEFAULT;
    in->barriers = 1;
}

static int ceil_div(int a, int b)
{
    return (a + b - 1) / b;
}

static int round_up(int a, int unit)
{
    return ceil_div(a, unit) * unit;
}

/* The smallest supported capacity holding bytes, or -1 when none does. */
static int carveout_step(const struct occ_rules *r, long long bytes)
{
    for (int i = 0; i < r->ncarveout; i++)
        if ((long long)r->carveout_kib[i] * KIB >= bytes)
            return r->carveout_kib[i] * KIB;
    return -1;
}

static void refuse(struct occ_result *o, enum occ_limit l, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Resource l allows no block at all; the first reason is kept. */
static void refuse(struct occ_result *o, enum occ_limit l, const char *fmt, ...)
{
    va_list ap;
    o->limit[l] = 0;
    if (o->refused[0])
        return;
    va_start(ap, fmt);
    vsnprintf(o->refused, sizeof o->refused, fmt, ap);
    va_end(ap);
}

static void warps_limit(const struct occ_rules *r, const struct occ_input *in,
                        struct occ_result *o)
{
    o->warps_per_block = ceil_div(in->block_threads, r->warp_size);
    o->max_warps_per_sm = r->max_warps_per_sm;
    if (in->block_threads > r->max_threads_per_block)
        refuse(o, OCC_LIMIT_WARPS, "a block of %d threads is more than the %d allowed",
               in->block_threads, r->max_threads_per_block);
    else
        o->limit[OCC_LIMIT_WARPS] = r->max_warps_per_sm / o->warps_per_block;
}

static void regs_limit(const struct occ_rules *r, const struct occ_input *in,
                       struct occ_result *o)
{
    int w = o->warps_per_block;
    o->regs_per_warp = round_up(in->regs_per_thread * r->warp_size, r->reg_alloc_unit);
    o->regs_per_block = o->regs_per_warp * w;
    o->regs_per_block_checked = o->regs_per_warp * round_up(w, r->sub_partitions);
    o->regs_per_sub_partition = r->regs_per_sm / r->sub_partitions;
    o->warps_per_sub_partition =
        o->regs_per_warp ? o->regs_per_sub_partition / o->regs_per_warp : NO_LIMIT;
    if (in->regs_per_thread > r->max_regs_per_thread)
        refuse(o, OCC_LIMIT_REGISTERS, "%d registers a thread is more than the %d allowed",
               in->regs_per_thread, r->max_regs_per_thread);
    else if (o->regs_per_block_checked > r->regs_per_block)
        refuse(o, OCC_LIMIT_REGISTERS,
               "the block needs %d registers (warps rounded up to the sub-partitions), more "
               "than the %d a block may have", o->regs_per_block_checked, r->regs_per_block);
    else if (!o->regs_per_warp)
        o->limit[OCC_LIMIT_REGISTERS] = NO_LIMIT;
    else
        o->limit[OCC_LIMIT_REGISTERS] = o->warps_per_sub_partition * r->sub_partitions / w;
}

/* The carve-out asked for, on a step (the largest for the default). */
static int smem_preference(const struct occ_rules *r, const struct occ_input *in)
{
    if (in->carveout_pct == OCC_CARVEOUT_DEFAULT)
        return carveout_step(r, r->smem_per_sm);
    return carveout_step(r, (long long)in->carveout_pct * r->smem_per_sm / 100);
}

static void smem_limit(const struct occ_rules *r, const struct occ_input *in,
                       struct occ_result *o)
{
    int fixed = in->static_smem + r->smem_reserved_per_block;
    /* static arrays are bounded by the per-block default (ptxas refuses
     * more: "uses too much shared data"); only dynamic memory opts in */
    int static_over = in->static_smem > r->smem_per_block;
    o->max_dynamic_smem = in->max_dynamic_smem != OCC_MAX_DYNAMIC_DEFAULT ? in->max_dynamic_smem
                          : static_over                                 ? 0
                                                                        : r->smem_per_block - in->static_smem;
    o->smem_per_block = round_up(fixed + in->dynamic_smem, r->smem_alloc_unit);
    o->smem_block_limit = (in->static_smem + o->max_dynamic_smem > r->smem_per_block
                               ? r->smem_per_block_optin
                               : r->smem_per_block) + r->smem_reserved_per_block;
    o->smem_preference = smem_preference(r, in);
    if (static_over) {
        refuse(o, OCC_LIMIT_SHARED, "%d bytes of static shared memory is more than the %d a kernel "
               "may declare statically (a larger array must be dynamic shared memory)", in->static_smem,
               r->smem_per_block);
        return;
    }
    if (in->dynamic_smem > o->max_dynamic_smem) {
        refuse(o, OCC_LIMIT_SHARED, "%d bytes of dynamic shared memory is more than the "
               "kernel's maximum of %d (raise it: max_dynamic_smem over HTTP, --max-dynamic-smem on the command "
               "line, CUDA's MAX_DYNAMIC_SHARED_SIZE_BYTES)", in->dynamic_smem,
               o->max_dynamic_smem);
        return;
    }
    if (o->smem_per_block > o->smem_block_limit) {
        refuse(o, OCC_LIMIT_SHARED, "the block needs %d bytes of shared memory, more than "
               "the %d a block may have", o->smem_per_block, o->smem_block_limit);
        return;
    }
    o->smem_per_sm = o->smem_preference >= o->smem_per_block
                         ? o->smem_preference
                         : carveout_step(r, o->smem_per_block);
    o->limit[OCC_LIMIT_SHARED] =
        o->smem_per_block ? o->smem_per_sm / o->smem_per_block : NO_LIMIT;
}

static void barrier_limit(const struct occ_rules *r, const struct occ_input *in,
                          struct occ_result *o)
{
    int available = r->max_blocks_per_sm * r->barrier_factor;
    o->limit[OCC_LIMIT_BARRIERS] = in->barriers > 0 ? available / in->barriers : NO_LIMIT;
    if (in->barriers > 16)
        refuse(o, OCC_LIMIT_BARRIERS, "%d named barriers is more than the %d a block may use",
               in->barriers, 16);
}

static int check_input(const struct occ_rules *r, const struct occ_input *in, char *err,
                       size_t errlen)
{
    const char *what = NULL;
    if (!r)
        what = "no rules for this compute capability";
    else if (in->block_threads < 1)
        what = "block_threads must be at least 1";
    else if (in->regs_per_thread < 0 || in->static_smem < 0 || in->dynamic_smem < 0)
        what = "registers and shared memory sizes must not be negative";
    else if (in->max_dynamic_smem < 0 && in->max_dynamic_smem != OCC_MAX_DYNAMIC_DEFAULT)
        what = "max_dynamic_smem must not be negative";
    else if (in->carveout_pct != OCC_CARVEOUT_DEFAULT &&
             (in->carveout_pct < 0 || in->carveout_pct > 100))
        what = "carveout must be a percentage from 0 to 100";
    else if (in->barriers < 0)
        what = "barriers must not be negative";
    else if (in->block_threads > OCC_MAX_BLOCK || in->regs_per_thread > OCC_MAX_REGS ||
             in->static_smem > OCC_MAX_SMEM || in->dynamic_smem > OCC_MAX_SMEM ||
             in->max_dynamic_smem > OCC_MAX_SMEM)
        what = "a value is far beyond any device";
    if (what)
        snprintf(err, errlen, "%s", what);
    return what ? -1 : 0;
}

int occ_compute(const struct occ_rules *r, const struct occ_input *in, struct occ_result *out,
                char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (check_input(r, in, err, errlen) < 0)
        return -1;
    out->limit[OCC_LIMIT_BLOCKS] = r->max_blocks_per_sm;
    warps_limit(r, in, out);
    regs_limit(r, in, out);
    smem_limit(r, in, out);
    barrier_limit(r, in, out);
    out->blocks_per_sm = NO_LIMIT;
    for (int l = 0; l < OCC_LIMIT_COUNT; l++)
        if (out->limit[l] < out->blocks_per_sm) {
            out->blocks_per_sm = out->limit[l];
            out->limiter = (enum occ_limit)l;
        }
    for (int l = 0; l < OCC_LIMIT_COUNT; l++)
        if (out->limit[l] == out->blocks_per_sm)
            out->limiters |= 1u << l;
    out->active_warps = out->blocks_per_sm * out->warps_per_block;
    out->occupancy = (double)out->active_warps / r->max_warps_per_sm;
    return 0;
}
