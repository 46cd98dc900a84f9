/*
 * Jobs in the store: submission, the state machine, events, listing, counts.
 *
 * DESIGN
 * A job's life is queued -> running -> succeeded | failed | cancelled, or
 * queued -> cancelled, with running -> queued when an interrupted job is
 * retried. Every transition is one write transaction made of an UPDATE whose
 * WHERE clause names the state the job must be in (so a transition that lost a
 * race changes nothing and reports 1) and the INSERT of its job_events row;
 * store_job_succeed also runs the kind's result saver in that transaction and
 * rolls all of it back if the saver fails (store_job_record does insert,
 * start and succeed in one transaction, for a job run outside the daemon by
 * `gpuprobe probe --db`). The simple transitions share
 * job_transition(), which binds ?1 = job id, ?2 = a text (reason, result) and
 * ?3 = now into the transition's UPDATE. Interruption reads the attempt counts
 * first (inside the transaction) to choose between re-queueing, giving up and,
 * for a job whose cancellation was already requested, finishing the cancel.
 * Reads use a pooled read-only connection. Listing builds one of eight SQL
 * texts from which filters are present, so each is prepared once per reader
 * and can use its index (an index on (x) is ordered by (x, id)); pagination is
 * by keyset: id < before_id ORDER BY id DESC LIMIT n. A job row is read into
 * struct job_row through one table of its columns (job_fields), which also
 * frees it; a query that leaves out the trailing columns leaves their
 * members NULL.
 * The state machine's entry points assert their contract: the scheduler
 * hands them ids of jobs it read from the store, so an id below 1 or a
 * state outside enum job_state is a bug in the caller, not an input.
 */
#include <assert.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/store_internal.h"
#include "util/version.h"

static const char *const state_names[JOB_STATE_COUNT] = {
    [JOB_QUEUED] = "queued",
    [JOB_RUNNING] = "running",
    [JOB_SUCCEEDED] = "succeeded",
    [JOB_FAILED] = "failed",
    [JOB_CANCELLED] = "cancelled",
};

#define CANCEL_REASON "cancelled by request"

const char *job_state_name(enum job_state st)
{
    assert((unsigned)st < JOB_STATE_COUNT);
    return state_names[st];
}

int job_state_parse(const char *name)
{
    for (int i = 0; name && i < JOB_STATE_COUNT; i++)
        if (strcmp(state_names[i], name) == 0)
            return i;
    return -1;
}

int job_state_is_terminal(enum job_state st)
{
    assert((unsigned)st < JOB_STATE_COUNT);
    return st == JOB_SUCCEEDED || st == JOB_FAILED || st == JOB_CANCELLED;
}

/* ---- reading rows ------------------------------------------------------- */

#define JOB_COLS STORE_JOB_COLS

/* The columns of JOB_COLS and the three optional ones but id (0) and state
 * (4), which job_from_row reads itself. NULL times read as 0. */
static const struct col_field job_fields[] = {
    {1, 't', offsetof(struct job_row, kind)},
    {2, 't', offsetof(struct job_row, device)},
    {3, 't', offsetof(struct job_row, params_json)},
    {5, 'i', offsetof(struct job_row, attempt)},
    {6, 'i', offsetof(struct job_row, max_attempts)},
    {7, 'i', offsetof(struct job_row, timeout_s)},
    {8, 'i', offsetof(struct job_row, cancel_requested)},
    {9, 'I', offsetof(struct job_row, created_ms)},
    {10, 'I', offsetof(struct job_row, started_ms)},
    {11, 'I', offsetof(struct job_row, finished_ms)},
    {12, 't', offsetof(struct job_row, error)},
    {13, 't', offsetof(struct job_row, error_detail)},
    {14, 't', offsetof(struct job_row, result_json)},
    {15, 't', offsetof(struct job_row, gpuprobe_version)},
    {16, 't', offsetof(struct job_row, origin_host)},
    {17, 'I', offsetof(struct job_row, origin_job)},
};
#define JOB_FIELDS (sizeof job_fields / sizeof job_fields[0])

void job_row_free(struct job_row *j)
{
    fields_free(j, sizeof *j, job_fields, JOB_FIELDS);
}

void job_rows_free(struct job_row *rows, size_t n)
{
    fields_free_rows(rows, n, sizeof *rows, job_fields, JOB_FIELDS);
}

