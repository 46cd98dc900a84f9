/*
 * Request handlers, one file per resource (h_*.c). Each reads a plain
 * request and fills a plain response (see http.h).
 */
#ifndef GPUPROBE_SERVER_HANDLERS_H
#define GPUPROBE_SERVER_HANDLERS_H

#include "server/http.h"

void h_healthz(struct http_req *rq, struct http_resp *rs);
void h_readyz(struct http_req *rq, struct http_resp *rs);
void h_devices_list(struct http_req *rq, struct http_resp *rs);
void h_device_get(struct http_req *rq, struct http_resp *rs);
void h_device_latency(struct http_req *rq, struct http_resp *rs);
void h_device_memory(struct http_req *rq, struct http_resp *rs);
void h_job_kinds(struct http_req *rq, struct http_resp *rs);
void h_jobs_submit(struct http_req *rq, struct http_resp *rs);
void h_jobs_list(struct http_req *rq, struct http_resp *rs);
void h_job_get(struct http_req *rq, struct http_resp *rs);
void h_job_cancel(struct http_req *rq, struct http_resp *rs);
void h_static(struct http_req *rq, struct http_resp *rs);

#endif
