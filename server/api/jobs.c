/*
 * /api/v1/jobs and /api/v1/job-kinds.
 *
 * A submission is checked completely before anything is stored: body, keys,
 * kind, device, parameters, deadline. Only then is the job inserted, so a bad
 * request leaves no trace and a good one is durable before 202 is answered.
 * Internal kinds (their parameters name files) are refused as unknown-kind:
 * only the daemon creates their jobs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/app.h"
#include "server/api/handlers.h"
#include "server/api/job_json.h"
#include "server/jobs/registry.h"
#include "server/http/json_body.h"
#include "server/http/resp_cache.h"
#include "server/jobs/protocol.h"
#include "server/jobs/scheduler.h"
#include "util/text.h"

#define LIST_DEFAULT 50
#define LIST_MAX 500
#define TIMEOUT_MAX 86400

static const char *const submit_keys[] = {"kind", "probe", "device", "params", "timeout_s", NULL};

void h_job_kinds(struct http_req *rq, struct http_resp *rs)
{
    (void)rq;
    json_t *kinds = json_array();
    for (size_t i = 0, n = job_kind_count(); i < n; i++)
        json_array_append_new(kinds, job_kind_to_json(job_kind_at(i)));
    http_json(rs, 200, json_pack("{s:o}", "kinds", kinds));
}

static int check_keys(struct http_req *rq, struct http_resp *rs, json_t *doc)
{
    const char *key;
    json_t *v;
    json_object_foreach(doc, key, v)
    {
        int known = 0;
        for (const char *const *k = submit_keys; *k && !known; k++)
            known = strcmp(*k, key) == 0;
        if (!known) {
            problem_field(rq, rs, 400, "invalid-request", key,
                          "unknown field '%s' (expected kind, device, params, timeout_s)", key);
            return -1;
        }
    }
    return 0;
}

static const struct job_kind *find_kind(struct http_req *rq, struct http_resp *rs, json_t *doc)
{
    json_t *kind = json_object_get(doc, "kind"), *probe = json_object_get(doc, "probe");
    if (kind && probe && !json_equal(kind, probe)) {
        problem_field(rq, rs, 400, "invalid-request", "probe",
                      "'kind' and its synonym 'probe' disagree; give one");
        return NULL;
    }
    json_t *name = kind ? kind : probe;
    if (!json_is_string(name)) {
        problem_field(rq, rs, 400, "invalid-request", !kind && probe ? "probe" : "kind",
                      name ? "'kind' must be a string" : "'kind' is required");
        return NULL;
    }
    const struct job_kind *k = job_kind_find(json_string_value(name));
    if (k && k->internal) {
        problem_field(rq, rs, 422, "unknown-kind", kind ? "kind" : "probe",
                      "job kind '%s' is internal: its jobs are created by %s, not submitted "
                      "here", k->name, k->created_by ? k->created_by : "the daemon itself");
        return NULL;
    }
    if (!k) {
        char known[512] = "";
        size_t n = 0;
        for (size_t i = 0, c = job_kind_count(); i < c && n < sizeof known; i++)
            if (!job_kind_at(i)->internal)
                n += (size_t)snprintf(known + n, sizeof known - n, "%s%s", n ? ", " : "",
                                      job_kind_at(i)->name);
        problem_field(rq, rs, 422, "unknown-kind", kind ? "kind" : "probe",
                      "no job kind '%s' (known: %s)", json_string_value(name),
                      n ? known : "none in this build");
    }
    return k;
}

/* Fills uuid for a GPU kind; leaves it empty for a CPU kind. */
static int find_device(struct http_req *rq, struct http_resp *rs, const struct job_kind *k,
                       json_t *doc, char *uuid)
{
    json_t *dev = json_object_get(doc, "device");
    char why[512];
    uuid[0] = '\0';
    if (!k->needs_gpu) {
        if (dev && !json_is_null(dev)) {
            problem_field(rq, rs, 400, "invalid-request", "device",
                          "kind '%s' needs no GPU; omit 'device'", k->name);
            return -1;
        }
        return 0;
    }
    if (!json_is_string(dev) && !json_is_integer(dev)) {
        problem_field(rq, rs, 400, "invalid-request", "device",
                      "kind '%s' runs on a GPU: 'device' must be a GPU UUID or index", k->name);
        return -1;
    }
    if (app_resolve_device(rq->app, json_string_value(dev),
                           json_is_integer(dev) ? json_integer_value(dev) : -1, uuid, why,
                           sizeof why) < 0) {
        problem_field(rq, rs, 422, "unknown-device", "device", "%s", why);
        return -1;
    }
    return 0;
}

/* The deadline asked for, 0 if none (job_submit applies the default). */
static int find_timeout(struct http_req *rq, struct http_resp *rs, json_t *doc, int *timeout_s)
{
    json_t *t = json_object_get(doc, "timeout_s");
    if (t && (!json_is_integer(t) || json_integer_value(t) < 1 ||
              json_integer_value(t) > TIMEOUT_MAX)) {
        problem_field(rq, rs, 400, "invalid-request", "timeout_s",
                      "'timeout_s' must be an integer from 1 to %d", TIMEOUT_MAX);
        return -1;
    }
    *timeout_s = t ? (int)json_integer_value(t) : 0;
    return 0;
}

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
        return NULL;
    }
    return doc;
}

