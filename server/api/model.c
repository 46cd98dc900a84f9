/*
 * /api/v1/model/occupancy, /api/v1/model/predict and
 * /api/v1/devices/{uuid}/model-validation: the kernel-time model over HTTP.
 *
 * DESIGN
 * The two POSTs are calculations: they change nothing, so they need no
 * token (server/api/routes.c); GET /api/v1/model/occupancy lists the rules
 * the calculator knows. Their bodies go through the model's own parsers
 * (the command line uses the same), whose errors name the member; this
 * file only resolves
 * the device (attached now by index or UUID, any device the store has seen
 * by UUID, since measurements outlive hardware, imported ones included, or
 * for predict a compute capability: the device of that capability with
 * measurements, an attached one first, else the newest), reads the device's
 * measured parameters from the store, and maps failures to problems:
 * 400 invalid-request (a member, named in "field"), 422 unknown-device,
 * 409 conflict when the device lacks a measurement the model needs (the
 * detail names the probe to run). The validation results are read from
 * their rows; no run gives 404 naming the job to submit.
 */
#include <stdio.h>
#include <string.h>

#include "db/model_store.h"
#include "model/occupancy.h"
#include "model/occupancy_curves.h"
#include "model/occupancy_json.h"
#include "model/params.h"
#include "model/predict.h"
#include "server/app.h"
#include "server/api/handlers.h"
#include "server/api/job_json.h"
#include "server/http/json_body.h"
#include "util/text.h"

static json_t *parse_body(struct http_req *rq, struct http_resp *rs)
{
    if (!rq->body_len) {
        problem(rq, rs, 400, "invalid-json", "the body is empty; expected a JSON object");
        return NULL;
    }
    json_t *doc = json_body(rq, rs, rq->app->cfg.body_limit, "body_limit",
                            JSON_REJECT_DUPLICATES);
    if (!doc)
        return NULL;
    if (!json_is_object(doc)) {
        problem(rq, rs, 400, "invalid-json", "the body must be a JSON object");
        json_decref(doc);
        doc = NULL;
    }
    return doc;
}

/* The device a request names: attached (UUID or index) or stored (UUID).
 * Fills uuid and its description; -1 after answering. */
static int find_device(struct http_req *rq, struct http_resp *rs, const json_t *dev,
                       char uuid[48], json_t **info)
{
    char why[256];
    struct device_row row;
    *info = NULL;
    if ((!json_is_string(dev) || !*json_string_value(dev)) && !json_is_integer(dev)) {
        problem_field(rq, rs, 400, "invalid-request", "device", "must be a GPU UUID or index");
        return -1;
    }
    if (app_resolve_device(rq->app, json_string_value(dev),
                           json_is_integer(dev) ? json_integer_value(dev) : -1, uuid, why,
                           sizeof why) < 0) {
        if (!json_is_string(dev) || strlen(json_string_value(dev)) >= 48) {
            problem_field(rq, rs, 422, "unknown-device", "device", "%s", why);
            return -1;
        }
        snprintf(uuid, 48, "%s", json_string_value(dev));
    }
    int rc = store_device_get(rq->app->db, uuid, &row, why, sizeof why);
    if (rc == 0) {
        *info = json_loads(row.info_json, 0, NULL);
        device_row_free(&row);
    }
    if (!*info) {
        problem_field(rq, rs, 422, "unknown-device", "device",
                      "no device %s has been seen by this daemon", uuid);
        return -1;
    }
    return 0;
}

static const struct occ_rules *rules_of(struct http_req *rq, struct http_resp *rs,
                                        const json_t *info, int *major, int *minor)
{
    const struct occ_rules *r = NULL;
    if (occ_parse_cc(json_string_value(json_object_get(info, "compute_capability")), major,
                     minor) == 0)
        r = occ_rules_for(*major, *minor);
    char known[128];
    occ_known_ccs(known, sizeof known);
    if (!r)
        problem_field(rq, rs, 422, "unknown-device", "device",
                      "no occupancy rules for the device's compute capability %s (known: %s)",
                      json_string_value(json_object_get(info, "compute_capability")), known);
    return r;
}

/* ---- occupancy ------------------------------------------------------------------- */

void h_model_occupancy_rules(struct http_req *rq, struct http_resp *rs)
{
    (void)rq;
    json_t *list = json_array();
    for (size_t i = 0; i < occ_rules_count(); i++)
        json_array_append_new(list, occ_rules_json(occ_rules_at(i)));
    http_json(rs, 200, json_pack("{s:o}", "rules", list));
}

