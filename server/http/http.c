/*
 * libmicrohttpd glue (see http.h).
 *
 * DESIGN
 * libmicrohttpd calls on_request several times per request: once when the
 * headers are in, once per chunk of body, and once more at the end. The
 * first call decides whether the request is admitted at all (route, method,
 * token, query syntax, announced size, content type); a refusal is queued
 * right there, so libmicrohttpd never reads a refused body. Admitted bodies
 * are collected up to the cap; past it the rest is discarded and 413 is
 * answered at the end. The last call runs the handler and queues its
 * response.
 *
 * Every connection is reported to the guard (conn_guard.h) when it opens and
 * closes, and every step of its requests, so that slow clients meet a
 * deadline in total time; libmicrohttpd's own limits stand a reserve above
 * the guard's, so a connection over the guard's limits is still read and
 * answered 503 (Retry-After, Connection: close) rather than dropped.
 * What libmicrohttpd answers itself: a request it cannot parse (a
 * Content-Length that is not a number or beyond 2^64, a request line or
 * headers over MHD_OPTION_CONNECTION_MEMORY_LIMIT, an HTTP version it does
 * not serve, broken chunking) is refused inside libmicrohttpd
 * (transmit_error_response_len, connection.c) with a fixed HTML text and
 * no Content-Type, before on_request is called or, for a chunked body,
 * instead of calling it again. 0.9.75 (Debian 12), like 1.0, has no
 * option that supplies or replaces that answer: NOTIFY_COMPLETED only
 * reports the end of a request whose handler (or URI logger) ran, after
 * the answer is queued; EXTERNAL_LOGGER only gets the message (logged as
 * msg=http_library); CONNECTION_MEMORY_LIMIT only moves where headers
 * become too large. So those answers are not problem+json, and are
 * documented as such (docs/api.md, Conventions) rather than faked by
 * parsing HTTP ahead of libmicrohttpd.
 * TLS is libmicrohttpd's (GnuTLS), with the certificate and key read from
 * the files the configuration names, once, at start. A Unix-domain socket
 * (listen_unix) is served by a second libmicrohttpd daemon with the same
 * callbacks and guard, in plain HTTP: its file mode says who may connect.
 * Both listening sockets are made, bound and listening here and handed to
 * libmicrohttpd (MHD_OPTION_LISTEN_SOCKET): a bind that fails is then told
 * with the address asked for and the system's reason, where libmicrohttpd
 * binding itself logs only "Failed to bind to port 0" (the port it was
 * handed beside the address, not the address's).
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "server/http/auth.h"
#include "server/http/conn_guard.h"
#include "server/http/problem.h"
#include "server/http/req_stats.h"
#include "server/http/route.h"
#include "server/log.h"
#include "util/clock.h"
#include "util/fdio.h"
#include "util/sdnotify.h"
#include "util/text.h"
#include "util/textfile.h"

struct http_server {
    struct MHD_Daemon *daemon;   /* NULL until http_start */
    int tcp_fd;                  /* bound and listening, until libmicrohttpd takes it; -1 after */
    int unix_fd;                 /* the same for listen_unix; -1 without one */
    struct http_setup setup;
    struct MHD_Daemon *unix_daemon; /* on listen_unix; NULL without one */
    struct conn_guard *guard;    /* admission and deadlines (conn_guard.h), of both daemons */
    char *tls_cert, *tls_key;    /* PEM, held while the daemon runs; NULL without TLS */
    atomic_int in_flight;        /* requests begun and not yet completed (http_wait_idle) */
    int ipv6;                    /* the TCP address's family */
    unsigned limit, per_ip;      /* libmicrohttpd's connection limits (make_guard) */
};

/* The dashboard's policy: what the page's <meta> Content-Security-Policy
 * says (web/index.html; tests/integration/t_headers.sh holds them equal),
 * and frame-ancestors, which only a header can say. */
#define HTML_CSP "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " \
                 "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/* Seconds a client over a connection limit is asked to wait (Retry-After). */
#define OVER_RETRY_AFTER "2"

