/*
 * Unit tests of the memory probe's curve analysis (probes/memory_analysis.c)
 * on real latency curves and on made-up edge cases.
 *
 * DESIGN
 * The real curves are whole result documents of the memory probe, captured
 * on H200s and committed under tests/fixtures/curves/ (the README there
 * says how). The expected levels below are what those curves show, read by
 * eye from the numbers in the files, with ranges wide enough for another
 * capture on the same kind of device but far narrower than the steps: an
 * analysis that merges two levels, splits one, or mistakes the climb past
 * the L2 for a level fails. Each document must also pass the store's check
 * (db/results.h), and the levels it carries must be the ones found again
 * here. The made-up curves pin each rule of the analysis: glitches, ramps,
 * the rising end, the tolerance floor, the limits, bad input.
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

#include "db/results.h"
#include "probes/memory.h"

#define CURVES "tests/fixtures/curves/"
#define KIB 1024.0
#define MIB (1024.0 * 1024.0)
#define MAXLV 16

/* Documents of the probe as it is: curves, levels, store check. */
static const char *const real_docs[] = {CURVES "h200_run1.json", CURVES "h200_run2.json"};
#define N_REAL (sizeof real_docs / sizeof real_docs[0])
/* Curves from two other H200s by earlier versions of the probe (see the
 * README): their curves only are used. */
static const char *const early_docs[] = {CURVES "h200_early1.json", CURVES "h200_early2.json"};
#define N_EARLY (sizeof early_docs / sizeof early_docs[0])

/* ---- helpers ------------------------------------------------------------ */

static json_t *load_doc(const char *path)
{
    json_error_t je;
    json_t *d = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!d)
        fail_msg("%s: %s (run the tests from the repository root)", path, je.text);
    return d;
}

static int levels_of_doc(const json_t *doc, const char *load, struct mem_level *lv)
{
    struct mem_point *pts;
    size_t n;
    char err[256];
    struct mem_analysis_opts o;
    const json_t *curve = json_object_get(json_object_get(doc, "curves"), load);
    if (mem_curve_from_json(curve, &pts, &n, err, sizeof err) != 0)
        fail_msg("curve %s: %s", load, err);
    mem_analysis_defaults(&o);
    int nl = mem_find_levels(pts, n, &o, lv, MAXLV);
    free(pts);
    return nl;
}

/* The probe's footprints: 1 KiB x 2^(k/4). */
static double footprint(int k) { return KIB * pow(2.0, k / 4.0); }

static int find(const struct mem_point *p, size_t n, struct mem_level *lv)
{
    struct mem_analysis_opts o;
    mem_analysis_defaults(&o);
    return mem_find_levels(p, n, &o, lv, MAXLV);
}

static void fill_flat(struct mem_point *p, int from, int to, double cycles)
{
    for (int k = from; k < to; k++)
        p[k] = (struct mem_point){footprint(k), cycles};
}

static void assert_between(double v, double lo, double hi)
{
    if (v < lo || v > hi)
        fail_msg("%g is not in [%g, %g]", v, lo, hi);
}

/* ---- real curves -------------------------------------------------------- */

/* Measured on H200s (62914560 bytes of L2): L1 hits 32.0 cycles up to
 * 215 KiB, next point 225 KiB; L2 hits 278-281 cycles (level medians) up to
 * 41.5 MiB, next 43.3 MiB (the footprint where it steps agrees for ca and
 * cg); past it the curve climbs to 602-626 cycles at 240 MiB without
 * levelling off. */
static void check_ca(const struct mem_level *lv, int n)
{
    assert_int_equal(n, 3);
    assert_true(lv[0].plateau && lv[1].plateau && !lv[2].plateau);
    assert_between(lv[0].cycles, 31, 33);
    assert_between(lv[0].up_to_bytes, 192 * KIB, 240 * KIB);
    assert_between(lv[0].next_bytes, lv[0].up_to_bytes + 1, 256 * KIB);
    assert_between(lv[1].cycles, 270, 290);
    assert_between(lv[1].from_bytes, lv[0].next_bytes, 512 * KIB);
    assert_between(lv[1].up_to_bytes, 32 * MIB, 48 * MIB);
    assert_true(lv[2].cycles > 2 * lv[1].cycles);
    assert_true(lv[2].from_bytes >= lv[1].next_bytes);
}

