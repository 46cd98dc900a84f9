/*
 * The register-bank probe's results: document -> banks_runs, banks_map and
 * banks_costs rows, and back (see results.h for the document).
 *
 * DESIGN
 * The run's single figures (bank count, threshold, how many runs the search
 * took and how many all pairs would have taken, the confirmation's tally,
 * whether every edited kernel was re-read, the time) are one banks_runs row,
 * named once in run_members, which drives both the walk and the reader; the
 * conflict-free reference rate is a spread beside them. The bank of every
 * tested register is a banks_map row, and each named cost test a banks_costs
 * row (its sources, NULL for RZ, the reuse flags, the rate and its ratio to
 * the reference, whether it conflicted). The classes are not stored: they
 * are the map read by bank, so the walk checks that the document's classes
 * say what its map says and the reader rebuilds them from the rows. The map
 * must cover R0 up to the highest tested register, each entry a bank below
 * bank_count. Registers the probe could not test are kept whole as JSON,
 * and so is the reuse-cache analysis ("reuse_cache", probes/banks_reuse.h:
 * its questions' outcomes are checked, the rest is its own record); a run
 * stored before it existed reads back without the member.
 * The reader answers in the shape of the document.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "db/results_internal.h"

#define BANKS_REGS 255           /* R0..R254: the registers an instruction can name */

/* The banks_runs columns after job_id, device and the reference spread. */
static const struct rw_member run_members[] = {
    {"", "bank_count", 'i', RW_REQUIRED, 1, BANKS_REGS},
    {"", "threshold", 'n', RW_REQUIRED, 0, 0},
    {"kernel", "highest_tested_register", 'i', RW_REQUIRED, 0, BANKS_REGS - 1},
    {"runs", "total", 'i', RW_REQUIRED, 0, 0},
    {"runs", "class_building", 'i', 0, 0, 0},
    {"runs", "confirmation", 'i', 0, 0, 0},
    {"runs", "all_pairs_would_be", 'i', 0, 0, 0},
    {"confirmation", "pairs", 'i', RW_REQUIRED, 0, LLONG_MAX},
    {"confirmation", "agree", 'i', RW_REQUIRED, 0, 0},
    {"sass_check", "verified", 'b', RW_REQUIRED, 0, 0},
    {"seconds", "total", 'n', RW_REQUIRED, 0, 0},
};
#define RUN_MEMBERS (sizeof run_members / sizeof run_members[0])

#define RUN_MEMBER_COLS "bank_count, threshold, highest_register, runs_total," \
                        " runs_class_building, runs_confirmation, all_pairs_would_be," \
                        " confirm_pairs, confirm_agree, verified, seconds_total"
#define REF_COLS "reference_rate_median, reference_rate_min, reference_rate_max"

static const char run_sql[] =
    "INSERT INTO banks_runs (job_id, device, " REF_COLS ", " RUN_MEMBER_COLS ", untested_json)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
static const char reuse_sql[] = "UPDATE banks_runs SET reuse_cache_json = ?2 WHERE job_id = ?1";
static const char map_sql[] =
    "INSERT INTO banks_map (job_id, device, register, bank) VALUES (?, ?, ?, ?)";
static const char cost_sql[] =
    "INSERT INTO banks_costs (job_id, device, seq, name, src_a, src_b, src_c, reuse,"
    " rate_median, rate_min, rate_max, ratio_median, ratio_min, ratio_max, conflict)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

/* ---- the walk --------------------------------------------------------------- */

struct banks_run {
    const char *p[5 + RUN_MEMBERS + 1];   /* job, device, reference x3, members, untested */
    char bufs[RUN_MEMBERS][RW_NUM];
    struct rw_spread ref;
    long long banks, highest;
};
#define P_MEMBERS 5
#define P_UNTESTED (P_MEMBERS + RUN_MEMBERS)

static long long int_of(const json_t *obj, const char *key)
{
    return (long long)json_integer_value(json_object_get(obj, key));
}