/* One per request; freed by on_completed. */
struct conn_ctx {
    const struct http_setup *setup;
    const struct route *route;
    struct http_req rq;
    struct conn_guard *guard;
    struct guard_conn *gc;       /* the connection's guard entry; NULL if it has none */
    struct buf body;
    int too_large;
    int spool_fd;                /* spool routes: the body's file, else -1 */
    int spool_failed;            /* errno of a failed spool write, else 0 */
    char spool_path[1100];
    char *remove_when_sent;      /* the answer's http_resp.remove_when_sent */
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
    if (rs->content_type && strncmp(rs->content_type, "text/html", 9) == 0) {
        /* a page that must not be framed (clickjacking of its forms) nor leak its URL */
        MHD_add_response_header(r, "Content-Security-Policy", HTML_CSP);
        MHD_add_response_header(r, "X-Frame-Options", "DENY");
        MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    }
    if (rs->close)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
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

static int bare_key(void *ctx, const char *key, const char *value)
{
    if (value)
        return 0;
    *(const char **)ctx = key;
    return 1;
}

/* Refuses a query argument without '=' ("?k", "?a=1&b"), as a bad value is
 * refused (400 naming it): libmicrohttpd hands it over with no value, which
 * every lookup reads as absent, so "?k" was silently the default. Checked
 * here, for every route of the API, so that no handler has to; the
 * dashboard's static files, which read no query, are served whatever it
 * holds. */
static int check_query(struct conn_ctx *cx, struct http_resp *rs)
{
    const char *bare = NULL;
    if (!http_query_each(&cx->rq, bare_key, &bare))
        return 0;
    if (*bare)
        problem_field(&cx->rq, rs, 400, "invalid-request", bare,
                      "query argument '%.64s' has no value (write %.64s=VALUE)", bare, bare);
    else
        problem_field(&cx->rq, rs, 400, "invalid-request", "",
                      "the query has an empty argument (two '&' in a row, or '?&')");
    return -1;
}

/* A connection over the guard's limits: 503, and the connection closes. */
static void refuse_over_limit(struct conn_ctx *cx, struct http_resp *rs)
{
    const struct config *cfg = cx->setup->cfg;
    if (guard_verdict_of(cx->guard, cx->gc) == GUARD_OVER_IP)
        problem(&cx->rq, rs, 503, "unavailable",
                "too many connections from your address (at most %d at once): retry later",
                cfg->max_connections_per_ip);
    else
        problem(&cx->rq, rs, 503, "unavailable",
                "the server holds its most connections (%d): retry later", cfg->max_connections);
    http_add_header(rs, MHD_HTTP_HEADER_RETRY_AFTER, strdup(OVER_RETRY_AFTER));
    rs->close = 1;
}

/* First callback: decides admission. Returns 0 to admit, -1 with rs filled. */
static int admit(struct conn_ctx *cx, struct http_resp *rs)
{
    if (guard_verdict_of(cx->guard, cx->gc) != GUARD_ADMITTED) {
        refuse_over_limit(cx, rs);
        return -1;
    }
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
    /* the dashboard's own files read no query: a bookmark's "/?v1" is the page */
    if (cx->route->documented && check_query(cx, rs) < 0)
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
    guard_answering(cx->guard, cx->gc);
    free(cx->remove_when_sent);
    cx->remove_when_sent = rs->remove_when_sent; /* on_completed decides, once it knows */
    rs->remove_when_sent = NULL;
    enum MHD_Result r = send_response(c, rs);
    double took = mono_s() - cx->started_s;
    log_kv(status >= 500 ? LOG_WARN : LOG_INFO, "request", "method=%s path=%s status=%d bytes=%llu ms=%.1f", cx->rq.method,
           log_quote(q, sizeof q, cx->rq.path), status, bytes, took * 1e3);
    size_t route = cx->route ? (size_t)(cx->route - cx->setup->routes) : cx->setup->nroutes;
    req_stats_observe(cx->setup->stats, route, status, took);
    return r;
}

/* The guard's entry of connection c (on_connection made it). */
static struct guard_conn *guard_entry(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
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
        cx->guard = s->guard;
        cx->gc = guard_entry(c);
        cx->rq = (struct http_req){.app = s->setup.app, .conn = c, .method = method, .path = url};
        guard_headers_in(cx->guard, cx->gc, mono_ms());
        if (admit(cx, &rs) < 0)
            return answer(c, cx, &rs);
        return MHD_YES;
    }
    if (*upload_size) {
        guard_body(cx->guard, cx->gc, *upload_size);
        collect(cx, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    guard_answering(cx->guard, cx->gc); /* the handler may take its time */
    dispatch(cx, &rs);
    return answer(c, cx, &rs);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)c;
    struct http_server *s = cls;
    struct conn_ctx *cx = *con_cls;
    if (cx) {
        if (cx->remove_when_sent && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
            unlink(cx->remove_when_sent);
        free(cx->remove_when_sent);
        guard_next_request(cx->guard, cx->gc, mono_ms()); /* a kept-alive connection waits */
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

/* Every connection opens and closes through the guard. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct http_server *s = cls;
    if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        guard_close(s->guard, *socket_context);
        *socket_context = NULL;
        return;
    }
    const union MHD_ConnectionInfo *fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *addr =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    *socket_context = fd ? guard_open(s->guard, fd->connect_fd, addr ? addr->client_addr : NULL,
                                      mono_ms())
                         : NULL;
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

/* The certificate and key named by the configuration, into s; no TLS when
 * tls_cert is empty. -1 with the reason in err. */
static int load_tls(struct http_server *s, const struct config *cfg, char *err, size_t errlen)
{
    char why[600];
    if (!cfg->tls_cert[0])
        return 0;
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
        snprintf(err, errlen, "tls_cert is set, but this libmicrohttpd was built without TLS");
        return -1;
    }
    s->tls_cert = text_file_read(cfg->tls_cert, 1 << 20, why, sizeof why);
    if (!s->tls_cert) {
        snprintf(err, errlen, "tls_cert: %s", why);
        return -1;
    }
    s->tls_key = text_file_read(cfg->tls_key, 1 << 20, why, sizeof why);
    if (!s->tls_key) {
        snprintf(err, errlen, "tls_key: %s", why);
        return -1;
    }
    return 0;
}

/* A TLS pair that does not match is refused when the daemon starts, after
 * the database is open: a daemon with no listening socket tries the pair
 * first, while nothing is made. */
static int tls_pair_check(struct http_server *s, const struct config *cfg, char *err, size_t errlen)
{
    if (!s->tls_cert)
        return 0;
    struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_TLS | MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ERROR_LOG, 0, NULL, NULL,
                                            on_request, s, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
                                            MHD_OPTION_HTTPS_MEM_CERT, s->tls_cert, MHD_OPTION_HTTPS_MEM_KEY,
                                            s->tls_key, MHD_OPTION_END);
    if (!d) {
        snprintf(err, errlen, "tls_cert %.300s and tls_key %.300s are not a certificate and its key in PEM",
                 cfg->tls_cert, cfg->tls_key);
        return -1;
    }
    MHD_stop_daemon(d);
    return 0;
}

static void free_server(struct http_server *s)
{
    if (s->tcp_fd >= 0) /* bound, never served */
        close(s->tcp_fd);
    if (s->unix_fd >= 0) { /* the socket file is this server's: made by open_unix */
        close(s->unix_fd);
        unlink(s->setup.cfg->listen_unix);
    }
    guard_free(s->guard);
    free(s->tls_cert);
    if (s->tls_key) /* a private key: not left in freed memory */
        explicit_bzero(s->tls_key, strlen(s->tls_key));
    free(s->tls_key);
    free(s);
}

/* libmicrohttpd's limits stand a reserve above the guard's (conn_guard.h). */
static struct conn_guard *make_guard(const struct config *cfg, unsigned *limit, unsigned *per_ip)
{
    struct conn_guard_limits l = {.max_connections = cfg->max_connections,
                                  .max_per_ip = cfg->max_connections_per_ip,
                                  .request_ms = (int64_t)cfg->request_timeout_s * 1000,
                                  .body_min_rate = cfg->body_min_rate};
    *limit = (unsigned)cfg->max_connections + guard_reserve(&l);
    *per_ip = guard_reserve_per_ip(&l);
    struct conn_guard *g = guard_new(&l);
    if (g && guard_start(g) < 0) {
        guard_free(g);
        return NULL;
    }
    return g;
}

/* The Unix-domain socket cfg->listen_unix, listening, with its configured
 * mode. A socket file left by a daemon that is gone is replaced; one that
 * answers, or anything that is not a socket, is an error. -1 with err. */
static int open_unix(const struct config *cfg, char *err, size_t errlen)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    struct stat st;
    const char *path = cfg->listen_unix;
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "listen_unix: socket: %s", strerror(errno));
        return -1;
    }
    if (lstat(path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            snprintf(err, errlen, "listen_unix: %s exists and is not a socket", path);
            close(fd);
            return -1;
        }
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
            snprintf(err, errlen, "listen_unix: %s is in use by another process", path);
            close(fd);
            return -1;
        }
        unlink(path); /* a stale one: nobody answers there */
    }
    /* created with the daemon's umask (027), then set to the configured mode */
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
        chmod(path, (mode_t)config_unix_mode(cfg)) < 0 || listen(fd, 128) < 0) {
        snprintf(err, errlen, "listen_unix: %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* The value of hex digit ch, or -1. */
static int hex_digit(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    return ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

/* Decodes the %HH escapes of a URL path or query argument in place, as
 * libmicrohttpd would, except %00: a NUL would end the C string every
 * reader takes, so "/devices/GPU-x%00/memory" would be served as
 * "/devices/GPU-x" and "limit=5%00x" read as 5. Kept as the three
 * characters, it matches no route and no valid value. Returns the length. */
static size_t unescape_keeping_nul(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    char *w = s;
    for (const char *r = s; *r; r++) {
        int hi, lo;
        if (r[0] == '%' && (hi = hex_digit(r[1])) >= 0 && (lo = hex_digit(r[2])) >= 0 && (hi | lo)) {
            *w++ = (char)(hi << 4 | lo);
            r += 2;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
    return (size_t)(w - s);
}

/* A TCP socket bound to ss and listening, with the options libmicrohttpd
 * sets on one it makes (SO_REUSEADDR; IPV6_V6ONLY for IPv6); -1 with the
 * reason, naming the address as configured (listen). */
static int open_tcp(const struct sockaddr_storage *ss, const char *listen_addr, char *err,
                    size_t errlen)
{
    int on = 1;
    socklen_t len = ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "cannot listen on %s: socket: %s", listen_addr, strerror(errno));
        return -1;
    }
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) < 0 ||
        (ss->ss_family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on) < 0) ||
        bind(fd, (const struct sockaddr *)ss, len) < 0 || listen(fd, SOMAXCONN) < 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", listen_addr, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* The port the listening socket fd is bound to (port 0 asked: the one the
 * system picked); 0 when it cannot be told. */
static int bound_port_of(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
        return 0;
    return ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                          : ((struct sockaddr_in *)&ss)->sin_port);
}

