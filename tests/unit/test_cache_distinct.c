/*
 * Unit tests of the distinct-lines estimate (cache/distinct.c) and of the
 * id table sized by it (cache/lineid.c): the sketch's estimate within a few
 * standard errors of the true count, from a handful of keys to millions,
 * whatever the repeats and the keys' spacing; a table sized for its lines
 * never doubles, and one sized too small still hands out the same ids.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "cache/distinct.h"
#include "cache/lineid.h"

/* xorshift64*: fixed streams. */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* n distinct keys base + k * stride, each added `rep` times in a random
 * order of the repeats: the estimate within 5% (~3 standard errors) of n,
 * and within 1 of n where n is small (linear counting is near exact). */
static void check_estimate(uint64_t n, uint64_t base, uint64_t stride, unsigned rep, uint64_t seed)
{
    struct cache_hll h;
    cache_hll_init(&h);
    for (unsigned r = 0; r < rep; r++)
        for (uint64_t k = 0; k < n; k++) {
            uint64_t j = (k + rnd(&seed) % 7) % n; /* the repeats out of order */
            cache_hll_add(&h, base + j * stride);
        }
    for (uint64_t k = 0; k < n; k++) /* every key at least once */
        cache_hll_add(&h, base + k * stride);
    double e = cache_hll_estimate(&h);
    if (n <= 64)
        assert_true(fabs(e - (double)n) <= 1.0);
    else
        assert_true(fabs(e - (double)n) <= 0.05 * (double)n);
}

static void test_hll_estimates(void **state)
{
    (void)state;
    struct cache_hll h;
    cache_hll_init(&h);
    assert_true(cache_hll_estimate(&h) == 0.0);
    check_estimate(1, 7, 1, 3, 1);
    check_estimate(40, 1000, 1, 2, 2);
    check_estimate(3000, 0, 1, 1, 3);         /* consecutive lines (a stream) */
    check_estimate(50000, 1ull << 40, 4096, 2, 4); /* strided */
    check_estimate(2000000, 123, 3, 1, 5);    /* past the small-range correction */
}

/* A table sized for n lines takes them without doubling (its mask stays),
 * and hands out 0, 1, 2 ... in first-sight order as an unsized one does. */
static void test_lineid_sized(void **state)
{
    (void)state;
    enum { N = 200000 };
    struct cache_lineid sized, small;
    assert_int_equal(cache_lineid_init(&sized, N), 0);
    assert_int_equal(cache_lineid_init(&small, 0), 0);
    uint64_t mask = sized.mask, small_mask = small.mask, seed = 9;
    assert_true((mask + 1) * 3 >= (uint64_t)N * 4);
    for (int i = 0; i < 3 * N; i++) {
        uint64_t line = (rnd(&seed) % N) * 977 + 5;
        uint32_t a = cache_lineid_get(&sized, line), b = cache_lineid_get(&small, line);
        assert_int_not_equal(a, CACHE_NONE);
        assert_int_equal(a, b);
    }
    assert_true(sized.n > N / 2);
    assert_int_equal(sized.mask, mask);
    assert_true(small.mask > small_mask); /* the unsized one grew */
    cache_lineid_free(&sized);
    cache_lineid_free(&small);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hll_estimates),
        cmocka_unit_test(test_lineid_sized),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
