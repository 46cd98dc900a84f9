/*
 * Probe results, the shared part (see results.h and results_internal.h):
 * the typed readers of document members, provenance (probe_runs), the suite
 * saver, and store_probe_result, which reads a run back from the tables.
 *
 * DESIGN
 * Each probe has a walk and a reader (results_latency.c, results_memory.c,
 * results_banks.c, results_control.c, results_dual.c), listed once in the
 * table `probes` that both the suite and the reader go through; this file
 * gives them the pieces every walk needs, so a member is read, typed and
 * named in an error the same way everywhere. The reader picks the run from
 * probe_runs (newest by measurement time, ties broken by job id, or the
 * given job), asks the probe's file to add its rows, then lists the device's
 * other runs of that probe so a client can ask for an older one; the same
 * steps (rc_serve) serve the model-validation runs from their own table.
 * A member's type is checked in one place (typed): each rw_* reader names
 * the JSON types it takes and how it hands the value back.
 */
#include <assert.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/results_internal.h"

/* ---- walking a document --------------------------------------------------- */

static void rw_init(struct rwalk *w, struct store_tx *tx, int64_t job_id, char *err,
                    size_t errlen)
{
    memset(w, 0, sizeof *w);
    w->tx = tx;
    w->job_id = job_id;
    snprintf(w->job, sizeof w->job, "%lld", (long long)job_id);
    w->err = err;
    w->errlen = errlen;
}

const char *rw_join(char *buf, size_t len, const char *path, const char *key)
{
    snprintf(buf, len, "%s%s%s", path, *path ? "." : "", key);
    return buf;
}

int rw_fail(struct rwalk *w, const char *path, const char *key, const char *fmt, ...)
{
    char full[RW_PATH], why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return errf(w->err, w->errlen, "%s: %s", rw_join(full, sizeof full, path, key), why);
}

/* The member, or NULL; fails when it is required and absent or null. */
static int member(struct rwalk *w, const json_t *obj, const char *path, const char *key,
                  int flags, const json_t **out)
{
    const json_t *v = json_object_get(obj, key);
    *out = json_is_null(v) ? NULL : v;
    if (!*out && (flags & RW_REQUIRED))
        return rw_fail(w, path, key, "is required");
    return 0;
}

/* jansson's types as bits, for the types a member may have. */
#define T_OBJECT (1u << JSON_OBJECT)
#define T_ARRAY (1u << JSON_ARRAY)
#define T_STRING (1u << JSON_STRING)
#define T_INTEGER (1u << JSON_INTEGER)
#define T_NUMBER (T_INTEGER | (1u << JSON_REAL))
#define T_BOOLEAN ((1u << JSON_TRUE) | (1u << JSON_FALSE))

/* The member (NULL when absent or null), which must have one of the types
 * in mask: else "must be <want>". */
static int typed(struct rwalk *w, const json_t *obj, const char *path, const char *key,
                 int flags, unsigned mask, const char *want, const json_t **out)
{
    if (member(w, obj, path, key, flags, out) != 0)
        return -1;
    if (*out && !(mask & (1u << json_typeof(*out))))
        return rw_fail(w, path, key, "must be %s", want);
    return 0;
}

/* A number's text as a statement binds it. */
static const char *num_text(const json_t *v, char buf[RW_NUM])
{
    if (json_is_integer(v))
        snprintf(buf, RW_NUM, "%lld", (long long)json_integer_value(v));
    else
        snprintf(buf, RW_NUM, "%.17g", json_real_value(v));
    return buf;
}

/* The member (of one of the types in mask) as the text a statement binds:
 * a string as it is, a number written into buf, a boolean "1" or "0";
 * NULL when absent. */
static int member_text(struct rwalk *w, const json_t *obj, const char *path, const char *key,
                       int flags, unsigned mask, const char *want, char *buf, const char **out)
{
    const json_t *v;
    *out = NULL;
    if (typed(w, obj, path, key, flags, mask, want, &v) != 0)
        return -1;
    if (json_is_string(v))
        *out = json_string_value(v);
    else if (json_is_boolean(v))
        *out = json_is_true(v) ? "1" : "0";
    else if (v)
        *out = num_text(v, buf);
    return 0;
}

int rw_str(struct rwalk *w, const json_t *obj, const char *path, const char *key, int flags,
           const char **out)
{
    return member_text(w, obj, path, key, flags, T_STRING, "a string", NULL, out);
}

