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
 * other runs of that probe so a client can ask for an older one.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/results_internal.h"

/* ---- walking a document --------------------------------------------------- */

void rw_init(struct rwalk *w, struct store_tx *tx, int64_t job_id, char *err, size_t errlen)
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
    return db_fail(w->err, w->errlen, "%s: %s", rw_join(full, sizeof full, path, key), why);
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

int rw_str(struct rwalk *w, const json_t *obj, const char *path, const char *key, int flags,
           const char **out)
{
    const json_t *v;
    *out = NULL;
    if (member(w, obj, path, key, flags, &v) != 0)
        return -1;
    if (v && !json_is_string(v))
        return rw_fail(w, path, key, "must be a string");
    *out = v ? json_string_value(v) : NULL;
    return 0;
}

int rw_num(struct rwalk *w, const json_t *obj, const char *path, const char *key, int flags,
           char buf[RW_NUM], const char **out)
{
    const json_t *v;
    *out = NULL;
    if (member(w, obj, path, key, flags, &v) != 0)
        return -1;
    if (!v || ((flags & RW_ERROR_OK) && rw_error_of(v)))
        return 0;
    if (json_is_integer(v))
        snprintf(buf, RW_NUM, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, RW_NUM, "%.17g", json_real_value(v));
    else
        return rw_fail(w, path, key, "must be a number");
    *out = buf;
    return 0;
}

