/*
 * Model-validation runs: document -> model_validation_runs and
 * model_validation rows, the predictions added by the saver, and the reader
 * behind GET /api/v1/devices/{uuid}/model-validation (see db/model.h).
 *
 * DESIGN
 * One walk reads the document and, like the probes' walks (results.c),
 * either only checks it or inserts its rows, so the daemon's check and the
 * saver agree. The run's provenance is its own row (the probe_runs table
 * holds only the probes' runs). Predictions are written by UPDATEs in the
 * same transaction, after the saver has read the parameters they use.
 * The reader builds its answer from the rows alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/model.h"
#include "db/results_internal.h"

#define MAX_KERNELS 64

static const char run_sql[] =
    "INSERT INTO model_validation_runs (job_id, device, device_name, compute_capability,"
    " measured_ms, clock_mhz_before, clock_mhz_after, driver_version, repeats, wall_s, timing,"
    " dram_bw_median, dram_bw_min, dram_bw_max, link_bw_median, link_bw_min, link_bw_max,"
    " dram_bw_error, link_bw_error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
    " ?, ?)";
static const char kernel_sql[] =
    "INSERT INTO model_validation (job_id, seq, device, kernel, character, launch_json,"
    " description_json, measured_s_median, measured_s_min, measured_s_max, measure_error)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

/* ---- the walk ------------------------------------------------------------------ */

struct vrun_row {
    const char *uuid, *name, *cc, *driver, *timing;
    char before[RW_NUM], after[RW_NUM], repeats[RW_NUM], wall[RW_NUM];
    const char *v_before, *v_after, *v_repeats, *v_wall;
    struct rw_spread dram, link;
};

static int run_device(struct rwalk *w, const json_t *doc, struct vrun_row *r)
{
    const json_t *dev;
    return rw_obj(w, doc, "", "device", RW_REQUIRED, &dev) != 0 ||
                   rw_str(w, dev, "device", "uuid", RW_REQUIRED, &r->uuid) != 0 ||
                   rw_str(w, dev, "device", "name", RW_REQUIRED, &r->name) != 0 ||
                   rw_str(w, dev, "device", "compute_capability", RW_REQUIRED, &r->cc) != 0
               ? -1
               : 0;
}

static int run_read(struct rwalk *w, const json_t *doc, struct vrun_row *r)
{
    const json_t *clk, *bw;
    const char *probe;
    if (!json_is_object(doc))
        return db_fail(w->err, w->errlen, "the model-validation result must be a JSON object");
    if (rw_str(w, doc, "", "probe", RW_REQUIRED, &probe) != 0)
        return -1;
    if (strcmp(probe, "model-validation") != 0)
        return rw_fail(w, "", "probe", "must be \"model-validation\", not \"%s\"", probe);
    if (run_device(w, doc, r) != 0 ||
        rw_str(w, doc, "", "driver_version", RW_REQUIRED, &r->driver) != 0 ||
        rw_str(w, doc, "", "timing", 0, &r->timing) != 0 ||
        rw_obj(w, doc, "", "clock_mhz", RW_REQUIRED, &clk) != 0 ||
        rw_num(w, clk, "clock_mhz", "before", RW_REQUIRED | RW_ERROR_OK, r->before,
               &r->v_before) != 0 ||
        rw_num(w, clk, "clock_mhz", "after", RW_REQUIRED | RW_ERROR_OK, r->after, &r->v_after) != 0 ||
        rw_int(w, doc, "", "repeats", RW_REQUIRED, r->repeats, &r->v_repeats) != 0 ||
        rw_num(w, doc, "", "wall_s", RW_REQUIRED, r->wall, &r->v_wall) != 0 ||
        rw_obj(w, doc, "", "bandwidth", RW_REQUIRED, &bw) != 0 ||
        rw_spread(w, bw, "bandwidth", "dram_bytes_per_s", RW_REQUIRED | RW_ERROR_OK, &r->dram) != 0 ||
        rw_spread(w, bw, "bandwidth", "link_bytes_per_s", RW_REQUIRED | RW_ERROR_OK, &r->link) != 0)
        return -1;
    if (json_integer_value(json_object_get(doc, "repeats")) < 1)
        return rw_fail(w, "", "repeats", "must be at least 1");
    return 0;
}

