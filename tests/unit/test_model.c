/*
 * Unit tests of the kernel-time model: the MWP/CWP equations
 * (model/mwp_cwp.c), the parameters read from stored probe results
 * (db/model_params.c, model/params.c), predictions from JSON
 * (model/predict.c), and the model-validation saver and reader
 * (server/jobs/kind_model.c, db/results_validation.c).
 *
 * DESIGN
 * The thesis chapter (docs/model.md) gives the equations but no worked
 * numbers, so the model is checked against examples worked by hand here,
 * one per case of Hong and Kim's model, with every intermediate written out
 * beside the assertion; the toy hardware (10 SMs, 1 GHz, 400-cycle memory,
 * 4 and 10 cycles departure, 64 GB/s, every instruction 1 issue cycle)
 * keeps the arithmetic checkable by eye. The parameters are read from the
 * real H200 probe documents of tests/fixtures/results/, stored through the
 * same savers the daemon uses; the validation saver gets a document shaped
 * like the worker's, with the real kernels' PTX and made-up times, first
 * without an L2 bandwidth (as documents from before it was measured), then
 * with. Run from the repository root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/model_store.h"
#include "db/results.h"
#include "db/store.h"
#include "model/mwp_cwp.h"
#include "model/occupancy.h"
#include "model/params.h"
#include "model/predict.h"
#include "probes/validation.h"
#include "server/jobs/kind_model.h"
#include "tests/unit/support/tmpfile.h"

#define LATENCY_FIXTURE "tests/fixtures/results/latency-h200.json"
#define MEMORY_FIXTURE "tests/fixtures/results/memory-h200.json"
#define UUID "GPU-00000000-1111-2222-3333-444444444444"

static char err[768];

static void near(double got, double want, const char *what)
{
    if (fabs(got - want) > 1e-9 * fmax(1.0, fabs(want)))
        fail_msg("%s: got %.12g, want %.12g", what, got, want);
}

/* ---- hand-worked MWP/CWP examples ----------------------------------------------------- */

static void toy_hw(struct mwp_hw *hw)
{
    memset(hw, 0, sizeof *hw);
    hw->sm_count = 10;
    hw->warp_size = 32;
    hw->clock_mhz.value = 1000;
    hw->mem_latency.value = 400;
    hw->delay_coal.value = 4;
    hw->delay_uncoal.value = 10;
    hw->bandwidth.value = 64e9;
    hw->link_bandwidth.value = 1e10;
    for (int c = 0; c < MC_COUNT; c++)
        hw->issue[c].value = 1;
}

static void toy_kernel(struct mwp_kernel *k, long long blocks, int threads, int p)
{
    memset(k, 0, sizeof *k);
    k->blocks = blocks;
    k->block_threads = threads;
    k->blocks_per_sm = p;
    k->uncoal_per_access = 32;
    k->coal_bytes = 128;
    k->sector_bytes = 32;
    k->launches = 1;
}

static struct mwp_result predict(const struct mwp_kernel *k, const struct mwp_hw *hw)
{
    struct mwp_result r;
    if (mwp_predict(k, hw, &r, err, sizeof err) != 0)
        fail_msg("mwp_predict: %s", err);
    return r;
}

static void test_case2_bandwidth_limited(void **state)
{
    (void)state;
    struct mwp_hw hw;
    struct mwp_kernel k;
    toy_hw(&hw);
    toy_kernel(&k, 80, 256, 4);
    k.insts[MC_FP32] = 20;
    k.coal = 4;
    struct mwp_result r = predict(&k, &hw);
    /* 8 warps a block, 4 blocks an SM: N = 32; 80 blocks / (4 x 10 SMs): #Rep = 2 */
    near(r.n, 32, "N");
    near(r.rep, 2, "#Rep");
    near(r.mem_l, 400, "Mem_L");
    near(r.departure_delay, 4, "departure delay");
    near(r.mwp_without_bw, 100, "MWP without BW = 400 / 4");
    /* BW_per_warp = 1e9 x 128 / 400 = 3.2e8; MWP_peak = 64e9 / (3.2e8 x 10) = 20 */
    near(r.bw_per_warp, 3.2e8, "BW per warp");
    near(r.mwp_peak_bw, 20, "MWP peak BW");
    near(r.mwp, 20, "MWP");
    /* Comp = 20 fp32 + 4 memory issue = 24; Mem = 4 x 400 = 1600; CWP = min(1624/24, 32) */
    near(r.comp_cycles, 24, "Comp_cycles");
    near(r.mem_cycles, 1600, "Mem_cycles");
    near(r.cwp, 32, "CWP");
    /* case 2: 1600 x 32 / 20 + 24 / 4 x 19 = 2560 + 114 = 2674 a repetition */
    assert_int_equal(r.which, MWP_CASE_2);
    assert_string_equal(r.bound, "memory");
    near(r.exec_cycles_per_rep, 2674, "Exec per rep");
    near(r.cycles, 5348, "cycles");
    near(r.kernel_s, 5.348e-6, "seconds");
}

static void test_case1_too_few_warps(void **state)
{
    (void)state;
    struct mwp_hw hw;
    struct mwp_kernel k;
    toy_hw(&hw);
    toy_kernel(&k, 10, 64, 1);
    k.insts[MC_FP32] = 20;
    k.coal = 4;
    struct mwp_result r = predict(&k, &hw);
    /* 1 block an SM of 2 warps: N = 2 caps MWP and CWP */
    near(r.n, 2, "N");
    near(r.mwp, 2, "MWP");
    near(r.cwp, 2, "CWP");
    /* case 1: 1600 + 24 + 24 / 4 x (2 - 1) = 1630 */
    assert_int_equal(r.which, MWP_CASE_1);
    near(r.cycles, 1630, "cycles");
}

