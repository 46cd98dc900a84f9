/*
 * The memory probe's host side (see memory.h): builds and checks the
 * modules, sweeps the footprints, repeats, and writes the result document.
 *
 * DESIGN
 * Every timed module is compiled by the driver's JIT, and its own cubin is
 * read (mem_sass_check) before any of its figures is taken: a kernel whose
 * timed regions do not hold the loads they should gets {"error": ...} where
 * its figures would be, and the check's listing under "sass".
 * One allocation holds the largest footprint (4 x l2_bytes); every smaller
 * footprint is its first bytes. For each footprint the host draws a random
 * cyclic permutation of its elements (seeded: MEM_SEED ^ elements), uploads
 * it as 4-byte indices and a grid-wide kernel turns it into pointers on the
 * device (uploading pointers would move 32 times the bytes). Before every
 * timed chase a grid-wide kernel reads the whole footprint with ld.global.cg,
 * so what fits in the L2 is there whatever ran before; the L1 is the chase's
 * own business (its first pass). Every chase's last pointer is compared with
 * where the host's copy of the ring says 2 x K steps from element 0 end: a
 * chase that did not follow the chain is an error, not a number.
 * The sweep runs 1 KiB .. 4 x l2_bytes in steps of 2^(1/4), then cuts the
 * interval of every step the analysis finds into four (2^(1/16) for a
 * quarter-octave interval) and measures those points too. Each point is
 * one untimed launch (see chase_runs) then `repeats` launches per load,
 * interleaved ca, cg, ca, cg ... so a drift in clock or temperature falls on
 * both alike; each point keeps its runs and their median, min and max
 * (probes/gpu/stats.h); levels are found on medians.
 * The L1's set mapping ("l1_sets", probes/l1_sets.h) is searched last, with
 * kernels, carve-out and buffers of its own, so it changes nothing above;
 * then the L2's partitions ("l2_partitions", probes/l2_parts.h), likewise,
 * the order blocks are dealt to SMs ("block_placement", probes/placement.h),
 * distributed shared memory ("distributed_shared", probes/dsmem.h), and,
 * after the closing clock reading, the asynchronous copies ("async_copy",
 * probes/async_copy.h: a faulting copy kernel would leave the context
 * unusable), timed against the clock measured at the start.
 * Past the L2's capacity the curve climbs slowly (a random chase over a
 * warmed footprint still hits the L2 in proportion to capacity/footprint)
 * and 4 x l2_bytes does not reach device memory's level; so one more chase,
 * over l2_bytes after 2 x l2_bytes of other data has pushed it out of the
 * L2, gives that level ("device_memory_cycles").
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probes/async_copy.h"
#include "probes/gpu/clock.h"
#include "probes/gpu/gpu.h"
#include "probes/dsmem.h"
#include "probes/l1_sets.h"
#include "probes/l2_parts.h"
#include "probes/memory.h"
#include "probes/placement.h"
#include "probes/gpu/stats.h"
#include "util/clock.h"

#define DEFAULT_REPEATS 5
#define MAX_REPEATS 100
#define STEPS_PER_OCTAVE 4
#define REFINE_SPLITS 4
#define FILL_BLOCKS_PER_SM 4
#define FILL_THREADS 256
#define MAX_LEVELS 16
#define ERR_LEN 320

static const char *const load_names[2] = {"ca", "cg"};
static const enum mem_kernel_id load_kernels[2] = {MK_CHASE_CA, MK_CHASE_CG};

struct cpoint {
    size_t bytes;
    unsigned steps;
    int covered;
    double median;
    json_t *cycles;               /* spread_json of the runs */
};

/* One latency curve; err non-empty once it can no longer be measured. */
struct curve {
    struct cpoint *p;
    size_t n, cap;
    char err[ERR_LEN];
};

struct mem_run {
    struct gpu g;
    struct gpu_module mod[MK_COUNT];
    CUfunction fn[MK_COUNT];          /* each timed module's kernel */
    CUfunction f_build, f_warm;
    char mod_err[MK_COUNT][ERR_LEN];  /* non-empty: that module is unusable */
    json_t *sass;                     /* {"chase_ca": check, ...} */
    CUdeviceptr buf, out, next;
    size_t buf_bytes, max_elements;
    uint32_t *host_next;
    int repeats;
    double *samples;                  /* 2 x repeats scratch values */
    struct curve curves[2];
};

