/*
 * The memory probe's results: document -> memory_curve, memory_levels and
 * memory_scalars rows, and back (see results.h for the document).
 *
 * DESIGN
 * The document has two loads ("ca": cached in L1, "cg": L2 only), each with
 * a latency curve over working-set sizes and the levels read off it, plus
 * single figures: shared-memory latency, and two groups, "departure"
 * (cycles between consecutive coalesced and uncoalesced loads, and where the
 * probe measures them the same for L1 hits and the clock reads' own cost)
 * and "device_memory_cycles" (a cold chase per load). One table,
 * mem_figures, drives both the walk and the reader of the groups. A curve
 * point or figure that failed holds an error ({"error": "..."} or a bare
 * string); a curve or level list that failed as a whole is kept as a
 * memory_scalars row curve_<load> / levels_<load> with only the error, and a
 * group that failed as a whole gives its error to each of its figures. A
 * figure may be bare ({"median",..}) or wrapped ({"cycles": {"median",..},
 * "footprint_bytes": ..}); only the figure is kept. Sizes and levels must be
 * unique within a load (they key the rows); the walk says which repeats.
 * The reader serves curves by size and levels by number, and every error in
 * the {"error": "..."} form. The L1 set mapping ("l1_sets") has its own
 * tables and file, results_memory_l1.c, the L2's partitions
 * ("l2_partitions") theirs, results_memory_l2.c, the block placement
 * ("block_placement") its own, results_memory_deal.c, distributed shared memory
 * ("distributed_shared") its own, results_memory_dsm.c, the asynchronous
 * copies ("async_copy") theirs, results_memory_async.c.
 */
#include <stdio.h>
#include <string.h>

#include "db/results_internal.h"

static const char *const mem_loads[] = {"ca", "cg"};
#define MEM_LOADS (sizeof mem_loads / sizeof mem_loads[0])

static const char curve_sql[] =
    "INSERT INTO memory_curve (job_id, device, load, bytes, median, min, max, error)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
static const char level_sql[] =
    "INSERT INTO memory_levels (job_id, device, load, level, cycles, up_to_bytes)"
    " VALUES (?, ?, ?, ?, ?, ?)";
static const char scalar_sql[] =
    "INSERT INTO memory_scalars (job_id, device, name, median, min, max, error)"
    " VALUES (?, ?, ?, ?, ?, ?, ?)";

/* ---- the walk --------------------------------------------------------------- */

static int scalar_row(struct rwalk *w, const char *name, const struct rw_spread *sp)
{
    const char *p[] = {w->job, w->device, name, sp->v[0], sp->v[1], sp->v[2], sp->error};
    return rw_exec(w, scalar_sql, p, sizeof p / sizeof p[0]);
}

/* A curve or level list that failed as a whole: "<prefix><load>" with its error. */
static int whole_error(struct rwalk *w, const char *prefix, const char *load, const char *error)
{
    struct rw_spread sp;
    char name[32];
    memset(&sp, 0, sizeof sp);
    sp.error = error;
    snprintf(name, sizeof name, "%s%s", prefix, load);
    return scalar_row(w, name, &sp);
}

/* A positive integer member, unique among those in seen. */
static int unique_key(struct rwalk *w, const json_t *o, const char *path, const char *key,
                      json_t *seen, char buf[RW_NUM], const char **out)
{
    if (rw_int(w, o, path, key, RW_REQUIRED, buf, out) != 0)
        return -1;
    if (json_integer_value(json_object_get(o, key)) < 1)
        return rw_fail(w, path, key, "must be at least 1");
    if (json_object_get(seen, buf))
        return rw_fail(w, path, key, "%s appears twice", buf);
    json_object_set_new(seen, buf, json_true());
    return 0;
}

/* A figure, bare or wrapped in {"cycles": FIGURE, ...}. */
static int figure_walk(struct rwalk *w, const json_t *obj, const char *path, const char *key,
                       int flags, struct rw_spread *sp)
{
    const json_t *v = json_object_get(obj, key);
    char here[RW_PATH];
    if (json_is_object(v) && !json_object_get(v, "median") && json_object_get(v, "cycles"))
        return rw_spread(w, v, rw_join(here, sizeof here, path, key), "cycles", flags, sp);
    return rw_spread(w, obj, path, key, flags, sp);
}

