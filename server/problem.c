/*
 * RFC 9457 problem details. Each problem type has a slug (the last part of
 * its "type" URI) and a fixed title; the detail is always specific to the
 * request, so a client can show it to a person as it is.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "server/http.h"
#include "server/utf8.h"

static const struct {
    const char *slug;
    const char *title;
} titles[] = {
    {"not-found", "Not Found"},
    {"method-not-allowed", "Method Not Allowed"},
    {"unauthorized", "Unauthorized"},
    {"forbidden", "Forbidden"},
    {"payload-too-large", "Payload Too Large"},
    {"invalid-json", "Invalid JSON"},
    {"invalid-request", "Invalid Request"},
    {"unknown-device", "Unknown Device"},
    {"unknown-kind", "Unknown Job Kind"},
    {"conflict", "Conflict"},
    {"unsupported-media-type", "Unsupported Media Type"},
    {"internal", "Internal Server Error"},
    {"unavailable", "Service Unavailable"},
    {"insufficient-storage", "Insufficient Storage"},
    {"invalid-trace", "Invalid Trace"},
};

static const char *title_of(const char *slug)
{
    for (size_t i = 0; i < sizeof titles / sizeof titles[0]; i++)
        if (strcmp(titles[i].slug, slug) == 0)
            return titles[i].title;
    return "Error";
}

static json_t *problem_body(const struct http_req *rq, int status, const char *slug,
                            const char *detail)
{
    char type[96];
    snprintf(type, sizeof type, "/problems/%s", slug);
    /* detail and path may echo the client's bytes, which need not be UTF-8 */
    return json_pack("{s:s, s:s, s:i, s:o, s:o}", "type", type, "title", title_of(slug),
                     "status", status, "detail", json_text(detail), "instance",
                     json_text(rq->path ? rq->path : ""));
}

static void send_problem(struct http_resp *rs, int status, json_t *body)
{
    http_json(rs, status, body);
    rs->content_type = "application/problem+json";
}

void problem(const struct http_req *rq, struct http_resp *rs, int status, const char *slug,
             const char *fmt, ...)
{
    char detail[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    send_problem(rs, status, problem_body(rq, status, slug, detail));
}

void problem_field(const struct http_req *rq, struct http_resp *rs, int status, const char *slug,
                   const char *field, const char *fmt, ...)
{
    char detail[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    json_t *body = problem_body(rq, status, slug, detail);
    json_object_set_new(body, "field", json_text(field));
    send_problem(rs, status, body);
}

void problem_json(const struct http_req *rq, struct http_resp *rs, const json_error_t *e)
{
    char detail[1024];
    snprintf(detail, sizeof detail, "body is not valid JSON at byte %d (line %d, column %d): %s",
             e->position, e->line, e->column, e->text);
    json_t *body = problem_body(rq, 400, "invalid-json", detail);
    json_object_set_new(body, "offset", json_integer(e->position));
    json_object_set_new(body, "line", json_integer(e->line));
    json_object_set_new(body, "column", json_integer(e->column));
    send_problem(rs, 400, body);
}

void problem_members(const struct http_req *rq, struct http_resp *rs, int status, const char *slug,
                     json_t *members, const char *fmt, ...)
{
    char detail[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    json_t *body = problem_body(rq, status, slug, detail);
    if (members)
        json_object_update_missing(body, members);
    json_decref(members);
    send_problem(rs, status, body);
}