/* ---- small things ----------------------------------------------------- */


static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void mem_random_cycle(uint32_t *a, size_t n, uint64_t seed)
{
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++)
        a[i] = (uint32_t)i;
    for (size_t i = n; i-- > 1;) {
        /* j uniform in [0, i): Sattolo's rule, which leaves one cycle */
        size_t j = (size_t)(((splitmix64(&s) >> 32) * (uint64_t)i) >> 32);
        uint32_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

static json_t *error_json(const char *why)
{
    return json_pack("{s:s}", "error", why[0] ? why : "unknown error");
}

static unsigned fill_grid(const struct mem_run *r)
{
    int sms = r->g.info.sm_count > 0 ? r->g.info.sm_count : 1;
    return (unsigned)(sms * FILL_BLOCKS_PER_SM);
}

static int read_out(struct mem_run *r, uint64_t *w, size_t n, char *err, size_t errlen)
{
    return gpu_check(&r->g, r->g.cu->cuMemcpyDtoH(w, r->out, n * sizeof *w), "cuMemcpyDtoH", err,
                     errlen);
}

/* ---- set-up ----------------------------------------------------------- */

static void get_functions(struct mem_run *r, enum mem_kernel_id id)
{
    char *e = r->mod_err[id];
    struct gpu_module *m = &r->mod[id];
    if (id != MK_SUPPORT) {
        gpu_module_function(&r->g, m, mem_kernels[id].entry, &r->fn[id], e, ERR_LEN);
        return;
    }
    if (gpu_module_function(&r->g, m, "build", &r->f_build, e, ERR_LEN) == 0)
        gpu_module_function(&r->g, m, "warm", &r->f_warm, e, ERR_LEN);
}

/* Builds module id, checks its machine code, and gets its kernels. */
static void load_module(struct mem_run *r, enum mem_kernel_id id)
{
    char *e = r->mod_err[id];
    char name[64];
    snprintf(name, sizeof name, "memory_%s", mem_kernels[id].name);
    if (gpu_module_build_generated(&r->g, mem_ptx(id, r->g.info.cc_major, r->g.info.cc_minor),
                                   name, &r->mod[id], e, ERR_LEN) == 0) {
        if (id != MK_SUPPORT) {
            json_t *check = mem_sass_check(id, r->mod[id].cubin, r->mod[id].cubin_size);
            if (!json_is_true(json_object_get(check, "verified")))
                snprintf(e, ERR_LEN, "the compiled code is not what the probe times; see "
                                     "sass.kernels.%s", mem_kernels[id].name);
            json_object_set_new(r->sass, mem_kernels[id].name, check);
        }
        if (!e[0])
            get_functions(r, id);
    }
}

static int alloc_buffers(struct mem_run *r, char *err, size_t errlen)
{
    const struct cuda_api *cu = r->g.cu;
    if (r->g.info.l2_bytes <= 0) {
        snprintf(err, errlen, "the device reports no L2 size: no footprint range to sweep");
        return -1;
    }
    size_t top = 4 * (size_t)r->g.info.l2_bytes / MEM_STRIDE * MEM_STRIDE;
    size_t dep = 3 * (size_t)MEM_DEP_REGION_BYTES;
    r->buf_bytes = top > dep ? top : dep;
    r->max_elements = top / MEM_STRIDE;
    if (!(r->host_next = malloc((r->max_elements + MEM_SHARED_WORDS) * sizeof *r->host_next))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (gpu_check(&r->g, cu->cuMemAlloc(&r->buf, r->buf_bytes), "cuMemAlloc", err, errlen) < 0 ||
        gpu_check(&r->g, cu->cuMemAlloc(&r->next, (r->max_elements + MEM_SHARED_WORDS) * 4),
                  "cuMemAlloc", err, errlen) < 0 ||
        gpu_check(&r->g, cu->cuMemAlloc(&r->out, MEM_OUT_WORDS * 8), "cuMemAlloc", err, errlen) < 0)
        return -1;
    return gpu_check(&r->g, cu->cuMemsetD32(r->buf, 0, r->buf_bytes / 4), "cuMemsetD32", err,
                     errlen);
}

static void release(struct mem_run *r)
{
    const struct cuda_api *cu = r->g.cu;
    if (cu) {
        CUdeviceptr *bufs[] = {&r->buf, &r->next, &r->out};
        gpu_free_buffers(&r->g, bufs, sizeof bufs / sizeof bufs[0]);
        for (int id = 0; id < MK_COUNT; id++)
            gpu_module_free(&r->g, &r->mod[id]);
    }
    for (int m = 0; m < 2; m++) {
        for (size_t i = 0; i < r->curves[m].n; i++)
            json_decref(r->curves[m].p[i].cycles);
        free(r->curves[m].p);
    }
    json_decref(r->sass);
    free(r->host_next);
    free(r->samples);
    gpu_close(&r->g);
}

/* ---- chases ----------------------------------------------------------- */

/* Draws the permutation of `elements` and has the device write it. */
static int prepare(struct mem_run *r, size_t elements, char *err, size_t errlen)
{
    unsigned n = (unsigned)elements, stride = MEM_STRIDE;
    void *params[] = {&r->buf, &r->next, &n, &stride};
    mem_random_cycle(r->host_next, elements, MEM_SEED ^ elements);
    if (gpu_check(&r->g, r->g.cu->cuMemcpyHtoD(r->next, r->host_next, elements * 4),
                  "cuMemcpyHtoD", err, errlen) < 0)
        return -1;
    return gpu_launch(&r->g, r->f_build, fill_grid(r), FILL_THREADS, 0, params, err, errlen);
}

/* Where `steps` steps from element 0 end, by the host's copy of the ring. */
static size_t ring_walk(const uint32_t *next, size_t steps)
{
    size_t i = 0;
    while (steps--)
        i = next[i];
    return i;
}

/* What a chase launch needs: the ring's size, where 2 x steps from element
 * 0 end (the same for every launch), and the region the warm kernel reads
 * first (the footprint itself, or other data to push it out of the L2). */
struct chase_plan {
    size_t elements, end;
    CUdeviceptr warm_base;
    unsigned warm_n;
};

static void plan_chase(struct mem_run *r, size_t elements, struct chase_plan *p)
{
    p->elements = elements;
    p->end = ring_walk(r->host_next, 2 * (size_t)mem_chase_steps(elements));
    p->warm_base = r->buf;
    p->warm_n = (unsigned)elements;
}

/* One warm + chase launch; the cycles per load of the second pass. */
static int chase_once(struct mem_run *r, enum mem_kernel_id id, const struct chase_plan *p,
                      double *cycles, char *err, size_t errlen)
{
    unsigned stride = MEM_STRIDE, warm_n = p->warm_n;
    unsigned steps = mem_chase_steps(p->elements), iters = steps / MEM_UNROLL;
    CUdeviceptr warm_base = p->warm_base;
    void *wp[] = {&r->out, &warm_base, &warm_n, &stride};
    void *cp[] = {&r->out, &r->buf, &iters};
    uint64_t w[3];
    if (gpu_launch(&r->g, r->f_warm, fill_grid(r), FILL_THREADS, 0, wp, err, errlen) < 0 ||
        gpu_launch(&r->g, r->fn[id], 1, 1, 0, cp, err, errlen) < 0 ||
        read_out(r, w, 3, err, errlen) < 0)
        return -1;
    uint64_t want = r->buf + (uint64_t)p->end * MEM_STRIDE;
    if (w[2] != want) {
        snprintf(err, errlen, "the chase ended at 0x%llx, not at 0x%llx: it did not follow the ring",
                 (unsigned long long)w[2], (unsigned long long)want);
        return -1;
    }
    *cycles = (double)w[1] / steps;
    return 0;
}

static int curve_add(struct curve *c, const struct cpoint *p)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        struct cpoint *np = realloc(c->p, cap * sizeof *np);
        if (!np)
            return -1;
        c->p = np;
        c->cap = cap;
    }
    c->p[c->n++] = *p;
    return 0;
}