static void test_case3_computation(void **state)
{
    (void)state;
    struct mwp_hw hw;
    struct mwp_kernel k;
    toy_hw(&hw);
    toy_kernel(&k, 80, 256, 4);
    k.insts[MC_FP32] = 396;
    k.coal = 4;
    struct mwp_result r = predict(&k, &hw);
    /* Comp = 396 + 4 = 400, Mem = 1600: CWP = 2000 / 400 = 5 < MWP = 20 and Comp < Mem */
    near(r.cwp, 5, "CWP");
    near(r.mwp, 20, "MWP");
    assert_int_equal(r.which, MWP_CASE_3);
    /* case 3: 400 + 400 x 32 = 13200 a repetition, 2 repetitions */
    near(r.cycles, 26400, "cycles");
    /* more computation than memory is case 2 again: 400 x 32 / 20 + 2001 / 1 x 19 */
    toy_kernel(&k, 80, 256, 4);
    k.insts[MC_FP32] = 2000;
    k.coal = 1;
    r = predict(&k, &hw);
    assert_int_equal(r.which, MWP_CASE_2);
    assert_string_equal(r.bound, "compute");
    near(r.exec_cycles_per_rep, 640 + 2001 * 19, "Exec per rep");
}

static void test_uncoalesced_sync_and_transfers(void **state)
{
    (void)state;
    struct mwp_hw hw;
    struct mwp_kernel k;
    toy_hw(&hw);
    toy_kernel(&k, 80, 256, 4);
    k.insts[MC_FP32] = 20;
    k.coal = 2;
    k.uncoal = 2;
    k.uncoal_per_access = 8;
    k.sync = 3;
    k.sync_mem = -1; /* every barrier waits on memory */
    k.launches = 3;
    k.transfer_bytes = 1e6;
    struct mwp_result r = predict(&k, &hw);
    /* Mem_L_Uncoal = 400 + 7 x 10 = 470; weights 1/2: Mem_L = 435 */
    near(r.mem_l_uncoal, 470, "Mem_L_Uncoal");
    near(r.mem_l, 435, "Mem_L");
    /* Departure = 10 x 8 x 0.5 + 4 x 0.5 = 42; MWP without BW = 435 / 42 */
    near(r.departure_delay, 42, "departure");
    near(r.mwp_without_bw, 435.0 / 42, "MWP without BW");
    /* bytes a warp: 128 x 0.5 + 8 x 32 x 0.5 = 192; peak = 64e9 / (1e9 x 192 / 435 x 10) */
    near(r.load_bytes_per_warp, 192, "load bytes");
    near(r.mwp_peak_bw, 64e9 / (1e9 * 192 / 435 * 10), "MWP peak BW");
    near(r.mwp, 435.0 / 42, "MWP");
    /* Comp 24, Mem = 470 x 2 + 400 x 2 = 1740, CWP = 32: case 2:
     * 1740 x 32 / (435/42) + 24 / 4 x (435/42 - 1) = 2338560/435 + 6 x 393/42 */
    assert_int_equal(r.which, MWP_CASE_2);
    double per_rep = 2338560.0 / 435 + 6 * 393.0 / 42;
    near(r.exec_cycles, 2 * per_rep, "Exec");
    /* a barrier serialises at most the block's 8 warps, not MWP = 10.36 of them:
     * Sync = 42 x (min(435/42, 8) - 1) x 3 barriers x 4 blocks x 2 reps = 42 x 7 x 24 = 7056 */
    near(r.sync_mwp, 8, "min(MWP, warps per block)");
    near(r.sync_cycles, 7056, "Sync");
    near(r.kernel_s, (2 * per_rep + 7056) * 1e-9, "one launch");
    /* T0 = 3 launches + 1e6 bytes / 1e10 bytes/s */
    near(r.total_s, 3 * (2 * per_rep + 7056) * 1e-9 + 1e-4, "total with transfers");

    /* blocks of 2 warps (64 threads), P = 4, 80 blocks on 10 SMs: #Rep 2, N = 8 so MWP = 8,
     * capped at the block's 2 warps for the barrier: Sync = 42 x 1 x 3 x 4 x 2 = 1008 */
    toy_kernel(&k, 80, 64, 4);
    k.insts[MC_FP32] = 20;
    k.coal = 2;
    k.uncoal = 2;
    k.uncoal_per_access = 8;
    k.sync = 3;
    k.sync_mem = -1; /* every barrier waits on memory */
    r = predict(&k, &hw);
    assert_int_equal(r.warps_per_block, 2);
    near(r.rep, 2, "#Rep");
    near(r.mwp, 8, "MWP = N");
    near(r.sync_mwp, 2, "min(MWP, warps per block)");
    near(r.sync_cycles, 1008, "Sync, 2-warp blocks");

    /* MWP below the block's warps keeps MWP: blocks of 16 warps, N = 64, MWP 435/42 = 10.36
     * (peak BW 14.5): Sync = 42 x (435/42 - 1) x 3 x 4 x 2 = 393 x 24 = 9432 */
    toy_kernel(&k, 80, 512, 4);
    k.insts[MC_FP32] = 20;
    k.coal = 2;
    k.uncoal = 2;
    k.uncoal_per_access = 8;
    k.sync = 3;
    k.sync_mem = -1; /* every barrier waits on memory */
    r = predict(&k, &hw);
    assert_int_equal(r.warps_per_block, 16);
    near(r.mwp, 435.0 / 42, "MWP");
    near(r.sync_mwp, 435.0 / 42, "min(MWP, warps per block)");
    near(r.sync_cycles, 9432, "Sync, MWP below the block's warps");
}

/* ---- caches, memory periods, barriers on memory, throughput floors ------------------ */

/* The toy device with L1 and L2 latencies, and a kernel of fp32 work and
 * coal coalesced accesses whose barriers (none) all count. */
static void toy_cached(struct mwp_hw *hw, struct mwp_kernel *k, double fp32, double coal)
{
    toy_hw(hw);
    hw->l1_latency.value = 30;
    hw->l2_latency.value = 200;
    toy_kernel(k, 80, 256, 4);
    k->insts[MC_FP32] = fp32;
    k->coal = coal;
    k->sync_mem = -1;
}

