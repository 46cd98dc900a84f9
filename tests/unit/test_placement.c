/*
 * Unit tests of the block placement probe's analysis (probes/placement_analysis.c):
 * a launch that was one wave gives its order, "determined"; a launch in
 * which a block ended before the last began, an SM out of range and an SM
 * with less than its share are "not determined" with the reason; repeats
 * that differ are counted; the check launch is predicted by the order's
 * dealing, and a check dealt otherwise is counted as such.
 *
 * DESIGN
 * The records are built here, for a machine of four SMs dealt in the order
 * 2 3 0 1 over and over, with times chosen to make each case (the H200's
 * measured orders are tests/unit/test_trace_deal.c's).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "probes/placement.h"

#define SMS 4
#define PER_SM 4
#define BLOCKS (SMS * PER_SM)

static const uint64_t cycle[SMS] = {2, 3, 0, 1};

/* Block b on cycle[b % SMS], started at 100 + b, ended at 1000 + b. */
static void one_wave(uint64_t *rec, uint32_t blocks)
{
    for (uint32_t b = 0; b < blocks; b++) {
        rec[b * PL_REC] = cycle[b % SMS];
        rec[b * PL_REC + 1] = 100 + b;
        rec[b * PL_REC + 2] = 1000 + b;
    }
}

static struct pl_input input(const uint64_t *rec, uint32_t launches)
{
    return (struct pl_input){.sms = SMS, .threads = 32, .blocks = BLOCKS, .launches = launches,
                             .rec = rec, .spin_ns = 200000};
}

static const char *status(const json_t *doc) { return json_string_value(json_object_get(doc, "status")); }
static const char *reason(const json_t *doc) { return json_string_value(json_object_get(doc, "reason")); }

static void test_one_wave_determined(void **state)
{
    (void)state;
    uint64_t rec[2 * BLOCKS * PL_REC];
    one_wave(rec, BLOCKS);
    one_wave(rec + BLOCKS * PL_REC, BLOCKS);
    rec[BLOCKS * PL_REC + 5 * PL_REC] = 0; /* the second launch put block 5 elsewhere */
    struct pl_input in = input(rec, 2);
    json_t *doc = pl_analyze(&in);
    assert_string_equal(status(doc), "determined");
    assert_int_equal(json_integer_value(json_object_get(doc, "blocks_per_sm")), PER_SM);
    assert_int_equal(json_integer_value(json_object_get(doc, "same_as_first")), 1);
    assert_int_equal(json_integer_value(json_object_get(doc, "deal_ns")), BLOCKS - 1);
    assert_true(json_is_true(json_object_get(doc, "one_wave")));
    const json_t *order = json_object_get(doc, "order");
    assert_int_equal(json_array_size(order), BLOCKS);
    for (uint32_t b = 0; b < BLOCKS; b++)
        assert_int_equal(json_integer_value(json_array_get(order, b)), cycle[b % SMS]);
    assert_null(json_object_get(doc, "check"));
    json_decref(doc);
}

static void test_not_determined(void **state)
{
    (void)state;
    uint64_t rec[BLOCKS * PL_REC];
    struct pl_input in = input(rec, 1);
    one_wave(rec, BLOCKS);
    rec[2] = 110; /* block 0 ended before block 15 began */
    json_t *doc = pl_analyze(&in);
    assert_string_equal(status(doc), "not determined");
    assert_non_null(strstr(reason(doc), "not one wave"));
    assert_false(json_is_true(json_object_get(doc, "one_wave")));
    assert_null(json_object_get(doc, "order"));
    json_decref(doc);
    one_wave(rec, BLOCKS);
    rec[3 * PL_REC] = SMS; /* an SM the device does not have */
    doc = pl_analyze(&in);
    assert_non_null(strstr(reason(doc), "block 3 ran on SM 4"));
    json_decref(doc);
    one_wave(rec, BLOCKS);
    rec[3 * PL_REC] = 2; /* SM 1 one short, SM 2 one over */
    doc = pl_analyze(&in);
    assert_non_null(strstr(reason(doc), "SM 1 ran 3 blocks"));
    json_decref(doc);
    in.rec = NULL;
    doc = pl_analyze(&in);
    assert_string_equal(reason(doc), "no launch ran");
    json_decref(doc);
}

static void test_check_predicted(void **state)
{
    (void)state;
    uint64_t rec[BLOCKS * PL_REC], check[2 * SMS * PL_REC];
    one_wave(rec, BLOCKS);
    /* two per SM: dealt 2 3 0 1 2 3 0 1, as the check ran */
    one_wave(check, 2 * SMS);
    struct pl_input in = input(rec, 1);
    in.check = check;
    in.check_threads = 1024;
    in.check_blocks = 2 * SMS;
    in.check_per_sm = 2;
    json_t *doc = pl_analyze(&in);
    const json_t *c = json_object_get(doc, "check");
    assert_int_equal(json_integer_value(json_object_get(c, "predicted")), 2 * SMS);
    assert_true(json_is_true(json_object_get(c, "one_wave")));
    assert_int_equal(json_array_size(json_object_get(c, "order")), 2 * SMS);
    json_decref(doc);
    check[0] = 3; /* block 0 went elsewhere than dealt */
    doc = pl_analyze(&in);
    c = json_object_get(doc, "check");
    assert_int_equal(json_integer_value(json_object_get(c, "predicted")), 2 * SMS - 1);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_one_wave_determined),
                                       cmocka_unit_test(test_not_determined),
                                       cmocka_unit_test(test_check_predicted)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