static void check_cg(const struct mem_level *lv, int n)
{
    assert_int_equal(n, 2);
    assert_true(lv[0].plateau && !lv[1].plateau);
    assert_between(lv[0].cycles, 270, 290);
    assert_between(lv[0].from_bytes, KIB, KIB);
    assert_between(lv[0].up_to_bytes, 32 * MIB, 48 * MIB);
    assert_true(lv[1].cycles > 2 * lv[0].cycles);
}

/* The levels the document carries are the ones found again here. */
static void check_doc_levels(const json_t *doc, const char *load, const struct mem_level *lv,
                             int n)
{
    const json_t *arr = json_object_get(json_object_get(doc, "levels"), load);
    assert_int_equal(json_array_size(arr), (size_t)n);
    for (int i = 0; i < n; i++) {
        const json_t *l = json_array_get(arr, (size_t)i);
        assert_int_equal(json_integer_value(json_object_get(l, "level")), lv[i].level);
        assert_true(fabs(json_number_value(json_object_get(l, "cycles")) - lv[i].cycles) < 1e-6);
        assert_int_equal(json_is_true(json_object_get(l, "plateau")), lv[i].plateau);
        if (lv[i].plateau && lv[i].next_bytes > 0)
            assert_int_equal(json_integer_value(json_object_get(l, "up_to_bytes")),
                             (json_int_t)lv[i].up_to_bytes);
        else
            assert_true(json_is_null(json_object_get(l, "up_to_bytes")));
    }
}

static void test_real_curves(void **state)
{
    (void)state;
    for (size_t d = 0; d < N_REAL; d++) {
        json_t *doc = load_doc(real_docs[d]);
        struct mem_level ca[MAXLV], cg[MAXLV];
        int nca = levels_of_doc(doc, "ca", ca), ncg = levels_of_doc(doc, "cg", cg);
        print_message("%s: ca %d levels, cg %d levels\n", real_docs[d], nca, ncg);
        check_ca(ca, nca);
        check_cg(cg, ncg);
        assert_true(ca[1].up_to_bytes == cg[0].up_to_bytes);
        check_doc_levels(doc, "ca", ca, nca);
        check_doc_levels(doc, "cg", cg, ncg);
        json_decref(doc);
    }
}

static void test_early_curves(void **state)
{
    (void)state;
    for (size_t d = 0; d < N_EARLY; d++) {
        json_t *doc = load_doc(early_docs[d]);
        struct mem_level ca[MAXLV], cg[MAXLV];
        int nca = levels_of_doc(doc, "ca", ca), ncg = levels_of_doc(doc, "cg", cg);
        check_ca(ca, nca);
        check_cg(cg, ncg);
        assert_true(ca[1].up_to_bytes == cg[0].up_to_bytes);
        json_decref(doc);
    }
}

static void test_real_documents(void **state)
{
    (void)state;
    for (size_t d = 0; d < N_REAL; d++) {
        json_t *doc = load_doc(real_docs[d]);
        char err[512] = "";
        if (results_memory_check(doc, err, sizeof err) != 0)
            fail_msg("%s: the store refuses it: %s", real_docs[d], err);
        assert_true(json_is_true(json_object_get(json_object_get(doc, "sass"), "verified")));
        /* device memory with the lines in no cache is slower than any point
         * of the warm curve, which the L2 still partly serves */
        const json_t *cold = json_object_get(doc, "device_memory_cycles");
        struct mem_level ca[MAXLV];
        int n = levels_of_doc(doc, "ca", ca);
        double cold_ca = json_number_value(json_object_get(json_object_get(cold, "ca"), "median"));
        assert_true(cold_ca > ca[n - 1].cycles);
        json_decref(doc);
    }
}

/* ---- made-up curves ----------------------------------------------------- */

static void test_flat_curve(void **state)
{
    (void)state;
    struct mem_point p[20];
    struct mem_level lv[MAXLV];
    fill_flat(p, 0, 20, 40);
    assert_int_equal(find(p, 20, lv), 1);
    assert_true(lv[0].plateau);
    assert_true(lv[0].cycles == 40);
    assert_true(lv[0].from_bytes == p[0].bytes);
    assert_true(lv[0].up_to_bytes == p[19].bytes);
    assert_true(lv[0].next_bytes == 0);
    assert_int_equal(lv[0].points, 20);
}

