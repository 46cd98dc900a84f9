/*
 * Unit tests of dealing blocks in a measured order (trace/deal.c): on an
 * H200's measurements (tests/fixtures/placement/README.md), the SM of every
 * block of a launch of two blocks per SM follows from the order of a launch
 * of 32 per SM with full SMs skipped, and the order taken as it is (no
 * skipping) does not give it; every SM gets its share; orders that name an
 * SM the sort does not have, or leave one out, and lists that are no order
 * are refused with the reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "trace/deal.h"

#define FIX "tests/fixtures/placement/"
#define H200_SMS 132

static char why[256];

/* The SM of each block of a fixture file; the count into *n. */
static uint16_t *load(const char *path, uint32_t *n)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    unsigned grid, block, b, sm;
    long long spin, start;
    assert_int_equal(fscanf(f, "grid %u block %u spin %lld", &grid, &block, &spin), 3);
    uint16_t *out = calloc(grid, sizeof *out);
    assert_non_null(out);
    for (unsigned i = 0; i < grid; i++) {
        assert_int_equal(fscanf(f, "%u %u %lld", &b, &sm, &start), 3);
        assert_int_equal(b, i);
        out[i] = (uint16_t)sm;
    }
    fclose(f);
    *n = grid;
    return out;
}

static void test_h200_two_per_sm_from_the_order(void **state)
{
    (void)state;
    uint32_t n_order, n_big;
    struct trace_deal d;
    d.sm = load(FIX "h200-1024x64.txt", &n_order);
    d.n = n_order;
    uint16_t *big = load(FIX "h200-264x1024.txt", &n_big);
    assert_int_equal(n_big, 2 * H200_SMS);
    uint32_t wave[2 * H200_SMS];
    assert_int_equal(trace_deal_wave(&d, H200_SMS, 2, wave, why, sizeof why), 0);
    for (uint32_t b = 0; b < n_big; b++)
        if (wave[b] != big[b])
            fail_msg("block %u: dealt to SM %u, ran on SM %u", b, wave[b], big[b]);
    /* without skipping the full SMs, the order's first 264 are not it */
    uint32_t differ = 0;
    for (uint32_t b = 0; b < n_big; b++)
        differ += d.sm[b] != big[b];
    assert_true(differ > 0);
    free(big);
    free(d.sm);
}

static void test_every_sm_its_share(void **state)
{
    (void)state;
    uint32_t n;
    struct trace_deal d;
    d.sm = load(FIX "h200-1024x64.txt", &n);
    d.n = n;
    for (uint32_t bps = 1; bps <= 16; bps *= 2) { /* 16 x 132 > the order's 1024: it wraps */
        uint32_t *wave = malloc((size_t)H200_SMS * bps * sizeof *wave), held[H200_SMS] = {0};
        assert_non_null(wave);
        assert_int_equal(trace_deal_wave(&d, H200_SMS, bps, wave, why, sizeof why), 0);
        for (uint32_t i = 0; i < H200_SMS * bps; i++)
            held[wave[i]]++;
        for (uint32_t s = 0; s < H200_SMS; s++)
            assert_int_equal(held[s], bps);
        free(wave);
    }
    free(d.sm);
}

static void test_bad_orders_refused(void **state)
{
    (void)state;
    uint16_t high[] = {0, 1, 4}, missing[] = {0, 2, 2};
    uint32_t wave[6];
    struct trace_deal d = {3, high};
    assert_int_equal(trace_deal_wave(&d, 3, 2, wave, why, sizeof why), -1);
    assert_non_null(strstr(why, "names SM 4"));
    d.sm = missing;
    assert_int_equal(trace_deal_wave(&d, 3, 2, wave, why, sizeof why), -1);
    assert_non_null(strstr(why, "2 of the sort's 3 SMs"));
    assert_non_null(strstr(why, "SM 1 is not in it"));
    assert_int_equal(trace_deal_wave(NULL, 3, 2, wave, why, sizeof why), -1);
    static const char *const lists[][2] = {{"[]", "1 to"}, {"{}", "1 to"}, {"[0, -1]", "entry 1"},
                                           {"[0, 4096]", "entry 1"}, {"[0, 1.5]", "entry 1"}};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        json_t *j = json_loads(lists[i][0], 0, NULL);
        assert_non_null(j);
        assert_int_equal(trace_deal_from_json(j, &d, why, sizeof why), -1);
        if (!strstr(why, lists[i][1]))
            fail_msg("%s: '%s' does not say '%s'", lists[i][0], why, lists[i][1]);
        assert_null(d.sm);
        json_decref(j);
    }
    json_t *j = json_loads("[2, 0, 1]", 0, NULL);
    assert_int_equal(trace_deal_from_json(j, &d, why, sizeof why), 0);
    assert_int_equal(d.n, 3);
    assert_int_equal(d.sm[0], 2);
    assert_int_equal(trace_deal_wave(&d, 3, 1, wave, why, sizeof why), 0);
    assert_int_equal(wave[0], 2);
    assert_int_equal(wave[2], 1);
    trace_deal_free(&d);
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_h200_two_per_sm_from_the_order),
                                       cmocka_unit_test(test_every_sm_its_share),
                                       cmocka_unit_test(test_bad_orders_refused)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
