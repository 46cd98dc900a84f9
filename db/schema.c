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

/* The probes that edit machine code (db/results_banks.c, results_control.c,
 * results_dual.c). probe_runs is rebuilt so that its probe may name them:
 * SQLite cannot change a CHECK in place, so the step creates the new table,
 * copies every row, drops the old one (nothing references probe_runs, so
 * no foreign key is left dangling), renames the new one and recreates its
 * index. Per probe, one row per run (banks_runs, dual_issue_runs) holds its
 * single figures and one table per list holds the rest: the bank of every
 * tested register, the named cost tests, each instruction's control codes
 * and its stall x yield sweep, the meanings read off them (each kept whole
 * as JSON, with its text in a column), and the dual-issue configurations.
 * seq keeps the document's order where the key does not give it. A
 * control_code_instr row's min_safe_stall is NULL when no stall gave the
 * right answer; the latency reader joins it by (device, instr). */
#define PROBES_V4 "('latency', 'memory', 'banks', 'control-codes', 'dual-issue')"

static const char schema_v4_machine_code_probes[] =
    "CREATE TABLE probe_runs_v4 (\n"
    "  job_id             INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,\n"
    "  probe              TEXT NOT NULL CHECK (probe IN " PROBES_V4 "),\n"
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
    "INSERT INTO probe_runs_v4 (job_id, probe, device, device_name, compute_capability,"
    " measured_ms, clock_mhz_before, clock_mhz_after, driver_version, repeats, wall_s)\n"
    "  SELECT job_id, probe, device, device_name, compute_capability, measured_ms,"
    " clock_mhz_before, clock_mhz_after, driver_version, repeats, wall_s FROM probe_runs;\n"
    "DROP TABLE probe_runs;\n"
    "ALTER TABLE probe_runs_v4 RENAME TO probe_runs;\n"
    "CREATE INDEX probe_runs_device ON probe_runs(device, probe, measured_ms, job_id);\n"
    "CREATE TABLE banks_runs (\n"
    "  job_id              INTEGER NOT NULL PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,\n"
    "  device              TEXT NOT NULL,\n"
    "  bank_count          INTEGER NOT NULL CHECK (bank_count >= 1),\n"
    "  threshold           REAL NOT NULL,\n"
    SPREAD_COLS("reference_rate")
    "  highest_register    INTEGER NOT NULL CHECK (highest_register >= 0),\n"
    "  runs_total          INTEGER NOT NULL,\n"
    "  runs_class_building INTEGER,\n"
    "  runs_confirmation   INTEGER,\n"
    "  all_pairs_would_be  INTEGER,\n"
    "  confirm_pairs       INTEGER NOT NULL,\n"
    "  confirm_agree       INTEGER NOT NULL,\n"
    "  verified            INTEGER NOT NULL CHECK (verified IN (0, 1)),\n"
    "  seconds_total       REAL,\n"
    "  untested_json       TEXT CHECK (untested_json IS NULL OR json_valid(untested_json)));\n"
    "CREATE TABLE banks_map (\n"
    "  job_id   INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,\n"
    "  device   TEXT NOT NULL,\n"
    "  register INTEGER NOT NULL CHECK (register >= 0),\n"
    "  bank     INTEGER NOT NULL CHECK (bank >= 0),\n"
    "  PRIMARY KEY (job_id, register));\n"
    "CREATE TABLE banks_costs (\n"
    "  job_id   INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,\n"
    "  device   TEXT NOT NULL,\n"
    "  seq      INTEGER NOT NULL,\n"
    "  name     TEXT NOT NULL,\n"
    "  src_a    INTEGER,\n"      /* NULL: RZ */
    "  src_b    INTEGER,\n"
    "  src_c    INTEGER,\n"
    "  reuse    INTEGER NOT NULL CHECK (reuse BETWEEN 0 AND 7),\n"
    SPREAD_COLS("rate") SPREAD_COLS("ratio")
    "  conflict INTEGER NOT NULL CHECK (conflict IN (0, 1)),\n"
    "  PRIMARY KEY (job_id, name));\n"
    "CREATE TABLE control_code_instr (\n"
    "  job_id              INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,\n"
    "  device              TEXT NOT NULL,\n"
    "  seq                 INTEGER NOT NULL,\n"
    "  instr               TEXT NOT NULL,\n"
    "  sass                TEXT NOT NULL,\n"
    "  compiler_stall      INTEGER CHECK (compiler_stall BETWEEN 0 AND 15),\n"
    "  compiler_yield      INTEGER CHECK (compiler_yield IN (0, 1)),\n"
    SPREAD_COLS("chain_latency")
    "  min_safe_stall      INTEGER CHECK (min_safe_stall BETWEEN 0 AND 15),\n"
    "  chain_slope         REAL,\n"
    "  chain_intercept     REAL,\n"
    "  chain_max_residual  REAL,\n"
    "  chain_from_stall    INTEGER,\n"
    "  chain_to_stall      INTEGER,\n"
    "  chain_yield         INTEGER CHECK (chain_yield IN (0, 1)),\n"
    "  stream_slope        REAL,\n"
    "  stream_intercept    REAL,\n"
    "  stream_max_residual REAL,\n"
    "  stream_from_stall   INTEGER,\n"
    "  stream_to_stall     INTEGER,\n"
    "  stream_yield        INTEGER CHECK (stream_yield IN (0, 1)),\n"
    "  error               TEXT,\n"
    "  PRIMARY KEY (job_id, instr));\n"
    /* the newest safe stall of an instruction on a device (the latency reader) */
    "CREATE INDEX control_code_instr_device ON control_code_instr(device, instr);\n"
    "CREATE TABLE control_code_sweep (\n"
    "  job_id         INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,\n"
    "  device         TEXT NOT NULL,\n"
    "  instr          TEXT NOT NULL,\n"
    "  stall          INTEGER NOT NULL CHECK (stall BETWEEN 0 AND 15),\n"
    "  yield          INTEGER NOT NULL CHECK (yield IN (0, 1)),\n"
    SPREAD_COLS("chain")
    "  chain_correct  INTEGER NOT NULL CHECK (chain_correct IN (0, 1)),\n"
    SPREAD_COLS("stream")
    "  stream_correct INTEGER NOT NULL CHECK (stream_correct IN (0, 1)),\n"
    "  PRIMARY KEY (job_id, instr, stall, yield));\n"
    "CREATE TABLE control_code_meanings (\n"
    "  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,\n"
    "  device TEXT NOT NULL,\n"
    "  seq    INTEGER NOT NULL,\n"
    "  name   TEXT NOT NULL,\n"
    "  text   TEXT NOT NULL,\n"
    "  json   TEXT NOT NULL CHECK (json_valid(json)),\n"
    "  PRIMARY KEY (job_id, name));\n"
    "CREATE TABLE dual_issue_runs (\n"
    "  job_id              INTEGER NOT NULL PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,\n"
    "  device              TEXT NOT NULL,\n"
    "  peak                REAL,\n"
    "  peak_source         TEXT,\n"
    "  dual_issue_observed INTEGER NOT NULL CHECK (dual_issue_observed IN (0, 1)),\n"
    "  verdict             TEXT NOT NULL,\n"
    "  bank_count          INTEGER,\n"
    "  operands_json       TEXT CHECK (operands_json IS NULL OR json_valid(operands_json)));\n"
    "CREATE TABLE dual_issue_results (\n"
    "  job_id              INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,\n"
    "  device              TEXT NOT NULL,\n"
    "  seq                 INTEGER NOT NULL,\n"
    "  pattern             TEXT NOT NULL,\n"
    "  operands            TEXT NOT NULL,\n"
    "  warps_per_scheduler INTEGER NOT NULL CHECK (warps_per_scheduler >= 1),\n"
    "  nominal             REAL,\n"
    SPREAD_COLS("rate")
    "  eff_peak            REAL,\n"
    "  eff_nominal         REAL,\n"
    "  PRIMARY KEY (job_id, pattern, operands, warps_per_scheduler));\n";

