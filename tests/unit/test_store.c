/*
 * Unit tests of the store (db/): schema and migrations, the job state machine
 * and its events, result savers, listing, counts, the generation counter,
 * hosts and devices, integrity, and concurrent use.
 *
 * DESIGN
 * Every test gets a fresh directory from mkdtemp under /tmp with a store
 * opened on a real database file in it (the fixture); the teardown closes the
 * store and removes the directory with whatever SQLite left in it. Tests look
 * at the file itself through a separate plain sqlite3 connection where the
 * store's API cannot show the fact (schema tables, user_version, rows written
 * by a saver). A crash is simulated with a child process that starts jobs
 * and leaves by _exit() without closing. Threads never call cmocka asserts;
 * they count their failures and the main thread checks the counts.
 */
#include <dirent.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "tests/unit/support/storetest.h"
#include "tests/unit/support/tmpfile.h"
#include "db/store.h"

static char err[512];

#define OK STORE_OK

/* ---- fixture ------------------------------------------------------------ */

static int setup(void **state) { return store_fixture_setup(state, "store"); }
static int teardown(void **state) { return store_fixture_teardown(state); }
static int64_t add_job(store *s, const char *kind, const char *device, int max_attempts)
{
    int64_t id = 0;
    OK(store_job_insert(s, kind, device, "{\"n\":1}", 60, max_attempts, &id, err, sizeof err));
    assert_true(id > 0);
    return id;
}

static void get_job(store *s, int64_t id, struct job_row *j)
{
    OK(store_job_get(s, id, j, err, sizeof err));
    assert_int_equal(j->id, id);
}

static enum job_state state_of(store *s, int64_t id)
{
    struct job_row j;
    get_job(s, id, &j);
    enum job_state st = j.state;
    job_row_free(&j);
    return st;
}

/* Asserts the job's events: their states and messages, in order. */
static void expect_events(store *s, int64_t id, size_t n, const enum job_state *states,
                          const char *const *messages)
{
    struct job_event *ev = NULL;
    size_t got = 0;
    OK(store_job_events(s, id, &ev, &got, err, sizeof err));
    assert_int_equal(got, n);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(job_state_name(ev[i].state), job_state_name(states[i]));
        assert_string_equal(ev[i].message, messages[i]);
        assert_true(ev[i].at_ms > 0);
        if (i > 0)
            assert_true(ev[i].at_ms >= ev[i - 1].at_ms);
    }
    job_events_free(ev, got);
}

/* ---- schema ------------------------------------------------------------- */

static void test_open_creates_schema(void **state)
{
    struct store_fixture *fx = *state;
    assert_true(store_schema_latest() >= 1);
    assert_int_equal(store_schema_version(fx->s), store_schema_latest());
    assert_int_equal(query_int(fx->path, "PRAGMA user_version"), store_schema_latest());
    assert_int_equal(query_int(fx->path, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
                                         " AND name IN ('hosts', 'devices', 'jobs', 'job_events')"),
                     4);
    assert_int_equal(query_int(fx->path, "SELECT count(*) FROM sqlite_master WHERE type = 'index'"
                                         " AND name LIKE 'jobs_%'"), 4); /* state, device, kind, origin */
    assert_int_equal(query_int(fx->path, "SELECT journal_mode = 'wal' FROM pragma_journal_mode"),
                     1);
}

static void test_reopen_is_idempotent(void **state)
{
    struct store_fixture *fx = *state;
    int64_t id = add_job(fx->s, "k", NULL, 1);
    for (int i = 0; i < 2; i++) {
        store_close(fx->s);
        fx->s = NULL;
        OK(store_open(&fx->s, fx->path, err, sizeof err));
        assert_int_equal(store_schema_version(fx->s), store_schema_latest());
        assert_int_equal(state_of(fx->s, id), JOB_QUEUED);
    }
    int64_t counts[JOB_STATE_COUNT];
    OK(store_job_counts(fx->s, counts, err, sizeof err));
    assert_int_equal(counts[JOB_QUEUED], 1);
}

static void test_newer_schema_refused(void **state)
{
    struct store_fixture *fx = *state;
    char sql[64];
    int newer = store_schema_latest() + 1;
    store_close(fx->s);
    fx->s = NULL;
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", newer);
    exec_plain(fx->path, sql);

    store *s = (store *)&sql;   /* must be reset to NULL */
    err[0] = '\0';
    assert_int_equal(store_open(&s, fx->path, err, sizeof err), -1);
    assert_null(s);
    char want[128];
    snprintf(want, sizeof want, "database schema version %d is newer than this gpuprobe knows (%d)",
             newer, store_schema_latest());
    assert_non_null(strstr(err, want));
    assert_null(strchr(err, '\n'));
    assert_int_equal(query_int(fx->path, "PRAGMA user_version"), newer);
}

static void test_failed_migration_rolls_back(void **state)
{
    struct store_fixture *fx = *state;
    char path[160];
    snprintf(path, sizeof path, "%s/clash.db", fx->dir);
    /* A table in the way makes step 0 -> 1 fail half-way through. */
    exec_plain(path, "CREATE TABLE jobs (x INTEGER)");
    store *s = NULL;
    assert_int_equal(store_open(&s, path, err, sizeof err), -1);
    assert_null(s);
    assert_non_null(strstr(err, "from version 0 to 1"));
    assert_non_null(strstr(err, "jobs"));
    assert_int_equal(query_int(path, "PRAGMA user_version"), 0);
    assert_int_equal(query_int(path, "SELECT count(*) FROM sqlite_master WHERE name = 'hosts'"),
                     0);
    assert_int_equal(query_int(path, "SELECT journal_mode = 'delete' FROM pragma_journal_mode"),
                     1);
}

/* Runs sql on the file and answers whether SQLite accepted it. */
static int sql_accepted(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_exec(db, "PRAGMA foreign_keys=ON", NULL, NULL, NULL);
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_close(db);
    return rc == SQLITE_OK;
}

