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
 * by keyset: id < before_id ORDER BY id DESC LIMIT n.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/store_internal.h"

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
    return (unsigned)st < JOB_STATE_COUNT ? state_names[st] : "unknown";
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
    return st == JOB_SUCCEEDED || st == JOB_FAILED || st == JOB_CANCELLED;
}

/* ---- freeing ------------------------------------------------------------ */

void job_row_free(struct job_row *j)
{
    if (!j)
        return;
    free(j->kind);
    free(j->device);
    free(j->params_json);
    free(j->error);
    free(j->error_detail);
    free(j->result_json);
    memset(j, 0, sizeof *j);
}

void job_rows_free(struct job_row *rows, size_t n)
{
    for (size_t i = 0; rows && i < n; i++)
        job_row_free(&rows[i]);
    free(rows);
}

void job_events_free(struct job_event *ev, size_t n)
{
    for (size_t i = 0; ev && i < n; i++)
        free(ev[i].message);
    free(ev);
}

/* ---- reading rows ------------------------------------------------------- */

/* Columns 0..11; a query may add error (12), error_detail (13) and
 * result_json (14). */
#define JOB_COLS "id, kind, device, params_json, state, attempt, max_attempts, timeout_s," \
                 " cancel_requested, created_ms, started_ms, finished_ms"

static int state_col(sqlite3_stmt *st, int col, enum job_state *out, char *err, size_t errlen)
{
    const char *name = (const char *)sqlite3_column_text(st, col);
    int v = job_state_parse(name);
    if (v < 0)
        return db_fail(err, errlen, "unknown job state '%s' in the database",
                       name ? name : "(null)");
    *out = (enum job_state)v;
    return 0;
}

static int job_texts(sqlite3_stmt *st, struct job_row *j)
{
    int ncol = sqlite3_column_count(st);
    if (col_strdup(st, 1, &j->kind) || col_strdup(st, 2, &j->device)
        || col_strdup(st, 3, &j->params_json))
        return -1;
    if (ncol > 12 && col_strdup(st, 12, &j->error))
        return -1;
    if (ncol > 13 && col_strdup(st, 13, &j->error_detail))
        return -1;
    if (ncol > 14 && col_strdup(st, 14, &j->result_json))
        return -1;
    return 0;
}

static int job_from_row(sqlite3_stmt *st, struct job_row *j, char *err, size_t errlen)
{
    memset(j, 0, sizeof *j);
    j->id = sqlite3_column_int64(st, 0);
    if (state_col(st, 4, &j->state, err, errlen) != 0)
        return -1;
    if (job_texts(st, j) != 0) {
        job_row_free(j);
        return db_fail(err, errlen, "reading job %lld: out of memory", (long long)j->id);
    }
    j->attempt = sqlite3_column_int(st, 5);
    j->max_attempts = sqlite3_column_int(st, 6);
    j->timeout_s = sqlite3_column_int(st, 7);
    j->cancel_requested = sqlite3_column_int(st, 8);
    j->created_ms = sqlite3_column_int64(st, 9);
    j->started_ms = sqlite3_column_int64(st, 10);    /* NULL reads as 0 */
    j->finished_ms = sqlite3_column_int64(st, 11);
    return 0;
}

/* Steps st to the end, appending each row to a malloc'd array. */
static int collect_jobs(sqlite3_stmt *st, struct job_row **rows, size_t *n,
                        char *err, size_t errlen)
{
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            struct job_row *r = realloc(*rows, cap * sizeof *r);
            if (!r)
                return db_fail(err, errlen, "listing jobs: out of memory");
            *rows = r;
        }
        if (job_from_row(st, &(*rows)[*n], err, errlen) != 0)
            return -1;
        (*n)++;
    }
    return rc == SQLITE_DONE ? 0 : db_sqlfail(err, errlen, sqlite3_db_handle(st), "listing jobs");
}