int rw_num(struct rwalk *w, const json_t *obj, const char *path, const char *key, int flags,
           char buf[RW_NUM], const char **out)
{
    *out = NULL;
    if ((flags & RW_ERROR_OK) && rw_error_of(json_object_get(obj, key)))
        return 0;
    return member_text(w, obj, path, key, flags, T_NUMBER, "a number", buf, out);
}

int rw_int(struct rwalk *w, const json_t *obj, const char *path, const char *key, int flags,
           char buf[RW_NUM], const char **out)
{
    return member_text(w, obj, path, key, flags, T_INTEGER, "an integer", buf, out);
}

int rw_int_in(struct rwalk *w, const json_t *obj, const char *path, const char *key, int flags,
              long long min, long long max, char buf[RW_NUM], const char **out)
{
    if (rw_int(w, obj, path, key, flags, buf, out) != 0)
        return -1;
    long long v = *out ? (long long)json_integer_value(json_object_get(obj, key)) : min;
    if (v < min || v > max)
        return rw_fail(w, path, key, "must be from %lld to %lld, not %lld", min, max, v);
    return 0;
}

/* rw_num, and the number from min to max. */
static int rw_num_in(struct rwalk *w, const json_t *obj, const char *path, const char *key, int flags,
                     long long min, long long max, char buf[RW_NUM], const char **out)
{
    if (rw_num(w, obj, path, key, flags, buf, out) != 0)
        return -1;
    const json_t *v = json_object_get(obj, key);
    if (!*out || !json_is_number(v))
        return 0;
    double x = json_number_value(v);
    if (x < (double)min || x > (double)max)
        return rw_fail(w, path, key, "must be from %lld to %lld, not %g", min, max, x);
    return 0;
}

int rw_bool(struct rwalk *w, const json_t *obj, const char *path, const char *key, int flags,
            const char **out)
{
    return member_text(w, obj, path, key, flags, T_BOOLEAN, "true or false", NULL, out);
}

int rw_obj(struct rwalk *w, const json_t *obj, const char *path, const char *key, int flags,
           const json_t **out)
{
    return typed(w, obj, path, key, flags, T_OBJECT, "an object", out);
}

int rw_arr(struct rwalk *w, const json_t *obj, const char *path, const char *key, int flags,
           const json_t **out)
{
    return typed(w, obj, path, key, flags, T_ARRAY, "an array", out);
}

const char *rw_error_of(const json_t *v)
{
    if (json_is_string(v))
        return json_string_value(v);
    return json_is_object(v) ? json_string_value(json_object_get(v, "error")) : NULL;
}

int rw_spread(struct rwalk *w, const json_t *obj, const char *path, const char *key, int flags,
              struct rw_spread *sp)
{
    static const char *const parts[3] = {"median", "min", "max"};
    const json_t *v;
    char here[RW_PATH];
    memset(sp, 0, sizeof *sp);
    if (member(w, obj, path, key, flags, &v) != 0)
        return -1;
    if (v && (flags & RW_ERROR_OK) && (sp->error = rw_error_of(v)) != NULL)
        return 0;
    if (rw_obj(w, obj, path, key, flags & RW_REQUIRED, &v) != 0)
        return -1;
    if (!v)
        return 0;
    rw_join(here, sizeof here, path, key);
    double x[3];
    for (int i = 0; i < 3; i++) {
        if (rw_num(w, v, here, parts[i], RW_REQUIRED, sp->num[i], &sp->v[i]) != 0)
            return -1;
        x[i] = json_number_value(json_object_get(v, parts[i]));
        if ((flags & RW_NONNEG) && x[i] < 0)
            return rw_fail(w, here, parts[i], "must not be negative, not %g", x[i]);
    }
    if (x[1] > x[0] || x[0] > x[2])
        return rw_fail(w, path, key, "min %g, median %g and max %g are not in order", x[1], x[0], x[2]);
    return 0;
}

/* One member of a table: its text (or NULL) into *out. */
static int member_walk(struct rwalk *w, const json_t *doc, const char *path,
                       const struct rw_member *m, char buf[RW_NUM], const char **out)
{
    const json_t *holder = doc;
    char here[RW_PATH];
    *out = NULL;
    if (m->parent[0] && rw_obj(w, doc, path, m->parent, m->flags & RW_REQUIRED, &holder) != 0)
        return -1;
    if (!holder)
        return 0;
    if (m->parent[0])
        rw_join(here, sizeof here, path, m->parent);
    else
        snprintf(here, sizeof here, "%s", path);
    switch (m->type) {
    case 'i':
        return m->min < m->max
                   ? rw_int_in(w, holder, here, m->key, m->flags, m->min, m->max, buf, out)
                   : rw_int(w, holder, here, m->key, m->flags, buf, out);
    case 'n':
        return m->min < m->max
                   ? rw_num_in(w, holder, here, m->key, m->flags, m->min, m->max, buf, out)
                   : rw_num(w, holder, here, m->key, m->flags, buf, out);
    case 'b':
        return rw_bool(w, holder, here, m->key, m->flags, out);
    default:
        return rw_str(w, holder, here, m->key, m->flags, out);
    }
}

