/*
 * Unit tests of the register-bank probe's tables (db/results_banks.c): the
 * document saved and read back with the same figures, the classes rebuilt
 * from the map, RZ sources, and every kind of malformed document refused
 * with the field's path and nothing written.
 *
 * DESIGN
 * The document is tests/fixtures/results/banks-example.json: SYNTHETIC, in
 * the shape of probes/banks_run.c's output (see the fixtures' README), until
 * a real capture replaces it. Saving and comparing go through the support
 * library (tests/unit/support/resultdb.h), as for the other probes' tables.
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
#include "probes/banks_reuse.h"
#include "tests/unit/support/resultdb.h"

#define BANKS_FIXTURE "tests/fixtures/results/banks-example.json"

static json_t *banks_doc(void)
{
    return rdb_load(BANKS_FIXTURE);
}

/* ---- comparing ------------------------------------------------------------------- */

static const json_t *at(const json_t *o, const char *a, const char *b)
{
    return json_object_get(json_object_get(o, a), b);
}

static void check_cost(const char *name, const json_t *w, const json_t *g)
{
    char what[128];
    assert_non_null(g);
    snprintf(what, sizeof what, "costs.%s", name);
    rdb_check_same(json_object_get(w, "sources"), json_object_get(g, "sources"), what);
    rdb_check_same(json_object_get(w, "reuse"), json_object_get(g, "reuse"), what);
    rdb_check_same(json_object_get(w, "conflict"), json_object_get(g, "conflict"), what);
    rdb_check_figure(json_object_get(w, "ffma_per_sm_clock"),
                     json_object_get(g, "ffma_per_sm_clock"), what);
    rdb_check_figure(json_object_get(w, "ratio"), json_object_get(g, "ratio"), what);
}

static void check_banks(const json_t *doc, const json_t *got, int64_t job)
{
    static const char *const members[][2] = {
        {"kernel", "highest_tested_register"}, {"runs", "total"},
        {"runs", "class_building"},           {"runs", "confirmation"},
        {"runs", "all_pairs_would_be"},       {"confirmation", "pairs"},
        {"confirmation", "agree"},            {"sass_check", "verified"},
        {"seconds", "total"},
    };
    const json_t *wc = json_object_get(doc, "costs"), *gc = json_object_get(got, "costs"), *c;
    const char *name;
    rdb_check_provenance(doc, got, job);
    rdb_check_same(json_object_get(doc, "bank_count"), json_object_get(got, "bank_count"),
                   "bank_count");
    rdb_check_number(json_object_get(doc, "threshold"), json_object_get(got, "threshold"),
                     "threshold");
    rdb_check_same(json_object_get(doc, "map"), json_object_get(got, "map"), "map");
    rdb_check_same(json_object_get(doc, "classes"), json_object_get(got, "classes"), "classes");
    rdb_check_same(json_object_get(doc, "untested_registers"),
                   json_object_get(got, "untested_registers"), "untested_registers");
    for (size_t i = 0; i < sizeof members / sizeof members[0]; i++)
        rdb_check_same(at(doc, members[i][0], members[i][1]),
                       at(got, members[i][0], members[i][1]), members[i][1]);
    rdb_check_figure(at(doc, "reference", "ffma_per_sm_clock"),
                     at(got, "reference", "ffma_per_sm_clock"), "reference");
    assert_int_equal(json_object_size(gc), json_object_size(wc));
    json_object_foreach((json_t *)wc, name, c)
        check_cost(name, c, json_object_get(gc, name));
}

/* ---- round trips ------------------------------------------------------------------ */

static void test_banks_round_trip(void **state)
{
    struct rdb *f = *state;
    char err[512];
    json_t *doc = banks_doc();
    if (results_banks_check(doc, err, sizeof err) != 0)
        fail_msg("check: %s", err);
    int64_t id = rdb_saved_job(f->s, "banks", doc, results_banks_save);
    json_t *got = rdb_read(f->s, rdb_uuid(doc), "banks", 0);
    check_banks(doc, got, id);
    json_decref(got);
    got = rdb_read(f->s, rdb_uuid(doc), "banks", id);
    check_banks(doc, got, id);
    /* the costs keep the document's order */
    assert_string_equal(json_object_iter_key(json_object_iter(json_object_get(got, "costs"))),
                        json_object_iter_key(json_object_iter(json_object_get(doc, "costs"))));
    json_decref(got);
    assert_int_equal(query_int(f->t->path, "SELECT count(*) FROM banks_map"),
                     (int64_t)json_array_size(json_object_get(doc, "map")));
    assert_int_equal(query_int(f->t->path, "SELECT count(*) FROM banks_costs"),
                     (int64_t)json_object_size(json_object_get(doc, "costs")));
    assert_int_equal(query_int(f->t->path, "SELECT count(*) FROM probe_runs WHERE probe = 'banks'"),
                     1);
    /* RZ is NULL in its column */
    assert_int_equal(query_int(f->t->path, "SELECT src_c IS NULL AND src_a = 0 AND src_b = 2"
                                           " FROM banks_costs WHERE name = 'two_same_bank_a_b'"),
                     1);
    json_decref(doc);
}