void respond_job(struct http_req *rq, struct http_resp *rs, int64_t id, int status)
{
    struct job_row j;
    char err[256];
    if (store_job_get(rq->app->db, id, &j, err, sizeof err) != 0) {
        problem(rq, rs, 500, "internal", "job %lld was stored but cannot be read back: %s",
                (long long)id, err);
        return;
    }
    http_json(rs, status, job_to_json(&j, 0));
    job_row_free(&j);
}

void respond_accepted(struct http_req *rq, struct http_resp *rs, int64_t id)
{
    snprintf(rs->location, sizeof rs->location, "/api/v1/jobs/%lld", (long long)id);
    respond_job(rq, rs, id, 202);
}

void submit_job(struct http_req *rq, struct http_resp *rs, const struct job_kind *k,
                const char *device, const json_t *params, int timeout_s)
{
    char err[512];
    int64_t id = 0;
    if (job_submit(rq->app, k, device, params, timeout_s, &id, err, sizeof err) < 0) {
        problem(rq, rs, 503, "unavailable", "the job could not be stored: %s", err);
        return;
    }
    respond_accepted(rq, rs, id);
}

void h_jobs_submit(struct http_req *rq, struct http_resp *rs)
{
    json_t *doc = parse_body(rq, rs), *params = NULL;
    const struct job_kind *k = NULL;
    char uuid[48], err[1280], field[128]; /* room for the latency catalog's names */
    int timeout_s;
    if (!doc || check_keys(rq, rs, doc) < 0 || !(k = find_kind(rq, rs, doc)))
        goto out;
    /* what the request says is checked before what this host has: a bad
     * parameter is named even where no GPU is attached */
    params = job_params_validate(k, json_object_get(doc, "params"), err, sizeof err, field,
                                 sizeof field);
    if (!params)
        problem_field(rq, rs, 400, "invalid-request", field, "%s", err);
    else if (find_timeout(rq, rs, doc, &timeout_s) == 0 && find_device(rq, rs, k, doc, uuid) == 0)
        submit_job(rq, rs, k, uuid[0] ? uuid : NULL, params, timeout_s);
out:
    json_decref(params);
    json_decref(doc);
}

/* Query arguments of a listing; -1 (with rs filled) if one is malformed. */
static int list_filter(struct http_req *rq, struct http_resp *rs, struct job_filter *f)
{
    static const char *const known[] = {"state", "device", "kind", "limit", "before", NULL};
    if (query_only(rq, rs, known) < 0)
        return -1;
    const char *state = http_query(rq, "state"), *limit = http_query(rq, "limit"),
               *before = http_query(rq, "before");
    long long v;
    *f = (struct job_filter){.state = -1, .limit = LIST_DEFAULT};
    f->device = http_query(rq, "device");
    f->kind = http_query(rq, "kind");
    if (state && (f->state = job_state_parse(state)) < 0) {
        problem_field(rq, rs, 400, "invalid-request", "state",
                      "state must be queued, running, succeeded, failed or cancelled, not '%s'",
                      state);
        return -1;
    }
    if (limit) {
        if (parse_ll(limit, 1, LIST_MAX, &v) < 0) {
            problem_field(rq, rs, 400, "invalid-request", "limit",
                          "limit must be an integer from 1 to %d, not '%s'", LIST_MAX, limit);
            return -1;
        }
        f->limit = (int)v;
    }
    if (before) {
        if (parse_ll(before, 1, INT64_MAX, &v) < 0) {
            problem_field(rq, rs, 400, "invalid-request", "before",
                          "before must be a positive job id, not '%s'", before);
            return -1;
        }
        f->before_id = v;
    }
    return 0;
}

/* Appends "key=value&" with the value percent-encoded. */
static size_t add_arg(char *buf, size_t len, size_t n, const char *key, const char *value)
{
    if (!value || n >= len)
        return n;
    n += (size_t)snprintf(buf + n, len - n, "%s=", key);
    for (const unsigned char *p = (const unsigned char *)value; *p && n + 4 < len; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '_' || *p == '.')
            buf[n++] = (char)*p;
        else
            n += (size_t)snprintf(buf + n, len - n, "%%%02X", *p);
    }
    return n + (size_t)snprintf(buf + n, len - n, "&");
}

static json_t *next_link(const struct job_filter *f, int64_t last_id)
{
    char buf[1024], num[32];
    size_t n = (size_t)snprintf(buf, sizeof buf, "/api/v1/jobs?");
    n = add_arg(buf, sizeof buf, n, "state", f->state >= 0 ? job_state_name(f->state) : NULL);
    n = add_arg(buf, sizeof buf, n, "device", f->device);
    n = add_arg(buf, sizeof buf, n, "kind", f->kind);
    snprintf(num, sizeof num, "%d", f->limit);
    n = add_arg(buf, sizeof buf, n, "limit", num);
    snprintf(num, sizeof num, "%lld", (long long)last_id);
    n = add_arg(buf, sizeof buf, n, "before", num);
    buf[n - 1] = '\0'; /* the trailing '&' */
    return json_string(buf);
}

