/*
 * GET /api/v1/fleet and /api/v1/fleet/distribution: the GPUs this store
 * knows compared with their peers of the same model (fleet/index.h).
 *
 * DESIGN
 * The index is brought up to the store before each answer (cheap: only
 * the devices a result touched since are read again); the answer itself is
 * computed by fleet/ under its own lock. A fleet view is kept (encoded,
 * app->fleet_cache) under the query and the index's version: dashboards
 * poll it, and at 10,000 GPUs it is 1.4 MB that takes ~80 ms to compute,
 * while the fleet changes only when a result arrives. The outlier rule's parameters may
 * be given in the query, checked like every argument: an unknown or
 * repeated argument or a value out of range is 400 naming it.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "fleet/index.h"
#include "server/api/handlers.h"
#include "server/app.h"
#include "server/http/problem.h"
#include "util/text.h"

/* A real query argument within [lo, hi]; 1 when absent (keeps *out). */
static int real_arg(struct http_req *rq, struct http_resp *rs, const char *name, double lo,
                    double hi, double *out)
{
    const char *text = http_query(rq, name);
    if (!text)
        return 1;
    double v;
    if (parse_real(text, lo, hi, &v) < 0) {
        problem_field(rq, rs, 400, "invalid-request", name, "%s must be a number from %g to %g",
                      name, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

/* A whole-number query argument within [lo, hi]; 1 when absent (keeps *out). */
static int count_arg(struct http_req *rq, struct http_resp *rs, const char *name, long long lo,
                     long long hi, size_t *out)
{
    const char *text = http_query(rq, name);
    if (!text)
        return 1;
    long long v;
    if (parse_ll(text, lo, hi, &v) < 0) {
        problem_field(rq, rs, 400, "invalid-request", name, "%s must be a whole number from %lld to %lld",
                      name, lo, hi);
        return -1;
    }
    *out = (size_t)v;
    return 0;
}

/* The rule with the query's overrides; -1 with the 400 in rs. */
static int rule_from_query(struct http_req *rq, struct http_resp *rs, struct fleet_rule *r)
{
    if (real_arg(rq, rs, "k", 0.5, 100, &r->k) < 0 ||
        real_arg(rq, rs, "min_relative", 0, 10, &r->min_relative) < 0 ||
        count_arg(rq, rs, "min_devices", 2, 1000000, &r->min_devices) < 0)
        return -1;
    return 0;
}

/* The index, current, and its version into *version; -1 with the 503 in rs. */
static int synced(struct http_req *rq, struct http_resp *rs, uint64_t *version)
{
    char err[512];
    if (fleet_index_sync(rq->app->fleet, rq->app->db, version, err, sizeof err) == 0)
        return 0;
    problem(rq, rs, 503, "unavailable", "the fleet figures could not be read: %s", err);
    return -1;
}

void h_fleet(struct http_req *rq, struct http_resp *rs)
{
    static const char *const known[] = {"model", "host", "k", "min_relative", "min_devices",
                                        NULL};
    struct fleet_query q = {http_query(rq, "model"), http_query(rq, "host"), FLEET_RULE_DEFAULT};
    uint64_t version;
    char key[1200];
    if (query_only(rq, rs, known) < 0 || rule_from_query(rq, rs, &q.rule) < 0 ||
        synced(rq, rs, &version) < 0)
        return;
    /* the view of an unchanged fleet is the same answer: kept until a device changes */
    snprintf(key, sizeof key, "fleet\x1f%s\x1f%s\x1f%a\x1f%a\x1f%zu", q.model ? q.model : "",
             q.host ? q.host : "", q.rule.k, q.rule.min_relative, q.rule.min_devices);
    if (respond_cached(rs, rq->app->fleet_cache, key, version))
        return;
    size_t len;
    char *view = fleet_index_view(rq->app->fleet, &q, &len);
    if (!view) {
        problem(rq, rs, 500, "internal", "the fleet view could not be built: out of memory");
        return;
    }
    respond_json_text(rs, view, len);
    keep_response(rs, rq->app->fleet_cache, key, version);
}

void h_fleet_distribution(struct http_req *rq, struct http_resp *rs)
{
    static const char *const known[] = {"model", "metric", "k", "min_relative", "min_devices",
                                        NULL};
    struct fleet_rule rule = FLEET_RULE_DEFAULT;
    const char *model = http_query(rq, "model"), *metric = http_query(rq, "metric");
    if (query_only(rq, rs, known) < 0 || rule_from_query(rq, rs, &rule) < 0)
        return;
    if (!model || !*model || !metric || !*metric) {
        const char *missing = !model || !*model ? "model" : "metric";
        problem_field(rq, rs, 400, "invalid-request", missing, "%s is required", missing);
        return;
    }
    if (synced(rq, rs, NULL) < 0)
        return;
    char err[512];
    int unknown;
    json_t *d = fleet_index_distribution(rq->app->fleet, model, metric, &rule, &unknown, err,
                                         sizeof err);
    if (d)
        http_json(rs, 200, d);
    else if (unknown)
        problem(rq, rs, 404, "not-found", "%s", err);
    else
        problem(rq, rs, 500, "internal", "the distribution could not be built: %s", err);
}