int rw_members(struct rwalk *w, const json_t *doc, const char *path, const struct rw_member *m,
               size_t n, char (*bufs)[RW_NUM], const char **params)
{
    for (size_t i = 0; i < n; i++)
        if (member_walk(w, doc, path, &m[i], bufs[i], &params[i]) != 0)
            return -1;
    return 0;
}

int rw_unique(struct rwalk *w, json_t *seen, const char *path, const char *key, const char *id)
{
    if (json_object_get(seen, id))
        return rw_fail(w, path, key, "\"%s\" appears twice", id);
    json_object_set_new(seen, id, json_true());
    return 0;
}

int rw_each(struct rwalk *w, const json_t *list, const char *prefix, rw_item_fn walk,
            const void *ctx)
{
    const json_t *item;
    char path[RW_PATH + 32];
    size_t i;
    int rc = 0;
    json_t *seen = json_object();
    json_array_foreach(list, i, item) {
        snprintf(path, sizeof path, "%s[%zu]", prefix, i);
        if ((rc = walk(w, item, path, i, seen, ctx)) != 0)
            break;
    }
    json_decref(seen);
    return rc;
}

int rw_exec(struct rwalk *w, const char *sql, const char *const *params, size_t n)
{
    return w->tx ? store_tx_exec(w->tx, sql, params, n, w->err, w->errlen) : 0;
}

int rw_own_member(struct rwalk *w, const json_t *doc, const char *key, const char *error_sql,
                  size_t n, size_t error_at, int (*walk)(struct rwalk *w, const json_t *member))
{
    const json_t *m = json_object_get(doc, key);
    if (!m || json_is_null(m))
        return 0;
    if (rw_error_of(m)) {
        const char *p[RW_ERROR_ROW_MAX] = {w->job, w->device};
        assert(n <= RW_ERROR_ROW_MAX && error_at >= 2 && error_at < n);
        p[error_at] = rw_error_of(m);
        return rw_exec(w, error_sql, p, n);
    }
    if (!json_is_object(m))
        return rw_fail(w, "", key, "must be an object or {\"error\": \"...\"}");
    return walk(w, m);
}

int rw_exec_json(struct rwalk *w, const char *sql, const char **params, size_t n, size_t at,
                 const json_t *v)
{
    if (!w->tx)
        return 0;
    char *text = v ? json_dumps(v, JSON_COMPACT) : NULL;
    if (v && !text)
        return errf(w->err, w->errlen, "out of memory");
    params[at] = text;
    int rc = rw_exec(w, sql, params, n);
    params[at] = NULL;
    free(text);
    return rc;
}

/* ---- provenance -------------------------------------------------------------- */

const struct rw_member rw_prov_members[RW_PROV] = {
    {"device", "uuid", 's', RW_REQUIRED, 0, 0},
    {"device", "name", 's', RW_REQUIRED, 0, 0},
    {"device", "compute_capability", 's', RW_REQUIRED, 0, 0},
    {"", "driver_version", 's', RW_REQUIRED, 0, 0},
    {"clock_mhz", "before", 'n', RW_REQUIRED | RW_ERROR_OK, 1, RW_CLOCK_MAX_MHZ},
    {"clock_mhz", "after", 'n', RW_REQUIRED | RW_ERROR_OK, 1, RW_CLOCK_MAX_MHZ},
    {"", "repeats", 'i', RW_REQUIRED, 1, RW_REPEATS_MAX},
    {"", "wall_s", 'n', RW_REQUIRED, 0, LLONG_MAX},
};

int rw_kind(struct rwalk *w, const json_t *doc, const char *want)
{
    const char *probe;
    if (!json_is_object(doc))
        return errf(w->err, w->errlen, "the %s result must be a JSON object", want);
    if (rw_str(w, doc, "", "probe", RW_REQUIRED, &probe) != 0)
        return -1;
    if (strcmp(probe, want) != 0)
        return rw_fail(w, "", "probe", "must be \"%s\", not \"%s\"", want, probe);
    return 0;
}

