/*
 * The HTTP layer: libmicrohttpd with its internal thread pool and epoll,
 * connection limits and timeouts, a body cap, bearer-token checks for writes,
 * and dispatch through the route table to handlers.
 *
 * DESIGN
 * Handlers see a plain request (method, path, captured path segments, query
 * accessor, complete body) and fill a plain response (status, content type,
 * body, a few headers); they never touch libmicrohttpd. Everything that can be
 * refused without reading the body (unknown route, wrong method, missing or
 * wrong token, an announced body over the cap, a wrong content type) is
 * refused on the first callback, so a rejected upload is never buffered.
 */
#ifndef GPUPROBE_SERVER_HTTP_HTTP_H
#define GPUPROBE_SERVER_HTTP_HTTP_H

#include <jansson.h>
#include <stddef.h>

#include "server/config.h"

struct app;
struct auth;
struct route;
struct MHD_Connection;

#define HTTP_MAX_PARAMS 4

struct http_req {
    struct app *app;
    struct MHD_Connection *conn;
    const char *method;
    const char *path;
    char params[HTTP_MAX_PARAMS][128];  /* captured {name} segments, in order */
    const char *body;                   /* NUL-terminated; NULL when empty or spooled */
    size_t body_len;                    /* bytes received, in memory or in body_file */
    const char *body_file;              /* spool routes: the file holding the body */
    int body_file_taken;                /* set by a handler that moved body_file away */
};

struct http_resp {
    int status;
    const char *content_type;
    char *body;
    size_t len;
    int body_static;                     /* body is not ours to free */
    char location[256];
    char allow[64];
    int www_authenticate;
    int has_fd;                          /* body streamed from fd (closed when sent) */
    int fd;
    unsigned long long fd_len;
    const char *extra_header;            /* one more header, e.g. a summary */
    char *extra_value;                   /* malloc'd; freed with the response */
};

/* A query-string argument, or NULL. */
const char *http_query(const struct http_req *rq, const char *key);
/* Calls fn for each query-string argument in order (value NULL for a bare
 * "?key"); stops at, and returns, fn's first non-zero value; else 0. */
int http_query_each(const struct http_req *rq,
                    int (*fn)(void *ctx, const char *key, const char *value), void *ctx);
/* A request header, or NULL. */
const char *http_header(const struct http_req *rq, const char *name);

/* Sets a JSON body (takes the reference to j). */
void http_json(struct http_resp *rs, int status, json_t *j);
/* Sets a body that outlives the response (no copy). */
void http_static(struct http_resp *rs, int status, const char *ctype, const void *data, size_t len);
/* Streams len bytes of an open file as the body; the fd is closed once sent
 * (an unlinked temporary file then disappears). */
void http_file(struct http_resp *rs, int status, const char *ctype, int fd, unsigned long long len);
/* Sets a body copied from data. */
void http_copy(struct http_resp *rs, int status, const char *ctype, const void *data, size_t len);

struct http_server;

/* What the transport serves; every pointer must outlive the server. */
struct http_setup {
    const struct config *cfg;      /* listen address, limits, timeouts, upload_dir */
    const struct auth *auth;       /* tokens checked on write routes */
    const struct route *routes;    /* the route table (server/api/routes.c) */
    size_t nroutes;
    struct app *app;               /* handed to every handler as http_req.app */
};

/* Starts serving on setup->cfg->listen with its limits. Returns NULL with
 * the reason in err. *bound_port receives the real port (for port 0). */
struct http_server *http_start(const struct http_setup *setup, int *bound_port, char *err,
                               size_t errlen);
/* Stops accepting at once; in-flight requests finish. */
void http_quiesce(struct http_server *s);
void http_stop(struct http_server *s);

#endif
