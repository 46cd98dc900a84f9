/*
 * Internals shared by the probe-result files of the store (db/results*.c);
 * nothing outside db/ includes this header.
 *
 * DESIGN
 * A `struct rwalk` is one pass over a result document. The rw_* readers take
 * one member of a JSON object, check its type and hand it back as the text a
 * statement binds (numbers as "%.17g", booleans as "1"/"0", absent or null as
 * NULL), or fail with "<path>.<key>: <why>" in the walk's err. rw_exec inserts
 * a row when the walk has a transaction and does nothing when it only checks,
 * so checking and saving share every line that decides what is well formed.
 * A table of struct rw_member names a run's single figures once, for the
 * walk (rw_members) and for the reader (rc_members); rw_prov_members is the
 * one every run's provenance shares. A list of rows is walked by rw_each,
 * which gives each item its path and the keys seen so far. A probe's walk
 * serves as its public check and saver through RW_ENTRY_POINTS. The reader
 * side turns columns back into JSON (rc_* helpers; rc_each steps a query's
 * rows) and serves a run, its rows and its device's history through
 * rc_serve, driven by a struct rc_runs that names the table the runs are in.
 */
#ifndef GPUPROBE_DB_RESULTS_INTERNAL_H
#define GPUPROBE_DB_RESULTS_INTERNAL_H

#include <jansson.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "db/results.h"
#include "db/store_internal.h"

#define RW_NUM 32          /* bytes of a number's text */
#define RW_PATH 96         /* bytes of a field path */
#define RW_HISTORY 50      /* runs listed in a reader's "history" */

/* rw_* flags */
#define RW_REQUIRED 1      /* absent (or null) is an error; else absent or null reads as NULL */
#define RW_ERROR_OK 2      /* a figure may be an error: {"error": "..."} or a bare string */
#define RW_NONNEG 4        /* a spread of what cannot be negative (a latency in cycles) */

struct rwalk {
    struct store_tx *tx;   /* NULL: check only, write nothing */
    int64_t job_id;        /* 0 when checking */
    char job[24];          /* the job id as text */
    const char *device;    /* device.uuid of the document, set by rw_provenance */
    char *err;
    size_t errlen;
};

/* A figure: median, min and max as bound texts (NULL = not measured), or an error. */
struct rw_spread {
    char num[3][RW_NUM];
    const char *v[3];
    const char *error;
};

