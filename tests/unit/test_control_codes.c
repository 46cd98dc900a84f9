/*
 * The control-code probe's inference, without a GPU
 * (probes/control_codes_infer.c), on the sweep captured on an H200
 * (tests/fixtures/results/control-codes-h200.json):
 * - recomputing every derived member from the measured points gives what
 *   the document holds (GPUPROBE_UPDATE_GOLDEN=1 rewrites it instead);
 * - the figures the H200 showed: smallest safe stalls 4 (FFMA, FADD,
 *   FMUL, IMAD, IADD3) and 8 (HFMA2, DFMA, DADD), a chain slope of one
 *   cycle per count, the irregular encodings, no dual issue, a cleared
 *   wait mask giving a wrong answer;
 * - on hand-made sweeps: no correct chain, too few points, a gap in the
 *   scan, and a document with no experiments.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "probes/control_codes.h"

#define FIX "tests/fixtures/results/control-codes-h200.json"

static json_t *load(void)
{
    json_error_t je;
    json_t *d = json_load_file(FIX, 0, &je);
    assert_non_null(d);
    return d;
}

static json_t *entry(const json_t *doc, const char *name)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(doc, "instructions"), i, e)
        if (strcmp(json_string_value(json_object_get(e, "name")), name) == 0)
            return e;
    fail_msg("no entry %s", name);
    return NULL;
}

/* Strips and recomputes the derived members. */
static void rederive(json_t *doc)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(doc, "instructions"), i, e) {
        json_object_del(e, "min_safe_stall");
        json_object_del(e, "fit");
        cc_infer_instruction(e);
    }
    json_object_set_new(doc, "meanings", cc_meanings(json_object_get(doc, "instructions"),
                                                     json_object_get(doc, "experiments")));
}

static void test_rederive(void **state)
{
    (void)state;
    json_t *stored = load(), *again = load();
    rederive(again);
    if (getenv("GPUPROBE_UPDATE_GOLDEN"))
        assert_int_equal(json_dump_file(again, FIX, JSON_INDENT(1)), 0);
    else
        assert_true(json_equal(stored, again));
    json_decref(stored);
    json_decref(again);
}

static void test_h200_figures(void **state)
{
    (void)state;
    json_t *d = load();
    static const char *const four[] = {"ffma", "fadd", "fmul", "imad", "iadd"};
    static const char *const eight[] = {"hfma2", "dfma", "dadd"};
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(json_integer_value(json_object_get(entry(d, four[i]), "min_safe_stall")), 4);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(json_integer_value(json_object_get(entry(d, eight[i]), "min_safe_stall")), 8);
    const json_t *fit = json_object_get(json_object_get(entry(d, "ffma"), "fit"), "chain");
    assert_true(fabs(json_number_value(json_object_get(fit, "slope")) - 1.0) < 1e-9);
    assert_int_equal(json_integer_value(json_object_get(fit, "from_stall")), 4);
    const json_t *m = json_object_get(d, "meanings");
    assert_true(json_is_true(json_object_get(json_object_get(m, "stall"), "linear")));
    assert_true(json_is_false(json_object_get(json_object_get(m, "dual_issue"), "observed")));
    /* stall 0 with yield 0 waits longer than stall 15; 12..15 with yield 1 break the chain */
    const json_t *odd = json_object_get(json_object_get(m, "stall"), "irregular");
    assert_int_equal(json_array_size(odd), 5);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(odd, 0), "stall")), 0);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(odd, 0), "yield")), 0);
    for (size_t i = 1; i < 5; i++) {
        assert_int_equal(json_integer_value(json_object_get(json_array_get(odd, i), "stall")),
                         11 + (int)i);
        assert_int_equal(json_integer_value(json_object_get(json_array_get(odd, i), "yield")), 1);
    }
    const json_t *sin = json_array_get(
        json_object_get(json_object_get(m, "wait_mask"), "tests"), 0);
    assert_true(json_is_false(json_object_get(sin, "correct_cleared")));
    json_decref(d);
}

/* An entry with chain points at both yields for the given stalls. */
static json_t *synthetic(int nstalls, const int *stalls, const int *ok)
{
    json_t *sweep = json_array();
    for (int i = 0; i < nstalls; i++)
        for (int y = 0; y <= 1; y++)
            json_array_append_new(
                sweep, json_pack("{s:i, s:i, s:{s:f}, s:b, s:{s:f}, s:b}", "stall", stalls[i],
                                 "yield", y, "chain_cycles", "median", (double)stalls[i],
                                 "chain_correct", ok[i], "stream_cycles", "median",
                                 (double)stalls[i] + 0.25, "stream_correct", 1));
    return json_pack("{s:s, s:i, s:o}", "name", "x", "compiler_yield", 0, "sweep", sweep);
}

static void test_edges(void **state)
{
    (void)state;
    int all[CC_STALLS], wrong[CC_STALLS] = {0}, right[CC_STALLS];
    for (int s = 0; s < CC_STALLS; s++) {
        all[s] = s;
        right[s] = 1;
    }
    json_t *e = synthetic(CC_STALLS, all, wrong);
    cc_infer_instruction(e);
    assert_true(json_is_null(json_object_get(e, "min_safe_stall")));
    assert_true(json_is_null(json_object_get(json_object_get(e, "fit"), "chain")));
    json_decref(e);

    int top[2] = {14, 15}, ok2[2] = {1, 1};
    e = synthetic(2, top, ok2);                  /* safe from 14, but two points: no fit */
    cc_infer_instruction(e);
    assert_int_equal(json_integer_value(json_object_get(e, "min_safe_stall")), 14);
    assert_true(json_is_null(json_object_get(json_object_get(e, "fit"), "chain")));
    json_decref(e);

    int gap[4] = {15, 14, 12, 11}, ok4[4] = {1, 1, 1, 1};
    e = synthetic(4, gap, ok4);                  /* stall 13 unmeasured: the scan stops */
    cc_infer_instruction(e);
    assert_int_equal(json_integer_value(json_object_get(e, "min_safe_stall")), 14);
    json_decref(e);

    e = synthetic(CC_STALLS, all, right);
    cc_infer_instruction(e);
    assert_int_equal(json_integer_value(json_object_get(e, "min_safe_stall")), 0);
    const json_t *f = json_object_get(json_object_get(e, "fit"), "stream");
    assert_true(fabs(json_number_value(json_object_get(f, "slope")) - 1.0) < 1e-9);
    assert_true(fabs(json_number_value(json_object_get(f, "intercept")) - 0.25) < 1e-9);
    json_t *list = json_pack("[O]", e), *m = cc_meanings(list, NULL);
    assert_non_null(strstr(json_string_value(json_object_get(json_object_get(m, "wait_mask"),
                                                             "text")), "Not measured"));
    assert_non_null(strstr(json_string_value(json_object_get(json_object_get(m, "reuse"),
                                                             "text")), "Not measured"));
    assert_true(json_is_true(json_object_get(json_object_get(m, "stall"), "linear")));
    json_decref(m);
    json_decref(list);
    json_decref(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rederive),
        cmocka_unit_test(test_h200_figures),
        cmocka_unit_test(test_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
