/*
 * What the daemon counts of the HTTP requests it answers, for /metrics:
 * requests by route and status code, and how long they took, per route.
 *
 * DESIGN
 * A request is counted under its route, the route table's entry (method and
 * pattern), never its raw path, so the number of series is bounded by the
 * table, whatever clients ask for; requests that no route took (404 for an
 * unknown path, 405 for a method the path does not take) share one slot.
 * The transport counts each request once, when it has answered it.
 * Every counter is a C11 atomic added to with relaxed ordering from the
 * HTTP threads: each is a count on its own, and a scrape needs no snapshot
 * across them, only counts that never go back. A histogram's count is the
 * sum of its buckets as read, so its +Inf bucket and its _count agree; its
 * sum is kept in whole nanoseconds, since an atomic add of a double is not
 * lock-free. Counts start at zero with the process, as Prometheus counters do.
 */
#ifndef GPUPROBE_SERVER_HTTP_REQ_STATS_H
#define GPUPROBE_SERVER_HTTP_REQ_STATS_H

#include <stddef.h>
#include <stdint.h>

/* The status codes counted: every code HTTP defines. */
#define REQ_STATUS_MIN 100
#define REQ_STATUS_MAX 599

/* The upper bounds of the duration buckets, in seconds: from a tenth of a
 * millisecond (a cached listing) to 600 s (a trace sorted while the client
 * waits). */
#define REQ_DURATION_NBOUNDS 20
extern const double *const req_duration_bounds;

struct req_stats;

/* Counters for a route table of nroutes entries; NULL when out of memory. */
struct req_stats *req_stats_new(size_t nroutes);
void req_stats_free(struct req_stats *s);

/* Counts one answered request: route is its index in the table, or nroutes
 * for a request no route took. A status outside [REQ_STATUS_MIN,
 * REQ_STATUS_MAX], which libmicrohttpd refuses to send, is not counted:
 * a handler's bug must not end the daemon here. Contract: route <= nroutes. */
void req_stats_observe(struct req_stats *s, size_t route, int status, double seconds);

/* The table's size the counters were made for. */
size_t req_stats_routes(const struct req_stats *s);
/* Requests of route answered with status so far. */
uint64_t req_stats_requests(const struct req_stats *s, size_t route, int status);
/* Route's durations: counts[0..REQ_DURATION_NBOUNDS] per bucket (not
 * cumulative; the last counts those above the last bound), their sum in
 * seconds; the number of requests is returned. */
uint64_t req_stats_durations(const struct req_stats *s, size_t route, uint64_t *counts,
                             double *sum_s);

#endif