/* Where a failed job's input was at fault (the worker protocol's
 * "error_class", "error_line", "error_offset"), so a client reading the job
 * later learns what the worker said, not only its sentence. */
static const char schema_v5_job_error_detail[] =
    "ALTER TABLE jobs ADD COLUMN error_detail TEXT\n"
    "  CHECK (error_detail IS NULL OR json_valid(error_detail));\n";

/* Where a result came from: the gpuprobe that ran the job, and for a result
 * imported from a bundle the host and job it was measured as there (one
 * measurement is imported once: the unique index). */
static const char schema_v6_result_origin[] =
    "ALTER TABLE jobs ADD COLUMN gpuprobe_version TEXT;\n"
    "ALTER TABLE jobs ADD COLUMN origin_host TEXT;\n"
    "ALTER TABLE jobs ADD COLUMN origin_job INTEGER;\n"
    "CREATE UNIQUE INDEX jobs_origin ON jobs(origin_host, origin_job, device, finished_ms)\n"
    "  WHERE origin_host IS NOT NULL;\n";

/* The fleet: each device's fleet figures (fleet/metrics.h) from its newest
 * result of each kind, one row per device and kind written with the result
 * it comes from (a device's newest value of a figure is the newest of its
 * rows that has it; db/fleet_store.c says the encoding); the results waiting
 * for the upstream gpuprobe to acknowledge them (server/push); and named
 * settings of the store itself (the version of the figures' rules). */
