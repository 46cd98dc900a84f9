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
 * Documents (see probes/latency.h, memory.h, banks.h, control_codes.h and
 * dual_issue.h for their producers):
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
 *            "device_memory_cycles"?:{"ca","cg"},
 *            "l1_sets"?:{"status":"determined"|"not determined","reason",
 *            "line_bytes","fill_bytes","sets","ways","capacity_bytes",
 *            "collision_stride_bytes","carveout_percent","set_index":{"function":
 *            "modulo"|"xor","masks":[..]}|null} (probes/l1_sets.h; determined: the
 *            sizes, the function and log2(sets) masks required),
 *            "block_placement"?:{"status":"determined"|"not determined","reason",
 *            "threads_per_block","blocks","blocks_per_sm","sms","spin_ns","launches",
 *            "same_as_first","one_wave","deal_ns","order":[SM of each block]
 *            (determined: required, one SM below sms per block),"check"?:{
 *            "threads_per_block","blocks","blocks_per_sm","one_wave","predicted",
 *            "error"?}} (probes/placement.h; the check's own order is not kept)
 *            where a curve, a level list, a figure, a clock reading or l1_sets may
 *            be an error: {"error":"..."} or a bare string; shared_cycles may wrap
 *            its figure as {"cycles": FIGURE, ...}. Other members are not kept.
 *   banks:   the same provenance, "threshold","bank_count","map":[bank of R0, R1, ..],
 *            "classes":[[registers of bank 0], ..] (must agree with the map),
 *            "untested_registers"?:[{"register","reason"}],
 *            "kernel":{"highest_tested_register",..},"confirmation":{"pairs","agree",..},
 *            "costs":{NAME:{"sources":[a,b,c] (register or "RZ"),"reuse","ffma_per_sm_clock",
 *            "ratio","conflict"}},"reference":{"ffma_per_sm_clock",..},
 *            "runs":{"total","class_building"?,"confirmation"?,"all_pairs_would_be"?},
 *            "sass_check":{"verified",..},"seconds":{"total",..}.
 *   control-codes: the same provenance, "instructions":[{"name","sass",
 *            "compiler_stall"?,"compiler_yield"?,"chain_latency_cycles"?,
 *            "min_safe_stall"? (null: no stall was safe),"sweep":[{"stall","yield",
 *            "chain_cycles","chain_correct","stream_cycles","stream_correct"}],
 *            "fit":{"chain":FIT|null,"stream":FIT|null},"error"?}] where FIT is
 *            {"slope","intercept","max_residual","from_stall"?,"to_stall"?,"yield"?} and an
 *            entry with an error may lack its sweep and fit;
 *            "meanings":{NAME:{"text",..any}}.
 *   dual-issue: the same provenance, "peak_ffma_per_sm_clock"?,"peak_source"?,
 *            "dual_issue_observed","verdict","banks"?:{"bank_count",..},"operands"?:{..},
 *            "results":[{"pattern","operands","warps_per_scheduler",
 *            "nominal_ffma_per_sm_clock"?,"ffma_per_sm_clock","efficiency_vs_peak"?,
 *            "efficiency_vs_nominal"?}].
 *   suite:   {"latency": DOC | {"error":".."}, "memory": .., "banks": ..,
 *            "control-codes": .., "dual-issue": ..}, at least one member;
 *            unknown members are refused.
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

/* A probe's check: 0 if doc is a well-formed result document of that probe
 * (or suite), else -1 with the first fault's path in err. doc may be any
 * JSON, or NULL (it comes from a worker): a wrong one is an error return. */
typedef int results_check_fn(const json_t *doc, char *err, size_t errlen);
results_check_fn results_latency_check, results_memory_check, results_banks_check,
    results_control_codes_check, results_dual_issue_check, results_suite_check;

/* The savers (store_result_saver_fn, see store.h), for store_job_succeed and
 * store_job_record: the check, then the rows of job_id inserted in tx.
 * A result that is not a well-formed document is refused (-1) and writes
 * nothing (text that is not JSON at all the store refuses before a saver
 * sees it). Contract: tx is the live transaction the store hands a saver
 * and job_id the id of its job (> 0). */
store_result_saver_fn results_latency_save, results_memory_save, results_banks_save,
    results_control_codes_save, results_dual_issue_save, results_suite_save;

/* The stored result of probe ("latency", "memory", "banks", "control-codes"
 * or "dual-issue") on the device with this UUID: the newest when job_id is
 * 0, else that job's. *out (a new reference) is {"job_id","probe","device":
 * {"uuid","name","compute_capability"},"measured_ms","driver_version",
 * "clock_mhz":{"before","after"},"repeats","wall_s", the probe's figures in
 * the shape of its document, and "history":[{"job_id","measured_ms"}, ...]
 * (this device's runs of the probe, newest first, at most 50)}. The figures:
 * latency "entries", each with "min_safe_stall": {"stall","job_id"} from the
 * newest control-codes run on the device that found one for the same
 * instruction, else null; memory "curves","levels","shared_cycles",
 * "departure","device_memory_cycles","l1_sets" (null for a run without); banks the members the banks document
 * lists above ("classes" rebuilt from the map); control-codes "instructions"
 * (each sweep ordered by stall, then yield) and "meanings"; dual-issue the
 * run's members and "results". Returns 1 (and *out NULL) when there is none;
 * -1 with the reason for a probe that keeps no results or a job_id below 0
 * (both may come from a client). Contract: s and out are not NULL. */
int store_probe_result(store *s, const char *uuid, const char *probe, int64_t job_id,
                       json_t **out, char *err, size_t errlen);

#endif
