/*
 * The MWP/CWP model (see mwp_cwp.h for the equations and what is not
 * modelled).
 *
 * DESIGN
 * One small function per group of equations, in the paper's order, each
 * writing its quantities into the result; mwp_predict checks the inputs and
 * runs them in turn. Divisions by counts that may be zero (no memory
 * instruction, no computation) are decided explicitly, never left to give
 * an infinity.
 */
#include "model/mwp_cwp.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const class_names[MC_COUNT] = {
    "fp32", "fp64", "int", "sfu", "conv", "shared", "global",
};

const char *mwp_class_name(enum mwp_class c)
{
    return (unsigned)c < MC_COUNT ? class_names[c] : "unknown";
}

int mwp_class_parse(const char *name)
{
    for (int i = 0; i < MC_COUNT; i++)
        if (strcmp(class_names[i], name) == 0)
            return i;
    return -1;
}

static double min2(double a, double b)
{
    return a < b ? a : b;
}

static int bad(char *err, size_t errlen, const char *what)
{
    snprintf(err, errlen, "%s", what);
    return -1;
}

static int check(const struct mwp_kernel *k, const struct mwp_hw *hw, char *err, size_t errlen)
{
    if (k->blocks < 1 || k->block_threads < 1)
        return bad(err, errlen, "the grid and the block need at least one thread");
    if (k->blocks_per_sm < 1)
        return bad(err, errlen, "no block of this kernel fits on an SM (occupancy 0)");
    if (hw->sm_count < 1 || hw->warp_size < 1 || !(hw->clock_mhz.value > 0))
        return bad(err, errlen, "SM count, warp size and clock must be positive");
    if (!(hw->mem_latency.value > 0) || !(hw->delay_coal.value > 0) ||
        !(hw->delay_uncoal.value > 0) || !(hw->bandwidth.value > 0))
        return bad(err, errlen, "memory latency, departure delays and bandwidth must be "
                                "positive");
    for (int c = 0; c < MC_COUNT; c++)
        if (!(k->insts[c] >= 0) || !(hw->issue[c].value > 0))
            return bad(err, errlen, "instruction counts must not be negative and issue "
                                    "cycles must be positive");
    if (!(k->coal >= 0) || !(k->uncoal >= 0) || !(k->sync >= 0) || !(k->launches >= 1) ||
        !(k->transfer_bytes >= 0) || !(k->uncoal_per_access >= 1) || !(k->coal_bytes > 0) ||
        !(k->sector_bytes > 0))
        return bad(err, errlen, "memory counts and sizes out of range (launches >= 1, "
                                "transactions per uncoalesced access >= 1)");
    if (k->has_hits && (!(k->l1_hit >= 0 && k->l1_hit <= 1) || !(k->l2_hit >= 0 && k->l2_hit <= 1) ||
                        !(k->l2_hit_store >= 0 && k->l2_hit_store <= 1)))
        return bad(err, errlen, "hit rates must be fractions from 0 to 1");
    if (k->has_hits && ((k->l1_hit > 0 && !(hw->l1_latency.value > 0)) ||
                        ((k->l2_hit > 0 || k->l2_hit_store > 0) && !(hw->l2_latency.value > 0))))
        return bad(err, errlen, "hit rates need the L1 and L2 latencies (memory probe)");
    if (!(k->stores >= 0) || k->stores > k->coal + k->uncoal || !(k->sync_mem <= k->sync))
        return bad(err, errlen, "stores must be among the memory instructions and barriers "
                                "waiting on memory among the barriers");
    if (k->transfer_bytes > 0 && !(hw->link_bandwidth.value > 0))
        return bad(err, errlen, "host transfers need the host link bandwidth");
    return 0;
}

/* Blocks, warps and repetitions (P, N, #Rep). */
static void shape(const struct mwp_kernel *k, const struct mwp_hw *hw, struct mwp_result *r)
{
    r->warps_per_block = (k->block_threads + hw->warp_size - 1) / hw->warp_size;
    r->blocks_per_sm = k->blocks_per_sm;
    r->active_sms = k->blocks < hw->sm_count ? (int)k->blocks : hw->sm_count;
    long long per_sm = (k->blocks + r->active_sms - 1) / r->active_sms;
    r->active_blocks_per_sm = per_sm < k->blocks_per_sm ? (int)per_sm : k->blocks_per_sm;
    r->n = (double)r->active_blocks_per_sm * r->warps_per_block;
    r->rep = (double)k->blocks / ((double)r->active_blocks_per_sm * r->active_sms);
}

