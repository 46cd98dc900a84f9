/*
 * Unit tests of the memory probe's L2 partitions in the store
 * (db/results_memory_l2.c): the "l2_partitions" member saved with a memory
 * result and read back in the document's shape — two partitions (the H100's
 * search, as its probe wrote it), not determined, failed, absent — what the
 * cache model takes from the read-back (server/cli/trace_cache_parts.h),
 * and malformed members refused with the field's path.
 *
 * DESIGN
 * The memory document is the smallest the memory walk accepts (every
 * figure an error), as in test_results_memory_l1.c; the two-partition
 * member is the H100's of tests/gpu/results/2026-11-24-h100-l2parts with its
 * SM list cut to eight SMs.
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
#include "server/cli/trace_cache_parts.h"
#include "tests/unit/support/resultdb.h"

#define UUID RDB_MEMORY_UUID

static const char TWO[] =
    "{\"warmer_sm\":0,\"lines\":2048,\"threshold_cycles\":374.1,\"sm_partition\":[0,0,1,1,1,1,1,null],"
    "\"sms_per_partition\":[2,5],\"far_fraction\":0.5,\"ambiguous_lines\":0,"
    "\"home\":{\"granule_bytes\":4096,\"page_bits\":21,\"mask_bits\":[12,13,16,17,19],\"unpinned_bits\":[]},"
    "\"cycles\":{\"near\":280.0,\"far\":464.0,\"far_second_read\":287.0,\"memory_home_near\":569.0,"
    "\"memory_home_far\":755.0},\"copies_kept\":true,\"verdict\":\"two partitions\",\"wall_s\":0.32,"
    "\"sass\":{\"verified\":true}}";

static const char UNDETERMINED[] =
    "{\"warmer_sm\":0,\"lines\":2048,\"threshold_cycles\":300.0,\"sm_partition\":[0,null,1],"
    "\"sms_per_partition\":[1,1],\"verdict\":\"not determined\","
    "\"reason\":\"some SMs found part of the lines far, but too few for the other partition\"}";

static char err[512];

static json_t *memory_with(const char *m)
{
    return rdb_memory_with("l2_partitions", m);
}

static json_t *round_trip(struct rdb *f, json_t *doc)
{
    return rdb_memory_round_trip(f, doc, "l2_partitions");
}

static void test_two_partitions_round_trip(void **state)
{
    struct rdb *f = *state;
    json_t *want = rdb_parse(TWO), *l2 = round_trip(f, memory_with(TWO));
    static const char *const nums[] = {"warmer_sm", "lines", "threshold_cycles", "far_fraction",
                                       "ambiguous_lines", "wall_s"};
    rdb_check_text(json_object_get(want, "verdict"), json_object_get(l2, "verdict"), "verdict");
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        rdb_check_number(json_object_get(want, nums[i]), json_object_get(l2, nums[i]), nums[i]);
    rdb_check_same(json_object_get(want, "cycles"), json_object_get(l2, "cycles"), "cycles");
    rdb_check_same(json_object_get(want, "sm_partition"), json_object_get(l2, "sm_partition"), "sm_partition");
    rdb_check_same(json_object_get(want, "sms_per_partition"), json_object_get(l2, "sms_per_partition"),
                   "sms_per_partition");
    json_t *wh = json_object_get(want, "home"), *gh = json_object_get(l2, "home");
    rdb_check_same(json_object_get(wh, "mask_bits"), json_object_get(gh, "mask_bits"), "mask_bits");
    rdb_check_number(json_object_get(wh, "granule_bytes"), json_object_get(gh, "granule_bytes"), "granule");
    assert_true(json_is_true(json_object_get(l2, "copies_kept")));
    /* what the cache model takes from it */
    struct cache_parts p;
    assert_int_equal(cache_parts_from_json(l2, &p, err, sizeof err), 0);
    assert_int_equal(p.count, 2);
    assert_int_equal(p.sms, 8);
    assert_int_equal(p.sm_part[1], 0);
    assert_int_equal(p.sm_part[2], 1);
    assert_int_equal(p.sm_part[7], -1);
    assert_int_equal(p.home_mask, (1u << 12) | (1u << 13) | (1u << 16) | (1u << 17) | (1u << 19));
    json_decref(want);
    json_decref(l2);
}

