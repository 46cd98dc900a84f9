/*
 * libmicrohttpd glue (see http.h).
 *
 * DESIGN
 * libmicrohttpd calls on_request several times per request: once when the
 * headers are in, once per chunk of body, and once more at the end. The
 * first call decides whether the request is admitted at all (route, method,
 * token, announced size, content type); a refusal is queued right there, so
 * libmicrohttpd never reads a refused body. Admitted bodies are collected up
 * to the cap; past it the rest is discarded and 413 is answered at the end.
 * The last call runs the handler and queues its response.
 */
#include "server/http/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/http/auth.h"
#include "server/http/problem.h"
#include "server/http/req_stats.h"
#include "server/http/route.h"
#include "server/log.h"
#include "util/clock.h"
#include "util/fdio.h"
#include "util/text.h"

struct http_server {
    struct MHD_Daemon *daemon;
    struct http_setup setup;
    atomic_int in_flight;        /* requests begun and not yet completed (http_wait_idle) */
};

/* One per request; freed by on_completed. */
struct conn_ctx {
    const struct http_setup *setup;
    const struct route *route;
    struct http_req rq;
    struct buf body;
    int too_large;
    int spool_fd;                /* spool routes: the body's file, else -1 */
    int spool_failed;            /* errno of a failed spool write, else 0 */
    char spool_path[1100];
    double started_s;            /* monotonic, at the first callback */
};

static struct MHD_Response *make_response(struct http_resp *rs)
{
    if (rs->has_fd)
        return MHD_create_response_from_fd64(rs->fd_len, rs->fd);
    return MHD_create_response_from_buffer(
        rs->len, rs->body, rs->body_static ? MHD_RESPMEM_PERSISTENT : MHD_RESPMEM_MUST_FREE);
}

static void free_extra_headers(struct http_resp *rs)
{
    for (size_t i = 0; i < HTTP_MAX_EXTRA_HEADERS; i++)
        free(rs->extra[i].value);
}

static enum MHD_Result send_response(struct MHD_Connection *c, struct http_resp *rs)
{
    struct MHD_Response *r = make_response(rs);
    if (!r) {
        if (rs->has_fd)
            close(rs->fd);
        else if (!rs->body_static)
            free(rs->body);
        free_extra_headers(rs);
        return MHD_NO;
    }
    for (size_t i = 0; i < HTTP_MAX_EXTRA_HEADERS && rs->extra[i].name; i++)
        MHD_add_response_header(r, rs->extra[i].name, rs->extra[i].value);
    free_extra_headers(rs);
    if (rs->content_type)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, rs->content_type);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    if (!rs->body_static)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (rs->location[0])
        MHD_add_response_header(r, MHD_HTTP_HEADER_LOCATION, rs->location);
    if (rs->allow[0])
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, rs->allow);
    if (rs->www_authenticate)
        MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"gpuprobe\"");
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)rs->status, r);
    MHD_destroy_response(r);
    return ret;
}

static int check_auth(struct conn_ctx *cx, struct http_resp *rs)
{
    switch (auth_check(cx->setup->auth, http_header(&cx->rq, MHD_HTTP_HEADER_AUTHORIZATION))) {
    case AUTH_OK:
        return 0;
    case AUTH_MISSING:
        problem(&cx->rq, rs, 401, "unauthorized",
                "this request changes state and needs an 'Authorization: Bearer <token>' header");
        rs->www_authenticate = 1;
        return -1;
    case AUTH_WRONG:
        problem(&cx->rq, rs, 403, "forbidden", "the bearer token is not one of the daemon's tokens");
        return -1;
    case AUTH_DISABLED:
        problem(&cx->rq, rs, 403, "forbidden",
                "writes are disabled: the daemon was started without a token file (--token-file)");
        return -1;
    }
    return -1;
}

/* "application/json", optionally followed by parameters ("; charset=utf-8"). */
static int is_json_media_type(const char *ct)
{
    static const char json[] = "application/json";
    if (strncasecmp(ct, json, sizeof json - 1) != 0)
        return 0;
    char next = ct[sizeof json - 1];
    return next == '\0' || next == ';' || next == ' ' || next == '\t';
}

/* The most bytes the route's body may have. */
static long long body_cap(const struct conn_ctx *cx)
{
    const struct config *cfg = cx->setup->cfg;
    if (cx->route->spool == ROUTE_SPOOL_BUNDLE)
        return cfg->import_limit;
    return cx->route->spool ? cfg->upload_limit : cfg->body_limit;
}

