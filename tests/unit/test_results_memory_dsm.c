/*
 * Unit tests of the memory probe's distributed shared memory in the store
 * (db/results_memory_dsm.c): the "distributed_shared" member saved with a
 * memory result and read back in the document's shape — sizes that
 * launched, one that did not, a run that measured nothing, none at all —
 * and malformed members refused with the field's path.
 *
 * DESIGN
 * The member is made by the probe's own analysis (dsm_analyze) from made
 * timings, so the document the probe writes is the one the store is tested
 * with; the memory document around it is the smallest the memory walk
 * accepts (tests/unit/support/resultdb.h).
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

#include "db/results.h"
#include "probes/dsmem.h"
#include "tests/unit/support/resultdb.h"

#define DSM "distributed_shared"
#define REP 3

/* The member as dsm_probe writes it: sizes 2, 4, 8 launched (latency 30,
 * 190 + size, 200 + size cycles), 16 refused with a reason. */
static char *made_member(void)
{
    static uint64_t lat[DSM_TARGETS * REP], bw[DSM_DISTS * REP * DSM_MAX_CLUSTER];
    json_t *sizes = json_array();
    for (int i = 0; i < DSM_SIZES; i++) {
        unsigned n = dsm_sizes[i];
        for (int t = 0; t < DSM_TARGETS; t++)
            for (int k = 0; k < REP; k++)
                lat[t * REP + k] = (uint64_t)((t ? 190 + 10 * (t - 1) + n : 30) + (unsigned)k) * DSM_CHASE_LOADS;
        for (size_t j = 0; j < DSM_DISTS * REP * n; j++)
            bw[j] = 100000 + 1000 * j;
        struct dsm_raw r = {.asked = n, .driver_width = (int)n, .max_clusters = 8 / (int)n, .launched = n < 16,
                            .repeats = REP, .ranks_seen = n, .distinct_sms = n, .lat = lat, .bw = bw,
                            .error = n < 16 ? NULL : "no cluster of 16 blocks fits"};
        json_array_append_new(sizes, dsm_analyze(&r, 1755.0));
    }
    json_t *m = json_pack("{s:f,s:i,s:f,s:i,s:o,s:{},s:f}", "clock_mhz", 1755.0, "chase_loads",
                          (int)DSM_CHASE_LOADS, "bw_block_bytes", DSM_BW_BLOCK_BYTES, "block_pad_bytes", 113664,
                          "sizes", sizes, "sass", "wall_s", 0.25);
    char *text = json_dumps(m, JSON_COMPACT);
    json_decref(m);
    return text;
}

static void check_spread(const json_t *want, const json_t *got, const char *what)
{
    static const char *const parts[] = {"median", "min", "max"};
    if (!want) {                      /* a size that did not launch */
        assert_true(!got || json_is_null(got));
        return;
    }
    for (int i = 0; i < 3; i++)
        rdb_check_number(json_object_get(want, parts[i]), json_object_get(got, parts[i]), what);
}