/* A curve point of the load (its name); seen holds the sizes so far. */
static int point_walk(struct rwalk *w, const json_t *pt, const char *path, size_t i,
                      json_t *seen, const void *load)
{
    struct rw_spread sp;
    char bytes[RW_NUM];
    const char *vb;
    (void)i;
    if (!json_is_object(pt))
        return errf(w->err, w->errlen, "%s: must be an object", path);
    if (unique_key(w, pt, path, "bytes", seen, bytes, &vb) != 0 ||
        figure_walk(w, pt, path, "cycles", RW_REQUIRED | RW_ERROR_OK | RW_NONNEG, &sp) != 0)
        return -1;
    const char *p[] = {w->job, w->device, load, vb, sp.v[0], sp.v[1], sp.v[2], sp.error};
    return rw_exec(w, curve_sql, p, sizeof p / sizeof p[0]);
}

/* A level of the load (its name); seen holds the levels so far. */
static int level_walk(struct rwalk *w, const json_t *lv, const char *path, size_t i,
                      json_t *seen, const void *load)
{
    char level[RW_NUM], cycles[RW_NUM], upto[RW_NUM];
    const char *p[6] = {w->job, w->device, load};
    (void)i;
    if (!json_is_object(lv))
        return errf(w->err, w->errlen, "%s: must be an object", path);
    if (unique_key(w, lv, path, "level", seen, level, &p[3]) != 0 ||
        rw_num(w, lv, path, "cycles", 0, cycles, &p[4]) != 0 ||
        rw_num(w, lv, path, "up_to_bytes", 0, upto, &p[5]) != 0)
        return -1;
    return rw_exec(w, level_sql, p, 6);
}

/* parent[load]: an array of items, or {"error": ...} kept as <prefix><load>. */
static int list_walk(struct rwalk *w, const json_t *parent, const char *pname, const char *load,
                     const char *prefix, rw_item_fn walk)
{
    const json_t *v = json_object_get(parent, load);
    char path[RW_PATH];
    if (!v)
        return rw_fail(w, pname, load, "is required");
    if (rw_error_of(v))
        return whole_error(w, prefix, load, rw_error_of(v));
    if (!json_is_array(v))
        return rw_fail(w, pname, load, "must be an array or {\"error\": \"...\"}");
    snprintf(path, sizeof path, "%s.%s", pname, load);
    return rw_each(w, v, path, walk, load);
}

static int lists_walk(struct rwalk *w, const json_t *doc, const char *key, const char *prefix,
                      rw_item_fn walk)
{
    const json_t *parent;
    if (rw_obj(w, doc, "", key, RW_REQUIRED, &parent) != 0)
        return -1;
    for (size_t i = 0; i < MEM_LOADS; i++)
        if (list_walk(w, parent, key, mem_loads[i], prefix, walk) != 0)
            return -1;
    return 0;
}

/* Figures grouped under one member of the document: "departure" (required)
 * and "device_memory_cycles" (optional). A group that failed as a whole
 * (an error in its place) gives its reason to its own figures (sub NULL). */
static const struct {
    const char *name;
    int flags;
} mem_groups[] = {
    {"departure", RW_REQUIRED},
    {"device_memory_cycles", 0},
};
#define MEM_GROUPS (sizeof mem_groups / sizeof mem_groups[0])

/* The figures of the groups: group, the object under it that holds the
 * figure (NULL: the group itself), the figure's key, its memory_scalars
 * row, and whether it must be there. The departure delays are slopes
 * between two launches, which noise could make a little negative: only
 * the latencies are held to be at least 0. */
static const struct {
    const char *group, *sub, *key, *name;
    int flags;
} mem_figures[] = {
    {"departure", NULL, "coalesced_cycles", "departure_coalesced", RW_REQUIRED | RW_ERROR_OK},
    {"departure", NULL, "uncoalesced_cycles", "departure_uncoalesced",
     RW_REQUIRED | RW_ERROR_OK},
    {"departure", NULL, "clock_overhead_cycles", "departure_clock_overhead", RW_ERROR_OK},
    {"departure", "l1_hit", "coalesced_cycles", "departure_l1_coalesced", RW_ERROR_OK},
    {"departure", "l1_hit", "uncoalesced_cycles", "departure_l1_uncoalesced", RW_ERROR_OK},
    {"device_memory_cycles", NULL, "ca", "device_memory_ca", RW_ERROR_OK | RW_NONNEG},
    {"device_memory_cycles", NULL, "cg", "device_memory_cg", RW_ERROR_OK | RW_NONNEG},
};
#define MEM_FIGURES (sizeof mem_figures / sizeof mem_figures[0])

