/*
 * Unit tests of the latency model's random numbers (trace/rng.c):
 * splitmix64 and xoshiro256** match their published first outputs; a seed
 * gives the same stream every time, different seeds and different SM
 * streams of one seed differ; the logarithm and exponential built from
 * basic operations agree with the C library to a few ulp; the normal sampler
 * has mean 0, variance 1, the normal's tail mass and kurtosis, and never
 * passes its documented bound; delays are M exactly when fixed or sigma is
 * 0, at least M otherwise, saturate at UINT32_MAX, and their first values for
 * seed 1 are pinned (a change of those is a change of every sorted trace);
 * a batch of delays is exactly the single draws.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>

#include "trace/rng.h"

static void test_splitmix_vector(void **state)
{
    (void)state;
    uint64_t s = 0;
    assert_true(trace_splitmix64(&s) == 0xe220a8397b1dcdafull);
    assert_true(trace_splitmix64(&s) == 0x6e789e6aa1b965f4ull);
}

static void test_xoshiro_vector(void **state)
{
    (void)state;
    struct trace_rng r = {.s = {1, 2, 3, 4}};
    assert_true(trace_rng_next(&r) == 11520u);
    assert_true(trace_rng_next(&r) == 0u);
    assert_true(trace_rng_next(&r) == 1509978240u);
    assert_true(trace_rng_next(&r) == 1215971899390074240ull);
}

static void test_streams(void **state)
{
    (void)state;
    struct trace_rng a, b, c, d;
    trace_rng_seed(&a, 7);
    trace_rng_seed(&b, 7);
    trace_rng_seed(&c, 8);
    for (int i = 0; i < 1000; i++) {
        uint64_t x = trace_rng_next(&a);
        assert_true(x == trace_rng_next(&b));
        assert_true(x != trace_rng_next(&c)); /* 2^-64 per draw to fail by chance */
    }
    trace_rng_seed_stream(&a, 7, 0);
    trace_rng_seed_stream(&b, 7, 1);
    trace_rng_seed_stream(&c, 7, 0);
    trace_rng_seed_stream(&d, 0, 0); /* seed 0 is a seed like any other */
    int same = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = trace_rng_next(&a);
        same += x == trace_rng_next(&b);
        assert_true(x == trace_rng_next(&c));
        assert_true(trace_rng_next(&d) != 0 || i > 0);
    }
    assert_int_equal(same, 0);
    trace_rng_seed(&a, 3);
    for (int i = 0; i < 100000; i++) {
        double u = trace_rng_uniform(&a);
        assert_true(u >= 0.0 && u < 1.0);
    }
}

static void test_log_exp(void **state)
{
    (void)state;
    double worst = 0;
    for (double x = 1e-300; x < 1e300; x *= 1.0137) {
        double want = log(x);
        double e = fabs(trace_log(x) - want);
        if (want != 0)
            e /= fabs(want);
        if (e > worst)
            worst = e;
    }
    assert_true(trace_log(1.0) == 0.0);
    assert_true(fabs(trace_log(4.9406564584124654e-324) - log(4.9406564584124654e-324)) < 1e-12);
    assert_true(worst < 4e-16);
    worst = 0;
    for (double x = -700; x < 700; x += 0.01371) {
        double e = fabs(trace_exp(x) - exp(x)) / exp(x);
        if (e > worst)
            worst = e;
    }
    assert_true(worst < 4e-16);
    assert_true(trace_exp(0.0) == 1.0);
    assert_true(trace_exp(-800.0) == 0.0);
    assert_true(isinf(trace_exp(800.0)));
}

