/*
 * RFC 9457 problem details (see problem.h). Each problem type has a slug
 * (the last part of its "type" URI) and a fixed title. Every entry point
 * formats its detail and sends through vsend, so they differ only in the
 * members they add.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "server/http/problem.h"
#include "util/utf8.h"

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
    {"invalid-bundle", "Invalid Bundle"},
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

/* Formats the detail, adds members (taken; may be NULL; never replacing a
 * standard member) and sets the response. */
static void vsend(const struct http_req *rq, struct http_resp *rs, int status, const char *slug,
                  json_t *members, const char *fmt, va_list ap)
{
    char detail[1024];
    vsnprintf(detail, sizeof detail, fmt, ap);
    json_t *body = problem_body(rq, status, slug, detail);
    if (members)
        json_object_update_missing(body, members);
    json_decref(members);
    http_json(rs, status, body);
    rs->content_type = "application/problem+json";
}

void problem(const struct http_req *rq, struct http_resp *rs, int status, const char *slug,
             const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsend(rq, rs, status, slug, NULL, fmt, ap);
    va_end(ap);
}

void problem_field(const struct http_req *rq, struct http_resp *rs, int status, const char *slug,
                   const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsend(rq, rs, status, slug, json_pack("{s:o}", "field", json_text(field)), fmt, ap);
    va_end(ap);
}

void problem_members(const struct http_req *rq, struct http_resp *rs, int status, const char *slug,
                     json_t *members, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsend(rq, rs, status, slug, members, fmt, ap);
    va_end(ap);
}

void problem_json(const struct http_req *rq, struct http_resp *rs, const json_error_t *e)
{
    problem_members(rq, rs, 400, "invalid-json",
                    json_pack("{s:i, s:i, s:i}", "offset", e->position, "line", e->line, "column",
                              e->column),
                    "body is not valid JSON at byte %d (line %d, column %d): %s", e->position,
                    e->line, e->column, e->text);
}
