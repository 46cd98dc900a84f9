/*
 * Request handlers, one file per resource in this folder. Each reads a
 * plain request and fills a plain response (see server/http/message.h).
 */
#ifndef GPUPROBE_SERVER_API_HANDLERS_H
#define GPUPROBE_SERVER_API_HANDLERS_H

#include <stdint.h>

#include <jansson.h>

#include "server/http/message.h"
#include "server/http/problem.h"
#include "server/jobs/registry.h"

struct resp_cache;

void h_healthz(struct http_req *rq, struct http_resp *rs);
void h_readyz(struct http_req *rq, struct http_resp *rs);
void h_metrics(struct http_req *rq, struct http_resp *rs);
void h_devices_list(struct http_req *rq, struct http_resp *rs);
void h_device_get(struct http_req *rq, struct http_resp *rs);
void h_device_latency(struct http_req *rq, struct http_resp *rs);
void h_device_memory(struct http_req *rq, struct http_resp *rs);
void h_device_banks(struct http_req *rq, struct http_resp *rs);
void h_device_control_codes(struct http_req *rq, struct http_resp *rs);
void h_device_issue(struct http_req *rq, struct http_resp *rs);
void h_job_kinds(struct http_req *rq, struct http_resp *rs);
void h_jobs_submit(struct http_req *rq, struct http_resp *rs);
void h_jobs_list(struct http_req *rq, struct http_resp *rs);
void h_job_get(struct http_req *rq, struct http_resp *rs);
void h_job_cancel(struct http_req *rq, struct http_resp *rs);
void h_static(struct http_req *rq, struct http_resp *rs);
void h_model_occupancy(struct http_req *rq, struct http_resp *rs);
void h_model_occupancy_rules(struct http_req *rq, struct http_resp *rs);
void h_model_predict(struct http_req *rq, struct http_resp *rs);
void h_device_model_validation(struct http_req *rq, struct http_resp *rs);
void h_traces_sort(struct http_req *rq, struct http_resp *rs);
void h_traces_capture(struct http_req *rq, struct http_resp *rs); /* traces_capture.c */
/* A spool route's body moved to upload_dir/PREFIX + 6 random characters +
 * SUFFIX (the request no longer owns it); that path into path. 0, or -1 with
 * errno (traces.c). */
int upload_keep_body(struct http_req *rq, const char *prefix, const char *suffix, char *path,
                     size_t len);
void h_job_output(struct http_req *rq, struct http_resp *rs);
void h_device_export(struct http_req *rq, struct http_resp *rs);
void h_import(struct http_req *rq, struct http_resp *rs);
void h_upstream(struct http_req *rq, struct http_resp *rs);
void h_fleet(struct http_req *rq, struct http_resp *rs);
void h_fleet_distribution(struct http_req *rq, struct http_resp *rs);

/* 0 when every query argument is one of known (NULL-terminated) and none
 * is given twice; else -1 with rs holding the 400 naming the argument. */
int query_only(struct http_req *rq, struct http_resp *rs, const char *const *known);

/* A 200 answer of JSON text body (malloc'd, len bytes; rs takes it). */
void respond_json_text(struct http_resp *rs, char *body, size_t len);
/* A 200 JSON answer kept under key at generation gen (resp_cache_get): 1
 * with rs filled, 0 when there is none. */
int respond_cached(struct http_resp *rs, struct resp_cache *c, const char *key, uint64_t gen);
/* Keeps rs's answer under key at gen (the generation read before the data
 * it was made from) when it is a 200. */
void keep_response(const struct http_resp *rs, struct resp_cache *c, const char *key,
                   uint64_t gen);

/* The job named by the path's {id}: 0 with j filled (free it with
 * job_row_free); else non-zero with rs holding the 400, 404 or 503. */
int job_from_path(struct http_req *rq, struct http_resp *rs, struct job_row *j);
/* Answers status with job id as stored (the JOB object). */
void respond_job(struct http_req *rq, struct http_resp *rs, int64_t id, int status);
/* Where GET fetches job j's output file ("/api/v1/jobs/ID/output"), or
 * JSON null when it has none: not a trace job, not succeeded, or a sort
 * whose client waited for its output (removed once answered). */
json_t *job_output_link(const struct app *app, const struct job_row *j);
/* 202 with the job's Location and JOB object: it will run later. */
void respond_accepted(struct http_req *rq, struct http_resp *rs, int64_t id);
/* Creates a job (job_submit: deadline defaulted, scheduler woken) and
 * answers 202 with its Location and JOB object, or 503 when it cannot be
 * stored. Shared by every handler that creates jobs. */
void submit_job(struct http_req *rq, struct http_resp *rs, const struct job_kind *k,
                const char *device, const json_t *params, int timeout_s);

#endif
