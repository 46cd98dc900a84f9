/*
 * POST /api/v1/traces/sort and GET /api/v1/jobs/{id}/output: trace sorting
 * over HTTP (docs/api.md, "Traces").
 *
 * DESIGN
 * The route is a spool route: the body is already in a file of upload_dir
 * (rq->body_file) when the handler runs. The query arguments become the
 * trace-sort kind's parameters and are checked before anything runs (400
 * naming the argument). Then one implementation, two paths:
 *   - a body up to trace_sync_limit is sorted at once by a worker process
 *     (child_run, deadline SYNC_TIMEOUT_S) reading that file and writing
 *     FILE.out beside it; the output is opened, unlinked and streamed back,
 *     with the summary's totals in the Gpuprobe-Summary header;
 *   - a larger body is renamed to upload_dir/trace-XXXXXX.in (the request no
 *     longer owns it) and queued as a trace-sort job; the job writes
 *     trace-<id>.out, served by GET /api/v1/jobs/{id}/output once it has
 *     succeeded. The kind's finished hook removes the input when the job
 *     ends and the output when it did not succeed.
 * Only names this file generated ever reach the kind's file parameters: the
 * query cannot name files. A bad trace is 400 invalid-trace with the
 * worker's "line" and "offset"; nothing the sync path wrote is left behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/app.h"
#include "server/handlers.h"
#include "server/kinds_trace.h"
#include "server/scheduler.h"
#include "server/spawn.h"
#include "server/text.h"

#define SYNC_TIMEOUT_S 600
#define SUMMARY_HEADER "Gpuprobe-Summary"
#define PATH_BYTES 1400

/* ---- parameters -------------------------------------------------------------- */

struct query_args {
    json_t *params;
    char err[512];
    char arg[64];
};

static int take_arg(void *ctx, const char *key, const char *value)
{
    struct query_args *q = ctx;
    if (trace_sort_param_text(q->params, key, value ? value : "", q->err, sizeof q->err) == 0)
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

/* Streams the file at path (opened here; it may be unlinked afterwards). */
static void stream_file(struct http_req *rq, struct http_resp *rs, const char *path,
                        const char *out_format, const json_t *result)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) < 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        problem(rq, rs, e == ENOENT ? 404 : 500, e == ENOENT ? "not-found" : "internal",
                "the sorted trace cannot be read: %s", strerror(e));
        return;
    }
    http_file(rs, 200, content_type(out_format), fd, (unsigned long long)st.st_size);
    rs->extra_header = SUMMARY_HEADER;
    rs->extra_value = result ? summary_header(result) : NULL;
}

/* ---- the synchronous path --------------------------------------------------------- */

/* A failed worker document as the client's problem. */
static void refuse(struct http_req *rq, struct http_resp *rs, const json_t *doc)
{
    const char *why = json_string_value(json_object_get(doc, "error"));
    const char *cls = json_string_value(json_object_get(doc, "error_class"));
    json_t *line = json_object_get(doc, "error_line"), *offset = json_object_get(doc, "error_offset");
    if (!why)
        why = "the sort failed without a reason";
    if (cls && strcmp(cls, "input") == 0) {
        json_t *at = json_object();
        if (json_is_integer(line))
            json_object_set(at, "line", line);
        if (json_is_integer(offset))
            json_object_set(at, "offset", offset);
        problem_members(rq, rs, 400, "invalid-trace", at, "%s", why);
    } else if (cls && strcmp(cls, "params") == 0) {
        problem(rq, rs, 400, "invalid-request", "the parameters do not fit this trace: %s", why);
    } else {
        problem(rq, rs, 500, "internal", "sorting the trace failed: %s", why);
    }
}

/* Turns the worker's document into the answer. */
static void answer(struct http_req *rq, struct http_resp *rs, const char *out, const char *path,
                   const char *out_format)
{
    json_t *doc = json_loads(out, JSON_REJECT_DUPLICATES, NULL);
    json_t *ok = json_object_get(doc, "ok"), *result = json_object_get(doc, "result");
    if (!json_is_boolean(ok) || (json_is_true(ok) && !json_is_object(result)))
        problem(rq, rs, 500, "internal", "the sorting worker sent an invalid document");
    else if (json_is_false(ok))
        refuse(rq, rs, doc);
    else
        stream_file(rq, rs, path, out_format, result);
    json_decref(doc);
}