#define V3_RUN(job, probe, ms)                                                                   \
    "INSERT INTO probe_runs (job_id, probe, device, device_name, compute_capability,"            \
    " measured_ms, clock_mhz_before, clock_mhz_after, driver_version, repeats, wall_s) VALUES (" \
    #job ", '" probe "', 'GPU-old', 'NVIDIA H200', '9.0', " #ms ", 1980.0, NULL, '580.95.05', 5,"  \
    " 41.5);"

/* A database an older gpuprobe left at schema version 3 keeps its probe
 * runs through step 4, which lets probe_runs hold the new probes. */
static void test_migration_v4_keeps_probe_runs(void **state)
{
    struct store_fixture *fx = *state;
    char path[160];
    snprintf(path, sizeof path, "%s/v3.db", fx->dir);
    OK(store_create_at_version(path, 3, err, sizeof err));
    assert_int_equal(query_int(path, "PRAGMA user_version"), 3);
    exec_plain(path,
               "INSERT INTO jobs (id, kind, device, params_json, state, max_attempts, timeout_s,"
               " created_ms) VALUES (1, 'suite', 'GPU-old', '{}', 'succeeded', 1, 600, 1),"
               " (2, 'latency', 'GPU-old', '{}', 'succeeded', 1, 600, 2);"
               V3_RUN(1, "latency", 1700000000000) V3_RUN(1, "memory", 1700000000000)
               V3_RUN(2, "latency", 1700000500000)
               "INSERT INTO latency_results (job_id, seq, device, instr, grp, sass_opcode,"
               " latency_median, latency_min, latency_max) VALUES"
               " (2, 0, 'GPU-old', 'ffma', 'fp32', 'FFMA', 4.0, 4.0, 4.5);");
    assert_false(sql_accepted(path, V3_RUN(2, "banks", 1)));   /* v3 refuses it */

    store *s = NULL;
    OK(store_open(&s, path, err, sizeof err));
    assert_int_equal(store_schema_version(s), store_schema_latest());
    OK(store_integrity_check(s, err, sizeof err));
    store_close(s);
    assert_int_equal(query_int(path, "SELECT count(*) FROM probe_runs"), 3);
    assert_int_equal(query_int(path, "SELECT count(*) FROM probe_runs WHERE device = 'GPU-old'"
                                     " AND clock_mhz_before = 1980.0 AND clock_mhz_after IS NULL"
                                     " AND driver_version = '580.95.05' AND repeats = 5"
                                     " AND wall_s = 41.5"), 3);
    assert_int_equal(query_int(path, "SELECT measured_ms FROM probe_runs WHERE job_id = 2"),
                     1700000500000LL);
    assert_int_equal(query_int(path, "SELECT count(*) FROM sqlite_master WHERE type = 'index'"
                                     " AND name = 'probe_runs_device'"
                                     " AND tbl_name = 'probe_runs'"), 1);
    assert_int_equal(query_int(path, "SELECT count(*) FROM sqlite_master"
                                     " WHERE name = 'probe_runs_v4'"), 0);
    /* the new probes are accepted, anything else still refused */
    assert_true(sql_accepted(path, V3_RUN(2, "banks", 1) V3_RUN(2, "control-codes", 1)
                                   V3_RUN(2, "dual-issue", 1)));
    assert_false(sql_accepted(path, V3_RUN(2, "bogus", 1)));
    /* the rebuilt table still belongs to its job */
    exec_plain(path, "PRAGMA foreign_keys=ON; DELETE FROM jobs WHERE id = 2");
    assert_int_equal(query_int(path, "SELECT count(*) FROM probe_runs"), 2);
    assert_int_equal(query_int(path, "SELECT count(*) FROM latency_results"), 0);
}

static void test_create_at_version_bounds(void **state)
{
    struct store_fixture *fx = *state;
    char path[160];
    snprintf(path, sizeof path, "%s/any.db", fx->dir);
    assert_int_equal(store_create_at_version(path, store_schema_latest() + 1, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "not one this gpuprobe knows"));
    OK(store_create_at_version(path, 1, err, sizeof err));
    assert_int_equal(query_int(path, "PRAGMA user_version"), 1);
    OK(store_create_at_version(path, 0, err, sizeof err)); /* never goes back */
    assert_int_equal(query_int(path, "PRAGMA user_version"), 1);
}

static void test_open_bad_path(void **state)
{
    (void)state;
    store *s = NULL;
    assert_int_equal(store_open(&s, "/nonexistent-dir/x/y.db", err, sizeof err), -1);
    assert_null(s);
    assert_non_null(strstr(err, "/nonexistent-dir/x/y.db"));
    assert_int_equal(store_open(&s, ":memory:", err, sizeof err), -1);
    store_close(NULL);
}

/* ---- job states --------------------------------------------------------- */

static void test_state_names(void **state)
{
    (void)state;
    const char *names[] = { "queued", "running", "succeeded", "failed", "cancelled" };
    for (int i = 0; i < JOB_STATE_COUNT; i++) {
        assert_string_equal(job_state_name((enum job_state)i), names[i]);
        assert_int_equal(job_state_parse(names[i]), i);
    }
    assert_int_equal(job_state_parse("bogus"), -1);
    assert_int_equal(job_state_parse(NULL), -1);
    assert_false(job_state_is_terminal(JOB_QUEUED));
    assert_false(job_state_is_terminal(JOB_RUNNING));
    assert_true(job_state_is_terminal(JOB_SUCCEEDED));
    assert_true(job_state_is_terminal(JOB_FAILED));
    assert_true(job_state_is_terminal(JOB_CANCELLED));
}