/* Without untested registers; the classes come back from the rows. */
static void test_banks_without_untested(void **state)
{
    struct rdb *f = *state;
    json_t *doc = banks_doc();
    json_object_del(doc, "untested_registers");
    int64_t id = rdb_saved_job(f->s, "banks", doc, results_banks_save);
    exec_plain(f->t->path, "UPDATE banks_map SET bank = 1 - bank");
    json_t *got = rdb_read(f->s, rdb_uuid(doc), "banks", id);
    assert_true(json_is_null(json_object_get(got, "untested_registers")));
    /* read from the rows: bank 0 now starts at R1 */
    assert_int_equal(json_integer_value(json_array_get(
                         json_array_get(json_object_get(got, "classes"), 0), 0)),
                     1);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(got, "map"), 0)), 1);
    json_decref(got);
    json_decref(doc);
}

/* The reuse-cache analysis comes back whole; a document without one (the
 * fixture) reads back without the member. */
static json_t *reuse_member(void)
{
    double r[REUSE_QUESTIONS][REUSE_VARIANTS];
    for (int q = 0; q < REUSE_QUESTIONS; q++) {
        r[q][REUSE_TEST] = q % 2 ? 1.0 : 0.889;
        r[q][REUSE_FREE] = 1.0;
        r[q][REUSE_CLEARED] = 0.889;
    }
    return reuse_analyse(r, NULL);
}

static void test_banks_reuse_cache(void **state)
{
    struct rdb *f = *state;
    json_t *doc = banks_doc();
    int64_t id = rdb_saved_job(f->s, "banks", doc, results_banks_save);
    json_t *got = rdb_read(f->s, rdb_uuid(doc), "banks", id);
    assert_null(json_object_get(got, "reuse_cache"));
    json_decref(got);
    json_object_set_new(doc, "reuse_cache", reuse_member());
    id = rdb_saved_job(f->s, "banks", doc, results_banks_save);
    got = rdb_read(f->s, rdb_uuid(doc), "banks", id);
    assert_true(json_equal(json_object_get(got, "reuse_cache"), json_object_get(doc, "reuse_cache")));
    json_decref(got);
    json_object_set_new(doc, "reuse_cache", json_pack("{s:s}", "not_run", "one bank"));
    id = rdb_saved_job(f->s, "banks", doc, results_banks_save);
    got = rdb_read(f->s, rdb_uuid(doc), "banks", id);
    assert_string_equal(json_string_value(at(got, "reuse_cache", "not_run")), "one bank");
    json_decref(got);
    json_decref(doc);
}

/* ---- malformed documents ------------------------------------------------------------ */

static json_t *cost(json_t *d, const char *name)
{
    return json_object_get(json_object_get(d, "costs"), name);
}

static json_t *class_of(json_t *d, size_t k)
{
    return json_array_get(json_object_get(d, "classes"), k);
}