static int live_curves(const struct mem_run *r)
{
    return (r->curves[0].err[0] == 0) + (r->curves[1].err[0] == 0);
}

/* Turns the runs of load m into the point's figure. */
static void keep_point(struct mem_run *r, int m, size_t bytes)
{
    struct curve *c = &r->curves[m];
    double *runs = &r->samples[m * r->repeats], sorted[MAX_REPEATS];
    size_t elements = bytes / MEM_STRIDE;
    memcpy(sorted, runs, (size_t)r->repeats * sizeof *runs);
    struct cpoint p = {bytes, mem_chase_steps(elements), mem_chase_covered(elements),
                       spread_of(sorted, (size_t)r->repeats).median,
                       spread_json(runs, (size_t)r->repeats)};
    if (curve_add(c, &p) < 0) {
        json_decref(p.cycles);
        snprintf(c->err, ERR_LEN, "out of memory");
    }
}

/* Runs the chase of every load whose errs[m] is empty `repeats` times,
 * after one untimed launch: on an H200 the first chase over lines the build
 * kernel has just written runs some 45 cycles a load slower than every
 * later one, whatever the load, so it is not kept. Runs land in
 * r->samples[m * repeats + rep]; a failure's reason in errs[m]. */
static void chase_runs(struct mem_run *r, const struct chase_plan *p, char (*errs)[ERR_LEN])
{
    double ignored;
    for (int rep = -1; rep < r->repeats; rep++)
        for (int m = 0; m < 2; m++)
            if (!errs[m][0])
                chase_once(r, load_kernels[m], p, rep < 0 ? &ignored
                                                          : &r->samples[m * r->repeats + rep],
                           errs[m], ERR_LEN);
}

