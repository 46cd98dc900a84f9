/*
 * Unit tests of the occupancy rules (model/occupancy.c) and their JSON
 * (model/occupancy_json.c, model/occupancy_check.c).
 *
 * DESIGN
 * Three kinds of evidence:
 * - hand-worked cases, one per rule, the arithmetic written out beside each
 *   (each case is chosen so that dropping or changing the rule changes the
 *   answer: the sub-partition split, the shared allocation unit and reserve,
 *   carve-out steps, opt-in, barriers, the per-architecture limits);
 * - every configuration of the driver captures in tests/fixtures/occupancy/
 *   (real answers of cuOccupancyMaxActiveBlocksPerMultiprocessor), all of
 *   which must agree; a tampered copy must not;
 * - where ptxas is installed, the capture's kernels get the register count
 *   they were generated for.
 * Run from the repository root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/occupancy.h"
#include "model/occupancy_check.h"
#include "model/occupancy_curves.h"
#include "model/occupancy_json.h"
#include "probes/occupancy_sweep.h"

#define PTXAS "/usr/local/cuda/bin/ptxas"

static const char *const captures[] = {"tests/fixtures/occupancy/h200-sm90.json"};

/* Blocks per SM for cc with the input filled by the caller. */
static struct occ_result run(int major, int minor, const struct occ_input *in)
{
    struct occ_result o;
    char err[256];
    const struct occ_rules *r = occ_rules_for(major, minor);
    assert_non_null(r);
    if (occ_compute(r, in, &o, err, sizeof err) != 0)
        fail_msg("occ_compute: %s", err);
    return o;
}

/* ---- hand-worked cases ------------------------------------------------------ */

static void test_warps_and_registers_tie(void **state)
{
    (void)state;
    struct occ_input in;
    occ_input_init(&in, 256, 32);
    struct occ_result o = run(9, 0, &in);
    /* 8 warps; 64 / 8 = 8. 32 x 32 = 1024 registers a warp (a multiple of 256);
     * 16384 per sub-partition / 1024 = 16 warps, x 4 = 64, / 8 = 8. */
    assert_int_equal(o.warps_per_block, 8);
    assert_int_equal(o.regs_per_warp, 1024);
    assert_int_equal(o.limit[OCC_LIMIT_WARPS], 8);
    assert_int_equal(o.limit[OCC_LIMIT_REGISTERS], 8);
    assert_int_equal(o.blocks_per_sm, 8);
    assert_int_equal(o.limiter, OCC_LIMIT_WARPS);
    assert_int_equal(o.limiters, (1u << OCC_LIMIT_WARPS) | (1u << OCC_LIMIT_REGISTERS));
    assert_int_equal(o.active_warps, 64);
    assert_true(o.occupancy == 1.0);
    /* only the 1 KiB reserve: 233472 / 1024 = 228 */
    assert_int_equal(o.smem_per_block, 1024);
    assert_int_equal(o.limit[OCC_LIMIT_SHARED], 228);
}

static void test_register_granularity(void **state)
{
    (void)state;
    struct occ_input in;
    occ_input_init(&in, 256, 33);
    struct occ_result o = run(9, 0, &in);
    /* 33 x 32 = 1056 -> 1280 (5 units of 256); 16384 / 1280 = 12 warps a
     * sub-partition, 48 an SM, / 8 = 6 blocks. */
    assert_int_equal(o.regs_per_warp, 1280);
    assert_int_equal(o.warps_per_sub_partition, 12);
    assert_int_equal(o.blocks_per_sm, 6);
    assert_int_equal(o.limiter, OCC_LIMIT_REGISTERS);
}

