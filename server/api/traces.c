/*
 * POST /api/v1/traces/sort and GET /api/v1/jobs/{id}/output: trace sorting
 * over HTTP (docs/api.md, "Traces").
 *
 * DESIGN
 * The route is a spool route: the body is already in a file of upload_dir
 * (rq->body_file) when the handler runs. The query arguments become the
 * trace-sort kind's parameters and are checked before anything runs (400
 * naming the argument). Then the body is renamed to
 * upload_dir/trace-XXXXXX.in (the request no longer owns it) and becomes a
 * trace-sort job like any other: it waits for a scheduler CPU slot, runs in
 * a worker and writes trace-<id>.out. The kind's finished hook removes the
 * input when the job ends and the output when it did not succeed. Two ways
 * to answer:
 *   - a body up to trace_sync_limit is waited for (scheduler_wait, at most
 *     SYNC_WAIT_S): a succeeded job's output is streamed back with the
 *     summary's totals in the Gpuprobe-Summary header and the job's id in
 *     Gpuprobe-Job, and removed once the whole answer reached the client
 *     (a client that went away can still GET it); a failed one is a
 *     problem (a bad trace is 400 invalid-trace
 *     with the worker's "line" and "offset"), and nothing is left behind;
 *     a job still unfinished after SYNC_WAIT_S is answered 202 as below;
 *   - a larger body is answered 202 with the job at once; its output is
 *     served by GET /api/v1/jobs/{id}/output once it has succeeded.
 * Only names this file generated ever reach the kind's file parameters: the
 * query cannot name files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/api/handlers.h"
#include "server/app.h"
#include "server/jobs/kind_trace.h"
#include "server/jobs/kind_trace_capture.h"
#include "server/jobs/protocol.h"
#include "server/jobs/scheduler.h"
#include "util/text.h"

#define SYNC_WAIT_S 600
#define SUMMARY_HEADER "Gpuprobe-Summary"
/* the job that sorted it, whose result holds the whole summary (per SM too) */
#define JOB_HEADER "Gpuprobe-Job"
#define PATH_BYTES 1400

/* ---- parameters -------------------------------------------------------------- */

struct query_args {
    json_t *params;
    char err[512];
    char arg[64];
};

/* value is never NULL: the transport refuses a bare "?key" (message.h) */
static int take_arg(void *ctx, const char *key, const char *value)
{
    struct query_args *q = ctx;
    if (trace_sort_param_text(q->params, key, value, q->err, sizeof q->err) == 0)
        return 0;
    snprintf(q->arg, sizeof q->arg, "%s", key);
    return 1;
}

/* The job's parameters from the query, with input set to name; NULL with rs
 * filled (400 naming the argument). */
