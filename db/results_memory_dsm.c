/*
 * The memory probe's distributed shared memory ("distributed_shared" in its
 * document, written by probes/dsmem*.c): document -> one memory_dsmem row
 * and one memory_dsmem_sizes row per cluster size, and back.
 *
 * DESIGN
 * The member is optional (documents from before it have none and get no
 * row). Either nothing could be measured ({"error": "..."} or a bare
 * string: the run's row keeps the reason alone) or it holds the settings
 * and one entry per size. An entry's single values are columns named once
 * in size_members for the walk and the reader; its five figures (latency
 * local, neighbour, farthest; bandwidth local, remote) are spreads, three
 * columns each, named once in spreads[]. Checked here: the size asked is
 * from 1 to 16 and appears once; a size that launched has all five
 * figures; one that did not says why. The repeats' single runs and the
 * machine-code checks ("sass") stay in the job's result, not in rows.
 */
#include <stdio.h>
#include <string.h>

#include "db/results_internal.h"

#define DSM "distributed_shared"
#define MAX_CLUSTER 16

static const struct rw_member run_members[] = {
    {"", "clock_mhz", 'n', 0, 0, 0},
    {"", "chase_loads", 'i', RW_REQUIRED, 1, 1ll << 40},
    {"", "bw_block_bytes", 'n', 0, 0, 0},
    {"", "block_pad_bytes", 'i', 0, 0, 1ll << 30},
    {"", "wall_s", 'n', 0, 0, 0},
};
#define RUN_MEMBERS (sizeof run_members / sizeof run_members[0])
#define RUN_COLS "clock_mhz, chase_loads, bw_block_bytes, block_pad_bytes, wall_s"
static const char run_sql[] = "INSERT INTO memory_dsmem (job_id, device, " RUN_COLS ", error)"
                              " VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
enum { R_ERROR = 2 + RUN_MEMBERS, R_COUNT };

static const struct rw_member size_members[] = {
    {"", "asked", 'i', RW_REQUIRED, 1, MAX_CLUSTER},
    {"", "driver_width", 'i', 0, 0, 1024},
    {"", "ranks_seen", 'i', 0, 0, 1024},
    {"", "agrees", 'b', RW_REQUIRED, 0, 0},
    {"", "launched", 'b', RW_REQUIRED, 0, 0},
    {"", "max_active_clusters", 'i', 0, 0, 1 << 20},
    {"", "distinct_sms", 'i', 0, 0, 1024},
    {"", "error", 's', 0, 0, 0},
    {"gb_s_sm", "local", 'n', 0, 0, 0},
    {"gb_s_sm", "remote", 'n', 0, 0, 0},
};
#define SIZE_MEMBERS (sizeof size_members / sizeof size_members[0])
enum { S_ASKED, S_LAUNCHED = 4, S_ERROR = 7 };

/* The five figures, in column order. */
static const struct {
    const char *parent, *key;
} spreads[] = {
    {"latency_cycles", "local"},   {"latency_cycles", "neighbour"}, {"latency_cycles", "farthest"},
    {"bytes_per_clk_sm", "local"}, {"bytes_per_clk_sm", "remote"},
};
#define SPREADS (sizeof spreads / sizeof spreads[0])

#define SIZE_COLS "asked, driver_width, ranks_seen, agrees, launched, max_active_clusters, distinct_sms," \
                  " error, gb_s_local, gb_s_remote"
#define SPREAD_COLS "lat_local_median, lat_local_min, lat_local_max, lat_neighbour_median," \
                    " lat_neighbour_min, lat_neighbour_max, lat_farthest_median, lat_farthest_min,"  \
                    " lat_farthest_max, bw_local_median, bw_local_min, bw_local_max,"                \
                    " bw_remote_median, bw_remote_min, bw_remote_max"
static const char size_sql[] = "INSERT INTO memory_dsmem_sizes (job_id, " SIZE_COLS ", " SPREAD_COLS ")"
                               " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                               " ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
enum { P_SPREADS = 1 + SIZE_MEMBERS, P_COUNT = P_SPREADS + 3 * SPREADS };

/* ---- the walk --------------------------------------------------------------- */