static void test_two_levels(void **state)
{
    (void)state;
    struct mem_point p[62];
    struct mem_level lv[MAXLV];
    fill_flat(p, 0, 30, 32);
    fill_flat(p, 30, 32, 0); /* transition, set below */
    p[30].cycles = 100;
    p[31].cycles = 200;
    fill_flat(p, 32, 62, 280);
    assert_int_equal(find(p, 62, lv), 2);
    assert_true(lv[0].cycles == 32 && lv[1].cycles == 280);
    assert_true(lv[0].up_to_bytes == p[29].bytes);
    assert_true(lv[0].next_bytes == p[30].bytes);
    assert_true(lv[1].from_bytes == p[32].bytes);
    assert_int_equal(lv[0].level, 1);
    assert_int_equal(lv[1].level, 2);
}

static void test_glitch_is_skipped(void **state)
{
    (void)state;
    struct mem_point p[20];
    struct mem_level lv[MAXLV];
    fill_flat(p, 0, 20, 40);
    p[10].cycles = 90;
    assert_int_equal(find(p, 20, lv), 1);
    assert_int_equal(lv[0].points, 19);
    assert_true(lv[0].up_to_bytes == p[19].bytes);
    /* three points off are a level of their own, not a glitch */
    p[11].cycles = p[12].cycles = 90;
    assert_int_equal(find(p, 20, lv), 3);
    assert_true(lv[0].up_to_bytes == p[9].bytes);
    assert_true(lv[1].cycles == 90);
}

static void test_ramp_is_no_level(void **state)
{
    (void)state;
    struct mem_point p[24];
    struct mem_level lv[MAXLV];
    /* +10 % per octave: every 3-point window is within 8 % of its median */
    for (int k = 0; k < 24; k++)
        p[k] = (struct mem_point){footprint(k), 300 * pow(1.10, k / 4.0)};
    assert_int_equal(find(p, 24, lv), 0);
}

static void test_rising_end(void **state)
{
    (void)state;
    struct mem_point p[40];
    struct mem_level lv[MAXLV];
    fill_flat(p, 0, 28, 280);
    for (int k = 28; k < 40; k++) /* the climb past a cache, still going */
        p[k] = (struct mem_point){footprint(k), 320 * pow(1.12, (k - 28) / 4.0)};
    assert_int_equal(find(p, 40, lv), 2);
    assert_true(lv[0].plateau && lv[0].up_to_bytes == p[27].bytes);
    assert_false(lv[1].plateau);
    assert_true(lv[1].cycles == p[39].cycles);
    assert_true(lv[1].from_bytes == p[28].bytes);
    assert_int_equal(lv[1].points, 12);
    /* a single last point off the level is not a rising end */
    fill_flat(p, 28, 40, 280);
    p[39].cycles = 500;
    assert_int_equal(find(p, 40, lv), 1);
    assert_true(lv[0].next_bytes == p[39].bytes);
}

static void test_drift_and_noise_stay_one_level(void **state)
{
    (void)state;
    struct mem_point p[60];
    struct mem_level lv[MAXLV];
    uint64_t s = 12345;
    for (int k = 0; k < 60; k++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double noise = ((double)(s >> 11) / 9007199254740992.0 - 0.5) * 0.06; /* +-3 % */
        /* 262 -> 282 cycles over 15 octaves, like a real L2 level */
        p[k] = (struct mem_point){footprint(k), (262 + 20.0 * k / 59) * (1 + noise)};
    }
    assert_int_equal(find(p, 60, lv), 1);
    assert_between(lv[0].cycles, 262, 282);
    assert_int_equal(lv[0].points, 60);
}

static void test_tolerance_floor(void **state)
{
    (void)state;
    struct mem_point p[12];
    struct mem_level lv[MAXLV];
    fill_flat(p, 0, 6, 2);
    fill_flat(p, 6, 12, 3.5); /* within 2 cycles: one level */
    assert_int_equal(find(p, 12, lv), 1);
    fill_flat(p, 6, 12, 4.5); /* 2.5 cycles off: a step */
    assert_int_equal(find(p, 12, lv), 2);
}

