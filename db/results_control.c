/*
 * The control-code probe's results: document -> control_code_instr,
 * control_code_sweep and control_code_meanings rows, and back (see
 * results.h for the document).
 *
 * DESIGN
 * One control_code_instr row per instruction, in document order (seq): what
 * the compiler wrote (stall count, yield), the chain-timed latency, the
 * smallest stall that still gave the right answer (NULL when none did; the
 * latency reader serves it beside the latency figure), and the two straight
 * lines fitted to cycles over stall (chain and stream, each over a range of
 * stalls at one yield; each may be null).
 * One control_code_sweep row per stall x yield point of an instruction,
 * keyed by them, so a point measured twice is refused by the walk with its
 * path. An instruction that could not be measured carries an error and may
 * lack its sweep and fits; otherwise both are required. Each meaning is a
 * control_code_meanings row: its text in a column for queries, the whole
 * object as JSON (it may hold anything beside the text). The member tables
 * below name each column once for the walk and the reader. The probe's
 * tallies ("runs", "seconds") stay in the job's result document.
 */
#include <stdio.h>
#include <string.h>

#include "db/results_internal.h"

#define MAX_STALL 15             /* the 4-bit stall field */

/* control_code_instr columns after seq, in order. */
static const struct rw_member instr_members[] = {
    {"", "name", 's', RW_REQUIRED, 0, 0},
    {"", "sass", 's', RW_REQUIRED, 0, 0},
    {"", "compiler_stall", 'i', 0, 0, MAX_STALL},
    {"", "compiler_yield", 'i', 0, 0, 1},
    {"", "min_safe_stall", 'i', 0, 0, MAX_STALL},
    {"", "error", 's', 0, 0, 0},
};
#define INSTR_MEMBERS (sizeof instr_members / sizeof instr_members[0])
enum { M_NAME, M_ERROR = 5 };    /* positions in instr_members */

/* A fit's columns (chain_* then stream_*). */
static const struct rw_member fit_members[] = {
    {"", "slope", 'n', RW_REQUIRED, 0, 0},
    {"", "intercept", 'n', RW_REQUIRED, 0, 0},
    {"", "max_residual", 'n', RW_REQUIRED, 0, 0},
    {"", "from_stall", 'i', 0, 0, MAX_STALL},
    {"", "to_stall", 'i', 0, 0, MAX_STALL},
    {"", "yield", 'i', 0, 0, 1},
};
#define FIT_MEMBERS (sizeof fit_members / sizeof fit_members[0])
static const char *const fit_kinds[] = {"chain", "stream"};

/* control_code_sweep columns after instr, before the two spreads. */
static const struct rw_member point_members[] = {
    {"", "stall", 'i', RW_REQUIRED, 0, MAX_STALL},
    {"", "yield", 'i', RW_REQUIRED, 0, 1},
    {"", "chain_correct", 'b', RW_REQUIRED, 0, 0},
    {"", "stream_correct", 'b', RW_REQUIRED, 0, 0},
};
#define POINT_MEMBERS (sizeof point_members / sizeof point_members[0])

#define FIT_COLS(p) p "_slope, " p "_intercept, " p "_max_residual, " p "_from_stall, " \
                    p "_to_stall, " p "_yield"
#define INSTR_COLS "instr, sass, compiler_stall, compiler_yield, min_safe_stall, error," \
                   " chain_latency_median, chain_latency_min, chain_latency_max, " \
                   FIT_COLS("chain") ", " FIT_COLS("stream")
#define POINT_COLS "stall, yield, chain_correct, stream_correct, chain_median, chain_min," \
                   " chain_max, stream_median, stream_min, stream_max"

/* Parameter positions of the instruction's INSERT. */
enum {
    I_JOB, I_DEVICE, I_SEQ, I_MEMBERS, I_LATENCY = I_MEMBERS + INSTR_MEMBERS,
    I_FITS = I_LATENCY + 3, I_COUNT = I_FITS + 2 * FIT_MEMBERS
};

static const char instr_sql[] =
    "INSERT INTO control_code_instr (job_id, device, seq, " INSTR_COLS ")"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
static const char point_sql[] =
    "INSERT INTO control_code_sweep (job_id, device, instr, " POINT_COLS ")"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
static const char meaning_sql[] =
    "INSERT INTO control_code_meanings (job_id, device, seq, name, text, json)"
    " VALUES (?, ?, ?, ?, ?, ?)";

/* ---- the walk --------------------------------------------------------------- */

