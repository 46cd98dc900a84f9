/*
 * The "model-validation" job kind (see kind_model.h).
 *
 * DESIGN
 * The worker measures (probes/validation.h) and derives each kernel's
 * description from its PTX and launch (model/ptx_desc.h); the daemon's
 * saver then, in the job's transaction, stores the measurements, reads the
 * device's newest measured parameters (db/model_store.h, this run's bandwidths
 * included), predicts every kernel (model/predict.h) and stores each
 * prediction beside its measurement with the relative error, and the run's
 * geometric-mean absolute error. Missing parameters do not lose the
 * measurements: every kernel then records why it has no prediction (the
 * probe to run).
 */
#include "server/jobs/kind_model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "db/model_store.h"
#include "model/occupancy_json.h"
#include "model/params.h"
#include "model/predict.h"
#include "model/ptx_desc.h"
#include "probes/validation.h"
#include "server/jobs/kind_model_hits.h"
#include "server/jobs/kind_model_sass.h"
#include "server/jobs/kind_probes.h"

#define VALIDATION_TIMEOUT_S 600
#define ABS_ERROR_FLOOR 1e-6   /* |error| below this counts as this in the geometric mean */

static const struct param_spec validation_params[] = {
    REPEATS_PARAM("5", "timed measurements of each kernel; the median, minimum and maximum are "
                       "kept"),
};

/* ---- the worker side ------------------------------------------------------------- */

/* Adds "description" (or its error) to every kernel of the document. */
static void describe_all(json_t *doc)
{
    size_t i;
    json_t *k;
    json_array_foreach(json_object_get(doc, "kernels"), i, k) {
        struct pd_launch l;
        struct pd_desc d;
        char err[256];
        pd_launch_from_json(k, &l);
        if (pd_describe(json_string_value(json_object_get(k, "ptx")),
                        json_string_value(json_object_get(k, "entry")), &l, &d, err,
                        sizeof err) == 0) {
            json_t *desc = pd_desc_json(&d);
            model_sass_attach(desc, k, &l);
            json_object_set_new(k, "description", desc);
        } else {
            json_object_set_new(k, "description", json_pack("{s:s}", "error", err));
        }
    }
}

static json_t *validation_job(const struct job_ctx *ctx, const json_t *params, char *err,
                              size_t errlen)
{
    int repeats = (int)json_integer_value(json_object_get(params, "repeats"));
    json_t *doc = validation_run(ctx->device_uuid, repeats, err, errlen);
    if (doc) {
        describe_all(doc);
        model_hits_attach(doc, ctx->device_uuid);
    }
    return doc;
}

/* ---- the saver ------------------------------------------------------------------------ */

/* The kernel object model/predict.h takes, from a stored kernel entry: the
 * counts of its SASS when the worker could read them (what the machine
 * issues), else its PTX's; the cache model's hit rates when the worker
 * measured them on a sample. */
static json_t *predict_input(const json_t *k)
{
    const json_t *d = json_object_get(k, "description");
    const json_t *sc = json_object_get(d, "sass_counts");
    const json_t *src = json_is_object(json_object_get(sc, "per_warp")) ? sc : d;
    const json_t *hits = json_object_get(d, "cache");
    json_t *in = json_pack("{s:O, s:O, s:I, s:I, s:I}", "grid", json_object_get(k, "grid"),
                           "block", json_object_get(k, "block"), "regs",
                           json_integer_value(json_object_get(k, "regs")), "smem",
                           json_integer_value(json_object_get(k, "smem")), "static_smem",
                           json_integer_value(json_object_get(k, "static_smem")));
    json_object_set(in, "per_warp", json_object_get(src, "per_warp"));
    json_object_set(in, "uncoal_per_access", json_object_get(src, "uncoal_per_access"));
    json_object_set(in, "coal_bytes", json_object_get(src, "coal_bytes"));
    if (json_is_number(json_object_get(hits, "l1_hit")))
        json_object_set_new(in, "cache", json_pack("{s:f, s:f, s:f}", "l1_hit",
                                                   json_number_value(json_object_get(hits, "l1_hit")),
                                                   "l2_hit",
                                                   json_number_value(json_object_get(hits, "l2_hit")),
                                                   "l2_hit_store",
                                                   json_number_value(json_object_get(hits,
                                                                                     "l2_hit_store"))));
    return in;
}

struct predict_env {
    const struct occ_rules *rules;
    struct mwp_hw hw;
    const char *why_not;         /* the reason no kernel can be predicted, or NULL */
};

