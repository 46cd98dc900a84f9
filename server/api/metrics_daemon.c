/*
 * The daemon's own families on /metrics (see metrics.h): jobs, worker
 * failures, HTTP requests and connections, the store's size and the build.
 *
 * Every series whose labels are known in advance (each job kind in each
 * state, each kind with each failure reason) is written from the start,
 * zeros included, so a query or an alert sees 0, not nothing, before the
 * first job of a kind. HTTP series appear with the first request of a route
 * and status: the route table times every status code would be hundreds of
 * series that never move.
 */
#include "server/api/metrics.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "server/http/conn_guard.h"
#include "server/http/http.h"
#include "server/http/req_stats.h"
#include "server/http/route.h"
#include "server/jobs/registry.h"
#include "server/jobs/worker_failures.h"
#include "util/errf.h"
#include "util/version.h"

/* ---- jobs ----------------------------------------------------------------- */

struct kind_count {
    char *kind;
    enum job_state state;
    int64_t n;
};

struct kind_counts {
    struct kind_count *v;
    size_t n, cap;
};

static int take_count(void *ctx, const char *kind, enum job_state st, int64_t n)
{
    struct kind_counts *c = ctx;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        struct kind_count *v = realloc(c->v, cap * sizeof *v);
        if (!v)
            return 1;
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n] = (struct kind_count){strdup(kind ? kind : ""), st, n};
    return c->v[c->n++].kind ? 0 : 1;
}

static int64_t count_of(const struct kind_counts *c, const char *kind, enum job_state st)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->v[i].state == st && strcmp(c->v[i].kind, kind) == 0)
            return c->v[i].n;
    return 0;
}

static void job_sample(struct prom_page *p, const char *kind, enum job_state st, int64_t n)
{
    struct prom_label l[] = {{"kind", kind}, {"state", job_state_name(st)}};
    prom_sample(p, l, 2, (double)n);
}

int metrics_write_jobs(store *db, struct prom_page *p, char *err, size_t errlen)
{
    struct kind_counts c = {0};
    int rc = store_job_counts_by_kind(db, take_count, &c, err, errlen);
    if (rc > 0)
        rc = errf(err, errlen, "counting jobs: out of memory");
    if (rc == 0) {
        int64_t queued = 0;
        prom_family(p, "gpuprobe_jobs", "gauge",
                    "Jobs the store holds, by kind and state (imported results are "
                    "succeeded jobs too)");
        for (size_t k = 0; k < job_kind_count(); k++)
            for (int st = 0; st < JOB_STATE_COUNT; st++)
                job_sample(p, job_kind_at(k)->name, (enum job_state)st,
                           count_of(&c, job_kind_at(k)->name, (enum job_state)st));
        for (size_t i = 0; i < c.n; i++) {
            if (!job_kind_find(c.v[i].kind)) /* a kind this gpuprobe does not have */
                job_sample(p, c.v[i].kind, c.v[i].state, c.v[i].n);
            if (c.v[i].state == JOB_QUEUED)
                queued += c.v[i].n;
        }
        prom_family(p, "gpuprobe_job_queue_length", "gauge", "Jobs waiting to start");
        prom_sample(p, NULL, 0, (double)queued);
    }
    for (size_t i = 0; i < c.n; i++)
        free(c.v[i].kind);
    free(c.v);
    return rc;
}

/* ---- worker failures ------------------------------------------------------ */

void metrics_write_worker_failures(struct prom_page *p)
{
    prom_family(p, "gpuprobe_worker_failures_total", "counter",
                "Jobs failed because their worker crashed, overran its deadline, exited "
                "non-zero or sent an invalid result document, by kind and reason");
    for (size_t k = 0; k < job_kind_count(); k++)
        for (int why = 0; why < WORKER_FAILURE_COUNT; why++) {
            struct prom_label l[] = {
                {"kind", job_kind_at(k)->name},
                {"reason", worker_failure_name((enum worker_failure)why)},
            };
            prom_sample(p, l, 2, (double)worker_failures(k, (enum worker_failure)why));
        }
}

