/*
 * Fleet figures, store settings and the result hook (see fleet_store.h).
 */
#include <assert.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
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

/* A row's figures are lines "NAME<TAB>NUMBER" or "NAME<TAB>=CATEGORY": text,
 * so a reader needs no dictionary, and short (a suite's 262 figures in
 * about 21 kB). Numbers are written in C's hexadecimal form (%a): exact,
 * and several times cheaper to print than 17 decimal digits. */
static char *encode_figures(const struct store_metric *m, size_t n)
{
    size_t cap = 64, len = 0;
    char *out = malloc(cap);
    for (size_t i = 0; out && i < n; i++) {
        assert(!strpbrk(m[i].name, "\t\n") && (!m[i].text || !strpbrk(m[i].text, "\t\n")));
        size_t need = strlen(m[i].name) + (m[i].text ? strlen(m[i].text) : 32) + 4;
        if (len + need >= cap) {
            while (len + need >= cap)
                cap *= 2;
            char *more = realloc(out, cap);
            if (!more) {
                free(out);
                return NULL;
            }
            out = more;
        }
        len += (size_t)(m[i].text ? snprintf(out + len, cap - len, "%s\t=%s\n", m[i].name,
                                             m[i].text)
                                  : snprintf(out + len, cap - len, "%s\t%a\n", m[i].name,
                                             m[i].value));
    }
    if (out)
        out[len] = '\0';
    return out;
}

static const char put_sql[] =
    "INSERT INTO device_figures (device, kind, job_id, measured_ms, figures, driver_version)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
    " ON CONFLICT (device, kind) DO UPDATE SET job_id = excluded.job_id,"
    " measured_ms = excluded.measured_ms, figures = excluded.figures,"
    " driver_version = excluded.driver_version"
    " WHERE excluded.measured_ms >= device_figures.measured_ms";

int store_device_metrics_put(struct store_tx *tx, const char *device, const char *kind,
                             int64_t job_id, const char *driver, const struct store_metric *m,
                             size_t n, char *err, size_t errlen)
{
    store_tx_assert_live(tx);
    assert(device && *device && kind && job_id > 0 && (m || n == 0));
    char *text = encode_figures(m, n);
    if (!text)
        return errf(err, errlen, "storing the fleet figures: out of memory");
    int rc = conn_exec(tx->c, put_sql,
                       DB_ARGS(DB_TEXT(device), DB_TEXT(kind), DB_INT(job_id),
                               DB_INT(store_tx_measured_ms(tx)), DB_TEXT(text), DB_TEXT(driver)),
                       "storing the fleet figures", err, errlen);
    free(text);
    return rc;
}

/* ---- reading figures -------------------------------------------------------- */

/* One figure of one row, while a device's rows are merged. */
struct figure {
    const char *name, *value; /* into the row's copied text */
    const char *driver;       /* the row's copied driver, or NULL */
    int64_t job_id, measured_ms;
};

struct merging {
    int (*fn)(void *ctx, const struct store_metric_row *r);
    void *ctx;
    char *device;              /* the device whose rows are gathered */
    char **texts;              /* their figures texts and drivers (owned) */
    size_t ntexts, captexts;
    struct figure *f;
    size_t n, cap;
};

static int by_name_newest_first(const void *a, const void *b)
{
    const struct figure *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    return (x->measured_ms < y->measured_ms) - (x->measured_ms > y->measured_ms);
}

/* Hands the gathered device's figures to fn, the newest of each name, and
 * forgets them. */
static int flush_device(struct merging *g)
{
    int rc = 0;
    qsort(g->f, g->n, sizeof *g->f, by_name_newest_first);
    for (size_t i = 0; i < g->n && rc == 0; i++) {
        if (i && strcmp(g->f[i].name, g->f[i - 1].name) == 0)
            continue;
        struct store_metric_row row = {g->device, g->f[i].name, 0, NULL, g->f[i].job_id,
                                       g->f[i].measured_ms, g->f[i].driver};
        if (g->f[i].value[0] == '=')
            row.text = g->f[i].value + 1;
        else
            row.value = strtod(g->f[i].value, NULL);
        rc = g->fn(g->ctx, &row);
    }
    for (size_t i = 0; i < g->ntexts; i++)
        free(g->texts[i]);
    g->ntexts = g->n = 0;
    free(g->device);
    g->device = NULL;
    return rc;
}

