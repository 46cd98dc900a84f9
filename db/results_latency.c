/*
 * The latency probe's results: document -> latency_results rows and back
 * (see results.h for the document and results_internal.h for the walk).
 *
 * DESIGN
 * One row per catalog entry of the document, in document order (seq). The
 * seven figures an entry may carry (latency, issue, exec, throughput, the
 * clock the throughput was converted with, a tensor-core step's TFLOP/s,
 * and a wgmma step's throughput with one warpgroup an SM) are one table, lat_figures, that
 * drives both the INSERT's parameters and the reader's columns, so adding a
 * figure is one line there plus its three columns in a migration. An entry
 * without a figure (not measured: the compiled code was not what the probe
 * times, or the run failed) stores NULLs and its error text. Entry names
 * must be unique within a document (they key the rows). The reader adds to
 * each entry the smallest safe stall the newest control-codes run on the
 * device found for the same instruction (results_control.c), so the
 * stall the hardware needs is served beside the chain-timed latency.
 */
#include <stdio.h>
#include <string.h>

#include "db/results_internal.h"

/* Figures of an entry: document key and column prefix, in column order. */
static const struct {
    const char *key;
    const char *col;
} lat_figures[] = {
    {"latency_cycles", "latency"},
    {"issue_cycles", "issue"},
    {"exec_cycles", "exec"},
    {"throughput_per_clock_per_sm", "tput"},
    {"throughput_clock_mhz", "tput_mhz"},
    {"tflops", "tflops"},
    {"throughput_one_warpgroup_per_clock_per_sm", "tput_1wg"},
};
#define LAT_FIGURES (sizeof lat_figures / sizeof lat_figures[0])
_Static_assert(LAT_FIGURES == 7, "LAT_FIGURE_COLS, P_ERROR and C_ERROR assume seven figures");

#define FIG(p) p "_median, " p "_min, " p "_max"
/* Must list lat_figures in order. */
#define LAT_FIGURE_COLS FIG("latency") ", " FIG("issue") ", " FIG("exec") ", " FIG("tput") \
                        ", " FIG("tput_mhz") ", " FIG("tflops") ", " FIG("tput_1wg")

/* Parameter positions of the INSERT (0-based). */
enum {
    P_JOB, P_SEQ, P_DEVICE, P_NAME, P_GROUP, P_SASS, P_PER_STEP, P_NOTE, P_VERIFIED, P_FIXED,
    P_STALL, P_FIGURES, P_ERROR = P_FIGURES + 3 * 7, P_TPUT_ERROR, P_COUNT
};

static const char lat_insert_sql[] =
    "INSERT INTO latency_results (job_id, seq, device, instr, grp, sass_opcode, per_step, note,"
    " verified, fixed_latency, compiler_stall, " LAT_FIGURE_COLS ", error, tput_error)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
    " ?, ?, ?)";

struct lat_row {
    const char *p[P_COUNT];
    char seq[RW_NUM], per_step[RW_NUM], stall[RW_NUM];
    struct rw_spread fig[LAT_FIGURES];
};

/* ---- the walk --------------------------------------------------------------- */

static int sass_walk(struct rwalk *w, const json_t *e, const char *path, struct lat_row *r)
{
    const json_t *sass;
    char here[RW_PATH];
    if (rw_obj(w, e, path, "sass", 0, &sass) != 0)
        return -1;
    if (!sass)
        return 0;
    rw_join(here, sizeof here, path, "sass");
    return rw_bool(w, sass, here, "verified", RW_REQUIRED, &r->p[P_VERIFIED]) != 0 ||
                   rw_bool(w, sass, here, "fixed_latency", 0, &r->p[P_FIXED]) != 0 ||
                   rw_int(w, sass, here, "compiler_stall", 0, r->stall, &r->p[P_STALL]) != 0
               ? -1
               : 0;
}

static int figures_walk(struct rwalk *w, const json_t *e, const char *path, struct lat_row *r)
{
    for (size_t k = 0; k < LAT_FIGURES; k++) {
        if (rw_spread(w, e, path, lat_figures[k].key, RW_NONNEG, &r->fig[k]) != 0)
            return -1;
        for (int j = 0; j < 3; j++)
            r->p[P_FIGURES + 3 * k + (size_t)j] = r->fig[k].v[j];
    }
    return 0;
}

static int texts_walk(struct rwalk *w, const json_t *e, const char *path, struct lat_row *r)
{
    return rw_str(w, e, path, "name", RW_REQUIRED, &r->p[P_NAME]) != 0 ||
                   rw_str(w, e, path, "group", RW_REQUIRED, &r->p[P_GROUP]) != 0 ||
                   rw_str(w, e, path, "sass_opcode", RW_REQUIRED, &r->p[P_SASS]) != 0 ||
                   rw_int(w, e, path, "per_step", 0, r->per_step, &r->p[P_PER_STEP]) != 0 ||
                   rw_str(w, e, path, "note", 0, &r->p[P_NOTE]) != 0 ||
                   rw_str(w, e, path, "error", 0, &r->p[P_ERROR]) != 0 ||
                   rw_str(w, e, path, "throughput_error", 0, &r->p[P_TPUT_ERROR]) != 0
               ? -1
               : 0;
}

