/*
 * POST /api/v1/traces/capture: a kernel's memory trace from its PTX, taken
 * on one of this node's GPUs (docs/api.md, "Traces"; docs/trace-capture.md).
 *
 * DESIGN
 * A spool route like the trace sort: the body (the PTX module) is already
 * in a file of upload_dir. The query arguments become the trace-capture
 * kind's parameters — entry, grid, block, shared_bytes, max_records,
 * sample_blocks, and one param=NAME=VALUE per kernel parameter, in order — and device names
 * the GPU (UUID or index; the first GPU when left out). Everything is
 * checked before anything is stored (400 naming the argument, 422 for a
 * device not attached); then the body is renamed to
 * upload_dir/capture-XXXXXX.ptx and a GPU job is queued: the answer is 202
 * with the job, whose result holds the sites, records and the same-answer
 * check, and whose trace GET /api/v1/jobs/{id}/output serves once it has
 * succeeded. A GPU job may wait behind probes, so the request never waits
 * for it. Only names this file generated reach the kind's file parameters.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/api/handlers.h"
#include "server/app.h"
#include "server/jobs/kind_trace_capture.h"
#include "server/jobs/scheduler.h"
#include "util/text.h"

#define PATH_BYTES 1400
#define ARGS_BYTES 8192

struct capture_query {
    json_t *params;
    char args[ARGS_BYTES];       /* the param= items, space-separated */
    size_t args_len;
    const char *device;
    char device_buf[128];
    char err[512];
    char arg[64];
};

static int bad(struct capture_query *q, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bad(struct capture_query *q, const char *key, const char *fmt, ...)
{
    va_list ap;
    snprintf(q->arg, sizeof q->arg, "%s", key);
    va_start(ap, fmt);
    vsnprintf(q->err, sizeof q->err, fmt, ap);
    va_end(ap);
    return 1;
}

static int take_arg(void *ctx, const char *key, const char *value)
{
    static const char *const texts[] = {"entry", "grid", "block", NULL};
    static const char *const ints[] = {"shared_bytes", "max_records", "sample_blocks", NULL};
    struct capture_query *q = ctx;
    const char *v = value; /* never NULL: the transport refuses a bare "?key" (message.h) */
    long long n;
    if (json_object_get(q->params, key) || (strcmp(key, "device") == 0 && q->device))
        return bad(q, key, "is given more than once (only param may repeat)");
    for (const char *const *t = texts; *t; t++)
        if (strcmp(key, *t) == 0) {
            json_object_set_new(q->params, key, json_string(v));
            return 0;
        }
    for (const char *const *t = ints; *t; t++)
        if (strcmp(key, *t) == 0) {
            if (parse_ll(v, 0, 1ll << 40, &n) < 0)
                return bad(q, key, "must be an integer, not '%.64s'", v);
            json_object_set_new(q->params, key, json_integer(n));
            return 0;
        }
    if (strcmp(key, "param") == 0) {
        if (strpbrk(v, " \t\r\n") || q->args_len + strlen(v) + 2 > sizeof q->args)
            return bad(q, key, "'%.64s' has a space in it, or the params are too long", v);
        q->args_len += (size_t)snprintf(q->args + q->args_len, sizeof q->args - q->args_len,
                                        "%s%s", q->args_len ? " " : "", v);
        return 0;
    }
    if (strcmp(key, "device") == 0) {
        snprintf(q->device_buf, sizeof q->device_buf, "%s", v);
        q->device = q->device_buf;
        return 0;
    }
    return bad(q, key, "'%s' is not an argument (entry, grid, block, param, device, "
                       "shared_bytes, max_records, sample_blocks)", key);
}

/* The job's parameters from the query; NULL after answering 400. */
static json_t *capture_params(struct http_req *rq, struct http_resp *rs, struct capture_query *q)
{
    char err[512], field[128];
    json_t *p = NULL;
    q->params = json_object();
    if (http_query_each(rq, take_arg, q)) {
        problem_field(rq, rs, 400, "invalid-request", q->arg, "query argument %s: %s", q->arg,
                      q->err);
    } else {
        json_object_set_new(q->params, "ptx", json_string("body.ptx"));
        json_object_set_new(q->params, "params", json_string(q->args));
        p = job_params_validate(&kind_trace_capture, q->params, err, sizeof err, field,
                                sizeof field);
        if (!p) /* "params.grid: ..." is the query's "grid" */
            problem_field(rq, rs, 400, "invalid-request",
                          strncmp(field, "params.", 7) == 0 ? field + 7 : field,
                          "query argument %s", strncmp(err, "params.", 7) == 0 ? err + 7 : err);
    }
    json_decref(q->params);
    return p;
}

/* The attached GPU the query names (index or UUID; none: the first). */
static int capture_device(struct http_req *rq, struct http_resp *rs, const char *dev,
                          char uuid[48])
{
    char why[256];
    long long index = 0;
    int is_index = !dev || parse_ll(dev, 0, 1 << 20, &index) == 0;
    if (app_resolve_device(rq->app, is_index ? NULL : dev, is_index ? index : -1, uuid, why,
                           sizeof why) == 0)
        return 0;
    problem_field(rq, rs, 422, "unknown-device", "device", "%s", why);
    return -1;
}

void h_traces_capture(struct http_req *rq, struct http_resp *rs)
{
    struct capture_query *q = calloc(1, sizeof *q);
    char path[PATH_BYTES], err[512], uuid[48];
    int64_t id = 0;
    json_t *params = NULL;
    if (!q) {
        problem(rq, rs, 500, "internal", "out of memory");
        return;
    }
    if (!rq->body_file || rq->body_len == 0) {
        problem(rq, rs, 400, "invalid-request", "the body is empty: send the PTX module");
    } else if ((params = capture_params(rq, rs, q)) && capture_device(rq, rs, q->device, uuid) == 0) {
        if (upload_keep_body(rq, "capture-", ".ptx", path, sizeof path) < 0) {
            problem(rq, rs, 500, "internal", "the PTX could not be kept for the job: %s",
                    strerror(errno));
        } else {
            const char *slash = strrchr(path, '/');
            json_object_set_new(params, "ptx", json_string(slash ? slash + 1 : path));
            if (job_submit(rq->app, &kind_trace_capture, uuid, params, 0, &id, err,
                           sizeof err) < 0) {
                unlink(path);
                problem(rq, rs, 503, "unavailable", "the capture job could not be stored: %s",
                        err);
            } else {
                respond_accepted(rq, rs, id);
            }
        }
    }
    json_decref(params);
    free(q);
}
