/*
 * The plain request a handler reads and the plain response it fills: what
 * the transport (http.h), the problem details (problem.h) and every handler
 * share, and nothing of how requests arrive.
 */
#ifndef GPUPROBE_SERVER_HTTP_MESSAGE_H
#define GPUPROBE_SERVER_HTTP_MESSAGE_H

#include <jansson.h>
#include <stddef.h>

struct app;
struct MHD_Connection;

#define HTTP_MAX_PARAMS 4
#define HTTP_MAX_EXTRA_HEADERS 2

/* The content type of every JSON body the API answers (docs/api.md). */
#define HTTP_JSON "application/json; charset=utf-8"

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
    int close;                           /* the connection closes after this answer */
    int has_fd;                          /* body streamed from fd (closed when sent) */
    int fd;
    unsigned long long fd_len;
    char *remove_when_sent;              /* malloc'd path unlinked once the whole answer
                                            reached the client, kept otherwise */
    struct {                             /* headers a handler adds (http_add_header) */
        const char *name;
        char *value;                     /* malloc'd; freed with the response */
    } extra[HTTP_MAX_EXTRA_HEADERS];
};

/* A query-string argument, or NULL. */
const char *http_query(const struct http_req *rq, const char *key);
/* Calls fn for each query-string argument in order; stops at, and returns,
 * fn's first non-zero value; else 0. value is NULL for a bare "?key", which
 * the transport refuses before a handler runs (http.c): a handler never
 * sees one. */
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
/* Adds a header to the response, taking value (malloc'd; NULL adds nothing,
 * as when building it ran out of memory). At most HTTP_MAX_EXTRA_HEADERS. */
void http_add_header(struct http_resp *rs, const char *name, char *value);

struct http_server;

#endif