static void test_hit_rates_weight_latency_and_traffic(void **state)
{
    (void)state;
    struct mwp_hw hw;
    struct mwp_kernel k;
    toy_cached(&hw, &k, 20, 4);
    struct mwp_result none = predict(&k, &hw);
    near(none.lat_load, 400, "no hit rates: every load from device memory");
    near(none.dram_fraction, 1, "all traffic reaches device memory");
    k.has_hits = 1;
    k.l1_hit = 0.5;
    k.l2_hit = 0.5;
    struct mwp_result r = predict(&k, &hw);
    /* 0.5 x 30 + 0.5 x (0.5 x 200 + 0.5 x 400) */
    near(r.lat_load, 165, "latency over the levels");
    near(r.l2_fraction, 0.5, "half the sectors cross the L1");
    near(r.dram_fraction, 0.25, "a quarter reach device memory");
    near(r.dram_bytes_per_warp, 32, "128 bytes x 0.25");
    /* departure: L1 hits at the LSU's issue rate (1), the rest at the .cg delay (4) */
    near(r.departure_delay, 2.5, "departure weighted by the level");
    /* a store writes through the L1: its latency is the L2's or memory's, never the L1's */
    k.stores = 2;
    k.l2_hit_store = 1;
    r = predict(&k, &hw);
    near(r.lat_store, 200, "a store hit in the L2");
    near(r.l2_fraction, (2 * 0.5 + 2) / 4.0, "stores all cross the L1");
    /* hit rates without the latency they weight are refused */
    hw.l1_latency.value = 0;
    struct mwp_result bad;
    assert_int_equal(mwp_predict(&k, &hw, &bad, err, sizeof err), -1);
    assert_non_null(strstr(err, "latencies"));
    hw.l1_latency.value = 30;
    k.l1_hit = 1.5;
    assert_int_equal(mwp_predict(&k, &hw, &bad, err, sizeof err), -1);
    assert_non_null(strstr(err, "fractions"));
}

static void test_computation_dispatch_and_pipes(void **state)
{
    (void)state;
    struct mwp_hw hw;
    struct mwp_kernel k;
    toy_hw(&hw);
    hw.issue[MC_FP32].value = 0.25;
    hw.issue[MC_INT].value = 0.5;
    toy_kernel(&k, 80, 256, 4);
    k.sync_mem = -1;
    k.insts[MC_FP32] = 100;
    k.insts[MC_INT] = 100;
    k.insts[MC_SHARED] = 10;
    k.coal = 10;
    struct mwp_result serial = predict(&k, &hw);
    near(serial.comp_cycles, 25 + 50 + 10 + 10, "no dispatch rate: the paper's sum");
    hw.issue_slot.value = 0.25;
    struct mwp_result r = predict(&k, &hw);
    near(r.comp_dispatch, 220 * 0.25, "220 instructions at the dispatch rate");
    near(r.comp_pipe, 50, "the integer pipe is the busiest");
    near(r.comp_cycles, 55, "the larger of the two");
    k.insts[MC_SHARED] = 60; /* shared and global share the load/store pipe */
    near(predict(&k, &hw).comp_pipe, 70, "60 shared + 10 global");
}

static void test_dram_granule(void **state)
{
    (void)state;
    struct mwp_hw hw;
    struct mwp_kernel k;
    toy_hw(&hw);
    toy_kernel(&k, 80, 256, 4);
    k.uncoal = 4;
    k.sync_mem = -1;
    struct mwp_result sector = predict(&k, &hw);
    near(sector.dram_bytes_per_warp, 32 * 32.0, "32 transactions of a sector");
    hw.dram_granule.value = 64;
    struct mwp_result granule = predict(&k, &hw);
    near(granule.dram_bytes_per_warp, 32 * 64.0, "each fetches the 64-byte granule");
    near(granule.load_bytes_per_warp, 32 * 32.0, "the L2 still moves sectors");
    k.uncoal = 0;
    k.coal = 4;
    near(predict(&k, &hw).dram_bytes_per_warp, 128, "a coalesced line is whole granules");
}

static void test_memory_periods_and_departure_floor(void **state)
{
    (void)state;
    struct mwp_hw hw;
    struct mwp_kernel k;
    toy_hw(&hw);
    toy_kernel(&k, 80, 256, 4);
    k.insts[MC_FP32] = 2000;
    k.coal = 4;
    k.sync_mem = -1;
    struct mwp_result all = predict(&k, &hw);
    near(all.periods, 4, "no periods given: every instruction waits (the paper)");
    near(all.mem_cycles, 1600, "4 x 400");
    k.mem_periods = 1; /* the four loads issued together, one wait */
    struct mwp_result one = predict(&k, &hw);
    near(one.periods, 1, "one period");
    near(one.mem_cycles, 400 + 3 * 4, "one latency, three departures behind it");
    /* uncoalesced requests that the L1 serves: the pipeline's floor binds */
    toy_kernel(&k, 80, 256, 4);
    hw.l1_latency.value = 30;
    k.uncoal = 8;
    k.uncoal_per_access = 16;
    k.mem_periods = 2;
    k.sync_mem = -1;
    k.has_hits = 1;
    k.l1_hit = 1;
    struct mwp_result f = predict(&k, &hw);
    /* N = 32 warps x 8 instructions x departure (16 transactions x 1 cycle) */
    near(f.floor_departure, 32 * 8 * 16.0, "departure floor");
    near(f.exec_cycles_per_rep, f.floor_departure, "the floor sets the time");
    assert_string_equal(f.bound, "departure");
    assert_true(f.case_cycles_per_rep < f.floor_departure);
}

/* A period of several loads waits for the slowest: with hit rates, the
 * expected longest latency of its loads, each hitting independently. */
static void test_period_waits_for_its_slowest_load(void **state)
{
    (void)state;
    struct mwp_hw hw;
    struct mwp_kernel k;
    toy_cached(&hw, &k, 2000, 9); /* 8 loads and a store */
    k.stores = 1;
    k.has_hits = 1;
    k.l1_hit = 0.5;
    k.l2_hit = 0.5;
    k.l2_hit_store = 1;
    k.mem_periods = 9; /* every load a period of its own: as before */
    struct mwp_result each = predict(&k, &hw);
    near(each.loads_per_period, 1, "one load a period");
    near(each.lat_period, each.lat_load, "a lone load waits its own latency");
    near(each.mem_cycles, each.mem_l * 9, "the paper's sum");
    k.mem_periods = 3; /* two periods of four loads, and the store */
    struct mwp_result two = predict(&k, &hw);
    near(two.loads_per_period, 4, "8 loads over 2 load periods");
    /* all four in the L1: 0.5^4; none from device memory: 0.75^4 */
    double all_l1 = 0.0625, none_dram = 0.31640625;
    double want = all_l1 * 30 + (none_dram - all_l1) * 200 + (1 - none_dram) * 400;
    near(two.lat_period, want, "the expected longest of four");
    near(two.mem_cycles, two.mem_l * 3 + two.departure_delay * 6 + 2 * (want - two.lat_load),
         "each load period waits its longest load; the store its own latency");
    assert_true(two.lat_period > two.lat_load);
    /* without hit rates every load is a device-memory load: the longest is one */
    k.has_hits = 0;
    struct mwp_result dram = predict(&k, &hw);
    near(dram.lat_period, 400, "device memory every time");
    near(dram.mem_cycles, dram.mem_l * 3 + dram.departure_delay * 6, "no excess");
}

