/*
 * The memory probe's block placement ("block_placement" in its document,
 * written by probes/placement*.c): document -> one memory_block_placement
 * row, and back.
 *
 * DESIGN
 * The member is optional (documents from before the probe have none and get
 * no row). It is one of: the probe could not run ({"error": "..."} or a bare
 * string: the row keeps the reason alone); it ran, with its status
 * ("determined", or "not determined" with a reason) and its figures. The
 * single figures are columns, named once in deal_members for the walk and
 * the reader; the order (one SM id per block of the launch) is kept whole as
 * JSON text and checked here: a determined order has one entry per block,
 * each an SM of the device, so a stored order is one the sorter can deal
 * with (trace sort --device, trace/deal.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/results_internal.h"

#define DEAL "block_placement"
#define MAX_SMS 4096
#define MAX_BLOCKS (MAX_SMS * 64)

static const struct rw_member deal_members[] = {
    {"", "status", 's', RW_REQUIRED, 0, 0},
    {"", "reason", 's', 0, 0, 0},
    {"", "threads_per_block", 'i', 0, 1, 1024},
    {"", "blocks", 'i', 0, 0, MAX_BLOCKS},
    {"", "blocks_per_sm", 'i', 0, 0, 64},
    {"", "sms", 'i', 0, 0, MAX_SMS},
    {"", "spin_ns", 'i', 0, 0, 1ll << 40},
    {"", "launches", 'i', 0, 0, 1000},
    {"", "same_as_first", 'i', 0, 0, 1000},
    {"", "one_wave", 'b', 0, 0, 0},
    {"", "deal_ns", 'i', 0, 0, 1ll << 40},
    {"check", "threads_per_block", 'i', 0, 1, 1024},
    {"check", "blocks", 'i', 0, 0, MAX_BLOCKS},
    {"check", "blocks_per_sm", 'i', 0, 0, 64},
    {"check", "one_wave", 'b', 0, 0, 0},
    {"check", "predicted", 'i', 0, 0, MAX_BLOCKS},
    {"check", "error", 's', 0, 0, 0},
    {"", "wall_s", 'n', 0, 0, 0},
};
#define DEAL_MEMBERS (sizeof deal_members / sizeof deal_members[0])
enum { M_STATUS, M_REASON, M_THREADS, M_BLOCKS, M_BPS, M_SMS };

#define DEAL_COLS "status, reason, threads_per_block, blocks, blocks_per_sm, sms, spin_ns, launches," \
                  " same_as_first, one_wave, deal_ns, check_threads_per_block, check_blocks,"     \
                  " check_blocks_per_sm, check_one_wave, check_predicted, check_error, wall_s"

static const char row_sql[] =
    "INSERT INTO memory_block_placement (job_id, device, " DEAL_COLS ", sm_order, error)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
enum { P_ORDER = 2 + DEAL_MEMBERS, P_ERROR, P_COUNT };

/* A determined order: blocks entries, each an SM below sms, every SM
 * the same number of times (what the probe's verdict requires: a launch
 * that filled every SM alike), so the sorter can deal any kernel in it. */
static int order_check(struct rwalk *w, const json_t *order, const char *const *p)
{
    long long blocks = p[2 + M_BLOCKS] ? atoll(p[2 + M_BLOCKS]) : -1;
    long long sms = p[2 + M_SMS] ? atoll(p[2 + M_SMS]) : -1;
    if (!json_is_array(order) || blocks < 1 || sms < 1 || (long long)json_array_size(order) != blocks ||
        blocks % sms)
        return rw_fail(w, DEAL, "order", "must be a list of one SM per block, blocks a multiple of sms "
                       "(both given)");
    unsigned *held = calloc((size_t)sms, sizeof *held);
    if (!held)
        return rw_fail(w, DEAL, "order", "out of memory");
    int rc = 0;
    for (size_t i = 0; i < json_array_size(order) && rc == 0; i++) {
        const json_t *v = json_array_get(order, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) >= sms)
            rc = rw_fail(w, DEAL, "order", "entry %zu must be an SM from 0 to %lld", i, sms - 1);
        else
            held[json_integer_value(v)]++;
    }
    for (long long s = 0; s < sms && rc == 0; s++)
        if (held[s] != blocks / sms)
            rc = rw_fail(w, DEAL, "order", "SM %lld holds %u blocks of it, not %lld as every SM", s,
                         held[s], blocks / sms);
    free(held);
    return rc;
}

static int deal_walk(struct rwalk *w, const json_t *d)
{
    char bufs[DEAL_MEMBERS][RW_NUM];
    const char *p[P_COUNT] = {w->job, w->device};
    const json_t *order = json_object_get(d, "order");
    if (rw_members(w, d, DEAL, deal_members, DEAL_MEMBERS, bufs, p + 2) != 0)
        return -1;
    const char *s = p[2 + M_STATUS];
    int determined = strcmp(s, "determined") == 0;
    if (!determined && strcmp(s, "not determined") != 0)
        return rw_fail(w, DEAL, "status", "must be \"determined\" or \"not determined\"");
    if (!determined && !p[2 + M_REASON])
        return rw_fail(w, DEAL, "reason", "is required when not determined");
    if (determined && order_check(w, order, p))
        return -1;
    return rw_exec_json(w, row_sql, p, P_COUNT, P_ORDER, determined ? order : NULL);
}

int results_memory_deal_walk(struct rwalk *w, const json_t *doc)
{
    return rw_own_member(w, doc, DEAL, row_sql, P_COUNT, P_ERROR, deal_walk);
}

/* ---- reading back ------------------------------------------------------------- */

static void take_row(sqlite3_stmt *st, void *out)
{
    json_t *d = json_object();
    json_object_set_new(out, DEAL, d);
    if (sqlite3_column_type(st, (int)DEAL_MEMBERS + 1) != SQLITE_NULL) {
        json_object_set_new(d, "error", rc_text(st, (int)DEAL_MEMBERS + 1));
        return;
    }
    rc_members(st, 0, deal_members, DEAL_MEMBERS, d);
    json_t *order = rc_json(st, (int)DEAL_MEMBERS);
    if (json_is_array(order))
        json_object_set_new(d, "order", order);
    else
        json_decref(order);
}

int results_memory_deal_read(struct conn *c, int64_t job_id, json_t *out, char *err, size_t errlen)
{
    json_object_set_new(out, DEAL, json_null());
    return rc_each(c, "SELECT " DEAL_COLS ", sm_order, error FROM memory_block_placement WHERE job_id = ?1",
                   job_id, take_row, out, "reading the block placement", err, errlen);
}