int rw_int(struct rwalk *w, const json_t *obj, const char *path, const char *key, int flags,
           char buf[RW_NUM], const char **out)
{
    const json_t *v;
    *out = NULL;
    if (member(w, obj, path, key, flags, &v) != 0)
        return -1;
    if (v && !json_is_integer(v))
        return rw_fail(w, path, key, "must be an integer");
    if (v) {
        snprintf(buf, RW_NUM, "%lld", (long long)json_integer_value(v));
        *out = buf;
    }
    return 0;
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

int rw_bool(struct rwalk *w, const json_t *obj, const char *path, const char *key, int flags,
            const char **out)
{
    const json_t *v;
    *out = NULL;
    if (member(w, obj, path, key, flags, &v) != 0)
        return -1;
    if (v && !json_is_boolean(v))
        return rw_fail(w, path, key, "must be true or false");
    *out = !v ? NULL : json_is_true(v) ? "1" : "0";
    return 0;
}

int rw_obj(struct rwalk *w, const json_t *obj, const char *path, const char *key, int flags,
           const json_t **out)
{
    if (member(w, obj, path, key, flags, out) != 0)
        return -1;
    if (*out && !json_is_object(*out))
        return rw_fail(w, path, key, "must be an object");
    return 0;
}

int rw_arr(struct rwalk *w, const json_t *obj, const char *path, const char *key, int flags,
           const json_t **out)
{
    if (member(w, obj, path, key, flags, out) != 0)
        return -1;
    if (*out && !json_is_array(*out))
        return rw_fail(w, path, key, "must be an array");
    return 0;
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
    for (int i = 0; i < 3; i++)
        if (rw_num(w, v, rw_join(here, sizeof here, path, key), parts[i], RW_REQUIRED,
                   sp->num[i], &sp->v[i]) != 0)
            return -1;
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
        return rw_num(w, holder, here, m->key, m->flags, buf, out);
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

int rw_exec(struct rwalk *w, const char *sql, const char *const *params, size_t n)
{
    return w->tx ? store_tx_exec(w->tx, sql, params, n, w->err, w->errlen) : 0;
}

int rw_exec_json(struct rwalk *w, const char *sql, const char **params, size_t n, size_t at,
                 const json_t *v)
{
    if (!w->tx)
        return 0;
    char *text = v ? json_dumps(v, JSON_COMPACT) : NULL;
    if (v && !text)
        return db_fail(w->err, w->errlen, "out of memory");
    params[at] = text;
    int rc = rw_exec(w, sql, params, n);
    params[at] = NULL;
    free(text);
    return rc;
}

/* ---- provenance -------------------------------------------------------------- */

struct prov {
    const char *uuid, *name, *cc, *driver;
    char before[RW_NUM], after[RW_NUM], repeats[RW_NUM], wall[RW_NUM];
    const char *v_before, *v_after, *v_repeats, *v_wall;
};

static int prov_device(struct rwalk *w, const json_t *doc, struct prov *p)
{
    const json_t *dev;
    return rw_obj(w, doc, "", "device", RW_REQUIRED, &dev) != 0 ||
                   rw_str(w, dev, "device", "uuid", RW_REQUIRED, &p->uuid) != 0 ||
                   rw_str(w, dev, "device", "name", RW_REQUIRED, &p->name) != 0 ||
                   rw_str(w, dev, "device", "compute_capability", RW_REQUIRED, &p->cc) != 0
               ? -1
               : 0;
}

/* A clock that could not be read is kept as NULL (its reason stays in the job's result). */
#define CLOCK_FLAGS (RW_REQUIRED | RW_ERROR_OK)

static int prov_read(struct rwalk *w, const json_t *doc, struct prov *p)
{
    const json_t *clk;
    if (prov_device(w, doc, p) != 0 ||
        rw_str(w, doc, "", "driver_version", RW_REQUIRED, &p->driver) != 0 ||
        rw_obj(w, doc, "", "clock_mhz", RW_REQUIRED, &clk) != 0 ||
        rw_num(w, clk, "clock_mhz", "before", CLOCK_FLAGS, p->before, &p->v_before) != 0 ||
        rw_num(w, clk, "clock_mhz", "after", CLOCK_FLAGS, p->after, &p->v_after) != 0 ||
        rw_int(w, doc, "", "repeats", RW_REQUIRED, p->repeats, &p->v_repeats) != 0 ||
        rw_num(w, doc, "", "wall_s", RW_REQUIRED, p->wall, &p->v_wall) != 0)
        return -1;
    if (json_integer_value(json_object_get(doc, "repeats")) < 1)
        return rw_fail(w, "", "repeats", "must be at least 1");
    return 0;
}

/* The document's device must be the one the job was submitted for. */
static int job_device_check(struct rwalk *w, const char *uuid)
{
    sqlite3_stmt *st = conn_stmt(w->tx->c, "SELECT device FROM jobs WHERE id = ?1", w->err,
                                 w->errlen);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, w->job_id);
    int rc = sqlite3_step(st), ret = 0;
    const char *dev = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    if (rc == SQLITE_DONE)
        ret = db_fail(w->err, w->errlen, "saving a result: there is no job %s", w->job);
    else if (rc != SQLITE_ROW)
        ret = db_sqlfail(w->err, w->errlen, w->tx->c->db, "reading the job of a result");
    else if (dev && strcmp(dev, uuid) != 0)
        ret = rw_fail(w, "device", "uuid", "the result is for %s but job %s ran on %s", uuid,
                      w->job, dev);
    stmt_done(st);
    return ret;
}

static const char run_insert_sql[] =
    "INSERT INTO probe_runs (job_id, probe, device, device_name, compute_capability,"
    " measured_ms, clock_mhz_before, clock_mhz_after, driver_version, repeats, wall_s)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

int rw_provenance(struct rwalk *w, const json_t *doc, const char *want)
{
    struct prov p;
    const char *probe;
    char now[24];
    if (!json_is_object(doc))
        return db_fail(w->err, w->errlen, "the %s result must be a JSON object", want);
    if (rw_str(w, doc, "", "probe", RW_REQUIRED, &probe) != 0)
        return -1;
    if (strcmp(probe, want) != 0)
        return rw_fail(w, "", "probe", "must be \"%s\", not \"%s\"", want, probe);
    if (prov_read(w, doc, &p) != 0)
        return -1;
    w->device = p.uuid;
    if (!w->tx)
        return 0;
    snprintf(now, sizeof now, "%lld", (long long)store_now_ms());
    const char *params[] = {w->job, want, p.uuid, p.name, p.cc, now, p.v_before, p.v_after,
                            p.driver, p.v_repeats, p.v_wall};
    if (job_device_check(w, p.uuid) != 0)
        return -1;
    return rw_exec(w, run_insert_sql, params, sizeof params / sizeof params[0]);
}

int rw_save(struct store_tx *tx, int64_t job_id, const char *result_json,
            int (*walk)(struct rwalk *, const json_t *), char *err, size_t errlen)
{
    json_error_t je;
    json_t *doc = json_loads(result_json ? result_json : "", JSON_REJECT_DUPLICATES, &je);
    if (!doc)
        return db_fail(err, errlen, "the result is not JSON: %s", je.text);
    struct rwalk w;
    rw_init(&w, tx, job_id, err, errlen);
    int ret = walk(&w, doc);
    json_decref(doc);
    return ret;
}

/* ---- the probes that keep results ---------------------------------------------------- */

/* Each probe's walk (checks and saves) and reader, by its name in probe_runs
 * and in a suite's document; the suite and store_probe_result both use it. */
static const struct {
    const char *name;
    int (*walk)(struct rwalk *, const json_t *);
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
        return db_fail(w->err, w->errlen, "%s.%s", name, why);
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
        return db_fail(w->err, w->errlen, "the suite result must be a JSON object");
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
        return db_fail(w->err, w->errlen, "the suite result holds no probe (%s)",
                       probe_names(names, sizeof names));
    if (!saved)
        return db_fail(w->err, w->errlen, "no probe of the suite produced a result");
    return 0;
}

int results_suite_check(const json_t *doc, char *err, size_t errlen)
{
    struct rwalk w;
    rw_init(&w, NULL, 0, err, errlen);
    return suite_walk(&w, doc);
}

int results_suite_save(struct store_tx *tx, int64_t job_id, const char *result_json, char *err,
                       size_t errlen)
{
    return rw_save(tx, job_id, result_json, suite_walk, err, errlen);
}

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

int rc_each(struct conn *c, const char *sql, int64_t job_id,
            void (*take)(sqlite3_stmt *st, void *ctx), void *ctx, const char *what, char *err,
            size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(c, sql, err, errlen);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, job_id);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        take(st, ctx);
    stmt_done(st);
    return rc == SQLITE_DONE ? 0 : db_sqlfail(err, errlen, c->db, what);
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

/* ---- reading a run back ---------------------------------------------------------------- */

#define RUN_COLS "job_id, device_name, compute_capability, measured_ms, clock_mhz_before," \
                 " clock_mhz_after, driver_version, repeats, wall_s"

static json_t *run_to_json(sqlite3_stmt *st, const char *uuid, const char *probe)
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

/* The chosen run's provenance; 1 when there is none. */
static int run_find(struct conn *c, const char *uuid, const char *probe, int64_t job_id,
                    json_t **out, char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(c, job_id
        ? "SELECT " RUN_COLS " FROM probe_runs WHERE device = ?1 AND probe = ?2 AND job_id = ?3"
        : "SELECT " RUN_COLS " FROM probe_runs WHERE device = ?1 AND probe = ?2"
          " ORDER BY measured_ms DESC, job_id DESC LIMIT 1", err, errlen);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, probe, -1, SQLITE_STATIC);
    if (job_id)
        sqlite3_bind_int64(st, 3, job_id);
    int rc = sqlite3_step(st), ret = 0;
    if (rc == SQLITE_ROW)
        *out = run_to_json(st, uuid, probe);
    else
        ret = rc == SQLITE_DONE ? 1 : db_sqlfail(err, errlen, c->db, "reading a probe run");
    stmt_done(st);
    return ret;
}

