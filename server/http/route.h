/*
 * Routes: what the transport needs to know of an endpoint (method, path
 * pattern, handler, whether it writes, how its body arrives) and how a
 * request finds its route. The table itself is the API's (server/api/routes.c),
 * handed to http_start.
 */
#ifndef GPUPROBE_SERVER_HTTP_ROUTE_H
#define GPUPROBE_SERVER_HTTP_ROUTE_H

#include <stddef.h>

struct http_req;
struct http_resp;
typedef void (*route_handler)(struct http_req *rq, struct http_resp *rs);

struct route {
    const char *method;      /* "GET", "POST", "DELETE" */
    const char *pattern;     /* "/api/v1/jobs/{id}": {name} matches one path segment */
    route_handler handler;
    int write;               /* needs a bearer token */
    int documented;          /* 0 only for the dashboard's static files */
    int spool;               /* ROUTE_SPOOL: body streamed to a file under upload_dir,
                                capped by upload_limit, any content type (traces);
                                ROUTE_SPOOL_BUNDLE: the same capped by import_limit (a
                                bundle is parsed whole in memory); 0: JSON in memory
                                capped by body_limit */
};
enum { ROUTE_SPOOL = 1, ROUTE_SPOOL_BUNDLE = 2 };

/* Finds the route of table[0..n) for method+path. Returns it, or NULL with
 * *path_known set when the path matches some route under another method
 * (-> 405). Captured {name} segments are copied into params (at most
 * nparams, each up to 127 bytes). */
const struct route *route_match(const struct route *table, size_t n, const char *method,
                                const char *path, int *path_known, char params[][128],
                                size_t nparams);

/* The methods table allows on path, as "GET, DELETE", for a 405's Allow header. */
void route_allowed_methods(const struct route *table, size_t n, const char *path, char *buf,
                           size_t len);

#endif
