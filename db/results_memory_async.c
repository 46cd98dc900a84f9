/*
 * The memory probe's asynchronous copies ("async_copy" in its document,
 * written by probes/async_copy*.c): document -> one memory_async_copy row
 * and one memory_async_copy_points row per latency or bandwidth point, and
 * back.
 *
 * DESIGN
 * The member is optional (documents from before the probe have none and get
 * no rows). It is either the probe's reason for not running ({"error"} or a
 * bare string: the run's row keeps the reason alone) or the probe's
 * figures. The run's single figures are columns named once in run_members;
 * its summary and machine-code checks are kept whole as JSON text (they are
 * derived or diagnostic, never queried). Each point is a row keyed by
 * (kind, method, bytes, level), unique within the run; a point is either
 * an error or its figures: a latency point needs its cycles' median, a
 * bandwidth point its bytes per clock per SM. Methods and levels are the
 * probe's closed lists, checked here and by the table. Points come back in
 * the order they were stored (the probe's order: the dashboard draws them
 * as they come).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/results_internal.h"

#define AC "async_copy"
#define MAX_BYTES (1 << 24)

static const struct rw_member run_members[] = {
    {"", "tensor_map", 's', RW_REQUIRED, 0, 0},
    {"", "chunk_bytes", 'i', 0, 1, MAX_BYTES},
    {"", "dram_buffer_bytes", 'i', 0, 1, 1ll << 40},
    {"", "l2_buffer_bytes", 'i', 0, 1, 1ll << 40},
    {"", "l2_passes", 'i', 0, 1, 1 << 20},
    {"", "wall_s", 'n', 0, 0, 0},
};
#define RUN_MEMBERS (sizeof run_members / sizeof run_members[0])
#define RUN_COLS "tensor_map, chunk_bytes, dram_buffer_bytes, l2_buffer_bytes, l2_passes, wall_s"

static const char run_sql[] =
    "INSERT INTO memory_async_copy (job_id, device, " RUN_COLS ", summary, sass, error)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
enum { R_SUMMARY = 2 + RUN_MEMBERS, R_SASS, R_ERROR, R_COUNT };

static const struct rw_member point_members[] = {
    {"", "method", 's', RW_REQUIRED, 0, 0},
    {"", "bytes", 'i', RW_REQUIRED, 1, MAX_BYTES},
    {"", "level", 's', RW_REQUIRED, 0, 0},
    {"", "bytes_per_copy", 'i', 0, 1, MAX_BYTES},
    {"cycles", "median", 'n', 0, 0, 0},
    {"cycles", "min", 'n', 0, 0, 0},
    {"cycles", "max", 'n', 0, 0, 0},
    {"", "bytes_per_clk_per_sm", 'n', 0, 0, 0},
    {"", "gb_s", 'n', 0, 0, 0},
    {"", "slowest_cycles", 'i', 0, 1, 1ll << 62},
    {"", "blocks", 'i', 0, 1, 1 << 20},
    {"", "total_bytes", 'i', 0, 1, 1ll << 50},
};
#define POINT_MEMBERS (sizeof point_members / sizeof point_members[0])
enum { M_METHOD, M_BYTES, M_LEVEL, M_PER_COPY, M_MEDIAN, M_MIN, M_MAX, M_RATE };
#define POINT_COLS "method, bytes, level, bytes_per_copy, median_cycles, min_cycles, max_cycles," \
                   " bytes_per_clk_per_sm, gb_s, slowest_cycles, blocks, total_bytes"

static const char point_sql[] =
    "INSERT INTO memory_async_copy_points (job_id, device, kind, " POINT_COLS ", runs, error)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
enum { P_KIND = 2, P_MEMBERS, P_RUNS = P_MEMBERS + POINT_MEMBERS, P_ERROR, P_COUNT };

static int one_of(const char *v, const char *const *list, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        if (strcmp(v, list[i]) == 0)
            return 1;
    return 0;
}

static const char *const methods[] = {"ld", "ca", "cg", "bulk", "tensor"};
static const char *const levels[] = {"l2", "dram"};

/* One point of list kind ("latency" or "bandwidth", ctx). */
static int point_walk(struct rwalk *w, const json_t *item, const char *path, size_t i, json_t *seen,
                      const void *ctx)
{
    const char *kind = ctx;
    char bufs[POINT_MEMBERS][RW_NUM], id[64];
    const char *p[P_COUNT] = {w->job, w->device, kind};
    (void)i;
    if (!json_is_object(item))
        return rw_fail(w, path, "", "must be an object");
    if (rw_members(w, item, path, point_members, POINT_MEMBERS, bufs, p + P_MEMBERS) != 0)
        return -1;
    const char *const *m = p + P_MEMBERS;
    if (!one_of(m[M_METHOD], methods, sizeof methods / sizeof methods[0]))
        return rw_fail(w, path, "method", "must be ld, ca, cg, bulk or tensor");
    if (!one_of(m[M_LEVEL], levels, sizeof levels / sizeof levels[0]))
        return rw_fail(w, path, "level", "must be l2 or dram");
    snprintf(id, sizeof id, "%s %s %s", m[M_METHOD], m[M_BYTES], m[M_LEVEL]);
    if (rw_unique(w, seen, path, "bytes", id) != 0)
        return -1;
    const json_t *runs = json_object_get(json_object_get(item, "cycles"), "runs");
    if (json_object_get(item, "error")) {
        if (rw_str(w, item, path, "error", RW_REQUIRED, &p[P_ERROR]) != 0)
            return -1;
        return rw_exec(w, point_sql, p, P_COUNT);
    }
    if (strcmp(kind, "latency") == 0 && (!m[M_MEDIAN] || !m[M_MIN] || !m[M_MAX]))
        return rw_fail(w, path, "cycles", "must have median, min and max (or the point an error)");
    if (strcmp(kind, "bandwidth") == 0 && !m[M_RATE])
        return rw_fail(w, path, "bytes_per_clk_per_sm", "is required (or the point an error)");
    if (runs && !json_is_array(runs))
        return rw_fail(w, path, "cycles.runs", "must be a list");
    return rw_exec_json(w, point_sql, p, P_COUNT, P_RUNS, runs);
}