static int run_insert(struct rwalk *w, const struct vrun_row *r)
{
    char now[24];
    snprintf(now, sizeof now, "%lld", (long long)store_now_ms());
    const char *p[] = {w->job,          r->uuid,        r->name,       r->cc,
                       now,             r->v_before,    r->v_after,    r->driver,
                       r->v_repeats,    r->v_wall,      r->timing,     r->dram.v[0],
                       r->dram.v[1],    r->dram.v[2],   r->link.v[0],  r->link.v[1],
                       r->link.v[2],    r->dram.error,  r->link.error};
    return rw_exec(w, run_sql, p, sizeof p / sizeof p[0]);
}

/* [x, y, z] of positive integers. */
static int shape(struct rwalk *w, const json_t *k, const char *path, const char *key)
{
    const json_t *v;
    size_t i;
    const json_t *e;
    if (rw_arr(w, k, path, key, RW_REQUIRED, &v) != 0)
        return -1;
    if (json_array_size(v) != 3)
        return rw_fail(w, path, key, "must be [x, y, z]");
    json_array_foreach(v, i, e)
        if (!json_is_integer(e) || json_integer_value(e) < 1)
            return rw_fail(w, path, key, "dimensions must be positive integers");
    return 0;
}

/* The launch as stored: grid, block, resources, launches, params. */
static json_t *launch_of(const json_t *k)
{
    static const char *const keys[] = {"entry", "grid", "block", "regs", "smem", "static_smem",
                                       "local_bytes", "launches", "params"};
    json_t *o = json_object();
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        json_t *v = json_object_get(k, keys[i]);
        if (v)
            json_object_set(o, keys[i], v);
    }
    return o;
}

static int kernel_checks(struct rwalk *w, const json_t *k, const char *path, const char **name,
                         const char **character, struct rw_spread *t)
{
    const json_t *desc, *params;
    char ibuf[RW_NUM];
    const char *iv;
    static const char *const ints[] = {"regs", "smem", "static_smem", "launches"};
    if (!json_is_object(k))
        return rw_fail(w, path, "", "must be an object");
    if (rw_str(w, k, path, "name", RW_REQUIRED, name) != 0 ||
        rw_str(w, k, path, "character", RW_REQUIRED, character) != 0 ||
        shape(w, k, path, "grid") != 0 || shape(w, k, path, "block") != 0 ||
        rw_obj(w, k, path, "description", 0, &desc) != 0 ||
        rw_obj(w, k, path, "params", 0, &params) != 0 ||
        rw_spread(w, k, path, "measured_s", RW_REQUIRED | RW_ERROR_OK, t) != 0)
        return -1;
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (rw_int(w, k, path, ints[i], 0, ibuf, &iv) != 0)
            return -1;
    return 0;
}

