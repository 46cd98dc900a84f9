/*
 * Unit tests of result bundles (server/bundles/) on the shipped reference
 * bundle of the H200 (data/reference/h200.json, real measurements) and a
 * real store: its digest is what bundle_digest computes; importing it adds
 * the device and both results, a second time nothing; store_remove_imported
 * takes an import back (results, derived rows, device, host), leaving
 * another host's result and moving its device there; a bundle built from
 * that store carries the results' origin and goes back in adding nothing;
 * a bundle whose second result its kind refuses (digest made valid again)
 * names that member and writes nothing, not even the first result; an
 * unknown kind, a bad finish time, a missing host, a wrong version or a
 * wrong digest are refused naming the member, and so are a deadline past a
 * week, a UUID, host or name that would read differently in a URL, header
 * or log, a capability that is none, a result measured on another device,
 * and a device listed twice; store_import's contract
 * (every string set) is asserted. A memory result's distributed shared
 * memory (probes/dsmem.h) goes in with the bundle and out again.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probes/dsmem.h"
#include "server/bundles/bundle.h"
#include "tests/unit/support/death.h"
#include "tests/unit/support/resultdb.h"
#include "util/rfc3339.h"

#define REFERENCE "data/reference/h200.json"

static int64_t count(const struct rdb *f, const char *sql)
{
    return query_int(f->t->path, sql);
}

/* Imports b; asserts the answer and, on success, the counts. */
static void import_ok(const struct rdb *f, const json_t *b, size_t added, size_t held)
{
    struct bundle_counts c;
    char err[1024], field[200];
    if (bundle_import(f->s, b, &c, err, sizeof err, field, sizeof field) != 0)
        fail_msg("import refused at %s: %s", field, err);
    assert_int_equal(c.results_added, added);
    assert_int_equal(c.results_held, held);
}