struct instr_row {
    const char *p[I_COUNT];
    char seq[RW_NUM], bufs[INSTR_MEMBERS][RW_NUM], fit_bufs[2 * FIT_MEMBERS][RW_NUM];
    struct rw_spread latency;
};

/* fit.chain and fit.stream: each an object or null. */
static int fits_walk(struct rwalk *w, const json_t *e, const char *path, int flags,
                     struct instr_row *r)
{
    const json_t *fit, *one;
    char here[RW_PATH], there[RW_PATH];
    if (rw_obj(w, e, path, "fit", flags, &fit) != 0)
        return -1;
    rw_join(here, sizeof here, path, "fit");
    for (size_t k = 0; fit && k < 2; k++) {
        if (rw_obj(w, fit, here, fit_kinds[k], 0, &one) != 0)
            return -1;
        if (one && rw_members(w, one, rw_join(there, sizeof there, here, fit_kinds[k]),
                              fit_members, FIT_MEMBERS, r->fit_bufs + k * FIT_MEMBERS,
                              r->p + I_FITS + k * FIT_MEMBERS) != 0)
            return -1;
    }
    return 0;
}

/* One stall x yield point of the instruction named ctx; seen collects the
 * points so far. */
static int point_walk(struct rwalk *w, const json_t *pt, const char *path, size_t i,
                      json_t *seen, const void *ctx)
{
    char bufs[POINT_MEMBERS][RW_NUM], id[64];
    struct rw_spread chain, stream;
    const char *p[13] = {w->job, w->device, ctx};
    (void)i;
    if (!json_is_object(pt))
        return rw_fail(w, "", path, "must be an object");
    if (rw_members(w, pt, path, point_members, POINT_MEMBERS, bufs, p + 3) != 0 ||
        rw_spread(w, pt, path, "chain_cycles", RW_REQUIRED, &chain) != 0 ||
        rw_spread(w, pt, path, "stream_cycles", RW_REQUIRED, &stream) != 0)
        return -1;
    snprintf(id, sizeof id, "stall %s, yield %s", p[3], p[4]);
    if (rw_unique(w, seen, path, "stall", id) != 0)
        return -1;
    for (int k = 0; k < 3; k++) {
        p[7 + k] = chain.v[k];
        p[10 + k] = stream.v[k];
    }
    return rw_exec(w, point_sql, p, 13);
}

static int sweep_walk(struct rwalk *w, const json_t *e, const char *path, int flags,
                      const char *instr)
{
    const json_t *sweep;
    char prefix[RW_PATH + 8];
    if (rw_arr(w, e, path, "sweep", flags, &sweep) != 0)
        return -1;
    snprintf(prefix, sizeof prefix, "%s.sweep", path);
    return rw_each(w, sweep, prefix, point_walk, instr);
}

/* One instruction: its row, then its sweep. seen collects the names so far. */
static int instr_walk(struct rwalk *w, const json_t *e, const char *path, size_t i,
                      json_t *seen, const void *ctx)
{
    struct instr_row r;
    (void)ctx;
    memset(&r, 0, sizeof r);
    if (!json_is_object(e))
        return rw_fail(w, "", path, "must be an object");
    if (rw_members(w, e, path, instr_members, INSTR_MEMBERS, r.bufs, r.p + I_MEMBERS) != 0 ||
        rw_spread(w, e, path, "chain_latency_cycles", 0, &r.latency) != 0)
        return -1;
    /* measured: the sweep and the fits must be there */
    int flags = r.p[I_MEMBERS + M_ERROR] ? 0 : RW_REQUIRED;
    const char *name = r.p[I_MEMBERS + M_NAME];
    if (fits_walk(w, e, path, flags, &r) != 0 || rw_unique(w, seen, path, "name", name) != 0)
        return -1;
    snprintf(r.seq, sizeof r.seq, "%zu", i);
    r.p[I_JOB] = w->job;
    r.p[I_DEVICE] = w->device;
    r.p[I_SEQ] = r.seq;
    for (int k = 0; k < 3; k++)
        r.p[I_LATENCY + k] = r.latency.v[k];
    if (rw_exec(w, instr_sql, r.p, I_COUNT) != 0)
        return -1;
    return sweep_walk(w, e, path, flags, name);
}