static int kernel_walk(struct rwalk *w, const json_t *k, size_t seq, json_t *seen)
{
    char path[RW_PATH], seqs[24];
    const char *name, *character;
    struct rw_spread t;
    snprintf(path, sizeof path, "kernels[%zu]", seq);
    if (kernel_checks(w, k, path, &name, &character, &t) != 0)
        return -1;
    if (json_object_get(seen, name))
        return rw_fail(w, path, "name", "'%s' appears twice", name);
    json_object_set_new(seen, name, json_true());
    if (!w->tx)
        return 0;
    json_t *launch = launch_of(k);
    const json_t *desc = json_object_get(k, "description");
    char *ltext = json_dumps(launch, JSON_COMPACT | JSON_SORT_KEYS);
    char *dtext = desc ? json_dumps(desc, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(launch);
    snprintf(seqs, sizeof seqs, "%zu", seq);
    const char *p[] = {w->job, seqs, w->device, name, character, ltext, dtext,
                       t.v[0], t.v[1], t.v[2], t.error};
    int rc = ltext ? rw_exec(w, kernel_sql, p, sizeof p / sizeof p[0])
                   : db_fail(w->err, w->errlen, "out of memory");
    free(ltext);
    free(dtext);
    return rc;
}

static int validation_walk(struct rwalk *w, const json_t *doc)
{
    struct vrun_row r;
    const json_t *list, *k;
    size_t i;
    memset(&r, 0, sizeof r);
    if (run_read(w, doc, &r) != 0 || rw_arr(w, doc, "", "kernels", RW_REQUIRED, &list) != 0)
        return -1;
    if (json_array_size(list) < 1 || json_array_size(list) > MAX_KERNELS)
        return rw_fail(w, "", "kernels", "must hold 1 to %d kernels", MAX_KERNELS);
    w->device = r.uuid;
    if (w->tx && run_insert(w, &r) != 0)
        return -1;
    json_t *seen = json_object();
    int rc = 0;
    json_array_foreach(list, i, k)
        if (rc == 0)
            rc = kernel_walk(w, k, i, seen);
    json_decref(seen);
    return rc;
}

int results_validation_check(const json_t *doc, char *err, size_t errlen)
{
    struct rwalk w;
    rw_init(&w, NULL, 0, err, errlen);
    return validation_walk(&w, doc);
}

int results_validation_insert(struct store_tx *tx, int64_t job_id, const json_t *doc,
                              char *err, size_t errlen)
{
    struct rwalk w;
    rw_init(&w, tx, job_id, err, errlen);
    return validation_walk(&w, doc);
}

/* ---- predictions ------------------------------------------------------------------- */

static const char *num_text(const double *v, char buf[RW_NUM])
{
    if (!v)
        return NULL;
    snprintf(buf, RW_NUM, "%.17g", *v);
    return buf;
}

int results_validation_predicted(struct store_tx *tx, int64_t job_id,
                                 const struct validation_prediction *p, char *err,
                                 size_t errlen)
{
    char job[24], pbuf[RW_NUM], ebuf[RW_NUM];
    char *detail = p->detail ? json_dumps(p->detail, JSON_COMPACT) : NULL;
    snprintf(job, sizeof job, "%lld", (long long)job_id);
    const char *params[] = {num_text(p->predicted_s, pbuf), num_text(p->error, ebuf), detail,
                            p->failure, job, p->kernel};
    int rc = store_tx_exec(tx,
                           "UPDATE model_validation SET predicted_s = ?, rel_error = ?,"
                           " prediction_json = ?, predict_error = ? WHERE job_id = ? AND kernel = ?",
                           params, sizeof params / sizeof params[0], err, errlen);
    free(detail);
    return rc;
}

int results_validation_summary(struct store_tx *tx, int64_t job_id, const double *gmae,
                               int kernels, int64_t latency_job, int64_t memory_job, char *err,
                               size_t errlen)
{
    char job[24], g[RW_NUM], k[24], lj[24], mj[24];
    snprintf(job, sizeof job, "%lld", (long long)job_id);
    snprintf(k, sizeof k, "%d", kernels);
    snprintf(lj, sizeof lj, "%lld", (long long)latency_job);
    snprintf(mj, sizeof mj, "%lld", (long long)memory_job);
    const char *params[] = {num_text(gmae, g), k, latency_job ? lj : NULL,
                            memory_job ? mj : NULL, job};
    return store_tx_exec(tx,
                         "UPDATE model_validation_runs SET gmae = ?, kernels_compared = ?,"
                         " latency_job = ?, memory_job = ? WHERE job_id = ?",
                         params, sizeof params / sizeof params[0], err, errlen);
}

/* ---- reading back ---------------------------------------------------------------------- */

#define VRUN_COLS "job_id, device_name, compute_capability, measured_ms, clock_mhz_before," \
                  " clock_mhz_after, driver_version, repeats, wall_s, timing, dram_bw_median," \
                  " dram_bw_min, dram_bw_max, link_bw_median, link_bw_min, link_bw_max," \
                  " dram_bw_error, link_bw_error, latency_job, memory_job, gmae, kernels_compared"

static json_t *figure_or_error(sqlite3_stmt *st, int col, int err_col)
{
    if (sqlite3_column_type(st, err_col) != SQLITE_NULL)
        return json_pack("{s:o}", "error", rc_text(st, err_col));
    return rc_spread(st, col);
}

static json_t *vrun_json(sqlite3_stmt *st, const char *uuid)
{
    json_t *o = json_pack("{s:o, s:s, s:{s:s, s:o, s:o}, s:o, s:o, s:{s:o, s:o}, s:o, s:o, s:o}",
                          "job_id", rc_int(st, 0), "probe", "model-validation", "device", "uuid",
                          uuid, "name", rc_text(st, 1), "compute_capability", rc_text(st, 2),
                          "measured_ms", rc_int(st, 3), "driver_version", rc_text(st, 6),
                          "clock_mhz", "before", rc_num(st, 4), "after", rc_num(st, 5),
                          "repeats", rc_int(st, 7), "wall_s", rc_num(st, 8), "timing",
                          rc_text(st, 9));
    json_object_set_new(o, "bandwidth",
                        json_pack("{s:o, s:o}", "dram_bytes_per_s", figure_or_error(st, 10, 16),
                                  "link_bytes_per_s", figure_or_error(st, 13, 17)));
    json_object_set_new(o, "parameters_from", json_pack("{s:o, s:o}", "latency_job",
                                                        rc_int(st, 18), "memory_job",
                                                        rc_int(st, 19)));
    json_object_set_new(o, "gmae", rc_num(st, 20));
    json_object_set_new(o, "kernels_compared", rc_int(st, 21));
    return o;
}

static int vrun_find(struct conn *c, const char *uuid, int64_t job_id, json_t **out, char *err,
                     size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(c, job_id
        ? "SELECT " VRUN_COLS " FROM model_validation_runs WHERE device = ?1 AND job_id = ?2"
        : "SELECT " VRUN_COLS " FROM model_validation_runs WHERE device = ?1"
          " ORDER BY measured_ms DESC, job_id DESC LIMIT 1", err, errlen);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    if (job_id)
        sqlite3_bind_int64(st, 2, job_id);
    int rc = sqlite3_step(st), ret = 0;
    if (rc == SQLITE_ROW)
        *out = vrun_json(st, uuid);
    else
        ret = rc == SQLITE_DONE ? 1 : db_sqlfail(err, errlen, c->db, "reading a validation run");
    stmt_done(st);
    return ret;
}

static json_t *kernel_json(sqlite3_stmt *st)
{
    json_t *measured = sqlite3_column_type(st, 7) != SQLITE_NULL
                           ? json_pack("{s:o}", "error", rc_text(st, 7))
                           : rc_spread(st, 4);
    json_t *rel = rc_num(st, 9);
    json_t *abs_err = json_is_real(rel) ? json_real(json_real_value(rel) < 0
                                                        ? -json_real_value(rel)
                                                        : json_real_value(rel))
                                        : json_null();
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "name",
                     rc_text(st, 0), "character", rc_text(st, 1), "launch", rc_json(st, 2),
                     "description", rc_json(st, 3), "measured_s", measured, "predicted_s",
                     rc_num(st, 8), "rel_error", rel, "abs_error", abs_err, "prediction",
                     rc_json(st, 10), "prediction_failure", rc_text(st, 11));
}