static int run_history(struct conn *c, const char *uuid, const char *probe, json_t *out,
                       char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(c,
        "SELECT job_id, measured_ms FROM probe_runs WHERE device = ?1 AND probe = ?2"
        " ORDER BY measured_ms DESC, job_id DESC LIMIT ?3", err, errlen);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, probe, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, RW_HISTORY);
    json_t *list = json_array();
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        json_array_append_new(list, json_pack("{s:o, s:o}", "job_id", rc_int(st, 0),
                                              "measured_ms", rc_int(st, 1)));
    stmt_done(st);
    json_object_set_new(out, "history", list);
    return rc == SQLITE_DONE ? 0 : db_sqlfail(err, errlen, c->db, "listing probe runs");
}

static int result_on(struct conn *c, const char *uuid, const char *probe, int64_t job_id,
                     json_t **out, char *err, size_t errlen)
{
    int ret = run_find(c, uuid, probe, job_id, out, err, errlen);
    if (ret != 0)
        return ret;
    int64_t id = json_integer_value(json_object_get(*out, "job_id"));
    ret = probes[probe_index(probe)].read(c, id, *out, err, errlen);
    if (ret == 0)
        ret = run_history(c, uuid, probe, *out, err, errlen);
    if (ret != 0) {
        json_decref(*out);
        *out = NULL;
    }
    return ret;
}

int store_probe_result(store *s, const char *uuid, const char *probe, int64_t job_id,
                       json_t **out, char *err, size_t errlen)
{
    *out = NULL;
    char names[128];
    if (probe_index(probe) < 0)
        return db_fail(err, errlen, "no probe '%s' keeps results (%s)", probe ? probe : "(null)",
                       probe_names(names, sizeof names));
    if (job_id < 0)
        return db_fail(err, errlen, "job id %lld is not valid", (long long)job_id);
    struct conn *c = store_reader_get(s);
    int ret = result_on(c, uuid, probe, job_id, out, err, errlen);
    store_reader_put(s, c);
    return ret;
}
