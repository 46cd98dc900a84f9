/*
 * The memory probe's L1 set mapping ("l1_sets" in its document, written by
 * probes/l1_sets*.c): document -> one memory_l1_sets row and one
 * memory_l1_set_masks row per set-index bit, and back.
 *
 * DESIGN
 * The member is optional: documents from before the search have none and
 * get no row. When it is there it is one of three things, each one row:
 * the search could not run ({"error": "..."} or a bare string: the row
 * keeps the reason alone); it ran and did not determine the mapping
 * (status "not determined" with its reason, and whatever sizes it found);
 * it determined it (status "determined", the sizes, the function's name
 * and its masks, one per set-index bit, as many as log2 of the sets). The
 * walk holds a determined result to that, so a stored mapping is one the
 * cache model can use (gpuprobe trace cache --set-index hardware). The
 * timings behind the verdict (reference, fill, strides, controls, bits,
 * relations, confirmation, checks) stay in the job's result document. The
 * reader gives the member back in the document's shape, set_index null
 * unless determined; a run without the member reads as null.
 */
#include <stdio.h>
#include <string.h>

#include "db/results_internal.h"

#define L1 "l1_sets"

/* memory_l1_sets columns after job_id and device, before error. */
static const struct rw_member l1_members[] = {
    {"", "status", 's', RW_REQUIRED, 0, 0},
    {"", "reason", 's', 0, 0, 0},
    {"", "line_bytes", 'i', 0, 1, 1 << 20},
    {"", "fill_bytes", 'i', 0, 1, 1 << 20},
    {"", "sets", 'i', 0, 1, 1 << 20},
    {"", "ways", 'i', 0, 1, 1 << 24},
    {"", "capacity_bytes", 'i', 0, 1, 1ll << 40},
    {"", "collision_stride_bytes", 'i', 0, 1, 1ll << 40},
    {"", "carveout_percent", 'i', 0, 0, 100},
    {"set_index", "function", 's', 0, 0, 0},
};
#define L1_MEMBERS (sizeof l1_members / sizeof l1_members[0])
enum { M_STATUS, M_REASON, M_LINE, M_FILL, M_SETS, M_WAYS, M_FUNCTION = L1_MEMBERS - 1 };

#define L1_COLS "status, reason, line_bytes, fill_bytes, sets, ways, capacity_bytes," \
                " collision_stride_bytes, carveout_percent, function"

static const char run_sql[] =
    "INSERT INTO memory_l1_sets (job_id, device, " L1_COLS ", error)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
static const char mask_sql[] = "INSERT INTO memory_l1_set_masks (job_id, bit, mask)"
                               " VALUES (?, ?, ?)";

/* ---- the walk --------------------------------------------------------------- */

static int one_of(const char *v, const char *a, const char *b)
{
    return v && (strcmp(v, a) == 0 || strcmp(v, b) == 0);
}

/* One mask: a positive integer, the row of set-index bit i. */
static int mask_walk(struct rwalk *w, const json_t *m, const char *path, size_t i, json_t *seen,
                     const void *ctx)
{
    char bit[RW_NUM], mask[RW_NUM];
    (void)seen, (void)ctx;
    if (!json_is_integer(m) || json_integer_value(m) < 1)
        return errf(w->err, w->errlen, "%s: must be a positive integer", path);
    snprintf(bit, sizeof bit, "%zu", i);
    snprintf(mask, sizeof mask, "%lld", (long long)json_integer_value(m));
    const char *p[] = {w->job, bit, mask};
    return rw_exec(w, mask_sql, p, 3);
}

/* A determined mapping has what the cache model needs: the sizes, the
 * function's name and one mask per set-index bit (*masks). Checked before
 * any row is written, so SQLite's CHECKs never see a bad value. */
static int determined_check(struct rwalk *w, const json_t *l1, const char *const *m,
                            const json_t **masks)
{
    long long sets = m[M_SETS] ? json_integer_value(json_object_get(l1, "sets")) : 0;
    if (!m[M_LINE] || !m[M_WAYS] || !sets)
        return rw_fail(w, L1, "status", "a determined mapping needs line_bytes, sets and ways");
    if (!one_of(m[M_FUNCTION], "modulo", "xor"))
        return rw_fail(w, L1 ".set_index", "function", "must be \"modulo\" or \"xor\"");
    if (rw_arr(w, json_object_get(l1, "set_index"), L1 ".set_index", "masks", RW_REQUIRED,
               masks) != 0)
        return -1;
    size_t n = json_array_size(*masks);
    if (n > 30 || (1ll << n) != sets)
        return rw_fail(w, L1 ".set_index", "masks", "%zu masks cannot index %lld sets", n, sets);
    return 0;
}

static int search_walk(struct rwalk *w, const json_t *l1)
{
    char bufs[L1_MEMBERS][RW_NUM];
    const char *p[2 + L1_MEMBERS + 1] = {w->job, w->device};
    const char **m = p + 2;
    const json_t *masks = NULL;
    if (rw_members(w, l1, L1, l1_members, L1_MEMBERS, bufs, m) != 0)
        return -1;
    if (!one_of(m[M_STATUS], "determined", "not determined"))
        return rw_fail(w, L1, "status", "must be \"determined\" or \"not determined\"");
    if (strcmp(m[M_STATUS], "determined") == 0) {
        if (determined_check(w, l1, m, &masks) != 0)
            return -1;
    } else if (!m[M_REASON]) {
        return rw_fail(w, L1, "reason", "is required when not determined");
    } else {
        m[M_FUNCTION] = NULL;   /* no mapping is kept for a search that found none */
    }
    if (rw_exec(w, run_sql, p, sizeof p / sizeof p[0]) != 0)
        return -1;
    return masks ? rw_each(w, masks, L1 ".set_index.masks", mask_walk, NULL) : 0;
}

int results_memory_l1_walk(struct rwalk *w, const json_t *doc)
{
    return rw_own_member(w, doc, L1, run_sql, 2 + L1_MEMBERS + 1, 2 + L1_MEMBERS, search_walk);
}

/* ---- reading back ------------------------------------------------------------- */

static void take_mask(sqlite3_stmt *st, void *masks)
{
    json_array_append_new(masks, rc_int(st, 0));
}

static void take_run(sqlite3_stmt *st, void *out)
{
    json_t *l1 = json_object();
    json_object_set_new(out, L1, l1);
    if (sqlite3_column_type(st, (int)L1_MEMBERS) != SQLITE_NULL) {
        json_object_set_new(l1, "error", rc_text(st, (int)L1_MEMBERS));
        return;
    }
    rc_members(st, 0, l1_members, L1_MEMBERS, l1);
    if (sqlite3_column_type(st, M_FUNCTION) == SQLITE_NULL)
        json_object_set_new(l1, "set_index", json_null());
    else
        json_object_set_new(json_object_get(l1, "set_index"), "masks", json_array());
}

int results_memory_l1_read(struct conn *c, int64_t job_id, json_t *out, char *err, size_t errlen)
{
    json_object_set_new(out, L1, json_null());
    if (rc_each(c, "SELECT " L1_COLS ", error FROM memory_l1_sets WHERE job_id = ?1", job_id,
                take_run, out, "reading the L1 set mapping", err, errlen) != 0)
        return -1;
    json_t *masks = json_object_get(json_object_get(json_object_get(out, L1), "set_index"),
                                     "masks");
    if (!masks)
        return 0;
    return rc_each(c, "SELECT mask FROM memory_l1_set_masks WHERE job_id = ?1 ORDER BY bit",
                   job_id, take_mask, masks, "reading the L1 set masks", err, errlen);
}
