/*
 * Unit tests of the outbox (db/outbox.h) and what queues into it
 * (push_enqueue through the store's result hook, server/store_open.c), on
 * the reference H200's real suite result: nothing is queued while the store
 * names no upstream; with one, a GPU result is queued in the transaction
 * that saves it, a refused save queues nothing, and neither a CPU job nor
 * an imported result is queued; a row's attempts, backoff time, refusal and
 * acknowledgement, and the summary GET /api/v1/upstream serves; the bundle
 * of one job carries that result alone with its host, and a store takes it
 * once however often it comes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "db/outbox.h"
#include "db/results.h"
#include "server/bundles/bundle.h"
#include "server/push/push.h"
#include "server/store_open.h"
#include "tests/unit/support/resultdb.h"

#define REFERENCE "data/reference/h200.json"
#define UPSTREAM "http://central.example:8080"

static int setup(void **state)
{
    char err[512];
    if (rdb_setup(state) != 0)
        return -1;
    struct rdb *f = *state;
    store_close(f->s);
    if (gpuprobe_store_open(&f->s, f->t->path, NULL, NULL, err, sizeof err) != 0) {
        print_error("%s\n", err);
        return -1;
    }
    return 0;
}

/* The reference bundle's suite document with its device's UUID in *uuid. */
static json_t *reference_suite(const char **uuid)
{
    json_t *b = rdb_load(REFERENCE);
    json_t *dev = json_array_get(json_object_get(b, "devices"), 0);
    json_t *suite = json_incref(
        json_object_get(json_array_get(json_object_get(dev, "results"), 0), "result"));
    static char keep[64];
    snprintf(keep, sizeof keep, "%s", json_string_value(json_object_get(dev, "uuid")));
    *uuid = keep;
    json_decref(b);
    return suite;
}

/* This host and the device, as discovery would record them. */
static void record_device(store *s, const char *uuid)
{
    int64_t host;
    char err[256];
    assert_int_equal(store_host_upsert(s, "node-7", "", &host, err, sizeof err), 0);
    assert_int_equal(store_device_upsert(s, host, uuid, "NVIDIA H200", "9.0", "{}", err,
                                         sizeof err),
                     0);
}

/* A suite job on the reference device that succeeded with its real result. */
static int64_t saved_suite(store *s)
{
    const char *uuid;
    char err[512];
    json_t *suite = reference_suite(&uuid);
    record_device(s, uuid);
    int64_t id = rdb_running_job(s, "suite", uuid);
    if (rdb_save(s, id, suite, results_suite_save, err, sizeof err) != 0)
        fail_msg("saving the suite: %s", err);
    json_decref(suite);
    return id;
}

static int held(store *s, int64_t id)
{
    char err[256];
    int rc = outbox_held(s, id, err, sizeof err);
    assert_true(rc >= 0);
    return rc;
}

static void set_upstream(store *s, const char *url)
{
    char err[256];
    assert_int_equal(outbox_set_upstream(s, url, err, sizeof err), 0);
}

static void nothing_queued_without_upstream(void **state)
{
    struct rdb *f = *state;
    int64_t id = saved_suite(f->s);
    assert_int_equal(held(f->s, id), 0);
}

static void queued_with_the_result(void **state)
{
    struct rdb *f = *state;
    char err[512];
    set_upstream(f->s, UPSTREAM);
    int64_t id = saved_suite(f->s);
    assert_int_equal(held(f->s, id), 1);
    struct outbox_summary m;
    assert_int_equal(outbox_summary_get(f->s, &m, err, sizeof err), 0);
    assert_string_equal(m.upstream, UPSTREAM);
    assert_int_equal(m.pending, 1);
    assert_int_equal(m.refused, 0);
    assert_int_equal(m.attempts, 0);
    assert_null(m.last_error);
    assert_int_equal(m.last_success_ms, 0);
    outbox_summary_free(&m);
    /* no upstream any more: later results stay here, the row held stays */
    set_upstream(f->s, NULL);
    int64_t later = saved_suite(f->s);
    assert_int_equal(held(f->s, later), 0);
    assert_int_equal(held(f->s, id), 1);
}

static void refused_save_queues_nothing(void **state)
{
    struct rdb *f = *state;
    const char *uuid;
    char err[512];
    set_upstream(f->s, UPSTREAM);
    json_t *suite = reference_suite(&uuid);
    record_device(f->s, uuid);
    json_object_set_new(json_object_get(suite, "latency"), "repeats", json_integer(0));
    int64_t id = rdb_running_job(f->s, "suite", uuid);
    assert_int_equal(rdb_save(f->s, id, suite, results_suite_save, err, sizeof err), -1);
    assert_int_equal(held(f->s, id), 0);
    json_decref(suite);
}