static int check_body_headers(struct conn_ctx *cx, struct http_resp *rs)
{
    long long limit = body_cap(cx);
    const char *cl = http_header(&cx->rq, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl && strtoll(cl, NULL, 10) > limit) {
        problem(&cx->rq, rs, 413, "payload-too-large",
                "the body announces %s bytes; this endpoint accepts at most %lld", cl, limit);
        return -1;
    }
    const char *ct = http_header(&cx->rq, MHD_HTTP_HEADER_CONTENT_TYPE);
    int has_body = (cl && strcmp(cl, "0") != 0) || http_header(&cx->rq, "Transfer-Encoding");
    if (has_body && ct && !cx->route->spool && !is_json_media_type(ct)) {
        problem(&cx->rq, rs, 415, "unsupported-media-type",
                "the body must be application/json, not '%s'", ct);
        return -1;
    }
    return 0;
}

/* First callback: decides admission. Returns 0 to admit, -1 with rs filled. */
static int admit(struct conn_ctx *cx, struct http_resp *rs)
{
    int known = 0;
    const char *method = strcmp(cx->rq.method, "HEAD") == 0 ? "GET" : cx->rq.method;
    cx->route = route_match(cx->setup->routes, cx->setup->nroutes, method, cx->rq.path, &known, cx->rq.params, HTTP_MAX_PARAMS);
    if (!cx->route && !known) {
        problem(&cx->rq, rs, 404, "not-found", "no resource at %s", cx->rq.path);
        return -1;
    }
    if (!cx->route) {
        route_allowed_methods(cx->setup->routes, cx->setup->nroutes, cx->rq.path, rs->allow, sizeof rs->allow);
        problem(&cx->rq, rs, 405, "method-not-allowed", "%s is not allowed on %s (allowed: %s)",
                cx->rq.method, cx->rq.path, rs->allow);
        return -1;
    }
    if (cx->route->write && check_auth(cx, rs) < 0)
        return -1;
    return check_body_headers(cx, rs);
}

/* Creates the spool file on the first chunk: upload_dir/upload-XXXXXX. */
static int spool_open(struct conn_ctx *cx)
{
    const char *dir = cx->setup->cfg->upload_dir;
    if (mkdir(dir, 0750) < 0 && errno != EEXIST)
        return -1;
    snprintf(cx->spool_path, sizeof cx->spool_path, "%s/upload-XXXXXX", dir);
    cx->spool_fd = mkostemp(cx->spool_path, O_CLOEXEC);
    if (cx->spool_fd < 0)
        cx->spool_path[0] = '\0';
    return cx->spool_fd < 0 ? -1 : 0;
}

static void spool(struct conn_ctx *cx, const char *data, size_t n)
{
    if (cx->too_large || cx->spool_failed)
        return;
    if (cx->body.len + n > (size_t)body_cap(cx)) {
        cx->too_large = 1;
        return;
    }
    if (cx->spool_fd < 0 && spool_open(cx) < 0) {
        cx->spool_failed = errno;
        return;
    }
    if (fd_write_all(cx->spool_fd, data, n, FD_CURRENT) < 0) {
        cx->spool_failed = errno ? errno : EIO;
        return;
    }
    cx->body.len += n; /* only the count: the bytes are in the file */
}

static void collect(struct conn_ctx *cx, const char *data, size_t n)
{
    if (cx->route->spool)
        spool(cx, data, n);
    else if (!cx->too_large &&
             buf_append(&cx->body, data, n, (size_t)cx->setup->cfg->body_limit) < 0)
        cx->too_large = 1; /* the rest is discarded; 413 is answered at the end */
}

static void dispatch(struct conn_ctx *cx, struct http_resp *rs)
{
    if (cx->too_large) {
        problem(&cx->rq, rs, 413, "payload-too-large", "the body exceeds %lld bytes",
                body_cap(cx));
        return;
    }
    if (cx->spool_failed) {
        problem(&cx->rq, rs, 507, "insufficient-storage", "the body could not be stored: %s",
                strerror(cx->spool_failed));
        return;
    }
    cx->rq.body_file = cx->spool_path[0] ? cx->spool_path : NULL;
    cx->rq.body = cx->route->spool ? NULL : cx->body.data;
    cx->rq.body_len = cx->body.len;
    cx->route->handler(&cx->rq, rs);
}