void job_events_free(struct job_event *ev, size_t n)
{
    for (size_t i = 0; ev && i < n; i++)
        free(ev[i].message);
    free(ev);
}

static int state_col(sqlite3_stmt *st, int col, enum job_state *out, char *err, size_t errlen)
{
    const char *name = (const char *)sqlite3_column_text(st, col);
    int v = job_state_parse(name);
    if (v < 0)
        return errf(err, errlen, "unknown job state '%s' in the database",
                       name ? name : "(null)");
    *out = (enum job_state)v;
    return 0;
}

int store_job_from_row(sqlite3_stmt *st, struct job_row *j, char *err, size_t errlen)
{
    memset(j, 0, sizeof *j);
    j->id = sqlite3_column_int64(st, 0);
    if (state_col(st, 4, &j->state, err, errlen) != 0)
        return -1;
    if (fields_read(st, j, job_fields, JOB_FIELDS) != 0) {
        job_row_free(j);
        return errf(err, errlen, "reading job %lld: out of memory",
                       (long long)sqlite3_column_int64(st, 0));
    }
    return 0;
}

static int take_job(const struct db_row *r)
{
    return store_job_from_row(r->st, r->ctx, r->err, r->errlen);
}

static int take_listed(const struct db_row *r)
{
    struct job_row *j = db_row_slot(r, "listing jobs");
    if (!j || store_job_from_row(r->st, j, r->err, r->errlen) != 0)
        return -1;
    ((struct db_array *)r->ctx)->n++;
    return 0;
}

static void release_jobs(void *rows, size_t n)
{
    job_rows_free(rows, n);
}

/* Runs a listing query and hands back its rows (or none). */
static int list_query(store *s, const char *sql, const struct db_arg *args, size_t nargs,
                      struct job_row **rows, size_t *n, char *err, size_t errlen)
{
    void *items = NULL;
    int ret = store_list(s, sql, args, nargs, take_listed, sizeof **rows, release_jobs, &items, n,
                         "listing jobs", err, errlen);
    *rows = items;
    return ret;
}

int store_device_results(store *s, const char *uuid, struct job_row **rows, size_t *n,
                         char *err, size_t errlen)
{
    assert(s && uuid && rows && n);
    return list_query(s,
                      "SELECT " JOB_COLS ", error, error_detail, result_json, gpuprobe_version,"
                      " origin_host, origin_job FROM jobs WHERE device = ?1 AND state = 'succeeded'"
                      " ORDER BY finished_ms, id",
                      DB_ARGS(DB_TEXT(uuid)), rows, n, err, errlen);
}

/* ---- writing helpers ---------------------------------------------------- */

int store_job_event_tx(struct store_tx *tx, int64_t id, int64_t now, enum job_state to,
                       const char *msg, char *err, size_t errlen)
{
    return conn_exec(tx->c,
                     "INSERT INTO job_events (job_id, at_ms, state, message)"
                     " VALUES (?1, ?2, ?3, ?4)",
                     DB_ARGS(DB_INT(id), DB_INT(now), DB_TEXT(job_state_name(to)),
                             DB_TEXT(msg)),
                     "recording a job event", err, errlen);
}

/* Runs a transition UPDATE (?1 = id, ?2 = text, ?3 = now, as far as the
 * statement takes them); *changed = rows hit. */
static int tx_update(struct store_tx *tx, const char *sql, int64_t id, const char *text,
                     int64_t now, int *changed, char *err, size_t errlen)
{
    const struct db_arg args[] = {DB_INT(id), DB_TEXT(text), DB_INT(now)};
    sqlite3_stmt *st = conn_stmt(tx->c, sql, err, errlen);
    if (!st)
        return -1;
    int np = sqlite3_bind_parameter_count(st);
    assert(np >= 1 && np <= 3);
    if (stmt_bind(st, args, (size_t)np, "updating a job", err, errlen) != 0 ||
        stmt_finish(st, "updating a job", err, errlen) != 0)
        return -1;
    *changed = sqlite3_changes(tx->c->db);
    return 0;
}

/* The UPDATE then its event, in the caller's transaction; 1 if the job was
 * not in the state the UPDATE requires. */
static int tx_transition(struct store_tx *tx, int64_t id, const char *sql, const char *text,
                         enum job_state to, const char *msg, char *err, size_t errlen)
{
    int64_t now = store_now_ms();
    int changed = 0;
    assert(id > 0 && msg);
    if (tx_update(tx, sql, id, text, now, &changed, err, errlen) != 0)
        return -1;
    if (!changed)
        return 1;
    return store_job_event_tx(tx, id, now, to, msg, err, errlen);
}

