/*
 * /api/v1/devices/{uuid}/latency, /memory, /banks, /control-codes and /issue
 * (the dual-issue probe): the probe results stored for a device, newest
 * first, or one run by ?job=ID.
 *
 * The store builds the answer from its result tables (db/results.h); this
 * file only checks the arguments, turns stored times into RFC 3339 and adds
 * the link to the job. A device with no such result gets a 404 whose detail
 * says how to produce one, so a dashboard can show it as it is.
 */
#include <stdio.h>

#include "db/results.h"
#include "server/app.h"
#include "server/api/handlers.h"
#include "server/api/job_json.h"
#include "server/jobs/registry.h"
#include "util/text.h"

/* ?job=ID; 0 when absent, -1 (with rs filled) when malformed. */
static int job_arg(struct http_req *rq, struct http_resp *rs, int64_t *job)
{
    static const char *const known[] = {"job", NULL};
    const char *v = http_query(rq, "job");
    long long n;
    *job = 0;
    if (query_only(rq, rs, known) < 0)
        return -1;
    if (!v)
        return 0;
    if (parse_ll(v, 1, INT64_MAX, &n) < 0) {
        problem_field(rq, rs, 400, "invalid-request", "job",
                      "job must be a positive job id, not '%s'", v);
        return -1;
    }
    *job = n;
    return 0;
}

/* 1 if the device is attached now or was ever recorded in the store. */
static int device_known(struct app *app, const char *uuid)
{
    char uuid_out[48], why[256];
    struct device_row row;
    if (app_resolve_device(app, uuid, -1, uuid_out, why, sizeof why) == 0)
        return 1;
    if (store_device_get(app->db, uuid, &row, why, sizeof why) != 0)
        return 0;
    device_row_free(&row);
    return 1;
}

static void not_found(struct http_req *rq, struct http_resp *rs, const char *uuid,
                      const char *probe, int64_t job)
{
    if (job) { /* a job named: running the probe again is not the answer */
        problem(rq, rs, 404, "not-found",
                "no %s result for device %s in job %lld: that job measured another device or "
                "another probe, or is not a result here; leave job out for the newest %s result, "
                "or pick one of its history",
                probe, uuid, (long long)job, probe);
        return;
    }
    if (!job_kind_find(probe))
        problem(rq, rs, 404, "not-found", "no %s result for device %s; this build has no %s "
                "probe to run", probe, uuid, probe);
    else
        problem(rq, rs, 404, "not-found",
                "no %s result for device %s%s; run the %s probe on it: POST /api/v1/jobs "
                "{\"kind\":\"%s\",\"device\":\"%s\"}, or gpuprobe probe %s --device %s --db DB",
                probe, uuid,
                device_known(rq->app, uuid) ? "" : " (a device never seen on this host)", probe,
                probe, uuid, probe, uuid);
}

/* "measured_ms" -> "measured_at" (RFC 3339), in place. */
static void time_field(json_t *o)
{
    json_t *ms = json_object_get(o, "measured_ms");
    json_object_set_new(o, "measured_at", time_to_json(json_integer_value(ms)));
    json_object_del(o, "measured_ms");
}

/* The store's answer as the API serves it: the job's link and the time
 * first, then everything else in the store's order. */
static json_t *dress(json_t *in)
{
    json_t *out = json_object(), *v, *h;
    const char *key;
    char link[64];
    size_t i;
    snprintf(link, sizeof link, "/api/v1/jobs/%lld",
             (long long)json_integer_value(json_object_get(in, "job_id")));
    json_object_set(out, "job_id", json_object_get(in, "job_id"));
    json_object_set_new(out, "job", json_string(link));
    json_object_set(out, "probe", json_object_get(in, "probe"));
    json_object_set(out, "device", json_object_get(in, "device"));
    time_field(in);
    json_object_foreach(in, key, v)
        json_object_set(out, key, v);
    json_array_foreach(json_object_get(out, "history"), i, h)
        time_field(h);
    json_decref(in);
    return out;
}

static void serve_result(struct http_req *rq, struct http_resp *rs, const char *probe)
{
    const char *uuid = rq->params[0];
    int64_t job;
    json_t *out = NULL;
    char err[256];
    if (job_arg(rq, rs, &job) < 0)
        return;
    int rc = store_probe_result(rq->app->db, uuid, probe, job, &out, err, sizeof err);
    if (rc < 0) {
        problem(rq, rs, 503, "unavailable", "the %s result of %s could not be read: %s", probe,
                uuid, err);
        return;
    }
    if (rc == 1) {
        not_found(rq, rs, uuid, probe, job);
        return;
    }
    http_json(rs, 200, dress(out));
}

void h_device_latency(struct http_req *rq, struct http_resp *rs)
{
    serve_result(rq, rs, "latency");
}

void h_device_memory(struct http_req *rq, struct http_resp *rs)
{
    serve_result(rq, rs, "memory");
}

void h_device_banks(struct http_req *rq, struct http_resp *rs)
{
    serve_result(rq, rs, "banks");
}

void h_device_control_codes(struct http_req *rq, struct http_resp *rs)
{
    serve_result(rq, rs, "control-codes");
}

void h_device_issue(struct http_req *rq, struct http_resp *rs)
{
    serve_result(rq, rs, "dual-issue");
}
