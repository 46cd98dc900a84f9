/*
 * The sample and the hit rates of server/jobs/kernel_hits.h from counts (the
 * capture needs a GPU: tests/gpu/run.sh runs it whole).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <string.h>

#include "cache/counts.h"
#include "server/jobs/kernel_hits.h"
#include "trace/deal.h"

static void test_sample_blocks(void **state)
{
    (void)state;
    struct kernel_hits_req r = {.grid = {128, 128, 1}, .sm_count = 132, .blocks_per_sm = 8};
    assert_int_equal(kernel_hits_sample_blocks(&r), 1056);     /* one wave: no estimate */
    r.records_per_block = 1u << 16;
    assert_int_equal(kernel_hits_sample_blocks(&r), 256);      /* 2^24 records' worth */
    r.budget = 1000;
    assert_int_equal(kernel_hits_sample_blocks(&r), 1);        /* never none */
    r.budget = 0;
    r.records_per_block = 1;
    r.grid[1] = 2;
    assert_int_equal(kernel_hits_sample_blocks(&r), 256);      /* never past the grid */
    r.grid[0] = 8, r.grid[1] = 8, r.grid[2] = 8;
    r.records_per_block = 1u << 18;
    assert_int_equal(kernel_hits_sample_blocks(&r), 64);       /* any shape: linear blocks */
}

static double num(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

static void test_rates(void **state)
{
    (void)state;
    struct kernel_hits_req r = {.grid = {128, 128, 1}, .sm_count = 132, .blocks_per_sm = 8,
                                .l2_bytes = 1u << 20};
    struct cache_counts l1, l2;
    memset(&l1, 0, sizeof l1);
    memset(&l2, 0, sizeof l2);
    l1.sectors = 1000;
    l1.below_sectors = 100;
    l2.sectors = 100;
    l2.sector_hits = 10;
    l2.miss[CACHE_MISS_COMPULSORY] = 50; /* lines: 200 sectors */
    const uint64_t g = 128; /* f = 1/128 */
    json_t *a = kernel_hits_rates(&r, &l1, &l2, g, NULL);

    assert_true(fabs(num(a, "l1_hit") - 0.9) < 1e-12);
    /* footprint 50 lines x 4 sectors x 128 = 25600 sectors (800 KiB) fits 1 MiB: misses are
     * compulsory only, of 100 x 128 L1 misses over the kernel: more than all; none hit */
    assert_true(fabs(num(a, "l2_hit") - 0.0) < 1e-12);
    json_decref(a);
    l2.miss[CACHE_MISS_COMPULSORY] = 10; /* 40 sectors x 128 = 5120 of 12800 */
    a = kernel_hits_rates(&r, &l1, &l2, g, NULL);
    assert_true(fabs(num(a, "l2_hit") - 0.6) < 1e-12);
    l2.miss[CACHE_MISS_COMPULSORY] = 50;
    json_decref(a);
    /* the buffers it is given bound the footprint */
    const char *args[] = {"0=buf:51200", "p_n=2048", "2=buf:51200:f32:1"};
    r.args = args;
    r.nargs = 3;
    assert_int_equal(kernel_hits_buffer_bytes(args, 3), 102400);
    a = kernel_hits_rates(&r, &l1, &l2, g, NULL);
    assert_true(fabs(num(a, "l2_hit") - 0.75) < 1e-12);
    json_decref(a);
    r.nargs = 0;
    r.l2_bytes = 100 << 10; /* too small: the sample's own rate */
    a = kernel_hits_rates(&r, &l1, &l2, g, NULL);
    assert_true(fabs(num(a, "l2_hit") - 0.1) < 1e-12);
    assert_non_null(strstr(json_string_value(json_object_get(json_object_get(a, "sample"),
                                                             "l2_rule")),
                           "sample"));
    assert_string_equal(json_string_value(json_object_get(json_object_get(a, "sample"), "placement")),
                        "rr");
    json_decref(a);
    /* a sample sorted with the device's dealing order says so */
    uint16_t order[] = {0};
    struct trace_deal d = {1, order};
    r.deal = &d;
    a = kernel_hits_rates(&r, &l1, &l2, g, NULL);
    assert_string_equal(json_string_value(json_object_get(json_object_get(a, "sample"), "placement")),
                        "dealt");
    json_decref(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sample_blocks),
        cmocka_unit_test(test_rates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