static int run_walk(struct rwalk *w, const json_t *doc, struct banks_run *r)
{
    const json_t *ref, *conf;
    if (rw_members(w, doc, "", run_members, RUN_MEMBERS, r->bufs, r->p + P_MEMBERS) != 0 ||
        rw_obj(w, doc, "", "reference", RW_REQUIRED, &ref) != 0 ||
        rw_spread(w, ref, "reference", "ffma_per_sm_clock", RW_REQUIRED, &r->ref) != 0)
        return -1;
    conf = json_object_get(doc, "confirmation");
    if (int_of(conf, "agree") < 0 || int_of(conf, "agree") > int_of(conf, "pairs"))
        return rw_fail(w, "confirmation", "agree", "must be from 0 to pairs (%lld)",
                       int_of(conf, "pairs"));
    r->banks = int_of(doc, "bank_count");
    r->highest = int_of(json_object_get(doc, "kernel"), "highest_tested_register");
    for (int i = 0; i < 3; i++)
        r->p[2 + i] = r->ref.v[i];
    return 0;
}

/* map[i] = the bank of Ri, for R0 up to the highest tested register. */
static int map_walk(struct rwalk *w, const json_t *doc, const struct banks_run *r)
{
    const json_t *map, *b;
    char reg[RW_NUM], bank[RW_NUM], key[32];
    size_t i;
    if (rw_arr(w, doc, "", "map", RW_REQUIRED, &map) != 0)
        return -1;
    if ((long long)json_array_size(map) != r->highest + 1)
        return rw_fail(w, "", "map", "has %zu entries, but registers R0..R%lld were tested",
                       json_array_size(map), r->highest);
    json_array_foreach(map, i, b) {
        snprintf(key, sizeof key, "map[%zu]", i);
        if (!json_is_integer(b) || json_integer_value(b) < 0 ||
            json_integer_value(b) >= r->banks)
            return rw_fail(w, "", key, "must be a bank from 0 to %lld", r->banks - 1);
        snprintf(reg, sizeof reg, "%zu", i);
        snprintf(bank, sizeof bank, "%lld", (long long)json_integer_value(b));
        const char *p[] = {w->job, w->device, reg, bank};
        if (rw_exec(w, map_sql, p, 4) != 0)
            return -1;
    }
    return 0;
}

/* classes[k] lists exactly the registers the map puts in bank k. */
static int classes_walk(struct rwalk *w, const json_t *doc, const struct banks_run *r)
{
    const json_t *classes, *members, *reg, *map = json_object_get(doc, "map");
    unsigned char listed[BANKS_REGS] = {0};
    char path[RW_PATH], key[32];
    size_t k, j, total = 0;
    if (rw_arr(w, doc, "", "classes", RW_REQUIRED, &classes) != 0)
        return -1;
    if ((long long)json_array_size(classes) != r->banks)
        return rw_fail(w, "", "classes", "has %zu classes, but bank_count is %lld",
                       json_array_size(classes), r->banks);
    json_array_foreach(classes, k, members) {
        snprintf(key, sizeof key, "classes[%zu]", k);
        if (!json_is_array(members))
            return rw_fail(w, "", key, "must be an array of registers");
        json_array_foreach(members, j, reg) {
            json_int_t n = json_integer_value(reg);
            snprintf(path, sizeof path, "%s[%zu]", key, j);
            if (!json_is_integer(reg) || n < 0 || n > r->highest || listed[n])
                return rw_fail(w, "", path, "must be a tested register listed once");
            if ((size_t)json_integer_value(json_array_get(map, (size_t)n)) != k)
                return rw_fail(w, "", path, "R%lld is in bank %lld by the map", (long long)n,
                               (long long)json_integer_value(json_array_get(map, (size_t)n)));
            listed[n] = 1;
            total++;
        }
    }
    if ((long long)total != r->highest + 1)
        return rw_fail(w, "", "classes", "list %zu registers, but the map has %lld", total,
                       r->highest + 1);
    return 0;
}

/* untested_registers: [{"register", "reason"}], optional, kept whole. */
static int untested_walk(struct rwalk *w, const json_t *doc, const json_t **list)
{
    const json_t *e;
    char path[RW_PATH], buf[RW_NUM];
    const char *v;
    size_t i;
    if (rw_arr(w, doc, "", "untested_registers", 0, list) != 0)
        return -1;
    json_array_foreach(*list, i, e) {
        snprintf(path, sizeof path, "untested_registers[%zu]", i);
        if (!json_is_object(e))
            return rw_fail(w, "", path, "must be an object");
        if (rw_int_in(w, e, path, "register", RW_REQUIRED, 0, BANKS_REGS - 1, buf, &v) != 0 ||
            rw_str(w, e, path, "reason", RW_REQUIRED, &v) != 0)
            return -1;
    }
    return 0;
}

