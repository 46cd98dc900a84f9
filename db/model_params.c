/*
 * The model's inputs: the newest latency, memory and validation runs of a
 * device, read from the result tables (see db/model.h for the JSON).
 *
 * DESIGN
 * Four small reads on one connection (a reader's, or the writer's inside a
 * saver's transaction): the device's stored description, then per probe
 * its newest run in probe_runs (by measurement time, ties by job id: the
 * same order the result endpoints use) and that run's rows. Nothing is
 * interpreted here: a figure the run lacks is null, and model/params.h
 * decides what that means.
 */
#include <stdio.h>
#include <string.h>

#include "db/model.h"
#include "db/results_internal.h"

static int device_info(struct conn *c, const char *uuid, json_t *out, char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(c, "SELECT info_json FROM devices WHERE uuid = ?1", err, errlen);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    json_t *info = NULL;
    if (rc == SQLITE_ROW)
        info = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
    stmt_done(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return db_sqlfail(err, errlen, c->db, "reading the device");
    json_object_set_new(out, "device", info ? info : json_null());
    return 0;
}

/* The newest run of probe on the device: {"job_id","measured_ms","clock_mhz"} or NULL. */
static int newest_run(struct conn *c, const char *uuid, const char *probe, json_t **run,
                      char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(c,
        "SELECT job_id, measured_ms, clock_mhz_before, clock_mhz_after FROM probe_runs"
        " WHERE device = ?1 AND probe = ?2 ORDER BY measured_ms DESC, job_id DESC LIMIT 1",
        err, errlen);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, probe, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    *run = NULL;
    if (rc == SQLITE_ROW)
        *run = json_pack("{s:o, s:o, s:{s:o, s:o}}", "job_id", rc_int(st, 0), "measured_ms",
                         rc_int(st, 1), "clock_mhz", "before", rc_num(st, 2), "after",
                         rc_num(st, 3));
    stmt_done(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0
                                                 : db_sqlfail(err, errlen, c->db, "reading runs");
}

/* Adds {key: {name: median|null}} from a (name, median) query of job_id. */
static int name_values(struct conn *c, const char *sql, int64_t job_id, json_t *run,
                       const char *key, char *err, size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(c, sql, err, errlen);
    if (!st)
        return -1;
    sqlite3_bind_int64(st, 1, job_id);
    json_t *o = json_object();
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        json_object_set_new(o, (const char *)sqlite3_column_text(st, 0), rc_num(st, 1));
    stmt_done(st);
    json_object_set_new(run, key, o);
    return rc == SQLITE_DONE ? 0 : db_sqlfail(err, errlen, c->db, "reading result rows");
}

static int probe_inputs(struct conn *c, const char *uuid, const char *probe, const char *sql,
                        const char *key, json_t *out, char *err, size_t errlen)
{
    json_t *run;
    if (newest_run(c, uuid, probe, &run, err, errlen) < 0)
        return -1;
    if (run && name_values(c, sql, json_integer_value(json_object_get(run, "job_id")), run, key,
                           err, errlen) < 0) {
        json_decref(run);
        return -1;
    }
    json_object_set_new(out, probe, run ? run : json_null());
    return 0;
}

static int validation_inputs(struct conn *c, const char *uuid, json_t *out, char *err,
                             size_t errlen)
{
    sqlite3_stmt *st = conn_stmt(c,
        "SELECT job_id, measured_ms, dram_bw_median, link_bw_median FROM model_validation_runs"
        " WHERE device = ?1 ORDER BY measured_ms DESC, job_id DESC LIMIT 1", err, errlen);
    if (!st)
        return -1;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    json_t *v = rc == SQLITE_ROW
                    ? json_pack("{s:o, s:o, s:o, s:o}", "job_id", rc_int(st, 0), "measured_ms",
                                rc_int(st, 1), "dram_bandwidth", rc_num(st, 2), "link_bandwidth",
                                rc_num(st, 3))
                    : json_null();
    stmt_done(st);
    json_object_set_new(out, "validation", v);
    return rc == SQLITE_ROW || rc == SQLITE_DONE
               ? 0
               : db_sqlfail(err, errlen, c->db, "reading validation runs");
}

static int inputs_on(struct conn *c, const char *uuid, json_t **out, char *err, size_t errlen)
{
    *out = json_object();
    if (device_info(c, uuid, *out, err, errlen) < 0 ||
        probe_inputs(c, uuid, "latency",
                     "SELECT instr, tput_median FROM latency_results WHERE job_id = ?1",
                     "throughput", *out, err, errlen) < 0 ||
        probe_inputs(c, uuid, "memory",
                     "SELECT name, median FROM memory_scalars WHERE job_id = ?1", "scalars",
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
    struct conn *c = store_reader_get(s);
    int rc = inputs_on(c, uuid, out, err, errlen);
    store_reader_put(s, c);
    return rc;
}

int store_tx_model_inputs(struct store_tx *tx, const char *uuid, json_t **out, char *err,
                          size_t errlen)
{
    return inputs_on(tx->c, uuid, out, err, errlen);
}