static int size_walk(struct rwalk *w, const json_t *e, const char *path, size_t i, json_t *seen,
                     const void *ctx)
{
    char bufs[SIZE_MEMBERS][RW_NUM];
    const char *p[P_COUNT] = {w->job};
    const char **m = p + 1;
    struct rw_spread sp[SPREADS];
    (void)i, (void)ctx;
    if (!json_is_object(e))
        return rw_fail(w, path, "", "must be an object");
    if (rw_members(w, e, path, size_members, SIZE_MEMBERS, bufs, m) != 0 ||
        rw_unique(w, seen, path, "asked", m[S_ASKED]) != 0)
        return -1;
    int launched = strcmp(m[S_LAUNCHED], "1") == 0;
    if (!launched && !m[S_ERROR])
        return rw_fail(w, path, "error", "is required when the size did not launch");
    for (size_t k = 0; k < SPREADS; k++) {
        char here[RW_PATH];
        const json_t *parent = json_object_get(e, spreads[k].parent);
        rw_join(here, sizeof here, path, spreads[k].parent);
        if (!parent && !launched)
            continue;
        if (!json_is_object(parent))
            return rw_fail(w, path, spreads[k].parent, "must be an object when the size launched");
        if (rw_spread(w, parent, here, spreads[k].key, launched ? RW_REQUIRED : 0, &sp[k]) != 0)
            return -1;
        for (int j = 0; j < 3; j++)
            p[P_SPREADS + 3 * k + (size_t)j] = sp[k].v[j];
    }
    return rw_exec(w, size_sql, p, P_COUNT);
}

static int run_walk(struct rwalk *w, const json_t *d)
{
    char bufs[RUN_MEMBERS][RW_NUM];
    const char *p[R_COUNT] = {w->job, w->device};
    const json_t *sizes = NULL;
    if (rw_members(w, d, DSM, run_members, RUN_MEMBERS, bufs, p + 2) != 0 ||
        rw_arr(w, d, DSM, "sizes", RW_REQUIRED, &sizes) != 0)
        return -1;
    if (json_array_size(sizes) > MAX_CLUSTER)
        return rw_fail(w, DSM, "sizes", "must have at most %d entries", MAX_CLUSTER);
    if (rw_exec(w, run_sql, p, R_COUNT) != 0)
        return -1;
    return rw_each(w, sizes, DSM ".sizes", size_walk, NULL);
}

int results_memory_dsm_walk(struct rwalk *w, const json_t *doc)
{
    return rw_own_member(w, doc, DSM, run_sql, R_COUNT, R_ERROR, run_walk);
}

/* ---- reading back ------------------------------------------------------------- */

static void take_run(sqlite3_stmt *st, void *out)
{
    json_t *d = json_object();
    json_object_set_new(out, DSM, d);
    if (sqlite3_column_type(st, (int)RUN_MEMBERS) != SQLITE_NULL) {
        json_object_set_new(d, "error", rc_text(st, (int)RUN_MEMBERS));
        json_object_set_new(d, "wall_s", rc_num(st, (int)RUN_MEMBERS - 1));
        return;
    }
    rc_members(st, 0, run_members, RUN_MEMBERS, d);
    json_object_set_new(d, "sizes", json_array());
}

static void take_size(sqlite3_stmt *st, void *sizes)
{
    json_t *e = json_object();
    rc_members(st, 0, size_members, SIZE_MEMBERS, e);
    for (size_t k = 0; k < SPREADS; k++) {
        json_t *v = rc_spread(st, (int)(SIZE_MEMBERS + 3 * k));
        if (json_is_null(v)) {
            json_decref(v);
            continue;
        }
        json_t *parent = json_object_get(e, spreads[k].parent);
        if (!parent)
            json_object_set_new(e, spreads[k].parent, parent = json_object());
        json_object_set_new(parent, spreads[k].key, v);
    }
    json_t *gbs = json_object_get(e, "gb_s_sm");
    if (gbs && json_is_null(json_object_get(gbs, "local")) && json_is_null(json_object_get(gbs, "remote")))
        json_object_del(e, "gb_s_sm");
    json_array_append_new(sizes, e);
}

int results_memory_dsm_read(struct conn *c, int64_t job_id, json_t *out, char *err, size_t errlen)
{
    json_object_set_new(out, DSM, json_null());
    if (rc_each(c, "SELECT " RUN_COLS ", error FROM memory_dsmem WHERE job_id = ?1", job_id, take_run,
                out, "reading the distributed shared memory run", err, errlen) != 0)
        return -1;
    json_t *sizes = json_object_get(json_object_get(out, DSM), "sizes");
    if (!sizes)
        return 0;
    return rc_each(c, "SELECT " SIZE_COLS ", " SPREAD_COLS " FROM memory_dsmem_sizes WHERE job_id = ?1"
                      " ORDER BY asked",
                   job_id, take_size, sizes, "reading the distributed shared memory sizes", err, errlen);
}