static void test_sub_partition_split(void **state)
{
    (void)state;
    struct occ_input in;
    occ_input_init(&in, 96, 40);
    struct occ_result o = run(9, 0, &in);
    /* 3 warps of 1280 registers. Thesis eq. 22 over the whole file would
     * give 65536 / (1280 x 3) = 17; split over 4 sub-partitions it is
     * 4 x floor(16384 / 1280) = 48 warps, / 3 = 16. */
    assert_int_equal(o.limit[OCC_LIMIT_REGISTERS], 16);
    assert_int_equal(o.blocks_per_sm, 16);
    assert_int_equal(o.limiter, OCC_LIMIT_REGISTERS);
}

static void test_most_registers(void **state)
{
    (void)state;
    struct occ_input in;
    occ_input_init(&in, 256, 255);
    struct occ_result o = run(9, 0, &in);
    /* 255 x 32 = 8160 -> 8192; 8 warps x 8192 = 65536: exactly one block */
    assert_int_equal(o.regs_per_block, 65536);
    assert_int_equal(o.blocks_per_sm, 1);
    occ_input_init(&in, 288, 200);
    o = run(9, 0, &in);
    /* 200 x 32 = 6400; 9 warps rounded up to 12 x 6400 = 76800 > 65536 */
    assert_int_equal(o.regs_per_block_checked, 76800);
    assert_int_equal(o.blocks_per_sm, 0);
    assert_int_equal(o.limiter, OCC_LIMIT_REGISTERS);
    assert_true(strstr(o.refused, "76800") != NULL);
    occ_input_init(&in, 32, 256);
    o = run(9, 0, &in);
    assert_int_equal(o.blocks_per_sm, 0);
    assert_true(strstr(o.refused, "255") != NULL);
}

static void test_shared_unit_and_reserve(void **state)
{
    (void)state;
    struct occ_input in;
    occ_input_init(&in, 64, 16);
    in.dynamic_smem = 20000;
    struct occ_result o = run(9, 0, &in);
    /* 20000 + 1024 reserved = 21024 -> 21120 (165 x 128); 233472 / 21120 = 11 */
    assert_int_equal(o.smem_per_block, 21120);
    assert_int_equal(o.smem_per_sm, 233472);
    assert_int_equal(o.blocks_per_sm, 11);
    assert_int_equal(o.limiter, OCC_LIMIT_SHARED);
    /* 7.0: unit 256, no reserve: 1000 -> 1024; 96 KiB / 1 KiB = 96, so the
     * 32 blocks limit (one-warp blocks: 64 by warps) */
    occ_input_init(&in, 32, 16);
    in.dynamic_smem = 1000;
    o = run(7, 0, &in);
    assert_int_equal(o.smem_per_block, 1024);
    assert_int_equal(o.limit[OCC_LIMIT_SHARED], 96);
    assert_int_equal(o.blocks_per_sm, 32);
    assert_int_equal(o.limiter, OCC_LIMIT_BLOCKS);
}

static void test_carveout_steps(void **state)
{
    (void)state;
    struct occ_input in;
    occ_input_init(&in, 64, 16);
    in.dynamic_smem = 20000;
    in.carveout_pct = 25;
    struct occ_result o = run(9, 0, &in);
    /* 25 % of 233472 = 58368 -> the 64 KiB step; 65536 / 21120 = 3 */
    assert_int_equal(o.smem_preference, 65536);
    assert_int_equal(o.blocks_per_sm, 3);
    in.carveout_pct = 0;
    o = run(9, 0, &in);
    /* 0 is a step, smaller than one block: the smallest step that holds one
     * block, 32 KiB, is used: 1 block */
    assert_int_equal(o.smem_preference, 0);
    assert_int_equal(o.smem_per_sm, 32768);
    assert_int_equal(o.blocks_per_sm, 1);
    /* Turing has no 0 step: 0 % is 32 KiB */
    occ_input_init(&in, 64, 16);
    in.carveout_pct = 0;
    in.dynamic_smem = 4096;
    o = run(7, 5, &in);
    assert_int_equal(o.smem_per_sm, 32768);
    assert_int_equal(o.blocks_per_sm, 8);
}