static int kernels_read(struct conn *c, int64_t job_id, json_t *out, char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(c,
        "SELECT kernel, character, launch_json, description_json, measured_s_median,"
        " measured_s_min, measured_s_max, measure_error, predicted_s, rel_error,"
        " prediction_json, predict_error FROM model_validation WHERE job_id = ?1 ORDER BY seq",
        err, errlen);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, job_id);
    json_t *list = json_array();
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        json_array_append_new(list, kernel_json(st));
    stmt_done(st);
    json_object_set_new(out, "kernels", list);
    return rc == SQLITE_DONE ? 0 : db_sqlfail(err, errlen, c->db, "reading validation kernels");
}

static int history(struct conn *c, const char *uuid, json_t *out, char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(c,
        "SELECT job_id, measured_ms, gmae FROM model_validation_runs WHERE device = ?1"
        " ORDER BY measured_ms DESC, job_id DESC LIMIT ?2", err, errlen);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, RW_HISTORY);
    json_t *list = json_array();
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        json_array_append_new(list, json_pack("{s:o, s:o, s:o}", "job_id", rc_int(st, 0),
                                              "measured_ms", rc_int(st, 1), "gmae",
                                              rc_num(st, 2)));
    stmt_done(st);
    json_object_set_new(out, "history", list);
    return rc == SQLITE_DONE ? 0 : db_sqlfail(err, errlen, c->db, "listing validation runs");
}

int store_model_validation(store *s, const char *uuid, int64_t job_id, json_t **out, char *err,
                           size_t errlen)
{
    *out = NULL;
    if (job_id < 0)
        return db_fail(err, errlen, "job id %lld is not valid", (long long)job_id);
    struct conn *c = store_reader_get(s);
    int ret = vrun_find(c, uuid, job_id, out, err, errlen);
    if (ret == 0) {
        int64_t id = json_integer_value(json_object_get(*out, "job_id"));
        if (kernels_read(c, id, *out, err, errlen) != 0 || history(c, uuid, *out, err, errlen) != 0)
            ret = -1;
    }
    if (ret != 0) {
        json_decref(*out);
        *out = NULL;
    }
    store_reader_put(s, c);
    return ret;
}
