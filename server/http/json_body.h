/*
 * A request body parsed as JSON within a bound on what parsing costs.
 *
 * DESIGN. A route's byte limit (body_limit, import_limit) bounds a body's
 * bytes, not the memory jansson takes to hold it: a body of small values
 * ("[0,0,...]", "[{},{},...]") takes 20 to 80 times its size once parsed,
 * before any check of its content has run. So every body is pre-scanned
 * (util/jsonscan.h: one linear pass in constant memory, a bound on the bytes
 * jansson will hold) and refused unless parsing it takes at most
 * JSON_BODY_MEMORY_FACTOR times the route's byte limit and it nests at most
 * JSON_BODY_DEPTH_MAX deep; only then does jansson see it. Real content
 * stays inside at any size up to the limit: the densest real result
 * document (a latency result) is bounded at 13.9 times its compact size
 * (jansson takes 10.2), a whole H200 bundle at 10.6 (7.8), and none nests
 * deeper than 14. The bound is per request: http_threads requests parse
 * at once at most.
 */
#ifndef GPUPROBE_SERVER_HTTP_JSON_BODY_H
#define GPUPROBE_SERVER_HTTP_JSON_BODY_H

#include <jansson.h>

#include "server/http/message.h"

/* Parsing a body may take this many times its route's byte limit. */
#define JSON_BODY_MEMORY_FACTOR 16
/* The deepest nesting a body may have (a top-level object: 1). */
#define JSON_BODY_DEPTH_MAX 64

/* rq's body (in memory, or spooled to rq->body_file) parsed with jansson's
 * flags, once the pre-scan allowed it. limit is the route's byte limit and
 * limit_name the setting that holds it (named in the refusal, as what to
 * raise). NULL after answering: 413 payload-too-large when parsing would
 * take more than JSON_BODY_MEMORY_FACTOR * limit bytes, 400 invalid-json
 * (with "offset") when it nests too deep or is not JSON, 500 internal when a
 * spooled body cannot be read. The caller answers an empty body itself. */
json_t *json_body(const struct http_req *rq, struct http_resp *rs, long long limit,
                  const char *limit_name, size_t flags);

#endif