/* reuse_cache, optional: {"not_run": why} or {"questions": [{"question",
 * "outcome": hit|miss|not determined, ...}], "rules": [sentences], ...}. */
static int reuse_walk(struct rwalk *w, const json_t *doc, const json_t **rc)
{
    const json_t *qs, *rules, *e;
    const char *v;
    char path[RW_PATH];
    size_t i;
    if (rw_obj(w, doc, "", "reuse_cache", 0, rc) != 0)
        return -1;
    if (!*rc || json_object_get(*rc, "not_run"))
        return *rc ? rw_str(w, *rc, "reuse_cache", "not_run", RW_REQUIRED, &v) : 0;
    if (rw_arr(w, *rc, "reuse_cache", "questions", RW_REQUIRED, &qs) != 0 ||
        rw_arr(w, *rc, "reuse_cache", "rules", RW_REQUIRED, &rules) != 0)
        return -1;
    json_array_foreach(qs, i, e) {
        snprintf(path, sizeof path, "reuse_cache.questions[%zu]", i);
        if (!json_is_object(e))
            return rw_fail(w, "", path, "must be an object");
        if (rw_str(w, e, path, "question", RW_REQUIRED, &v) != 0 ||
            rw_str(w, e, path, "outcome", RW_REQUIRED, &v) != 0)
            return -1;
        if (strcmp(v, "hit") != 0 && strcmp(v, "miss") != 0 && strcmp(v, "not determined") != 0)
            return rw_fail(w, path, "outcome", "must be \"hit\", \"miss\" or \"not determined\"");
    }
    json_array_foreach(rules, i, e)
        if (!json_is_string(e))
            return rw_fail(w, "reuse_cache", "rules", "must be sentences");
    return 0;
}

/* sources[i]: a register number, or "RZ" (NULL). */
static int source_walk(struct rwalk *w, const json_t *srcs, const char *path, size_t i,
                       char buf[RW_NUM], const char **out)
{
    const json_t *s = json_array_get(srcs, i);
    char key[16];
    snprintf(key, sizeof key, "sources[%zu]", i);
    *out = NULL;
    if (json_is_string(s) && strcmp(json_string_value(s), "RZ") == 0)
        return 0;
    if (!json_is_integer(s) || json_integer_value(s) < 0 ||
        json_integer_value(s) >= BANKS_REGS)
        return rw_fail(w, path, key, "must be a register from 0 to %d or \"RZ\"",
                       BANKS_REGS - 1);
    snprintf(buf, RW_NUM, "%lld", (long long)json_integer_value(s));
    *out = buf;
    return 0;
}

static int cost_walk(struct rwalk *w, const char *name, const json_t *c, size_t seq)
{
    const json_t *srcs;
    struct rw_spread rate, ratio;
    char path[RW_PATH], seqs[24], src[3][RW_NUM], reuse[RW_NUM];
    const char *p[15] = {w->job, w->device, seqs, name};
    rw_join(path, sizeof path, "costs", name);
    snprintf(seqs, sizeof seqs, "%zu", seq);
    if (!json_is_object(c))
        return rw_fail(w, "costs", name, "must be an object");
    if (rw_arr(w, c, path, "sources", RW_REQUIRED, &srcs) != 0)
        return -1;
    if (json_array_size(srcs) != 3)
        return rw_fail(w, path, "sources", "must be [a, b, c]");
    for (size_t i = 0; i < 3; i++)
        if (source_walk(w, srcs, path, i, src[i], &p[4 + i]) != 0)
            return -1;
    if (rw_int_in(w, c, path, "reuse", RW_REQUIRED, 0, 7, reuse, &p[7]) != 0 ||
        rw_spread(w, c, path, "ffma_per_sm_clock", RW_REQUIRED, &rate) != 0 ||
        rw_spread(w, c, path, "ratio", RW_REQUIRED, &ratio) != 0 ||
        rw_bool(w, c, path, "conflict", RW_REQUIRED, &p[14]) != 0)
        return -1;
    for (int i = 0; i < 3; i++) {
        p[8 + i] = rate.v[i];
        p[11 + i] = ratio.v[i];
    }
    return rw_exec(w, cost_sql, p, 15);
}

