/*
 * The dashboard's files and /openapi.json, served from the copies linked
 * into the binary (server/assets.h).
 */
#include <string.h>

#include "server/api/assets.h"
#include "server/api/handlers.h"

const struct asset *asset_find(const char *url_path)
{
    if (strcmp(url_path, "/") == 0)
        url_path = "/index.html";
    for (const struct asset *a = assets; a->path; a++)
        if (strcmp(a->path, url_path) == 0)
            return a;
    return NULL;
}

const char *asset_content_type(const struct asset *a)
{
    static const struct {
        const char *ext, *type;
    } types[] = {
        {".html", "text/html; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".json", "application/json"},
        {".svg", "image/svg+xml"},
    };
    const char *dot = strrchr(a->path, '.');
    for (size_t i = 0; dot && i < sizeof types / sizeof types[0]; i++)
        if (strcmp(dot, types[i].ext) == 0)
            return types[i].type;
    return "application/octet-stream";
}

void h_static(struct http_req *rq, struct http_resp *rs)
{
    const struct asset *a = asset_find(rq->path);
    if (!a) {
        problem(rq, rs, 404, "not-found", "no file at %s in this build", rq->path);
        return;
    }
    http_static(rs, 200, asset_content_type(a), a->start, (size_t)(a->end - a->start));
}
