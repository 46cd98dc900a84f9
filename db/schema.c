/*
 * The database schema and its migrations.
 *
 * DESIGN
 * The schema is the list `migrations`: entry i is the SQL script that takes a
 * database from version i to version i + 1, where the version is PRAGMA
 * user_version (0 for a new file). Adding a table later (the probes' result
 * tables) is one more script and one more line in that array; scripts are never
 * edited once shipped. schema_migrate applies the missing steps in order, each
 * in its own BEGIN IMMEDIATE transaction that also re-reads the version (another
 * process may have migrated meanwhile), runs the script, checks foreign keys
 * and sets the new user_version, so a crash or an error leaves the previous
 * version intact. A database whose version is above the array's length was
 * written by a newer gpuprobe and is refused untouched.
 * Connections run with foreign_keys=ON, which cannot change inside a
 * transaction: a future step that rebuilds a table must create the new table,
 * copy, drop and rename in a way that keeps references valid (the step is
 * checked with PRAGMA foreign_key_check before its commit).
 *
 * Conventions: times are INTEGER milliseconds since the epoch (NULL = not yet),
 * job states are their text names, JSON columns are checked with json_valid.
 * An index on (x) also orders by rowid, so it serves "WHERE x=? ORDER BY id".
 */
#include <stdio.h>

#include "db/store_internal.h"

#define JOB_STATES "('queued', 'running', 'succeeded', 'failed', 'cancelled')"

static const char schema_v1_core[] =
    "CREATE TABLE hosts (\n"
    "  id            INTEGER PRIMARY KEY,\n"
    "  hostname      TEXT NOT NULL UNIQUE,\n"
    "  machine_id    TEXT NOT NULL DEFAULT '',\n"
    "  first_seen_ms INTEGER NOT NULL,\n"
    "  last_seen_ms  INTEGER NOT NULL);\n"
    "CREATE TABLE devices (\n"
    "  uuid               TEXT NOT NULL PRIMARY KEY,\n"
    "  host_id            INTEGER NOT NULL REFERENCES hosts(id),\n"
    "  name               TEXT NOT NULL,\n"
    "  compute_capability TEXT NOT NULL,\n"
    "  info_json          TEXT NOT NULL CHECK (json_valid(info_json)),\n"
    "  present            INTEGER NOT NULL DEFAULT 1 CHECK (present IN (0, 1)),\n"
    "  first_seen_ms      INTEGER NOT NULL,\n"
    "  last_seen_ms       INTEGER NOT NULL);\n"
    "CREATE INDEX devices_host ON devices(host_id);\n"
    "CREATE TABLE jobs (\n"
    "  id               INTEGER PRIMARY KEY AUTOINCREMENT,\n"
    "  kind             TEXT NOT NULL,\n"
    "  device           TEXT,\n"
    "  params_json      TEXT NOT NULL CHECK (json_valid(params_json)),\n"
    "  state            TEXT NOT NULL CHECK (state IN " JOB_STATES "),\n"
    "  attempt          INTEGER NOT NULL DEFAULT 0 CHECK (attempt >= 0),\n"
    "  max_attempts     INTEGER NOT NULL CHECK (max_attempts >= 1),\n"
    "  timeout_s        INTEGER NOT NULL CHECK (timeout_s >= 1),\n"
    "  cancel_requested INTEGER NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1)),\n"
    "  created_ms       INTEGER NOT NULL,\n"
    "  started_ms       INTEGER,\n"
    "  finished_ms      INTEGER,\n"
    "  error            TEXT,\n"
    "  result_json      TEXT CHECK (result_json IS NULL OR json_valid(result_json)));\n"
    "CREATE INDEX jobs_state ON jobs(state);\n"    /* scheduler, counts, state filter */
    "CREATE INDEX jobs_device ON jobs(device);\n"  /* listing by device */
    "CREATE INDEX jobs_kind ON jobs(kind);\n"      /* listing by kind */
    "CREATE TABLE job_events (\n"
    "  id      INTEGER PRIMARY KEY,\n"
    "  job_id  INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,\n"
    "  at_ms   INTEGER NOT NULL,\n"
    "  state   TEXT NOT NULL CHECK (state IN " JOB_STATES "),\n"
    "  message TEXT NOT NULL);\n"
    "CREATE INDEX job_events_job ON job_events(job_id);\n";

/* Probe results (db/results*.c). probe_runs is the provenance of every
 * result: which job measured it on which device, when, at what clock and
 * driver; one row per probe of a job (a "suite" job has two, hence the key
 * (job_id, probe)). The row tables repeat the device so that a device's
 * history can be read without a join. Numbers are REAL (the savers bind them
 * as text; the column affinity converts); NULL is "not measured". A curve or
 * level table that failed as a whole is kept as a memory_scalars row named
 * curve_<load> or levels_<load> holding only the error. */
