/*
 * The dual-issue probe's results: document -> dual_issue_runs and
 * dual_issue_results rows, and back (see results.h for the document).
 *
 * DESIGN
 * The run's conclusions (the FFMA peak per SM clock it compares with and
 * where that peak came from, whether any ordering issued two FFMAs in a
 * cycle, the verdict in words, the bank count the operands were chosen
 * from) are one dual_issue_runs row, with the operand choices kept whole as
 * JSON. Each measured configuration (ordering pattern x operand choice x
 * warps per scheduler) is a dual_issue_results row in document order, keyed
 * by the three, so a configuration measured twice is refused by the walk
 * with its path. The member tables name each column once for the walk and
 * the reader. The probe's tallies ("runs", "seconds", "kernel") stay in the
 * job's result document.
 */
#include <stdio.h>
#include <string.h>

#include "db/results_internal.h"

/* dual_issue_runs columns after job_id and device, before operands_json. */
static const struct rw_member run_members[] = {
    {"", "peak_ffma_per_sm_clock", 'n', 0, 0, 0},
    {"", "peak_source", 's', 0, 0, 0},
    {"", "dual_issue_observed", 'b', RW_REQUIRED, 0, 0},
    {"", "verdict", 's', RW_REQUIRED, 0, 0},
    {"banks", "bank_count", 'i', 0, 1, 255},
};
#define RUN_MEMBERS (sizeof run_members / sizeof run_members[0])

/* dual_issue_results columns after seq, before the rate's spread. */
static const struct rw_member result_members[] = {
    {"", "pattern", 's', RW_REQUIRED, 0, 0},
    {"", "operands", 's', RW_REQUIRED, 0, 0},
    {"", "warps_per_scheduler", 'i', RW_REQUIRED, 1, 64},
    {"", "nominal_ffma_per_sm_clock", 'n', 0, 0, 0},
    {"", "efficiency_vs_peak", 'n', 0, 0, 0},
    {"", "efficiency_vs_nominal", 'n', 0, 0, 0},
};
#define RESULT_MEMBERS (sizeof result_members / sizeof result_members[0])

#define RUN_COLS "peak, peak_source, dual_issue_observed, verdict, bank_count"
#define RESULT_COLS "pattern, operands, warps_per_scheduler, nominal, eff_peak, eff_nominal," \
                    " rate_median, rate_min, rate_max"

static const char run_sql[] =
    "INSERT INTO dual_issue_runs (job_id, device, " RUN_COLS ", operands_json)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
static const char result_sql[] =
    "INSERT INTO dual_issue_results (job_id, device, seq, " RESULT_COLS ")"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

/* ---- the walk --------------------------------------------------------------- */

static int run_walk(struct rwalk *w, const json_t *doc)
{
    char bufs[RUN_MEMBERS][RW_NUM];
    const char *p[2 + RUN_MEMBERS + 1] = {w->job, w->device};
    const json_t *operands;
    if (rw_members(w, doc, "", run_members, RUN_MEMBERS, bufs, p + 2) != 0 ||
        rw_obj(w, doc, "", "operands", 0, &operands) != 0)
        return -1;
    return rw_exec_json(w, run_sql, p, 2 + RUN_MEMBERS + 1, 2 + RUN_MEMBERS, operands);
}

/* One configuration; seen collects "pattern / operands / warps" so far. */
static int result_walk(struct rwalk *w, const json_t *e, const char *path, size_t i,
                       json_t *seen, const void *ctx)
{
    char bufs[RESULT_MEMBERS][RW_NUM], seq[RW_NUM], id[160];
    struct rw_spread rate;
    const char *p[3 + RESULT_MEMBERS + 3] = {w->job, w->device, seq};
    (void)ctx;
    if (!json_is_object(e))
        return rw_fail(w, "", path, "must be an object");
    if (rw_members(w, e, path, result_members, RESULT_MEMBERS, bufs, p + 3) != 0 ||
        rw_spread(w, e, path, "ffma_per_sm_clock", RW_REQUIRED, &rate) != 0)
        return -1;
    snprintf(id, sizeof id, "%s / %s / %s warps", p[3], p[4], p[5]);
    if (rw_unique(w, seen, path, "pattern", id) != 0)
        return -1;
    snprintf(seq, sizeof seq, "%zu", i);
    for (int k = 0; k < 3; k++)
        p[3 + RESULT_MEMBERS + (size_t)k] = rate.v[k];
    return rw_exec(w, result_sql, p, sizeof p / sizeof p[0]);
}

int results_dual_issue_walk(struct rwalk *w, const json_t *doc)
{
    const json_t *list;
    if (rw_provenance(w, doc, "dual-issue") != 0 || run_walk(w, doc) != 0 ||
        rw_arr(w, doc, "", "results", RW_REQUIRED, &list) != 0)
        return -1;
    return rw_each(w, list, "results", result_walk, NULL);
}

RW_ENTRY_POINTS(results_dual_issue_check, results_dual_issue_save, results_dual_issue_walk)

/* ---- reading back ------------------------------------------------------------- */

static void take_run(sqlite3_stmt *st, void *out)
{
    rc_members(st, 0, run_members, RUN_MEMBERS, out);
    json_object_set_new(out, "operands", rc_json(st, RUN_MEMBERS));
}

static void take_result(sqlite3_stmt *st, void *list)
{
    json_t *o = json_object();
    rc_members(st, 0, result_members, RESULT_MEMBERS, o);
    json_object_set_new(o, "ffma_per_sm_clock", rc_spread(st, RESULT_MEMBERS));
    json_array_append_new(list, o);
}

int results_dual_issue_read(struct conn *c, int64_t job_id, json_t *out, char *err,
                            size_t errlen)
{
    json_t *list = json_array();
    json_object_set_new(out, "results", list);
    return rc_each(c, "SELECT " RUN_COLS ", operands_json FROM dual_issue_runs"
                      " WHERE job_id = ?1", job_id, take_run, out, "reading a dual-issue run",
                   err, errlen) != 0 ||
                   rc_each(c, "SELECT " RESULT_COLS " FROM dual_issue_results WHERE job_id = ?1"
                              " ORDER BY seq", job_id, take_result, list,
                           "reading dual-issue results", err, errlen) != 0
               ? -1
               : 0;
}