static int take_job_device(const struct db_row *r)
{
    struct rwalk *w = r->ctx;
    const char *dev = (const char *)sqlite3_column_text(r->st, 0);
    if (dev && strcmp(dev, w->device) != 0)
        return rw_fail(w, "device", "uuid", "the result is for %s but job %s ran on %s",
                       w->device, w->job, dev);
    return 0;
}

/* The document's device (w->device) must be the one the job was submitted for. */
static int job_device_check(struct rwalk *w)
{
    int ret = conn_row(w->tx->c, "SELECT device FROM jobs WHERE id = ?1",
                       DB_ARGS(DB_INT(w->job_id)), take_job_device, w,
                       "reading the job of a result", w->err, w->errlen);
    if (ret == 1)
        return errf(w->err, w->errlen, "saving a result: there is no job %s", w->job);
    return ret;
}

/* Parameters of the probe_runs INSERT. */
enum { P_JOB, P_PROBE, P_PROV, P_NOW = P_PROV + RW_PROV, P_COUNT };

static const char run_insert_sql[] =
    "INSERT INTO probe_runs (job_id, probe, device, device_name, compute_capability,"
    " driver_version, clock_mhz_before, clock_mhz_after, repeats, wall_s, measured_ms)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

int rw_provenance(struct rwalk *w, const json_t *doc, const char *want)
{
    const char *p[P_COUNT] = {w->job, want};
    char bufs[RW_PROV][RW_NUM], now[24];
    if (rw_kind(w, doc, want) != 0 ||
        rw_members(w, doc, "", rw_prov_members, RW_PROV, bufs, p + P_PROV) != 0)
        return -1;
    w->device = p[P_PROV + RW_PROV_UUID];
    if (!w->tx)
        return 0;
    snprintf(now, sizeof now, "%lld", (long long)store_tx_measured_ms(w->tx));
    p[P_NOW] = now;
    if (job_device_check(w) != 0)
        return -1;
    return rw_exec(w, run_insert_sql, p, P_COUNT);
}

int rw_walk_doc(struct store_tx *tx, int64_t job_id, const json_t *doc, rw_walk_fn walk,
                char *err, size_t errlen)
{
    struct rwalk w;
    if (tx) {
        store_tx_assert_live(tx);
        assert(job_id > 0);
    }
    rw_init(&w, tx, job_id, err, errlen);
    return walk(&w, doc);
}

int rw_save(struct store_tx *tx, int64_t job_id, const json_t *doc, rw_walk_fn walk, char *err,
            size_t errlen)
{
    store_tx_assert_live(tx);
    assert(job_id > 0);
    return rw_walk_doc(tx, job_id, doc, walk, err, errlen);
}

/* ---- the probes that keep results ---------------------------------------------------- */

/* Each probe's walk (checks and saves) and reader, by its name in probe_runs
 * and in a suite's document; the suite and store_probe_result both use it. */
static const struct {
    const char *name;
    rw_walk_fn walk;
    int (*read)(struct conn *, int64_t, json_t *, char *, size_t);
} probes[] = {
    {"latency", results_latency_walk, results_latency_read},
    {"memory", results_memory_walk, results_memory_read},
    {"banks", results_banks_walk, results_banks_read},
    {"control-codes", results_control_codes_walk, results_control_codes_read},
    {"dual-issue", results_dual_issue_walk, results_dual_issue_read},
};
#define PROBES (sizeof probes / sizeof probes[0])