/* One libmicrohttpd daemon on the listening socket fd (an IPv6 one when
 * ipv6), with the server's callbacks and limits; TLS when tls. */
static struct MHD_Daemon *start_daemon(struct http_server *s, int fd, int ipv6, int tls,
                                       unsigned limit, unsigned per_ip)
{
    const struct config *cfg = s->setup.cfg;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_USE_ITC |
                     MHD_USE_TURBO | (ipv6 ? MHD_USE_IPv6 : 0) | (tls ? MHD_USE_TLS : 0);
    struct MHD_OptionItem opts[] = {
        {MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)on_mhd_log, NULL}, /* first, or it warns */
        {MHD_OPTION_LISTEN_SOCKET, fd, NULL},
        {MHD_OPTION_THREAD_POOL_SIZE, cfg->http_threads, NULL},
        {MHD_OPTION_CONNECTION_LIMIT, limit, NULL},
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, cfg->connection_timeout_s, NULL},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, 64 * 1024, NULL},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, s},
        {MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection, s},
        {MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)unescape_keeping_nul, NULL},
        /* the TLS pair last: left out (MHD_OPTION_END) without TLS */
        {tls ? MHD_OPTION_HTTPS_MEM_CERT : MHD_OPTION_END, 0, s->tls_cert},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, s->tls_key},
        {MHD_OPTION_END, 0, NULL},
    };
    return MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_ARRAY, opts,
                            MHD_OPTION_END);
}

