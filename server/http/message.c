/*
 * Plain requests and responses (see message.h): query and header lookups
 * on the connection, and the ways a handler sets a body.
 */
#include "server/http/message.h"

#include <assert.h>

#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>

const char *http_query(const struct http_req *rq, const char *key)
{
    return MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, key);
}

struct query_walk {
    int (*fn)(void *ctx, const char *key, const char *value);
    void *ctx;
    int rc;
};

static enum MHD_Result query_step(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
    (void)kind;
    struct query_walk *w = cls;
    w->rc = w->fn(w->ctx, key, value);
    return w->rc ? MHD_NO : MHD_YES;
}

int http_query_each(const struct http_req *rq,
                    int (*fn)(void *ctx, const char *key, const char *value), void *ctx)
{
    struct query_walk w = {fn, ctx, 0};
    MHD_get_connection_values(rq->conn, MHD_GET_ARGUMENT_KIND, query_step, &w);
    return w.rc;
}

const char *http_header(const struct http_req *rq, const char *name)
{
    return MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, name);
}

void http_json(struct http_resp *rs, int status, json_t *j)
{
    rs->status = status;
    rs->content_type = HTTP_JSON;
    rs->body = j ? json_dumps(j, JSON_COMPACT) : NULL;
    rs->len = rs->body ? strlen(rs->body) : 0;
    rs->body_static = 0;
    json_decref(j);
    if (j && !rs->body) {
        rs->status = 500;
        rs->content_type = "text/plain";
    }
}

void http_static(struct http_resp *rs, int status, const char *ctype, const void *data, size_t len)
{
    rs->status = status;
    rs->content_type = ctype;
    rs->body = (char *)data;
    rs->len = len;
    rs->body_static = 1;
}

void http_file(struct http_resp *rs, int status, const char *ctype, int fd, unsigned long long len)
{
    rs->status = status;
    rs->content_type = ctype;
    rs->has_fd = 1;
    rs->fd = fd;
    rs->fd_len = len;
}

void http_copy(struct http_resp *rs, int status, const char *ctype, const void *data, size_t len)
{
    rs->status = status;
    rs->content_type = ctype;
    rs->body = malloc(len ? len : 1);
    rs->len = rs->body ? len : 0;
    rs->body_static = 0;
    if (rs->body)
        memcpy(rs->body, data, len);
    else
        rs->status = 500;
}

void http_add_header(struct http_resp *rs, const char *name, char *value)
{
    if (!value)
        return;
    for (size_t i = 0; i < HTTP_MAX_EXTRA_HEADERS; i++)
        if (!rs->extra[i].name) {
            rs->extra[i].name = name;
            rs->extra[i].value = value;
            return;
        }
    assert(!"more headers than HTTP_MAX_EXTRA_HEADERS");
    free(value);
}