static void test_insert_and_get(void **state)
{
    struct store_fixture *fx = *state;
    int64_t before = store_now_ms();
    int64_t id = 0;
    OK(store_job_insert(fx->s, "matmul", "GPU-1", "{\"size\":4096}", 120, 3, &id, err,
                        sizeof err));
    struct job_row j;
    get_job(fx->s, id, &j);
    assert_string_equal(j.kind, "matmul");
    assert_string_equal(j.device, "GPU-1");
    assert_string_equal(j.params_json, "{\"size\":4096}");
    assert_int_equal(j.state, JOB_QUEUED);
    assert_int_equal(j.attempt, 0);
    assert_int_equal(j.max_attempts, 3);
    assert_int_equal(j.timeout_s, 120);
    assert_int_equal(j.cancel_requested, 0);
    assert_true(j.created_ms >= before && j.created_ms <= store_now_ms());
    assert_int_equal(j.started_ms, 0);
    assert_int_equal(j.finished_ms, 0);
    assert_null(j.error);
    assert_null(j.result_json);
    job_row_free(&j);

    int64_t cpu = add_job(fx->s, "sleep", NULL, 1);
    assert_true(cpu > id);
    get_job(fx->s, cpu, &j);
    assert_null(j.device);
    job_row_free(&j);

    expect_events(fx->s, id, 1, (enum job_state[]){ JOB_QUEUED }, (const char *[]){ "submitted" });
    assert_int_equal(store_job_get(fx->s, 9999, &j, err, sizeof err), 1);
}

static void test_insert_refuses_bad_input(void **state)
{
    struct store_fixture *fx = *state;
    int64_t id = 0;
    assert_int_equal(store_job_insert(fx->s, "", NULL, "{}", 1, 1, &id, err, sizeof err), -1);
    assert_int_equal(store_job_insert(fx->s, "k", NULL, "{}", 0, 1, &id, err, sizeof err), -1);
    assert_non_null(strstr(err, "timeout_s"));
    assert_int_equal(store_job_insert(fx->s, "k", NULL, "{}", 1, 0, &id, err, sizeof err), -1);
    assert_int_equal(store_job_insert(fx->s, "k", NULL, "{not json", 1, 1, &id, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "CHECK constraint failed"));
    int64_t counts[JOB_STATE_COUNT];
    OK(store_job_counts(fx->s, counts, err, sizeof err));
    assert_int_equal(counts[JOB_QUEUED], 0);
    assert_int_equal(query_int(fx->path, "SELECT count(*) FROM job_events"), 0);
}

static void test_start(void **state)
{
    struct store_fixture *fx = *state;
    int64_t id = add_job(fx->s, "k", NULL, 2);
    OK(store_job_start(fx->s, id, err, sizeof err));
    struct job_row j;
    get_job(fx->s, id, &j);
    assert_int_equal(j.state, JOB_RUNNING);
    assert_int_equal(j.attempt, 1);
    assert_true(j.started_ms > 0);
    assert_int_equal(j.finished_ms, 0);
    job_row_free(&j);
    assert_int_equal(store_job_start(fx->s, id, err, sizeof err), 1);
    assert_int_equal(store_job_start(fx->s, 424242, err, sizeof err), 1);
    expect_events(fx->s, id, 2, (enum job_state[]){ JOB_QUEUED, JOB_RUNNING },
                  (const char *[]){ "submitted", "started" });
}

static void test_succeed(void **state)
{
    struct store_fixture *fx = *state;
    int64_t id = add_job(fx->s, "k", NULL, 1);
    assert_int_equal(store_job_succeed(fx->s, id, "{\"ok\":1}", NULL, err, sizeof err), 1);
    OK(store_job_start(fx->s, id, err, sizeof err));
    OK(store_job_succeed(fx->s, id, "{\"gflops\":12.5}", NULL, err, sizeof err));
    struct job_row j;
    get_job(fx->s, id, &j);
    assert_int_equal(j.state, JOB_SUCCEEDED);
    assert_string_equal(j.result_json, "{\"gflops\":12.5}");
    assert_true(j.finished_ms >= j.started_ms && j.finished_ms > 0);
    assert_null(j.error);
    job_row_free(&j);
    assert_int_equal(store_job_succeed(fx->s, id, "{}", NULL, err, sizeof err), 1);
    assert_int_equal(store_job_fail(fx->s, id, "late", NULL, err, sizeof err), 1);
    assert_int_equal(store_job_cancelled(fx->s, id, err, sizeof err), 1);
    assert_int_equal(state_of(fx->s, id), JOB_SUCCEEDED);
    expect_events(fx->s, id, 3, (enum job_state[]){ JOB_QUEUED, JOB_RUNNING, JOB_SUCCEEDED },
                  (const char *[]){ "submitted", "started", "succeeded" });
}

static void test_succeed_refuses_invalid_json(void **state)
{
    struct store_fixture *fx = *state;
    int64_t id = add_job(fx->s, "k", NULL, 1);
    OK(store_job_start(fx->s, id, err, sizeof err));
    assert_int_equal(store_job_succeed(fx->s, id, "{oops", NULL, err, sizeof err), -1);
    assert_int_equal(state_of(fx->s, id), JOB_RUNNING);
}

static void test_fail(void **state)
{
    struct store_fixture *fx = *state;
    int64_t id = add_job(fx->s, "k", NULL, 3);
    assert_int_equal(store_job_fail(fx->s, id, "boom", NULL, err, sizeof err), 1);
    OK(store_job_start(fx->s, id, err, sizeof err));
    OK(store_job_fail(fx->s, id, "exit status 3: out of memory", NULL, err, sizeof err));
    struct job_row j;
    get_job(fx->s, id, &j);
    assert_int_equal(j.state, JOB_FAILED);
    assert_string_equal(j.error, "exit status 3: out of memory");
    assert_true(j.finished_ms > 0);
    assert_null(j.result_json);
    job_row_free(&j);
    assert_int_equal(store_job_fail(fx->s, id, "again", NULL, err, sizeof err), 1);
    assert_int_equal(store_job_start(fx->s, id, err, sizeof err), 1);
    expect_events(fx->s, id, 3, (enum job_state[]){ JOB_QUEUED, JOB_RUNNING, JOB_FAILED },
                  (const char *[]){ "submitted", "started",
                                    "failed: exit status 3: out of memory" });
}