/* Measures one footprint on every curve still measurable; returns how many
 * still are. */
static int measure_point(struct mem_run *r, size_t bytes)
{
    size_t elements = bytes / MEM_STRIDE;
    char err[ERR_LEN] = "", errs[2][ERR_LEN];
    struct chase_plan plan;
    if (!live_curves(r))
        return 0;
    if (prepare(r, elements, err, sizeof err) < 0) {
        for (int m = 0; m < 2; m++)
            if (!r->curves[m].err[0])
                snprintf(r->curves[m].err, ERR_LEN, "%s", err);
        return 0;
    }
    plan_chase(r, elements, &plan);
    for (int m = 0; m < 2; m++)
        memcpy(errs[m], r->curves[m].err, ERR_LEN);
    chase_runs(r, &plan, errs);
    for (int m = 0; m < 2; m++) {
        memcpy(r->curves[m].err, errs[m], ERR_LEN);
        if (!r->curves[m].err[0])
            keep_point(r, m, bytes);
    }
    return live_curves(r);
}

static size_t to_stride(double b)
{
    size_t v = (size_t)llround(b / MEM_STRIDE) * MEM_STRIDE;
    return v < MEM_STRIDE ? MEM_STRIDE : v;
}

static int curve_has(const struct curve *c, size_t bytes)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->p[i].bytes == bytes)
            return 1;
    return 0;
}

static int cmp_cpoint(const void *a, const void *b)
{
    size_t x = ((const struct cpoint *)a)->bytes, y = ((const struct cpoint *)b)->bytes;
    return (x > y) - (x < y);
}

static int analyze(const struct curve *c, struct mem_level *lv)
{
    struct mem_analysis_opts o;
    struct mem_point *pts = malloc((c->n ? c->n : 1) * sizeof *pts);
    if (!pts)
        return -1;
    for (size_t i = 0; i < c->n; i++)
        pts[i] = (struct mem_point){(double)c->p[i].bytes, c->p[i].median};
    mem_analysis_defaults(&o);
    int n = mem_find_levels(pts, c->n, &o, lv, MAX_LEVELS);
    free(pts);
    return n;
}