static void test_normal_moments(void **state)
{
    (void)state;
    struct trace_rng r;
    trace_rng_seed(&r, 12345);
    const long n = 2000000;
    double s1 = 0, s2 = 0, s4 = 0, maxh = 0;
    long tail = 0;
    for (long i = 0; i < n; i++) {
        double z = trace_rng_normal(&r);
        s1 += z;
        s2 += z * z;
        s4 += z * z * z * z;
        tail += fabs(z) > 2.0;
        double h = trace_rng_half_normal(&r);
        assert_true(h >= 0);
        if (h > maxh)
            maxh = h;
    }
    double mean = s1 / n, var = s2 / n - mean * mean, kurt = (s4 / n) / (var * var);
    /* standard errors: mean 7e-4, variance 1e-3, kurtosis ~4e-3, tail 1e-4 */
    assert_true(fabs(mean) < 0.004);
    assert_true(fabs(var - 1.0) < 0.006);
    assert_true(fabs(kurt - 3.0) < 0.04);
    assert_true(fabs((double)tail / n - 0.0455003) < 0.0008);
    assert_true(maxh < TRACE_HALF_NORMAL_MAX);
    assert_true(maxh > 4.0); /* 2M draws reach past 4 sigma */
}

static void test_delays(void **state)
{
    (void)state;
    struct trace_rng r, s;
    trace_rng_seed(&r, 1);
    s = r;
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(trace_rng_delay(&r, 1, 17, 5.0), 17);
        assert_int_equal(trace_rng_delay(&r, 0, 17, 0.0), 17);
    }
    assert_memory_equal(&r, &s, sizeof r); /* nothing drawn */
    uint64_t sum = 0;
    for (int i = 0; i < 100000; i++) {
        uint32_t d = trace_rng_delay(&r, 0, 40, 10.0);
        assert_true(d >= 40 && d <= 40 + 10 * TRACE_HALF_NORMAL_MAX + 1);
        sum += d;
    }
    /* E[M + round(sigma |z|)] ~ 40 + 10 * sqrt(2 / pi) = 47.98 */
    double mean = (double)sum / 100000;
    assert_true(fabs(mean - 47.98) < 0.1);
    assert_int_equal(trace_rng_delay(&r, 0, UINT32_MAX - 2, 1e6), UINT32_MAX);

    trace_rng_seed(&r, 1);
    uint32_t got[8];
    for (int i = 0; i < 8; i++)
        got[i] = trace_rng_delay(&r, 0, 40, 10.0);
    static const uint32_t pinned[8] = {47, 44, 55, 45, 51, 43, 41, 45};
    for (int i = 0; i < 8; i++)
        if (got[i] != pinned[i]) {
            char line[200];
            snprintf(line, sizeof line, "%u,%u,%u,%u,%u,%u,%u,%u", got[0], got[1], got[2], got[3], got[4], got[5],
                     got[6], got[7]);
            fail_msg("delays for seed 1 changed: %s", line);
        }
}

/* trace_rng_delays (a warp instruction's delays in one call, its first
 * ziggurat try inlined) gives exactly the single draws, in batches of
 * every size, over enough draws to take the wedge and tail paths many
 * times, and leaves the stream where the single draws leave it. */
static void test_delays_batch_equals_single(void **state)
{
    (void)state;
    struct trace_rng a, b;
    trace_rng_seed(&a, 77);
    b = a;
    uint32_t got[32], big = 0;
    for (uint32_t round = 0; round < 20000; round++) {
        uint32_t n = round % 33; /* 0 .. 32 */
        double sigma = round % 3 ? 10.0 : 2500.0;
        trace_rng_delays(&a, 0, 40, sigma, got, n);
        for (uint32_t i = 0; i < n; i++) {
            uint32_t want = trace_rng_delay(&b, 0, 40, sigma);
            if (got[i] != want)
                fail_msg("round %u, delay %u: %u, single draws %u", round, i, got[i], want);
            big += sigma == 2500.0 && want > 40 + 2500 * 3; /* past 3 sigma: the wedges' far end */
        }
    }
    assert_memory_equal(&a, &b, sizeof a);
    assert_true(big > 100);
    trace_rng_delays(&a, 1, 17, 10.0, got, 32); /* fixed: M, nothing drawn */
    trace_rng_delays(&a, 0, 17, 0.0, got + 16, 16);
    for (int i = 0; i < 32; i++)
        assert_int_equal(got[i], 17);
    assert_memory_equal(&a, &b, sizeof a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_splitmix_vector), cmocka_unit_test(test_xoshiro_vector),
        cmocka_unit_test(test_streams),         cmocka_unit_test(test_log_exp),
        cmocka_unit_test(test_normal_moments),  cmocka_unit_test(test_delays),
        cmocka_unit_test(test_delays_batch_equals_single),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