static void test_interrupt_requeues_then_gives_up(void **state)
{
    struct store_fixture *fx = *state;
    int64_t id = add_job(fx->s, "k", "GPU-0", 3);
    int requeued = -1;
    assert_int_equal(store_job_interrupt(fx->s, id, "x", &requeued, err, sizeof err), 1);
    for (int attempt = 1; attempt <= 3; attempt++) {
        OK(store_job_start(fx->s, id, err, sizeof err));
        OK(store_job_interrupt(fx->s, id, "daemon stopped", &requeued, err, sizeof err));
        struct job_row j;
        get_job(fx->s, id, &j);
        assert_int_equal(j.attempt, attempt);
        if (attempt < 3) {
            assert_int_equal(requeued, 1);
            assert_int_equal(j.state, JOB_QUEUED);
            assert_string_equal(j.error, "daemon stopped");
            assert_int_equal(j.started_ms, 0);
        } else {
            assert_int_equal(requeued, 0);
            assert_int_equal(j.state, JOB_FAILED);
            assert_string_equal(j.error, "gave up after 3 attempts: daemon stopped");
            assert_true(j.finished_ms > 0);
        }
        job_row_free(&j);
    }
    assert_int_equal(store_job_start(fx->s, id, err, sizeof err), 1);
    enum job_state st[] = { JOB_QUEUED, JOB_RUNNING, JOB_QUEUED, JOB_RUNNING, JOB_QUEUED,
                            JOB_RUNNING, JOB_FAILED };
    const char *msg[] = { "submitted", "started",
                          "re-queued after attempt 1 of 3: daemon stopped", "started",
                          "re-queued after attempt 2 of 3: daemon stopped", "started",
                          "failed: gave up after 3 attempts: daemon stopped" };
    expect_events(fx->s, id, 7, st, msg);
}

static void test_interrupt_after_cancel_request_cancels(void **state)
{
    struct store_fixture *fx = *state;
    int64_t id = add_job(fx->s, "k", NULL, 3);
    enum job_state st;
    int requeued = -1;
    OK(store_job_start(fx->s, id, err, sizeof err));
    OK(store_job_cancel(fx->s, id, &st, err, sizeof err));
    OK(store_job_interrupt(fx->s, id, "daemon stopped", &requeued, err, sizeof err));
    assert_int_equal(requeued, 0);
    assert_int_equal(state_of(fx->s, id), JOB_CANCELLED);
    expect_events(fx->s, id, 4,
                  (enum job_state[]){ JOB_QUEUED, JOB_RUNNING, JOB_RUNNING, JOB_CANCELLED },
                  (const char *[]){ "submitted", "started", "cancel requested",
                                    "cancelled (interrupted: daemon stopped)" });
}

/* Child process: opens the store, starts jobs and dies without closing. */
static void crash_child(const char *path)
{
    int64_t ids_out[3];
    store *s = NULL;
    if (store_open(&s, path, err, sizeof err) != 0)
        _exit(2);
    for (int i = 0; i < 3; i++)
        if (store_job_insert(s, "k", NULL, "{}", 10, i == 0 ? 1 : 2, &ids_out[i], err,
                             sizeof err) != 0)
            _exit(3);
    if (store_job_start(s, ids_out[0], err, sizeof err) != 0
        || store_job_start(s, ids_out[1], err, sizeof err) != 0)
        _exit(4);
    _exit(0);
}

static void test_recover_after_crash(void **state)
{
    struct store_fixture *fx = *state;
    store_close(fx->s);
    fx->s = NULL;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        crash_child(fx->path);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    const int64_t ids[3] = { 1, 2, 3 };   /* the first ids of a fresh database */

    OK(store_open(&fx->s, fx->path, err, sizeof err));
    assert_int_equal(state_of(fx->s, ids[0]), JOB_RUNNING);
    int count = -1;
    OK(store_jobs_recover(fx->s, "daemon restarted", &count, err, sizeof err));
    assert_int_equal(count, 2);
    struct job_row j;
    get_job(fx->s, ids[0], &j);
    assert_int_equal(j.state, JOB_FAILED);
    assert_string_equal(j.error, "gave up after 1 attempts: daemon restarted");
    job_row_free(&j);
    get_job(fx->s, ids[1], &j);
    assert_int_equal(j.state, JOB_QUEUED);
    assert_string_equal(j.error, "daemon restarted");
    assert_int_equal(j.attempt, 1);
    job_row_free(&j);
    assert_int_equal(state_of(fx->s, ids[2]), JOB_QUEUED);
    OK(store_jobs_recover(fx->s, "again", &count, err, sizeof err));
    assert_int_equal(count, 0);
}

static void test_cancel_queued(void **state)
{
    struct store_fixture *fx = *state;
    int64_t id = add_job(fx->s, "k", NULL, 1);
    enum job_state st = JOB_QUEUED;
    OK(store_job_cancel(fx->s, id, &st, err, sizeof err));
    assert_int_equal(st, JOB_CANCELLED);
    struct job_row j;
    get_job(fx->s, id, &j);
    assert_int_equal(j.state, JOB_CANCELLED);
    assert_string_equal(j.error, "cancelled by request");
    assert_true(j.finished_ms > 0);
    assert_int_equal(j.attempt, 0);
    job_row_free(&j);
    assert_int_equal(store_job_start(fx->s, id, err, sizeof err), 1);
    expect_events(fx->s, id, 2, (enum job_state[]){ JOB_QUEUED, JOB_CANCELLED },
                  (const char *[]){ "submitted", "cancelled" });
}