static int job_transition(store *s, int64_t id, const char *sql, const char *text,
                          enum job_state to, const char *msg, char *err, size_t errlen)
{
    struct store_tx tx;
    assert(s && id > 0);
    if (!msg)
        return errf(err, errlen, "updating job %lld: out of memory", (long long)id);
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    int ret = tx_transition(&tx, id, sql, text, to, msg, err, errlen);
    return store_tx_end(&tx, ret, err, errlen);
}

/* ---- transition statements ---------------------------------------------- */

static const char start_sql[] =
    "UPDATE jobs SET state = 'running', attempt = attempt + 1, started_ms = ?3,"
    " finished_ms = NULL, error = NULL, error_detail = NULL WHERE id = ?1 AND state = 'queued'";
static const char succeed_sql[] =
    "UPDATE jobs SET state = 'succeeded', result_json = ?2, finished_ms = ?3, error = NULL"
    " WHERE id = ?1 AND state = 'running'";
static const char fail_sql[] =
    "UPDATE jobs SET state = 'failed', error = ?2, finished_ms = ?3"
    " WHERE id = ?1 AND state = 'running'";
static const char fail_detail_sql[] =
    "UPDATE jobs SET error_detail = ?2 WHERE id = ?1 AND state = 'failed'";
static const char requeue_sql[] =
    "UPDATE jobs SET state = 'queued', error = ?2, started_ms = NULL"
    " WHERE id = ?1 AND state = 'running'";
static const char requeue_uncounted_sql[] =
    "UPDATE jobs SET state = 'queued', error = ?2, started_ms = NULL, attempt = attempt - 1"
    " WHERE id = ?1 AND state = 'running'";
static const char cancelled_sql[] =
    "UPDATE jobs SET state = 'cancelled', error = ?2, finished_ms = ?3"
    " WHERE id = ?1 AND state = 'running'";
static const char cancel_queued_sql[] =
    "UPDATE jobs SET state = 'cancelled', error = ?2, finished_ms = ?3"
    " WHERE id = ?1 AND state = 'queued'";
static const char cancel_request_sql[] =
    "UPDATE jobs SET cancel_requested = 1"
    " WHERE id = ?1 AND state = 'running' AND cancel_requested = 0";

/* ---- insert ------------------------------------------------------------- */

struct job_in {
    const char *kind, *device, *params_json;
    int timeout_s, max_attempts;
};

static int job_insert_tx(struct store_tx *tx, const struct job_in *j, int64_t now,
                         int64_t *id, char *err, size_t errlen)
{
    if (conn_exec(tx->c,
                  "INSERT INTO jobs (kind, device, params_json, state, attempt, max_attempts,"
                  " timeout_s, cancel_requested, created_ms)"
                  " VALUES (?1, ?2, ?3, 'queued', 0, ?4, ?5, 0, ?6)",
                  DB_ARGS(DB_TEXT(j->kind), DB_TEXT(j->device),
                          DB_TEXT(j->params_json ? j->params_json : "{}"),
                          DB_INT(j->max_attempts), DB_INT(j->timeout_s), DB_INT(now)),
                  "inserting a job", err, errlen) != 0)
        return -1;
    *id = sqlite3_last_insert_rowid(tx->c->db);
    return store_job_event_tx(tx, *id, now, JOB_QUEUED, "submitted", err, errlen);
}

int store_job_insert(store *s, const char *kind, const char *device, const char *params_json,
                     int timeout_s, int max_attempts, int64_t *id_out, char *err, size_t errlen)
{
    struct job_in j = { kind, device, params_json, timeout_s, max_attempts };
    struct store_tx tx;
    int64_t id = 0;
    assert(s);
    if (!kind || !*kind)
        return errf(err, errlen, "inserting a job: empty kind");
    if (timeout_s < 1 || max_attempts < 1)
        return errf(err, errlen, "inserting a job: timeout_s (%d) and max_attempts (%d) "
                       "must be at least 1", timeout_s, max_attempts);
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    int ret = job_insert_tx(&tx, &j, store_now_ms(), &id, err, errlen);
    ret = store_tx_end(&tx, ret, err, errlen);
    if (ret == 0 && id_out)
        *id_out = id;
    return ret;
}