/* One entry: checked, then inserted. seen collects the names so far. */
static int entry_walk(struct rwalk *w, const json_t *e, const char *path, size_t i, json_t *seen,
                      const void *ctx)
{
    struct lat_row r;
    (void)ctx;
    memset(&r, 0, sizeof r);
    if (!json_is_object(e))
        return errf(w->err, w->errlen, "%s: must be an object", path);
    if (texts_walk(w, e, path, &r) != 0 || sass_walk(w, e, path, &r) != 0 ||
        figures_walk(w, e, path, &r) != 0)
        return -1;
    if (rw_unique(w, seen, path, "name", r.p[P_NAME]) != 0)
        return -1;
    snprintf(r.seq, sizeof r.seq, "%zu", i);
    r.p[P_JOB] = w->job;
    r.p[P_SEQ] = r.seq;
    r.p[P_DEVICE] = w->device;
    return rw_exec(w, lat_insert_sql, r.p, P_COUNT);
}

int results_latency_walk(struct rwalk *w, const json_t *doc)
{
    const json_t *entries;
    if (rw_provenance(w, doc, "latency") != 0 ||
        rw_arr(w, doc, "", "entries", RW_REQUIRED, &entries) != 0)
        return -1;
    return rw_each(w, entries, "entries", entry_walk, NULL);
}

RW_ENTRY_POINTS(results_latency_check, results_latency_save, results_latency_walk)

/* ---- reading back ------------------------------------------------------------- */

/* Columns: 0 instr, 1 grp, 2 sass_opcode, 3 per_step, 4 note, 5 verified,
 * 6 fixed_latency, 7 compiler_stall, 8.. figures (3 each), then error, tput_error,
 * and the safe stall's stall and job. */
#define C_FIGURES 8
#define C_ERROR (C_FIGURES + 3 * 7)
#define C_SAFE (C_ERROR + 2)

static json_t *safe_stall_from_row(sqlite3_stmt *st)
{
    if (sqlite3_column_type(st, C_SAFE) == SQLITE_NULL)
        return json_null();
    return json_pack("{s:o, s:o}", "stall", rc_int(st, C_SAFE), "job_id", rc_int(st, C_SAFE + 1));
}

static void entry_from_row(sqlite3_stmt *st, void *entries)
{
    json_t *o = json_object(), *sass = json_null();
    if (sqlite3_column_type(st, 5) != SQLITE_NULL)
        sass = json_pack("{s:o, s:o, s:o}", "verified", rc_bool(st, 5), "fixed_latency",
                         rc_bool(st, 6), "compiler_stall", rc_int(st, 7));
    json_object_set_new(o, "name", rc_text(st, 0));
    json_object_set_new(o, "group", rc_text(st, 1));
    json_object_set_new(o, "sass_opcode", rc_text(st, 2));
    json_object_set_new(o, "per_step", rc_int(st, 3));
    json_object_set_new(o, "note", rc_text(st, 4));
    json_object_set_new(o, "sass", sass);
    for (size_t k = 0; k < LAT_FIGURES; k++)
        json_object_set_new(o, lat_figures[k].key, rc_spread(st, C_FIGURES + 3 * (int)k));
    json_object_set_new(o, "error", rc_text(st, C_ERROR));
    json_object_set_new(o, "throughput_error", rc_text(st, C_ERROR + 1));
    json_object_set_new(o, "min_safe_stall", safe_stall_from_row(st));
    json_array_append_new(entries, o);
}

/* Beside each entry, the smallest safe stall of the same instruction from
 * the newest control-codes run on the device that found one. */
static const char lat_read_sql[] =
    "WITH safe AS (SELECT ci.instr, ci.min_safe_stall AS stall, ci.job_id,"
    "   row_number() OVER (PARTITION BY ci.instr"
    "                      ORDER BY pr.measured_ms DESC, pr.job_id DESC) AS newest"
    "   FROM control_code_instr ci"
    "   JOIN probe_runs pr ON pr.job_id = ci.job_id AND pr.probe = 'control-codes'"
    "   WHERE ci.device = (SELECT device FROM probe_runs WHERE job_id = ?1"
    "                      AND probe = 'latency') AND ci.min_safe_stall IS NOT NULL)"
    " SELECT lr.instr, lr.grp, lr.sass_opcode, lr.per_step, lr.note, lr.verified,"
    " lr.fixed_latency, lr.compiler_stall, " LAT_FIGURE_COLS ", lr.error, lr.tput_error,"
    " safe.stall, safe.job_id"
    " FROM latency_results lr LEFT JOIN safe ON safe.instr = lr.instr AND safe.newest = 1"
    " WHERE lr.job_id = ?1 ORDER BY lr.seq";

int results_latency_read(struct conn *c, int64_t job_id, json_t *out, char *err, size_t errlen)
{
    json_t *entries = json_array();
    json_object_set_new(out, "entries", entries);
    return rc_each(c, lat_read_sql, job_id, entry_from_row, entries, "reading latency results",
                   err, errlen);
}