static void test_cancel_running(void **state)
{
    struct store_fixture *fx = *state;
    int64_t id = add_job(fx->s, "k", NULL, 1);
    enum job_state st = JOB_QUEUED;
    OK(store_job_start(fx->s, id, err, sizeof err));
    OK(store_job_cancel(fx->s, id, &st, err, sizeof err));
    assert_int_equal(st, JOB_RUNNING);
    struct job_row j;
    get_job(fx->s, id, &j);
    assert_int_equal(j.state, JOB_RUNNING);
    assert_int_equal(j.cancel_requested, 1);
    job_row_free(&j);

    uint64_t g = store_generation(fx->s);
    OK(store_job_cancel(fx->s, id, &st, err, sizeof err));   /* asked twice: no change */
    assert_int_equal(st, JOB_RUNNING);
    assert_int_equal(store_generation(fx->s), g);

    OK(store_job_cancelled(fx->s, id, err, sizeof err));
    assert_int_equal(state_of(fx->s, id), JOB_CANCELLED);
    assert_int_equal(store_job_cancelled(fx->s, id, err, sizeof err), 1);
    expect_events(fx->s, id, 4,
                  (enum job_state[]){ JOB_QUEUED, JOB_RUNNING, JOB_RUNNING, JOB_CANCELLED },
                  (const char *[]){ "submitted", "started", "cancel requested", "cancelled" });
}

static void test_cancel_terminal_and_unknown(void **state)
{
    struct store_fixture *fx = *state;
    int64_t done = add_job(fx->s, "k", NULL, 1), bad = add_job(fx->s, "k", NULL, 1);
    enum job_state st = JOB_QUEUED;
    OK(store_job_start(fx->s, done, err, sizeof err));
    OK(store_job_succeed(fx->s, done, "{}", NULL, err, sizeof err));
    OK(store_job_start(fx->s, bad, err, sizeof err));
    OK(store_job_fail(fx->s, bad, "r", NULL, err, sizeof err));
    uint64_t g = store_generation(fx->s);
    OK(store_job_cancel(fx->s, done, &st, err, sizeof err));
    assert_int_equal(st, JOB_SUCCEEDED);
    OK(store_job_cancel(fx->s, bad, &st, err, sizeof err));
    assert_int_equal(st, JOB_FAILED);
    assert_int_equal(store_job_cancel(fx->s, 777, &st, err, sizeof err), 1);
    assert_int_equal(store_generation(fx->s), g);
    assert_int_equal(store_job_cancelled(fx->s, add_job(fx->s, "k", NULL, 1), err, sizeof err), 1);
    struct job_row j;
    get_job(fx->s, done, &j);
    assert_int_equal(j.cancel_requested, 0);
    assert_int_equal(j.state, JOB_SUCCEEDED);
    job_row_free(&j);
}

/* ---- result savers ------------------------------------------------------ */

static int64_t saver_saw_id;
static char saver_saw_json[64];

static const char saver_sql[] =
    "INSERT INTO hosts (hostname, machine_id, first_seen_ms, last_seen_ms) VALUES (?, ?, 0, 0)";

static int saver_failing(struct store_tx *tx, int64_t job_id, const json_t *result, char *e,
                         size_t elen)
{
    const char *p[] = { "written-by-saver", "m" };
    saver_saw_id = job_id;
    char *text = json_dumps(result, JSON_COMPACT);
    snprintf(saver_saw_json, sizeof saver_saw_json, "%s", text ? text : "");
    free(text);
    if (store_tx_exec(tx, saver_sql, p, 2, e, elen) != 0)
        return -1;
    snprintf(e, elen, "saving rows: disk on fire");
    return -1;
}

static void test_saver_failure_rolls_back(void **state)
{
    struct store_fixture *fx = *state;
    int64_t id = add_job(fx->s, "k", NULL, 1);
    OK(store_job_start(fx->s, id, err, sizeof err));
    uint64_t g = store_generation(fx->s);
    assert_int_equal(store_job_succeed(fx->s, id, "{\"v\":2}", saver_failing, err, sizeof err),
                     -1);
    assert_string_equal(err, "saving rows: disk on fire");
    assert_int_equal(saver_saw_id, id);
    assert_string_equal(saver_saw_json, "{\"v\":2}");
    struct job_row j;
    get_job(fx->s, id, &j);
    assert_int_equal(j.state, JOB_RUNNING);
    assert_null(j.result_json);
    assert_int_equal(j.finished_ms, 0);
    job_row_free(&j);
    assert_int_equal(query_int(fx->path, "SELECT count(*) FROM hosts"), 0);
    assert_int_equal(store_generation(fx->s), g);
    expect_events(fx->s, id, 2, (enum job_state[]){ JOB_QUEUED, JOB_RUNNING },
                  (const char *[]){ "submitted", "started" });
    OK(store_job_fail(fx->s, id, "result not saved", NULL, err, sizeof err));   /* still running */
}

static int saver_ok(struct store_tx *tx, int64_t job_id, const json_t *result, char *e,
                    size_t elen)
{
    (void)result;
    char name[32];
    snprintf(name, sizeof name, "job-%lld", (long long)job_id);
    const char *p[] = { name, "m" };
    char e2[256];
    /* Errors inside the saver are reported, and do not spoil the transaction. */
    if (store_tx_exec(tx, saver_sql, p, 1, e2, sizeof e2) != -1 || !strstr(e2, "takes 2"))
        return snprintf(e, elen, "parameter count not checked"), -1;
    if (store_tx_exec(tx, "INSERT INTO nowhere VALUES (?)", p, 1, e2, sizeof e2) != -1
        || !strstr(e2, "no such table: nowhere"))
        return snprintf(e, elen, "bad SQL not reported: %s", e2), -1;
    const char *nul[] = { "nul", NULL };   /* NULL binds NULL */
    if (store_tx_exec(tx, saver_sql, nul, 2, e2, sizeof e2) != -1
        || !strstr(e2, "NOT NULL constraint failed: hosts.machine_id"))
        return snprintf(e, elen, "NULL parameter not bound as NULL: %s", e2), -1;
    for (int i = 0; i < 2; i++) {   /* the cached statement is reusable */
        if (i == 1)
            p[0] = "second";
        if (store_tx_exec(tx, saver_sql, p, 2, e, elen) != 0)
            return -1;
    }
    return 0;
}