static void test_optin(void **state)
{
    (void)state;
    struct occ_input in;
    occ_input_init(&in, 256, 64);
    in.dynamic_smem = 60000;
    struct occ_result o = run(9, 0, &in);
    /* the default dynamic maximum is 48 KiB: refused */
    assert_int_equal(o.blocks_per_sm, 0);
    assert_int_equal(o.limiter, OCC_LIMIT_SHARED);
    assert_true(strstr(o.refused, "MAX_DYNAMIC") != NULL);
    in.max_dynamic_smem = 232448;
    o = run(9, 0, &in);
    /* 61024 -> 61056; opt-in limit 232448 + 1024; 233472 / 61056 = 3 */
    assert_int_equal(o.smem_block_limit, 233472);
    assert_int_equal(o.smem_per_block, 61056);
    assert_int_equal(o.blocks_per_sm, 3);
    in.dynamic_smem = 232449;
    in.max_dynamic_smem = 232449;
    o = run(9, 0, &in);
    assert_int_equal(o.blocks_per_sm, 0);
    /* the largest inputs taken: every product stays an int (UBSan) */
    occ_input_init(&in, OCC_MAX_BLOCK, OCC_MAX_REGS);
    in.static_smem = in.dynamic_smem = in.max_dynamic_smem = OCC_MAX_SMEM;
    o = run(9, 0, &in);
    assert_int_equal(o.blocks_per_sm, 0);
    assert_true(o.regs_per_block_checked > 0 && o.smem_per_block > 0);
    /* static arrays cannot opt in: 48 KiB and no more, never a negative maximum */
    occ_input_init(&in, 256, 32);
    in.static_smem = 49152;
    o = run(9, 0, &in);
    assert_string_equal(o.refused, "");
    assert_int_equal(o.max_dynamic_smem, 0);
    in.static_smem = 49153;
    o = run(9, 0, &in);
    assert_int_equal(o.blocks_per_sm, 0);
    assert_int_equal(o.limiter, OCC_LIMIT_SHARED);
    assert_int_equal(o.max_dynamic_smem, 0);
    assert_non_null(strstr(o.refused, "static shared memory"));
}

static void test_barriers(void **state)
{
    (void)state;
    struct occ_input in;
    occ_input_init(&in, 32, 32);
    in.barriers = 16;
    struct occ_result o = run(9, 0, &in);
    /* 32 blocks x 2 = 64 barriers an SM / 16 = 4 */
    assert_int_equal(o.blocks_per_sm, 4);
    assert_int_equal(o.limiter, OCC_LIMIT_BARRIERS);
    o = run(8, 6, &in);
    /* 8.6: 16 blocks x 1 / 16 = 1 */
    assert_int_equal(o.blocks_per_sm, 1);
    in.barriers = 0;
    o = run(9, 0, &in);
    assert_int_equal(o.blocks_per_sm, 32);
    assert_int_equal(o.limiter, OCC_LIMIT_BLOCKS);
}

static void test_architectures_differ(void **state)
{
    (void)state;
    struct occ_input in;
    occ_input_init(&in, 768, 32);
    /* 24 warps: 64 / 24 = 2 on 9.0 and 8.0, 48 / 24 = 2 on 8.6, 32 / 24 = 1 on 7.5 */
    assert_int_equal(run(9, 0, &in).blocks_per_sm, 2);
    assert_int_equal(run(8, 6, &in).blocks_per_sm, 2);
    assert_int_equal(run(7, 5, &in).blocks_per_sm, 1);
    occ_input_init(&in, 32, 8);
    /* tiny blocks: the block limit of each architecture */
    assert_int_equal(run(9, 0, &in).blocks_per_sm, 32);
    assert_int_equal(run(8, 9, &in).blocks_per_sm, 24);
    assert_int_equal(run(8, 6, &in).blocks_per_sm, 16);
    assert_int_equal(run(7, 5, &in).blocks_per_sm, 16);
    occ_input_init(&in, 1025, 8);
    struct occ_result o = run(9, 0, &in);
    assert_int_equal(o.blocks_per_sm, 0);
    assert_int_equal(o.limiter, OCC_LIMIT_WARPS);
}