/* Writes "<path>.<key>: <why>" (or "<key>: ..." for an empty path); returns -1. */
int rw_fail(struct rwalk *w, const char *path, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* path + "." + key into buf (key alone when path is empty). */
const char *rw_join(char *buf, size_t len, const char *path, const char *key);

int rw_str(struct rwalk *w, const json_t *obj, const char *path, const char *key, int flags,
           const char **out);
int rw_num(struct rwalk *w, const json_t *obj, const char *path, const char *key, int flags,
           char buf[RW_NUM], const char **out);
int rw_int(struct rwalk *w, const json_t *obj, const char *path, const char *key, int flags,
           char buf[RW_NUM], const char **out);
/* An integer from min to max (inclusive). */
int rw_int_in(struct rwalk *w, const json_t *obj, const char *path, const char *key, int flags,
              long long min, long long max, char buf[RW_NUM], const char **out);
int rw_bool(struct rwalk *w, const json_t *obj, const char *path, const char *key, int flags,
            const char **out);
/* An object (or, for rw_arr, an array) member; *out NULL when absent and optional. */
int rw_obj(struct rwalk *w, const json_t *obj, const char *path, const char *key, int flags,
           const json_t **out);
int rw_arr(struct rwalk *w, const json_t *obj, const char *path, const char *key, int flags,
           const json_t **out);
/* The reason when v is an error, {"error": "..."} or a bare string; else NULL. */
const char *rw_error_of(const json_t *v);
/* A figure {"median","min","max"}: numbers with min <= median <= max (what
 * every spread of repeats is), none negative with RW_NONNEG. */
int rw_spread(struct rwalk *w, const json_t *obj, const char *path, const char *key, int flags,
              struct rw_spread *sp);

/* Records id in seen; fails with "<path>.<key>: \"<id>\" appears twice" when it
 * is there already (what keys a row must be unique within its document). */
int rw_unique(struct rwalk *w, json_t *seen, const char *path, const char *key, const char *id);

/* One member of a document that fills one column: where it is (parent: a
 * member object of the document, "" for the document itself), its type and
 * whether it must be there. A table of them drives both a walk (rw_members)
 * and its reader (rc_members), so a run's single figures are named once. */
struct rw_member {
    const char *parent, *key;
    char type;               /* 'i' integer, 'n' number, 'b' boolean, 's' string */
    int flags;               /* RW_REQUIRED or 0 */
    long long min, max;      /* 'i' and 'n': the range, when min < max */
};

/* Reads members m[0..n) of doc (at path; "" for the document) into
 * params[0..n) (number texts in bufs). The parent of a required member must
 * be an object; an absent optional one leaves its members NULL. */
int rw_members(struct rwalk *w, const json_t *doc, const char *path, const struct rw_member *m,
               size_t n, char (*bufs)[RW_NUM], const char **params);

/* Walks the items of list (an array; NULL or anything else has none) in
 * order: walk(w, item, "<prefix>[i]", i, seen, ctx), seen an object fresh
 * for the list, in which the walk records the keys that must be unique.
 * Stops at the first failure and returns it. */
typedef int (*rw_item_fn)(struct rwalk *w, const json_t *item, const char *path, size_t i,
                          json_t *seen, const void *ctx);
int rw_each(struct rwalk *w, const json_t *list, const char *prefix, rw_item_fn walk,
            const void *ctx);

/* Runs an INSERT in the walk's transaction; a no-op when only checking. */
int rw_exec(struct rwalk *w, const char *sql, const char *const *params, size_t n);
/* The same with params[at] the JSON text of v (NULL when v is NULL): for a
 * column that keeps a member whole. params[at] is overwritten. */
int rw_exec_json(struct rwalk *w, const char *sql, const char **params, size_t n, size_t at,
                 const json_t *v);

/* A member of a result document stored in tables of its own (the memory
 * result's l1_sets, l2_partitions, distributed_shared, async_copy): absent
 * or null stores nothing (a result from before its probe); {"error": ...}
 * stores one row of n parameters with error_sql, job and device first, the
 * error at error_at and the rest NULL; anything but an object fails; an
 * object goes to walk. n is at most RW_ERROR_ROW_MAX. */
#define RW_ERROR_ROW_MAX 32
int rw_own_member(struct rwalk *w, const json_t *doc, const char *key, const char *error_sql,
                  size_t n, size_t error_at, int (*walk)(struct rwalk *w, const json_t *member));

/* Fails unless doc is an object whose "probe" is want. */
int rw_kind(struct rwalk *w, const json_t *doc, const char *want);

/* A run's provenance, in the order it is read: device.uuid, device.name,
 * device.compute_capability, driver_version, clock_mhz.before and .after
 * (a clock that could not be read is NULL; its reason stays in the job's
 * result), repeats, wall_s. The clocks from 1 to RW_CLOCK_MAX_MHZ (a GPU's
 * SM clock is 1-3 GHz: a reading of 0 or 1e300 MHz is not a clock), the
 * repeats from 1 to RW_REPEATS_MAX (a count of runs someone waited for),
 * wall_s not negative. */
#define RW_PROV 8
#define RW_CLOCK_MAX_MHZ 100000
#define RW_REPEATS_MAX 1000000
enum { RW_PROV_UUID, RW_PROV_CLOCK = 4 };   /* positions: the UUID, the first clock reading */
extern const struct rw_member rw_prov_members[RW_PROV];

/* Checks "probe" is want and reads the provenance; saving, inserts the
 * probe_runs row after checking that the document's device is the job's.
 * Sets w->device. */
int rw_provenance(struct rwalk *w, const json_t *doc, const char *want);

/* The probes' walks over a parsed document (results_latency.c, results_memory.c,
 * results_banks.c, results_control.c, results_dual.c). */
typedef int (*rw_walk_fn)(struct rwalk *w, const json_t *doc);
int results_latency_walk(struct rwalk *w, const json_t *doc);
int results_memory_walk(struct rwalk *w, const json_t *doc);
int results_banks_walk(struct rwalk *w, const json_t *doc);
int results_control_codes_walk(struct rwalk *w, const json_t *doc);
int results_dual_issue_walk(struct rwalk *w, const json_t *doc);

/* Runs walk over doc: with tx NULL only checking (job_id 0), else saving
 * the rows of job job_id in tx. Contract: tx, when given, is live and
 * job_id > 0. */
int rw_walk_doc(struct store_tx *tx, int64_t job_id, const json_t *doc, rw_walk_fn walk,
                char *err, size_t errlen);
/* Runs walk over the result in tx; the body of every saver. Contract: tx
 * is live and job_id > 0. */
int rw_save(struct store_tx *tx, int64_t job_id, const json_t *doc, rw_walk_fn walk,
            char *err, size_t errlen);

/* Defines a probe's public check (results_check_fn) and saver
 * (store_result_saver_fn): its walk without a transaction, and inside the
 * job's. Both are declared in results.h. */
#define RW_ENTRY_POINTS(check, save, walk)                                                     \
    int check(const json_t *doc, char *err, size_t errlen)                                     \
    {                                                                                          \
        return rw_walk_doc(NULL, 0, doc, walk, err, errlen);                                   \
    }                                                                                          \
    int save(struct store_tx *tx, int64_t job_id, const json_t *doc, char *err, size_t errlen) \
    {                                                                                          \
        return rw_save(tx, job_id, doc, walk, err, errlen);                                    \
    }

/* ---- reading ------------------------------------------------------------- */

/* A column as JSON: null for SQL NULL. */
json_t *rc_num(sqlite3_stmt *st, int col);
json_t *rc_int(sqlite3_stmt *st, int col);
json_t *rc_text(sqlite3_stmt *st, int col);
json_t *rc_bool(sqlite3_stmt *st, int col);
/* {"median","min","max"} from three consecutive columns; null when all are NULL. */
json_t *rc_spread(sqlite3_stmt *st, int col);
/* A column that holds JSON text, parsed; null for SQL NULL. */
json_t *rc_json(sqlite3_stmt *st, int col);
/* Columns col.. col + n - 1 put back where m[0..n) says, in out (a parent
 * object is made when out has none). */
void rc_members(sqlite3_stmt *st, int col, const struct rw_member *m, size_t n, json_t *out);

/* Steps sql (its ?1 bound to job_id) and hands each row to take with ctx;
 * what names the reading in an error. */
int rc_each(struct conn *c, const char *sql, int64_t job_id,
            void (*take)(sqlite3_stmt *st, void *ctx), void *ctx, const char *what, char *err,
            size_t errlen);

/* The columns of a run's provenance as a reader selects them first, and the
 * run they make: {"job_id","probe","device":{"uuid","name",
 * "compute_capability"},"measured_ms","driver_version","clock_mhz":
 * {"before","after"},"repeats","wall_s"}. */
#define RC_RUN_COLS "job_id, device_name, compute_capability, measured_ms, clock_mhz_before," \
                    " clock_mhz_after, driver_version, repeats, wall_s"
#define RC_RUN_NCOLS 9
json_t *rc_run(sqlite3_stmt *st, const char *uuid, const char *probe);

/* A table a reader serves runs from. Each SQL binds ?1 the device, then,
 * in a table that holds several probes' runs (by_probe), ?2 the probe, and
 * last the job (run_sql) or the number of runs (history_sql); newest_sql
 * has no last parameter. run_sql and newest_sql select RC_RUN_COLS first,
 * history_sql the first nhistory of rc_history_members' columns. */
struct rc_runs {
    const char *run_sql, *newest_sql, *history_sql;
    int by_probe;
    /* Adds the table's own members after the provenance, or NULL. */
    void (*more)(sqlite3_stmt *st, json_t *run);
    size_t nhistory;
    const char *what_run, *what_history;   /* name the readings in an error */
};

/* The members of a history entry: a run's job and time (and, for a table
 * that keeps it, its geometric-mean error). */
extern const struct rw_member rc_history_members[3];

/* The three queries of a struct rc_runs on table: cols (RC_RUN_COLS first)
 * and hcols (a history entry's columns) of the device's runs, filter
 * narrowing them further (" AND probe = ?2", or ""). The last parameter is
 * an unnumbered "?": the number after the filter's. */
#define RC_RUNS_SQL(cols, hcols, table, filter)                                            \
    "SELECT " cols " FROM " table " WHERE device = ?1" filter " AND job_id = ?",           \
    "SELECT " cols " FROM " table " WHERE device = ?1" filter                              \
    " ORDER BY measured_ms DESC, job_id DESC LIMIT 1",                                     \
    "SELECT " hcols " FROM " table " WHERE device = ?1" filter                             \
    " ORDER BY measured_ms DESC, job_id DESC LIMIT ?"

/* The run of probe on device uuid in t (the newest when job_id is 0), its
 * rows added by rows, and "history": the device's runs, newest first, at
 * most RW_HISTORY. 0 with *out a new reference, 1 (*out NULL) when there
 * is no such run, -1 with the reason. */
int rc_serve(struct conn *c, const struct rc_runs *t, const char *uuid, const char *probe,
             int64_t job_id,
             int (*rows)(struct conn *c, int64_t job_id, json_t *out, char *err, size_t errlen),
             json_t **out, char *err, size_t errlen);

/* Adds the probe's rows of job_id to out ("entries", or "curves" etc.). */
int results_latency_read(struct conn *c, int64_t job_id, json_t *out, char *err, size_t errlen);
int results_memory_read(struct conn *c, int64_t job_id, json_t *out, char *err, size_t errlen);
/* The memory document's "l1_sets" member (results_memory_l1.c): its rows,
 * walked and read by the memory probe's own walk and reader. */
int results_memory_l1_walk(struct rwalk *w, const json_t *doc);
int results_memory_l2_walk(struct rwalk *w, const json_t *doc);
int results_memory_l2_read(struct conn *c, int64_t job_id, json_t *out, char *err, size_t errlen);
int results_memory_deal_walk(struct rwalk *w, const json_t *doc);
int results_memory_deal_read(struct conn *c, int64_t job_id, json_t *out, char *err, size_t errlen);
int results_memory_dsm_walk(struct rwalk *w, const json_t *doc);
int results_memory_dsm_read(struct conn *c, int64_t job_id, json_t *out, char *err, size_t errlen);
/* ... and "async_copy" (results_memory_async.c). */
int results_memory_async_walk(struct rwalk *w, const json_t *doc);
int results_memory_async_read(struct conn *c, int64_t job_id, json_t *out, char *err, size_t errlen);
int results_memory_l1_read(struct conn *c, int64_t job_id, json_t *out, char *err,
                           size_t errlen);
int results_banks_read(struct conn *c, int64_t job_id, json_t *out, char *err, size_t errlen);
int results_control_codes_read(struct conn *c, int64_t job_id, json_t *out, char *err,
                               size_t errlen);
int results_dual_issue_read(struct conn *c, int64_t job_id, json_t *out, char *err,
                            size_t errlen);

#endif
