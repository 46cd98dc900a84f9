/*
 * Unit tests of the dual-issue probe's tables (db/results_dual.c): the
 * document saved and read back with the same figures and in the same order,
 * a run with no known peak, and malformed documents refused with the
 * field's path and nothing written.
 *
 * DESIGN
 * The document is tests/fixtures/results/dual-issue-example.json: SYNTHETIC,
 * in the shape of probes/dual_issue_run.c's output (see the fixtures'
 * README), until a real capture replaces it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "db/results.h"
#include "tests/unit/support/resultdb.h"

#define DUAL_FIXTURE "tests/fixtures/results/dual-issue-example.json"

static json_t *dual_doc(void)
{
    return rdb_load(DUAL_FIXTURE);
}

/* ---- comparing ------------------------------------------------------------------- */

static void check_result(const json_t *w, const json_t *g, size_t i)
{
    static const char *const texts[] = {"pattern", "operands"};
    static const char *const nums[] = {"warps_per_scheduler", "nominal_ffma_per_sm_clock",
                                       "efficiency_vs_peak", "efficiency_vs_nominal"};
    char what[96];
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
        snprintf(what, sizeof what, "results[%zu].%s", i, texts[k]);
        rdb_check_text(json_object_get(w, texts[k]), json_object_get(g, texts[k]), what);
    }
    for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++) {
        snprintf(what, sizeof what, "results[%zu].%s", i, nums[k]);
        rdb_check_number(json_object_get(w, nums[k]), json_object_get(g, nums[k]), what);
    }
    snprintf(what, sizeof what, "results[%zu].ffma_per_sm_clock", i);
    rdb_check_figure(json_object_get(w, "ffma_per_sm_clock"),
                     json_object_get(g, "ffma_per_sm_clock"), what);
}

static void check_dual(const json_t *doc, const json_t *got, int64_t job)
{
    const json_t *wr = json_object_get(doc, "results"), *gr = json_object_get(got, "results");
    rdb_check_provenance(doc, got, job);
    rdb_check_number(json_object_get(doc, "peak_ffma_per_sm_clock"),
                     json_object_get(got, "peak_ffma_per_sm_clock"), "peak");
    rdb_check_text(json_object_get(doc, "peak_source"), json_object_get(got, "peak_source"),
                   "peak_source");
    rdb_check_same(json_object_get(doc, "dual_issue_observed"),
                   json_object_get(got, "dual_issue_observed"), "dual_issue_observed");
    rdb_check_text(json_object_get(doc, "verdict"), json_object_get(got, "verdict"), "verdict");
    rdb_check_same(json_object_get(json_object_get(doc, "banks"), "bank_count"),
                   json_object_get(json_object_get(got, "banks"), "bank_count"), "bank_count");
    rdb_check_same(json_object_get(doc, "operands"), json_object_get(got, "operands"),
                   "operands");
    assert_int_equal(json_array_size(gr), json_array_size(wr));
    for (size_t i = 0; i < json_array_size(wr); i++)
        check_result(json_array_get(wr, i), json_array_get(gr, i), i);
}

/* ---- round trips ------------------------------------------------------------------ */

static void dual_round_trip(struct rdb *f, json_t *doc)
{
    char err[512];
    if (results_dual_issue_check(doc, err, sizeof err) != 0)
        fail_msg("check: %s", err);
    int64_t id = rdb_saved_job(f->s, "dual-issue", doc, results_dual_issue_save);
    json_t *got = rdb_read(f->s, rdb_uuid(doc), "dual-issue", 0);
    check_dual(doc, got, id);
    json_decref(got);
    got = rdb_read(f->s, rdb_uuid(doc), "dual-issue", id);
    check_dual(doc, got, id);
    json_decref(got);
}

static void test_dual_round_trip(void **state)
{
    struct rdb *f = *state;
    json_t *doc = dual_doc();
    dual_round_trip(f, doc);
    assert_int_equal(query_int(f->t->path, "SELECT count(*) FROM dual_issue_results"),
                     (int64_t)json_array_size(json_object_get(doc, "results")));
    assert_int_equal(query_int(f->t->path, "SELECT dual_issue_observed FROM dual_issue_runs"), 0);
    json_decref(doc);
}