static void test_bad_input(void **state)
{
    (void)state;
    struct occ_input in;
    struct occ_result o;
    char err[128];
    const struct occ_rules *r = occ_rules_for(9, 0);
    assert_null(occ_rules_for(6, 1));
    occ_input_init(&in, 0, 32);
    assert_int_equal(occ_compute(r, &in, &o, err, sizeof err), -1);
    occ_input_init(&in, 128, 32);
    in.carveout_pct = 101;
    assert_int_equal(occ_compute(r, &in, &o, err, sizeof err), -1);
    assert_true(strstr(err, "carveout") != NULL);
    occ_input_init(&in, 128, 32);
    assert_int_equal(occ_compute(NULL, &in, &o, err, sizeof err), -1);
}

/* ---- JSON ------------------------------------------------------------------------ */

static int parse(const char *text, struct occ_request *rq, char *field)
{
    char err[256];
    json_t *j = json_loads(text, 0, NULL);
    assert_non_null(j);
    int rc = occ_request_parse(j, rq, err, sizeof err, field, 64);
    json_decref(j);
    return rc;
}

static void test_request_parsing(void **state)
{
    (void)state;
    struct occ_request rq;
    char field[64];
    assert_int_equal(parse("{\"compute_capability\":\"8.6\",\"regs\":40,\"block\":128,"
                           "\"smem\":100,\"carveout\":50}", &rq, field), 0);
    assert_int_equal(rq.cc_major, 8);
    assert_int_equal(rq.cc_minor, 6);
    assert_int_equal(rq.in.carveout_pct, 50);
    assert_int_equal(rq.in.barriers, 1);
    assert_int_equal(parse("{\"device\":0,\"regs\":40,\"block\":128}", &rq, field), 0);
    assert_non_null(rq.device);
    assert_int_equal(parse("{\"compute_capability\":\"9.0\",\"block\":128}", &rq, field), -1);
    assert_string_equal(field, "regs");
    assert_int_equal(parse("{\"compute_capability\":\"9\",\"regs\":1,\"block\":1}", &rq, field),
                     -1);
    assert_string_equal(field, "compute_capability");
    assert_int_equal(parse("{\"compute_capability\":\"9.0\",\"regs\":1,\"block\":1,"
                           "\"colour\":1}", &rq, field), -1);
    assert_string_equal(field, "colour");
    assert_int_equal(parse("{\"regs\":1,\"block\":1}", &rq, field), -1);
    assert_string_equal(field, "compute_capability");
    assert_int_equal(parse("{\"compute_capability\":\"9.0\",\"regs\":1,\"block\":\"1\"}", &rq,
                           field), -1);
    assert_string_equal(field, "block");
    assert_int_equal(rq.curves, 0);
    assert_int_equal(parse("{\"compute_capability\":\"9.0\",\"regs\":1,\"block\":1,"
                           "\"curves\":true}", &rq, field), 0);
    assert_int_equal(rq.curves, 1);
    assert_int_equal(parse("{\"compute_capability\":\"9.0\",\"regs\":1,\"block\":1,"
                           "\"curves\":1}", &rq, field), -1);
    assert_string_equal(field, "curves");
}

/* The warps one curve gives at x; -1 when x is not on it. */
static int warps_at(const json_t *curves, const char *name, int x)
{
    const json_t *c = json_object_get(curves, name), *xs = json_object_get(c, "x");
    assert_int_equal(json_array_size(xs), json_array_size(json_object_get(c, "active_warps")));
    for (size_t i = 0; i < json_array_size(xs); i++)
        if (json_integer_value(json_array_get(xs, i)) == x)
            return (int)json_integer_value(json_array_get(json_object_get(c, "active_warps"), i));
    return -1;
}