static void test_limits_and_bad_input(void **state)
{
    (void)state;
    struct mem_point p[40];
    struct mem_level lv[MAXLV];
    struct mem_analysis_opts o;
    mem_analysis_defaults(&o);
    for (int s = 0; s < 4; s++)
        fill_flat(p, 10 * s, 10 * s + 10, 50.0 * (1 << s));
    assert_int_equal(mem_find_levels(p, 40, &o, lv, MAXLV), 4);
    assert_int_equal(mem_find_levels(p, 40, &o, lv, 2), 2);
    assert_int_equal(mem_find_levels(p, 0, &o, lv, MAXLV), 0);
    assert_int_equal(mem_find_levels(p, 2, &o, lv, MAXLV), 0); /* fewer than min_points */
    struct mem_point bad[4];
    fill_flat(bad, 0, 4, 40);
    bad[2].bytes = bad[1].bytes; /* not increasing */
    assert_int_equal(mem_find_levels(bad, 4, &o, lv, MAXLV), -1);
    fill_flat(bad, 0, 4, 40);
    bad[3].cycles = 0;
    assert_int_equal(mem_find_levels(bad, 4, &o, lv, MAXLV), -1);
    bad[3].cycles = NAN;
    assert_int_equal(mem_find_levels(bad, 4, &o, lv, MAXLV), -1);
    fill_flat(bad, 0, 4, 40);
    o.min_points = 0;
    assert_int_equal(mem_find_levels(bad, 4, &o, lv, MAXLV), -1);
}

/* ---- JSON --------------------------------------------------------------- */

static void test_levels_json(void **state)
{
    (void)state;
    struct mem_level lv[2] = {
        {1, 32.0, 1024, 220416, 230144, 32, 1},
        {2, 606.0, 45441280, 251658240, 0, 12, 0},
    };
    json_t *a = mem_levels_json(lv, 2, 62914560.0);
    assert_int_equal(json_array_size(a), 2);
    const json_t *l1 = json_array_get(a, 0), *l2 = json_array_get(a, 1);
    assert_true(json_is_integer(json_object_get(l1, "up_to_bytes")));
    assert_int_equal(json_integer_value(json_object_get(l1, "up_to_bytes")), 220416);
    assert_int_equal(json_integer_value(json_object_get(l1, "next_bytes")), 230144);
    assert_true(json_is_null(json_object_get(l1, "last_bytes")));
    assert_true(fabs(json_real_value(json_object_get(l1, "l2_fraction")) - 220416 / 62914560.0) <
                1e-12);
    assert_true(json_is_false(json_object_get(l2, "plateau")));
    assert_true(json_is_null(json_object_get(l2, "up_to_bytes")));
    assert_true(json_is_null(json_object_get(l2, "l2_fraction")));
    assert_int_equal(json_integer_value(json_object_get(l2, "last_bytes")), 251658240);
    json_decref(a);
    a = mem_levels_json(lv, 1, 0); /* l2_bytes unknown */
    assert_true(json_is_null(json_object_get(json_array_get(a, 0), "l2_fraction")));
    json_decref(a);
}

static void test_curve_from_json(void **state)
{
    (void)state;
    struct mem_point *p;
    size_t n;
    char err[256];
    json_t *ok = json_loads("[{\"bytes\":1024,\"cycles\":{\"median\":32.5,\"min\":32,\"max\":33}},"
                            "{\"bytes\":2048,\"cycles\":{\"median\":33}}]", 0, NULL);
    assert_int_equal(mem_curve_from_json(ok, &p, &n, err, sizeof err), 0);
    assert_int_equal(n, 2);
    assert_true(p[0].bytes == 1024 && p[0].cycles == 32.5 && p[1].cycles == 33);
    free(p);
    json_decref(ok);
    static const char *const bad[] = {
        "[]", "{}", "[{\"bytes\":1024}]", "[{\"bytes\":\"1024\",\"cycles\":{\"median\":1}}]",
        "[{\"bytes\":1024,\"cycles\":{\"error\":\"launch failed\"}}]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *j = json_loads(bad[i], 0, NULL);
        assert_non_null(j);
        assert_int_equal(mem_curve_from_json(j, &p, &n, err, sizeof err), -1);
        assert_null(p);
        assert_true(err[0] != 0);
        json_decref(j);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_curves),
        cmocka_unit_test(test_early_curves),
        cmocka_unit_test(test_real_documents),
        cmocka_unit_test(test_flat_curve),
        cmocka_unit_test(test_two_levels),
        cmocka_unit_test(test_glitch_is_skipped),
        cmocka_unit_test(test_ramp_is_no_level),
        cmocka_unit_test(test_rising_end),
        cmocka_unit_test(test_drift_and_noise_stay_one_level),
        cmocka_unit_test(test_tolerance_floor),
        cmocka_unit_test(test_limits_and_bad_input),
        cmocka_unit_test(test_levels_json),
        cmocka_unit_test(test_curve_from_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