/* Records which gpuprobe stored the job's result. */
static int stamp_version(struct store_tx *tx, int64_t id, char *err, size_t errlen)
{
    return conn_exec(tx->c, "UPDATE jobs SET gpuprobe_version = ?2 WHERE id = ?1",
                     DB_ARGS(DB_INT(id), DB_TEXT(gpuprobe_version())), "stamping a job", err,
                     errlen);
}

/* ---- a job that ran elsewhere ------------------------------------------- */

static int record_tx(struct store_tx *tx, const struct job_in *j, const char *result_json,
                     store_result_saver save, int64_t *id, char *err, size_t errlen)
{
    int ret = job_insert_tx(tx, j, store_now_ms(), id, err, errlen);
    if (ret == 0)
        ret = tx_transition(tx, *id, start_sql, NULL, JOB_RUNNING, "started", err, errlen);
    if (ret == 0)
        ret = tx_transition(tx, *id, succeed_sql, result_json, JOB_SUCCEEDED, "succeeded",
                            err, errlen);
    if (ret == 1)   /* cannot happen inside the transaction; be strict anyway */
        ret = errf(err, errlen, "recording job %lld: state changed", (long long)*id);
    if (ret == 0)
        ret = stamp_version(tx, *id, err, errlen);
    if (ret == 0)
        ret = store_tx_save_result(tx, *id, result_json, NULL, save, err, errlen);
    return ret;
}

int store_job_record(store *s, const char *kind, const char *device, const char *params_json,
                     int timeout_s, const char *result_json, store_result_saver save,
                     int64_t *id_out, char *err, size_t errlen)
{
    struct job_in j = { kind, device, params_json, timeout_s, 1 };
    struct store_tx tx;
    int64_t id = 0;
    assert(s && result_json);
    if (!kind || !*kind || timeout_s < 1)
        return errf(err, errlen, "recording a job: empty kind or timeout_s below 1");
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    int ret = store_tx_end(&tx, record_tx(&tx, &j, result_json, save, &id, err, errlen), err,
                           errlen);
    if (ret == 0 && id_out)
        *id_out = id;
    return ret;
}

/* ---- simple transitions ------------------------------------------------- */

int store_job_start(store *s, int64_t id, char *err, size_t errlen)
{
    return job_transition(s, id, start_sql, NULL, JOB_RUNNING, "started", err, errlen);
}

int store_job_fail(store *s, int64_t id, const char *reason, const char *detail_json, char *err,
                   size_t errlen)
{
    const char *why = reason && *reason ? reason : "unknown reason";
    struct store_tx tx;
    int changed = 0;
    assert(s && id > 0);
    char *msg = sqlite3_mprintf("failed: %s", why);
    if (!msg)
        return errf(err, errlen, "updating job %lld: out of memory", (long long)id);
    int ret = store_tx_begin(s, &tx, err, errlen);
    if (ret == 0) {
        ret = tx_transition(&tx, id, fail_sql, why, JOB_FAILED, msg, err, errlen);
        if (ret == 0 && detail_json)
            ret = tx_update(&tx, fail_detail_sql, id, detail_json, 0, &changed, err, errlen);
        ret = store_tx_end(&tx, ret, err, errlen);
    }
    sqlite3_free(msg);
    return ret;
}

int store_job_cancelled(store *s, int64_t id, char *err, size_t errlen)
{
    return job_transition(s, id, cancelled_sql, CANCEL_REASON, JOB_CANCELLED, "cancelled",
                          err, errlen);
}

int store_job_succeed(store *s, int64_t id, const char *result_json, store_result_saver save,
                      char *err, size_t errlen)
{
    struct store_tx tx;
    assert(s && id > 0 && result_json);
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    int ret = tx_transition(&tx, id, succeed_sql, result_json, JOB_SUCCEEDED, "succeeded",
                            err, errlen);
    if (ret == 0 && stamp_version(&tx, id, err, errlen) != 0)
        ret = -1;
    if (ret == 0 && store_tx_save_result(&tx, id, result_json, NULL, save, err, errlen) != 0)
        ret = -1;
    return store_tx_end(&tx, ret, err, errlen);
}

/* ---- interruption ------------------------------------------------------- */

struct running_job {
    int attempt, max_attempts, cancel_requested;
};