static void test_barriers_charged_when_waiting_on_memory(void **state)
{
    (void)state;
    struct mwp_hw hw;
    struct mwp_kernel k;
    toy_hw(&hw);
    toy_kernel(&k, 80, 256, 4);
    k.insts[MC_FP32] = 20;
    k.coal = 4;
    k.sync = 3;
    k.sync_mem = -1;
    struct mwp_result all = predict(&k, &hw);
    near(all.sync_barriers, 3, "unknown: every barrier waits");
    k.sync_mem = 1;
    struct mwp_result one = predict(&k, &hw);
    near(one.sync_barriers, 1, "only the barrier after the loads");
    near(one.sync_cycles, all.sync_cycles / 3, "a third of the cost");
    k.sync_mem = 0;
    near(predict(&k, &hw).sync_cycles, 0, "barriers after shared-memory work only");
    k.sync_mem = 4;
    struct mwp_result bad;
    assert_int_equal(mwp_predict(&k, &hw, &bad, err, sizeof err), -1);
}

static void test_compute_only_and_bad_input(void **state)
{
    (void)state;
    struct mwp_hw hw;
    struct mwp_kernel k;
    struct mwp_result r;
    toy_hw(&hw);
    toy_kernel(&k, 10, 32, 1);
    k.insts[MC_FP32] = 100;
    r = predict(&k, &hw);
    assert_int_equal(r.which, MWP_CASE_COMPUTE_ONLY);
    near(r.cycles, 100, "compute only, N = 1");
    k.blocks_per_sm = 0;
    assert_int_equal(mwp_predict(&k, &hw, &r, err, sizeof err), -1);
    k.blocks_per_sm = 1;
    hw.mem_latency.value = 0;
    assert_int_equal(mwp_predict(&k, &hw, &r, err, sizeof err), -1);
    toy_hw(&hw);
    hw.link_bandwidth.value = 0;
    k.transfer_bytes = 10;
    assert_int_equal(mwp_predict(&k, &hw, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "link"));
}

/* ---- the store and the parameters -------------------------------------------------------- */