/* Runs a prepared, bound listing query and hands back its rows (or none). */
static int list_run(sqlite3_stmt *st, struct job_row **rows, size_t *n,
                    char *err, size_t errlen)
{
    *rows = NULL;
    *n = 0;
    int ret = collect_jobs(st, rows, n, err, errlen);
    stmt_done(st);
    if (ret != 0) {
        job_rows_free(*rows, *n);
        *rows = NULL;
        *n = 0;
    }
    return ret;
}

/* ---- writing helpers ---------------------------------------------------- */

static int event_add(struct store_tx *tx, int64_t id, int64_t now, enum job_state to,
                     const char *msg, char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(tx->c,
        "INSERT INTO job_events (job_id, at_ms, state, message) VALUES (?1, ?2, ?3, ?4)",
        err, errlen);
    if (!st)
        return -1;
    if (sqlite3_bind_int64(st, 1, id) || sqlite3_bind_int64(st, 2, now)
        || sqlite3_bind_text(st, 3, job_state_name(to), -1, SQLITE_STATIC)
        || sqlite3_bind_text(st, 4, msg, -1, SQLITE_STATIC)) {
        stmt_done(st);
        return db_sqlfail(err, errlen, tx->c->db, "recording a job event");
    }
    return stmt_finish(st, "recording a job event", err, errlen);
}

/* Runs a transition UPDATE (?1 = id, ?2 = text, ?3 = now); *changed = rows hit. */
static int tx_update(struct store_tx *tx, const char *sql, int64_t id, const char *text,
                     int64_t now, int *changed, char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(tx->c, sql, err, errlen);
    if (!st)
        return -1;
    int np = sqlite3_bind_parameter_count(st);
    if (sqlite3_bind_int64(st, 1, id)
        || (np >= 2 && sqlite3_bind_text(st, 2, text, -1, SQLITE_STATIC))
        || (np >= 3 && sqlite3_bind_int64(st, 3, now))) {
        stmt_done(st);
        return db_sqlfail(err, errlen, tx->c->db, "updating a job");
    }
    if (stmt_finish(st, "updating a job", err, errlen) != 0)
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
    if (tx_update(tx, sql, id, text, now, &changed, err, errlen) != 0)
        return -1;
    if (!changed)
        return 1;
    return event_add(tx, id, now, to, msg, err, errlen);
}

/* Ends a transaction according to ret (0 commit, 1 or -1 roll back). */
static int tx_end(struct store_tx *tx, int ret, char *err, size_t errlen)
{
    if (ret != 0) {
        store_tx_rollback(tx);
        return ret;
    }
    return store_tx_commit(tx, err, errlen);
}

static int job_transition(store *s, int64_t id, const char *sql, const char *text,
                          enum job_state to, const char *msg, char *err, size_t errlen)
{
    struct store_tx tx;
    if (!msg)
        return db_fail(err, errlen, "updating job %lld: out of memory", (long long)id);
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    int ret = tx_transition(&tx, id, sql, text, to, msg, err, errlen);
    return tx_end(&tx, ret, err, errlen);
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
    sqlite3_stmt *st = conn_stmt(tx->c,
        "INSERT INTO jobs (kind, device, params_json, state, attempt, max_attempts,"
        " timeout_s, cancel_requested, created_ms)"
        " VALUES (?1, ?2, ?3, 'queued', 0, ?4, ?5, 0, ?6)", err, errlen);
    if (!st)
        return -1;
    if (sqlite3_bind_text(st, 1, j->kind, -1, SQLITE_STATIC)
        || sqlite3_bind_text(st, 2, j->device, -1, SQLITE_STATIC)
        || sqlite3_bind_text(st, 3, j->params_json ? j->params_json : "{}", -1, SQLITE_STATIC)
        || sqlite3_bind_int(st, 4, j->max_attempts) || sqlite3_bind_int(st, 5, j->timeout_s)
        || sqlite3_bind_int64(st, 6, now)) {
        stmt_done(st);
        return db_sqlfail(err, errlen, tx->c->db, "inserting a job");
    }
    if (stmt_finish(st, "inserting a job", err, errlen) != 0)
        return -1;
    *id = sqlite3_last_insert_rowid(tx->c->db);
    return event_add(tx, *id, now, JOB_QUEUED, "submitted", err, errlen);
}

