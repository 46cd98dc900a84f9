/*
 * Unit tests of the memory probe's block placement in the store
 * (db/results_memory_deal.c): the "block_placement" member saved with a
 * memory result and read back in the document's shape — determined with
 * its order and check, not determined, failed, absent — the order the sort
 * takes from the read-back (trace/deal.h), and malformed members refused
 * with the field's path.
 *
 * DESIGN
 * The memory document is the smallest the memory walk accepts, as in
 * test_results_memory_l2.c; the member is the probe's shape for a machine
 * of four SMs, one block each.
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
#include "trace/deal.h"

#define UUID RDB_MEMORY_UUID

static const char DETERMINED[] =
    "{\"status\":\"determined\",\"threads_per_block\":32,\"blocks\":4,\"blocks_per_sm\":1,\"sms\":4,"
    "\"spin_ns\":200000,\"launches\":3,\"same_as_first\":3,\"one_wave\":true,\"deal_ns\":1984,"
    "\"order\":[2,3,0,1],\"check\":{\"threads_per_block\":1024,\"blocks\":8,\"blocks_per_sm\":2,"
    "\"one_wave\":true,\"predicted\":8,\"order\":[2,3,0,1,2,3,0,1]},\"wall_s\":0.01}";

static const char UNDETERMINED[] =
    "{\"status\":\"not determined\",\"reason\":\"the launch was not one wave\",\"threads_per_block\":32,"
    "\"blocks\":4,\"sms\":4,\"one_wave\":false}";

static char err[512];

static json_t *memory_with(const char *m) { return rdb_memory_with("block_placement", m); }

static json_t *round_trip(struct rdb *f, json_t *doc)
{
    return rdb_memory_round_trip(f, doc, "block_placement");
}

static void test_determined_round_trip(void **state)
{
    struct rdb *f = *state;
    json_t *want = rdb_parse(DETERMINED), *got = round_trip(f, memory_with(DETERMINED));
    static const char *const nums[] = {"threads_per_block", "blocks", "blocks_per_sm", "sms", "spin_ns",
                                       "launches", "same_as_first", "deal_ns", "wall_s"};
    rdb_check_text(json_object_get(want, "status"), json_object_get(got, "status"), "status");
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        rdb_check_number(json_object_get(want, nums[i]), json_object_get(got, nums[i]), nums[i]);
    rdb_check_same(json_object_get(want, "order"), json_object_get(got, "order"), "order");
    assert_true(json_is_true(json_object_get(got, "one_wave")));
    const json_t *c = json_object_get(got, "check");
    assert_int_equal(json_integer_value(json_object_get(c, "predicted")), 8);
    assert_int_equal(json_integer_value(json_object_get(c, "blocks_per_sm")), 2);
    assert_null(json_object_get(c, "order")); /* the check's own order is not kept */
    /* what the sort takes from it */
    struct trace_deal d;
    uint32_t wave[8];
    assert_int_equal(trace_deal_from_json(json_object_get(got, "order"), &d, err, sizeof err), 0);
    assert_int_equal(trace_deal_wave(&d, 4, 2, wave, err, sizeof err), 0);
    assert_int_equal(wave[0], 2);
    assert_int_equal(wave[7], 1);
    trace_deal_free(&d);
    json_decref(want);
    json_decref(got);
}

static void test_undetermined_and_errors(void **state)
{
    struct rdb *f = *state;
    json_t *got = round_trip(f, memory_with(UNDETERMINED));
    assert_string_equal(json_string_value(json_object_get(got, "status")), "not determined");
    assert_non_null(strstr(json_string_value(json_object_get(got, "reason")), "one wave"));
    assert_null(json_object_get(got, "order"));
    json_decref(got);
    static const char *const forms[] = {"{\"error\":\"cuMemAlloc(out): out of memory\"}",
                                        "cuMemAlloc(out): out of memory"};
    for (size_t i = 0; i < 2; i++) {
        got = round_trip(f, memory_with(forms[i]));
        assert_string_equal(json_string_value(json_object_get(got, "error")), "cuMemAlloc(out): out of memory");
        json_decref(got);
    }
    json_t *doc = memory_with(NULL);
    int64_t id = rdb_saved_job(f->s, "memory", doc, results_memory_save);
    json_t *back = rdb_read(f->s, UUID, "memory", id);
    assert_true(json_is_null(json_object_get(back, "block_placement")));
    json_decref(back);
    json_decref(doc);
}

static json_t *bp(json_t *d) { return json_object_get(d, "block_placement"); }
static void bad_status(json_t *d) { json_object_set_new(bp(d), "status", json_string("maybe")); }
static void no_order(json_t *d) { json_object_del(bp(d), "order"); }
static void short_order(json_t *d) { json_array_remove(json_object_get(bp(d), "order"), 0); }
static void sm_high(json_t *d) { json_array_set_new(json_object_get(bp(d), "order"), 1, json_integer(4)); }
static void sm_text(json_t *d) { json_array_set_new(json_object_get(bp(d), "order"), 2, json_string("0")); }
static void no_reason(json_t *d) { json_object_set_new(bp(d), "status", json_string("not determined")); }
static void blocks_text(json_t *d) { json_object_set_new(bp(d), "blocks", json_string("4")); }
static void wave_number(json_t *d) { json_object_set_new(bp(d), "one_wave", json_integer(1)); }
static void sm_twice(json_t *d) { json_array_set_new(json_object_get(bp(d), "order"), 1, json_integer(2)); }

static const struct rdb_damage damage[] = {
    {"block_placement.status", bad_status}, {"block_placement.order", no_order},
    {"block_placement.order", short_order}, {"block_placement.order", sm_high},
    {"block_placement.order", sm_text},     {"block_placement.reason", no_reason},
    {"block_placement.blocks", blocks_text}, {"block_placement.one_wave", wave_number},
    {"block_placement.order", sm_twice},
};

static void test_malformed_refused(void **state)
{
    rdb_memory_damages_refused(*state, "block_placement", DETERMINED, damage,
                               sizeof damage / sizeof damage[0]);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, rdb_setup, rdb_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {T(test_determined_round_trip), T(test_undetermined_and_errors),
                                       T(test_malformed_refused)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