/* The latency of one access, weighted over the levels that serve it: a load
 * from the L1 with the L1's hit rate, from the L2 with the L2's of the rest,
 * else from device memory; a store is written through the L1 (it allocates
 * no line there) to the L2. Without hit rates every access is a device-memory
 * access, as in the paper. */
static void level_latencies(const struct mwp_kernel *k, const struct mwp_hw *hw,
                            struct mwp_result *r)
{
    double dram = hw->mem_latency.value;
    double loads = r->mem_insts - k->stores, h1 = 0, h2 = 0, h2s = 0;
    if (k->has_hits) {
        h1 = k->l1_hit;
        h2 = k->l2_hit;
        h2s = k->l2_hit_store;
    }
    double l1 = h1 > 0 ? hw->l1_latency.value : 0, l2 = h2 > 0 || h2s > 0 ? hw->l2_latency.value : 0;
    r->lat_load = h1 * l1 + (1 - h1) * (h2 * l2 + (1 - h2) * dram);
    r->lat_store = h2s * l2 + (1 - h2s) * dram;
    if (r->mem_insts > 0) {
        r->l2_fraction = (loads * (1 - h1) + k->stores) / r->mem_insts;
        r->dram_fraction = (loads * (1 - h1) * (1 - h2) + k->stores * (1 - h2s)) / r->mem_insts;
    }
}

/* Equations 26-31: latencies, weights, departure delay. A request the L1
 * serves departs at the L1's rate, which is the load/store unit's issue rate
 * (issue[MC_GLOBAL], from the shared-load throughput: the L1 and shared memory
 * are one array behind one pipeline), per line touched; one that crosses the
 * L1 departs at the measured (.cg) delays, as in the paper. */
static void memory_latency(const struct mwp_kernel *k, const struct mwp_hw *hw,
                           struct mwp_result *r)
{
    r->mem_insts = k->coal + k->uncoal;
    level_latencies(k, hw, r);
    double lat = r->mem_insts > 0 ? ((r->mem_insts - k->stores) * r->lat_load +
                                     k->stores * r->lat_store) / r->mem_insts
                                  : hw->mem_latency.value;
    double l1 = r->mem_insts > 0 ? 1 - r->l2_fraction : 0, d1 = hw->issue[MC_GLOBAL].value;
    double du = l1 * d1 + (1 - l1) * hw->delay_uncoal.value;
    double dc = l1 * d1 + (1 - l1) * hw->delay_coal.value;
    r->mem_l_coal = lat;
    r->mem_l_uncoal = lat + (k->uncoal_per_access - 1) * du;
    r->w_uncoal = r->mem_insts > 0 ? k->uncoal / r->mem_insts : 0;
    r->w_coal = r->mem_insts > 0 ? 1 - r->w_uncoal : 0;
    r->mem_l = r->mem_l_coal * r->w_coal + r->mem_l_uncoal * r->w_uncoal;
    r->departure_delay = du * k->uncoal_per_access * r->w_uncoal + dc * r->w_coal;
}

/* MWP_peak_BW of one level: the warps whose requests, each moving `bytes`
 * every Mem_L cycles, fill the level's bandwidth over the active SMs. 0 when
 * the level moves nothing or its bandwidth is unknown (no limit). */
static double peak_bw_warps(double bandwidth, double bytes, const struct mwp_hw *hw,
                            const struct mwp_result *r)
{
    if (!(bandwidth > 0) || !(bytes > 0))
        return 0;
    double per_warp = hw->clock_mhz.value * 1e6 * bytes / r->mem_l;
    return bandwidth / (per_warp * r->active_sms);
}

/* Equations 32-36: memory warp parallelism, with a bandwidth limit for each
 * level the requests cross (device memory; the L2 when its bandwidth is
 * measured). */