int store_job_insert(store *s, const char *kind, const char *device, const char *params_json,
                     int timeout_s, int max_attempts, int64_t *id_out, char *err, size_t errlen)
{
    struct job_in j = { kind, device, params_json, timeout_s, max_attempts };
    struct store_tx tx;
    int64_t id = 0;
    if (!kind || !*kind)
        return db_fail(err, errlen, "inserting a job: empty kind");
    if (timeout_s < 1 || max_attempts < 1)
        return db_fail(err, errlen, "inserting a job: timeout_s (%d) and max_attempts (%d) "
                       "must be at least 1", timeout_s, max_attempts);
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    int ret = job_insert_tx(&tx, &j, store_now_ms(), &id, err, errlen);
    ret = tx_end(&tx, ret, err, errlen);
    if (ret == 0 && id_out)
        *id_out = id;
    return ret;
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
        ret = db_fail(err, errlen, "recording job %lld: state changed", (long long)*id);
    if (ret == 0 && save)
        ret = save(tx, *id, result_json, err, errlen);
    return ret;
}

int store_job_record(store *s, const char *kind, const char *device, const char *params_json,
                     int timeout_s, const char *result_json, store_result_saver save,
                     int64_t *id_out, char *err, size_t errlen)
{
    struct job_in j = { kind, device, params_json, timeout_s, 1 };
    struct store_tx tx;
    int64_t id = 0;
    if (!kind || !*kind || timeout_s < 1)
        return db_fail(err, errlen, "recording a job: empty kind or timeout_s below 1");
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    int ret = tx_end(&tx, record_tx(&tx, &j, result_json, save, &id, err, errlen), err, errlen);
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
    char *msg = sqlite3_mprintf("failed: %s", why);
    struct store_tx tx;
    int changed = 0;
    if (!msg)
        return db_fail(err, errlen, "updating job %lld: out of memory", (long long)id);
    int ret = store_tx_begin(s, &tx, err, errlen);
    if (ret == 0) {
        ret = tx_transition(&tx, id, fail_sql, why, JOB_FAILED, msg, err, errlen);
        if (ret == 0 && detail_json)
            ret = tx_update(&tx, fail_detail_sql, id, detail_json, 0, &changed, err, errlen);
        ret = tx_end(&tx, ret, err, errlen);
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
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    int ret = tx_transition(&tx, id, succeed_sql, result_json, JOB_SUCCEEDED, "succeeded",
                            err, errlen);
    if (ret == 0 && save && save(&tx, id, result_json, err, errlen) != 0)
        ret = -1;
    return tx_end(&tx, ret, err, errlen);
}

/* ---- interruption ------------------------------------------------------- */

struct running_job {
    int attempt, max_attempts, cancel_requested;
};

/* 0 and the counts if job id is running, 1 if not. */
static int running_counts(struct store_tx *tx, int64_t id, struct running_job *r,
                          char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(tx->c,
        "SELECT attempt, max_attempts, cancel_requested FROM jobs"
        " WHERE id = ?1 AND state = 'running'", err, errlen);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *r = (struct running_job){ sqlite3_column_int(st, 0), sqlite3_column_int(st, 1),
                                   sqlite3_column_int(st, 2) };
    else if (rc != SQLITE_DONE)
        db_sqlfail(err, errlen, tx->c->db, "reading a running job");
    stmt_done(st);
    return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : -1;
}

/* What becomes of an interrupted job: its UPDATE, new state and texts. */
struct fate {
    const char *sql;
    enum job_state to;
    char *text, *msg;      /* sqlite3_mprintf'd */
    int requeue;
};

/* Requested cancellation wins; then a retry while attempts remain. */
static int interrupt_fate(const struct running_job *r, const char *why, struct fate *f)
{
    if (r->cancel_requested) {
        *f = (struct fate){ cancelled_sql, JOB_CANCELLED, sqlite3_mprintf("%s", CANCEL_REASON),
                            sqlite3_mprintf("cancelled (interrupted: %s)", why), 0 };
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
                           const char *why, int *requeued, char *err, size_t errlen)
{
    struct fate f;
    int ret = interrupt_fate(r, why, &f) != 0
                  ? db_fail(err, errlen, "interrupting job %lld: out of memory", (long long)id)
                  : tx_transition(tx, id, f.sql, f.text, f.to, f.msg, err, errlen);
    *requeued = ret == 0 && f.requeue;
    sqlite3_free(f.text);
    sqlite3_free(f.msg);
    return ret;
}

static int interrupt_tx(struct store_tx *tx, int64_t id, const char *reason, int *requeued,
                        char *err, size_t errlen)
{
    struct running_job r;
    int ret = running_counts(tx, id, &r, err, errlen);
    if (ret != 0)
        return ret;
    return interrupt_apply(tx, id, &r, reason && *reason ? reason : "interrupted",
                           requeued, err, errlen);
}

int store_job_interrupt(store *s, int64_t id, const char *reason, int *requeued,
                        char *err, size_t errlen)
{
    struct store_tx tx;
    int rq = 0;
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    int ret = tx_end(&tx, interrupt_tx(&tx, id, reason, &rq, err, errlen), err, errlen);
    if (requeued)
        *requeued = ret == 0 && rq;
    return ret;
}

/* The ids of all running jobs, as a malloc'd array. */
static int running_ids(struct store_tx *tx, int64_t **ids, size_t *n, char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(tx->c, "SELECT id FROM jobs WHERE state = 'running' ORDER BY id",
                                 err, errlen);
    if (!st)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t *a = realloc(*ids, (*n + 1) * sizeof *a);
        if (!a) {
            stmt_done(st);
            return db_fail(err, errlen, "listing running jobs: out of memory");
        }
        *ids = a;
        a[(*n)++] = sqlite3_column_int64(st, 0);
    }
    if (rc != SQLITE_DONE)
        db_sqlfail(err, errlen, tx->c->db, "listing running jobs");
    stmt_done(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

static int recover_tx(struct store_tx *tx, const char *reason, int *count,
                      char *err, size_t errlen)
{
    int64_t *ids = NULL;
    size_t n = 0;
    int ret = running_ids(tx, &ids, &n, err, errlen);
    for (size_t i = 0; ret == 0 && i < n; i++) {
        int rq;
        ret = interrupt_tx(tx, ids[i], reason, &rq, err, errlen);
        if (ret == 1)   /* cannot happen inside the transaction; be strict anyway */
            ret = db_fail(err, errlen, "recovering job %lld: no longer running",
                          (long long)ids[i]);
    }
    free(ids);
    *count = ret == 0 ? (int)n : 0;
    return ret;
}

int store_jobs_recover(store *s, const char *reason, int *count, char *err, size_t errlen)
{
    struct store_tx tx;
    int c = 0;
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    int ret = tx_end(&tx, recover_tx(&tx, reason, &c, err, errlen), err, errlen);
    if (count)
        *count = ret == 0 ? c : 0;
    return ret;
}

/* ---- cancellation ------------------------------------------------------- */

/* The job's state and cancel flag; 1 if there is no such job. */
static int job_state_of(struct store_tx *tx, int64_t id, enum job_state *st_out,
                        int *cancel_requested, char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(tx->c,
        "SELECT state, cancel_requested FROM jobs WHERE id = ?1", err, errlen);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st), ret;
    if (rc == SQLITE_ROW) {
        ret = state_col(st, 0, st_out, err, errlen);
        *cancel_requested = sqlite3_column_int(st, 1);
    } else {
        ret = rc == SQLITE_DONE ? 1 : db_sqlfail(err, errlen, tx->c->db, "reading a job");
    }
    stmt_done(st);
    return ret;
}

static int cancel_tx(struct store_tx *tx, int64_t id, enum job_state *state_out,
                     char *err, size_t errlen)
{
    int requested = 0;
    int ret = job_state_of(tx, id, state_out, &requested, err, errlen);
    if (ret != 0)
        return ret;
    if (*state_out == JOB_QUEUED) {
        *state_out = JOB_CANCELLED;
        ret = tx_transition(tx, id, cancel_queued_sql, CANCEL_REASON, JOB_CANCELLED,
                            "cancelled", err, errlen);
    } else if (*state_out == JOB_RUNNING && !requested) {
        ret = tx_transition(tx, id, cancel_request_sql, NULL, JOB_RUNNING, "cancel requested",
                            err, errlen);
    }
    return ret == 1 ? db_fail(err, errlen, "cancelling job %lld: state changed",
                              (long long)id) : ret;
}

int store_job_cancel(store *s, int64_t id, enum job_state *state_out, char *err, size_t errlen)
{
    struct store_tx tx;
    enum job_state st = JOB_QUEUED;
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    int ret = tx_end(&tx, cancel_tx(&tx, id, &st, err, errlen), err, errlen);
    if (ret == 0 && state_out)
        *state_out = st;
    return ret;
}

/* ---- reads -------------------------------------------------------------- */

static int job_get_on(struct conn *c, int64_t id, struct job_row *out, char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(c,
        "SELECT " JOB_COLS ", error, error_detail, result_json FROM jobs WHERE id = ?1", err, errlen);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st), ret;
    if (rc == SQLITE_ROW)
        ret = job_from_row(st, out, err, errlen);
    else
        ret = rc == SQLITE_DONE ? 1 : db_sqlfail(err, errlen, c->db, "reading a job");
    stmt_done(st);
    return ret;
}

int store_job_get(store *s, int64_t id, struct job_row *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    struct conn *c = store_reader_get(s);
    int ret = job_get_on(c, id, out, err, errlen);
    store_reader_put(s, c);
    return ret;
}

static int event_append(sqlite3_stmt *st, struct job_event **ev, size_t *n, size_t *cap,
                        char *err, size_t errlen)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        struct job_event *e = realloc(*ev, *cap * sizeof *e);
        if (!e)
            return db_fail(err, errlen, "reading job events: out of memory");
        *ev = e;
    }
    struct job_event *e = &(*ev)[*n];
    memset(e, 0, sizeof *e);
    e->at_ms = sqlite3_column_int64(st, 0);
    if (state_col(st, 1, &e->state, err, errlen) != 0)
        return -1;
    if (col_strdup(st, 2, &e->message) != 0)
        return db_fail(err, errlen, "reading job events: out of memory");
    (*n)++;
    return 0;
}