/* The Unix-domain socket's daemon, when the configuration names one. */
static int start_unix(struct http_server *s, unsigned limit, char *err, size_t errlen)
{
    const struct config *cfg = s->setup.cfg;
    if (s->unix_fd < 0)
        return 0;
    int fd = s->unix_fd;
    s->unix_fd = -1; /* libmicrohttpd's now, as the TCP socket */
    s->unix_daemon = start_daemon(s, fd, 0, 0, limit, 0);
    if (!s->unix_daemon) {
        snprintf(err, errlen, "listen_unix: libmicrohttpd cannot serve %s", cfg->listen_unix);
        /* fd is not closed again: a failed MHD_start_daemon closes the
         * listening socket it was given (0.9.75), and by now the number
         * may be another thread's */
        unlink(cfg->listen_unix);
        return -1;
    }
    /* not "listening...": that event names the TCP address (serve.c) */
    log_kv(LOG_INFO, "unix_socket", "path=%s mode=%s", cfg->listen_unix, cfg->listen_unix_mode);
    return 0;
}

struct http_server *http_bind(const struct config *cfg, int *bound_port, char *err, size_t errlen)
{
    struct sockaddr_storage ss = {0};
    if (resolve_listen(cfg->listen, &ss, err, errlen) < 0)
        return NULL;
    struct http_server *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->tcp_fd = s->unix_fd = -1;
    s->setup.cfg = cfg;
    s->ipv6 = ss.ss_family == AF_INET6;
    if (load_tls(s, cfg, err, errlen) < 0 || tls_pair_check(s, cfg, err, errlen) < 0) {
        free_server(s);
        return NULL;
    }
    s->guard = make_guard(cfg, &s->limit, &s->per_ip);
    if (!s->guard) {
        snprintf(err, errlen, "out of memory");
        free_server(s);
        return NULL;
    }
    s->tcp_fd = open_tcp(&ss, cfg->listen, err, errlen);
    if (s->tcp_fd < 0 || (cfg->listen_unix[0] && (s->unix_fd = open_unix(cfg, err, errlen)) < 0)) {
        free_server(s);
        return NULL;
    }
    *bound_port = bound_port_of(s->tcp_fd);
    return s;
}