static int take_running(const struct db_row *r)
{
    *(struct running_job *)r->ctx = (struct running_job){
        sqlite3_column_int(r->st, 0), sqlite3_column_int(r->st, 1), sqlite3_column_int(r->st, 2)};
    return 0;
}

/* 0 and the counts if job id is running, 1 if not. */
static int running_counts(struct store_tx *tx, int64_t id, struct running_job *r,
                          char *err, size_t errlen)
{
    return conn_row(tx->c,
                    "SELECT attempt, max_attempts, cancel_requested FROM jobs"
                    " WHERE id = ?1 AND state = 'running'",
                    DB_ARGS(DB_INT(id)), take_running, r, "reading a running job", err, errlen);
}

/* What becomes of an interrupted job: its UPDATE, new state and texts. */
struct fate {
    const char *sql;
    enum job_state to;
    char *text, *msg;      /* sqlite3_mprintf'd */
    int requeue;
};

/* Requested cancellation wins; then a retry while attempts remain (an
 * uncounted interruption, an operator's stop, always retries and gives its
 * attempt back). */
static int interrupt_fate(const struct running_job *r, const char *why, int counted,
                          struct fate *f)
{
    if (r->cancel_requested) {
        *f = (struct fate){ cancelled_sql, JOB_CANCELLED, sqlite3_mprintf("%s", CANCEL_REASON),
                            sqlite3_mprintf("cancelled (interrupted: %s)", why), 0 };
    } else if (!counted) {
        *f = (struct fate){ requeue_uncounted_sql, JOB_QUEUED, sqlite3_mprintf("%s", why),
                            sqlite3_mprintf("re-queued, attempt %d not counted: %s",
                                            r->attempt, why), 1 };
    } else if (r->attempt < r->max_attempts) {
        *f = (struct fate){ requeue_sql, JOB_QUEUED, sqlite3_mprintf("%s", why),
                            sqlite3_mprintf("re-queued after attempt %d of %d: %s",
                                            r->attempt, r->max_attempts, why), 1 };
    } else {
        char *text = sqlite3_mprintf("gave up after %d attempts: %s", r->attempt, why);
        *f = (struct fate){ fail_sql, JOB_FAILED, text,
                            text ? sqlite3_mprintf("failed: %s", text) : NULL, 0 };
    }
    return f->text && f->msg ? 0 : -1;
}

static int interrupt_apply(struct store_tx *tx, int64_t id, const struct running_job *r,
                           const char *why, int counted, int *requeued, char *err,
                           size_t errlen)
{
    struct fate f;
    int ret = interrupt_fate(r, why, counted, &f) != 0
                  ? errf(err, errlen, "interrupting job %lld: out of memory", (long long)id)
                  : tx_transition(tx, id, f.sql, f.text, f.to, f.msg, err, errlen);
    *requeued = ret == 0 && f.requeue;
    sqlite3_free(f.text);
    sqlite3_free(f.msg);
    return ret;
}

static int interrupt_tx(struct store_tx *tx, int64_t id, const char *reason, int counted,
                        int *requeued, char *err, size_t errlen)
{
    struct running_job r;
    int ret = running_counts(tx, id, &r, err, errlen);
    if (ret != 0)
        return ret;
    return interrupt_apply(tx, id, &r, reason && *reason ? reason : "interrupted", counted,
                           requeued, err, errlen);
}

static int interrupt_one(store *s, int64_t id, const char *reason, int counted, int *requeued,
                         char *err, size_t errlen)
{
    struct store_tx tx;
    int rq = 0;
    assert(s && id > 0);
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    int ret = store_tx_end(&tx, interrupt_tx(&tx, id, reason, counted, &rq, err, errlen), err,
                           errlen);
    if (requeued)
        *requeued = ret == 0 && rq;
    return ret;
}

int store_job_interrupt(store *s, int64_t id, const char *reason, int *requeued,
                        char *err, size_t errlen)
{
    return interrupt_one(s, id, reason, 1, requeued, err, errlen);
}

int store_job_stopped(store *s, int64_t id, const char *reason, char *err, size_t errlen)
{
    return interrupt_one(s, id, reason, 0, NULL, err, errlen);
}

/* The id of a running job, appended to a malloc'd array. */
static int take_running_id(const struct db_row *r)
{
    int64_t *id = db_row_slot(r, "listing running jobs");
    if (!id)
        return -1;
    *id = sqlite3_column_int64(r->st, 0);
    ((struct db_array *)r->ctx)->n++;
    return 0;
}