static void test_saver_success_commits(void **state)
{
    struct store_fixture *fx = *state;
    int64_t id = add_job(fx->s, "k", NULL, 1);
    OK(store_job_start(fx->s, id, err, sizeof err));
    OK(store_job_succeed(fx->s, id, "{}", saver_ok, err, sizeof err));
    assert_int_equal(query_int(fx->path, "SELECT count(*) FROM hosts WHERE machine_id = 'm'"
                                         " AND hostname IN ('job-1', 'second')"), 2);
    assert_int_equal(state_of(fx->s, id), JOB_SUCCEEDED);
}

/* ---- listing ------------------------------------------------------------ */

#define NLIST 57

struct list_case {
    int state;
    const char *device, *kind;
};

/* Job i of the listing test: kinds cycle a, b, c; devices GPU-0, GPU-1, none, GPU-1. */
static const char *list_kind(int i)
{
    static const char *const kinds[] = { "a", "b", "c" };
    return kinds[i % 3];
}

static const char *list_device(int i)
{
    static const char *const devices[] = { "GPU-0", "GPU-1", NULL, "GPU-1" };
    return devices[i % 4];
}

static int list_match(const struct list_case *c, int i, enum job_state st)
{
    const char *d = list_device(i);
    return (c->state < 0 || (int)st == c->state)
        && (!c->device || (d && strcmp(d, c->device) == 0))
        && (!c->kind || strcmp(list_kind(i), c->kind) == 0);
}

/* Walks every page of one filter; checks order, matching and coverage. */
static void walk_pages(store *s, const int64_t *ids, const enum job_state *states,
                       const struct list_case *c, int limit)
{
    struct job_filter f = { c->state, c->device, c->kind, 0, limit };
    int seen[NLIST] = { 0 }, total = 0, expected = 0;
    int64_t last = INT64_MAX;
    for (;;) {
        struct job_row *rows = NULL;
        size_t n = 0;
        OK(store_job_list(s, &f, &rows, &n, err, sizeof err));
        assert_true(n <= (size_t)limit);
        for (size_t k = 0; k < n; k++) {
            int i = (int)(rows[k].id - ids[0]);
            assert_in_range(i, 0, NLIST - 1);
            assert_true(rows[k].id < last);
            last = rows[k].id;
            assert_true(list_match(c, i, rows[k].state));
            assert_string_equal(rows[k].kind, list_kind(i));
            assert_null(rows[k].result_json);
            seen[i]++;
            total++;
        }
        if (n > 0)
            f.before_id = rows[n - 1].id;
        job_rows_free(rows, n);
        if (n < (size_t)limit)
            break;
    }
    for (int i = 0; i < NLIST; i++) {
        int want = list_match(c, i, states[i]);
        expected += want;
        assert_int_equal(seen[i], want);
    }
    assert_int_equal(total, expected);
}

static void test_list_pagination(void **state)
{
    struct store_fixture *fx = *state;
    int64_t ids[NLIST];
    enum job_state states[NLIST];
    for (int i = 0; i < NLIST; i++) {
        OK(store_job_insert(fx->s, list_kind(i), list_device(i), "{}", 5, 1, &ids[i], err,
                            sizeof err));
        assert_int_equal(ids[i], ids[0] + i);
        states[i] = JOB_QUEUED;
        if (i % 5 == 0) {
            OK(store_job_start(fx->s, ids[i], err, sizeof err));
            states[i] = JOB_RUNNING;
        }
    }
    const struct list_case cases[] = {
        { -1, NULL, NULL },        { JOB_QUEUED, NULL, NULL }, { JOB_RUNNING, NULL, NULL },
        { -1, "GPU-1", NULL },     { -1, NULL, "b" },          { -1, "GPU-0", "c" },
        { JOB_RUNNING, "GPU-0", "a" }, { JOB_SUCCEEDED, NULL, NULL }, { -1, "GPU-9", NULL },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        walk_pages(fx->s, ids, states, &cases[c], 5);
        walk_pages(fx->s, ids, states, &cases[c], 1);
        walk_pages(fx->s, ids, states, &cases[c], 500);
    }
}

static void test_list_refuses_bad_filter(void **state)
{
    struct store_fixture *fx = *state;
    struct job_row *rows = (struct job_row *)&rows;
    size_t n = 99;
    struct job_filter f = { -1, NULL, NULL, 0, 0 };
    assert_int_equal(store_job_list(fx->s, &f, &rows, &n, err, sizeof err), -1);
    assert_null(rows);
    assert_int_equal(n, 0);
    f.limit = 10;
    f.state = JOB_STATE_COUNT;
    assert_int_equal(store_job_list(fx->s, &f, &rows, &n, err, sizeof err), -1);
}

static void test_queued_fifo(void **state)
{
    struct store_fixture *fx = *state;
    int64_t ids[6];
    for (int i = 0; i < 6; i++)
        ids[i] = add_job(fx->s, "k", i % 2 ? "GPU-0" : NULL, 1);
    OK(store_job_start(fx->s, ids[1], err, sizeof err));
    enum job_state st;
    OK(store_job_cancel(fx->s, ids[3], &st, err, sizeof err));
    struct job_row *rows = NULL;
    size_t n = 0;
    OK(store_jobs_queued(fx->s, 3, &rows, &n, err, sizeof err));
    assert_int_equal(n, 3);
    assert_int_equal(rows[0].id, ids[0]);
    assert_int_equal(rows[1].id, ids[2]);
    assert_int_equal(rows[2].id, ids[4]);
    assert_int_equal(rows[0].state, JOB_QUEUED);
    assert_null(rows[0].error);
    assert_null(rows[0].result_json);
    job_rows_free(rows, n);
    OK(store_jobs_queued(fx->s, 100, &rows, &n, err, sizeof err));
    assert_int_equal(n, 4);
    assert_int_equal(rows[3].id, ids[5]);
    assert_string_equal(rows[3].device, "GPU-0");
    job_rows_free(rows, n);
}

