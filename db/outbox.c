/*
 * The outbox and the pushes' outcome (see outbox.h).
 */
#include <assert.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/outbox.h"
#include "db/store_internal.h"

/* store_meta names: the upstream, and the newest push outcome. */
#define META_UPSTREAM "upstream"
#define META_SUCCESS "upstream_last_success_ms"
#define META_ERROR "upstream_last_error"
#define META_ERROR_AT "upstream_last_error_ms"

static const char meta_put_sql[] =
    "INSERT INTO store_meta (name, value) VALUES (?1, ?2)"
    " ON CONFLICT (name) DO UPDATE SET value = excluded.value";

static int meta_put(struct store_tx *tx, const char *name, const char *value, char *err,
                    size_t errlen)
{
    return conn_exec(tx->c, meta_put_sql, DB_ARGS(DB_TEXT(name), DB_TEXT(value)),
                     "writing a store setting", err, errlen);
}

static int meta_put_ms(struct store_tx *tx, const char *name, int64_t ms, char *err,
                       size_t errlen)
{
    char text[24];
    snprintf(text, sizeof text, "%lld", (long long)ms);
    return meta_put(tx, name, text, err, errlen);
}

int outbox_set_upstream(store *s, const char *url, char *err, size_t errlen)
{
    struct store_tx tx;
    assert(s);
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    int ret = url && *url ? meta_put(&tx, META_UPSTREAM, url, err, errlen)
                          : conn_exec(tx.c, "DELETE FROM store_meta WHERE name = ?1",
                                      DB_ARGS(DB_TEXT(META_UPSTREAM)), "clearing the upstream",
                                      err, errlen);
    return store_tx_end(&tx, ret, err, errlen);
}

/* ---- queueing ---------------------------------------------------------------- */

int outbox_add_tx(struct store_tx *tx, int64_t job_id, char *err, size_t errlen)
{
    store_tx_assert_live(tx);
    assert(job_id > 0);
    int64_t now = store_now_ms();
    return conn_exec(tx->c,
                     "INSERT INTO outbox (job_id, created_ms, next_attempt_ms)"
                     " SELECT ?1, ?2, ?2 WHERE EXISTS"
                     " (SELECT 1 FROM store_meta WHERE name = '" META_UPSTREAM "')"
                     " ON CONFLICT (job_id) DO NOTHING",
                     DB_ARGS(DB_INT(job_id), DB_INT(now)), "queueing a result to push", err,
                     errlen);
}

/* ---- reading rows ------------------------------------------------------------ */

static const struct col_field outbox_fields[] = {
    {0, 'I', offsetof(struct outbox_row, job_id)},
    {1, 't', offsetof(struct outbox_row, kind)},
    {2, 't', offsetof(struct outbox_row, device)},
    {3, 'I', offsetof(struct outbox_row, created_ms)},
    {4, 'i', offsetof(struct outbox_row, attempts)},
    {5, 'I', offsetof(struct outbox_row, next_attempt_ms)},
    {6, 't', offsetof(struct outbox_row, last_error)},
    {7, 'i', offsetof(struct outbox_row, refused)},
};
#define OUTBOX_FIELDS (sizeof outbox_fields / sizeof outbox_fields[0])

#define OUTBOX_COLS                                                                        \
    "SELECT o.job_id, j.kind, j.device, o.created_ms, o.attempts, o.next_attempt_ms,"     \
    " o.last_error, o.refused FROM outbox o JOIN jobs j ON j.id = o.job_id"

void outbox_rows_free(struct outbox_row *rows, size_t n)
{
    fields_free_rows(rows, n, sizeof *rows, outbox_fields, OUTBOX_FIELDS);
}

static void release_rows(void *items, size_t n)
{
    outbox_rows_free(items, n);
}

static int take_row(const struct db_row *r)
{
    struct outbox_row *o = db_row_slot(r, "reading the outbox");
    if (!o)
        return -1;
    if (fields_read(r->st, o, outbox_fields, OUTBOX_FIELDS) != 0) {
        fields_free(o, sizeof *o, outbox_fields, OUTBOX_FIELDS);
        return errf(r->err, r->errlen, "reading the outbox: out of memory");
    }
    ((struct db_array *)r->ctx)->n++;
    return 0;
}