struct tally {
    double log_sum;
    int n;
};

static int predict_one(struct store_tx *tx, int64_t job_id, const json_t *k,
                       const struct predict_env *env, struct tally *t, char *err, size_t errlen)
{
    struct validation_prediction p = {.kernel = json_string_value(json_object_get(k, "name"))};
    const json_t *d = json_object_get(k, "description");
    const json_t *m = json_object_get(k, "measured_s");
    char why[512] = "", field[64];
    json_t *out = NULL, *in = NULL;
    double predicted = 0, rel = 0;
    if (env->why_not)
        snprintf(why, sizeof why, "%s", env->why_not);
    else if (!d || json_object_get(d, "error"))
        snprintf(why, sizeof why, "no description: %s",
                 d ? json_string_value(json_object_get(d, "error")) : "none");
    else if (model_predict_json((in = predict_input(k)), env->rules, &env->hw, &out, why,
                                sizeof why, field, sizeof field) == 0) {
        predicted = json_number_value(
            json_object_get(json_object_get(out, "prediction"), "kernel_s"));
        p.predicted_s = &predicted;
        p.detail = out;
        double meas = json_number_value(json_object_get(m, "median"));
        if (meas > 0 && !json_object_get(m, "error")) {
            rel = (predicted - meas) / meas;
            p.error = &rel;
            t->log_sum += log(fmax(fabs(rel), ABS_ERROR_FLOOR));
            t->n++;
        }
    }
    p.failure = p.predicted_s ? NULL : why;
    int rc = results_validation_predicted(tx, job_id, &p, err, errlen);
    json_decref(in);
    json_decref(out);
    return rc;
}

/* The rules and parameters for the document's device; why_not set when missing. */
static void environment(struct store_tx *tx, const json_t *doc, struct predict_env *env,
                        json_t **inputs, char *why, size_t whylen, char *err, size_t errlen)
{
    const json_t *dev = json_object_get(doc, "device");
    const char *uuid = json_string_value(json_object_get(dev, "uuid"));
    int major, minor, missing;
    env->why_not = why;
    if (occ_parse_cc(json_string_value(json_object_get(dev, "compute_capability")), &major,
                     &minor) < 0 ||
        !(env->rules = occ_rules_for(major, minor))) {
        snprintf(why, whylen, "no occupancy rules for the device's compute capability");
        return;
    }
    if (store_tx_model_inputs(tx, uuid, inputs, err, errlen) < 0) {
        snprintf(why, whylen, "reading the parameters failed: %s", err);
        return;
    }
    if (model_hw_from_inputs(*inputs, uuid, &env->hw, &missing, why, whylen) == 0)
        env->why_not = NULL;
}

static int save_parsed(struct store_tx *tx, int64_t job_id, const json_t *doc, char *err,
                       size_t errlen)
{
    struct predict_env env;
    struct tally t = {0, 0};
    json_t *inputs = NULL;
    char why[512] = "";
    size_t i;
    const json_t *k;
    memset(&env, 0, sizeof env);
    if (results_validation_insert(tx, job_id, doc, err, errlen) < 0)
        return -1;
    environment(tx, doc, &env, &inputs, why, sizeof why, err, errlen);
    int rc = 0;
    json_array_foreach(json_object_get(doc, "kernels"), i, k)
        if (rc == 0)
            rc = predict_one(tx, job_id, k, &env, &t, err, errlen);
    double gmae = t.n ? exp(t.log_sum / t.n) : 0;
    int64_t lj = json_integer_value(json_object_get(json_object_get(inputs, "latency"), "job_id"));
    int64_t mj = json_integer_value(json_object_get(json_object_get(inputs, "memory"), "job_id"));
    if (rc == 0)
        rc = results_validation_summary(tx, job_id, t.n ? &gmae : NULL, t.n, env.why_not ? 0 : lj,
                                        env.why_not ? 0 : mj, err, errlen);
    json_decref(inputs);
    return rc;
}


const struct job_kind kind_model_validation = {
    .name = "model-validation",
    .summary = "Sixteen kernels of different character timed on the GPU and predicted by the "
               "MWP/CWP model from the device's stored latency and memory measurements; "
               "device-memory, L2 and host-link bandwidth measured too",
    .needs_gpu = 1, .default_timeout_s = VALIDATION_TIMEOUT_S, JOB_PARAMS(validation_params),
    .run = validation_job, .check_result = results_validation_check, .save = save_parsed,
};