static int recover_tx(struct store_tx *tx, const char *reason, int *count,
                      char *err, size_t errlen)
{
    struct db_array a = {NULL, 0, 0, sizeof(int64_t)};
    int ret = conn_rows(tx->c, "SELECT id FROM jobs WHERE state = 'running' ORDER BY id", NULL, 0,
                        take_running_id, &a, "listing running jobs", err, errlen);
    const int64_t *ids = a.items;
    for (size_t i = 0; ret == 0 && i < a.n; i++) {
        int rq;
        ret = interrupt_tx(tx, ids[i], reason, 1, &rq, err, errlen);
        if (ret == 1)   /* cannot happen inside the transaction; be strict anyway */
            ret = errf(err, errlen, "recovering job %lld: no longer running",
                          (long long)ids[i]);
    }
    free(a.items);
    *count = ret == 0 ? (int)a.n : 0;
    return ret;
}

int store_jobs_recover(store *s, const char *reason, int *count, char *err, size_t errlen)
{
    struct store_tx tx;
    int c = 0;
    assert(s);
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    int ret = store_tx_end(&tx, recover_tx(&tx, reason, &c, err, errlen), err, errlen);
    if (count)
        *count = ret == 0 ? c : 0;
    return ret;
}

/* ---- cancellation ------------------------------------------------------- */

struct state_flag {
    enum job_state state;
    int cancel_requested;
};

static int take_state_flag(const struct db_row *r)
{
    struct state_flag *f = r->ctx;
    f->cancel_requested = sqlite3_column_int(r->st, 1);
    return state_col(r->st, 0, &f->state, r->err, r->errlen);
}

static int cancel_tx(struct store_tx *tx, int64_t id, enum job_state *state_out,
                     char *err, size_t errlen)
{
    struct state_flag f = {JOB_QUEUED, 0};
    int ret = conn_row(tx->c, "SELECT state, cancel_requested FROM jobs WHERE id = ?1",
                       DB_ARGS(DB_INT(id)), take_state_flag, &f, "reading a job", err, errlen);
    *state_out = f.state;
    if (ret != 0)
        return ret;
    if (f.state == JOB_QUEUED) {
        *state_out = JOB_CANCELLED;
        ret = tx_transition(tx, id, cancel_queued_sql, CANCEL_REASON, JOB_CANCELLED,
                            "cancelled", err, errlen);
    } else if (f.state == JOB_RUNNING && !f.cancel_requested) {
        ret = tx_transition(tx, id, cancel_request_sql, NULL, JOB_RUNNING, "cancel requested",
                            err, errlen);
    }
    return ret == 1 ? errf(err, errlen, "cancelling job %lld: state changed",
                              (long long)id) : ret;
}

int store_job_cancel(store *s, int64_t id, enum job_state *state_out, char *err, size_t errlen)
{
    struct store_tx tx;
    enum job_state st = JOB_QUEUED;
    assert(s);
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    int ret = store_tx_end(&tx, cancel_tx(&tx, id, &st, err, errlen), err, errlen);
    if (ret == 0 && state_out)
        *state_out = st;
    return ret;
}

/* ---- reads -------------------------------------------------------------- */

int store_job_get(store *s, int64_t id, struct job_row *out, char *err, size_t errlen)
{
    assert(s && out);
    memset(out, 0, sizeof *out);
    return store_read(s, conn_row,
                      "SELECT " JOB_COLS ", error, error_detail, result_json, gpuprobe_version,"
                      " origin_host, origin_job FROM jobs"
                      " WHERE id = ?1",
                      DB_ARGS(DB_INT(id)), take_job, out, "reading a job", err, errlen);
}

/* An event, appended to a malloc'd array. */
static int take_event(const struct db_row *r)
{
    struct job_event *e = db_row_slot(r, "reading job events");
    if (!e)
        return -1;
    e->at_ms = sqlite3_column_int64(r->st, 0);
    if (state_col(r->st, 1, &e->state, r->err, r->errlen) != 0)
        return -1;
    if (col_strdup(r->st, 2, &e->message) != 0)
        return errf(r->err, r->errlen, "reading job events: out of memory");
    ((struct db_array *)r->ctx)->n++;
    return 0;
}

static void release_events(void *ev, size_t n)
{
    job_events_free(ev, n);
}