int outbox_due(store *s, int64_t now, int limit, struct outbox_row **rows, size_t *n,
               char *err, size_t errlen)
{
    void *items = NULL;
    assert(s && rows && n && limit >= 1);
    int ret = store_list(s,
                         OUTBOX_COLS " WHERE o.refused = 0 AND o.next_attempt_ms <= ?1"
                                     " ORDER BY o.next_attempt_ms, o.job_id LIMIT ?2",
                         DB_ARGS(DB_INT(now), DB_INT(limit)), take_row, sizeof **rows,
                         release_rows, &items, n, "reading the outbox", err, errlen);
    *rows = items;
    return ret;
}

int outbox_due_all(store *s, int64_t now, char *err, size_t errlen)
{
    struct store_tx tx;
    assert(s);
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    int ret = conn_exec(tx.c, "UPDATE outbox SET next_attempt_ms = ?1 WHERE refused = 0",
                        DB_ARGS(DB_INT(now)), "making the outbox due", err, errlen);
    return store_tx_end(&tx, ret, err, errlen);
}

int outbox_requeue_refused(store *s, int64_t now, char *err, size_t errlen)
{
    struct store_tx tx;
    int n = 0;
    assert(s);
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    int ret = conn_exec(tx.c, "UPDATE outbox SET refused = 0, next_attempt_ms = ?1 WHERE refused = 1",
                        DB_ARGS(DB_INT(now)), "sending refused results again", err, errlen);
    if (ret == 0)
        n = sqlite3_changes(tx.c->db);
    return store_tx_end(&tx, ret, err, errlen) != 0 ? -1 : n;
}

static int take_nothing(const struct db_row *r)
{
    (void)r;
    return 0;
}

int outbox_held(store *s, int64_t job_id, char *err, size_t errlen)
{
    assert(s);
    int rc = store_read(s, conn_row, "SELECT 1 FROM outbox WHERE job_id = ?1",
                        DB_ARGS(DB_INT(job_id)), take_nothing, NULL, "reading the outbox", err,
                        errlen);
    return rc < 0 ? -1 : rc == 0;
}

int outbox_list(store *s, int limit, struct outbox_row **rows, size_t *n, char *err,
                size_t errlen)
{
    void *items = NULL;
    assert(s && rows && n && limit >= 1);
    /* the waiting rows first: refused ones, never tried again, would
     * otherwise push them out of the first `limit` */
    int ret = store_list(s, OUTBOX_COLS " ORDER BY o.refused, o.created_ms, o.job_id LIMIT ?1",
                         DB_ARGS(DB_INT(limit)), take_row, sizeof **rows, release_rows, &items,
                         n, "reading the outbox", err, errlen);
    *rows = items;
    return ret;
}

/* ---- outcomes ------------------------------------------------------------------ */

/* 1 when the statement just run in tx changed no row. */
static int none_changed(const struct store_tx *tx)
{
    return sqlite3_changes(tx->c->db) == 0;
}

int outbox_ack(store *s, int64_t job_id, int64_t now, char *err, size_t errlen)
{
    struct store_tx tx;
    assert(s && job_id > 0);
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    int ret = conn_exec(tx.c, "DELETE FROM outbox WHERE job_id = ?1", DB_ARGS(DB_INT(job_id)),
                        "removing an acknowledged result", err, errlen);
    if (ret == 0 && none_changed(&tx))
        ret = 1;
    if (ret == 0)
        ret = meta_put_ms(&tx, META_SUCCESS, now, err, errlen);
    return store_tx_end(&tx, ret, err, errlen);
}

/* Counts a failed attempt of job_id (refused, or to be made again at
 * next_ms) and keeps its reason as the row's and the newest error. */