/* A copy of text (NULL stays NULL) that the gatherer owns until the
 * device is flushed; -1 when memory ran out. */
static int keep_copy(struct merging *g, const char *text, char **out)
{
    *out = NULL;
    if (!text)
        return 0;
    if (g->ntexts == g->captexts) {
        size_t cap = g->captexts ? g->captexts * 2 : 8;
        char **t = realloc(g->texts, cap * sizeof *t);
        if (!t)
            return -1;
        g->texts = t;
        g->captexts = cap;
    }
    if (!(*out = strdup(text)))
        return -1;
    g->texts[g->ntexts++] = *out;
    return 0;
}

/* Splits a row's text (a copy the gatherer owns) into figures. */
static int gather(struct merging *g, char *text, const char *driver, int64_t job_id,
                  int64_t measured_ms)
{
    for (char *line = text, *next; *line; line = next) {
        char *tab = strchr(line, '\t');
        next = strchr(line, '\n');
        next = next ? next + 1 : line + strlen(line);
        if (!tab || tab > next)
            continue; /* not a figure line: nothing this gpuprobe wrote */
        next[-1] = '\0';
        *tab = '\0';
        if (g->n == g->cap) {
            size_t cap = g->cap ? g->cap * 2 : 256;
            struct figure *f = realloc(g->f, cap * sizeof *f);
            if (!f)
                return -1;
            g->f = f;
            g->cap = cap;
        }
        g->f[g->n++] = (struct figure){line, tab + 1, driver, job_id, measured_ms};
    }
    return 0;
}

static int take_figures(const struct db_row *r)
{
    struct merging *g = r->ctx;
    const char *device = (const char *)sqlite3_column_text(r->st, 0);
    int rc = 0;
    if (g->device && strcmp(g->device, device) != 0)
        rc = flush_device(g);
    if (rc != 0)
        return rc;
    char *text, *driver;
    if (!g->device)
        g->device = strdup(device);
    /* figures is NOT NULL: a NULL text here is SQLite out of memory */
    if (!g->device || keep_copy(g, (const char *)sqlite3_column_text(r->st, 3), &text) != 0 ||
        !text || keep_copy(g, (const char *)sqlite3_column_text(r->st, 4), &driver) != 0 ||
        gather(g, text, driver, sqlite3_column_int64(r->st, 1),
               sqlite3_column_int64(r->st, 2)) != 0)
        return errf(r->err, r->errlen, "reading fleet figures: out of memory");
    return 0;
}

int store_device_metrics_each(store *s, const char *device,
                              int (*fn)(void *ctx, const struct store_metric_row *r), void *ctx,
                              char *err, size_t errlen)
{
    assert(s && fn);
    struct merging g = {.fn = fn, .ctx = ctx};
    int rc = device
                 ? store_read(s, conn_rows,
                              "SELECT device, job_id, measured_ms, figures, driver_version"
                              " FROM device_figures WHERE device = ?1",
                              DB_ARGS(DB_TEXT(device)), take_figures, &g,
                              "reading fleet figures", err, errlen)
                 : store_read(s, conn_rows,
                              "SELECT device, job_id, measured_ms, figures, driver_version"
                              " FROM device_figures ORDER BY device",
                              NULL, 0, take_figures, &g, "reading fleet figures", err, errlen);
    if (rc == 0 && g.device)
        rc = flush_device(&g);
    for (size_t i = 0; i < g.ntexts; i++)
        free(g.texts[i]);
    free(g.texts);
    free(g.f);
    free(g.device);
    return rc;
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
    int ret = conn_exec(tx.c, "DELETE FROM device_figures", NULL, 0,
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