static void test_import_twice(void **state)
{
    struct rdb *f = *state;
    json_t *b = rdb_load(REFERENCE);
    char hex[65];
    assert_int_equal(bundle_digest(b, hex), 0);
    assert_string_equal(hex, json_string_value(json_object_get(b, "sha256")));
    import_ok(f, b, 2, 0);
    assert_int_equal(count(f, "SELECT count(*) FROM devices WHERE present = 0"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM probe_runs"), 5);
    assert_int_equal(count(f, "SELECT count(*) FROM model_validation_runs"), 1);
    import_ok(f, b, 0, 2);
    assert_int_equal(count(f, "SELECT count(*) FROM jobs"), 2);
    json_decref(b);
}

/* A node's results sent first as their fleet figures alone, then whole:
 * the whole results are new, not held (they were skipped as held, and the
 * central never had the device's full results). */
static void test_figures_then_whole(void **state)
{
    struct rdb *f = *state;
    json_t *b = rdb_load(REFERENCE), *figures = json_deep_copy(b);
    char err[256];
    assert_int_equal(bundle_to_figures(figures, err, sizeof err), 2);
    import_ok(f, figures, 2, 0);
    import_ok(f, b, 2, 0);
    assert_int_equal(count(f, "SELECT count(*) FROM probe_runs"), 5);
    import_ok(f, b, 0, 2);
    import_ok(f, figures, 0, 2);
    json_decref(figures);
    json_decref(b);
}

/* b's first result as job `id` of host `host`, finished at `finished`,
 * alone in a signed bundle of that host. */
static json_t *moved(const json_t *b, const char *host, int id, const char *started, const char *finished)
{
    json_t *e = json_deep_copy(b), *dev = json_array_get(json_object_get(e, "devices"), 0);
    json_t *results = json_object_get(dev, "results"), *job;
    while (json_array_size(results) > 1)
        json_array_remove(results, 1);
    job = json_object_get(json_array_get(results, 0), "job");
    json_object_set_new(dev, "host", json_string(host));
    json_object_set_new(job, "host", json_string(host));
    json_object_set_new(job, "id", json_integer(id));
    json_object_set_new(job, "created_at", json_string(started));
    json_object_set_new(job, "started_at", json_string(started));
    json_object_set_new(job, "finished_at", json_string(finished));
    char hex[65];
    assert_int_equal(bundle_digest(e, hex), 0);
    json_object_set_new(e, "sha256", json_string(hex));
    return e;
}

/* An imported GPU is where its newest measurement was made: moved to
 * another node, it is listed there (it kept its first host), and an older
 * result arriving late does not move it back. */
static void test_device_follows_its_newest_host(void **state)
{
    struct rdb *f = *state;
    json_t *b = rdb_load(REFERENCE);
    import_ok(f, b, 2, 0);
    static const char host_sql[] = "SELECT h.hostname = '%s' FROM devices d JOIN hosts h ON h.id = d.host_id";
    char sql[200];
    json_t *later = moved(b, "node9", 77, "2026-11-24T11:19:50.000Z", "2026-11-24T11:19:59.000Z");
    import_ok(f, later, 1, 0);
    snprintf(sql, sizeof sql, host_sql, "node9");
    assert_int_equal(count(f, sql), 1);
    json_t *older = moved(b, "node2", 78, "2026-11-24T09:19:50.000Z", "2026-11-24T09:19:59.000Z");
    import_ok(f, older, 1, 0);
    assert_int_equal(count(f, sql), 1);
    json_decref(older);
    json_decref(later);
    json_decref(b);
}

/* A result stamped ahead of the importing store's clock (a node whose
 * clock runs fast; the import allows a day) counts as measured when it
 * arrived: a correctly stamped one measured after that is the newest. */
static void test_future_stamp_not_newest_for_ever(void **state)
{
    struct rdb *f = *state;
    json_t *b = rdb_load(REFERENCE);
    char ahead[RFC3339_LEN], ahead_start[RFC3339_LEN], at[RFC3339_LEN], at_start[RFC3339_LEN];
    int64_t now = store_now_ms();
    rfc3339_format(now + 20 * 3600 * 1000ll, ahead);
    rfc3339_format(now + 20 * 3600 * 1000ll - 5000, ahead_start);
    json_t *skewed = moved(b, "fast-clock", 81, ahead_start, ahead);
    import_ok(f, skewed, 1, 0);
    usleep(20000);
    rfc3339_format(store_now_ms(), at);
    rfc3339_format(store_now_ms() - 5000, at_start);
    json_t *later = moved(b, "good-clock", 82, at_start, at);
    import_ok(f, later, 1, 0);
    /* the newest latency run of the device is the correctly stamped one */
    assert_int_equal(count(f, "SELECT j.origin_job FROM probe_runs r JOIN jobs j ON j.id = r.job_id"
                              " WHERE r.probe = 'latency' ORDER BY r.measured_ms DESC LIMIT 1"), 82);
    json_decref(later);
    json_decref(skewed);
    json_decref(b);
}

/* store_remove_imported takes back what imports from one host brought: its
 * results with every row derived from them, then the device and the host
 * once nothing holds them; a result of another host stays, and its device
 * moves there. */
static void test_remove_imported(void **state)
{
    struct rdb *f = *state;
    json_t *b = rdb_load(REFERENCE);
    const char *uuid = json_string_value(json_object_get(json_array_get(json_object_get(b, "devices"), 0), "uuid"));
    size_t devices = 0, results = 0;
    char err[512];
    import_ok(f, b, 2, 0);
    /* another host's name takes nothing */
    assert_int_equal(store_remove_imported(f->s, "node2", uuid, &devices, &results, err, sizeof err), 0);
    assert_int_equal(devices + results, 0);
    assert_int_equal(store_remove_imported(f->s, "reference", uuid, &devices, &results, err, sizeof err), 0);
    assert_int_equal(devices, 1);
    assert_int_equal(results, 2);
    static const char *const empty[] = {"jobs", "devices", "hosts", "probe_runs", "latency_results",
                                        "memory_curve", "model_validation_runs", "device_figures",
                                        "banks_runs", "job_events"};
    for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++) {
        char sql[100];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", empty[i]);
        if (count(f, sql) != 0)
            fail_msg("%s still holds rows", empty[i]);
    }
    /* again: nothing left to take */
    devices = results = 0;
    assert_int_equal(store_remove_imported(f->s, "reference", uuid, &devices, &results, err, sizeof err), 0);
    assert_int_equal(devices + results, 0);
    /* the GPU measured on node2 too (earlier: it stays listed as reference's) */
    import_ok(f, b, 2, 0);
    json_t *older = moved(b, "node2", 78, "2026-11-24T09:19:50.000Z", "2026-11-24T09:19:59.000Z");
    import_ok(f, older, 1, 0);
    assert_int_equal(count(f, "SELECT count(*) FROM devices d JOIN hosts h ON h.id = d.host_id"
                              " WHERE h.hostname = 'reference'"), 1);
    assert_int_equal(store_remove_imported(f->s, "reference", uuid, &devices, &results, err, sizeof err), 0);
    assert_int_equal(devices, 0);
    assert_int_equal(results, 2);
    assert_int_equal(count(f, "SELECT count(*) FROM jobs WHERE origin_host = 'node2'"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM devices d JOIN hosts h ON h.id = d.host_id"
                              " WHERE h.hostname = 'node2'"), 1);
    assert_int_equal(count(f, "SELECT count(*) FROM hosts WHERE hostname = 'reference'"), 0);
    json_decref(older);
    json_decref(b);
}

static void test_round_trip(void **state)
{
    struct rdb *f = *state;
    json_t *b = rdb_load(REFERENCE);
    char err[512], hex[65];
    int unknown;
    import_ok(f, b, 2, 0);
    json_t *out = bundle_build(f->s, NULL, 0, NULL, &unknown, err, sizeof err);
    if (!out)
        fail_msg("build: %s", err);
    assert_int_equal(bundle_digest(out, hex), 0);
    assert_string_equal(hex, json_string_value(json_object_get(out, "sha256")));
    json_t *res = json_object_get(json_array_get(json_object_get(out, "devices"), 0), "results");
    assert_int_equal(json_array_size(res), 2);
    /* each result keeps where it was measured, and as which job */
    json_t *was = json_object_get(json_array_get(json_object_get(json_array_get(
                                      json_object_get(b, "devices"), 0), "results"), 1), "job");
    json_t *is = json_object_get(json_array_get(res, 1), "job");
    assert_true(json_equal(json_object_get(was, "host"), json_object_get(is, "host")));
    assert_true(json_equal(json_object_get(was, "id"), json_object_get(is, "id")));
    assert_true(json_equal(json_object_get(was, "finished_at"), json_object_get(is, "finished_at")));
    import_ok(f, out, 0, 2);
    const char *none[] = {"GPU-nowhere"};
    assert_null(bundle_build(f->s, none, 1, NULL, &unknown, err, sizeof err));
    assert_int_equal(unknown, 1);
    json_decref(out);
    json_decref(b);
}

static json_t *result_at(json_t *b, size_t i);

/* The reference suite's memory result with a distributed_shared member (two
 * sizes made by dsm_analyze) is stored by the import and exported again. */
static void test_distributed_shared_carried(void **state)
{
    struct rdb *f = *state;
    json_t *b = rdb_load(REFERENCE);
    static uint64_t lat[DSM_TARGETS], bw[DSM_DISTS * 4];
    for (int t = 0; t < DSM_TARGETS; t++)
        lat[t] = (uint64_t)(t ? 200 : 30) * DSM_CHASE_LOADS;
    for (int i = 0; i < DSM_DISTS * 4; i++)
        bw[i] = 100000;
    json_t *sizes = json_array();
    for (unsigned n = 2; n <= 4; n += 2)
        json_array_append_new(sizes, dsm_analyze(&(struct dsm_raw){.asked = n, .driver_width = (int)n,
                                                                   .max_clusters = -1, .launched = 1,
                                                                   .repeats = 1, .ranks_seen = n,
                                                                   .lat = lat, .bw = bw},
                                                 1980.0));
    json_t *memory = json_object_get(json_object_get(result_at(b, 0), "result"), "memory");
    assert_non_null(memory);
    json_object_set_new(memory, "distributed_shared",
                        json_pack("{s:f,s:i,s:o}", "clock_mhz", 1980.0, "chase_loads", (int)DSM_CHASE_LOADS,
                                  "sizes", sizes));
    char hex[65], err[512];
    int unknown;
    assert_int_equal(bundle_digest(b, hex), 0);
    json_object_set_new(b, "sha256", json_string(hex));
    import_ok(f, b, 2, 0);
    assert_int_equal(count(f, "SELECT count(*) FROM memory_dsmem_sizes WHERE launched = 1"), 2);
    json_t *out = bundle_build(f->s, NULL, 0, NULL, &unknown, err, sizeof err);
    if (!out)
        fail_msg("build: %s", err);
    json_t *back = json_object_get(json_object_get(json_object_get(result_at(out, 0), "result"), "memory"),
                                   "distributed_shared");
    assert_true(json_equal(json_object_get(memory, "distributed_shared"), back));
    json_decref(out);
    json_decref(b);
}

/* b changed by edit (a JSON path's member set or deleted), its digest made
 * right again unless keep_digest; must be refused naming field, writing
 * nothing. */
static void refused(const struct rdb *f, json_t *b, const char *field_start, int keep_digest)
{
    struct bundle_counts c;
    char err[1024], field[200], hex[65];
    if (!keep_digest) {
        assert_int_equal(bundle_digest(b, hex), 0);
        json_object_set_new(b, "sha256", json_string(hex));
    }
    assert_int_equal(bundle_import(f->s, b, &c, err, sizeof err, field, sizeof field), -1);
    if (strncmp(field, field_start, strlen(field_start)) != 0)
        fail_msg("refused at '%s' (%s), expected '%s'", field, err, field_start);
    assert_int_equal(count(f, "SELECT count(*) FROM jobs"), 0);
    assert_int_equal(count(f, "SELECT count(*) FROM devices"), 0);
}

static json_t *result_at(json_t *b, size_t i)
{
    return json_array_get(json_object_get(json_array_get(json_object_get(b, "devices"), 0),
                                          "results"), i);
}

static void test_refusals(void **state)
{
    struct rdb *f = *state;
    json_t *b = rdb_load(REFERENCE);

    json_t *e = json_deep_copy(b); /* the model validation's kernels gone */
    json_object_del(json_object_get(result_at(e, 1), "result"), "kernels");
    refused(f, e, "devices[0].results[1].result", 0);
    json_decref(e);

    e = json_deep_copy(b);
    json_object_set_new(result_at(e, 0), "kind", json_string("nosuch"));
    refused(f, e, "devices[0].results[0].kind", 0);
    json_decref(e);

    e = json_deep_copy(b);
    json_object_set_new(json_object_get(result_at(e, 0), "job"), "finished_at",
                        json_string("yesterday"));
    refused(f, e, "devices[0].results[0].job.finished_at", 0);
    json_decref(e);

    e = json_deep_copy(b);
    json_object_del(json_array_get(json_object_get(e, "devices"), 0), "host");
    refused(f, e, "devices[0].host", 0);
    json_decref(e);

    e = json_deep_copy(b);
    json_object_set_new(e, "version", json_integer(2));
    refused(f, e, "version", 0);
    json_decref(e);

    /* what no gpuprobe writes: a deadline past a week (2^31 once wrapped into
     * an int and stopped the daemon on an assertion), texts that would leave
     * the bundle for URL paths, headers and file names, a capability that is
     * none, a result measured on another device, a device listed twice */
    static const long long timeouts[] = {0, 7 * 86400 + 1, 2147483648LL, 4294967301LL};
    for (size_t i = 0; i < sizeof timeouts / sizeof timeouts[0]; i++) {
        e = json_deep_copy(b);
        json_object_set_new(json_object_get(result_at(e, 0), "job"), "timeout_s", json_integer(timeouts[i]));
        refused(f, e, "devices[0].results[0].job.timeout_s", 0);
        json_decref(e);
    }
    static const char *const members[][2] = {
        {"uuid", "GPU-\"; filename=evil.sh; x=\""}, {"uuid", "GPU-a/b/../c"}, {"uuid", "GPU-x\r\nSet-Cookie: a"},
        {"uuid", ""}, {"host", "node\n1"}, {"name", "H200\x1b[31m"}, {"compute_capability", "banana"},
        {"compute_capability", "9.-0"}, {"compute_capability", " 9.0"}};
    for (size_t i = 0; i < sizeof members / sizeof members[0]; i++) {
        e = json_deep_copy(b);
        json_object_set_new(json_array_get(json_object_get(e, "devices"), 0), members[i][0],
                            json_string(members[i][1]));
        char want[64];
        snprintf(want, sizeof want, "devices[0].%s", members[i][0]);
        refused(f, e, want, 0);
        json_decref(e);
    }
    static const char *const times[][3] = {{"finished_at", "9999-01-01T00:00:00.000Z", "finished_at"},
                                           {"finished_at", "1969-12-31T00:00:00.000Z", "finished_at"},
                                           {"started_at", "2099-01-01T00:00:00.000Z", "started_at"},
                                           {"created_at", "2099-01-01T00:00:00.000Z", "created_at"}};
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
        e = json_deep_copy(b);
        json_object_set_new(json_object_get(result_at(e, 0), "job"), times[i][0], json_string(times[i][1]));
        char want[80];
        snprintf(want, sizeof want, "devices[0].results[0].job.%s", times[i][2]);
        refused(f, e, want, 0);
        json_decref(e);
    }
    e = json_deep_copy(b);
    json_object_set_new(json_object_get(result_at(e, 0), "job"), "host", json_string("a\tb"));
    refused(f, e, "devices[0].results[0].job.host", 0);
    json_decref(e);
    e = json_deep_copy(b); /* the documents say the H200's UUID: the suite's parts first */
    json_object_set_new(json_array_get(json_object_get(e, "devices"), 0), "uuid", json_string("GPU-other"));
    refused(f, e, "devices[0].results[0].result.latency.device.uuid", 0);
    json_array_remove(json_object_get(json_array_get(json_object_get(e, "devices"), 0), "results"), 0);
    refused(f, e, "devices[0].results[0].result.device.uuid", 0);
    json_decref(e);
    e = json_deep_copy(b); /* one part of the suite measured on another GPU (a 503 before) */
    json_t *mem = json_object_get(json_object_get(result_at(e, 0), "result"), "memory");
    json_object_set_new(json_object_get(mem, "device"), "uuid", json_string("GPU-evil-0002"));
    refused(f, e, "devices[0].results[0].result.memory.device.uuid", 0);
    json_decref(e);
    e = json_deep_copy(b);
    json_object_set_new(json_array_get(json_object_get(e, "devices"), 0), "compute_capability",
                        json_string("8.9"));
    refused(f, e, "devices[0].results[0].result.latency.device.compute_capability", 0);
    json_decref(e);
    e = json_deep_copy(b);
    json_t *devs = json_object_get(e, "devices");
    json_array_append_new(devs, json_deep_copy(json_array_get(devs, 0)));
    refused(f, e, "devices[1].uuid", 0);
    json_decref(e);

    e = json_deep_copy(b); /* content changed, digest not */
    json_object_set_new(json_array_get(json_object_get(e, "devices"), 0), "name",
                        json_string("NVIDIA H201"));
    refused(f, e, "sha256", 1);
    json_decref(e);
    json_decref(b);
}

