/*
 * Unit tests of the control-code probe's tables (db/results_control.c) and
 * of what they add to the latency reader: the document saved and read back
 * with the same figures (sweeps, fits, meanings, an instruction that could
 * not be measured), malformed documents refused with the field's path and
 * nothing written, and each latency entry's "min_safe_stall" taken from the
 * newest control-codes run on the device that found one for the instruction.
 *
 * DESIGN
 * The documents: tests/fixtures/results/control-codes-example.json
 * (SYNTHETIC, in the shape of probes/control_codes_run.c's output, with an
 * unmeasured instruction and one with no safe stall) and, when it exists,
 * control-codes-h200.json (captured on an H200). The latency document is
 * latency-h200.json, on the same device as the synthetic one. Runs are made
 * older or newer by editing probe_runs.measured_ms behind the store.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "db/results.h"
#include "tests/unit/support/resultdb.h"

#define CONTROL_FIXTURE "tests/fixtures/results/control-codes-example.json"
#define CONTROL_CAPTURED "tests/fixtures/results/control-codes-h200.json"
#define LATENCY_FIXTURE "tests/fixtures/results/latency-h200.json"

static json_t *control_doc(void)
{
    return rdb_load(CONTROL_FIXTURE);
}

/* ---- comparing ------------------------------------------------------------------- */

/* The point of a sweep at (stall, yield), or NULL. */
static const json_t *point_at(const json_t *sweep, json_int_t stall, json_int_t yield)
{
    const json_t *p;
    size_t i;
    json_array_foreach(sweep, i, p)
        if (json_integer_value(json_object_get(p, "stall")) == stall &&
            json_integer_value(json_object_get(p, "yield")) == yield)
            return p;
    return NULL;
}

static void check_sweep(const json_t *want, const json_t *got, const char *what)
{
    static const char *const flags[] = {"chain_correct", "stream_correct"};
    static const char *const figures[] = {"chain_cycles", "stream_cycles"};
    const json_t *p;
    size_t i;
    char sub[160];
    assert_int_equal(json_array_size(got), json_array_size(want));
    json_array_foreach(want, i, p) {
        const json_t *g = point_at(got, json_integer_value(json_object_get(p, "stall")),
                                   json_integer_value(json_object_get(p, "yield")));
        snprintf(sub, sizeof sub, "%s.sweep[%zu]", what, i);
        if (!g)
            fail_msg("%s: not read back", sub);
        for (int k = 0; k < 2; k++) {
            rdb_check_same(json_object_get(p, flags[k]), json_object_get(g, flags[k]), sub);
            rdb_check_figure(json_object_get(p, figures[k]), json_object_get(g, figures[k]), sub);
        }
    }
}

static void check_fit(const json_t *want, const json_t *got, const char *what)
{
    static const char *const keys[] = {"slope", "intercept", "max_residual", "from_stall",
                                       "to_stall", "yield"};
    char sub[160];
    if (!json_is_object(want)) {
        if (!json_is_null(got))
            fail_msg("%s: expected null", what);
        return;
    }
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        snprintf(sub, sizeof sub, "%s.%s", what, keys[k]);
        rdb_check_number(json_object_get(want, keys[k]), json_object_get(got, keys[k]), sub);
    }
}

static void check_instruction(const json_t *w, const json_t *g, size_t i)
{
    static const char *const texts[] = {"name", "sass", "error"};
    static const char *const ints[] = {"compiler_stall", "compiler_yield", "min_safe_stall"};
    char what[96], sub[128];
    snprintf(what, sizeof what, "instructions[%zu]", i);
    for (size_t k = 0; k < 3; k++) {
        snprintf(sub, sizeof sub, "%s.%s", what, texts[k]);
        rdb_check_text(json_object_get(w, texts[k]), json_object_get(g, texts[k]), sub);
        snprintf(sub, sizeof sub, "%s.%s", what, ints[k]);
        rdb_check_number(json_object_get(w, ints[k]), json_object_get(g, ints[k]), sub);
    }
    rdb_check_figure(json_object_get(w, "chain_latency_cycles"),
                     json_object_get(g, "chain_latency_cycles"), what);
    for (size_t k = 0; k < 2; k++) {
        const char *kind = k ? "stream" : "chain";
        snprintf(sub, sizeof sub, "%s.fit.%s", what, kind);
        check_fit(json_object_get(json_object_get(w, "fit"), kind),
                  json_object_get(json_object_get(g, "fit"), kind), sub);
    }
    check_sweep(json_object_get(w, "sweep"), json_object_get(g, "sweep"), what);
}