static void mwp(const struct mwp_kernel *k, const struct mwp_hw *hw, struct mwp_result *r)
{
    if (r->mem_insts <= 0) {
        r->mwp = r->n;
        return;
    }
    r->mwp_without_bw = r->mem_l / r->departure_delay;
    r->load_bytes_per_warp =
        k->coal_bytes * r->w_coal + k->uncoal_per_access * k->sector_bytes * r->w_uncoal;
    /* device memory fetches at least its granule per transaction: a scattered sector
     * costs the granule's bytes there (a coalesced line is whole granules already) */
    double granule = hw->dram_granule.value > k->sector_bytes ? hw->dram_granule.value
                                                              : k->sector_bytes;
    r->dram_bytes_per_warp = (k->coal_bytes * r->w_coal + k->uncoal_per_access * granule *
                                                              r->w_uncoal) * r->dram_fraction;
    r->l2_bytes_per_warp = r->load_bytes_per_warp * r->l2_fraction;
    r->bw_per_warp = hw->clock_mhz.value * 1e6 * r->dram_bytes_per_warp / r->mem_l;
    r->mwp_peak_dram = peak_bw_warps(hw->bandwidth.value, r->dram_bytes_per_warp, hw, r);
    r->mwp_peak_l2 = peak_bw_warps(hw->l2_bandwidth.value, r->l2_bytes_per_warp, hw, r);
    r->mwp = min2(r->mwp_without_bw, r->n);
    if (r->mwp_peak_dram > 0)
        r->mwp = min2(r->mwp, r->mwp_peak_dram);
    if (r->mwp_peak_l2 > 0)
        r->mwp = min2(r->mwp, r->mwp_peak_l2);
    r->mwp_peak_bw = r->mwp_peak_dram > 0 && r->mwp_peak_l2 > 0
                         ? min2(r->mwp_peak_dram, r->mwp_peak_l2)
                         : r->mwp_peak_dram + r->mwp_peak_l2;
}

/* Computation: the paper sums every class's issue cycles, as if one pipe ran
 * them all. An SM's schedulers issue to separate pipes, so with the dispatch
 * rate known it is the larger of all instructions at that rate and the
 * busiest pipe (shared and global accesses share the load/store pipe). */
static void computation(const struct mwp_kernel *k, const struct mwp_hw *hw, struct mwp_result *r)
{
    double insts[MC_COUNT], total = 0;
    memcpy(insts, k->insts, sizeof insts);
    insts[MC_GLOBAL] = r->mem_insts;
    r->comp_serial = r->comp_pipe = 0;
    for (int c = 0; c < MC_COUNT; c++) {
        double busy = hw->issue[c].value * insts[c];
        r->comp_serial += busy;
        total += insts[c];
        if (c != MC_SHARED && c != MC_GLOBAL && busy > r->comp_pipe)
            r->comp_pipe = busy;
    }
    double lsu = hw->issue[MC_SHARED].value * insts[MC_SHARED] +
                 hw->issue[MC_GLOBAL].value * insts[MC_GLOBAL];
    if (lsu > r->comp_pipe)
        r->comp_pipe = lsu;
    r->comp_dispatch = total * hw->issue_slot.value;
    r->comp_cycles = hw->issue_slot.value > 0
                         ? (r->comp_dispatch > r->comp_pipe ? r->comp_dispatch : r->comp_pipe)
                         : r->comp_serial;
}

/* The expected longest latency among n loads issued together, each served by
 * the L1, the L2 or device memory with the hit rates' odds, independently: a
 * warp waits for its last load, and one miss among several is likely where
 * one load's is not (n = 1: lat_load). */
static double longest_latency(const struct mwp_kernel *k, const struct mwp_hw *hw,
                              const struct mwp_result *r, double n)
{
    if (!k->has_hits || n <= 1)
        return r->lat_load;
    double h1 = k->l1_hit, below_dram = h1 + (1 - h1) * k->l2_hit;
    double all_l1 = pow(h1, n), none_dram = pow(below_dram, n);
    return all_l1 * hw->l1_latency.value + (none_dram - all_l1) * hw->l2_latency.value +
           (1 - none_dram) * hw->mem_latency.value;
}

/* Equations 37-39: computation, memory cycles, computation warp parallelism. */
static void cwp(const struct mwp_kernel *k, const struct mwp_hw *hw, struct mwp_result *r)
{
    computation(k, hw, r);
    /* a period waits one latency; the other requests of it leave a departure delay
     * apart behind its first (the paper: every instruction a period). Stores are
     * periods of their own; the rest are loads, and a period of several loads waits
     * for the slowest of them rather than for a mean one. */
    r->periods = k->mem_periods > 0 && k->mem_periods < r->mem_insts ? k->mem_periods
                                                                      : r->mem_insts;
    double loads = r->mem_insts - k->stores, load_periods = r->periods - k->stores;
    r->loads_per_period = load_periods > 0 && loads > load_periods ? loads / load_periods : 1;
    r->lat_period = longest_latency(k, hw, r, r->loads_per_period);
    r->mem_cycles = r->mem_l * r->periods + r->departure_delay * (r->mem_insts - r->periods) +
                    (load_periods > 0 ? load_periods * (r->lat_period - r->lat_load) : 0);
    r->cwp_full = r->comp_cycles > 0 ? (r->mem_cycles + r->comp_cycles) / r->comp_cycles : r->n;
    r->cwp = min2(r->cwp_full, r->n);
}