static void test_counts(void **state)
{
    struct store_fixture *fx = *state;
    int64_t counts[JOB_STATE_COUNT];
    OK(store_job_counts(fx->s, counts, err, sizeof err));
    for (int i = 0; i < JOB_STATE_COUNT; i++)
        assert_int_equal(counts[i], 0);
    int64_t a = add_job(fx->s, "k", NULL, 1), b = add_job(fx->s, "k", NULL, 1);
    int64_t c = add_job(fx->s, "k", NULL, 1), d = add_job(fx->s, "k", NULL, 1);
    add_job(fx->s, "k", NULL, 1);
    enum job_state st;
    OK(store_job_start(fx->s, a, err, sizeof err));
    OK(store_job_start(fx->s, b, err, sizeof err));
    OK(store_job_succeed(fx->s, b, "{}", NULL, err, sizeof err));
    OK(store_job_start(fx->s, c, err, sizeof err));
    OK(store_job_fail(fx->s, c, "x", NULL, err, sizeof err));
    OK(store_job_cancel(fx->s, d, &st, err, sizeof err));
    OK(store_job_counts(fx->s, counts, err, sizeof err));
    assert_int_equal(counts[JOB_QUEUED], 1);
    assert_int_equal(counts[JOB_RUNNING], 1);
    assert_int_equal(counts[JOB_SUCCEEDED], 1);
    assert_int_equal(counts[JOB_FAILED], 1);
    assert_int_equal(counts[JOB_CANCELLED], 1);
}

/* ---- generation --------------------------------------------------------- */

static void reads_leave_generation(store *s, int64_t id)
{
    uint64_t g = store_generation(s);
    struct job_row j, *rows = NULL;
    struct job_event *ev = NULL;
    struct device_row d;
    size_t n = 0;
    int64_t counts[JOB_STATE_COUNT];
    struct job_filter f = { -1, NULL, NULL, 0, 10 };
    get_job(s, id, &j);
    job_row_free(&j);
    OK(store_job_list(s, &f, &rows, &n, err, sizeof err));
    job_rows_free(rows, n);
    OK(store_jobs_queued(s, 10, &rows, &n, err, sizeof err));
    job_rows_free(rows, n);
    OK(store_job_events(s, id, &ev, &n, err, sizeof err));
    job_events_free(ev, n);
    OK(store_job_counts(s, counts, err, sizeof err));
    OK(store_integrity_check(s, err, sizeof err));
    assert_int_equal(store_device_get(s, "GPU-none", &d, err, sizeof err), 1);
    assert_int_equal(store_schema_version(s), store_schema_latest());
    assert_int_equal(store_generation(s), g);
}

static void test_generation(void **state)
{
    struct store_fixture *fx = *state;
    uint64_t g0 = store_generation(fx->s);
    int64_t id = add_job(fx->s, "k", NULL, 1);
    uint64_t g1 = store_generation(fx->s);
    assert_true(g1 > g0);
    reads_leave_generation(fx->s, id);
    assert_int_equal(store_job_succeed(fx->s, id, "{}", NULL, err, sizeof err), 1);
    assert_int_equal(store_generation(fx->s), g1);
    OK(store_job_start(fx->s, id, err, sizeof err));
    uint64_t g2 = store_generation(fx->s);
    assert_true(g2 > g1);
    int64_t host = 0;
    OK(store_host_upsert(fx->s, "node7", "", &host, err, sizeof err));
    assert_true(store_generation(fx->s) > g2);
    uint64_t g3 = store_generation(fx->s);
    OK(store_devices_mark_absent(fx->s, host, NULL, 0, err, sizeof err));   /* nothing to mark */
    assert_int_equal(store_generation(fx->s), g3);
}

/* ---- hosts and devices -------------------------------------------------- */

static void expect_device(store *s, const char *uuid, const char *name, int present)
{
    struct device_row d;
    OK(store_device_get(s, uuid, &d, err, sizeof err));
    assert_string_equal(d.uuid, uuid);
    assert_string_equal(d.name, name);
    assert_int_equal(d.present, present);
    assert_true(d.first_seen_ms > 0 && d.last_seen_ms >= d.first_seen_ms);
    device_row_free(&d);
}

static void test_hosts(void **state)
{
    struct store_fixture *fx = *state;
    int64_t a = 0, a2 = 0, b = 0;
    OK(store_host_upsert(fx->s, "node7", "m-1", &a, err, sizeof err));
    OK(store_host_upsert(fx->s, "node8", NULL, &b, err, sizeof err));
    OK(store_host_upsert(fx->s, "node7", "m-2", &a2, err, sizeof err));
    assert_true(a > 0 && b > 0 && a != b);
    assert_int_equal(a2, a);
    assert_int_equal(query_int(fx->path, "SELECT count(*) FROM hosts WHERE machine_id = 'm-2'"), 1);
    assert_int_equal(store_host_upsert(fx->s, "", "", &a, err, sizeof err), -1);
}