static size_t points(const json_t *curves, const char *name)
{
    return json_array_size(json_object_get(json_object_get(curves, name), "x"));
}

static void test_curves(void **state)
{
    (void)state;
    const struct occ_rules *r = occ_rules_for(9, 0);
    struct occ_input in;
    occ_input_init(&in, 256, 32);
    json_t *c = occ_curves_json(r, &in);
    assert_non_null(c);
    /* every warp of a block, every register count, every 128-byte unit up to 48 KiB */
    assert_int_equal(points(c, "block"), 32);
    assert_int_equal(points(c, "regs"), 255);
    assert_int_equal(points(c, "smem"), 49152 / 128 + 1);
    assert_int_equal(warps_at(c, "block", 256), 64);
    assert_int_equal(warps_at(c, "block", 1024), 64);
    assert_int_equal(warps_at(c, "block", 992), 62); /* two blocks of 31 warps */
    /* 255 registers: 8192 a warp, 2 warps per sub-partition, one block of 8 */
    assert_int_equal(warps_at(c, "regs", 255), 8);
    assert_int_equal(warps_at(c, "regs", 64), 32);
    /* 48 KiB + 1 KiB reserve: 4 blocks in the 228 KiB carve-out */
    assert_int_equal(warps_at(c, "smem", 49152), 32);
    assert_int_equal(warps_at(c, "smem", 0), 64);
    json_decref(c);

    /* a block the registers refuse counts 0 */
    occ_input_init(&in, 1024, 32);
    c = occ_curves_json(r, &in);
    assert_int_equal(warps_at(c, "regs", 64), 32);
    assert_int_equal(warps_at(c, "regs", 65), 0);
    json_decref(c);

    /* a kernel that opted in sweeps to the opt-in limit, not to its own bound */
    occ_input_init(&in, 128, 32);
    in.max_dynamic_smem = OCC_MAX_SMEM;
    c = occ_curves_json(r, &in);
    assert_int_equal(points(c, "smem"), 232448 / 128 + 1);
    assert_int_equal(warps_at(c, "smem", 232448), 4);
    json_decref(c);

    in.block_threads = 0; /* invalid input: no curves */
    assert_null(occ_curves_json(r, &in));
}

static void test_answer_json(void **state)
{
    (void)state;
    struct occ_input in;
    occ_input_init(&in, 96, 40);
    const struct occ_rules *r = occ_rules_for(9, 0);
    struct occ_result o = run(9, 0, &in);
    json_t *j = occ_result_json(r, &in, &o);
    assert_int_equal(json_integer_value(json_object_get(j, "blocks_per_sm")), 16);
    assert_string_equal(json_string_value(json_object_get(j, "limiter")), "registers");
    assert_true(json_is_null(json_object_get(json_object_get(j, "limits"), "barriers")) == 0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "registers"),
                                                        "per_warp_allocated")), 1280);
    assert_string_equal(json_string_value(json_object_get(j, "compute_capability")), "9.0");
    json_decref(j);
}

/* ---- the driver's answers ----------------------------------------------------------- */

static json_t *load(const char *path)
{
    json_error_t je;
    json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!j)
        fail_msg("%s: %s (run the tests from the repository root)", path, je.text);
    return j;
}

static void test_every_captured_configuration_agrees(void **state)
{
    (void)state;
    for (size_t f = 0; f < sizeof captures / sizeof captures[0]; f++) {
        json_t *cap = load(captures[f]);
        struct occ_check c;
        char err[256];
        if (occ_check_capture(cap, &c, err, sizeof err) != 0)
            fail_msg("%s: %s", captures[f], err);
        if (c.agree != c.rows || json_array_size(c.mismatches)) {
            char *s = json_dumps(c.mismatches, JSON_COMPACT);
            print_error("%s: %d of %d disagree; first: %.2000s\n", captures[f], c.rows - c.agree,
                        c.rows, s);
            free(s);
        }
        assert_true(c.rows >= 2000);
        assert_int_equal(c.agree, c.rows);
        assert_int_equal(c.attributes_checked, 10);
        assert_int_equal(c.attributes_agree, 10);
        /* the capture exercises every resource as the limiter */
        for (int l = 0; l < OCC_LIMIT_COUNT; l++)
            assert_true(c.limiter_count[l] > 0);
        json_decref(c.mismatches);
        json_decref(cap);
    }
}