/* The three cases, per repetition. */
static void cases(struct mwp_result *r)
{
    double per_mem = r->periods > 0 ? r->comp_cycles / r->periods : 0;
    if (r->mem_insts <= 0) {
        r->which = MWP_CASE_COMPUTE_ONLY;
        r->exec_cycles_per_rep = r->comp_cycles * r->n;
    } else if (r->mwp == r->n && r->cwp == r->n) {
        r->which = MWP_CASE_1;
        r->exec_cycles_per_rep = r->mem_cycles + r->comp_cycles + per_mem * (r->mwp - 1);
    } else if (r->cwp >= r->mwp || r->comp_cycles > r->mem_cycles) {
        r->which = MWP_CASE_2;
        r->exec_cycles_per_rep = r->mem_cycles * r->n / r->mwp + per_mem * (r->mwp - 1);
    } else {
        r->which = MWP_CASE_3;
        r->exec_cycles_per_rep = r->mem_l + r->comp_cycles * r->n;
    }
    /* case 2 covers both a memory-bound kernel and one whose computation exceeds its
     * memory cycles: the larger of its two terms says which */
    int mem_term = r->which == MWP_CASE_2 &&
                   r->mem_cycles * r->n / r->mwp >= per_mem * (r->mwp - 1);
    snprintf(r->bound, sizeof r->bound, "%s",
             r->which == MWP_CASE_1 ? "latency" : mem_term ? "memory" : "compute");
}

/* Throughput floors no overlap can beat: the SM's memory pipeline sends one
 * request a departure delay, and each level moves its bandwidth's share per
 * SM cycle. The paper's case 2 reaches the first only when every memory
 * instruction is a period of its own; with overlapping loads (periods fewer
 * than instructions) the floor keeps the pipeline's limit. */
static void floors(const struct mwp_hw *hw, struct mwp_result *r)
{
    double hz = hw->clock_mhz.value * 1e6, per_warp = r->mem_insts;
    r->case_cycles_per_rep = r->exec_cycles_per_rep;
    r->floor_departure = r->n * per_warp * r->departure_delay;
    r->floor_dram = hw->bandwidth.value > 0 ? r->n * per_warp * r->dram_bytes_per_warp /
                                                  (hw->bandwidth.value / r->active_sms / hz)
                                            : 0;
    r->floor_l2 = hw->l2_bandwidth.value > 0 ? r->n * per_warp * r->l2_bytes_per_warp /
                                                   (hw->l2_bandwidth.value / r->active_sms / hz)
                                             : 0;
    const double f[] = {r->floor_departure, r->floor_dram, r->floor_l2};
    const char *name[] = {"departure", "dram", "l2"};
    for (int i = 0; i < 3; i++)
        if (f[i] > r->exec_cycles_per_rep) {
            r->exec_cycles_per_rep = f[i];
            snprintf(r->bound, sizeof r->bound, "%s", name[i]);
        }
}

static void totals(const struct mwp_kernel *k, const struct mwp_hw *hw, struct mwp_result *r)
{
    /* a barrier waits for the warps of one block: at most warps_per_block - 1 of
     * them queue their memory requests behind the first one's (spec model.md:
     * departure_delay x (min(MWP, warps_per_block) - 1) x #sync x P x #Rep) */
    r->sync_mwp = min2(r->mwp, (double)r->warps_per_block);
    double mwp1 = r->sync_mwp > 1 ? r->sync_mwp - 1 : 0;
    r->exec_cycles = r->exec_cycles_per_rep * r->rep;
    r->sync_barriers = k->sync_mem >= 0 ? k->sync_mem : k->sync;
    r->sync_cycles =
        r->departure_delay * mwp1 * r->sync_barriers * r->active_blocks_per_sm * r->rep;
    r->cycles = r->exec_cycles + r->sync_cycles;
    r->kernel_s = r->cycles / (hw->clock_mhz.value * 1e6);
    r->kernels_s = r->kernel_s * k->launches;
    r->transfer_s = k->transfer_bytes > 0 ? k->transfer_bytes / hw->link_bandwidth.value : 0;
    r->total_s = r->kernels_s + r->transfer_s;
}

int mwp_predict(const struct mwp_kernel *k, const struct mwp_hw *hw, struct mwp_result *out,
                char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (check(k, hw, err, errlen) < 0)
        return -1;
    shape(k, hw, out);
    memory_latency(k, hw, out);
    mwp(k, hw, out);
    cwp(k, hw, out);
    cases(out);
    floors(hw, out);
    totals(k, hw, out);
    if (!isfinite(out->total_s))
        return bad(err, errlen, "the model gave a non-finite time");
    return 0;
}