static int events_on(struct conn *c, int64_t id, struct job_event **ev, size_t *n,
                     char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(c,
        "SELECT at_ms, state, message FROM job_events WHERE job_id = ?1 ORDER BY id",
        err, errlen);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, id);
    size_t cap = 0;
    int rc = SQLITE_DONE, ret = 0;
    while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW)
        ret = event_append(st, ev, n, &cap, err, errlen);
    if (ret == 0 && rc != SQLITE_DONE)
        ret = db_sqlfail(err, errlen, c->db, "reading job events");
    stmt_done(st);
    return ret;
}

int store_job_events(store *s, int64_t id, struct job_event **ev, size_t *n,
                     char *err, size_t errlen)
{
    *ev = NULL;
    *n = 0;
    struct conn *c = store_reader_get(s);
    int ret = events_on(c, id, ev, n, err, errlen);
    store_reader_put(s, c);
    if (ret != 0) {
        job_events_free(*ev, *n);
        *ev = NULL;
        *n = 0;
    }
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

static int list_bind(sqlite3_stmt *st, const struct job_filter *f)
{
    int64_t before = f->before_id > 0 ? f->before_id : INT64_MAX;
    const char *state = f->state >= 0 ? job_state_name((enum job_state)f->state) : NULL;
    return sqlite3_bind_int64(st, 1, before)
        || sqlite3_bind_text(st, 2, state, -1, SQLITE_STATIC)
        || sqlite3_bind_text(st, 3, f->device, -1, SQLITE_STATIC)
        || sqlite3_bind_text(st, 4, f->kind, -1, SQLITE_STATIC)
        || sqlite3_bind_int(st, 5, f->limit);
}

static int list_on(struct conn *c, const struct job_filter *f, struct job_row **rows,
                   size_t *n, char *err, size_t errlen)
{
    char sql[512];
    list_sql(f, sql, sizeof sql);
    sqlite3_stmt *st = conn_stmt(c, sql, err, errlen);
    if (!st)
        return -1;
    if (list_bind(st, f) != 0) {
        stmt_done(st);
        return db_sqlfail(err, errlen, c->db, "listing jobs");
    }
    return list_run(st, rows, n, err, errlen);
}

int store_job_list(store *s, const struct job_filter *f, struct job_row **rows, size_t *n,
                   char *err, size_t errlen)
{
    *rows = NULL;
    *n = 0;
    if (f->limit < 1)
        return db_fail(err, errlen, "listing jobs: limit %d is below 1", f->limit);
    if (f->state >= JOB_STATE_COUNT)
        return db_fail(err, errlen, "listing jobs: unknown state %d", f->state);
    struct conn *c = store_reader_get(s);
    int ret = list_on(c, f, rows, n, err, errlen);
    store_reader_put(s, c);
    return ret;
}

static int queued_on(struct conn *c, int limit, struct job_row **rows, size_t *n,
                     char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(c,
        "SELECT " JOB_COLS " FROM jobs WHERE state = 'queued' ORDER BY id LIMIT ?1",
        err, errlen);
    if (!st)
        return -1;
    sqlite3_bind_int(st, 1, limit);
    return list_run(st, rows, n, err, errlen);
}

int store_jobs_queued(store *s, int limit, struct job_row **rows, size_t *n,
                      char *err, size_t errlen)
{
    *rows = NULL;
    *n = 0;
    if (limit < 1)
        return db_fail(err, errlen, "listing queued jobs: limit %d is below 1", limit);
    struct conn *c = store_reader_get(s);
    int ret = queued_on(c, limit, rows, n, err, errlen);
    store_reader_put(s, c);
    return ret;
}

/* ---- counts ------------------------------------------------------------- */

static int counts_on(struct conn *c, int64_t counts[JOB_STATE_COUNT], char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(c, "SELECT state, count(*) FROM jobs GROUP BY state",
                                 err, errlen);
    if (!st)
        return -1;
    int rc = SQLITE_DONE, ret = 0;
    while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        enum job_state js = JOB_QUEUED;
        ret = state_col(st, 0, &js, err, errlen);
        if (ret == 0)
            counts[js] = sqlite3_column_int64(st, 1);
    }
    if (ret == 0 && rc != SQLITE_DONE)
        ret = db_sqlfail(err, errlen, c->db, "counting jobs");
    stmt_done(st);
    return ret;
}

int store_job_counts(store *s, int64_t counts[JOB_STATE_COUNT], char *err, size_t errlen)
{
    for (int i = 0; i < JOB_STATE_COUNT; i++)
        counts[i] = 0;
    struct conn *c = store_reader_get(s);
    int ret = counts_on(c, counts, err, errlen);
    store_reader_put(s, c);
    return ret;
}