/* The coarse sweep: 1 KiB, then 2^(1/4) apart, up to 4 x l2_bytes. */
static void sweep(struct mem_run *r)
{
    size_t top = r->max_elements * MEM_STRIDE, prev = 0;
    for (int k = 0;; k++) {
        size_t b = to_stride(1024.0 * pow(2.0, (double)k / STEPS_PER_OCTAVE));
        if (b > top)
            b = top;
        if (b != prev && measure_point(r, b) == 0)
            return;
        if (b == top)
            return;
        prev = b;
    }
}

/* Footprints inside each step's interval of curve c, not yet measured. */
static size_t refine_targets(const struct curve *c, size_t *t, size_t max)
{
    struct mem_level lv[MAX_LEVELS];
    size_t n = 0;
    int nl = analyze(c, lv);
    for (int i = 0; i < nl; i++) {
        if (!lv[i].plateau || lv[i].next_bytes <= 0)
            continue;
        double lo = lv[i].up_to_bytes, hi = lv[i].next_bytes;
        for (int q = 1; q < REFINE_SPLITS && n < max; q++) {
            size_t b = to_stride(lo * pow(hi / lo, (double)q / REFINE_SPLITS));
            if (b > lo && b < hi && !curve_has(c, b))
                t[n++] = b;
        }
    }
    return n;
}

static void refine(struct mem_run *r)
{
    size_t t[2 * MAX_LEVELS * REFINE_SPLITS];
    size_t n = 0;
    for (int m = 0; m < 2; m++)
        if (!r->curves[m].err[0])
            n += refine_targets(&r->curves[m], t + n, MAX_LEVELS * REFINE_SPLITS);
    for (size_t i = 0; i < n; i++) {
        int dup = 0;
        for (size_t j = 0; j < i; j++)
            dup |= t[j] == t[i];
        if (!dup && measure_point(r, t[i]) == 0)
            break;
    }
    for (int m = 0; m < 2; m++)
        if (r->curves[m].n)
            qsort(r->curves[m].p, r->curves[m].n, sizeof *r->curves[m].p, cmp_cpoint);
}

/* ---- device memory, cold ---------------------------------------------- */

/* The chase over l2_bytes after the warm kernel has read 2 x l2_bytes of
 * other data (the rest of the buffer): no line of the ring is in either
 * cache, so every load of the second pass goes to device memory. This is
 * the level the curve only approaches: past the L2's capacity a random
 * chase over a warmed footprint still hits the L2 in proportion. */
static json_t *cold_json(struct mem_run *r)
{
    char err[ERR_LEN] = "", errs[2][ERR_LEN];
    size_t elements = r->max_elements / 4;
    struct chase_plan plan;
    for (int m = 0; m < 2; m++)
        snprintf(errs[m], ERR_LEN, "%s", r->mod_err[load_kernels[m]]);
    if (r->mod_err[MK_SUPPORT][0])
        return error_json(r->mod_err[MK_SUPPORT]);
    if (elements < MEM_UNROLL)
        return error_json("the L2 is too small for this measurement");
    if (prepare(r, elements, err, sizeof err) < 0)
        return error_json(err);
    plan_chase(r, elements, &plan);
    plan.warm_base = r->buf + elements * MEM_STRIDE;
    plan.warm_n = (unsigned)(2 * elements);
    chase_runs(r, &plan, errs);
    json_t *o = json_pack("{s:I,s:I,s:s}", "footprint_bytes",
                          (json_int_t)(elements * MEM_STRIDE), "evicted_by_bytes",
                          (json_int_t)(2 * elements * MEM_STRIDE), "note",
                          "a random chase over l2_bytes, read after 2 x l2_bytes of other data: "
                          "the level of device memory");
    for (int m = 0; m < 2; m++)
        json_object_set_new(o, load_names[m],
                            errs[m][0] ? error_json(errs[m])
                                       : spread_json(&r->samples[m * r->repeats],
                                                     (size_t)r->repeats));
    return o;
}

/* ---- shared memory and departure -------------------------------------- */