static const char schema_v7_fleet[] =
    "CREATE TABLE device_figures (\n"
    "  device      TEXT NOT NULL,\n"
    "  kind        TEXT NOT NULL,\n"
    "  job_id      INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,\n"
    "  measured_ms INTEGER NOT NULL,\n"
    "  figures     TEXT NOT NULL,\n"
    "  PRIMARY KEY (device, kind)) WITHOUT ROWID;\n"
    "CREATE INDEX device_figures_job ON device_figures(job_id);\n"
    "CREATE TABLE outbox (\n"
    "  job_id          INTEGER PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,\n"
    "  created_ms      INTEGER NOT NULL,\n"
    "  attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),\n"
    "  next_attempt_ms INTEGER NOT NULL,\n"
    "  last_error      TEXT,\n"
    "  refused         INTEGER NOT NULL DEFAULT 0 CHECK (refused IN (0, 1)));\n"
    "CREATE TABLE store_meta (\n"
    "  name  TEXT NOT NULL PRIMARY KEY,\n"
    "  value TEXT NOT NULL);\n";

/* The L2's read bandwidth that model-validation runs measure beside the
 * device memory's (probes/validation.h): its spread and, when it could not
 * be measured, why. Runs stored before have it NULL (not measured). */
static const char schema_v8_l2_bandwidth[] =
    "ALTER TABLE model_validation_runs ADD COLUMN l2_bw_median REAL;\n"
    "ALTER TABLE model_validation_runs ADD COLUMN l2_bw_min REAL;\n"
    "ALTER TABLE model_validation_runs ADD COLUMN l2_bw_max REAL;\n"
    "ALTER TABLE model_validation_runs ADD COLUMN l2_bw_error TEXT;\n"
    "ALTER TABLE model_validation_runs ADD COLUMN l2_fetch_bytes INTEGER;\n";

/* The memory probe's L1 set mapping (probes/l1_sets.h, db/results_memory_l1.c):
 * one row per run that has one — the search's verdict and sizes, or the
 * error alone when it could not run — and the set-index function, one mask
 * of address bits per set-index bit. */
static const char schema_v9_l1_sets[] =
    "CREATE TABLE memory_l1_sets (\n"
    "  job_id                 INTEGER NOT NULL PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,\n"
    "  device                 TEXT NOT NULL,\n"
    "  status                 TEXT CHECK (status IN ('determined', 'not determined')),\n"
    "  reason                 TEXT,\n"
    "  line_bytes             INTEGER,\n"
    "  fill_bytes             INTEGER,\n"
    "  sets                   INTEGER,\n"
    "  ways                   INTEGER,\n"
    "  capacity_bytes         INTEGER,\n"
    "  collision_stride_bytes INTEGER,\n"
    "  carveout_percent       INTEGER,\n"
    "  function               TEXT CHECK (function IN ('modulo', 'xor')),\n"
    "  error                  TEXT,\n"
    "  CHECK ((status IS NULL) <> (error IS NULL)));\n"
    "CREATE TABLE memory_l1_set_masks (\n"
    "  job_id INTEGER NOT NULL REFERENCES memory_l1_sets(job_id) ON DELETE CASCADE,\n"
    "  bit    INTEGER NOT NULL CHECK (bit >= 0),\n"
    "  mask   INTEGER NOT NULL CHECK (mask >= 1),\n"
    "  PRIMARY KEY (job_id, bit));\n";