void h_model_occupancy(struct http_req *rq, struct http_resp *rs)
{
    struct occ_request req;
    struct occ_result res;
    char err[512], field[64], uuid[48] = "";
    json_t *info = NULL, *body = parse_body(rq, rs);
    if (!body)
        return;
    const struct occ_rules *r = NULL;
    char known[128];
    occ_known_ccs(known, sizeof known);
    if (occ_request_parse(body, &req, err, sizeof err, field, sizeof field) < 0)
        problem_field(rq, rs, 400, "invalid-request", field, "%s", err);
    else if (req.device && find_device(rq, rs, req.device, uuid, &info) < 0)
        ;
    else if (req.device)
        r = rules_of(rq, rs, info, &req.cc_major, &req.cc_minor);
    else if (!(r = occ_rules_for(req.cc_major, req.cc_minor)))
        problem_field(rq, rs, 422, "invalid-request", "compute_capability",
                      "no occupancy rules for compute capability %d.%d (known: %s)",
                      req.cc_major, req.cc_minor, known);
    if (r && occ_compute(r, &req.in, &res, err, sizeof err) < 0) {
        problem_field(rq, rs, 400, "invalid-request", "", "%s", err);
        r = NULL;
    }
    if (r) {
        json_t *out = occ_result_json(r, &req.in, &res);
        json_object_set_new(out, "device", uuid[0] ? json_string(uuid) : json_null());
        if (req.curves)
            json_object_set_new(out, "curves", occ_curves_json(r, &req.in));
        http_json(rs, 200, out);
    }
    json_decref(info);
    json_decref(body);
}

/* ---- predict ------------------------------------------------------------------------ */

static int check_predict_keys(struct http_req *rq, struct http_resp *rs, json_t *body)
{
    const char *key;
    json_t *v;
    int by_device = json_object_get(body, "device") != NULL;
    int by_cc = json_object_get(body, "compute_capability") != NULL;
    json_object_foreach(body, key, v)
        if (strcmp(key, "device") && strcmp(key, "compute_capability") && strcmp(key, "kernel")) {
            problem_field(rq, rs, 400, "invalid-request", key,
                          "unknown member '%s' (expected device or compute_capability, and "
                          "kernel)", key);
            return -1;
        }
    if (by_device == by_cc) {
        problem_field(rq, rs, 400, "invalid-request", by_device ? "compute_capability" : "device",
                      by_device ? "give device or compute_capability, not both"
                                : "is required (or compute_capability)");
        return -1;
    }
    if (!json_object_get(body, "kernel")) {
        problem_field(rq, rs, 400, "invalid-request", "kernel", "is required");
        return -1;
    }
    return 0;
}

/* When the device's latency measurements were made (0: none). */
static int64_t measured_at(store *db, const char *uuid)
{
    json_t *inputs = NULL;
    char err[256];
    int64_t at = 0;
    if (store_model_inputs(db, uuid, &inputs, err, sizeof err) == 0)
        at = json_integer_value(json_object_get(json_object_get(inputs, "latency"),
                                                "measured_ms"));
    json_decref(inputs);
    return at;
}

/* The device whose measurements stand for a compute capability: an
 * attached one first, else the one measured most recently. Fills uuid;
 * -1 after answering (422 when no device of that capability was measured). */
static int device_of_cc(struct http_req *rq, struct http_resp *rs, const json_t *cc,
                        char uuid[48])
{
    struct device_row *rows = NULL;
    size_t n = 0;
    char err[256];
    int64_t best = 0;
    int best_attached = 0, major, minor;
    if (!json_is_string(cc) || occ_parse_cc(json_string_value(cc), &major, &minor) < 0) {
        problem_field(rq, rs, 400, "invalid-request", "compute_capability",
                      "must be a string such as \"9.0\"");
        return -1;
    }
    if (store_device_list(rq->app->db, &rows, &n, err, sizeof err) < 0) {
        problem(rq, rs, 503, "unavailable", "the stored devices could not be read: %s", err);
        return -1;
    }
    uuid[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rows[i].compute_capability, json_string_value(cc)) != 0)
            continue;
        char mine[48], why[128];
        int attached = app_resolve_device(rq->app, rows[i].uuid, -1, mine, why, sizeof why) == 0;
        int64_t at = measured_at(rq->app->db, rows[i].uuid);
        if (at > 0 && (attached > best_attached || (attached == best_attached && at > best))) {
            snprintf(uuid, 48, "%s", rows[i].uuid);
            best = at, best_attached = attached;
        }
    }
    device_rows_free(rows, n);
    if (uuid[0])
        return 0;
    problem_field(rq, rs, 422, "unknown-device", "compute_capability",
                  "no device of compute capability %s has latency measurements in this store "
                  "(import one, or run the latency and memory probes on one)",
                  json_string_value(cc));
    return -1;
}

