/*
 * Unit tests of the memory probe's L1 set mapping in the store
 * (db/results_memory_l1.c): the "l1_sets" member saved with a memory
 * result and read back in the document's shape — determined, not
 * determined, failed (both error forms), absent — and malformed members
 * refused with the field's path and nothing written.
 *
 * DESIGN
 * The memory document is the smallest the memory walk accepts (every
 * figure an error); the l1_sets members are hand-written in the shape of
 * probes/l1_sets*.c's output. That the search's own documents pass the
 * same check is tests/unit/test_l1_sets.c's business.
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
#include "probes/l1_sets.h"
#include "tests/unit/support/resultdb.h"

#define UUID RDB_MEMORY_UUID

/* As the search writes a determined result (timings abridged). */
static const char DETERMINED[] =
    "{\"status\":\"determined\",\"reason\":null,\"line_bytes\":128,\"fill_bytes\":32,"
    "\"sets\":4,\"ways\":496,\"capacity_bytes\":253952,\"collision_stride_bytes\":512,"
    "\"set_index\":{\"function\":\"xor\",\"masks\":[2688,5376],\"bits\":[[7,9,11],[8,10,12]],"
    " \"option\":\"mask:0xa80,0x1500\",\"text\":\"xor\"},"
    "\"reference\":{\"lines\":32},\"bits\":[{\"bit\":3,\"role\":\"offset\"}],"
    "\"chases\":612,\"carveout_percent\":0,\"wall_s\":2.5}";

static const char UNDETERMINED[] =
    "{\"status\":\"not determined\",\"reason\":\"no floor of one set\",\"line_bytes\":null,"
    "\"fill_bytes\":32,\"sets\":null,\"ways\":null,\"capacity_bytes\":null,"
    "\"collision_stride_bytes\":null,\"set_index\":null,\"chases\":230,"
    "\"carveout_percent\":0}";

static char err[512];

/* The memory document with l1 (JSON text, a bare string as it is; NULL:
 * none) as its l1_sets. */
static json_t *memory_with(const char *m)
{
    return rdb_memory_with("l1_sets", m);
}

/* Saves doc and reads back its l1_sets (a new reference). */
static json_t *round_trip(struct rdb *f, json_t *doc)
{
    return rdb_memory_round_trip(f, doc, "l1_sets");
}

static int64_t rows(struct rdb *f, const char *table)
{
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
    return query_int(f->t->path, sql);
}