/* Figure i of group g (an object); an absent optional one writes no row. */
static int group_figure(struct rwalk *w, size_t i, const json_t *g)
{
    struct rw_spread sp;
    const json_t *holder = g;
    char path[RW_PATH];
    rw_join(path, sizeof path, "", mem_figures[i].group);
    if (mem_figures[i].sub) {
        if (rw_obj(w, g, path, mem_figures[i].sub, 0, &holder) != 0)
            return -1;
        if (!holder)
            return 0;
        rw_join(path, sizeof path, mem_figures[i].group, mem_figures[i].sub);
    }
    if (figure_walk(w, holder, path, mem_figures[i].key, mem_figures[i].flags, &sp) != 0)
        return -1;
    return sp.v[0] || sp.error ? scalar_row(w, mem_figures[i].name, &sp) : 0;
}

/* A group that failed as a whole: its own figures get the reason. */
static int group_failed(struct rwalk *w, const char *group, const char *why)
{
    struct rw_spread sp;
    memset(&sp, 0, sizeof sp);
    sp.error = why;
    for (size_t i = 0; i < MEM_FIGURES; i++)
        if (strcmp(mem_figures[i].group, group) == 0 && !mem_figures[i].sub &&
            scalar_row(w, mem_figures[i].name, &sp) != 0)
            return -1;
    return 0;
}

static int group_walk(struct rwalk *w, const json_t *doc, size_t gi)
{
    const char *name = mem_groups[gi].name;
    const json_t *g = json_object_get(doc, name);
    if (g && rw_error_of(g))
        return group_failed(w, name, rw_error_of(g));
    if (rw_obj(w, doc, "", name, mem_groups[gi].flags, &g) != 0)
        return -1;
    for (size_t i = 0; g && i < MEM_FIGURES; i++)
        if (strcmp(mem_figures[i].group, name) == 0 && group_figure(w, i, g) != 0)
            return -1;
    return 0;
}

int results_memory_walk(struct rwalk *w, const json_t *doc)
{
    struct rw_spread shared;
    if (rw_provenance(w, doc, "memory") != 0 ||
        lists_walk(w, doc, "curves", "curve_", point_walk) != 0 ||
        lists_walk(w, doc, "levels", "levels_", level_walk) != 0 ||
        figure_walk(w, doc, "", "shared_cycles", RW_REQUIRED | RW_ERROR_OK | RW_NONNEG, &shared) != 0 ||
        scalar_row(w, "shared", &shared) != 0)
        return -1;
    for (size_t i = 0; i < MEM_GROUPS; i++)
        if (group_walk(w, doc, i) != 0)
            return -1;
    if (results_memory_l1_walk(w, doc) != 0 || results_memory_l2_walk(w, doc) != 0 ||
        results_memory_deal_walk(w, doc) != 0)
        return -1;
    if (results_memory_dsm_walk(w, doc) != 0)
        return -1;
    return results_memory_async_walk(w, doc);
}

RW_ENTRY_POINTS(results_memory_check, results_memory_save, results_memory_walk)

/* ---- reading back ------------------------------------------------------------- */

/* median/min/max at col, or {"error": ...} from the column after them. */
static json_t *figure_from(sqlite3_stmt *st, int col)
{
    if (sqlite3_column_type(st, col + 3) != SQLITE_NULL)
        return json_pack("{s:o}", "error", rc_text(st, col + 3));
    return rc_spread(st, col);
}

/* {"ca": [], "cg": []} */
static json_t *per_load(void)
{
    json_t *o = json_object();
    for (size_t i = 0; i < MEM_LOADS; i++)
        json_object_set_new(o, mem_loads[i], json_array());
    return o;
}

/* A row of a per-load table: make(st) appended to out[column 0 of the row]. */
struct load_rows {
    json_t *out;
    json_t *(*make)(sqlite3_stmt *);
};