/* A device the peak table does not know: no peak, no efficiency against it,
 * no operands or bank count reported. */
static void test_dual_without_peak(void **state)
{
    struct rdb *f = *state;
    json_t *doc = dual_doc(), *r;
    size_t i;
    json_object_set_new(doc, "peak_ffma_per_sm_clock", json_null());
    json_object_del(doc, "operands");
    json_object_del(doc, "banks");
    json_array_foreach(json_object_get(doc, "results"), i, r)
        json_object_set_new(r, "efficiency_vs_peak", json_null());
    dual_round_trip(f, doc);
    assert_int_equal(query_int(f->t->path, "SELECT count(*) FROM dual_issue_runs"
                                           " WHERE peak IS NULL AND operands_json IS NULL"),
                     1);
    json_decref(doc);
}

/* ---- malformed documents ------------------------------------------------------------ */

static json_t *result(json_t *d, size_t i)
{
    return json_array_get(json_object_get(d, "results"), i);
}

static void warps_0(json_t *d)
{
    json_object_set_new(result(d, 0), "warps_per_scheduler", json_integer(0));
}
static void no_pattern(json_t *d) { json_object_del(result(d, 1), "pattern"); }
static void no_max(json_t *d)
{
    json_object_del(json_object_get(result(d, 2), "ffma_per_sm_clock"), "max");
}
static void config_twice(json_t *d)
{
    static const char *const keys[] = {"pattern", "operands", "warps_per_scheduler"};
    for (size_t k = 0; k < 3; k++)
        json_object_set(result(d, 6), keys[k], json_object_get(result(d, 5), keys[k]));
}
static void no_verdict(json_t *d) { json_object_del(d, "verdict"); }
static void observed_text(json_t *d)
{
    json_object_set_new(d, "dual_issue_observed", json_string("no"));
}
static void operands_text(json_t *d) { json_object_set_new(d, "operands", json_string("naive")); }
static void banks_0(json_t *d)
{
    json_object_set_new(json_object_get(d, "banks"), "bank_count", json_integer(0));
}
static void peak_text(json_t *d)
{
    json_object_set_new(d, "peak_ffma_per_sm_clock", json_string("128"));
}
static void no_results(json_t *d) { json_object_del(d, "results"); }
static void efficiency_text(json_t *d)
{
    json_object_set_new(result(d, 0), "efficiency_vs_peak", json_string("99%"));
}
static void result_array(json_t *d)
{
    json_array_set_new(json_object_get(d, "results"), 3, json_array());
}
static void no_rate(json_t *d) { json_object_del(result(d, 4), "ffma_per_sm_clock"); }
static void no_device(json_t *d) { json_object_del(d, "device"); }

static const struct {
    const char *field;
    void (*mutate)(json_t *doc);
} dual_damage[] = {
    {"results[0].warps_per_scheduler", warps_0},
    {"results[1].pattern", no_pattern},
    {"results[2].ffma_per_sm_clock.max", no_max},
    {"results[6].pattern", config_twice},
    {"verdict", no_verdict},
    {"dual_issue_observed", observed_text},
    {"operands", operands_text},
    {"banks.bank_count", banks_0},
    {"peak_ffma_per_sm_clock", peak_text},
    {"results", no_results},
    {"results[0].efficiency_vs_peak", efficiency_text},
    {"results[3]", result_array},
    {"results[4].ffma_per_sm_clock", no_rate},
    {"device", no_device},
};

static void test_dual_malformed_refused(void **state)
{
    struct rdb *f = *state;
    char what[32];
    for (size_t i = 0; i < sizeof dual_damage / sizeof dual_damage[0]; i++) {
        json_t *doc = dual_doc();
        dual_damage[i].mutate(doc);
        snprintf(what, sizeof what, "damage %zu", i);
        rdb_refused(f, "dual-issue", doc, results_dual_issue_check, results_dual_issue_save,
                    dual_damage[i].field, what);
        json_decref(doc);
    }
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, rdb_setup, rdb_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_dual_round_trip),
        T(test_dual_without_peak),
        T(test_dual_malformed_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
