/*
 * Unit tests of the memory probe's asynchronous copies in the store
 * (db/results_memory_async.c): the "async_copy" member saved with a memory
 * result and read back in the document's shape — points with figures and
 * points with errors, the probe's own failure, a document without it — and
 * malformed members refused with the field's path; a result bundle built
 * from the store carries the member into a second store unchanged.
 *
 * DESIGN
 * The memory document is the smallest the memory walk accepts (every
 * figure an error), as in test_results_memory_l2.c; the member is written
 * here in the shape acp_probe gives it (probes/async_copy.h), its numbers
 * made up (the probe has not run on a GPU yet).
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
#include "server/bundles/bundle.h"
#include "tests/unit/support/resultdb.h"

#define UUID RDB_MEMORY_UUID

static const char AC[] =
    "{\"latency\":["
    "{\"method\":\"ld\",\"bytes\":16,\"bytes_per_copy\":512,\"level\":\"l2\","
    "\"cycles\":{\"median\":610.0,\"min\":600.0,\"max\":900.0,\"runs\":[600,610,900]}},"
    "{\"method\":\"bulk\",\"bytes\":1024,\"bytes_per_copy\":1024,\"level\":\"l2\","
    "\"cycles\":{\"median\":700.5,\"min\":690.0,\"max\":720.0,\"runs\":[690,700.5,720]}},"
    "{\"method\":\"tensor\",\"bytes\":128,\"level\":\"l2\",\"error\":\"the driver has no cuTensorMapEncodeTiled\"}],"
    "\"bandwidth\":["
    "{\"method\":\"ld\",\"bytes\":16,\"level\":\"l2\",\"bytes_per_clk_per_sm\":40.5,\"gb_s\":9000.25,"
    "\"slowest_cycles\":123456,\"blocks\":132,\"total_bytes\":104857600},"
    "{\"method\":\"bulk\",\"bytes\":16384,\"level\":\"dram\",\"bytes_per_clk_per_sm\":12.0,\"gb_s\":null,"
    "\"slowest_cycles\":999,\"blocks\":132,\"total_bytes\":209715200},"
    "{\"method\":\"ca\",\"bytes\":4,\"level\":\"dram\",\"error\":\"the compiled kernel is not what the probe times\"}],"
    "\"summary\":{\"l2\":{\"ld\":{\"best\":40.5,\"at_bytes\":16,\"vs_ld\":1.0}}},"
    "\"tensor_map\":\"ok\",\"chunk_bytes\":16384,\"dram_buffer_bytes\":209715200,"
    "\"l2_buffer_bytes\":13107200,\"l2_passes\":8,\"sass\":{\"ld16_lat\":{\"verified\":true}},\"wall_s\":0.75}";

static json_t *round_trip(struct rdb *f, json_t *doc)
{
    return rdb_memory_round_trip(f, doc, "async_copy");
}

static void test_round_trip(void **state)
{
    struct rdb *f = *state;
    json_t *want = rdb_parse(AC), *got = round_trip(f, rdb_memory_with("async_copy", AC));
    /* everything comes back as it was written: null gb_s as absent */
    json_object_del(json_array_get(json_object_get(want, "bandwidth"), 1), "gb_s");
    if (!json_equal(want, got)) {
        char *a = json_dumps(want, JSON_SORT_KEYS), *b = json_dumps(got, JSON_SORT_KEYS);
        fail_msg("read back differs:\n%s\n%s", a, b);
    }
    json_decref(want);
    json_decref(got);
}

static void test_errors_and_absent(void **state)
{
    struct rdb *f = *state;
    static const char *const forms[] = {"{\"error\":\"cp.async needs compute capability 8.0\"}",
                                        "cp.async needs compute capability 8.0"};
    for (size_t i = 0; i < 2; i++) {
        json_t *ac = round_trip(f, rdb_memory_with("async_copy", forms[i]));
        assert_string_equal(json_string_value(json_object_get(ac, "error")),
                            "cp.async needs compute capability 8.0");
        assert_null(json_object_get(ac, "latency"));
        json_decref(ac);
    }
    json_t *doc = rdb_memory_with("async_copy", NULL);
    int64_t id = rdb_saved_job(f->s, "memory", doc, results_memory_save);
    json_t *got = rdb_read(f->s, UUID, "memory", id);
    assert_true(json_is_null(json_object_get(got, "async_copy")));
    json_decref(got);
    json_decref(doc);
}