static void take_load_row(sqlite3_stmt *st, void *ctx)
{
    struct load_rows *r = ctx;
    json_array_append_new(json_object_get(r->out, (const char *)sqlite3_column_text(st, 0)),
                          r->make(st));
}

static json_t *point_from(sqlite3_stmt *st)
{
    return json_pack("{s:o, s:o}", "bytes", rc_int(st, 1), "cycles", figure_from(st, 2));
}

static json_t *level_from(sqlite3_stmt *st)
{
    return json_pack("{s:o, s:o, s:o}", "level", rc_int(st, 1), "cycles", rc_num(st, 2),
                     "up_to_bytes", rc_int(st, 3));
}

static int rows_read(struct conn *c, const char *sql, int64_t job_id, json_t *out,
                     json_t *(*make)(sqlite3_stmt *), char *err, size_t errlen)
{
    struct load_rows r = {out, make};
    return rc_each(c, sql, job_id, take_load_row, &r, "reading memory results", err, errlen);
}

/* The object that holds figure i in out, made when missing. */
static json_t *figure_holder(json_t *out, size_t i)
{
    json_t *g = json_object_get(out, mem_figures[i].group), *sub;
    if (!json_is_object(g)) {
        g = json_object();
        json_object_set_new(out, mem_figures[i].group, g);
    }
    if (!mem_figures[i].sub)
        return g;
    if (!(sub = json_object_get(g, mem_figures[i].sub))) {
        sub = json_object();
        json_object_set_new(g, mem_figures[i].sub, sub);
    }
    return sub;
}

/* Puts a scalar row where the document had it. */
static void scalar_place(json_t *out, const char *name, json_t *fig)
{
    if (strcmp(name, "shared") == 0) {
        json_object_set_new(out, "shared_cycles", fig);
        return;
    }
    if (strncmp(name, "curve_", 6) == 0 || strncmp(name, "levels_", 7) == 0) {
        int curve = name[0] == 'c';
        json_object_set_new(json_object_get(out, curve ? "curves" : "levels"),
                            name + (curve ? 6 : 7), fig);
        return;
    }
    for (size_t i = 0; i < MEM_FIGURES; i++)
        if (strcmp(name, mem_figures[i].name) == 0) {
            json_object_set_new(figure_holder(out, i), mem_figures[i].key, fig);
            return;
        }
    json_decref(fig);
}

static void take_scalar(sqlite3_stmt *st, void *out)
{
    scalar_place(out, (const char *)sqlite3_column_text(st, 0), figure_from(st, 1));
}

static int scalars_read(struct conn *c, int64_t job_id, json_t *out, char *err, size_t errlen)
{
    return rc_each(c, "SELECT name, median, min, max, error FROM memory_scalars"
                      " WHERE job_id = ?1 ORDER BY name", job_id, take_scalar, out,
                   "reading memory results", err, errlen);
}

int results_memory_read(struct conn *c, int64_t job_id, json_t *out, char *err, size_t errlen)
{
    json_t *curves = per_load(), *levels = per_load();
    json_object_set_new(out, "curves", curves);
    json_object_set_new(out, "levels", levels);
    json_object_set_new(out, "shared_cycles", json_null());
    json_object_set_new(out, "departure", json_pack("{s:n, s:n}", "coalesced_cycles",
                                                    "uncoalesced_cycles"));
    json_object_set_new(out, "device_memory_cycles", json_null());
    if (rows_read(c, "SELECT load, bytes, median, min, max, error FROM memory_curve"
                     " WHERE job_id = ?1 ORDER BY load, bytes", job_id, curves, point_from,
                  err, errlen) != 0 ||
        rows_read(c, "SELECT load, level, cycles, up_to_bytes FROM memory_levels"
                     " WHERE job_id = ?1 ORDER BY load, level", job_id, levels, level_from,
                  err, errlen) != 0)
        return -1;
    if (scalars_read(c, job_id, out, err, errlen) != 0)
        return -1;
    if (results_memory_l1_read(c, job_id, out, err, errlen) != 0 ||
        results_memory_l2_read(c, job_id, out, err, errlen) != 0 ||
        results_memory_deal_read(c, job_id, out, err, errlen) != 0)
        return -1;
    if (results_memory_dsm_read(c, job_id, out, err, errlen) != 0)
        return -1;
    return results_memory_async_read(c, job_id, out, err, errlen);
}