static void check_control(const json_t *doc, const json_t *got, int64_t job)
{
    const json_t *wi = json_object_get(doc, "instructions");
    const json_t *gi = json_object_get(got, "instructions");
    rdb_check_provenance(doc, got, job);
    assert_int_equal(json_array_size(gi), json_array_size(wi));
    for (size_t i = 0; i < json_array_size(wi); i++)
        check_instruction(json_array_get(wi, i), json_array_get(gi, i), i);
    rdb_check_same(json_object_get(doc, "meanings"), json_object_get(got, "meanings"),
                   "meanings");
}

/* ---- round trips ------------------------------------------------------------------ */

static void control_round_trip(struct rdb *f, json_t *doc)
{
    char err[512];
    if (results_control_codes_check(doc, err, sizeof err) != 0)
        fail_msg("check: %s", err);
    int64_t id = rdb_saved_job(f->s, "control-codes", doc, results_control_codes_save);
    json_t *got = rdb_read(f->s, rdb_uuid(doc), "control-codes", 0);
    check_control(doc, got, id);
    json_decref(got);
    got = rdb_read(f->s, rdb_uuid(doc), "control-codes", id);
    check_control(doc, got, id);
    json_decref(got);
}

static void test_control_round_trip(void **state)
{
    struct rdb *f = *state;
    json_t *doc = control_doc();
    control_round_trip(f, doc);
    assert_int_equal(query_int(f->t->path, "SELECT count(*) FROM control_code_instr"),
                     (int64_t)json_array_size(json_object_get(doc, "instructions")));
    assert_int_equal(query_int(f->t->path, "SELECT count(*) FROM control_code_instr"
                                           " WHERE error IS NOT NULL AND min_safe_stall IS NULL"),
                     1);
    assert_int_equal(query_int(f->t->path, "SELECT count(*) FROM control_code_instr"
                                           " WHERE min_safe_stall IS NULL"), 2);
    assert_int_equal(query_int(f->t->path, "SELECT count(*) FROM control_code_meanings"),
                     (int64_t)json_object_size(json_object_get(doc, "meanings")));
    json_decref(doc);
}

/* The issue-order meaning (probes/issue_order.h) is a document inside the
 * meanings: stored and served whole, its table and counts included. */
static void test_control_round_trip_scheduler(void **state)
{
    struct rdb *f = *state;
    json_t *doc = control_doc();
    json_error_t je;
    json_t *m = json_loads("{\"text\": \"Issue order ...: Rule: greedy, then youngest.\","
                           " \"rule\": \"greedy, then youngest\", \"greedy\": true,"
                           " \"after\": {\"stall_ends\": {\"rule\": [\"youngest\"]}},"
                           " \"data\": {\"by_experiment\": {\"stall_ends\": {\"decisions\": 12,"
                           " \"hits\": {\"youngest\": 12, \"oldest\": 0}}},"
                           " \"subpartitions\": {\"same_group_pairs\": 64}}}", 0, &je);
    assert_non_null(m);
    json_object_set_new(json_object_get(doc, "meanings"), "scheduler", m);
    control_round_trip(f, doc);
    json_t *got = rdb_read(f->s, rdb_uuid(doc), "control-codes", 0);
    const json_t *sched = json_object_get(json_object_get(got, "meanings"), "scheduler");
    assert_string_equal(json_string_value(json_object_get(sched, "rule")), "greedy, then youngest");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(
                         json_object_get(json_object_get(sched, "data"), "by_experiment"),
                         "stall_ends"), "hits"), "youngest")), 12);
    json_decref(got);
    json_decref(doc);
}