struct fx {
    void *t;
    store *s;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    if (!f || tmp_setup(&f->t, "model", "gpuprobe.db") != 0)
        return -1;
    if (store_open(&f->s, ((struct tmp *)f->t)->path, err, sizeof err) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    char p[200];
    store_close(f->s);
    snprintf(p, sizeof p, "%s-wal", ((struct tmp *)f->t)->path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", ((struct tmp *)f->t)->path);
    unlink(p);
    tmp_teardown(&f->t);
    free(f);
    return 0;
}

/* A fixture document moved to the test device (the two were captured on two H200s). */
static json_t *fixture(const char *path)
{
    json_error_t je;
    json_t *d = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!d)
        fail_msg("%s: %s", path, je.text);
    json_object_set_new(json_object_get(d, "device"), "uuid", json_string(UUID));
    return d;
}

static void record(struct fx *f, const char *kind, const json_t *doc, store_result_saver save,
                   int64_t *id)
{
    char *text = json_dumps(doc, JSON_COMPACT);
    if (store_job_record(f->s, kind, UUID, "{}", 600, text, save, id, err, sizeof err) != 0)
        fail_msg("recording %s: %s", kind, err);
    free(text);
}

static void add_device(struct fx *f, const json_t *doc)
{
    int64_t host;
    char *info = json_dumps(json_object_get(doc, "device"), JSON_COMPACT);
    if (store_host_upsert(f->s, "testhost", "", &host, err, sizeof err) != 0 ||
        store_device_upsert(f->s, host, UUID, "NVIDIA H200", "9.0", info, err, sizeof err) != 0)
        fail_msg("device: %s", err);
    free(info);
}

static int hw_of(struct fx *f, struct mwp_hw *hw, int *missing)
{
    json_t *in;
    if (store_model_inputs(f->s, UUID, &in, err, sizeof err) != 0)
        fail_msg("inputs: %s", err);
    int rc = model_hw_from_inputs(in, UUID, hw, missing, err, sizeof err);
    json_decref(in);
    return rc;
}

static void test_parameters_need_both_probes(void **state)
{
    struct fx *f = *state;
    struct mwp_hw hw;
    int missing;
    json_t *lat = fixture(LATENCY_FIXTURE), *mem = fixture(MEMORY_FIXTURE);
    assert_int_equal(hw_of(f, &hw, &missing), -1);
    assert_non_null(strstr(err, "is not in this database"));
    add_device(f, mem);
    assert_int_equal(hw_of(f, &hw, &missing), -1);
    assert_int_equal(missing, 1);
    assert_non_null(strstr(err, "run the latency probe"));
    int64_t lj, mj;
    record(f, "latency", lat, results_latency_save, &lj);
    assert_int_equal(hw_of(f, &hw, &missing), -1);
    assert_non_null(strstr(err, "run the memory probe"));
    assert_non_null(strstr(err, "\"kind\":\"memory\""));
    record(f, "memory", mem, results_memory_save, &mj);
    assert_int_equal(hw_of(f, &hw, &missing), 0);
    /* the fixtures' own numbers, mapped as params.h says */
    double lat_cg = json_real_value(json_object_get(
        json_object_get(json_object_get(mem, "device_memory_cycles"), "cg"), "median"));
    const json_t *dep = json_object_get(mem, "departure");
    near(hw.mem_latency.value, lat_cg, "memory latency = device_memory_cycles.cg");
    assert_int_equal(hw.mem_latency.job_id, mj);
    near(hw.delay_coal.value,
         json_real_value(json_object_get(json_object_get(dep, "coalesced_cycles"), "median")),
         "coalesced departure");
    near(hw.delay_uncoal.value,
         json_real_value(json_object_get(json_object_get(dep, "uncoalesced_cycles"), "median")) /
             32,
         "uncoalesced departure per transaction");
    assert_int_equal(hw.issue[MC_FP32].job_id, lj);
    assert_true(hw.issue[MC_FP32].value > 0.2 && hw.issue[MC_FP32].value < 0.3);
    assert_true(hw.issue[MC_SFU].value > 1.9 && hw.issue[MC_SFU].value < 2.1);
    assert_int_equal(hw.sm_count, 132);
    /* no validation run yet: bandwidth derived from the attributes, and said so */
    assert_int_equal(hw.bandwidth.job_id, 0);
    assert_non_null(strstr(hw.bandwidth.source, "derived"));
    near(hw.bandwidth.value, 2.0 * 3201000e3 * 6016 / 8, "derived bandwidth");
    assert_true(hw.link_bandwidth.value == 0);
    /* nor an L2 bandwidth: unknown, and no error */
    assert_true(hw.l2_bandwidth.value == 0);
    assert_int_equal(hw.l2_bandwidth.job_id, 0);
    assert_non_null(strstr(hw.l2_bandwidth.source, "not measured"));
    json_decref(lat);
    json_decref(mem);
}

/* Static shared memory of the kernels that declare some (bytes). */
static int static_smem(enum val_kernel_id id)
{
    switch (id) {
    case VK_REDUCE:
    case VK_HISTOGRAM: return 1024;
    case VK_MM_TILED: return 2048;
    case VK_TR_TILED: return 32 * 33 * 4;
    case VK_MM_TILED32: return 8192;
    default: return 0;
    }
}

#define L2_BW 9.0e12   /* the made-up L2 bandwidth of validation_doc_l2 */

/* A validation document like the worker's: the real kernels, made-up times;
 * no L2 bandwidth, as documents from before it was measured. */
static json_t *validation_doc(const json_t *device)
{
    json_t *doc = json_pack("{s:s, s:O, s:s, s:{s:f, s:f}, s:i, s:f, s:s, s:{s:{s:f, s:f, s:f},"
                            " s:{s:s}}}", "probe", "model-validation", "device", device,
                            "driver_version", "580.159.04", "clock_mhz", "before", 1980.0,
                            "after", 1980.0, "repeats", 3, "wall_s", 2.5, "timing", "host clock",
                            "bandwidth", "dram_bytes_per_s", "median", 4.0e12, "min", 3.9e12,
                            "max", 4.1e12, "link_bytes_per_s", "error", "no host memory");
    json_t *list = json_array();
    for (int i = 0; i < VK_COUNT; i++) {
        const struct val_kernel *k = &val_kernels[i];
        json_t *params = json_object();
        for (int p = 0; p < k->nints; p++)
            json_object_set_new(params, k->int_names[p], json_integer(k->ints[p]));
        char *ptx = val_ptx((enum val_kernel_id)i, 9, 0);
        json_t *kj = json_pack("{s:s, s:s, s:s, s:[i,i,i], s:[i,i,i], s:i, s:i, s:i, s:i, s:o,"
                               " s:s, s:{s:f, s:f, s:f}}", "name", k->name, "character",
                               k->character, "entry", k->entry, "grid", k->grid[0], k->grid[1],
                               k->grid[2], "block", k->block[0], k->block[1], k->block[2],
                               "regs", 32, "smem", 0, "static_smem",
                               static_smem((enum val_kernel_id)i),
                               "launches", k->launches, "params", params, "ptx", ptx,
                               "measured_s", "median", 1e-3 * (i + 1), "min", 1e-3 * (i + 1),
                               "max", 1e-3 * (i + 1));
        free(ptx);
        if (i == VK_FFMA)
            json_object_set_new(kj, "measured_s", json_pack("{s:s}", "error", "wrong answer"));
        json_array_append_new(list, kj);
    }
    json_object_set_new(doc, "kernels", list);
    return doc;
}

/* The same with an L2 bandwidth, as the run writes it now. */
static json_t *validation_doc_l2(const json_t *device)
{
    json_t *doc = validation_doc(device);
    json_object_set_new(json_object_get(doc, "bandwidth"), "l2_bytes_per_s",
                        json_pack("{s:f, s:f, s:f, s:f, s:s}", "median", L2_BW, "min", 8.9e12,
                                  "max", 9.1e12, "bytes", 1073741824.0, "method", "read-only"));
    json_object_set_new(json_object_get(doc, "bandwidth"), "l2_fetch_bytes", json_integer(64));
    return doc;
}

/* What the worker's run function adds to each kernel: its description from its PTX
 * and launch (here through model/predict's PTX route, which runs the same analysis). */
static void describe(json_t *doc)
{
    size_t i;
    json_t *k;
    json_array_foreach(json_object_get(doc, "kernels"), i, k) {
        json_t *in = json_pack("{s:O, s:O, s:i, s:O, s:O, s:O}", "grid", json_object_get(k, "grid"),
                               "block", json_object_get(k, "block"), "regs", 32, "ptx",
                               json_object_get(k, "ptx"), "entry", json_object_get(k, "entry"),
                               "params", json_object_get(k, "params"));
        struct mwp_hw hw;
        json_t *out = NULL;
        char field[64];
        toy_hw(&hw);
        if (model_predict_json(in, occ_rules_for(9, 0), &hw, &out, err, sizeof err, field,
                               sizeof field) != 0)
            fail_msg("describing %s: %s", json_string_value(json_object_get(k, "name")), err);
        json_object_set(k, "description",
                        json_object_get(json_object_get(out, "kernel"), "description"));
        json_decref(out);
        json_decref(in);
    }
}

static void test_validation_saved_predicted_and_served(void **state)
{
    struct fx *f = *state;
    json_t *lat = fixture(LATENCY_FIXTURE), *mem = fixture(MEMORY_FIXTURE);
    int64_t lj, mj, vj, v0;
    add_device(f, mem);
    json_t *doc = validation_doc(json_object_get(mem, "device"));
    describe(doc);
    assert_int_equal(results_validation_check(doc, err, sizeof err), 0);
    /* without measurements: stored, every kernel says which probe to run */
    record(f, "model-validation", doc, kind_model_validation.save, &v0);
    json_t *out;
    assert_int_equal(store_model_validation(f->s, UUID, 0, &out, err, sizeof err), 0);
    assert_true(json_is_null(json_object_get(out, "gmae")));
    const json_t *k0 = json_array_get(json_object_get(out, "kernels"), 0);
    assert_non_null(strstr(json_string_value(json_object_get(k0, "prediction_failure")),
                           "run the latency probe"));
    json_decref(out);
    /* with them: predicted, compared, summarised; the newest run (v0, an older document)
     * measured no L2: the parameter is unknown (0), not an error */
    record(f, "latency", lat, results_latency_save, &lj);
    record(f, "memory", mem, results_memory_save, &mj);
    struct mwp_hw hw;
    int missing;
    assert_int_equal(hw_of(f, &hw, &missing), 0);
    assert_true(hw.l2_bandwidth.value == 0);
    assert_int_equal(hw.bandwidth.job_id, v0);
    json_t *doc_l2 = validation_doc_l2(json_object_get(mem, "device"));
    describe(doc_l2);
    record(f, "model-validation", doc_l2, kind_model_validation.save, &vj);
    assert_int_equal(hw_of(f, &hw, &missing), 0);
    near(hw.l2_bandwidth.value, L2_BW, "the L2 bandwidth, read back as a parameter");
    assert_int_equal(hw.l2_bandwidth.job_id, vj);
    assert_int_equal(store_model_validation(f->s, UUID, 0, &out, err, sizeof err), 0);
    assert_int_equal(json_integer_value(json_object_get(out, "job_id")), vj);
    const json_t *from = json_object_get(out, "parameters_from");
    assert_int_equal(json_integer_value(json_object_get(from, "latency_job")), lj);
    assert_int_equal(json_integer_value(json_object_get(from, "memory_job")), mj);
    const json_t *kernels = json_object_get(out, "kernels");
    assert_int_equal(json_array_size(kernels), VK_COUNT);
    double log_sum = 0;
    int n = 0;
    for (size_t i = 0; i < VK_COUNT; i++) {
        const json_t *k = json_array_get(kernels, i);
        double pred = json_number_value(json_object_get(k, "predicted_s"));
        if (!(pred > 0))
            fail_msg("%s has no prediction: %s", json_string_value(json_object_get(k, "name")),
                     json_string_value(json_object_get(k, "prediction_failure")));
        /* the bandwidth the prediction used is this run's measurement */
        const json_t *bw = json_object_get(json_object_get(json_object_get(k, "prediction"),
                                                           "parameters"), "bandwidth");
        near(json_number_value(json_object_get(bw, "value")), 4.0e12, "bandwidth used");
        assert_int_equal(json_integer_value(json_object_get(bw, "job_id")), vj);
        const json_t *l2 = json_object_get(json_object_get(json_object_get(k, "prediction"),
                                                           "parameters"), "l2_bandwidth");
        near(json_number_value(json_object_get(l2, "value")), L2_BW, "L2 bandwidth listed");
        if (i == VK_FFMA) {
            assert_true(json_is_null(json_object_get(k, "rel_error")));
            continue;
        }
        double meas = 1e-3 * (double)(i + 1);
        near(json_number_value(json_object_get(k, "rel_error")), (pred - meas) / meas, "error");
        log_sum += log(fabs((pred - meas) / meas));
        n++;
    }
    near(json_number_value(json_object_get(out, "gmae")), exp(log_sum / n), "gmae");
    assert_int_equal(json_integer_value(json_object_get(out, "kernels_compared")), n);
    assert_int_equal(json_array_size(json_object_get(out, "history")), 2);
    /* served beside the device memory's, from the rows */
    const json_t *served = json_object_get(json_object_get(out, "bandwidth"), "l2_bytes_per_s");
    near(json_number_value(json_object_get(served, "median")), L2_BW, "served L2 median");
    near(json_number_value(json_object_get(served, "max")), 9.1e12, "served L2 max");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(out, "bandwidth"),
                                                        "l2_fetch_bytes")), 64);
    /* and the model took it as device memory's granule */
    const json_t *first = json_array_get(json_object_get(out, "kernels"), 0);
    const json_t *granule = json_object_get(
        json_object_get(json_object_get(first, "prediction"), "parameters"), "dram_granule");
    near(json_number_value(json_object_get(granule, "value")), 64, "granule from the run");
    json_decref(out);
    assert_int_equal(store_model_validation(f->s, UUID, v0, &out, err, sizeof err), 0);
    assert_int_equal(json_integer_value(json_object_get(out, "job_id")), v0);
    assert_true(json_is_null(json_object_get(json_object_get(out, "bandwidth"),
                                             "l2_bytes_per_s")));
    json_decref(out);
    assert_int_equal(store_model_validation(f->s, "GPU-none", 0, &out, err, sizeof err), 1);
    json_decref(doc_l2);
    json_decref(doc);
    json_decref(lat);
    json_decref(mem);
}