/* The index of the probe called name, or -1. */
static int probe_index(const char *name)
{
    for (size_t i = 0; name && i < PROBES; i++)
        if (strcmp(probes[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* "latency, memory, ..." into buf, for messages; returns buf. */
static const char *probe_names(char *buf, size_t len)
{
    buf[0] = '\0';
    for (size_t i = 0, n = 0; i < PROBES && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", probes[i].name);
    return buf;
}

/* ---- the suite ------------------------------------------------------------------- */

/* Runs one member's walk; a failure's reason gets the member's name in front. */
static int suite_member(struct rwalk *w, size_t i, const json_t *v, int *saved)
{
    const char *name = probes[i].name;
    if (!json_is_object(v))
        return rw_fail(w, "", name, "must be an object");
    if (rw_error_of(v) && !json_object_get(v, "probe"))
        return 0; /* that probe failed; its reason is in the job's result */
    if (probes[i].walk(w, v) != 0) {
        char why[512];
        snprintf(why, sizeof why, "%s", w->err);
        return errf(w->err, w->errlen, "%s.%s", name, why);
    }
    (*saved)++;
    return 0;
}

static int suite_walk(struct rwalk *w, const json_t *doc)
{
    const char *key;
    const json_t *v;
    int present = 0, saved = 0;
    char names[128];
    if (!json_is_object(doc))
        return errf(w->err, w->errlen, "the suite result must be a JSON object");
    json_object_foreach((json_t *)doc, key, v)
        if (probe_index(key) < 0)
            return rw_fail(w, "", key, "is not a probe of the suite (%s)",
                           probe_names(names, sizeof names));
    for (size_t i = 0; i < PROBES; i++) {
        v = json_object_get(doc, probes[i].name);
        if (v && (present++, suite_member(w, i, v, &saved) != 0))
            return -1;
    }
    if (!present)
        return errf(w->err, w->errlen, "the suite result holds no probe (%s)",
                       probe_names(names, sizeof names));
    if (!saved)
        return errf(w->err, w->errlen, "no probe of the suite produced a result");
    return 0;
}

RW_ENTRY_POINTS(results_suite_check, results_suite_save, suite_walk)

/* ---- columns as JSON ----------------------------------------------------------------- */

json_t *rc_num(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL
               ? json_null()
               : json_real(sqlite3_column_double(st, col));
}

json_t *rc_int(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL
               ? json_null()
               : json_integer((json_int_t)sqlite3_column_int64(st, col));
}

json_t *rc_text(sqlite3_stmt *st, int col)
{
    const char *t = (const char *)sqlite3_column_text(st, col);
    json_t *j = t ? json_string(t) : NULL;
    return j ? j : json_null();
}

json_t *rc_bool(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL
               ? json_null()
               : json_boolean(sqlite3_column_int(st, col) != 0);
}

json_t *rc_json(sqlite3_stmt *st, int col)
{
    const char *t = (const char *)sqlite3_column_text(st, col);
    json_t *j = t ? json_loads(t, 0, NULL) : NULL;
    return j ? j : json_null();
}

/* A column as JSON of a member's type. */
static json_t *rc_typed(sqlite3_stmt *st, int col, char type)
{
    switch (type) {
    case 'i':
        return rc_int(st, col);
    case 'n':
        return rc_num(st, col);
    case 'b':
        return rc_bool(st, col);
    default:
        return rc_text(st, col);
    }
}

void rc_members(sqlite3_stmt *st, int col, const struct rw_member *m, size_t n, json_t *out)
{
    for (size_t i = 0; i < n; i++) {
        json_t *holder = m[i].parent[0] ? json_object_get(out, m[i].parent) : out;
        if (!json_is_object(holder)) {
            holder = json_object();
            json_object_set_new(out, m[i].parent, holder);
        }
        json_object_set_new(holder, m[i].key, rc_typed(st, col + (int)i, m[i].type));
    }
}

/* rc_each's taker, as a row_fn: a JSON reader's row cannot fail. */
struct rc_take {
    void (*take)(sqlite3_stmt *st, void *ctx);
    void *ctx;
};

static int rc_take_row(const struct db_row *r)
{
    const struct rc_take *t = r->ctx;
    t->take(r->st, t->ctx);
    return 0;
}

int rc_each(struct conn *c, const char *sql, int64_t job_id,
            void (*take)(sqlite3_stmt *st, void *ctx), void *ctx, const char *what, char *err,
            size_t errlen)
{
    struct rc_take t = {take, ctx};
    return conn_rows(c, sql, DB_ARGS(DB_INT(job_id)), rc_take_row, &t, what, err, errlen);
}

json_t *rc_spread(sqlite3_stmt *st, int col)
{
    int nulls = 0;
    for (int i = 0; i < 3; i++)
        nulls += sqlite3_column_type(st, col + i) == SQLITE_NULL;
    if (nulls == 3)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "median", rc_num(st, col));
    json_object_set_new(o, "min", rc_num(st, col + 1));
    json_object_set_new(o, "max", rc_num(st, col + 2));
    return o;
}

/* ---- serving a run ------------------------------------------------------------------ */

json_t *rc_run(sqlite3_stmt *st, const char *uuid, const char *probe)
{
    json_t *o = json_object(), *dev = json_object(), *clk = json_object();
    json_object_set_new(dev, "uuid", json_string(uuid));
    json_object_set_new(dev, "name", rc_text(st, 1));
    json_object_set_new(dev, "compute_capability", rc_text(st, 2));
    json_object_set_new(clk, "before", rc_num(st, 4));
    json_object_set_new(clk, "after", rc_num(st, 5));
    json_object_set_new(o, "job_id", rc_int(st, 0));
    json_object_set_new(o, "probe", json_string(probe));
    json_object_set_new(o, "device", dev);
    json_object_set_new(o, "measured_ms", rc_int(st, 3));
    json_object_set_new(o, "driver_version", rc_text(st, 6));
    json_object_set_new(o, "clock_mhz", clk);
    json_object_set_new(o, "repeats", rc_int(st, 7));
    json_object_set_new(o, "wall_s", rc_num(st, 8));
    return o;
}

/* The run being served, and the table it comes from. */
struct served {
    const struct rc_runs *t;
    const char *uuid, *probe;
    json_t *out;
};

static int take_served(const struct db_row *r)
{
    struct served *s = r->ctx;
    s->out = rc_run(r->st, s->uuid, s->probe);
    if (s->t->more)
        s->t->more(r->st, s->out);
    return 0;
}

/* ?1 the device, ?2 the probe where the table holds several, then last
 * (none when it is 0); returns how many. */
static size_t runs_args(const struct served *r, int64_t last, struct db_arg a[3])
{
    size_t n = 0;
    a[n++] = DB_TEXT(r->uuid);
    if (r->t->by_probe)
        a[n++] = DB_TEXT(r->probe);
    if (last)
        a[n++] = DB_INT(last);
    return n;
}

static void take_history(sqlite3_stmt *st, void *ctx)
{
    const struct served *r = ctx;
    json_t *o = json_object();
    rc_members(st, 0, rc_history_members, r->t->nhistory, o);
    json_array_append_new(json_object_get(r->out, "history"), o);
}

static int history_read(struct conn *c, struct served *r, char *err, size_t errlen)
{
    struct db_arg a[3];
    size_t n = runs_args(r, RW_HISTORY, a);
    struct rc_take t = {take_history, r};
    json_object_set_new(r->out, "history", json_array());
    return conn_rows(c, r->t->history_sql, a, n, rc_take_row, &t, r->t->what_history, err,
                     errlen);
}

int rc_serve(struct conn *c, const struct rc_runs *t, const char *uuid, const char *probe,
             int64_t job_id,
             int (*rows)(struct conn *c, int64_t job_id, json_t *out, char *err, size_t errlen),
             json_t **out, char *err, size_t errlen)
{
    struct served r = {t, uuid, probe, NULL};
    struct db_arg a[3];
    size_t n = runs_args(&r, job_id, a);
    int ret = conn_row(c, job_id ? t->run_sql : t->newest_sql, a, n, take_served, &r,
                       t->what_run, err, errlen);
    if (ret == 0) {
        int64_t id = json_integer_value(json_object_get(r.out, "job_id"));
        if (rows(c, id, r.out, err, errlen) != 0 || history_read(c, &r, err, errlen) != 0)
            ret = -1;
    }
    if (ret != 0) {
        json_decref(r.out);
        r.out = NULL;
    }
    *out = r.out;
    return ret;
}

/* ---- reading a run back ---------------------------------------------------------------- */

const struct rw_member rc_history_members[3] = {
    {"", "job_id", 'i', 0, 0, 0},
    {"", "measured_ms", 'i', 0, 0, 0},
    {"", "gmae", 'n', 0, 0, 0},
};

static const struct rc_runs probe_runs = {
    RC_RUNS_SQL(RC_RUN_COLS, "job_id, measured_ms", "probe_runs", " AND probe = ?2"),
    1, NULL, 2, "reading a probe run", "listing probe runs",
};

int store_probe_result(store *s, const char *uuid, const char *probe, int64_t job_id,
                       json_t **out, char *err, size_t errlen)
{
    assert(s && out);
    *out = NULL;
    char names[128];
    int i = probe_index(probe);
    if (i < 0)
        return errf(err, errlen, "no probe '%s' keeps results (%s)", probe ? probe : "(null)",
                       probe_names(names, sizeof names));
    if (job_id < 0)
        return errf(err, errlen, "job id %lld is not valid", (long long)job_id);
    struct conn *c = store_reader_get(s);
    int ret = rc_serve(c, &probe_runs, uuid, probe, job_id, probes[i].read, out, err, errlen);
    store_reader_put(s, c);
    return ret;
}