static int note_failure(store *s, int64_t job_id, int64_t now, int refused, int64_t next_ms,
                        const char *reason, char *err, size_t errlen)
{
    struct store_tx tx;
    assert(s && job_id > 0 && reason);
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    int ret = conn_exec(tx.c,
                        "UPDATE outbox SET attempts = attempts + 1, refused = ?2,"
                        " next_attempt_ms = ?3, last_error = ?4 WHERE job_id = ?1",
                        DB_ARGS(DB_INT(job_id), DB_INT(refused), DB_INT(next_ms),
                                DB_TEXT(reason)),
                        "recording a failed push", err, errlen);
    if (ret == 0 && none_changed(&tx))
        ret = 1;
    if (ret == 0)
        ret = meta_put(&tx, META_ERROR, reason, err, errlen);
    if (ret == 0)
        ret = meta_put_ms(&tx, META_ERROR_AT, now, err, errlen);
    return store_tx_end(&tx, ret, err, errlen);
}

int outbox_retry(store *s, int64_t job_id, int64_t now, int64_t next_ms, const char *reason,
                 char *err, size_t errlen)
{
    return note_failure(s, job_id, now, 0, next_ms, reason, err, errlen);
}

int outbox_refuse(store *s, int64_t job_id, int64_t now, const char *reason, char *err,
                  size_t errlen)
{
    /* next_attempt_ms keeps when it was refused: it is never due again */
    return note_failure(s, job_id, now, 1, now, reason, err, errlen);
}

/* ---- the summary ------------------------------------------------------------------ */

void outbox_summary_free(struct outbox_summary *m)
{
    if (!m)
        return;
    free(m->upstream);
    free(m->last_error);
    memset(m, 0, sizeof *m);
}

static int take_counts(const struct db_row *r)
{
    struct outbox_summary *m = r->ctx;
    m->pending = sqlite3_column_int64(r->st, 0);
    m->refused = sqlite3_column_int64(r->st, 1);
    m->attempts = sqlite3_column_int64(r->st, 2);
    m->next_attempt_ms = sqlite3_column_int64(r->st, 3);
    return 0;
}

static int take_meta(const struct db_row *r)
{
    struct outbox_summary *m = r->ctx;
    const char *name = (const char *)sqlite3_column_text(r->st, 0);
    char **text = NULL;
    if (strcmp(name, META_UPSTREAM) == 0)
        text = &m->upstream;
    else if (strcmp(name, META_ERROR) == 0)
        text = &m->last_error;
    else if (strcmp(name, META_SUCCESS) == 0)
        m->last_success_ms = sqlite3_column_int64(r->st, 1);
    else if (strcmp(name, META_ERROR_AT) == 0)
        m->last_error_ms = sqlite3_column_int64(r->st, 1);
    if (text && col_strdup(r->st, 1, text) != 0)
        return errf(r->err, r->errlen, "reading the push state: out of memory");
    return 0;
}

/* The counts and the settings, read on one reader: one snapshot. */
static int read_summary(struct conn *c, const char *sql, const struct db_arg *args, size_t n,
                        row_fn take, void *ctx, const char *what, char *err, size_t errlen)
{
    (void)sql, (void)args, (void)n, (void)take;
    if (conn_run(c, "BEGIN", err, errlen) != 0)
        return -1;
    int ret = conn_row(c,
                       "SELECT COALESCE(SUM(refused = 0), 0), COALESCE(SUM(refused), 0),"
                       " COALESCE(SUM(attempts), 0),"
                       " COALESCE(MIN(CASE WHEN refused = 0 THEN next_attempt_ms END), 0)"
                       " FROM outbox",
                       NULL, 0, take_counts, ctx, what, err, errlen);
    if (ret == 0)
        ret = conn_rows(c,
                        "SELECT name, value FROM store_meta WHERE name IN ('" META_UPSTREAM
                        "', '" META_SUCCESS "', '" META_ERROR "', '" META_ERROR_AT "')",
                        NULL, 0, take_meta, ctx, what, err, errlen);
    char ignored[64];
    conn_run(c, "COMMIT", ignored, sizeof ignored);
    return ret;
}

int outbox_summary_get(store *s, struct outbox_summary *out, char *err, size_t errlen)
{
    assert(s && out);
    memset(out, 0, sizeof *out);
    int ret = store_read(s, read_summary, NULL, NULL, 0, NULL, out, "reading the outbox", err,
                         errlen);
    if (ret != 0)
        outbox_summary_free(out);
    return ret;
}
