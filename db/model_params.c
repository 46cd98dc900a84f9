/*
 * The model's inputs: the newest latency, memory and validation runs of a
 * device, read from the result tables (see db/model_store.h for the JSON).
 *
 * DESIGN
 * Four small reads on one connection (a reader's, or the writer's inside a
 * saver's transaction): the device's stored description, then per probe
 * its newest run in probe_runs (by measurement time, ties by job id: the
 * same order the result endpoints use) and that run's rows. Nothing is
 * interpreted here: a figure the run lacks is null, and model/params.h
 * decides what that means.
 */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "db/model_store.h"
#include "db/results_internal.h"

static int take_info(const struct db_row *r)
{
    *(json_t **)r->ctx = json_loads((const char *)sqlite3_column_text(r->st, 0), 0, NULL);
    return 0;
}

static int device_info(struct conn *c, const char *uuid, json_t *out, char *err, size_t errlen)
{
    json_t *info = NULL;
    if (conn_row(c, "SELECT info_json FROM devices WHERE uuid = ?1", DB_ARGS(DB_TEXT(uuid)),
                 take_info, &info, "reading the device", err, errlen) < 0)
        return -1;
    json_object_set_new(out, "device", info ? info : json_null());
    return 0;
}

static int take_run(const struct db_row *r)
{
    *(json_t **)r->ctx = json_pack("{s:o, s:o, s:{s:o, s:o}}", "job_id", rc_int(r->st, 0),
                                   "measured_ms", rc_int(r->st, 1), "clock_mhz", "before",
                                   rc_num(r->st, 2), "after", rc_num(r->st, 3));
    return 0;
}

/* The newest run of probe on the device: {"job_id","measured_ms","clock_mhz"} or NULL. */
static int newest_run(struct conn *c, const char *uuid, const char *probe, json_t **run,
                      char *err, size_t errlen)
{
    *run = NULL;
    return conn_row(c,
                    "SELECT job_id, measured_ms, clock_mhz_before, clock_mhz_after FROM probe_runs"
                    " WHERE device = ?1 AND probe = ?2 ORDER BY measured_ms DESC, job_id DESC"
                    " LIMIT 1",
                    DB_ARGS(DB_TEXT(uuid), DB_TEXT(probe)), take_run, run, "reading runs", err,
                    errlen) < 0
               ? -1
               : 0;
}

/* A (name, median) row into the object at ctx. */
static void take_value(sqlite3_stmt *st, void *o)
{
    json_object_set_new(o, (const char *)sqlite3_column_text(st, 0), rc_num(st, 1));
}

static int probe_inputs(struct conn *c, const char *uuid, const char *probe, const char *sql,
                        const char *key, json_t *out, char *err, size_t errlen)
{
    json_t *run;
    if (newest_run(c, uuid, probe, &run, err, errlen) < 0)
        return -1;
    if (run) {
        json_t *values = json_object();
        json_object_set_new(run, key, values);
        if (rc_each(c, sql, json_integer_value(json_object_get(run, "job_id")), take_value,
                    values, "reading result rows", err, errlen) < 0) {
            json_decref(run);
            return -1;
        }
    }
    json_object_set_new(out, probe, run ? run : json_null());
    return 0;
}

static int take_validation(const struct db_row *r)
{
    *(json_t **)r->ctx = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "job_id", rc_int(r->st, 0),
                                   "measured_ms", rc_int(r->st, 1), "dram_bandwidth",
                                   rc_num(r->st, 2), "link_bandwidth", rc_num(r->st, 3),
                                   "l2_bandwidth", rc_num(r->st, 4), "l2_fetch_bytes",
                                   rc_int(r->st, 5));
    return 0;
}

static int validation_inputs(struct conn *c, const char *uuid, json_t *out, char *err,
                             size_t errlen)
{
    json_t *v = NULL;
    int ret = conn_row(c,
                       "SELECT job_id, measured_ms, dram_bw_median, link_bw_median, l2_bw_median,"
                       " l2_fetch_bytes"
                       " FROM model_validation_runs WHERE device = ?1"
                       " ORDER BY measured_ms DESC, job_id DESC LIMIT 1",
                       DB_ARGS(DB_TEXT(uuid)), take_validation, &v, "reading validation runs",
                       err, errlen);
    json_object_set_new(out, "validation", v ? v : json_null());
    return ret < 0 ? -1 : 0;
}

static int inputs_on(struct conn *c, const char *uuid, json_t **out, char *err, size_t errlen)
{
    *out = json_object();
    if (device_info(c, uuid, *out, err, errlen) < 0 ||
        probe_inputs(c, uuid, "latency",
                     "SELECT instr, tput_median FROM latency_results WHERE job_id = ?1",
                     "throughput", *out, err, errlen) < 0 ||
        probe_inputs(c, uuid, "memory",
                     /* the cache levels' latencies and extents join the scalars as
                        level_<load>_<n> and level_<load>_<n>_bytes */
                     "SELECT name, median FROM memory_scalars WHERE job_id = ?1"
                     " UNION ALL SELECT 'level_' || load || '_' || level, cycles"
                     " FROM memory_levels WHERE job_id = ?1"
                     " UNION ALL SELECT 'level_' || load || '_' || level || '_bytes', up_to_bytes"
                     " FROM memory_levels WHERE job_id = ?1 AND up_to_bytes IS NOT NULL",
                     "scalars",
                     *out, err, errlen) < 0 ||
        validation_inputs(c, uuid, *out, err, errlen) < 0) {
        json_decref(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

int store_model_inputs(store *s, const char *uuid, json_t **out, char *err, size_t errlen)
{
    assert(s && out);
    struct conn *c = store_reader_get(s);
    int rc = inputs_on(c, uuid, out, err, errlen);
    store_reader_put(s, c);
    return rc;
}

int store_tx_model_inputs(struct store_tx *tx, const char *uuid, json_t **out, char *err,
                          size_t errlen)
{
    store_tx_assert_live(tx);
    assert(out);
    return inputs_on(tx->c, uuid, out, err, errlen);
}
