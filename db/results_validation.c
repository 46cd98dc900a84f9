/*
 * Model-validation runs: document -> model_validation_runs and
 * model_validation rows, the predictions added by the saver, and the reader
 * behind GET /api/v1/devices/{uuid}/model-validation (see db/model_store.h).
 *
 * DESIGN
 * One walk reads the document and, like the probes' walks (results.c),
 * either only checks it or inserts its rows, so the daemon's check and the
 * saver agree. The run's provenance is its own row (the probe_runs table
 * holds only the probes' runs). Predictions are written by UPDATEs in the
 * same transaction, after the saver has read the parameters they use.
 * The reader builds its answer from the rows alone, through the same
 * rc_serve as the probes' results (results.c) with this table's own
 * members added after the provenance.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/model_store.h"
#include "db/results_internal.h"

#define MAX_KERNELS 64

/* Parameters of the run's INSERT: the provenance is read in two parts
 * around "timing", in the order the document has always been checked. */
enum {
    V_JOB, V_PROV, V_TIMING = V_PROV + RW_PROV_CLOCK, V_PROV_REST,
    V_NOW = V_PROV_REST + RW_PROV - RW_PROV_CLOCK, V_DRAM, V_LINK = V_DRAM + 3,
    V_DRAM_ERROR = V_LINK + 3, V_LINK_ERROR, V_L2, V_L2_ERROR = V_L2 + 3, V_L2_FETCH, V_COUNT
};

static const char run_sql[] =
    "INSERT INTO model_validation_runs (job_id, device, device_name, compute_capability,"
    " driver_version, timing, clock_mhz_before, clock_mhz_after, repeats, wall_s, measured_ms,"
    " dram_bw_median, dram_bw_min, dram_bw_max, link_bw_median, link_bw_min, link_bw_max,"
    " dram_bw_error, link_bw_error, l2_bw_median, l2_bw_min, l2_bw_max, l2_bw_error,"
    " l2_fetch_bytes)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
static const char kernel_sql[] =
    "INSERT INTO model_validation (job_id, seq, device, kernel, character, launch_json,"
    " description_json, measured_s_median, measured_s_min, measured_s_max, measure_error)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

/* ---- the walk ------------------------------------------------------------------ */

struct vrun_row {
    const char *p[V_COUNT];
    char bufs[RW_PROV][RW_NUM], now[24], fetch[RW_NUM];
    struct rw_spread dram, link, l2;
};

static int run_read(struct rwalk *w, const json_t *doc, struct vrun_row *r)
{
    const json_t *bw;
    if (rw_kind(w, doc, "model-validation") != 0 ||
        rw_members(w, doc, "", rw_prov_members, RW_PROV_CLOCK, r->bufs, r->p + V_PROV) != 0 ||
        rw_str(w, doc, "", "timing", 0, &r->p[V_TIMING]) != 0 ||
        rw_members(w, doc, "", rw_prov_members + RW_PROV_CLOCK, RW_PROV - RW_PROV_CLOCK,
                   r->bufs + RW_PROV_CLOCK, r->p + V_PROV_REST) != 0 ||
        rw_obj(w, doc, "", "bandwidth", RW_REQUIRED, &bw) != 0 ||
        rw_spread(w, bw, "bandwidth", "dram_bytes_per_s", RW_REQUIRED | RW_ERROR_OK,
                  &r->dram) != 0 ||
        rw_spread(w, bw, "bandwidth", "link_bytes_per_s", RW_REQUIRED | RW_ERROR_OK,
                  &r->link) != 0 ||
        /* documents from before the L2 was measured have none */
        rw_spread(w, bw, "bandwidth", "l2_bytes_per_s", RW_ERROR_OK, &r->l2) != 0 ||
        /* the L2's fetch granularity, when the driver told it */
        rw_int_in(w, bw, "bandwidth", "l2_fetch_bytes", 0, 1, 4096, r->fetch,
                  &r->p[V_L2_FETCH]) != 0)
        return -1;
    return 0;
}