static int run_walk(struct rwalk *w, const json_t *ac)
{
    char bufs[RUN_MEMBERS][RW_NUM];
    const char *p[R_COUNT] = {w->job, w->device};
    const json_t *lat, *bw, *summary = json_object_get(ac, "summary");
    if (rw_members(w, ac, AC, run_members, RUN_MEMBERS, bufs, p + 2) != 0 ||
        rw_arr(w, ac, AC, "latency", RW_REQUIRED, &lat) != 0 ||
        rw_arr(w, ac, AC, "bandwidth", RW_REQUIRED, &bw) != 0)
        return -1;
    if (summary && !json_is_null(summary) && !json_is_object(summary))
        return rw_fail(w, AC, "summary", "must be an object");
    char *sum_text = summary && !json_is_null(summary) ? json_dumps(summary, JSON_COMPACT) : NULL;
    const json_t *sass = json_object_get(ac, "sass");
    p[R_SUMMARY] = sum_text;
    int rc = rw_exec_json(w, run_sql, p, R_COUNT, R_SASS, json_is_object(sass) ? sass : NULL);
    free(sum_text);
    if (rc != 0 || rw_each(w, lat, AC ".latency", point_walk, "latency") != 0)
        return -1;
    return rw_each(w, bw, AC ".bandwidth", point_walk, "bandwidth");
}

int results_memory_async_walk(struct rwalk *w, const json_t *doc)
{
    return rw_own_member(w, doc, AC, run_sql, R_COUNT, R_ERROR, run_walk);
}

/* ---- reading back ------------------------------------------------------------- */

static void take_run(sqlite3_stmt *st, void *out)
{
    json_t *ac = json_object();
    json_object_set_new(out, AC, ac);
    if (sqlite3_column_type(st, (int)RUN_MEMBERS + 2) != SQLITE_NULL) {
        json_object_set_new(ac, "error", rc_text(st, (int)RUN_MEMBERS + 2));
        return;
    }
    rc_members(st, 0, run_members, RUN_MEMBERS, ac);
    json_object_set_new(ac, "summary", rc_json(st, (int)RUN_MEMBERS));
    json_object_set_new(ac, "sass", rc_json(st, (int)RUN_MEMBERS + 1));
    json_object_set_new(ac, "latency", json_array());
    json_object_set_new(ac, "bandwidth", json_array());
}

/* A point back in its document's shape: the members it has (no nulls for
 * what its kind does not measure), cycles with their runs. */
static void take_point(sqlite3_stmt *st, void *out)
{
    json_t *ac = json_object_get(out, AC);
    const char *kind = (const char *)sqlite3_column_text(st, 0);
    json_t *list = json_object_get(ac, kind ? kind : "");
    if (!json_is_array(list))
        return;
    json_t *pt = json_object();
    rc_members(st, 1, point_members, POINT_MEMBERS, pt);
    json_t *cyc = json_object_get(pt, "cycles");
    if (json_is_null(json_object_get(cyc, "median")))
        json_object_del(pt, "cycles");
    else
        json_object_set_new(cyc, "runs", rc_json(st, 1 + (int)POINT_MEMBERS));
    const char *k;
    json_t *v, *tmp;
    json_object_foreach_safe(pt, tmp, k, v)
    {
        if (json_is_null(v))
            json_object_del(pt, k);
    }
    if (sqlite3_column_type(st, 2 + (int)POINT_MEMBERS) != SQLITE_NULL)
        json_object_set_new(pt, "error", rc_text(st, 2 + (int)POINT_MEMBERS));
    json_array_append_new(list, pt);
}

int results_memory_async_read(struct conn *c, int64_t job_id, json_t *out, char *err, size_t errlen)
{
    json_object_set_new(out, AC, json_null());
    if (rc_each(c, "SELECT " RUN_COLS ", summary, sass, error FROM memory_async_copy WHERE job_id = ?1",
                job_id, take_run, out, "reading the asynchronous copies", err, errlen) != 0)
        return -1;
    if (!json_is_object(json_object_get(out, AC)) || json_object_get(json_object_get(out, AC), "error"))
        return 0;
    return rc_each(c,
                   "SELECT kind, " POINT_COLS ", runs, error FROM memory_async_copy_points"
                   " WHERE job_id = ?1 ORDER BY rowid",
                   job_id, take_point, out, "reading the asynchronous copies' points", err, errlen);
}