static json_t *sort_params(struct http_req *rq, struct http_resp *rs, const char *name)
{
    struct query_args q = {.params = json_object()};
    char err[512], field[64];
    json_t *p = NULL;
    if (http_query_each(rq, take_arg, &q)) {
        problem_field(rq, rs, 400, "invalid-request", q.arg, "query argument %s", q.err);
    } else {
        json_object_set_new(q.params, "input", json_string(name));
        p = trace_sort_params_check(q.params, err, sizeof err, field, sizeof field);
        if (!p)
            problem_field(rq, rs, 400, "invalid-request", field, "query argument %s", err);
    }
    json_decref(q.params);
    return p;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static const char *content_type(const char *out_format)
{
    return out_format && strcmp(out_format, "bin") == 0 ? "application/octet-stream" : "text/csv";
}

/* ---- answering with a sorted file ----------------------------------------------- */

/* The summary without its per-SM array, as one line of JSON (malloc'd). */
static char *summary_header(const json_t *result)
{
    json_t *totals = json_copy((json_t *)result);
    if (!totals)
        return NULL;
    json_object_del(totals, "sms");
    char *text = json_dumps(totals, JSON_COMPACT | JSON_REAL_PRECISION(12));
    json_decref(totals);
    return text;
}

/* Streams a succeeded sort job's output, its summary's totals in a header.
 * keep 0: the client waited for this sort, and its output goes once the
 * whole answer reached it. */
static void send_output(struct http_req *rq, struct http_resp *rs, const struct job_row *j,
                        int keep)
{
    char path[PATH_BYTES];
    struct stat st;
    trace_sort_job_output(rq->app->cfg.upload_dir, j->id, path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) < 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        if (e == ENOENT)
            problem(rq, rs, 404, "not-found",
                    "job %lld's sorted trace is not kept (the output of a sort whose client "
                    "waited for it goes once that answer arrived; any other is only removed "
                    "by hand)", (long long)j->id);
        else
            problem(rq, rs, 500, "internal", "the sorted trace cannot be read: %s", strerror(e));
        return;
    }
    if (!keep) /* gone once the answer reached the client; kept for GET .../output if not */
        rs->remove_when_sent = strdup(path);
    json_t *params = json_loads(j->params_json ? j->params_json : "", 0, NULL);
    json_t *result = json_loads(j->result_json ? j->result_json : "", 0, NULL);
    int captured = strcmp(j->kind, kind_trace_capture.name) == 0; /* a binary trace, no summary */
    http_file(rs, 200,
              captured ? "application/octet-stream"
                       : content_type(json_string_value(json_object_get(params, "out_format"))),
              fd, (unsigned long long)st.st_size);
    if (!captured)
        http_add_header(rs, SUMMARY_HEADER, result ? summary_header(result) : NULL);
    char *id = NULL;
    if (asprintf(&id, "%lld", (long long)j->id) < 0)
        id = NULL;
    http_add_header(rs, JOB_HEADER, id);
    json_decref(params);
    json_decref(result);
}

/* ---- answering a finished job ------------------------------------------------------ */

/* A failed sort as the client's problem. */
static void refuse(struct http_req *rq, struct http_resp *rs, const struct job_row *j)
{
    struct job_failure f;
    char err[128];
    const char *why = j->error ? j->error : "the sort failed without a reason";
    json_t *detail = j->error_detail ? json_loads(j->error_detail, 0, NULL) : NULL;
    if (job_failure_from_json(detail, &f, err, sizeof err) < 0)
        f = JOB_FAILURE_NONE;
    json_decref(detail);
    if (f.cls == JOB_ERROR_INPUT) {
        json_t *at = json_object();
        if (f.line >= 0)
            json_object_set_new(at, "line", json_integer(f.line));
        if (f.offset >= 0)
            json_object_set_new(at, "offset", json_integer(f.offset));
        problem_members(rq, rs, 400, "invalid-trace", at, "%s", why);
    } else if (f.cls == JOB_ERROR_PARAMS) {
        problem(rq, rs, 400, "invalid-request", "the parameters do not fit this trace: %s", why);
    } else if (f.cls == JOB_ERROR_STORAGE) {
        problem(rq, rs, 507, "insufficient-storage", "the server's disk is full: %s", why);
    } else {
        problem(rq, rs, 500, "internal", "sorting the trace failed: %s", why);
    }
}

/* Waits for the job and answers with its outcome; 202 if it takes too long. */
static void answer_when_done(struct http_req *rq, struct http_resp *rs, int64_t id)
{
    struct job_row j;
    char err[256];
    struct scheduler *sched = rq->app->sched;
    if (!scheduler_running(sched)) { /* starting or stopping: the job waits in the queue */
        respond_accepted(rq, rs, id);
        return;
    }
    int rc = scheduler_wait(sched, id, SYNC_WAIT_S * 1000, &j, err, sizeof err);
    if (rc < 0) {
        problem(rq, rs, 503, "unavailable", "the sort job %lld could not be read: %s",
                (long long)id, err);
        return;
    }
    if (rc == 1) /* still queued or running: the client fetches the output later */
        respond_accepted(rq, rs, id);
    else if (j.state == JOB_SUCCEEDED)
        send_output(rq, rs, &j, 0);
    else if (j.state == JOB_FAILED)
        refuse(rq, rs, &j);
    else
        problem(rq, rs, 409, "conflict", "the sort job %lld was cancelled", (long long)id);
    job_row_free(&j);
}