#define MEM_LOADS "('ca', 'cg')"
#define MEM_SCALARS "('shared', 'departure_coalesced', 'departure_uncoalesced'," \
                    " 'departure_l1_coalesced', 'departure_l1_uncoalesced'," \
                    " 'departure_clock_overhead', 'device_memory_ca', 'device_memory_cg'," \
                    " 'curve_ca', 'curve_cg', 'levels_ca', 'levels_cg')"
#define SPREAD_COLS(p) "  " p "_median REAL,\n  " p "_min REAL,\n  " p "_max REAL,\n"

static const char schema_v2_probe_results[] =
    "CREATE TABLE probe_runs (\n"
    "  job_id             INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,\n"
    "  probe              TEXT NOT NULL CHECK (probe IN ('latency', 'memory')),\n"
    "  device             TEXT NOT NULL,\n"
    "  device_name        TEXT NOT NULL,\n"
    "  compute_capability TEXT NOT NULL,\n"
    "  measured_ms        INTEGER NOT NULL,\n"
    "  clock_mhz_before   REAL,\n"
    "  clock_mhz_after    REAL,\n"
    "  driver_version     TEXT NOT NULL,\n"
    "  repeats            INTEGER NOT NULL CHECK (repeats >= 1),\n"
    "  wall_s             REAL,\n"
    "  PRIMARY KEY (job_id, probe));\n"
    /* newest result of a probe on a device */
    "CREATE INDEX probe_runs_device ON probe_runs(device, probe, measured_ms, job_id);\n"
    "CREATE TABLE latency_results (\n"
    "  job_id         INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,\n"
    "  seq            INTEGER NOT NULL,\n"   /* position in the document */
    "  device         TEXT NOT NULL,\n"
    "  instr          TEXT NOT NULL,\n"
    "  grp            TEXT NOT NULL,\n"
    "  sass_opcode    TEXT NOT NULL,\n"
    "  per_step       INTEGER,\n"
    "  note           TEXT,\n"
    "  verified       INTEGER CHECK (verified IN (0, 1)),\n"
    "  fixed_latency  INTEGER CHECK (fixed_latency IN (0, 1)),\n"
    "  compiler_stall INTEGER,\n"
    SPREAD_COLS("latency") SPREAD_COLS("issue") SPREAD_COLS("exec") SPREAD_COLS("tput")
    SPREAD_COLS("tput_mhz")
    "  error          TEXT,\n"
    "  tput_error     TEXT,\n"
    "  PRIMARY KEY (job_id, instr));\n"
    "CREATE TABLE memory_curve (\n"
    "  job_id  INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,\n"
    "  device  TEXT NOT NULL,\n"
    "  load    TEXT NOT NULL CHECK (load IN " MEM_LOADS "),\n"
    "  bytes   INTEGER NOT NULL CHECK (bytes >= 1),\n"
    "  median  REAL,\n"
    "  min     REAL,\n"
    "  max     REAL,\n"
    "  error   TEXT,\n"
    "  PRIMARY KEY (job_id, load, bytes));\n"
    "CREATE TABLE memory_levels (\n"
    "  job_id      INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,\n"
    "  device      TEXT NOT NULL,\n"
    "  load        TEXT NOT NULL CHECK (load IN " MEM_LOADS "),\n"
    "  level       INTEGER NOT NULL CHECK (level >= 1),\n"
    "  cycles      REAL,\n"
    "  up_to_bytes INTEGER,\n"
    "  PRIMARY KEY (job_id, load, level));\n"
    "CREATE TABLE memory_scalars (\n"
    "  job_id  INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,\n"
    "  device  TEXT NOT NULL,\n"
    "  name    TEXT NOT NULL CHECK (name IN " MEM_SCALARS "),\n"
    "  median  REAL,\n"
    "  min     REAL,\n"
    "  max     REAL,\n"
    "  error   TEXT,\n"
    "  PRIMARY KEY (job_id, name));\n";

/* The kernel-time model's validation runs (db/results_validation.c). A run
 * is one model-validation job: its provenance, the bandwidths it measured
 * (the model's bandwidth parameters) and, once the saver has predicted, the
 * probe jobs whose parameters the predictions used and the geometric-mean
 * absolute error. One model_validation row per kernel: what was run (launch,
 * resources, the description derived from its PTX), the measured time per
 * launch, and the prediction (seconds, relative error, the whole prediction
 * document) or why there is none. */