static void cpu_and_imported_results_stay(void **state)
{
    struct rdb *f = *state;
    struct bundle_counts c;
    char err[1024], field[200];
    set_upstream(f->s, UPSTREAM);
    int64_t cpu = rdb_running_job(f->s, "test", NULL);
    assert_int_equal(store_job_succeed(f->s, cpu, "{\"pid\":1}", NULL, err, sizeof err), 0);
    assert_int_equal(held(f->s, cpu), 0);
    json_t *b = rdb_load(REFERENCE);
    assert_int_equal(bundle_import(f->s, b, &c, err, sizeof err, field, sizeof field), 0);
    json_decref(b);
    assert_int_equal(c.results_added, 2);
    struct outbox_summary m;
    assert_int_equal(outbox_summary_get(f->s, &m, err, sizeof err), 0);
    assert_int_equal(m.pending + m.refused, 0);
    outbox_summary_free(&m);
}

static void due(store *s, int64_t now, size_t want)
{
    struct outbox_row *rows = NULL;
    size_t n = 0;
    char err[256];
    assert_int_equal(outbox_due(s, now, 10, &rows, &n, err, sizeof err), 0);
    assert_int_equal(n, want);
    outbox_rows_free(rows, n);
}

/* The listing shows the waiting rows before the refused ones (which are
 * never tried again and would push the others out of a short list), and
 * outbox_requeue_refused makes the refused ones waiting again. */