static void test_control_round_trip_captured(void **state)
{
    struct rdb *f = *state;
    if (access(CONTROL_CAPTURED, R_OK) != 0)
        skip();
    json_t *doc = rdb_load(CONTROL_CAPTURED);
    control_round_trip(f, doc);
    assert_int_equal(query_int(f->t->path, "SELECT count(*) FROM control_code_sweep"),
                     32 * (int64_t)json_array_size(json_object_get(doc, "instructions")));
    json_decref(doc);
}

/* ---- malformed documents ------------------------------------------------------------ */

static json_t *instr(json_t *d, size_t i)
{
    return json_array_get(json_object_get(d, "instructions"), i);
}

static json_t *point(json_t *d, size_t i, size_t j)
{
    return json_array_get(json_object_get(instr(d, i), "sweep"), j);
}

static void stall_16(json_t *d)
{
    json_object_set_new(point(d, 0, 3), "stall", json_integer(16));
}
static void yield_true(json_t *d) { json_object_set_new(point(d, 0, 3), "yield", json_true()); }
static void point_twice(json_t *d)
{
    json_object_set_new(point(d, 0, 1), "yield", json_integer(0)); /* (0, 0) again */
}
static void no_sweep(json_t *d) { json_object_del(instr(d, 1), "sweep"); }
static void no_fit(json_t *d) { json_object_del(instr(d, 1), "fit"); }
static void slope_text(json_t *d)
{
    json_object_set_new(json_object_get(json_object_get(instr(d, 0), "fit"), "chain"), "slope",
                        json_string("1"));
}
static void safe_16(json_t *d)
{
    json_object_set_new(instr(d, 0), "min_safe_stall", json_integer(16));
}
static void name_twice(json_t *d)
{
    json_object_set_new(instr(d, 2), "name", json_string("ffma"));
}
static void no_median(json_t *d)
{
    json_object_del(json_object_get(point(d, 0, 0), "chain_cycles"), "median");
}
static void correct_missing(json_t *d) { json_object_del(point(d, 4, 7), "stream_correct"); }
static void no_text(json_t *d)
{
    json_object_del(json_object_get(json_object_get(d, "meanings"), "stall"), "text");
}
static void meaning_text(json_t *d)
{
    json_object_set_new(json_object_get(d, "meanings"), "yield", json_string("bare text"));
}
static void no_meanings(json_t *d) { json_object_del(d, "meanings"); }
static void instructions_object(json_t *d)
{
    json_object_set_new(d, "instructions", json_object());
}
static void yield_2(json_t *d)
{
    json_object_set_new(instr(d, 0), "compiler_yield", json_integer(2));
}
static void no_sass(json_t *d) { json_object_del(instr(d, 3), "sass"); }
static void error_number(json_t *d) { json_object_set_new(instr(d, 3), "error", json_integer(1)); }
static void point_not_object(json_t *d)
{
    json_array_set_new(json_object_get(instr(d, 0), "sweep"), 5, json_integer(5));
}

static const struct {
    const char *field;
    void (*mutate)(json_t *doc);
} control_damage[] = {
    {"instructions[0].sweep[3].stall", stall_16},
    {"instructions[0].sweep[3].yield", yield_true},
    {"instructions[0].sweep[1].stall", point_twice},
    {"instructions[1].sweep", no_sweep},
    {"instructions[1].fit", no_fit},
    {"instructions[0].fit.chain.slope", slope_text},
    {"instructions[0].min_safe_stall", safe_16},
    {"instructions[2].name", name_twice},
    {"instructions[0].sweep[0].chain_cycles.median", no_median},
    {"instructions[4].sweep[7].stream_correct", correct_missing},
    {"meanings.stall.text", no_text},
    {"meanings.yield", meaning_text},
    {"meanings", no_meanings},
    {"instructions", instructions_object},
    {"instructions[0].compiler_yield", yield_2},
    {"instructions[3].sass", no_sass},
    {"instructions[3].error", error_number},
    {"instructions[0].sweep[5]", point_not_object},
};