static void test_validation_document_checked(void **state)
{
    (void)state;
    json_t *dev = json_pack("{s:s, s:s, s:s}", "uuid", UUID, "name", "x", "compute_capability",
                            "9.0");
    json_t *doc = validation_doc(dev);
    assert_int_equal(results_validation_check(doc, err, sizeof err), 0);
    /* the L2 figure is optional; when there, a figure or an error */
    json_t *bw = json_object_get(doc, "bandwidth");
    json_object_set_new(bw, "l2_bytes_per_s", json_pack("{s:s}", "error", "no L2 size"));
    assert_int_equal(results_validation_check(doc, err, sizeof err), 0);
    json_object_set_new(bw, "l2_bytes_per_s", json_pack("{s:f}", "median", 1e12));
    assert_int_equal(results_validation_check(doc, err, sizeof err), -1);
    assert_non_null(strstr(err, "bandwidth.l2_bytes_per_s"));
    json_object_set_new(bw, "l2_bytes_per_s", json_pack("{s:s}", "error", "no L2 size"));
    json_object_set_new(bw, "l2_fetch_bytes", json_integer(0)); /* from 1 to 4096 bytes */
    assert_int_equal(results_validation_check(doc, err, sizeof err), -1);
    assert_non_null(strstr(err, "l2_fetch_bytes"));
    json_object_del(bw, "l2_fetch_bytes");
    json_object_del(bw, "l2_bytes_per_s");
    json_object_set_new(json_array_get(json_object_get(doc, "kernels"), 1), "name",
                        json_string("copy"));
    assert_int_equal(results_validation_check(doc, err, sizeof err), -1);
    assert_non_null(strstr(err, "kernels[1].name"));
    json_object_set_new(doc, "probe", json_string("memory"));
    assert_int_equal(results_validation_check(doc, err, sizeof err), -1);
    json_decref(doc);
    json_decref(dev);
}