/* The memory probe's L2 partitions (probes/l2_parts.h, db/results_memory_l2.c):
 * one row per run that has the search — its verdict and figures, or the
 * error alone when it could not run; the SMs' partitions and the home bits
 * as JSON lists. */
static const char schema_v10_l2_partitions[] =
    "CREATE TABLE memory_l2_partitions (\n"
    "  job_id                  INTEGER NOT NULL PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,\n"
    "  device                  TEXT NOT NULL,\n"
    "  verdict                 TEXT CHECK (verdict IN ('two partitions', 'one partition',"
    " 'not determined')),\n"
    "  reason                  TEXT,\n"
    "  warmer_sm               INTEGER,\n"
    "  lines                   INTEGER,\n"
    "  threshold_cycles        REAL,\n"
    "  near_cycles             REAL,\n"
    "  far_cycles              REAL,\n"
    "  far_second_read_cycles  REAL,\n"
    "  memory_home_near_cycles REAL,\n"
    "  memory_home_far_cycles  REAL,\n"
    "  far_fraction            REAL,\n"
    "  ambiguous_lines         INTEGER,\n"
    "  copies_kept             INTEGER CHECK (copies_kept IN (0, 1)),\n"
    "  granule_bytes           INTEGER,\n"
    "  wall_s                  REAL,\n"
    "  sm_partition            TEXT,\n"
    "  home_mask_bits          TEXT,\n"
    "  error                   TEXT,\n"
    "  CHECK ((verdict IS NULL) <> (error IS NULL)));\n";

/* A tensor-core step's TFLOP/s (TOP/s for integers) at the clock its
 * throughput ran at (probes/latency.h, lat_mma); NULL for other entries and
 * for runs stored before. */
static const char schema_v11_tflops[] =
    "ALTER TABLE latency_results ADD COLUMN tflops_median REAL;\n"
    "ALTER TABLE latency_results ADD COLUMN tflops_min REAL;\n"
    "ALTER TABLE latency_results ADD COLUMN tflops_max REAL;\n";

/* The bank probe's reuse-cache analysis (probes/banks_reuse.h), kept whole
 * as JSON beside the run's untested registers; NULL for runs stored before.
 */
static const char schema_v12_banks_reuse_cache[] =
    "ALTER TABLE banks_runs ADD COLUMN reuse_cache_json TEXT;\n";

/* The memory probe's distributed shared memory (probes/dsmem.h,
 * db/results_memory_dsm.c): one row per run that has the member (its
 * settings, or the error alone when nothing could be measured) and one per
 * cluster size asked for: what the driver and the blocks said, whether it
 * launched (else why not), and the latency and bandwidth figures (median,
 * min, max over repeats). */
static const char schema_v13_dsmem[] =
    "CREATE TABLE memory_dsmem (\n"
    "  job_id          INTEGER NOT NULL PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,\n"
    "  device          TEXT NOT NULL,\n"
    "  clock_mhz       REAL,\n"
    "  chase_loads     INTEGER,\n"
    "  bw_block_bytes  REAL,\n"
    "  block_pad_bytes INTEGER,\n"
    "  wall_s          REAL,\n"
    "  error           TEXT,\n"
    "  CHECK ((chase_loads IS NULL) <> (error IS NULL)));\n"
    "CREATE TABLE memory_dsmem_sizes (\n"
    "  job_id              INTEGER NOT NULL REFERENCES memory_dsmem(job_id) ON DELETE CASCADE,\n"
    "  asked               INTEGER NOT NULL CHECK (asked BETWEEN 1 AND 16),\n"
    "  driver_width        INTEGER,\n"
    "  ranks_seen          INTEGER,\n"
    "  agrees              INTEGER NOT NULL CHECK (agrees IN (0, 1)),\n"
    "  launched            INTEGER NOT NULL CHECK (launched IN (0, 1)),\n"
    "  max_active_clusters INTEGER,\n"
    "  distinct_sms        INTEGER,\n"
    "  error               TEXT,\n"
    "  gb_s_local          REAL,\n"
    "  gb_s_remote         REAL,\n"
    "  lat_local_median REAL, lat_local_min REAL, lat_local_max REAL,\n"
    "  lat_neighbour_median REAL, lat_neighbour_min REAL, lat_neighbour_max REAL,\n"
    "  lat_farthest_median REAL, lat_farthest_min REAL, lat_farthest_max REAL,\n"
    "  bw_local_median REAL, bw_local_min REAL, bw_local_max REAL,\n"
    "  bw_remote_median REAL, bw_remote_min REAL, bw_remote_max REAL,\n"
    "  CHECK (launched = 1 OR error IS NOT NULL),\n"
    "  PRIMARY KEY (job_id, asked));\n";