static void map_bank_2(json_t *d)
{
    json_array_set_new(json_object_get(d, "map"), 3, json_integer(2));
}
static void map_short(json_t *d) { json_array_remove(json_object_get(d, "map"), 0); }
static void map_text(json_t *d)
{
    json_array_set_new(json_object_get(d, "map"), 7, json_string("1"));
}
static void class_moved(json_t *d)
{
    json_array_set_new(class_of(d, 0), 1, json_integer(3)); /* R3 is in bank 1 */
}
static void class_dropped(json_t *d) { json_array_remove(class_of(d, 1), 0); }
static void class_twice(json_t *d) { json_array_append_new(class_of(d, 0), json_integer(0)); }
static void classes_three(json_t *d)
{
    json_array_append_new(json_object_get(d, "classes"), json_array());
}
static void source_rx(json_t *d)
{
    json_array_set_new(json_object_get(cost(d, "two_same_bank_a_b"), "sources"), 2,
                       json_string("RX"));
}
static void source_255(json_t *d)
{
    json_array_set_new(json_object_get(cost(d, "three_same_bank"), "sources"), 0,
                       json_integer(255));
}
static void sources_two(json_t *d)
{
    json_array_remove(json_object_get(cost(d, "two_same_bank_a_b"), "sources"), 2);
}
static void reuse_9(json_t *d)
{
    json_object_set_new(cost(d, "two_same_bank_a_b"), "reuse", json_integer(9));
}
static void rate_text(json_t *d)
{
    json_object_set_new(json_object_get(cost(d, "three_same_bank"), "ffma_per_sm_clock"), "median",
                        json_string("1.3"));
}
static void ratio_missing(json_t *d) { json_object_del(cost(d, "two_same_bank_b_c"), "ratio"); }
static void conflict_text(json_t *d)
{
    json_object_set_new(cost(d, "two_same_bank_a_b"), "conflict", json_string("yes"));
}
static void cost_number(json_t *d)
{
    json_object_set_new(json_object_get(d, "costs"), "x", json_integer(1));
}
static void no_reference(json_t *d)
{
    json_object_del(json_object_get(d, "reference"), "ffma_per_sm_clock");
}
static void agree_above(json_t *d)
{
    json_object_set_new(json_object_get(d, "confirmation"), "agree", json_integer(65));
}
static void no_highest(json_t *d)
{
    json_object_del(json_object_get(d, "kernel"), "highest_tested_register");
}
static void zero_banks(json_t *d) { json_object_set_new(d, "bank_count", json_integer(0)); }
static void untested_text(json_t *d)
{
    json_object_set_new(json_array_get(json_object_get(d, "untested_registers"), 0), "register",
                        json_string("R252"));
}
static void no_verified(json_t *d)
{
    json_object_del(json_object_get(d, "sass_check"), "verified");
}
static void no_total(json_t *d) { json_object_del(json_object_get(d, "runs"), "total"); }
static void no_seconds(json_t *d) { json_object_del(d, "seconds"); }
static void wrong_probe(json_t *d) { json_object_set_new(d, "probe", json_string("dual-issue")); }
static void no_threshold(json_t *d) { json_object_del(d, "threshold"); }
static void reuse_outcome(json_t *d)
{
    json_t *r = reuse_member();
    json_object_set_new(json_array_get(json_object_get(r, "questions"), 2), "outcome",
                        json_string("maybe"));
    json_object_set_new(d, "reuse_cache", r);
}
static void reuse_no_rules(json_t *d)
{
    json_t *r = reuse_member();
    json_object_del(r, "rules");
    json_object_set_new(d, "reuse_cache", r);
}
static void reuse_array(json_t *d) { json_object_set_new(d, "reuse_cache", json_array()); }

static const struct {
    const char *field;
    void (*mutate)(json_t *doc);
} banks_damage[] = {
    {"map[3]", map_bank_2},
    {"map", map_short},
    {"map[7]", map_text},
    {"classes[0][1]", class_moved},
    {"classes", class_dropped},
    {"classes[0][126]", class_twice},
    {"classes", classes_three},
    {"costs.two_same_bank_a_b.sources[2]", source_rx},
    {"costs.three_same_bank.sources[0]", source_255},
    {"costs.two_same_bank_a_b.sources", sources_two},
    {"costs.two_same_bank_a_b.reuse", reuse_9},
    {"costs.three_same_bank.ffma_per_sm_clock.median", rate_text},
    {"costs.two_same_bank_b_c.ratio", ratio_missing},
    {"costs.two_same_bank_a_b.conflict", conflict_text},
    {"costs.x", cost_number},
    {"reference.ffma_per_sm_clock", no_reference},
    {"confirmation.agree", agree_above},
    {"kernel.highest_tested_register", no_highest},
    {"bank_count", zero_banks},
    {"untested_registers[0].register", untested_text},
    {"sass_check.verified", no_verified},
    {"runs.total", no_total},
    {"seconds", no_seconds},
    {"probe", wrong_probe},
    {"threshold", no_threshold},
    {"reuse_cache.questions[2].outcome", reuse_outcome},
    {"reuse_cache.rules", reuse_no_rules},
    {"reuse_cache", reuse_array},
};

static void test_banks_malformed_refused(void **state)
{
    struct rdb *f = *state;
    char what[32];
    for (size_t i = 0; i < sizeof banks_damage / sizeof banks_damage[0]; i++) {
        json_t *doc = banks_doc();
        banks_damage[i].mutate(doc);
        snprintf(what, sizeof what, "damage %zu", i);
        rdb_refused(f, "banks", doc, results_banks_check, results_banks_save,
                    banks_damage[i].field, what);
        json_decref(doc);
    }
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, rdb_setup, rdb_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_banks_round_trip),
        T(test_banks_without_untested),
        T(test_banks_reuse_cache),
        T(test_banks_malformed_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