static const char schema_v3_model_validation[] =
    "CREATE TABLE model_validation_runs (\n"
    "  job_id             INTEGER NOT NULL PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,\n"
    "  device             TEXT NOT NULL,\n"
    "  device_name        TEXT NOT NULL,\n"
    "  compute_capability TEXT NOT NULL,\n"
    "  measured_ms        INTEGER NOT NULL,\n"
    "  clock_mhz_before   REAL,\n"
    "  clock_mhz_after    REAL,\n"
    "  driver_version     TEXT NOT NULL,\n"
    "  repeats            INTEGER NOT NULL CHECK (repeats >= 1),\n"
    "  wall_s             REAL,\n"
    "  timing             TEXT,\n"
    SPREAD_COLS("dram_bw") SPREAD_COLS("link_bw")
    "  dram_bw_error      TEXT,\n"
    "  link_bw_error      TEXT,\n"
    "  latency_job        INTEGER,\n"
    "  memory_job         INTEGER,\n"
    "  gmae               REAL,\n"
    "  kernels_compared   INTEGER);\n"
    "CREATE INDEX model_validation_runs_device ON model_validation_runs(device, measured_ms, job_id);\n"
    "CREATE TABLE model_validation (\n"
    "  job_id           INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,\n"
    "  seq              INTEGER NOT NULL,\n"
    "  device           TEXT NOT NULL,\n"
    "  kernel           TEXT NOT NULL,\n"
    "  character        TEXT NOT NULL,\n"
    "  launch_json      TEXT NOT NULL CHECK (json_valid(launch_json)),\n"
    "  description_json TEXT CHECK (description_json IS NULL OR json_valid(description_json)),\n"
    SPREAD_COLS("measured_s")
    "  measure_error    TEXT,\n"
    "  predicted_s      REAL,\n"
    "  rel_error        REAL,\n"
    "  prediction_json  TEXT CHECK (prediction_json IS NULL OR json_valid(prediction_json)),\n"
    "  predict_error    TEXT,\n"
    "  PRIMARY KEY (job_id, kernel));\n";

/* One entry per schema version; append only. */
static const char *const migrations[] = {
    schema_v1_core,
    schema_v2_probe_results,
    schema_v3_model_validation,
};

int store_schema_latest(void)
{
    return (int)(sizeof migrations / sizeof migrations[0]);
}

static int exec_sql(sqlite3 *db, const char *sql, const char *what, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    db_fail(err, errlen, "%s: %s", what, msg ? msg : sqlite3_errmsg(db));
    sqlite3_free(msg);
    return -1;
}

static int read_version(sqlite3 *db, int *version, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
        return db_sqlfail(err, errlen, db, "reading the schema version");
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *version = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : db_sqlfail(err, errlen, db, "reading the schema version");
}

/* Fails when the step left a dangling reference. */
static int check_foreign_keys(sqlite3 *db, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "PRAGMA foreign_key_check", -1, &st, NULL) != SQLITE_OK)
        return db_sqlfail(err, errlen, db, "checking foreign keys");
    int rc = sqlite3_step(st);
    int ret = 0;
    if (rc == SQLITE_ROW)
        ret = db_fail(err, errlen, "foreign key check: table %s has a dangling reference",
                      (const char *)sqlite3_column_text(st, 0));
    else if (rc != SQLITE_DONE)
        ret = db_sqlfail(err, errlen, db, "checking foreign keys");
    sqlite3_finalize(st);
    return ret;
}

/* Runs step `from` (from -> from + 1) in the caller's transaction. */
static int apply_step(sqlite3 *db, int from, char *err, size_t errlen)
{
    char bump[64];
    snprintf(bump, sizeof bump, "PRAGMA user_version = %d", from + 1);
    if (exec_sql(db, migrations[from], "schema step", err, errlen) != 0
        || check_foreign_keys(db, err, errlen) != 0
        || exec_sql(db, bump, "setting the schema version", err, errlen) != 0)
        return -1;
    return 0;
}

/* One transaction: re-reads the version and, if still `from`, applies the step. */
static int migrate_one(sqlite3 *db, int from, char *err, size_t errlen)
{
    char why[512] = "";
    int now = -1;
    if (exec_sql(db, "BEGIN IMMEDIATE", "starting a migration", err, errlen) != 0)
        return -1;
    int ret = read_version(db, &now, why, sizeof why);
    if (ret == 0 && now == from)
        ret = apply_step(db, from, why, sizeof why);
    if (ret == 0 && exec_sql(db, "COMMIT", "committing", why, sizeof why) == 0)
        return 0;
    if (!sqlite3_get_autocommit(db))
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return db_fail(err, errlen, "migrating the schema from version %d to %d: %s",
                   from, from + 1, why);
}

int schema_migrate(sqlite3 *db, char *err, size_t errlen)
{
    int latest = store_schema_latest();
    for (;;) {
        int v = 0;
        if (read_version(db, &v, err, errlen) != 0)
            return -1;
        if (v > latest)
            return db_fail(err, errlen,
                           "database schema version %d is newer than this gpuprobe knows "
                           "(%d); use a newer gpuprobe or another database file", v, latest);
        if (v == latest)
            return 0;
        if (v < 0)
            return db_fail(err, errlen, "database schema version %d is not valid", v);
        if (migrate_one(db, v, err, errlen) != 0)
            return -1;
    }
}