/* Sends the answer, logs the request in one line (what was asked, what was
 * answered, how big, how long it took; a server error as a warning) and
 * counts it under its route, or under none (req_stats.h). */
static enum MHD_Result answer(struct MHD_Connection *c, struct conn_ctx *cx, struct http_resp *rs)
{
    char q[600];
    int status = rs->status;
    unsigned long long bytes = rs->has_fd ? rs->fd_len : rs->len;
    enum MHD_Result r = send_response(c, rs);
    double took = mono_s() - cx->started_s;
    log_kv(status >= 500 ? LOG_WARN : LOG_INFO, "request", "method=%s path=%s status=%d bytes=%llu ms=%.1f", cx->rq.method,
           log_quote(q, sizeof q, cx->rq.path), status, bytes, took * 1e3);
    size_t route = cx->route ? (size_t)(cx->route - cx->setup->routes) : cx->setup->nroutes;
    req_stats_observe(cx->setup->stats, route, status, took);
    return r;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
    (void)version;
    struct http_server *s = cls;
    struct conn_ctx *cx = *con_cls;
    struct http_resp rs = {0};
    if (!cx) {
        cx = calloc(1, sizeof *cx);
        if (!cx)
            return MHD_NO;
        *con_cls = cx;
        atomic_fetch_add(&s->in_flight, 1);
        cx->spool_fd = -1;
        cx->started_s = mono_s();
        cx->setup = &s->setup;
        cx->rq = (struct http_req){.app = s->setup.app, .conn = c, .method = method, .path = url};
        if (admit(cx, &rs) < 0)
            return answer(c, cx, &rs);
        return MHD_YES;
    }
    if (*upload_size) {
        collect(cx, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    dispatch(cx, &rs);
    return answer(c, cx, &rs);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)c;
    (void)toe;
    struct http_server *s = cls;
    struct conn_ctx *cx = *con_cls;
    if (cx) {
        atomic_fetch_sub(&s->in_flight, 1);
        buf_free(&cx->body);
        if (cx->spool_fd >= 0)
            close(cx->spool_fd);
        if (cx->spool_path[0] && !cx->rq.body_file_taken)
            unlink(cx->spool_path); /* nothing partial is kept */
        free(cx);
        *con_cls = NULL;
    }
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    char msg[512], q[600];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && msg[n - 1] == '\n')
        msg[--n] = '\0';
    log_kv(LOG_WARN, "http_library", "detail=%s", log_quote(q, sizeof q, msg));
}

static int resolve_listen(const char *listen, struct sockaddr_storage *ss, char *err, size_t errlen)
{
    char host[128];
    int port;
    if (config_split_listen(listen, host, sizeof host, &port) < 0) {
        snprintf(err, errlen, "listen address '%s' is not HOST:PORT", listen);
        return -1;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    int rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc) {
        snprintf(err, errlen, "listen address '%s': %s", host, gai_strerror(rc));
        return -1;
    }
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    if (ss->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
    return 0;
}

struct http_server *http_start(const struct http_setup *setup, int *bound_port, char *err,
                               size_t errlen)
{
    const struct config *cfg = setup->cfg;
    struct sockaddr_storage ss = {0};
    if (resolve_listen(cfg->listen, &ss, err, errlen) < 0)
        return NULL;
    struct http_server *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->setup = *setup;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_USE_ITC |
                     MHD_USE_TURBO | (ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    s->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, s,
        MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)cfg->http_threads,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned)cfg->max_connections,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)cfg->max_connections_per_ip,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)cfg->connection_timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024),
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_END);
    if (!s->daemon) {
        snprintf(err, errlen, "cannot listen on %s (address in use or not available)",
                 cfg->listen);
        free(s);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    *bound_port = info ? info->port : 0;
    return s;
}

void http_quiesce(struct http_server *s)
{
    if (!s)
        return;
    MHD_socket fd = MHD_quiesce_daemon(s->daemon);
    if (fd != MHD_INVALID_SOCKET)
        close(fd);
}

int http_wait_idle(struct http_server *s, int64_t deadline_ms)
{
    while (s && atomic_load(&s->in_flight) > 0) {
        if (mono_ms() >= deadline_ms)
            return 1;
        usleep(20000);
    }
    return 0;
}

void http_stop(struct http_server *s)
{
    if (!s)
        return;
    MHD_stop_daemon(s->daemon);
    free(s);
}