static int shared_once(struct mem_run *r, double *cycles, char *err, size_t errlen)
{
    unsigned steps = MEM_K_MIN, iters = steps / MEM_UNROLL;
    void *params[] = {&r->out, &r->next, &iters};
    uint64_t w[4];
    if (gpu_launch(&r->g, r->fn[MK_CHASE_SHARED], 1, 1, 0, params, err, errlen) < 0 ||
        read_out(r, w, 4, err, errlen) < 0)
        return -1;
    uint64_t want = w[3] + 4 * (uint64_t)ring_walk(r->host_next, 2 * (size_t)steps);
    if (w[2] != want) {
        snprintf(err, errlen, "the shared chase did not follow the ring");
        return -1;
    }
    *cycles = (double)w[1] / steps;
    return 0;
}

static json_t *shared_json(struct mem_run *r)
{
    char err[ERR_LEN] = "";
    if (r->mod_err[MK_CHASE_SHARED][0])
        return error_json(r->mod_err[MK_CHASE_SHARED]);
    mem_random_cycle(r->host_next, MEM_SHARED_WORDS, MEM_SEED ^ MEM_SHARED_WORDS);
    if (gpu_check(&r->g, r->g.cu->cuMemcpyHtoD(r->next, r->host_next, MEM_SHARED_WORDS * 4),
                  "cuMemcpyHtoD", err, sizeof err) < 0)
        return error_json(err);
    for (int rep = 0; rep < r->repeats; rep++)
        if (shared_once(r, &r->samples[rep], err, sizeof err) < 0)
            return error_json(err);
    json_t *o = spread_json(r->samples, (size_t)r->repeats);
    json_object_set_new(o, "footprint_bytes", json_integer(MEM_SHARED_WORDS * 4));
    json_object_set_new(o, "steps", json_integer(MEM_K_MIN));
    return o;
}

/* One departure launch: the pass-1 slope and the empty region's cycles. */
static int departure_once(struct mem_run *r, enum mem_kernel_id id, double *slope,
                          double *overhead, char *err, size_t errlen)
{
    void *params[] = {&r->out, &r->buf};
    uint64_t w[6];
    if (gpu_launch(&r->g, r->fn[id], 1, 32, 0, params, err, errlen) < 0 ||
        read_out(r, w, 6, err, errlen) < 0)
        return -1;
    *slope = ((double)w[5] - (double)w[4]) / (MEM_DEP_M2 - MEM_DEP_M1);
    *overhead = (double)w[3];
    return 0;
}

/* Sets o[key] to the slope's figure over the repeats (or the reason) and,
 * if ovh_key, o[ovh_key] to the clock reads' own cycles. */
static void departure_set(struct mem_run *r, json_t *o, const char *key, enum mem_kernel_id id,
                          const char *ovh_key)
{
    char err[ERR_LEN] = "";
    double *sl = r->samples, *oh = r->samples + r->repeats;
    if (r->mod_err[id][0]) {
        json_object_set_new(o, key, error_json(r->mod_err[id]));
        return;
    }
    for (int rep = 0; rep < r->repeats; rep++)
        if (departure_once(r, id, &sl[rep], &oh[rep], err, sizeof err) < 0) {
            json_object_set_new(o, key, error_json(err));
            return;
        }
    json_object_set_new(o, key, spread_json(sl, (size_t)r->repeats));
    if (ovh_key)
        json_object_set_new(o, ovh_key, spread_json(oh, (size_t)r->repeats));
}

static json_t *departure_json(struct mem_run *r)
{
    json_t *o = json_pack("{s:s,s:[i,i]}", "cache", "cg", "loads", MEM_DEP_M1, MEM_DEP_M2);
    json_t *l1 = json_pack("{s:s}", "cache", "ca");
    departure_set(r, o, "coalesced_cycles", MK_DEP_COAL_CG, "clock_overhead_cycles");
    departure_set(r, o, "uncoalesced_cycles", MK_DEP_UNCOAL_CG, NULL);
    departure_set(r, l1, "coalesced_cycles", MK_DEP_COAL_CA, NULL);
    departure_set(r, l1, "uncoalesced_cycles", MK_DEP_UNCOAL_CA, NULL);
    json_object_set_new(o, "l1_hit", l1);
    return o;
}

/* ---- the result ------------------------------------------------------- */

