/*
 * The HTTP transport: libmicrohttpd with its internal thread pool and
 * epoll, connection limits and timeouts, a body cap, bearer-token checks for
 * writes, and dispatch through a route table to handlers.
 *
 * DESIGN
 * Handlers see a plain request and fill a plain response (message.h); they
 * never touch libmicrohttpd. Everything that can be
 * refused without reading the body (unknown route, wrong method, missing or
 * wrong token, an announced body over the cap, a wrong content type) is
 * refused on the first callback, so a rejected upload is never buffered.
 */
#ifndef GPUPROBE_SERVER_HTTP_HTTP_H
#define GPUPROBE_SERVER_HTTP_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "server/config.h"
#include "server/http/message.h"

struct auth;
struct guard_counts;
struct req_stats;
struct route;

/* What the transport serves; every pointer must outlive the server. */
struct http_setup {
    const struct config *cfg;      /* listen address, limits, timeouts, upload_dir */
    const struct auth *auth;       /* tokens checked on write routes */
    const struct route *routes;    /* the route table (server/api/routes.c) */
    size_t nroutes;
    struct app *app;               /* handed to every handler as http_req.app */
    struct req_stats *stats;       /* counts every answered request (req_stats.h), made
                                      for this route table */
};

/* Binds cfg->listen and listen_unix (their sockets listening, the TLS pair
 * read and tried, the guard made) and serves nothing yet: a daemon binds
 * before it opens its database, so a port or socket path in use, a missing
 * TLS file or a pair that does not match fails before anything is made.
 * Returns NULL with the reason in err. *bound_port receives the real port
 * (for port 0). A server that is never started is released by http_stop. */
struct http_server *http_bind(const struct config *cfg, int *bound_port, char *err, size_t errlen);
/* Serves the bound address with setup (setup->cfg must be the cfg bound),
 * and listen_unix when configured. 0, or -1 with the reason in err and s
 * released. */
int http_start(struct http_server *s, const struct http_setup *setup, char *err, size_t errlen);
/* Stops accepting at once; in-flight requests finish. */
void http_quiesce(struct http_server *s);
/* Waits until no request is in flight (each has been answered, its response
 * sent or its connection gone), 0, or until deadline_ms (monotonic), 1. For
 * an orderly stop, after http_quiesce. NULL is ok (0). */
int http_wait_idle(struct http_server *s, int64_t deadline_ms);
void http_stop(struct http_server *s);
/* The connection guard's counts so far (conn_guard.h), for /metrics. */
void http_guard_counts(struct http_server *s, struct guard_counts *out);

#endif