static void test_undetermined_and_errors(void **state)
{
    struct rdb *f = *state;
    struct cache_parts p;
    json_t *l2 = round_trip(f, memory_with(UNDETERMINED));
    assert_string_equal(json_string_value(json_object_get(l2, "verdict")), "not determined");
    assert_non_null(strstr(json_string_value(json_object_get(l2, "reason")), "too few"));
    assert_int_equal(cache_parts_from_json(l2, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "not determined"));
    json_decref(l2);
    static const char *const forms[] = {"{\"error\":\"cuMemAlloc(flush): out of memory\"}",
                                        "cuMemAlloc(flush): out of memory"};
    for (size_t i = 0; i < 2; i++) {
        l2 = round_trip(f, memory_with(forms[i]));
        assert_string_equal(json_string_value(json_object_get(l2, "error")), "cuMemAlloc(flush): out of memory");
        assert_int_equal(cache_parts_from_json(l2, &p, err, sizeof err), -1);
        json_decref(l2);
    }
    /* a map that measured nothing, or holds what no search writes, is no map */
    static const char *const maps[][2] = {
        {"[null, null, null]", "no measured SM"}, {"[0, 0, null]", "no measured SM in partition 1"},
        {"[0, 1, \"a\"]", "sm_partition[2]"}, {"[0, 1, 2]", "sm_partition[2]"}, {"[0.5, 1]", "sm_partition[0]"}};
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++) {
        char text[200];
        snprintf(text, sizeof text,
                 "{\"verdict\": \"two partitions\", \"sm_partition\": %s, \"home\": {\"mask_bits\": [12]}}",
                 maps[i][0]);
        l2 = json_loads(text, 0, NULL);
        assert_non_null(l2);
        assert_int_equal(cache_parts_from_json(l2, &p, err, sizeof err), -1);
        if (!strstr(err, maps[i][1]))
            fail_msg("%s: '%s' does not say '%s'", maps[i][0], err, maps[i][1]);
        json_decref(l2);
    }
    json_t *doc = memory_with(NULL);
    int64_t id = rdb_saved_job(f->s, "memory", doc, results_memory_save);
    json_t *got = rdb_read(f->s, UUID, "memory", id);
    assert_true(json_is_null(json_object_get(got, "l2_partitions")));
    json_decref(got);
    json_decref(doc);
}

static json_t *l2_of(json_t *d) { return json_object_get(d, "l2_partitions"); }
static void bad_verdict(json_t *d) { json_object_set_new(l2_of(d), "verdict", json_string("three")); }
static void no_map(json_t *d) { json_object_del(l2_of(d), "sm_partition"); }
static void sm_two(json_t *d) { json_array_set_new(json_object_get(l2_of(d), "sm_partition"), 3, json_integer(2)); }
static void bit_high(json_t *d)
{
    json_array_set_new(json_object_get(json_object_get(l2_of(d), "home"), "mask_bits"), 0, json_integer(30));
}
static void no_reason(json_t *d) { json_object_set_new(l2_of(d), "verdict", json_string("not determined")); }
static void lines_text(json_t *d) { json_object_set_new(l2_of(d), "lines", json_string("2048")); }

static const struct rdb_damage damage[] = {
    {"l2_partitions.verdict", bad_verdict}, {"l2_partitions.verdict", no_map},
    {"l2_partitions.sm_partition", sm_two}, {"l2_partitions.home.mask_bits", bit_high},
    {"l2_partitions.reason", no_reason},    {"l2_partitions.lines", lines_text},
};

static void test_malformed_refused(void **state)
{
    rdb_memory_damages_refused(*state, "l2_partitions", TWO, damage, sizeof damage / sizeof damage[0]);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, rdb_setup, rdb_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {T(test_two_partitions_round_trip), T(test_undetermined_and_errors),
                                       T(test_malformed_refused)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