/* The listing's identity for the response cache: every argument that
 * changes the answer, in a fixed form. */
static void list_key(const struct job_filter *f, char *buf, size_t len)
{
    snprintf(buf, len, "jobs state=%d limit=%d before=%lld device=%s kind=%s", f->state, f->limit,
             (long long)f->before_id, f->device ? f->device : "", f->kind ? f->kind : "");
}

void h_jobs_list(struct http_req *rq, struct http_resp *rs)
{
    struct job_filter f;
    struct job_row *rows = NULL;
    size_t n = 0;
    char err[256], key[700];
    if (list_filter(rq, rs, &f) < 0)
        return;
    list_key(&f, key, sizeof key);
    uint64_t gen = store_generation(rq->app->db); /* read before the data it tags */
    if (respond_cached(rs, rq->app->resp_cache, key, gen))
        return;
    /* one row more than the page: a next link only when there is a next page */
    struct job_filter page = f;
    page.limit = f.limit + 1;
    if (store_job_list(rq->app->db, &page, &rows, &n, err, sizeof err) < 0) {
        problem(rq, rs, 503, "unavailable", "the job list could not be read: %s", err);
        return;
    }
    size_t shown = n > (size_t)f.limit ? (size_t)f.limit : n;
    json_t *jobs = json_array();
    for (size_t i = 0; i < shown; i++)
        json_array_append_new(jobs, job_to_json(&rows[i], 0));
    json_t *next = n > shown ? next_link(&f, rows[shown - 1].id) : json_null();
    job_rows_free(rows, n);
    http_json(rs, 200, json_pack("{s:o, s:o}", "jobs", jobs, "next", next));
    keep_response(rs, rq->app->resp_cache, key, gen);
}

int job_from_path(struct http_req *rq, struct http_resp *rs, struct job_row *j)
{
    long long id;
    char err[256];
    if (parse_ll(rq->params[0], 1, INT64_MAX, &id) < 0) {
        problem_field(rq, rs, 400, "invalid-request", "id",
                      "a job id is a positive integer, not '%s'", rq->params[0]);
        return -1;
    }
    int rc = store_job_get(rq->app->db, id, j, err, sizeof err);
    if (rc == 1)
        problem(rq, rs, 404, "not-found", "no job %lld", id);
    else if (rc < 0)
        problem(rq, rs, 503, "unavailable", "job %lld could not be read: %s", id, err);
    return rc;
}

void h_job_get(struct http_req *rq, struct http_resp *rs)
{
    struct job_row j;
    struct job_event *ev = NULL;
    size_t nev = 0;
    char err[256];
    if (job_from_path(rq, rs, &j) != 0)
        return;
    int64_t id = j.id;
    json_t *o = job_to_json(&j, 1);
    json_object_set_new(o, "output", job_output_link(rq->app, &j));
    job_row_free(&j);
    if (store_job_events(rq->app->db, id, &ev, &nev, err, sizeof err) < 0) {
        json_decref(o);
        problem(rq, rs, 503, "unavailable", "events of job %lld could not be read: %s",
                (long long)id, err);
        return;
    }
    json_object_set_new(o, "events", job_events_to_json(ev, nev));
    job_events_free(ev, nev);
    http_json(rs, 200, o);
}

static void cancelled_queued(struct http_req *rq, const struct job_row *j)
{
    const struct job_kind *k = job_kind_find(j->kind);
    if (k && k->finished)
        k->finished(rq->app->cfg.upload_dir, j->id, j->params_json, 0);
}

void h_job_cancel(struct http_req *rq, struct http_resp *rs)
{
    struct job_row j;
    enum job_state st;
    char err[256];
    if (job_from_path(rq, rs, &j) != 0)
        return;
    int64_t id = j.id;
    int terminal = job_state_is_terminal(j.state);
    if (!terminal && store_job_cancel(rq->app->db, id, &st, err, sizeof err) < 0) {
        job_row_free(&j);
        problem(rq, rs, 503, "unavailable", "job %lld could not be cancelled: %s", (long long)id,
                err);
        return;
    }
    if (terminal || (st != JOB_RUNNING && st != JOB_CANCELLED)) {
        job_row_free(&j);
        problem(rq, rs, 409, "conflict", "job %lld has already ended", (long long)id);
        return;
    }
    /* the answer is read before the scheduler is told, so a running job is
     * always answered as running with its cancellation requested, however
     * fast its process then dies */
    respond_job(rq, rs, id, st == JOB_RUNNING ? 202 : 200);
    if (st == JOB_RUNNING)
        scheduler_cancel(rq->app->sched, id);
    else /* cancelled while queued: it never runs, so its files go now */
        cancelled_queued(rq, &j);
    job_row_free(&j);
}