/* ---- predictions from JSON ---------------------------------------------------------------- */

static int predict_text(const char *text, json_t **out, char *field)
{
    struct mwp_hw hw;
    json_t *k = json_loads(text, 0, NULL);
    assert_non_null(k);
    toy_hw(&hw);
    int rc = model_predict_json(k, occ_rules_for(9, 0), &hw, out, err, sizeof err, field, 64);
    json_decref(k);
    return rc;
}

/* A kernel given as PTX holds its static shared memory in its .shared
 * declarations: the occupancy counts them unless static_smem is given, and
 * the notes say which. Two 20 KiB tiles with 256-thread blocks on 9.0: 20
 * KiB + 20 KiB + the 1 KiB the driver keeps a block = 41 KiB; 228 KiB an SM
 * hold 5 (warps alone would allow 8). */
static void test_predict_static_smem_from_ptx(void **state)
{
    (void)state;
    static const char ptx_kernel[] =
        "{\"grid\":1024,\"block\":256,\"regs\":32,%s\"ptx\":\".version 8.0\\n.target sm_90\\n"
        ".visible .entry k()\\n{\\n.reg .u32 %%r;\\n"
        "\\t.shared .align 4 .b8 As[20480];\\n\\t.shared .align 4 .b8 Bs[20480];\\n"
        "mov.u32 %%r, As;\\nst.shared.u32 [%%r], %%r;\\nbar.sync 0;\\nret;\\n}\"}";
    char text[1024];
    json_t *out = NULL;
    char field[64];
    snprintf(text, sizeof text, ptx_kernel, "");
    assert_int_equal(predict_text(text, &out, field), 0);
    const json_t *occ = json_object_get(out, "occupancy");
    assert_int_equal(json_integer_value(json_object_get(occ, "blocks_per_sm")), 5);
    assert_string_equal(json_string_value(json_object_get(occ, "limiter")), "shared_memory");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(occ, "input"),
                                                        "static_smem")), 40960);
    /* the reserve is the rules', once: 40960 + 1024 allocated a block */
    assert_int_equal(json_integer_value(json_object_get(json_object_get(occ, "shared_memory"),
                                                        "per_block_allocated")), 41984);
    const json_t *d = json_object_get(json_object_get(out, "kernel"), "description");
    assert_int_equal(json_integer_value(json_object_get(d, "static_smem")), 40960);
    const json_t *notes = json_object_get(d, "notes");
    const char *last = json_string_value(json_array_get(notes, json_array_size(notes) - 1));
    assert_non_null(last);
    assert_non_null(strstr(last, "static_smem 40960 bytes a block: derived from the PTX's .shared"));
    json_decref(out);
    /* given, static_smem is used, and the notes say what the PTX declares */
    snprintf(text, sizeof text, ptx_kernel, "\"static_smem\":0,");
    assert_int_equal(predict_text(text, &out, field), 0);
    occ = json_object_get(out, "occupancy");
    assert_int_equal(json_integer_value(json_object_get(occ, "blocks_per_sm")), 8);
    notes = json_object_get(json_object_get(json_object_get(out, "kernel"), "description"), "notes");
    last = json_string_value(json_array_get(notes, json_array_size(notes) - 1));
    assert_non_null(last);
    assert_non_null(strstr(last, "static_smem 0 bytes a block as given, where the PTX's .shared "
                                 "declarations hold 40960"));
    json_decref(out);
}

