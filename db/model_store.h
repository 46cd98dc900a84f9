/*
 * The kernel-time model's side of the store: the measured parameters it
 * reads (db/model_params.c) and the validation runs it writes and serves
 * (db/results_validation.c).
 *
 * DESIGN
 * The store hands the model raw measurements with their provenance, as
 * JSON, and never interprets them: which figure stands for which model
 * parameter, and what is missing, is model/params.h's business. So all SQL
 * stays here and all modelling stays in model/. The same reads work on a
 * reader connection (the API) and inside a write transaction (the
 * model-validation saver, which predicts with the parameters stored at the
 * moment it saves, its own bandwidth measurement included).
 *
 * Model inputs, for a device:
 *   {"device": DEVICE (as discovery described it) | null,
 *    "latency": {"job_id","measured_ms","clock_mhz":{"before","after"},
 *                "throughput":{"ffma": results/clk/SM | null, ...}} | null,
 *    "memory":  {"job_id","measured_ms","clock_mhz":{..},
 *                "scalars":{"device_memory_cg": cycles | null, "departure_coalesced":..,
 *                           "departure_uncoalesced":.., ...,
                           "level_ca_1": cycles, "level_ca_1_bytes": bytes, "level_cg_1":..
                           (each latency level of the memory probe, per load)}} | null,
 *    "validation": {"job_id","measured_ms","dram_bandwidth": bytes/s | null,
 *                   "link_bandwidth": bytes/s | null,
 *                   "l2_bandwidth": bytes/s | null} | null}
 * where each probe is its newest run on the device (suite jobs included);
 * l2_bandwidth is null for a run stored before the L2 was measured, or
 * whose L2 measurement failed.
 *
 * Validation documents (probes/validation.h produces them):
 *   {"probe":"model-validation","device":{..},"driver_version","clock_mhz":{..},
 *    "repeats","wall_s","timing":"...",
 *    "bandwidth":{"dram_bytes_per_s": FIGURE | ERROR, "link_bytes_per_s": FIGURE | ERROR,
 *                 "l2_bytes_per_s": FIGURE | ERROR (optional: older documents lack it)},
 *    "kernels":[{"name","character","grid":[x,y,z],"block":[x,y,z],"regs",
 *                "smem","static_smem","launches","params":{..},
 *                "description": DESC | {"error":..},
 *                "measured_s": FIGURE | {"error":..}}, ...]}
 * Predictions are not in the document: the saver adds them (see
 * results_validation_predicted).
 */
#ifndef GPUPROBE_DB_MODEL_H
#define GPUPROBE_DB_MODEL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "db/store.h"

/* The model's inputs for the device (see above) into *out (new reference;
 * NULL on an error). A device the store does not know reads as nulls.
 * Contract: out is not NULL; store_tx_model_inputs takes a live
 * transaction (a saver's). */
int store_model_inputs(store *s, const char *uuid, json_t **out, char *err, size_t errlen);
int store_tx_model_inputs(struct store_tx *tx, const char *uuid, json_t **out, char *err,
                          size_t errlen);

/* 0 if doc is a well-formed validation document, else -1 with the first
 * fault's path (doc may be any JSON, or NULL). */
int results_validation_check(const json_t *doc, char *err, size_t errlen);

/* Inserts the run and its kernels' measurements (no predictions yet) in
 * the job's transaction; the first step of the kind's saver. A malformed doc
 * is refused as results_validation_check refuses it. Contract: tx is the
 * saver's live transaction and job_id its job (> 0). */
int results_validation_insert(struct store_tx *tx, int64_t job_id, const json_t *doc,
                              char *err, size_t errlen);

/* Records kernel name's prediction: predicted seconds, the relative error
 * against the measurement, and the whole prediction (inputs, parameters
 * with their jobs, intermediates) as JSON; or, with predicted NULL, why
 * there is none. Contract: tx live, job_id > 0, p and p->kernel not NULL. */
struct validation_prediction {
    const char *kernel;
    const double *predicted_s;     /* NULL: no prediction */
    const double *error;           /* (predicted - measured) / measured, or NULL */
    const json_t *detail;          /* the prediction document, or NULL */
    const char *failure;           /* why not, or NULL */
};
int results_validation_predicted(struct store_tx *tx, int64_t job_id,
                                 const struct validation_prediction *p, char *err,
                                 size_t errlen);

/* The run's summary: the geometric-mean absolute error (NULL when no kernel
 * has both figures), how many kernels it covers, and the probe jobs whose
 * parameters the predictions used (0: none, stored as NULL). Contract: tx
 * live, job_id > 0, kernels >= 0. */
int results_validation_summary(struct store_tx *tx, int64_t job_id, const double *gmae,
                               int kernels, int64_t latency_job, int64_t memory_job, char *err,
                               size_t errlen);

/* The newest (job_id 0) or the given validation run of the device, from the
 * rows: {"job_id","probe":"model-validation","device":{..},"measured_ms",
 * "driver_version","clock_mhz","repeats","wall_s","bandwidth":{..},
 * "parameters_from":{"latency_job","memory_job"},"gmae","kernels_compared",
 * "kernels":[{"name","character","grid","block","regs","smem","description",
 * "measured_s":FIGURE|null,"predicted_s","error","abs_error","prediction",
 * "failure"}],"history":[..]}. 1 when there is none; -1 with the reason for
 * a job_id below 0 (a client's). */
int store_model_validation(store *s, const char *uuid, int64_t job_id, json_t **out, char *err,
                           size_t errlen);

#endif