static int meanings_walk(struct rwalk *w, const json_t *doc)
{
    const json_t *meanings, *m;
    const char *name;
    char path[RW_PATH], seq[RW_NUM];
    size_t i = 0;
    if (rw_obj(w, doc, "", "meanings", RW_REQUIRED, &meanings) != 0)
        return -1;
    json_object_foreach((json_t *)meanings, name, m) {
        const char *p[6] = {w->job, w->device, seq, name};
        rw_join(path, sizeof path, "meanings", name);
        if (!json_is_object(m))
            return rw_fail(w, "meanings", name, "must be an object with a \"text\"");
        if (rw_str(w, m, path, "text", RW_REQUIRED, &p[4]) != 0)
            return -1;
        snprintf(seq, sizeof seq, "%zu", i++);
        if (rw_exec_json(w, meaning_sql, p, 6, 5, m) != 0)
            return -1;
    }
    return 0;
}

int results_control_codes_walk(struct rwalk *w, const json_t *doc)
{
    const json_t *list;
    if (rw_provenance(w, doc, "control-codes") != 0 ||
        rw_arr(w, doc, "", "instructions", RW_REQUIRED, &list) != 0 ||
        rw_each(w, list, "instructions", instr_walk, NULL) != 0)
        return -1;
    return meanings_walk(w, doc);
}

RW_ENTRY_POINTS(results_control_codes_check, results_control_codes_save,
                results_control_codes_walk)

/* ---- reading back ------------------------------------------------------------- */

/* Columns of an instruction row: the members, the latency, the two fits. */
#define C_LATENCY ((int)INSTR_MEMBERS)
#define C_FITS (C_LATENCY + 3)

/* A fit from its columns; null when it was null. */
static json_t *fit_from(sqlite3_stmt *st, int col)
{
    if (sqlite3_column_type(st, col) == SQLITE_NULL)
        return json_null();
    json_t *o = json_object();
    rc_members(st, col, fit_members, FIT_MEMBERS, o);
    return o;
}

struct instr_list {
    json_t *list;                /* the instructions, in order */
    json_t *by_name;             /* name -> its object (borrowed) */
};

static void take_instr(sqlite3_stmt *st, void *ctx)
{
    struct instr_list *l = ctx;
    json_t *o = json_object();
    rc_members(st, 0, instr_members, INSTR_MEMBERS, o);
    json_object_set_new(o, "chain_latency_cycles", rc_spread(st, C_LATENCY));
    json_object_set_new(o, "fit", json_pack("{s:o, s:o}", "chain", fit_from(st, C_FITS),
                                            "stream", fit_from(st, C_FITS + FIT_MEMBERS)));
    json_object_set_new(o, "sweep", json_array());
    json_object_set(l->by_name, json_string_value(json_object_get(o, "name")), o);
    json_array_append_new(l->list, o);
}

/* A sweep point, appended to its instruction's sweep. */
static void take_point(sqlite3_stmt *st, void *ctx)
{
    struct instr_list *l = ctx;
    json_t *o = json_object();
    rc_members(st, 1, point_members, POINT_MEMBERS, o);
    json_object_set_new(o, "chain_cycles", rc_spread(st, 1 + POINT_MEMBERS));
    json_object_set_new(o, "stream_cycles", rc_spread(st, 4 + POINT_MEMBERS));
    json_t *instr = json_object_get(l->by_name, (const char *)sqlite3_column_text(st, 0));
    json_array_append_new(json_object_get(instr, "sweep"), o);
}

static void take_meaning(sqlite3_stmt *st, void *meanings)
{
    json_object_set_new(meanings, (const char *)sqlite3_column_text(st, 0), rc_json(st, 1));
}

int results_control_codes_read(struct conn *c, int64_t job_id, json_t *out, char *err,
                               size_t errlen)
{
    struct instr_list l = {json_array(), json_object()};
    json_t *meanings = json_object();
    json_object_set_new(out, "instructions", l.list);
    json_object_set_new(out, "meanings", meanings);
    int rc = rc_each(c, "SELECT " INSTR_COLS " FROM control_code_instr WHERE job_id = ?1"
                        " ORDER BY seq", job_id, take_instr, &l, "reading control codes",
                     err, errlen) != 0 ||
                     rc_each(c, "SELECT instr, " POINT_COLS " FROM control_code_sweep"
                                " WHERE job_id = ?1 ORDER BY instr, stall, yield", job_id,
                             take_point, &l, "reading the control-code sweep", err,
                             errlen) != 0 ||
                     rc_each(c, "SELECT name, json FROM control_code_meanings WHERE job_id = ?1"
                                " ORDER BY seq", job_id, take_meaning, meanings,
                             "reading control-code meanings", err, errlen) != 0
                 ? -1
                 : 0;
    json_decref(l.by_name);
    return rc;
}