static int costs_walk(struct rwalk *w, const json_t *doc)
{
    const json_t *costs, *c;
    const char *name;
    size_t seq = 0;
    if (rw_obj(w, doc, "", "costs", RW_REQUIRED, &costs) != 0)
        return -1;
    json_object_foreach((json_t *)costs, name, c)
        if (cost_walk(w, name, c, seq++) != 0)
            return -1;
    return 0;
}

int results_banks_walk(struct rwalk *w, const json_t *doc)
{
    struct banks_run r;
    const json_t *untested, *reuse;
    const char *rp[2] = {w->job, NULL};
    memset(&r, 0, sizeof r);
    if (rw_provenance(w, doc, "banks") != 0 || run_walk(w, doc, &r) != 0 ||
        untested_walk(w, doc, &untested) != 0 || reuse_walk(w, doc, &reuse) != 0)
        return -1;
    r.p[0] = w->job;
    r.p[1] = w->device;
    if (rw_exec_json(w, run_sql, r.p, P_UNTESTED + 1, P_UNTESTED, untested) != 0 ||
        (reuse && rw_exec_json(w, reuse_sql, rp, 2, 1, reuse) != 0) ||
        map_walk(w, doc, &r) != 0 || classes_walk(w, doc, &r) != 0)
        return -1;
    return costs_walk(w, doc);
}

RW_ENTRY_POINTS(results_banks_check, results_banks_save, results_banks_walk)

/* ---- reading back ------------------------------------------------------------- */

static void take_run(sqlite3_stmt *st, void *out)
{
    rc_members(st, 0, run_members, RUN_MEMBERS, out);
    json_object_set_new(out, "reference",
                        json_pack("{s:o}", "ffma_per_sm_clock", rc_spread(st, RUN_MEMBERS)));
    json_object_set_new(out, "untested_registers", rc_json(st, RUN_MEMBERS + 3));
    if (sqlite3_column_type(st, RUN_MEMBERS + 4) != SQLITE_NULL)
        json_object_set_new(out, "reuse_cache", rc_json(st, RUN_MEMBERS + 4));
}

/* A map row: the bank appended to "map", the register to its class. */
static void take_register(sqlite3_stmt *st, void *out)
{
    json_t *classes = json_object_get(out, "classes");
    size_t bank = (size_t)sqlite3_column_int(st, 1);
    json_array_append_new(json_object_get(out, "map"), rc_int(st, 1));
    while (json_array_size(classes) <= bank)
        json_array_append_new(classes, json_array());
    json_array_append_new(json_array_get(classes, bank), rc_int(st, 0));
}

static json_t *source_from(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? json_string("RZ") : rc_int(st, col);
}

static void take_cost(sqlite3_stmt *st, void *costs)
{
    json_t *src = json_pack("[o, o, o]", source_from(st, 1), source_from(st, 2),
                            source_from(st, 3));
    json_object_set_new(costs, (const char *)sqlite3_column_text(st, 0),
                        json_pack("{s:o, s:o, s:o, s:o, s:o}", "sources", src, "reuse",
                                  rc_int(st, 4), "ffma_per_sm_clock", rc_spread(st, 5), "ratio",
                                  rc_spread(st, 8), "conflict", rc_bool(st, 11)));
}

int results_banks_read(struct conn *c, int64_t job_id, json_t *out, char *err, size_t errlen)
{
    json_t *costs = json_object();
    json_object_set_new(out, "map", json_array());
    json_object_set_new(out, "classes", json_array());
    json_object_set_new(out, "costs", costs);
    return rc_each(c, "SELECT " RUN_MEMBER_COLS ", " REF_COLS ", untested_json, reuse_cache_json"
                      " FROM banks_runs WHERE job_id = ?1", job_id, take_run, out,
                   "reading a banks run", err, errlen) != 0 ||
                   rc_each(c, "SELECT register, bank FROM banks_map WHERE job_id = ?1"
                              " ORDER BY register", job_id, take_register, out,
                           "reading the bank map", err, errlen) != 0 ||
                   rc_each(c, "SELECT name, src_a, src_b, src_c, reuse, rate_median, rate_min,"
                              " rate_max, ratio_median, ratio_min, ratio_max, conflict"
                              " FROM banks_costs WHERE job_id = ?1 ORDER BY seq", job_id,
                           take_cost, costs, "reading bank costs", err, errlen) != 0
               ? -1
               : 0;
}