/* ---- HTTP ----------------------------------------------------------------- */

/* The labels of route r: a request no route took has none. */
static void route_labels(const struct route *routes, size_t nroutes, size_t r,
                         struct prom_label l[2])
{
    l[0] = (struct prom_label){"method", r < nroutes ? routes[r].method : ""};
    l[1] = (struct prom_label){"route", r < nroutes ? routes[r].pattern : ""};
}

void metrics_write_http(const struct req_stats *s, const struct route *routes,
                        struct prom_page *p)
{
    size_t nroutes = req_stats_routes(s);
    prom_family(p, "gpuprobe_http_requests_total", "counter",
                "HTTP requests answered, by route (the route table's pattern; \"\" for a "
                "request no route took) and status code");
    for (size_t r = 0; r <= nroutes; r++)
        for (int status = REQ_STATUS_MIN; status <= REQ_STATUS_MAX; status++) {
            uint64_t n = req_stats_requests(s, r, status);
            if (!n)
                continue;
            char code[12]; /* room for any int: the compiler cannot see status <= 599 */
            snprintf(code, sizeof code, "%d", status);
            struct prom_label l[3];
            route_labels(routes, nroutes, r, l);
            l[2] = (struct prom_label){"code", code};
            prom_sample(p, l, 3, (double)n);
        }
    prom_family(p, "gpuprobe_http_request_duration_seconds", "histogram",
                "Time from a request's headers to its answer being queued, by route");
    uint64_t counts[REQ_DURATION_NBOUNDS + 1];
    for (size_t r = 0; r <= nroutes; r++) {
        struct prom_histogram h = {req_duration_bounds, REQ_DURATION_NBOUNDS, counts, 0};
        if (!req_stats_durations(s, r, counts, &h.sum))
            continue;
        struct prom_label l[2];
        route_labels(routes, nroutes, r, l);
        prom_histogram(p, l, 2, &h);
    }
}

/* ---- connections ------------------------------------------------------------ */

void metrics_write_connections(struct http_server *http, struct prom_page *p)
{
    if (!http)
        return;
    struct guard_counts c;
    http_guard_counts(http, &c);
    prom_family(p, "gpuprobe_http_connections", "gauge",
                "Connections open now: admitted, or over a limit (being answered 503)");
    prom_sample(p, (struct prom_label[]){{"state", "admitted"}}, 1, (double)c.admitted);
    prom_sample(p, (struct prom_label[]){{"state", "over_limit"}}, 1, (double)c.over);
    prom_family(p, "gpuprobe_http_connections_refused_total", "counter",
                "Connections over max_connections or max_connections_per_ip, answered 503");
    prom_sample(p, NULL, 0, (double)c.refused);
    prom_family(p, "gpuprobe_http_connections_evicted_total", "counter",
                "Admitted connections still without their headers whose slot a new one took");
    prom_sample(p, NULL, 0, (double)c.evicted);
    prom_family(p, "gpuprobe_http_connections_expired_total", "counter",
                "Connections ended because a request's headers or body missed its deadline");
    prom_sample(p, NULL, 0, (double)c.expired);
}

/* ---- the store and the build ---------------------------------------------- */

void metrics_write_build_and_store(const char *db_path, struct prom_page *p)
{
    struct prom_label build[] = {{"version", GPUPROBE_VERSION},
                                 {"revision", gpuprobe_revision()}};
    prom_family(p, "gpuprobe_build_info", "gauge",
                "This gpuprobe: its version and the commit it was built from");
    prom_sample(p, build, 2, 1);

    /* the database and its write-ahead log; the -shm index holds no data */
    char wal[1100];
    struct stat st;
    snprintf(wal, sizeof wal, "%s-wal", db_path);
    if (stat(db_path, &st) != 0)
        return; /* no size to tell: the family is left out */
    double bytes = (double)st.st_size;
    if (stat(wal, &st) == 0)
        bytes += (double)st.st_size;
    prom_family(p, "gpuprobe_store_size_bytes", "gauge",
                "Size of the store: the database file and its write-ahead log");
    prom_sample(p, NULL, 0, bytes);
}