static void import_without_kind(void *arg)
{
    struct rdb *f = arg;
    char err[256];
    store *s = NULL;
    struct store_import_counts c;
    struct store_import_result r = {.params_json = "{}", .result_json = "{}",
                                    .origin_host = "h", .origin_job = 1, .timeout_s = 1};
    struct store_import_device d = {"h", "GPU-x", "n", "9.0", "{}", &r, 1};
    if (store_open(&s, f->t->path, err, sizeof err) != 0)
        _exit(3);
    store_import(s, &d, 1, &c, err, sizeof err);
}

static void test_contract(void **state)
{
    assert_true(dies_by_assert(import_without_kind, *state));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_import_twice, rdb_setup, rdb_teardown),
        cmocka_unit_test_setup_teardown(test_figures_then_whole, rdb_setup, rdb_teardown),
        cmocka_unit_test_setup_teardown(test_device_follows_its_newest_host, rdb_setup, rdb_teardown),
        cmocka_unit_test_setup_teardown(test_future_stamp_not_newest_for_ever, rdb_setup, rdb_teardown),
        cmocka_unit_test_setup_teardown(test_round_trip, rdb_setup, rdb_teardown),
        cmocka_unit_test_setup_teardown(test_remove_imported, rdb_setup, rdb_teardown),
        cmocka_unit_test_setup_teardown(test_distributed_shared_carried, rdb_setup, rdb_teardown),
        cmocka_unit_test_setup_teardown(test_refusals, rdb_setup, rdb_teardown),
        cmocka_unit_test_setup_teardown(test_contract, rdb_setup, rdb_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