static void test_round_trip(void **state)
{
    struct rdb *f = *state;
    char *text = made_member();
    json_t *want = rdb_parse(text), *got = rdb_memory_round_trip(f, rdb_memory_with(DSM, text), DSM);
    free(text);
    rdb_check_number(json_object_get(want, "clock_mhz"), json_object_get(got, "clock_mhz"), "clock");
    rdb_check_number(json_object_get(want, "chase_loads"), json_object_get(got, "chase_loads"), "loads");
    rdb_check_number(json_object_get(want, "block_pad_bytes"), json_object_get(got, "block_pad_bytes"), "pad");
    json_t *ws = json_object_get(want, "sizes"), *gs = json_object_get(got, "sizes");
    assert_int_equal(json_array_size(gs), DSM_SIZES);
    for (size_t i = 0; i < DSM_SIZES; i++) {
        json_t *w = json_array_get(ws, i), *g = json_array_get(gs, i);
        static const char *const nums[] = {"asked", "driver_width", "ranks_seen", "max_active_clusters",
                                           "distinct_sms"};
        for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++)
            rdb_check_number(json_object_get(w, nums[k]), json_object_get(g, nums[k]), nums[k]);
        assert_int_equal(json_is_true(json_object_get(g, "launched")), json_is_true(json_object_get(w, "launched")));
        assert_int_equal(json_is_true(json_object_get(g, "agrees")), json_is_true(json_object_get(w, "agrees")));
        rdb_check_text(json_object_get(w, "error"), json_object_get(g, "error"), "error");
        static const char *const lat[] = {"local", "neighbour", "farthest"}, *const bw[] = {"local", "remote"};
        for (int k = 0; k < 3; k++)
            check_spread(json_object_get(json_object_get(w, "latency_cycles"), lat[k]),
                         json_object_get(json_object_get(g, "latency_cycles"), lat[k]), lat[k]);
        for (int k = 0; k < 2; k++) {
            check_spread(json_object_get(json_object_get(w, "bytes_per_clk_sm"), bw[k]),
                         json_object_get(json_object_get(g, "bytes_per_clk_sm"), bw[k]), bw[k]);
            if (json_object_get(w, "gb_s_sm"))
                rdb_check_number(json_object_get(json_object_get(w, "gb_s_sm"), bw[k]),
                                 json_object_get(json_object_get(g, "gb_s_sm"), bw[k]), "gb_s");
        }
    }
    /* the size that did not launch has its reason and no figures */
    json_t *last = json_array_get(gs, DSM_SIZES - 1);
    assert_false(json_is_true(json_object_get(last, "launched")));
    assert_null(json_object_get(last, "latency_cycles"));
    assert_null(json_object_get(last, "gb_s_sm"));
    /* remote is slower than local in what was stored */
    json_t *l = json_object_get(json_array_get(gs, 0), "latency_cycles");
    assert_true(json_number_value(json_object_get(json_object_get(l, "neighbour"), "median")) >
                json_number_value(json_object_get(json_object_get(l, "local"), "median")));
    json_decref(want);
    json_decref(got);
}

static void test_error_and_absent(void **state)
{
    struct rdb *f = *state;
    static const char *const forms[] = {"{\"error\":\"thread-block clusters need compute capability 9.0\","
                                        "\"wall_s\":0.001}",
                                        "thread-block clusters need compute capability 9.0"};
    for (size_t i = 0; i < 2; i++) {
        json_t *d = rdb_memory_round_trip(f, rdb_memory_with(DSM, forms[i]), DSM);
        assert_non_null(strstr(json_string_value(json_object_get(d, "error")), "compute capability 9.0"));
        assert_null(json_object_get(d, "sizes"));
        json_decref(d);
    }
    json_t *doc = rdb_memory_with(DSM, NULL);
    int64_t id = rdb_saved_job(f->s, "memory", doc, results_memory_save);
    json_t *got = rdb_read(f->s, RDB_MEMORY_UUID, "memory", id);
    assert_true(json_is_null(json_object_get(got, DSM)));
    json_decref(got);
    json_decref(doc);
}

static json_t *size_of(json_t *d, size_t i) { return json_array_get(json_object_get(json_object_get(d, DSM), "sizes"), i); }
static void asked_big(json_t *d) { json_object_set_new(size_of(d, 0), "asked", json_integer(32)); }
static void asked_twice(json_t *d) { json_object_set_new(size_of(d, 1), "asked", json_integer(2)); }
static void no_reason(json_t *d) { json_object_del(size_of(d, 3), "error"); }
static void no_latency(json_t *d) { json_object_del(size_of(d, 0), "latency_cycles"); }
static void no_median(json_t *d)
{
    json_object_del(json_object_get(json_object_get(size_of(d, 1), "bytes_per_clk_sm"), "remote"), "median");
}
static void launched_text(json_t *d) { json_object_set_new(size_of(d, 2), "launched", json_string("yes")); }
static void no_sizes(json_t *d) { json_object_del(json_object_get(d, DSM), "sizes"); }

static const struct rdb_damage damage[] = {
    {"distributed_shared.sizes[0].asked", asked_big},
    {"distributed_shared.sizes[1].asked", asked_twice},
    {"distributed_shared.sizes[3].error", no_reason},
    {"distributed_shared.sizes[0].latency_cycles", no_latency},
    {"distributed_shared.sizes[1].bytes_per_clk_sm.remote.median", no_median},
    {"distributed_shared.sizes[2].launched", launched_text},
    {"distributed_shared.sizes", no_sizes},
};

static void test_malformed_refused(void **state)
{
    char *text = made_member();
    rdb_memory_damages_refused(*state, DSM, text, damage, sizeof damage / sizeof damage[0]);
    free(text);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, rdb_setup, rdb_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {T(test_round_trip), T(test_error_and_absent), T(test_malformed_refused)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