static void test_control_malformed_refused(void **state)
{
    struct rdb *f = *state;
    char what[32];
    for (size_t i = 0; i < sizeof control_damage / sizeof control_damage[0]; i++) {
        json_t *doc = control_doc();
        control_damage[i].mutate(doc);
        snprintf(what, sizeof what, "damage %zu", i);
        rdb_refused(f, "control-codes", doc, results_control_codes_check,
                    results_control_codes_save, control_damage[i].field, what);
        json_decref(doc);
    }
}

/* ---- the safe stall beside the latency ------------------------------------------------ */

/* The latency entry called name in a reader's answer. */
static const json_t *entry_named(const json_t *got, const char *name)
{
    const json_t *e;
    size_t i;
    json_array_foreach(json_object_get(got, "entries"), i, e)
        if (strcmp(json_string_value(json_object_get(e, "name")), name) == 0)
            return e;
    fail_msg("no latency entry %s", name);
    return NULL;
}

/* Asserts the entry's min_safe_stall: {stall, job}, or null when job is 0. */
static void expect_safe(const json_t *got, const char *name, int stall, int64_t job)
{
    const json_t *safe = json_object_get(entry_named(got, name), "min_safe_stall");
    if (!job) {
        if (!json_is_null(safe))
            fail_msg("%s: expected no safe stall", name);
        return;
    }
    if (json_integer_value(json_object_get(safe, "stall")) != stall ||
        json_integer_value(json_object_get(safe, "job_id")) != job)
        fail_msg("%s: expected stall %d of job %lld, got %lld of job %lld", name, stall,
                 (long long)job, (long long)json_integer_value(json_object_get(safe, "stall")),
                 (long long)json_integer_value(json_object_get(safe, "job_id")));
}

/* A control-codes run measured at ms, with ffma's and fadd's safe stalls
 * (-1: none found). */
static int64_t control_run(struct rdb *f, const char *uuid, int ffma, int fadd, long long ms)
{
    char sql[160];
    json_t *doc = control_doc();
    json_object_set_new(json_object_get(doc, "device"), "uuid", json_string(uuid));
    json_object_set_new(instr(doc, 0), "min_safe_stall",
                        ffma < 0 ? json_null() : json_integer(ffma));
    json_object_set_new(instr(doc, 1), "min_safe_stall",
                        fadd < 0 ? json_null() : json_integer(fadd));
    int64_t id = rdb_saved_job(f->s, "control-codes", doc, results_control_codes_save);
    snprintf(sql, sizeof sql, "UPDATE probe_runs SET measured_ms = %lld WHERE job_id = %lld", ms,
             (long long)id);
    exec_plain(f->t->path, sql);
    json_decref(doc);
    return id;
}

static void test_latency_gets_newest_safe_stall(void **state)
{
    struct rdb *f = *state;
    json_t *lat = rdb_load(LATENCY_FIXTURE);
    const char *uuid = rdb_uuid(lat);
    int64_t lj = rdb_saved_job(f->s, "latency", lat, results_latency_save);
    json_t *got = rdb_read(f->s, uuid, "latency", 0);
    expect_safe(got, "ffma", 0, 0); /* no control-codes run yet */
    json_decref(got);

    int64_t older = control_run(f, uuid, 5, 6, 1700000000000LL);
    int64_t newer = control_run(f, uuid, 4, -1, 1700000900000LL);
    control_run(f, "GPU-another-device", 2, 2, 1800000000000LL); /* newest, but elsewhere */
    control_run(f, uuid, 9, 9, 1600000000000LL);                 /* oldest */
    got = rdb_read(f->s, uuid, "latency", lj);
    expect_safe(got, "ffma", 4, newer);
    expect_safe(got, "fadd", 6, older); /* the newer run found none */
    expect_safe(got, "dfma", 8, newer);
    expect_safe(got, "dadd", 0, 0);     /* no run found one */
    expect_safe(got, "lds", 0, 0);      /* never swept */
    json_decref(got);
    json_decref(lat);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, rdb_setup, rdb_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_control_round_trip),
        T(test_control_round_trip_scheduler),
        T(test_control_round_trip_captured),
        T(test_control_malformed_refused),
        T(test_latency_gets_newest_safe_stall),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