static void test_devices(void **state)
{
    struct store_fixture *fx = *state;
    int64_t h = 0, other = 0;
    OK(store_host_upsert(fx->s, "node7", "", &h, err, sizeof err));
    OK(store_host_upsert(fx->s, "node8", "", &other, err, sizeof err));
    OK(store_device_upsert(fx->s, h, "GPU-a", "H100", "9.0", "{\"index\":0}", err, sizeof err));
    OK(store_device_upsert(fx->s, h, "GPU-b", "H100", "9.0", "{\"index\":1}", err, sizeof err));
    OK(store_device_upsert(fx->s, other, "GPU-c", "A100", "8.0", "{}", err, sizeof err));

    struct device_row d;
    OK(store_device_get(fx->s, "GPU-a", &d, err, sizeof err));
    assert_string_equal(d.compute_capability, "9.0");
    assert_string_equal(d.info_json, "{\"index\":0}");
    int64_t first = d.first_seen_ms;
    device_row_free(&d);
    OK(store_device_upsert(fx->s, h, "GPU-a", "H100 SXM", "9.0", "{\"index\":0,\"x\":1}", err,
                           sizeof err));
    OK(store_device_get(fx->s, "GPU-a", &d, err, sizeof err));
    assert_int_equal(d.first_seen_ms, first);
    assert_string_equal(d.info_json, "{\"index\":0,\"x\":1}");
    device_row_free(&d);
    expect_device(fx->s, "GPU-a", "H100 SXM", 1);

    const char *still[] = { "GPU-a" };
    OK(store_devices_mark_absent(fx->s, h, still, 1, err, sizeof err));
    expect_device(fx->s, "GPU-a", "H100 SXM", 1);
    expect_device(fx->s, "GPU-b", "H100", 0);
    expect_device(fx->s, "GPU-c", "A100", 1);   /* another host: untouched */
    OK(store_device_upsert(fx->s, h, "GPU-b", "H100", "9.0", "{}", err, sizeof err));
    expect_device(fx->s, "GPU-b", "H100", 1);
    OK(store_devices_mark_absent(fx->s, h, NULL, 0, err, sizeof err));
    expect_device(fx->s, "GPU-a", "H100 SXM", 0);
    expect_device(fx->s, "GPU-b", "H100", 0);

    assert_int_equal(store_device_get(fx->s, "GPU-zzz", &d, err, sizeof err), 1);
    assert_int_equal(store_device_upsert(fx->s, h, "GPU-d", "X", "1.0", "not json", err,
                                         sizeof err), -1);
    assert_int_equal(store_device_upsert(fx->s, 9999, "GPU-e", "X", "1.0", "{}", err,
                                         sizeof err), -1);
    assert_non_null(strstr(err, "FOREIGN KEY"));
}

static void test_integrity_ok(void **state)
{
    struct store_fixture *fx = *state;
    add_job(fx->s, "k", NULL, 1);
    OK(store_integrity_check(fx->s, err, sizeof err));
}

/* ---- concurrency -------------------------------------------------------- */

#define NTHREADS 8     /* more than the reader pool, so readers must wait */
#define NOPS 60

struct worker {
    store *s;
    int index;
    int failures;
    int succeeded;
    char why[256];
};

static int worker_step(struct worker *w, int i)
{
    char e[256];
    int64_t id = 0;
    struct job_row *rows = NULL, j;
    size_t n = 0;
    const char *dev = w->index % 2 ? "GPU-0" : NULL;
    struct job_filter f = { -1, dev, NULL, 0, 20 };
    if (store_job_insert(w->s, "load", dev, "{}", 5, 1, &id, e, sizeof e) != 0
        || store_job_list(w->s, &f, &rows, &n, e, sizeof e) != 0
        || store_job_get(w->s, id, &j, e, sizeof e) != 0)
        return snprintf(w->why, sizeof w->why, "%s", e), -1;
    job_rows_free(rows, n);
    job_row_free(&j);
    if (n == 0)
        return snprintf(w->why, sizeof w->why, "listing right after an insert found nothing"), -1;
    if (i % 4 == 0) {
        if (store_job_start(w->s, id, e, sizeof e) != 0
            || store_job_succeed(w->s, id, "{}", NULL, e, sizeof e) != 0)
            return snprintf(w->why, sizeof w->why, "%s", e), -1;
        w->succeeded++;
    }
    return 0;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    for (int i = 0; i < NOPS; i++)
        if (worker_step(w, i) != 0)
            w->failures++;
    return NULL;
}

static void test_concurrent_use(void **state)
{
    struct store_fixture *fx = *state;
    pthread_t t[NTHREADS];
    struct worker w[NTHREADS];
    uint64_t g = store_generation(fx->s);
    for (int i = 0; i < NTHREADS; i++) {
        w[i] = (struct worker){ .s = fx->s, .index = i };
        assert_int_equal(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
    }
    int succeeded = 0;
    for (int i = 0; i < NTHREADS; i++) {
        assert_int_equal(pthread_join(t[i], NULL), 0);
        if (w[i].failures)
            fail_msg("worker %d: %d failures, last: %s", i, w[i].failures, w[i].why);
        succeeded += w[i].succeeded;
    }
    int64_t counts[JOB_STATE_COUNT];
    OK(store_job_counts(fx->s, counts, err, sizeof err));
    assert_int_equal(counts[JOB_QUEUED] + counts[JOB_SUCCEEDED], NTHREADS * NOPS);
    assert_int_equal(counts[JOB_SUCCEEDED], succeeded);
    assert_int_equal(counts[JOB_SUCCEEDED], NTHREADS * ((NOPS + 3) / 4));
    assert_int_equal(query_int(fx->path, "SELECT count(*) FROM job_events"),
                     NTHREADS * NOPS + 2 * succeeded);
    assert_true(store_generation(fx->s) >= g + NTHREADS * NOPS + 2 * (uint64_t)succeeded);
    OK(store_integrity_check(fx->s, err, sizeof err));
}

/* ---- main --------------------------------------------------------------- */

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_open_creates_schema),
        T(test_reopen_is_idempotent),
        T(test_newer_schema_refused),
        T(test_failed_migration_rolls_back),
        T(test_migration_v4_keeps_probe_runs),
        T(test_create_at_version_bounds),
        cmocka_unit_test(test_open_bad_path),
        cmocka_unit_test(test_state_names),
        T(test_insert_and_get),
        T(test_insert_refuses_bad_input),
        T(test_start),
        T(test_succeed),
        T(test_succeed_refuses_invalid_json),
        T(test_fail),
        T(test_interrupt_requeues_then_gives_up),
        T(test_interrupt_after_cancel_request_cancels),
        T(test_recover_after_crash),
        T(test_cancel_queued),
        T(test_cancel_running),
        T(test_cancel_terminal_and_unknown),
        T(test_saver_failure_rolls_back),
        T(test_saver_success_commits),
        T(test_list_pagination),
        T(test_list_refuses_bad_filter),
        T(test_queued_fifo),
        T(test_counts),
        T(test_generation),
        T(test_hosts),
        T(test_devices),
        T(test_integrity_ok),
        T(test_concurrent_use),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