/* A wgmma step's throughput with one warpgroup an SM (the tput columns hold
 * it with several). */
static const char schema_v14_wgmma_one_warpgroup[] =
    "ALTER TABLE latency_results ADD COLUMN tput_1wg_median REAL;\n"
    "ALTER TABLE latency_results ADD COLUMN tput_1wg_min REAL;\n"
    "ALTER TABLE latency_results ADD COLUMN tput_1wg_max REAL;\n";

/* The memory probe's asynchronous copies (probes/async_copy.h,
 * db/results_memory_async.c): one row per run that has them (its buffers and
 * the tensor map's state, the summary and machine-code checks as JSON, or
 * the error alone when the probe could not run), and one row per latency or
 * bandwidth point: its figures or its error. */
static const char schema_v15_async_copy[] =
    "CREATE TABLE memory_async_copy (\n"
    "  job_id            INTEGER NOT NULL PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,\n"
    "  device            TEXT NOT NULL,\n"
    "  tensor_map        TEXT,\n"
    "  chunk_bytes       INTEGER,\n"
    "  dram_buffer_bytes INTEGER,\n"
    "  l2_buffer_bytes   INTEGER,\n"
    "  l2_passes         INTEGER,\n"
    "  wall_s            REAL,\n"
    "  summary           TEXT,\n"
    "  sass              TEXT,\n"
    "  error             TEXT,\n"
    "  CHECK ((tensor_map IS NULL) <> (error IS NULL)));\n"
    "CREATE TABLE memory_async_copy_points (\n"
    "  job_id               INTEGER NOT NULL REFERENCES memory_async_copy(job_id) ON DELETE CASCADE,\n"
    "  device               TEXT NOT NULL,\n"
    "  kind                 TEXT NOT NULL CHECK (kind IN ('latency', 'bandwidth')),\n"
    "  method               TEXT NOT NULL CHECK (method IN ('ld', 'ca', 'cg', 'bulk', 'tensor')),\n"
    "  bytes                INTEGER NOT NULL CHECK (bytes >= 1),\n"
    "  level                TEXT NOT NULL CHECK (level IN ('l2', 'dram')),\n"
    "  bytes_per_copy       INTEGER,\n"
    "  median_cycles        REAL,\n"
    "  min_cycles           REAL,\n"
    "  max_cycles           REAL,\n"
    "  bytes_per_clk_per_sm REAL,\n"
    "  gb_s                 REAL,\n"
    "  slowest_cycles       INTEGER,\n"
    "  blocks               INTEGER,\n"
    "  total_bytes          INTEGER,\n"
    "  runs                 TEXT,\n"
    "  error                TEXT,\n"
    "  PRIMARY KEY (job_id, kind, method, bytes, level),\n"
    "  CHECK (error IS NOT NULL OR median_cycles IS NOT NULL OR bytes_per_clk_per_sm IS NOT NULL));\n";

/* One measurement is imported once per kind: a node's job may arrive as
 * its fleet figures alone and later whole, two results of one origin. */
static const char schema_v16_origin_kind[] =
    "DROP INDEX jobs_origin;\n"
    "CREATE UNIQUE INDEX jobs_origin ON jobs(origin_host, origin_job, device, finished_ms, kind)\n"
    "  WHERE origin_host IS NOT NULL;\n";