static int run_insert(struct rwalk *w, struct vrun_row *r)
{
    snprintf(r->now, sizeof r->now, "%lld", (long long)store_tx_measured_ms(w->tx));
    r->p[V_JOB] = w->job;
    r->p[V_NOW] = r->now;
    for (int i = 0; i < 3; i++) {
        r->p[V_DRAM + i] = r->dram.v[i];
        r->p[V_LINK + i] = r->link.v[i];
        r->p[V_L2 + i] = r->l2.v[i];
    }
    r->p[V_DRAM_ERROR] = r->dram.error;
    r->p[V_LINK_ERROR] = r->link.error;
    r->p[V_L2_ERROR] = r->l2.error;
    return rw_exec(w, run_sql, r->p, V_COUNT);
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

static int kernel_walk(struct rwalk *w, const json_t *k, const char *path, size_t seq,
                       json_t *seen, const void *ctx)
{
    char seqs[24];
    const char *name, *character;
    struct rw_spread t;
    (void)ctx;
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
                   : errf(w->err, w->errlen, "out of memory");
    free(ltext);
    free(dtext);
    return rc;
}

static int validation_walk(struct rwalk *w, const json_t *doc)
{
    struct vrun_row r;
    const json_t *list;
    memset(&r, 0, sizeof r);
    if (run_read(w, doc, &r) != 0 || rw_arr(w, doc, "", "kernels", RW_REQUIRED, &list) != 0)
        return -1;
    if (json_array_size(list) < 1 || json_array_size(list) > MAX_KERNELS)
        return rw_fail(w, "", "kernels", "must hold 1 to %d kernels", MAX_KERNELS);
    w->device = r.p[V_PROV + RW_PROV_UUID];
    if (w->tx && run_insert(w, &r) != 0)
        return -1;
    return rw_each(w, list, "kernels", kernel_walk, NULL);
}

int results_validation_check(const json_t *doc, char *err, size_t errlen)
{
    return rw_walk_doc(NULL, 0, doc, validation_walk, err, errlen);
}

int results_validation_insert(struct store_tx *tx, int64_t job_id, const json_t *doc,
                              char *err, size_t errlen)
{
    assert(tx);
    return rw_walk_doc(tx, job_id, doc, validation_walk, err, errlen);
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
    assert(job_id > 0 && p && p->kernel);
    char *detail = p->detail ? json_dumps(p->detail, JSON_COMPACT) : NULL;
    snprintf(job, sizeof job, "%lld", (long long)job_id);
    const char *params[] = {num_text(p->predicted_s, pbuf), num_text(p->error, ebuf), detail,
                            p->failure, job, p->kernel};
    int rc = store_tx_exec(tx,
                           "UPDATE model_validation SET predicted_s = ?, rel_error = ?,"
                           " prediction_json = ?, predict_error = ?"
                           " WHERE job_id = ? AND kernel = ?",
                           params, sizeof params / sizeof params[0], err, errlen);
    free(detail);
    return rc;
}

int results_validation_summary(struct store_tx *tx, int64_t job_id, const double *gmae,
                               int kernels, int64_t latency_job, int64_t memory_job, char *err,
                               size_t errlen)
{
    char job[24], g[RW_NUM], k[24], lj[24], mj[24];
    assert(job_id > 0 && kernels >= 0);
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

/* The run's own members, after RC_RUN_COLS (columns 9 on). */
#define VRUN_COLS RC_RUN_COLS ", timing, dram_bw_median, dram_bw_min, dram_bw_max," \
                  " link_bw_median, link_bw_min, link_bw_max, dram_bw_error, link_bw_error," \
                  " latency_job, memory_job, gmae, kernels_compared, l2_bw_median, l2_bw_min," \
                  " l2_bw_max, l2_bw_error, l2_fetch_bytes"
enum { C_TIMING = RC_RUN_NCOLS, C_DRAM, C_LINK = C_DRAM + 3, C_DRAM_ERROR = C_LINK + 3,
       C_LINK_ERROR, C_LATENCY_JOB, C_MEMORY_JOB, C_GMAE, C_KERNELS, C_L2,
       C_L2_ERROR = C_L2 + 3, C_L2_FETCH };

static json_t *figure_or_error(sqlite3_stmt *st, int col, int err_col)
{
    if (sqlite3_column_type(st, err_col) != SQLITE_NULL)
        return json_pack("{s:o}", "error", rc_text(st, err_col));
    return rc_spread(st, col);
}

static void vrun_more(sqlite3_stmt *st, json_t *o)
{
    json_object_set_new(o, "timing", rc_text(st, C_TIMING));
    /* l2_bytes_per_s: null for runs from before the L2 was measured */
    json_object_set_new(o, "bandwidth",
                        json_pack("{s:o, s:o, s:o, s:o}", "dram_bytes_per_s",
                                  figure_or_error(st, C_DRAM, C_DRAM_ERROR), "l2_bytes_per_s",
                                  figure_or_error(st, C_L2, C_L2_ERROR), "link_bytes_per_s",
                                  figure_or_error(st, C_LINK, C_LINK_ERROR), "l2_fetch_bytes",
                                  rc_int(st, C_L2_FETCH)));
    json_object_set_new(o, "parameters_from", json_pack("{s:o, s:o}", "latency_job",
                                                        rc_int(st, C_LATENCY_JOB), "memory_job",
                                                        rc_int(st, C_MEMORY_JOB)));
    json_object_set_new(o, "gmae", rc_num(st, C_GMAE));
    json_object_set_new(o, "kernels_compared", rc_int(st, C_KERNELS));
}

static void take_kernel(sqlite3_stmt *st, void *list)
{
    json_t *measured = sqlite3_column_type(st, 7) != SQLITE_NULL
                           ? json_pack("{s:o}", "error", rc_text(st, 7))
                           : rc_spread(st, 4);
    json_t *rel = rc_num(st, 9);
    json_t *abs_err = json_is_real(rel) ? json_real(json_real_value(rel) < 0
                                                        ? -json_real_value(rel)
                                                        : json_real_value(rel))
                                        : json_null();
    json_array_append_new(
        list, json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "name",
                        rc_text(st, 0), "character", rc_text(st, 1), "launch", rc_json(st, 2),
                        "description", rc_json(st, 3), "measured_s", measured, "predicted_s",
                        rc_num(st, 8), "rel_error", rel, "abs_error", abs_err, "prediction",
                        rc_json(st, 10), "prediction_failure", rc_text(st, 11)));
}

static int kernels_read(struct conn *c, int64_t job_id, json_t *out, char *err, size_t errlen)
{
    json_t *list = json_array();
    json_object_set_new(out, "kernels", list);
    return rc_each(c,
                   "SELECT kernel, character, launch_json, description_json, measured_s_median,"
                   " measured_s_min, measured_s_max, measure_error, predicted_s, rel_error,"
                   " prediction_json, predict_error FROM model_validation WHERE job_id = ?1"
                   " ORDER BY seq",
                   job_id, take_kernel, list, "reading validation kernels", err, errlen);
}

static const struct rc_runs vruns = {
    RC_RUNS_SQL(VRUN_COLS, "job_id, measured_ms, gmae", "model_validation_runs", ""),
    0, vrun_more, 3, "reading a validation run", "listing validation runs",
};

int store_model_validation(store *s, const char *uuid, int64_t job_id, json_t **out, char *err,
                           size_t errlen)
{
    assert(s && out);
    *out = NULL;
    if (job_id < 0)
        return errf(err, errlen, "job id %lld is not valid", (long long)job_id);
    struct conn *c = store_reader_get(s);
    int ret = rc_serve(c, &vruns, uuid, "model-validation", job_id, kernels_read, out, err,
                       errlen);
    store_reader_put(s, c);
    return ret;
}