/* The device's measured parameters; -1 after answering (409 when missing). */
static int device_hw(struct http_req *rq, struct http_resp *rs, const char *uuid,
                     struct mwp_hw *hw)
{
    char err[768];
    int missing;
    json_t *inputs;
    if (store_model_inputs(rq->app->db, uuid, &inputs, err, sizeof err) < 0) {
        problem(rq, rs, 503, "unavailable", "the parameters of %s could not be read: %s", uuid,
                err);
        return -1;
    }
    int rc = model_hw_from_inputs(inputs, uuid, hw, &missing, err, sizeof err);
    json_decref(inputs);
    if (rc < 0)
        problem_field(rq, rs, missing ? 409 : 422, missing ? "conflict" : "unknown-device",
                      "device", "%s", err);
    return rc;
}

/* The device a prediction is for: the one named, or the one standing for
 * the compute capability given; -1 after answering. */
static int predict_device(struct http_req *rq, struct http_resp *rs, const json_t *body,
                          char uuid[48], json_t **info)
{
    const json_t *cc = json_object_get(body, "compute_capability");
    if (!cc)
        return find_device(rq, rs, json_object_get(body, "device"), uuid, info);
    if (device_of_cc(rq, rs, cc, uuid) < 0)
        return -1;
    json_t *named = json_string(uuid);
    int rc = find_device(rq, rs, named, uuid, info);
    json_decref(named);
    return rc;
}

void h_model_predict(struct http_req *rq, struct http_resp *rs)
{
    char uuid[48], err[768], field[160], path[176];
    int major, minor;
    struct mwp_hw hw;
    json_t *info = NULL, *out = NULL, *body = parse_body(rq, rs);
    const struct occ_rules *r = NULL;
    if (!body)
        return;
    if (check_predict_keys(rq, rs, body) == 0 && predict_device(rq, rs, body, uuid, &info) == 0 &&
        (r = rules_of(rq, rs, info, &major, &minor)) != NULL &&
        device_hw(rq, rs, uuid, &hw) == 0) {
        if (model_predict_json(json_object_get(body, "kernel"), r, &hw, &out, err, sizeof err,
                               field, sizeof field) < 0) {
            snprintf(path, sizeof path, "kernel%s%s", field[0] ? "." : "", field);
            problem_field(rq, rs, 400, "invalid-request", path, "kernel%s%s", field[0] ? "." : ": ", err);
        } else {
            json_object_set_new(out, "device", json_pack("{s:s, s:O, s:O}", "uuid", uuid, "name",
                                                         json_object_get(info, "name"),
                                                         "compute_capability",
                                                         json_object_get(info,
                                                                         "compute_capability")));
            http_json(rs, 200, out);
        }
    }
    json_decref(info);
    json_decref(body);
}

/* ---- validation results ---------------------------------------------------------------- */

/* "measured_ms" -> "measured_at", in place. */
static void time_field(json_t *o)
{
    json_object_set_new(o, "measured_at",
                        time_to_json(json_integer_value(json_object_get(o, "measured_ms"))));
    json_object_del(o, "measured_ms");
}

void h_device_model_validation(struct http_req *rq, struct http_resp *rs)
{
    const char *uuid = rq->params[0], *v = http_query(rq, "job");
    long long job = 0;
    json_t *out = NULL, *h;
    char err[256], link[64];
    size_t i;
    if (v && parse_ll(v, 1, INT64_MAX, &job) < 0) {
        problem_field(rq, rs, 400, "invalid-request", "job",
                      "job must be a positive job id, not '%s'", v);
        return;
    }
    int rc = store_model_validation(rq->app->db, uuid, job, &out, err, sizeof err);
    if (rc < 0) {
        problem(rq, rs, 503, "unavailable", "the validation of %s could not be read: %s", uuid,
                err);
        return;
    }
    if (rc == 1) {
        problem(rq, rs, 404, "not-found",
                "no model-validation result for device %s%s; run it (after the latency and "
                "memory probes): POST /api/v1/jobs {\"kind\":\"model-validation\",\"device\":"
                "\"%s\"}", uuid, job ? " in that job" : "", uuid);
        return;
    }
    snprintf(link, sizeof link, "/api/v1/jobs/%lld",
             (long long)json_integer_value(json_object_get(out, "job_id")));
    json_object_set_new(out, "job", json_string(link));
    time_field(out);
    json_array_foreach(json_object_get(out, "history"), i, h)
        time_field(h);
    http_json(rs, 200, out);
}