static json_t *curve_json(const struct curve *c)
{
    if (c->err[0])
        return error_json(c->err);
    json_t *a = json_array();
    for (size_t i = 0; a && i < c->n; i++)
        json_array_append_new(a, json_pack("{s:I,s:i,s:b,s:O}", "bytes", (json_int_t)c->p[i].bytes,
                                           "steps", (int)c->p[i].steps, "covered",
                                           c->p[i].covered, "cycles", c->p[i].cycles));
    return a;
}

static json_t *levels_json(const struct mem_run *r, const struct curve *c)
{
    struct mem_level lv[MAX_LEVELS];
    if (c->err[0])
        return error_json(c->err);
    int n = analyze(c, lv);
    if (n < 0)
        return error_json("the curve could not be analysed");
    return mem_levels_json(lv, n, (double)r->g.info.l2_bytes);
}

/* One line for the cold chase of load m, if it was measured. */
static json_t *cold_line(const json_t *cold, int m)
{
    const json_t *med = json_object_get(json_object_get(cold, load_names[m]), "median");
    if (!json_is_number(med))
        return NULL;
    return json_sprintf("%s device memory (lines in no cache): %.1f cycles", load_names[m],
                        json_number_value(med));
}

/* "ca level 1: 32.0 cycles up to 215 KiB (steps before 225 KiB)" lines. */
static json_t *summary_json(const struct mem_run *r, const json_t *cold)
{
    json_t *a = json_array();
    for (int m = 0; m < 2; m++) {
        struct mem_level lv[MAX_LEVELS];
        int n = r->curves[m].err[0] ? 0 : analyze(&r->curves[m], lv);
        for (int i = 0; i < n; i++) {
            const struct mem_level *l = &lv[i];
            if (l->plateau && l->next_bytes > 0)
                json_array_append_new(a, json_sprintf("%s level %d: %.1f cycles up to %.0f KiB "
                                                      "(steps before %.0f KiB)", load_names[m],
                                                      l->level, l->cycles, l->up_to_bytes / 1024,
                                                      l->next_bytes / 1024));
            else
                json_array_append_new(a, json_sprintf("%s level %d: %s%.1f cycles from %.0f KiB "
                                                      "to the sweep's end (%.0f KiB)",
                                                      load_names[m], l->level,
                                                      l->plateau ? "" : "still rising, >= ",
                                                      l->cycles, l->from_bytes / 1024,
                                                      l->up_to_bytes / 1024));
        }
        json_t *line = cold_line(cold, m);
        if (line)
            json_array_append_new(a, line);
    }
    return a;
}

static void put_curves(struct mem_run *r, json_t *res)
{
    json_t *curves = json_object(), *levels = json_object();
    for (int m = 0; m < 2; m++) {
        json_object_set_new(curves, load_names[m], curve_json(&r->curves[m]));
        json_object_set_new(levels, load_names[m], levels_json(r, &r->curves[m]));
    }
    json_object_set_new(res, "curves", curves);
    json_object_set_new(res, "levels", levels);
    json_object_set_new(res, "summary",
                        summary_json(r, json_object_get(res, "device_memory_cycles")));
}

static json_t *sass_json(struct mem_run *r)
{
    const char *key;
    json_t *v;
    int all = json_object_size(r->sass) == MK_COUNT - 1;
    json_object_foreach(r->sass, key, v)
        all &= json_is_true(json_object_get(v, "verified"));
    return json_pack("{s:b,s:s,s:O}", "verified", all, "detail",
                     "each timed region's count of load instructions (base opcode) and of any "
                     "other load; the cache modifiers are not decoded",
                     "kernels", r->sass);
}

/* Copies a reason between two buffers of one struct mem_run. */
static void copy_err(char dst[ERR_LEN], const char *src)
{
    size_t n = strnlen(src, ERR_LEN - 1);
    memmove(dst, src, n);
    dst[n] = 0;
}

/* Marks every curve not yet failed with one reason. */
static void curves_fail(struct mem_run *r, const char *why)
{
    for (int m = 0; m < 2; m++)
        if (!r->curves[m].err[0])
            copy_err(r->curves[m].err, why);
}