/* The driver each device's fleet figures were measured under (the result's
 * driver_version; NULL when the result did not say, as a figures document
 * from an older node), so the fleet view can show which driver each GPU
 * runs and a model whose GPUs run different drivers: a driver change can
 * move figures. Rows stored before are filled in when the figures are
 * derived again (FLEET_METRICS_VERSION "2", fleet/record.h). */
static const char schema_v17_figures_driver[] =
    "ALTER TABLE device_figures ADD COLUMN driver_version TEXT;\n";

/* The memory probe's block placement (probes/placement.h,
 * db/results_memory_deal.c): one row per run that has the member — its
 * status and figures, with the dealing order as a JSON list when
 * determined, or the error alone when it could not run. */
static const char schema_v18_block_placement[] =
    "CREATE TABLE memory_block_placement (\n"
    "  job_id                  INTEGER NOT NULL PRIMARY KEY REFERENCES jobs(id) ON DELETE CASCADE,\n"
    "  device                  TEXT NOT NULL,\n"
    "  status                  TEXT CHECK (status IN ('determined', 'not determined')),\n"
    "  reason                  TEXT,\n"
    "  threads_per_block       INTEGER,\n"
    "  blocks                  INTEGER,\n"
    "  blocks_per_sm           INTEGER,\n"
    "  sms                     INTEGER,\n"
    "  spin_ns                 INTEGER,\n"
    "  launches                INTEGER,\n"
    "  same_as_first           INTEGER,\n"
    "  one_wave                INTEGER CHECK (one_wave IN (0, 1)),\n"
    "  deal_ns                 INTEGER,\n"
    "  check_threads_per_block INTEGER,\n"
    "  check_blocks            INTEGER,\n"
    "  check_blocks_per_sm     INTEGER,\n"
    "  check_one_wave          INTEGER CHECK (check_one_wave IN (0, 1)),\n"
    "  check_predicted         INTEGER,\n"
    "  check_error             TEXT,\n"
    "  wall_s                  REAL,\n"
    "  sm_order                TEXT,\n"
    "  error                   TEXT,\n"
    "  CHECK ((status IS NULL) <> (error IS NULL)),\n"
    "  CHECK (status IS NOT 'determined' OR sm_order IS NOT NULL));\n";

/* One entry per schema version; append only. */
static const char *const migrations[] = {
    schema_v1_core,
    schema_v2_probe_results,
    schema_v3_model_validation,
    schema_v4_machine_code_probes,
    schema_v5_job_error_detail,
    schema_v6_result_origin,
    schema_v7_fleet,
    schema_v8_l2_bandwidth,
    schema_v9_l1_sets,
    schema_v10_l2_partitions,
    schema_v11_tflops,
    schema_v12_banks_reuse_cache,
    schema_v13_dsmem,
    schema_v14_wgmma_one_warpgroup,
    schema_v15_async_copy,
    schema_v16_origin_kind,
    schema_v17_figures_driver,
    schema_v18_block_placement,
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
    errf(err, errlen, "%s: %s", what, msg ? msg : sqlite3_errmsg(db));
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
        ret = errf(err, errlen, "foreign key check: table %s has a dangling reference",
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
    return errf(err, errlen, "migrating the schema from version %d to %d: %s",
                   from, from + 1, why);
}

int schema_migrate_to(sqlite3 *db, int target, char *err, size_t errlen)
{
    int latest = store_schema_latest();
    if (target < 0 || target > latest)
        return errf(err, errlen, "schema version %d is not one this gpuprobe knows (0 to %d)",
                       target, latest);
    for (;;) {
        int v = 0;
        if (read_version(db, &v, err, errlen) != 0)
            return -1;
        if (v > latest)
            return errf(err, errlen,
                           "database schema version %d is newer than this gpuprobe knows "
                           "(%d); use a newer gpuprobe or another database file", v, latest);
        if (v >= target)
            return 0;
        if (v < 0)
            return errf(err, errlen, "database schema version %d is not valid", v);
        if (migrate_one(db, v, err, errlen) != 0)
            return -1;
    }
}

int schema_migrate(sqlite3 *db, char *err, size_t errlen)
{
    return schema_migrate_to(db, store_schema_latest(), err, errlen);
}