static void test_a_tampered_capture_fails(void **state)
{
    (void)state;
    json_t *cap = load(captures[0]);
    json_t *row = json_array_get(json_object_get(cap, "rows"), 100);
    json_int_t was = json_integer_value(json_array_get(row, 5));
    json_array_set_new(row, 5, json_integer(was + 1));
    json_object_set_new(json_object_get(cap, "device"), "max_blocks_per_sm", json_integer(16));
    struct occ_check c;
    char err[256];
    assert_int_equal(occ_check_capture(cap, &c, err, sizeof err), 0);
    assert_int_equal(c.agree, c.rows - 1);
    assert_int_equal(c.attributes_agree, 9);
    assert_int_equal(json_array_size(c.mismatches), 2);
    json_decref(c.mismatches);
    json_array_set_new(row, 0, json_integer(999));
    assert_int_equal(occ_check_capture(cap, &c, err, sizeof err), -1);
    assert_true(strstr(err, "rows[100]") != NULL);
    json_decref(cap);
}

/* ---- the capture's kernels --------------------------------------------------------- */

/* Registers ptxas reports for a sweep kernel; -1 when it could not compile. */
static int ptxas_regs(const char *dir, int maxnreg, int live, int smem, int barrier)
{
    char ptx[128], cmd[512], line[512];
    int regs = -1;
    snprintf(ptx, sizeof ptx, "%s/occ.ptx", dir);
    char *text = occ_sweep_ptx(9, 0, maxnreg, live, smem, barrier);
    assert_non_null(text);
    FILE *f = fopen(ptx, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    free(text);
    snprintf(cmd, sizeof cmd, "%s -arch=sm_90 -v %s -o %s/occ.cubin 2>&1", PTXAS, ptx, dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    while (fgets(line, sizeof line, p)) {
        const char *u = strstr(line, "Used ");
        if (u && strstr(u, "registers"))
            regs = atoi(u + 5);
    }
    return pclose(p) == 0 ? regs : -1;
}

static void test_sweep_kernels_get_their_registers(void **state)
{
    (void)state;
    if (access(PTXAS, X_OK) != 0) {
        print_message("ptxas not installed at %s: register check skipped\n", PTXAS);
        skip();
    }
    char dir[] = "/tmp/gpuprobe-test-occ-XXXXXX";
    assert_non_null(mkdtemp(dir));
    static const int targets[] = {24, 33, 64, 128, 255};
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
        assert_int_equal(ptxas_regs(dir, targets[i], targets[i], 0, -1), targets[i]);
    assert_int_equal(ptxas_regs(dir, 32, 32, 4096, 15), 32);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_warps_and_registers_tie),
        cmocka_unit_test(test_register_granularity),
        cmocka_unit_test(test_sub_partition_split),
        cmocka_unit_test(test_most_registers),
        cmocka_unit_test(test_shared_unit_and_reserve),
        cmocka_unit_test(test_carveout_steps),
        cmocka_unit_test(test_optin),
        cmocka_unit_test(test_barriers),
        cmocka_unit_test(test_architectures_differ),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_request_parsing),
        cmocka_unit_test(test_answer_json),
        cmocka_unit_test(test_curves),
        cmocka_unit_test(test_every_captured_configuration_agrees),
        cmocka_unit_test(test_a_tampered_capture_fails),
        cmocka_unit_test(test_sweep_kernels_get_their_registers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
