/*
 * RFC 9457 problem details: every error the API answers is one of these,
 * application/problem+json with a type slug, a fixed title per slug, and a
 * detail specific to the request that a client can show a person as it is.
 */
#ifndef GPUPROBE_SERVER_HTTP_PROBLEM_H
#define GPUPROBE_SERVER_HTTP_PROBLEM_H

#include <jansson.h>

#include "server/http/message.h"

/* RFC 9457 problem+json. slug names the type ("/problems/<slug>"); detail says
 * what was wrong. problem_field adds "field"; problem_json adds the parse
 * position of a JSON error ("offset", "line", "column"). */
void problem(const struct http_req *rq, struct http_resp *rs, int status, const char *slug,
             const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void problem_field(const struct http_req *rq, struct http_resp *rs, int status, const char *slug,
                   const char *field, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
void problem_json(const struct http_req *rq, struct http_resp *rs, const json_error_t *e);
/* A problem with more members ("line", "offset" ...): takes the reference to
 * members (may be NULL); they never replace the standard ones. */
void problem_members(const struct http_req *rq, struct http_resp *rs, int status, const char *slug,
                     json_t *members, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

#endif