int http_start(struct http_server *s, const struct http_setup *setup, char *err, size_t errlen)
{
    const struct config *cfg = setup->cfg;
    s->setup = *setup;
    int fd = s->tcp_fd;
    s->tcp_fd = -1; /* libmicrohttpd's now, even when it fails: it closes it (0.9.75) */
    s->daemon = start_daemon(s, fd, s->ipv6, s->tls_cert != NULL, s->limit, s->per_ip);
    if (!s->daemon) { /* the address is bound: libmicrohttpd's log line says what it refused */
        snprintf(err, errlen, "libmicrohttpd cannot serve %s%s", cfg->listen,
                 s->tls_cert ? " (are tls_cert and tls_key a valid PEM pair?)" : "");
        free_server(s);
        return -1;
    }
    if (start_unix(s, s->limit, err, errlen) < 0) {
        MHD_stop_daemon(s->daemon);
        free_server(s);
        return -1;
    }
    if (sdnotify_send("READY=1") < 0) /* systemd's Type=notify: serving from now on */
        log_kv(LOG_WARN, "sd_notify_failed", "state=READY errno=%d", errno);
    return 0;
}

void http_quiesce(struct http_server *s)
{
    if (!s)
        return;
    sdnotify_send("STOPPING=1");
    struct MHD_Daemon *daemons[] = {s->daemon, s->unix_daemon};
    for (size_t i = 0; i < 2; i++) {
        MHD_socket fd = daemons[i] ? MHD_quiesce_daemon(daemons[i]) : MHD_INVALID_SOCKET;
        if (fd != MHD_INVALID_SOCKET)
            close(fd);
    }
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
    if (s->daemon)
        MHD_stop_daemon(s->daemon); /* every connection closed: the guard is idle */
    if (s->unix_daemon) {
        MHD_stop_daemon(s->unix_daemon);
        unlink(s->setup.cfg->listen_unix);
    }
    free_server(s);
}

void http_guard_counts(struct http_server *s, struct guard_counts *out)
{
    guard_counts(s->guard, out);
}
