/*
 * Probe results in the store: the savers that turn a probe's result document
 * into rows, the checks that say whether a document is well formed, and the
 * reader that serves a device's newest (or a chosen) result from those rows.
 *
 * DESIGN
 * One walk per probe reads the document field by field and, for each row it
 * implies, either inserts it (inside the job's transaction, through
 * store_tx_exec) or, with no transaction, only checks it. So the daemon's
 * result check (run before anything is stored) and the saver can never
 * disagree on what is well formed. A document that lacks a required field or
 * has one of the wrong type is refused as a whole with the field's path
 * ("entries[3].latency_cycles.median: must be a number"); since the saver runs
 * in the job's transaction, a refusal writes nothing. Every saved probe also
 * writes one probe_runs row (provenance: job, device, time, clock, driver,
 * repeats); its device must be the job's device.
 * The reader builds its answer from the tables alone (never from
 * jobs.result_json), so what the API serves is what was stored in rows.
 *
 * Documents (see probes/latency.h and probes/memory.h for their producers):
 *   latency: {"probe":"latency","device":{"uuid","name","compute_capability",..},
 *             "driver_version","clock_mhz":{"before","after"},"repeats",
 *             "entries":[{"name","group","sass_opcode","per_step"?,"note"?,
 *                         "sass"?:{"verified","fixed_latency","compiler_stall"},
 *                         "latency_cycles"?,"issue_cycles"?,"exec_cycles"?,
 *                         "throughput_per_clock_per_sm"?,"throughput_clock_mhz"?,
 *                         "error"?,"throughput_error"?}],"wall_s"}
 *   memory:  the same provenance, "curves":{"ca":[{"bytes","cycles"}],"cg":[..]},
 *            "levels":{"ca":[{"level","cycles","up_to_bytes"}],"cg":[..]},
 *            "shared_cycles","departure":{"coalesced_cycles","uncoalesced_cycles",
 *            "clock_overhead_cycles"?,"l1_hit"?:{"coalesced_cycles","uncoalesced_cycles"}},
 *            "device_memory_cycles"?:{"ca","cg"}
 *            where a curve, a level list, a figure or a clock reading may be an
 *            error: {"error":"..."} or a bare string; shared_cycles may wrap its
 *            figure as {"cycles": FIGURE, ...}. Other members are not kept.
 *   suite:   {"latency": DOC | {"error":".."}, "memory": DOC | {"error":".."}},
 *            at least one member; unknown members are refused.
 * A figure ("spread") is {"median","min","max",...} (numbers). Members the
 * tables have no column for (ptx, runs, sass listings, ...) are not kept;
 * the job's stored result document still has them.
 *
 * Return values follow store.h: 0 success, -1 with a one-line reason in err.
 */
#ifndef GPUPROBE_DB_RESULTS_H
#define GPUPROBE_DB_RESULTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "db/store.h"

/* 0 if doc is a well-formed result document of that probe (or suite). */
int results_latency_check(const json_t *doc, char *err, size_t errlen);
int results_memory_check(const json_t *doc, char *err, size_t errlen);
int results_suite_check(const json_t *doc, char *err, size_t errlen);

/* store_result_saver implementations, for store_job_succeed. */
int results_latency_save(struct store_tx *tx, int64_t job_id, const char *result_json,
                         char *err, size_t errlen);
int results_memory_save(struct store_tx *tx, int64_t job_id, const char *result_json,
                        char *err, size_t errlen);
int results_suite_save(struct store_tx *tx, int64_t job_id, const char *result_json,
                       char *err, size_t errlen);

/* The stored result of probe ("latency" or "memory") on the device with this
 * UUID: the newest when job_id is 0, else that job's. *out (a new reference)
 * is {"job_id","probe","device":{"uuid","name","compute_capability"},
 * "measured_ms","driver_version","clock_mhz":{"before","after"},"repeats",
 * "wall_s", the probe's figures as in its document ("entries" for latency;
 * "curves","levels","shared_cycles","departure" for memory), and "history":
 * [{"job_id","measured_ms"}, ...] (this device's runs of the probe, newest
 * first, at most 50)}. Returns 1 (and *out NULL) when there is none. */
int store_probe_result(store *s, const char *uuid, const char *probe, int64_t job_id,
                       json_t **out, char *err, size_t errlen);

#endif