static void sort_now(struct http_req *rq, struct http_resp *rs, json_t *params)
{
    const char *dir = rq->app->cfg.upload_dir;
    char outname[300], path[PATH_BYTES], err[1024], *out = NULL;
    snprintf(outname, sizeof outname, "%s.out", json_string_value(json_object_get(params, "input")));
    snprintf(path, sizeof path, "%s/%s", dir, outname);
    json_object_set_new(params, "output", json_string(outname));
    char *text = json_dumps(params, JSON_COMPACT | JSON_SORT_KEYS);
    char *argv[] = {rq->app->self_exe, "worker", "--kind", (char *)kind_trace_sort.name,
                    "--upload-dir", (char *)dir, "--params", text, NULL};
    snprintf(err, sizeof err, "out of memory");
    if (text && child_run(rq->app->self_exe, argv, SYNC_TIMEOUT_S, SCHED_RESULT_LIMIT, &out, err,
                          sizeof err) == 0)
        answer(rq, rs, out, path,
               json_string_value(json_object_get(params, "out_format")));
    else
        problem(rq, rs, 500, "internal", "sorting the trace failed: %s", err);
    /* the input, any partial output, and the output (streamed from its open
     * descriptor if it was answered) all go now */
    if (kind_trace_sort.finished)
        kind_trace_sort.finished(dir, 0, text, 0);
    free(out);
    free(text);
}

/* ---- the job path ------------------------------------------------------------------ */

/* Moves the body to upload_dir/trace-XXXXXX.in; its name into name. */
static int keep_body(struct http_req *rq, char *path, size_t len)
{
    snprintf(path, len, "%s/trace-XXXXXX.in", rq->app->cfg.upload_dir);
    int fd = mkostemps(path, 3, O_CLOEXEC);
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

static void sort_later(struct http_req *rq, struct http_resp *rs, json_t *params)
{
    char path[PATH_BYTES], err[512];
    const struct config *cfg = &rq->app->cfg;
    if (keep_body(rq, path, sizeof path) < 0) {
        problem(rq, rs, 500, "internal", "the trace could not be kept for the job: %s",
                strerror(errno));
        return;
    }
    json_object_set_new(params, "input", json_string(base_name(path)));
    char *text = json_dumps(params, JSON_COMPACT | JSON_SORT_KEYS);
    int timeout_s = cfg->job_timeout_s > 0 ? cfg->job_timeout_s : kind_trace_sort.default_timeout_s;
    int64_t id = 0;
    snprintf(err, sizeof err, "out of memory");
    if (!text || store_job_insert(rq->app->db, kind_trace_sort.name, NULL, text, timeout_s,
                                  cfg->max_attempts, &id, err, sizeof err) < 0) {
        unlink(path);
        problem(rq, rs, 503, "unavailable", "the sort job could not be stored: %s", err);
    } else {
        scheduler_wake(rq->app->sched);
        snprintf(rs->location, sizeof rs->location, "/api/v1/jobs/%lld", (long long)id);
        respond_job(rq, rs, id, 202);
    }
    free(text);
}

void h_traces_sort(struct http_req *rq, struct http_resp *rs)
{
    if (!rq->body_file || rq->body_len == 0) {
        problem(rq, rs, 400, "invalid-request", "the body is empty: send the trace to sort");
        return;
    }
    json_t *params = sort_params(rq, rs, base_name(rq->body_file));
    if (!params)
        return;
    if ((long long)rq->body_len <= rq->app->cfg.trace_sync_limit)
        sort_now(rq, rs, params);
    else
        sort_later(rq, rs, params);
    json_decref(params);
}

/* ---- a job's output ------------------------------------------------------------------ */

static void serve_output(struct http_req *rq, struct http_resp *rs, const struct job_row *j)
{
    char path[PATH_BYTES];
    json_t *params = json_loads(j->params_json ? j->params_json : "", 0, NULL);
    json_t *result = json_loads(j->result_json ? j->result_json : "", 0, NULL);
    trace_sort_job_output(rq->app->cfg.upload_dir, j->id, path, sizeof path);
    stream_file(rq, rs, path, json_string_value(json_object_get(params, "out_format")), result);
    json_decref(params);
    json_decref(result);
}

void h_job_output(struct http_req *rq, struct http_resp *rs)
{
    long long id;
    struct job_row j;
    char err[256];
    if (parse_ll(rq->params[0], 1, INT64_MAX, &id) < 0) {
        problem_field(rq, rs, 400, "invalid-request", "id",
                      "a job id is a positive integer, not '%s'", rq->params[0]);
        return;
    }
    int rc = store_job_get(rq->app->db, id, &j, err, sizeof err);
    if (rc != 0) {
        if (rc == 1)
            problem(rq, rs, 404, "not-found", "no job %lld", id);
        else
            problem(rq, rs, 503, "unavailable", "job %lld could not be read: %s", id, err);
        return;
    }
    if (strcmp(j.kind, kind_trace_sort.name) != 0)
        problem(rq, rs, 404, "not-found",
                "job %lld is a %s job: only %s jobs (POST /api/v1/traces/sort) have an output file",
                id, j.kind, kind_trace_sort.name);
    else if (j.state != JOB_SUCCEEDED)
        problem(rq, rs, 404, "not-found", "job %lld is %s: %s", id, job_state_name(j.state),
                job_state_is_terminal(j.state) ? "only a succeeded job's output is kept"
                                               : "its output is served once it has succeeded");
    else
        serve_output(rq, rs, &j);
    job_row_free(&j);
}
