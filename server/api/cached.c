/*
 * JSON answers already encoded: those kept in a response cache
 * (server/http/resp_cache.h), shared by the listings that dashboards poll
 * (jobs, devices, the fleet view), and text made without a json_t.
 */
#include "server/api/handlers.h"
#include "server/http/resp_cache.h"

void respond_json_text(struct http_resp *rs, char *body, size_t len)
{
    rs->status = 200;
    rs->content_type = HTTP_JSON;
    rs->body = body;
    rs->len = len;
}

int respond_cached(struct http_resp *rs, struct resp_cache *c, const char *key, uint64_t gen)
{
    char *body;
    size_t len;
    if (!resp_cache_get(c, key, gen, &body, &len))
        return 0;
    respond_json_text(rs, body, len);
    return 1;
}

void keep_response(const struct http_resp *rs, struct resp_cache *c, const char *key,
                   uint64_t gen)
{
    if (rs->status == 200)
        resp_cache_put(c, key, gen, rs->body, rs->len);
}
