/*
 * Unit tests of the fleet's statistics (fleet/stats.h): medians of odd and
 * even counts and their MAD against a sort, a sample of equal values (the
 * three-way selection stays linear: 200,000 equal values), the outlier
 * rule's three conditions each deciding, MAD 0, and the bounds; and the
 * string table that names the fleet (fleet/strtab.h).
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

#include "fleet/stats.h"
#include "fleet/strtab.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median by sorting a copy: what fleet_dist_of must agree with. */
static double sorted_median(const double *v, size_t n)
{
    double *c = malloc(n * sizeof *c);
    memcpy(c, v, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp);
    double m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
    free(c);
    return m;
}

static void test_median_and_mad_agree_with_sorting(void **state)
{
    (void)state;
    uint64_t s = 12345;
    for (size_t n = 1; n <= 301; n += 25) {
        double *v = malloc(n * sizeof *v), *w = malloc(n * sizeof *w), *dev = malloc(n * sizeof *dev);
        double *scratch = malloc(n * sizeof *scratch);
        for (size_t i = 0; i < n; i++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            v[i] = (double)(s >> 40) / 1000.0 + (i % 7 == 0 ? 5 : 0); /* with repeats */
            w[i] = v[i];
        }
        struct fleet_dist d;
        fleet_dist_of(w, n, scratch, &d);
        double m = sorted_median(v, n);
        for (size_t i = 0; i < n; i++)
            dev[i] = fabs(v[i] - m);
        assert_int_equal(d.n, n);
        assert_true(d.median == m);
        assert_true(d.mad == sorted_median(dev, n));
        qsort(v, n, sizeof *v, cmp);
        assert_true(d.min == v[0] && d.max == v[n - 1]);
        free(v), free(w), free(dev), free(scratch);
    }
}

static void test_even_count_and_equal_values(void **state)
{
    (void)state;
    double v[] = {4, 1, 3, 2}, scratch[4];
    struct fleet_dist d;
    fleet_dist_of(v, 4, scratch, &d);
    assert_true(d.median == 2.5);
    assert_true(d.mad == 1.0); /* deviations 1.5 0.5 0.5 1.5 */
    size_t n = 200000;
    double *eq = malloc(n * sizeof *eq), *sc = malloc(n * sizeof *sc);
    for (size_t i = 0; i < n; i++)
        eq[i] = 32.0;
    fleet_dist_of(eq, n, sc, &d);
    assert_true(d.median == 32.0 && d.mad == 0.0);
    free(eq), free(sc);
    fleet_dist_of(NULL, 0, NULL, &d);
    assert_int_equal(d.n, 0);
}

static void test_rule(void **state)
{
    (void)state;
    struct fleet_rule r = FLEET_RULE_DEFAULT;
    struct fleet_dist d = {.n = 100, .median = 100, .mad = 1, .min = 90, .max = 130};
    double mads;
    /* 6 x 1.4826 = 8.9 beyond the median, and 2 % of it */
    assert_false(fleet_is_outlier(&r, &d, 108.8, &mads));
    assert_true(fleet_is_outlier(&r, &d, 109.0, &mads));
    assert_true(fabs(mads - 9.0 / 1.4826) < 1e-9);
    assert_true(fleet_is_outlier(&r, &d, 91.0, NULL));
    /* a tight figure: beyond 6 robust sigmas but within 2 % is no outlier */
    d.mad = 0.01;
    assert_false(fleet_is_outlier(&r, &d, 101.9, NULL));
    assert_true(fleet_is_outlier(&r, &d, 102.1, NULL));
    /* MAD 0: the relative difference alone decides */
    d.mad = 0;
    assert_false(fleet_is_outlier(&r, &d, 100, &mads));
    assert_true(mads == 0);
    assert_true(fleet_is_outlier(&r, &d, 103, &mads));
    assert_true(isinf(mads));
    /* too few peers */
    d.n = 4;
    assert_false(fleet_is_outlier(&r, &d, 1000, NULL));
    assert_true(fleet_outlier_half_width(&r, &d) < 0);
    double low = -1, high = -1;
    assert_int_equal(fleet_outlier_bounds(&r, &d, &low, &high), -1); /* no bounds, not a band of 0 */
    assert_true(low == -1 && high == -1);
    d.n = 5;
    d.mad = 1;
    assert_int_equal(fleet_outlier_bounds(&r, &d, &low, &high), 0);
    assert_true(fabs(high - (100 + 6 * 1.4826)) < 1e-9 && fabs(low - (100 - 6 * 1.4826)) < 1e-9);
    /* the half-width is the larger of the two bounds: 2 % of the median here */
    d.mad = 0.01;
    assert_true(fleet_outlier_half_width(&r, &d) == 0.02 * 100);
}

static void test_strtab(void **state)
{
    (void)state;
    struct strtab t;
    strtab_init(&t);
    assert_int_equal(strtab_find(&t, "x"), UINT32_MAX);
    char name[32];
    for (uint32_t i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "GPU-%u", i);
        assert_int_equal(strtab_intern(&t, name), i);
    }
    assert_int_equal(strtab_intern(&t, "GPU-1234"), 1234);
    assert_int_equal(strtab_find(&t, "GPU-4999"), 4999);
    assert_string_equal(strtab_str(&t, 77), "GPU-77");
    assert_int_equal(strtab_find(&t, "GPU-5000"), UINT32_MAX);
    strtab_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_median_and_mad_agree_with_sorting),
        cmocka_unit_test(test_even_count_and_equal_values),
        cmocka_unit_test(test_rule),
        cmocka_unit_test(test_strtab),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