static void run_sweep(struct mem_run *r)
{
    for (int m = 0; m < 2; m++)
        if (r->mod_err[load_kernels[m]][0])
            copy_err(r->curves[m].err, r->mod_err[load_kernels[m]]);
    if (r->mod_err[MK_SUPPORT][0])
        curves_fail(r, r->mod_err[MK_SUPPORT]);
    sweep(r);
    refine(r);
}

static void measure_all(struct mem_run *r, json_t *res, const char *alloc_err)
{
    if (alloc_err[0]) {
        curves_fail(r, alloc_err);
        json_object_set_new(res, "shared_cycles", error_json(alloc_err));
        json_object_set_new(res, "departure", error_json(alloc_err));
        json_object_set_new(res, "device_memory_cycles", error_json(alloc_err));
    } else {
        json_object_set_new(res, "shared_cycles", shared_json(r));
        json_object_set_new(res, "departure", departure_json(r));
        json_object_set_new(res, "device_memory_cycles", cold_json(r));
        run_sweep(r);
    }
    put_curves(r, res);
}

static json_t *result_head(struct mem_run *r)
{
    char seed[64];
    snprintf(seed, sizeof seed, "0x%016llx ^ elements", (unsigned long long)MEM_SEED);
    return json_pack("{s:s,s:o,s:s,s:i,s:i,s:s,s:{s:i,s:i}}", "probe", "memory", "device",
                     gpu_json(&r->g), "driver_version", r->g.driver_version, "repeats",
                     r->repeats, "stride_bytes", MEM_STRIDE, "seed", seed, "chase_steps", "min",
                     MEM_K_MIN, "max", MEM_K_MAX);
}

/* Everything once the device is open; NULL with err when the SM clock
 * cannot be read (then no kernel runs on this device). */
static json_t *run_open(struct mem_run *r, double t0, char *err, size_t errlen)
{
    double before = 0, after = 0;
    char alloc_err[ERR_LEN] = "";
    if (gpu_clock_mhz(&r->g, &before, err, errlen) < 0 || /* also lifts an idle clock */
        gpu_clock_mhz(&r->g, &before, err, errlen) < 0)
        return NULL;
    json_t *res = result_head(r);
    for (int id = 0; id < MK_COUNT; id++)
        load_module(r, (enum mem_kernel_id)id);
    alloc_buffers(r, alloc_err, sizeof alloc_err);
    measure_all(r, res, alloc_err);
    json_object_set_new(res, "l1_sets", l1s_probe(&r->g, r->repeats));
    json_object_set_new(res, "l2_partitions", l2p_probe(&r->g));
    json_object_set_new(res, "block_placement", pl_probe(&r->g));
    json_object_set_new(res, "distributed_shared", dsm_probe(&r->g, r->repeats, before));
    if (gpu_clock_mhz(&r->g, &after, err, errlen) < 0) {
        json_decref(res);
        return NULL;
    }
    json_object_set_new(res, "clock_mhz", json_pack("{s:f,s:f}", "before", before, "after", after));
    /* last: a copy kernel that faults leaves the context unusable, and
     * nothing else of the document needs the GPU after it */
    json_object_set_new(res, "async_copy", acp_probe(&r->g, before));
    json_object_set_new(res, "sass", sass_json(r));
    json_object_set_new(res, "wall_s", json_real(mono_s() - t0));
    return res;
}

json_t *memory_probe_run(const char *device, int repeats, char *err, size_t errlen)
{
    double t0 = mono_s();
    if (repeats > MAX_REPEATS) {
        snprintf(err, errlen, "repeats must be from 1 to %d", MAX_REPEATS);
        return NULL;
    }
    struct mem_run *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    r->repeats = repeats < 1 ? DEFAULT_REPEATS : repeats;
    r->sass = json_object();
    r->samples = calloc(2 * (size_t)r->repeats, sizeof *r->samples);
    json_t *res = NULL;
    if (!r->sass || !r->samples)
        snprintf(err, errlen, "out of memory");
    else if (gpu_open(&r->g, device, err, errlen) == 0)
        res = run_open(r, t0, err, errlen);
    release(r);
    free(r);
    return res;
}