static json_t *ac_of(json_t *d) { return json_object_get(d, "async_copy"); }
static json_t *lat0(json_t *d) { return json_array_get(json_object_get(ac_of(d), "latency"), 0); }
static json_t *bw0(json_t *d) { return json_array_get(json_object_get(ac_of(d), "bandwidth"), 0); }
static void bad_method(json_t *d) { json_object_set_new(lat0(d), "method", json_string("memcpy")); }
static void bad_level(json_t *d) { json_object_set_new(bw0(d), "level", json_string("l3")); }
static void no_median(json_t *d) { json_object_del(json_object_get(lat0(d), "cycles"), "median"); }
static void no_rate(json_t *d) { json_object_del(bw0(d), "bytes_per_clk_per_sm"); }
static void twice(json_t *d)
{
    json_array_append(json_object_get(ac_of(d), "bandwidth"), bw0(d));
}
static void no_map_state(json_t *d) { json_object_del(ac_of(d), "tensor_map"); }
static void bytes_zero(json_t *d) { json_object_set_new(lat0(d), "bytes", json_integer(0)); }
static void no_points(json_t *d) { json_object_del(ac_of(d), "latency"); }

static const struct rdb_damage damage[] = {
    {"async_copy.latency[0].method", bad_method},  {"async_copy.bandwidth[0].level", bad_level},
    {"async_copy.latency[0].cycles", no_median},   {"async_copy.bandwidth[0].bytes_per_clk_per_sm", no_rate},
    {"async_copy.bandwidth[3].bytes", twice},      {"async_copy.tensor_map", no_map_state},
    {"async_copy.latency[0].bytes", bytes_zero},   {"async_copy.latency", no_points},
};

static void test_malformed_refused(void **state)
{
    rdb_memory_damages_refused(*state, "async_copy", AC, damage, sizeof damage / sizeof damage[0]);
}

static void test_bundle_carries_it(void **state)
{
    struct rdb *f = *state;
    char err[512], field[200];
    int unknown;
    struct bundle_counts c;
    json_t *doc = rdb_memory_with("async_copy", AC);
    rdb_add_device(f->s, doc, "NVIDIA H100 80GB HBM3", "9.0");
    json_decref(rdb_memory_round_trip(f, json_incref(doc), "async_copy"));
    json_t *b = bundle_build(f->s, NULL, 0, NULL, &unknown, err, sizeof err);
    if (!b)
        fail_msg("build: %s", err);
    void *other = NULL;
    assert_int_equal(rdb_setup(&other), 0);
    struct rdb *g = other;
    if (bundle_import(g->s, b, &c, err, sizeof err, field, sizeof field) != 0)
        fail_msg("import refused at %s: %s", field, err);
    if (c.results_added != 1) {
        char *t = json_dumps(b, JSON_COMPACT);
        fail_msg("added %zu held %zu: %.600s", c.results_added, c.results_held, t);
    }
    int64_t job = query_int(g->t->path, "SELECT job_id FROM memory_async_copy");
    assert_true(job > 0);
    assert_int_equal(query_int(g->t->path, "SELECT count(*) FROM memory_async_copy_points"), 6);
    json_t *got = rdb_read(g->s, UUID, "memory", job);
    json_t *want = rdb_read(f->s, UUID, "memory", query_int(f->t->path, "SELECT job_id FROM memory_async_copy"));
    assert_true(json_equal(json_object_get(got, "async_copy"), json_object_get(want, "async_copy")));
    json_decref(got);
    json_decref(want);
    json_decref(b);
    json_decref(doc);
    rdb_teardown(&other);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, rdb_setup, rdb_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {T(test_round_trip), T(test_errors_and_absent),
                                       T(test_malformed_refused), T(test_bundle_carries_it)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