int store_job_events(store *s, int64_t id, struct job_event **ev, size_t *n,
                     char *err, size_t errlen)
{
    void *items = NULL;
    assert(s && ev && n);
    int ret = store_list(s,
                         "SELECT at_ms, state, message FROM job_events WHERE job_id = ?1"
                         " ORDER BY id",
                         DB_ARGS(DB_INT(id)), take_event, sizeof **ev, release_events, &items, n,
                         "reading job events", err, errlen);
    *ev = items;
    return ret;
}

/* ---- listing ------------------------------------------------------------ */

/* ?1 before_id, ?2 state, ?3 device, ?4 kind, ?5 limit; absent filters are
 * left out of the text (their parameters stay bound but unused). */
static void list_sql(const struct job_filter *f, char *sql, size_t len)
{
    snprintf(sql, len, "SELECT " JOB_COLS ", error, error_detail FROM jobs WHERE id < ?1%s%s%s"
             " ORDER BY id DESC LIMIT ?5",
             f->state >= 0 ? " AND state = ?2" : "",
             f->device ? " AND device = ?3" : "",
             f->kind ? " AND kind = ?4" : "");
}

int store_job_list(store *s, const struct job_filter *f, struct job_row **rows, size_t *n,
                   char *err, size_t errlen)
{
    char sql[512];
    assert(s && f && rows && n);
    *rows = NULL;
    *n = 0;
    if (f->limit < 1)
        return errf(err, errlen, "listing jobs: limit %d is below 1", f->limit);
    if (f->state >= JOB_STATE_COUNT)
        return errf(err, errlen, "listing jobs: unknown state %d", f->state);
    list_sql(f, sql, sizeof sql);
    return list_query(s, sql,
                      DB_ARGS(DB_INT(f->before_id > 0 ? f->before_id : INT64_MAX),
                              DB_TEXT(f->state >= 0 ? job_state_name((enum job_state)f->state)
                                                    : NULL),
                              DB_TEXT(f->device), DB_TEXT(f->kind), DB_INT(f->limit)),
                      rows, n, err, errlen);
}

int store_jobs_queued(store *s, int limit, struct job_row **rows, size_t *n,
                      char *err, size_t errlen)
{
    assert(s && rows && n);
    *rows = NULL;
    *n = 0;
    if (limit < 1)
        return errf(err, errlen, "listing queued jobs: limit %d is below 1", limit);
    return list_query(s, "SELECT " JOB_COLS " FROM jobs WHERE state = 'queued' ORDER BY id"
                         " LIMIT ?1",
                      DB_ARGS(DB_INT(limit)), rows, n, err, errlen);
}

/* ---- counts ------------------------------------------------------------- */

static int take_count(const struct db_row *r)
{
    enum job_state js = JOB_QUEUED;
    if (state_col(r->st, 0, &js, r->err, r->errlen) != 0)
        return -1;
    ((int64_t *)r->ctx)[js] = sqlite3_column_int64(r->st, 1);
    return 0;
}

int store_job_counts(store *s, int64_t counts[JOB_STATE_COUNT], char *err, size_t errlen)
{
    assert(s && counts);
    for (int i = 0; i < JOB_STATE_COUNT; i++)
        counts[i] = 0;
    return store_read(s, conn_rows, "SELECT state, count(*) FROM jobs GROUP BY state", NULL, 0,
                      take_count, counts, "counting jobs", err, errlen);
}

struct kind_counts {
    int (*fn)(void *ctx, const char *kind, enum job_state st, int64_t n);
    void *ctx;
};

static int take_kind_count(const struct db_row *r)
{
    const struct kind_counts *k = r->ctx;
    enum job_state js = JOB_QUEUED;
    if (state_col(r->st, 1, &js, r->err, r->errlen) != 0)
        return -1;
    return k->fn(k->ctx, (const char *)sqlite3_column_text(r->st, 0), js,
                 sqlite3_column_int64(r->st, 2));
}

int store_job_counts_by_kind(store *s,
                             int (*fn)(void *ctx, const char *kind, enum job_state st, int64_t n),
                             void *ctx, char *err, size_t errlen)
{
    assert(s && fn);
    struct kind_counts k = {fn, ctx};
    return store_read(s, conn_rows,
                      "SELECT kind, state, count(*) FROM jobs GROUP BY kind, state"
                      " ORDER BY kind, state",
                      NULL, 0, take_kind_count, &k, "counting jobs by kind", err, errlen);
}
