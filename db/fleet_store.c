/*
 * Fleet figures, store settings and the result hook (see fleet_store.h).
 */
#include <assert.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "db/fleet_store.h"
#include "db/store_internal.h"

/* ---- the job of a result ---------------------------------------------------- */

static int take_brief(const struct db_row *r)
{
    struct store_job_brief *b = r->ctx;
    const char *kind = (const char *)sqlite3_column_text(r->st, 0);
    const char *device = (const char *)sqlite3_column_text(r->st, 1);
    snprintf(b->kind, sizeof b->kind, "%s", kind ? kind : "");
    snprintf(b->device, sizeof b->device, "%s", device ? device : "");
    b->imported = sqlite3_column_type(r->st, 2) != SQLITE_NULL;
    return 0;
}

int store_job_brief_tx(struct store_tx *tx, int64_t job_id, struct store_job_brief *out,
                       char *err, size_t errlen)
{
    store_tx_assert_live(tx);
    memset(out, 0, sizeof *out);
    int rc = conn_row(tx->c, "SELECT kind, device, origin_host FROM jobs WHERE id = ?1",
                      DB_ARGS(DB_INT(job_id)), take_brief, out, "reading a job", err, errlen);
    if (rc == 1)
        return errf(err, errlen, "reading job %lld: no such job", (long long)job_id);
    return rc;
}

/* ---- writing figures -------------------------------------------------------- */

static const char put_sql[] =
    "INSERT INTO device_metrics (device, metric, value, text, job_id, measured_ms)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
    " ON CONFLICT (device, metric) DO UPDATE SET value = excluded.value,"
    " text = excluded.text, job_id = excluded.job_id, measured_ms = excluded.measured_ms"
    " WHERE excluded.measured_ms >= device_metrics.measured_ms";

int store_device_metrics_put(struct store_tx *tx, const char *device, int64_t job_id,
                             const struct store_metric *m, size_t n, char *err, size_t errlen)
{
    store_tx_assert_live(tx);
    assert(device && *device && job_id > 0 && (m || n == 0));
    int64_t at = store_tx_measured_ms(tx);
    for (size_t i = 0; i < n; i++) {
        struct db_arg value = m[i].text ? DB_TEXT(NULL) : DB_REAL(m[i].value);
        if (conn_exec(tx->c, put_sql,
                      DB_ARGS(DB_TEXT(device), DB_TEXT(m[i].name), value, DB_TEXT(m[i].text),
                              DB_INT(job_id), DB_INT(at)),
                      "storing a fleet figure", err, errlen) != 0)
            return -1;
    }
    return 0;
}

/* ---- reading figures -------------------------------------------------------- */

struct each_metric {
    int (*fn)(void *ctx, const struct store_metric_row *r);
    void *ctx;
};

static int take_metric(const struct db_row *r)
{
    const struct each_metric *e = r->ctx;
    struct store_metric_row row = {
        .device = (const char *)sqlite3_column_text(r->st, 0),
        .metric = (const char *)sqlite3_column_text(r->st, 1),
        .value = sqlite3_column_double(r->st, 2),
        .text = (const char *)sqlite3_column_text(r->st, 3),
        .job_id = sqlite3_column_int64(r->st, 4),
        .measured_ms = sqlite3_column_int64(r->st, 5),
    };
    return e->fn(e->ctx, &row);
}

int store_device_metrics_each(store *s, const char *device,
                              int (*fn)(void *ctx, const struct store_metric_row *r), void *ctx,
                              char *err, size_t errlen)
{
    assert(s && fn);
    struct each_metric e = {fn, ctx};
    if (device)
        return store_read(s, conn_rows,
                          "SELECT device, metric, value, text, job_id, measured_ms"
                          " FROM device_metrics WHERE device = ?1 ORDER BY metric",
                          DB_ARGS(DB_TEXT(device)), take_metric, &e, "reading fleet figures",
                          err, errlen);
    return store_read(s, conn_rows,
                      "SELECT device, metric, value, text, job_id, measured_ms"
                      " FROM device_metrics ORDER BY device, metric",
                      NULL, 0, take_metric, &e, "reading fleet figures", err, errlen);
}

/* ---- deriving them again --------------------------------------------------- */

struct replay {
    struct store_tx *tx;
    store_result_hook_fn *fn;
    void *ctx;
    size_t results;
};

static int take_result(const struct db_row *r)
{
    struct replay *p = r->ctx;
    p->results++;
    p->tx->measured_ms = sqlite3_column_int64(r->st, 2);
    json_t *doc = json_loads((const char *)sqlite3_column_text(r->st, 1), 0, NULL);
    if (!doc)
        return 0; /* a stored result that is not JSON has no figures */
    int rc = p->fn(p->ctx, p->tx, sqlite3_column_int64(r->st, 0), doc, r->err, r->errlen);
    json_decref(doc);
    return rc;
}

struct meta_out {
    char *buf;
    size_t len;
};

static int take_meta(const struct db_row *r)
{
    const struct meta_out *m = r->ctx;
    const char *v = (const char *)sqlite3_column_text(r->st, 0);
    snprintf(m->buf, m->len, "%s", v ? v : "");
    return 0;
}

static int read_setting(store *s, const char *name, char *buf, size_t len, char *err,
                        size_t errlen)
{
    buf[0] = '\0';
    struct meta_out m = {buf, len};
    return store_read(s, conn_row, "SELECT value FROM store_meta WHERE name = ?1",
                      DB_ARGS(DB_TEXT(name)), take_meta, &m, "reading a store setting", err,
                      errlen);
}

int store_device_metrics_rebuild(store *s, const char *setting, const char *version,
                                 store_result_hook_fn *fn, void *ctx, size_t *results,
                                 char *err, size_t errlen)
{
    assert(s && setting && version && fn && results);
    char have[64];
    *results = 0;
    int rc = read_setting(s, setting, have, sizeof have, err, errlen);
    if (rc < 0)
        return -1;
    if (rc == 0 && strcmp(have, version) == 0)
        return 0;
    struct store_tx tx;
    if (store_tx_begin(s, &tx, err, errlen) != 0)
        return -1;
    struct replay p = {&tx, fn, ctx, 0};
    /* results are read on a reader while this transaction writes: the
     * writer's changes are not theirs to see, and they change no result */
    int ret = conn_exec(tx.c, "DELETE FROM device_metrics", NULL, 0,
                        "clearing the fleet figures", err, errlen);
    if (ret == 0)
        ret = store_read(s, conn_rows,
                         "SELECT id, result_json, finished_ms FROM jobs"
                         " WHERE state = 'succeeded' AND device IS NOT NULL"
                         " AND result_json IS NOT NULL ORDER BY finished_ms, id",
                         NULL, 0, take_result, &p, "reading results", err, errlen);
    tx.measured_ms = 0;
    if (ret == 0)
        ret = conn_exec(tx.c,
                        "INSERT INTO store_meta (name, value) VALUES (?1, ?2)"
                        " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                        DB_ARGS(DB_TEXT(setting), DB_TEXT(version)),
                        "writing a store setting", err, errlen);
    ret = store_tx_end(&tx, ret, err, errlen);
    if (ret == 0)
        *results = p.results;
    return ret;
}