static void waiting_listed_first_and_requeued(void **state)
{
    struct rdb *f = *state;
    char err[512];
    set_upstream(f->s, UPSTREAM);
    int64_t a = saved_suite(f->s), b = saved_suite(f->s);
    int64_t now = store_now_ms();
    assert_int_equal(outbox_refuse(f->s, a, now, "HTTP 413 payload-too-large", err, sizeof err), 0);
    struct outbox_row *rows = NULL;
    size_t n = 0;
    assert_int_equal(outbox_list(f->s, 1, &rows, &n, err, sizeof err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(rows[0].job_id, b);
    outbox_rows_free(rows, n);
    due(f->s, now + 100000, 1);
    assert_int_equal(outbox_requeue_refused(f->s, now + 1, err, sizeof err), 1);
    assert_int_equal(outbox_requeue_refused(f->s, now + 2, err, sizeof err), 0);
    due(f->s, now + 1, 2);
    assert_int_equal(outbox_list(f->s, 10, &rows, &n, err, sizeof err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(rows[0].job_id, a); /* waiting again, its reason and attempts kept */
    assert_int_equal(rows[0].refused, 0);
    assert_int_equal(rows[0].attempts, 1);
    assert_string_equal(rows[0].last_error, "HTTP 413 payload-too-large");
    outbox_rows_free(rows, n);
}

static void retry_refuse_acknowledge(void **state)
{
    struct rdb *f = *state;
    char err[512];
    set_upstream(f->s, UPSTREAM);
    int64_t a = saved_suite(f->s), b = saved_suite(f->s);
    int64_t now = store_now_ms();
    due(f->s, now, 2);
    /* a fails twice: attempts counted, not due before its time */
    assert_int_equal(outbox_retry(f->s, a, now, now + 1000, "HTTP 503", err, sizeof err), 0);
    assert_int_equal(outbox_retry(f->s, a, now, now + 2000, "HTTP 401 unauthorized: no token",
                                  err, sizeof err),
                     0);
    due(f->s, now, 1);
    due(f->s, now + 2000, 2);
    /* b is refused: never due again, its reason kept */
    assert_int_equal(outbox_refuse(f->s, b, now + 5, "HTTP 400 invalid-bundle: sha256", err,
                                   sizeof err),
                     0);
    due(f->s, now + 100000, 1);
    struct outbox_row *rows = NULL;
    size_t n = 0;
    assert_int_equal(outbox_list(f->s, 10, &rows, &n, err, sizeof err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(rows[0].job_id, a);
    assert_int_equal(rows[0].attempts, 2);
    assert_int_equal(rows[0].refused, 0);
    assert_string_equal(rows[0].kind, "suite");
    assert_string_equal(rows[0].last_error, "HTTP 401 unauthorized: no token");
    assert_int_equal(rows[1].refused, 1);
    assert_int_equal(rows[1].attempts, 1);
    outbox_rows_free(rows, n);
    struct outbox_summary m;
    assert_int_equal(outbox_summary_get(f->s, &m, err, sizeof err), 0);
    assert_int_equal(m.pending, 1);
    assert_int_equal(m.refused, 1);
    assert_int_equal(m.attempts, 3);
    assert_int_equal(m.next_attempt_ms, now + 2000);
    assert_string_equal(m.last_error, "HTTP 400 invalid-bundle: sha256");
    assert_int_equal(m.last_error_ms, now + 5);
    outbox_summary_free(&m);
    /* a is acknowledged: it goes; a second acknowledgement finds nothing */
    assert_int_equal(outbox_ack(f->s, a, now + 9, err, sizeof err), 0);
    assert_int_equal(held(f->s, a), 0);
    assert_int_equal(outbox_ack(f->s, a, now + 10, err, sizeof err), 1);
    assert_int_equal(outbox_retry(f->s, a, now, now, "late", err, sizeof err), 1);
    assert_int_equal(outbox_summary_get(f->s, &m, err, sizeof err), 0);
    assert_int_equal(m.pending, 0);
    assert_int_equal(m.last_success_ms, now + 9);
    outbox_summary_free(&m);
    /* the CLI's drain makes every waiting row due at once, never a refused one */
    assert_int_equal(outbox_due_all(f->s, now, err, sizeof err), 0);
    due(f->s, now, 0);
}

static void bundle_of_one_job(void **state)
{
    struct rdb *f = *state;
    char err[1024], field[200];
    int gone = 0;
    int64_t first = saved_suite(f->s);
    saved_suite(f->s);
    json_t *b = bundle_build_job(f->s, first, &gone, err, sizeof err);
    assert_non_null(b);
    json_t *devices = json_object_get(b, "devices");
    assert_int_equal(json_array_size(devices), 1);
    json_t *dev = json_array_get(devices, 0);
    assert_string_equal(json_string_value(json_object_get(dev, "host")), "node-7");
    json_t *results = json_object_get(dev, "results");
    assert_int_equal(json_array_size(results), 1);
    json_t *job = json_object_get(json_array_get(results, 0), "job");
    assert_int_equal(json_integer_value(json_object_get(job, "id")), first);
    assert_string_equal(json_string_value(json_object_get(job, "host")), "node-7");
    /* a central takes it once, however often it comes */
    store *central;
    struct bundle_counts c;
    char path[300];
    snprintf(path, sizeof path, "%s.central", f->t->path);
    assert_int_equal(gpuprobe_store_open(&central, path, NULL, NULL, err, sizeof err), 0);
    assert_int_equal(bundle_import(central, b, &c, err, sizeof err, field, sizeof field), 0);
    assert_int_equal(c.results_added, 1);
    assert_int_equal(bundle_import(central, b, &c, err, sizeof err, field, sizeof field), 0);
    assert_int_equal(c.results_added, 0);
    assert_int_equal(c.results_held, 1);
    store_close(central);
    json_decref(b);
    remove(path);
    snprintf(path, sizeof path, "%s.central-wal", f->t->path);
    remove(path);
    snprintf(path, sizeof path, "%s.central-shm", f->t->path);
    remove(path);
    /* a job bundles do not carry, and one that is not there */
    int64_t cpu = rdb_running_job(f->s, "test", NULL);
    assert_int_equal(store_job_succeed(f->s, cpu, "{\"pid\":1}", NULL, err, sizeof err), 0);
    assert_null(bundle_build_job(f->s, cpu, &gone, err, sizeof err));
    assert_int_equal(gone, 1);
    assert_null(bundle_build_job(f->s, 999999, &gone, err, sizeof err));
    assert_int_equal(gone, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(nothing_queued_without_upstream, setup, rdb_teardown),
        cmocka_unit_test_setup_teardown(queued_with_the_result, setup, rdb_teardown),
        cmocka_unit_test_setup_teardown(refused_save_queues_nothing, setup, rdb_teardown),
        cmocka_unit_test_setup_teardown(cpu_and_imported_results_stay, setup, rdb_teardown),
        cmocka_unit_test_setup_teardown(retry_refuse_acknowledge, setup, rdb_teardown),
        cmocka_unit_test_setup_teardown(waiting_listed_first_and_requeued, setup, rdb_teardown),
        cmocka_unit_test_setup_teardown(bundle_of_one_job, setup, rdb_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
