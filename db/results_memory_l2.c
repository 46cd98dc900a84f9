/*
 * The memory probe's L2 partitions ("l2_partitions" in its document, written
 * by probes/l2_parts*.c): document -> one memory_l2_partitions row, and back.
 *
 * DESIGN
 * The member is optional (documents from before the search have none and
 * get no row). It is one of: the search could not run ({"error": "..."} or
 * a bare string: the row keeps the reason alone); it ran, with its verdict
 * ("two partitions", "one partition", "not determined" with a reason) and
 * whatever figures it found. The single figures are columns, named once in
 * l2_members for the walk and the reader; the SMs' partitions (one per
 * %smid, null where not measured) and the home bits are lists kept whole as
 * JSON text, each checked here: a verdict of two partitions must have both,
 * every SM's partition 0, 1 or null and every home bit below the page, so
 * a stored map is one the cache model can use (trace cache --device).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/results_internal.h"

#define L2 "l2_partitions"
#define MAX_SMS 1024
#define PAGE_BITS 21

static const struct rw_member l2_members[] = {
    {"", "verdict", 's', RW_REQUIRED, 0, 0},
    {"", "reason", 's', 0, 0, 0},
    {"", "warmer_sm", 'i', 0, 0, MAX_SMS},
    {"", "lines", 'i', 0, 1, 1 << 20},
    {"", "threshold_cycles", 'n', 0, 0, 0},
    {"cycles", "near", 'n', 0, 0, 0},
    {"cycles", "far", 'n', 0, 0, 0},
    {"cycles", "far_second_read", 'n', 0, 0, 0},
    {"cycles", "memory_home_near", 'n', 0, 0, 0},
    {"cycles", "memory_home_far", 'n', 0, 0, 0},
    {"", "far_fraction", 'n', 0, 0, 0},
    {"", "ambiguous_lines", 'i', 0, 0, 1 << 20},
    {"", "copies_kept", 'b', 0, 0, 0},
    {"home", "granule_bytes", 'i', 0, 1, 1ll << 40},
    {"", "wall_s", 'n', 0, 0, 0},
};
#define L2_MEMBERS (sizeof l2_members / sizeof l2_members[0])
enum { M_VERDICT, M_REASON };

#define L2_COLS "verdict, reason, warmer_sm, lines, threshold_cycles, near_cycles, far_cycles," \
                " far_second_read_cycles, memory_home_near_cycles, memory_home_far_cycles,"     \
                " far_fraction, ambiguous_lines, copies_kept, granule_bytes, wall_s"
#define L2_LISTS "sm_partition, home_mask_bits"

static const char row_sql[] =
    "INSERT INTO memory_l2_partitions (job_id, device, " L2_COLS ", " L2_LISTS ", error)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
enum { P_LISTS = 2 + L2_MEMBERS, P_ERROR = P_LISTS + 2, P_COUNT };

static int is_verdict(const char *v)
{
    return v && (strcmp(v, "two partitions") == 0 || strcmp(v, "one partition") == 0 ||
                 strcmp(v, "not determined") == 0);
}

/* Every item of list an integer from lo to hi (or null when nulls). */
static int list_check(struct rwalk *w, const json_t *list, const char *path, const char *key, long long lo,
                      long long hi, int nulls, size_t max)
{
    if (!json_is_array(list) || json_array_size(list) > max)
        return rw_fail(w, path, key, "must be a list of at most %zu entries", max);
    for (size_t i = 0; i < json_array_size(list); i++) {
        const json_t *v = json_array_get(list, i);
        if (json_is_null(v) && nulls)
            continue;
        if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
            return rw_fail(w, path, key, "entry %zu must be an integer from %lld to %lld%s", i, lo, hi,
                           nulls ? " or null" : "");
    }
    return 0;
}

static int search_walk(struct rwalk *w, const json_t *l2)
{
    char bufs[L2_MEMBERS][RW_NUM];
    const char *p[P_COUNT] = {w->job, w->device};
    const json_t *sm = json_object_get(l2, "sm_partition");
    const json_t *bits = json_object_get(json_object_get(l2, "home"), "mask_bits");
    if (rw_members(w, l2, L2, l2_members, L2_MEMBERS, bufs, p + 2) != 0)
        return -1;
    const char *v = p[2 + M_VERDICT];
    if (!is_verdict(v))
        return rw_fail(w, L2, "verdict", "must be \"two partitions\", \"one partition\" or \"not determined\"");
    if (strcmp(v, "not determined") == 0 && !p[2 + M_REASON])
        return rw_fail(w, L2, "reason", "is required when not determined");
    if (strcmp(v, "two partitions") == 0 && (!sm || !bits))
        return rw_fail(w, L2, "verdict", "two partitions need sm_partition and home.mask_bits");
    if ((sm && !json_is_null(sm) && list_check(w, sm, L2, "sm_partition", 0, 1, 1, MAX_SMS)) ||
        (bits && !json_is_null(bits) && list_check(w, bits, L2 ".home", "mask_bits", 0, PAGE_BITS - 1, 0, 64)))
        return -1;
    char *sm_text = sm && !json_is_null(sm) ? json_dumps(sm, JSON_COMPACT) : NULL;
    p[P_LISTS] = sm_text;
    int rc = rw_exec_json(w, row_sql, p, P_COUNT, P_LISTS + 1, bits && !json_is_null(bits) ? bits : NULL);
    free(sm_text);
    return rc;
}

int results_memory_l2_walk(struct rwalk *w, const json_t *doc)
{
    return rw_own_member(w, doc, L2, row_sql, P_COUNT, P_ERROR, search_walk);
}

/* ---- reading back ------------------------------------------------------------- */

static void take_row(sqlite3_stmt *st, void *out)
{
    json_t *l2 = json_object();
    json_object_set_new(out, L2, l2);
    if (sqlite3_column_type(st, (int)L2_MEMBERS + 2) != SQLITE_NULL) {
        json_object_set_new(l2, "error", rc_text(st, (int)L2_MEMBERS + 2));
        return;
    }
    rc_members(st, 0, l2_members, L2_MEMBERS, l2);
    json_t *sm = rc_json(st, (int)L2_MEMBERS), *bits = rc_json(st, (int)L2_MEMBERS + 1);
    json_object_set_new(l2, "sm_partition", sm);
    json_t *home = json_object_get(l2, "home");
    if (!home)
        json_object_set_new(l2, "home", home = json_object());
    json_object_set_new(home, "mask_bits", bits);
    json_object_set_new(home, "page_bits", json_integer(PAGE_BITS));
    int n[2] = {0, 0};
    for (size_t i = 0; json_is_array(sm) && i < json_array_size(sm); i++)
        if (json_is_integer(json_array_get(sm, i)))
            n[json_integer_value(json_array_get(sm, i)) != 0]++;
    json_object_set_new(l2, "sms_per_partition", json_pack("[i,i]", n[0], n[1]));
}

int results_memory_l2_read(struct conn *c, int64_t job_id, json_t *out, char *err, size_t errlen)
{
    json_object_set_new(out, L2, json_null());
    return rc_each(c, "SELECT " L2_COLS ", " L2_LISTS ", error FROM memory_l2_partitions WHERE job_id = ?1",
                   job_id, take_row, out, "reading the L2 partitions", err, errlen);
}