/* ---- the request --------------------------------------------------------------------- */

int upload_keep_body(struct http_req *rq, const char *prefix, const char *suffix, char *path,
                     size_t len)
{
    snprintf(path, len, "%s/%sXXXXXX%s", rq->app->cfg.upload_dir, prefix, suffix);
    int fd = mkostemps(path, (int)strlen(suffix), O_CLOEXEC);
    if (fd < 0)
        return -1;
    close(fd);
    if (rename(rq->body_file, path) < 0) {
        int e = errno;
        unlink(path);
        errno = e;
        return -1;
    }
    rq->body_file_taken = 1;
    return 0;
}

void h_traces_sort(struct http_req *rq, struct http_resp *rs)
{
    char path[PATH_BYTES], err[512];
    int64_t id = 0;
    if (!rq->body_file || rq->body_len == 0) {
        problem(rq, rs, 400, "invalid-request", "the body is empty: send the trace to sort");
        return;
    }
    json_t *params = sort_params(rq, rs, base_name(rq->body_file));
    if (!params)
        return;
    if (upload_keep_body(rq, "trace-", ".in", path, sizeof path) < 0) {
        problem(rq, rs, 500, "internal", "the trace could not be kept for the job: %s",
                strerror(errno));
    } else {
        json_object_set_new(params, "input", json_string(base_name(path)));
        if (job_submit(rq->app, &kind_trace_sort, NULL, params, 0, &id, err, sizeof err) < 0) {
            unlink(path);
            problem(rq, rs, 503, "unavailable", "the sort job could not be stored: %s", err);
        } else if ((long long)rq->body_len <= rq->app->cfg.trace_sync_limit) {
            answer_when_done(rq, rs, id);
        } else {
            respond_accepted(rq, rs, id);
        }
    }
    json_decref(params);
}

/* ---- a job's output ------------------------------------------------------------------ */

/* Whether job j has an output file to serve: a kind that writes one */
static int has_output_kind(const struct job_row *j)
{
    return strcmp(j->kind, kind_trace_sort.name) == 0 || strcmp(j->kind, kind_trace_capture.name) == 0;
}

json_t *job_output_link(const struct app *app, const struct job_row *j)
{
    char path[PATH_BYTES];
    struct stat st;
    if (!has_output_kind(j) || j->state != JOB_SUCCEEDED)
        return json_null();
    trace_sort_job_output(app->cfg.upload_dir, j->id, path, sizeof path);
    if (stat(path, &st) != 0)
        return json_null(); /* a sort whose client waited for it: gone once answered */
    char link[64];
    snprintf(link, sizeof link, "/api/v1/jobs/%lld/output", (long long)j->id);
    return json_string(link);
}

void h_job_output(struct http_req *rq, struct http_resp *rs)
{
    struct job_row j;
    if (job_from_path(rq, rs, &j) != 0)
        return;
    if (!has_output_kind(&j))
        problem(rq, rs, 404, "not-found",
                "job %lld is a %s job: only %s and %s jobs (POST /api/v1/traces/sort, "
                "/api/v1/traces/capture) have an output file",
                (long long)j.id, j.kind, kind_trace_sort.name, kind_trace_capture.name);
    else if (j.state != JOB_SUCCEEDED)
        problem(rq, rs, 404, "not-found", "job %lld is %s: %s", (long long)j.id,
                job_state_name(j.state),
                job_state_is_terminal(j.state) ? "only a succeeded job's output is kept"
                                               : "its output is served once it has succeeded");
    else
        send_output(rq, rs, &j, 1);
    job_row_free(&j);
}