static void test_predict_json(void **state)
{
    (void)state;
    json_t *out = NULL;
    char field[64];
    assert_int_equal(predict_text("{\"grid\":80,\"block\":256,\"regs\":32,\"per_warp\":"
                                  "{\"fp32\":20,\"coalesced\":4}}", &out, field), 0);
    const json_t *p = json_object_get(out, "prediction");
    /* regs 32, 256 threads on 9.0: 8 blocks an SM; 80 blocks on 10 SMs: 8 each */
    assert_int_equal(json_integer_value(json_object_get(p, "blocks_per_sm")), 8);
    assert_int_equal(json_integer_value(json_object_get(p, "case")), 2);
    assert_non_null(json_object_get(json_object_get(out, "parameters"), "mem_latency"));
    json_decref(out);
    assert_int_equal(predict_text("{\"grid\":80,\"block\":256,\"per_warp\":{}}", &out, field), -1);
    assert_string_equal(field, "regs");
    assert_int_equal(predict_text("{\"grid\":80,\"block\":256,\"regs\":32,\"per_warp\":"
                                  "{\"fp33\":1}}", &out, field), -1);
    assert_string_equal(field, "per_warp.fp33");
    assert_int_equal(predict_text("{\"grid\":80,\"block\":[16,16,8],\"regs\":32,\"per_warp\":{}}",
                                  &out, field), -1);
    assert_string_equal(field, "block");
    assert_int_equal(predict_text("{\"grid\":80,\"block\":256,\"regs\":32,\"per_warp\":{},"
                                  "\"ptx\":\"x\"}", &out, field), -1);
    assert_string_equal(field, "ptx");
    assert_int_equal(predict_text("{\"grid\":80,\"block\":256,\"regs\":32,\"ptx\":"
                                  "\".version 8.0\\n.target sm_90\\n"
                                  ".visible .entry k(.param .u32 p_n)\\n{\\n.reg .u32 %i, %n;\\n"
                                  ".reg .pred %q;\\nld.param.u32 %n, [p_n];\\nmov.u32 %i, 0;\\n"
                                  "$L:\\nadd.u32 %i, %i, 1;\\nsetp.lt.u32 %q, %i, %n;\\n"
                                  "@%q bra $L;\\nret;\\n}\"}", &out, field), -1);
    /* the loop's bound needs p_n: the member to give, and the loop that needs it */
    assert_string_equal(field, "params.p_n");
    assert_non_null(strstr(err, "$L"));
    assert_non_null(strstr(err, "parameter p_n (index 0) of k"));
    assert_non_null(strstr(err, "give its integer value in params"));
    /* a parameter by its index from 0 is the same parameter; one the entry does not
     * have is refused, naming it and listing the entry's */
    static const char counted[] =
        "{\"grid\":80,\"block\":256,\"regs\":32,\"ptx\":\".version 8.0\\n.target sm_90\\n"
        ".visible .entry k(.param .u32 p_n)\\n{\\n.reg .u32 %i, %n;\\n.reg .pred %q;\\n"
        "ld.param.u32 %n, [p_n];\\nmov.u32 %i, 0;\\n$L:\\nadd.u32 %i, %i, 1;\\n"
        "setp.lt.u32 %q, %i, %n;\\n@%q bra $L;\\nret;\\n}\",\"params\":";
    char with[1024];
    snprintf(with, sizeof with, "%s{\"0\":10}}", counted);
    assert_int_equal(predict_text(with, &out, field), 0);
    near(json_number_value(json_object_get(
             json_object_get(json_object_get(json_object_get(out, "kernel"), "description"),
                             "per_warp"),
             "int")),
         31, "p_n by its index");
    json_decref(out);
    snprintf(with, sizeof with, "%s{\"p_n\":10,\"bogus\":7}}", counted);
    assert_int_equal(predict_text(with, &out, field), -1);
    assert_string_equal(field, "params.bogus");
    assert_non_null(strstr(err, "'bogus' is not a parameter of k"));
    assert_non_null(strstr(err, "0 p_n"));
    /* text that is not PTX is refused as such, not described: the same kernel
     * without its .version and .target, and a sentence that names an entry */
    assert_int_equal(predict_text("{\"grid\":80,\"block\":256,\"regs\":32,\"ptx\":"
                                  "\".visible .entry k()\\n{\\nmov.u32 %i, 0;\\nret;\\n}\"}",
                                  &out, field), -1);
    assert_string_equal(field, "ptx");
    assert_non_null(strstr(err, "not PTX"));
    assert_int_equal(predict_text("{\"grid\":80,\"block\":256,\"regs\":32,\"ptx\":"
                                  "\"see the .entry k { of the manual; }\"}", &out, field), -1);
    assert_non_null(strstr(err, "not PTX"));
    assert_int_equal(predict_text("{\"grid\":80,\"block\":256,\"regs\":32,\"ptx\":"
                                  "\".version 8.0\\n.target sm_90\\n"
                                  ".visible .entry k(.param .u32 p_n)\\n{\\n.reg .u32 %i, %n;\\n"
                                  ".reg .pred %q;\\nld.param.u32 %n, [p_n];\\nmov.u32 %i, 0;\\n"
                                  "$L:\\nadd.u32 %i, %i, 1;\\nsetp.lt.u32 %q, %i, %n;\\n"
                                  "@%q bra $L;\\nret;\\n}\",\"params\":{\"p_n\":10}}", &out,
                                  field), 0);
    /* 10 iterations of add, setp, bra; mov once: 31 int instructions */
    const json_t *d = json_object_get(json_object_get(out, "kernel"), "description");
    near(json_number_value(json_object_get(json_object_get(d, "per_warp"), "int")), 31,
         "derived int count");
    json_decref(out);
    /* the cache model's hit rates: checked member by member */
    static const struct {
        const char *cache, *field;
    } bad_cache[] = {
        {"[]", "cache"},
        {"{\"l1_hit\":0.5}", "cache.l2_hit"},
        {"{\"l2_hit\":0.5}", "cache.l1_hit"},
        {"{\"l1_hit\":1.5,\"l2_hit\":0}", "cache.l1_hit"},
        {"{\"l1_hit\":0.5,\"l2_hit\":0,\"l3_hit\":1}", "cache.l3_hit"},
    };
    char text[512];
    for (size_t i = 0; i < sizeof bad_cache / sizeof bad_cache[0]; i++) {
        snprintf(text, sizeof text, "{\"grid\":80,\"block\":256,\"regs\":32,\"per_warp\":"
                 "{\"coalesced\":4},\"cache\":%s}", bad_cache[i].cache);
        assert_int_equal(predict_text(text, &out, field), -1);
        assert_string_equal(field, bad_cache[i].field);
    }
    assert_int_equal(predict_text("{\"grid\":80,\"block\":256,\"regs\":32,\"per_warp\":"
                                  "{\"coalesced\":4,\"sync\":1,\"sync_mem\":2}}", &out, field),
                     -1);
    assert_string_equal(field, "per_warp.sync_mem");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_case2_bandwidth_limited),
        cmocka_unit_test(test_case1_too_few_warps),
        cmocka_unit_test(test_case3_computation),
        cmocka_unit_test(test_uncoalesced_sync_and_transfers),
        cmocka_unit_test(test_compute_only_and_bad_input),
        cmocka_unit_test(test_hit_rates_weight_latency_and_traffic),
        cmocka_unit_test(test_memory_periods_and_departure_floor),
        cmocka_unit_test(test_period_waits_for_its_slowest_load),
        cmocka_unit_test(test_dram_granule),
        cmocka_unit_test(test_computation_dispatch_and_pipes),
        cmocka_unit_test(test_barriers_charged_when_waiting_on_memory),
        cmocka_unit_test_setup_teardown(test_parameters_need_both_probes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_validation_saved_predicted_and_served, setup,
                                        teardown),
        cmocka_unit_test(test_validation_document_checked),
        cmocka_unit_test(test_predict_json),
        cmocka_unit_test(test_predict_static_smem_from_ptx),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