static void test_determined_round_trip(void **state)
{
    struct rdb *f = *state;
    json_t *want = rdb_parse(DETERMINED), *l1 = round_trip(f, memory_with(DETERMINED));
    static const char *const sizes[] = {"line_bytes", "fill_bytes", "sets", "ways",
                                        "capacity_bytes", "collision_stride_bytes",
                                        "carveout_percent"};
    rdb_check_text(json_object_get(want, "status"), json_object_get(l1, "status"), "status");
    assert_true(json_is_null(json_object_get(l1, "reason")));
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        rdb_check_number(json_object_get(want, sizes[i]), json_object_get(l1, sizes[i]), sizes[i]);
    const json_t *wsi = json_object_get(want, "set_index"), *gsi = json_object_get(l1, "set_index");
    rdb_check_text(json_object_get(wsi, "function"), json_object_get(gsi, "function"), "function");
    rdb_check_same(json_object_get(wsi, "masks"), json_object_get(gsi, "masks"), "masks");
    /* what the cache model reads from it */
    uint64_t masks[8];
    size_t n;
    uint32_t line;
    assert_int_equal(l1s_masks_from_json(l1, masks, 8, &n, &line, err, sizeof err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(masks[0], 0xa80);
    assert_int_equal(masks[1], 0x1500);
    assert_int_equal(line, 128);
    assert_int_equal(rows(f, "memory_l1_sets"), 1);
    assert_int_equal(rows(f, "memory_l1_set_masks"), 2);
    json_decref(want);
    json_decref(l1);
}

static void test_undetermined_round_trip(void **state)
{
    struct rdb *f = *state;
    json_t *l1 = round_trip(f, memory_with(UNDETERMINED));
    assert_string_equal(json_string_value(json_object_get(l1, "status")), "not determined");
    assert_string_equal(json_string_value(json_object_get(l1, "reason")), "no floor of one set");
    assert_int_equal(json_integer_value(json_object_get(l1, "fill_bytes")), 32);
    assert_true(json_is_null(json_object_get(l1, "sets")));
    assert_true(json_is_null(json_object_get(l1, "set_index")));
    assert_int_equal(rows(f, "memory_l1_set_masks"), 0);
    json_decref(l1);
}

static void test_error_forms_round_trip(void **state)
{
    struct rdb *f = *state;
    static const char *const forms[] = {"{\"error\":\"cuMemAlloc(region): out of memory\"}",
                                        "cuMemAlloc(region): out of memory"};
    for (size_t i = 0; i < 2; i++) {
        json_t *l1 = round_trip(f, memory_with(forms[i]));
        assert_string_equal(json_string_value(json_object_get(l1, "error")),
                            "cuMemAlloc(region): out of memory");
        assert_null(json_object_get(l1, "status"));
        json_decref(l1);
    }
}

static void test_absent_reads_null(void **state)
{
    struct rdb *f = *state;
    json_t *doc = memory_with(NULL);
    if (results_memory_check(doc, err, sizeof err) != 0)
        fail_msg("check: %s", err);
    int64_t id = rdb_saved_job(f->s, "memory", doc, results_memory_save);
    json_t *got = rdb_read(f->s, UUID, "memory", id);
    assert_true(json_is_null(json_object_get(got, "l1_sets")));
    assert_int_equal(rows(f, "memory_l1_sets"), 0);
    json_decref(got);
    json_decref(doc);
}

/* ---- malformed -------------------------------------------------------------------- */

static json_t *l1_of(json_t *d) { return json_object_get(d, "l1_sets"); }
static json_t *si_of(json_t *d) { return json_object_get(l1_of(d), "set_index"); }

static void bad_status(json_t *d) { json_object_set_new(l1_of(d), "status", json_string("maybe")); }
static void no_status(json_t *d) { json_object_del(l1_of(d), "status"); }
static void no_masks(json_t *d) { json_object_del(si_of(d), "masks"); }
static void masks_for_8_sets(json_t *d) { json_object_set_new(l1_of(d), "sets", json_integer(8)); }
static void zero_mask(json_t *d) { json_array_set_new(json_object_get(si_of(d), "masks"), 1, json_integer(0)); }
static void bad_function(json_t *d) { json_object_set_new(si_of(d), "function", json_string("hash")); }
static void no_ways(json_t *d) { json_object_set_new(l1_of(d), "ways", json_null()); }
static void ways_text(json_t *d) { json_object_set_new(l1_of(d), "ways", json_string("496")); }
static void l1_number(json_t *d) { json_object_set_new(d, "l1_sets", json_integer(4)); }
static void undetermined_no_reason(json_t *d)
{
    json_object_set_new(l1_of(d), "status", json_string("not determined"));
    json_object_set_new(l1_of(d), "reason", json_null());
}

static const struct rdb_damage damage[] = {
    {"l1_sets.status", bad_status},
    {"l1_sets.status", no_status},
    {"l1_sets.set_index.masks", no_masks},
    {"l1_sets.set_index.masks", masks_for_8_sets},
    {"l1_sets.set_index.masks[1]", zero_mask},
    {"l1_sets.set_index.function", bad_function},
    {"l1_sets.status", no_ways},
    {"l1_sets.ways", ways_text},
    {"l1_sets", l1_number},
    {"l1_sets.reason", undetermined_no_reason},
};

static void test_malformed_refused(void **state)
{
    rdb_memory_damages_refused(*state, "l1_sets", DETERMINED, damage, sizeof damage / sizeof damage[0]);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, rdb_setup, rdb_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_determined_round_trip),
        T(test_undetermined_round_trip),
        T(test_error_forms_round_trip),
        T(test_absent_reads_null),
        T(test_malformed_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
