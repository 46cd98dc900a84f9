/*
 * HTTP request counters (see req_stats.h).
 */
#include "server/http/req_stats.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdlib.h>

static const double bounds[] = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
    0.25,   0.5,     1,      2.5,   5,      10,    30,   60,    300,  600,
};
#define NBOUNDS REQ_DURATION_NBOUNDS
_Static_assert(sizeof bounds / sizeof bounds[0] == NBOUNDS, "REQ_DURATION_NBOUNDS counts them");
const double *const req_duration_bounds = bounds;

#define NSTATUS (REQ_STATUS_MAX - REQ_STATUS_MIN + 1)

struct route_stats {
    _Atomic uint64_t by_status[NSTATUS];
    _Atomic uint64_t buckets[NBOUNDS + 1];
    _Atomic uint64_t sum_ns;
};

struct req_stats {
    size_t nroutes;
    struct route_stats *routes;  /* nroutes + 1: the last for requests no route took */
};

struct req_stats *req_stats_new(size_t nroutes)
{
    struct req_stats *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    /* calloc's zero bytes are zero-valued atomics on every target we build for */
    s->routes = calloc(nroutes + 1, sizeof *s->routes);
    if (!s->routes) {
        free(s);
        return NULL;
    }
    s->nroutes = nroutes;
    return s;
}

void req_stats_free(struct req_stats *s)
{
    if (!s)
        return;
    free(s->routes);
    free(s);
}

static size_t bucket_of(double seconds)
{
    size_t i = 0;
    while (i < NBOUNDS && seconds > bounds[i])
        i++;
    return i;
}

void req_stats_observe(struct req_stats *s, size_t route, int status, double seconds)
{
    assert(s && route <= s->nroutes);
    if (status < REQ_STATUS_MIN || status > REQ_STATUS_MAX)
        return;
    struct route_stats *r = &s->routes[route];
    if (seconds < 0)
        seconds = 0; /* a monotonic clock does not go back; be safe with rounding */
    atomic_fetch_add_explicit(&r->by_status[status - REQ_STATUS_MIN], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&r->buckets[bucket_of(seconds)], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&r->sum_ns, (uint64_t)(seconds * 1e9 + 0.5), memory_order_relaxed);
}

size_t req_stats_routes(const struct req_stats *s)
{
    return s->nroutes;
}

uint64_t req_stats_requests(const struct req_stats *s, size_t route, int status)
{
    assert(route <= s->nroutes && status >= REQ_STATUS_MIN && status <= REQ_STATUS_MAX);
    return atomic_load_explicit(&s->routes[route].by_status[status - REQ_STATUS_MIN],
                                memory_order_relaxed);
}

uint64_t req_stats_durations(const struct req_stats *s, size_t route, uint64_t *counts,
                             double *sum_s)
{
    assert(route <= s->nroutes);
    const struct route_stats *r = &s->routes[route];
    uint64_t n = 0;
    for (size_t i = 0; i <= NBOUNDS; i++) {
        counts[i] = atomic_load_explicit(&r->buckets[i], memory_order_relaxed);
        n += counts[i];
    }
    *sum_s = (double)atomic_load_explicit(&r->sum_ns, memory_order_relaxed) / 1e9;
    return n;
}
