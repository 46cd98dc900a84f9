/*
 * Result bundles over HTTP (docs/bundles.md): GET /api/v1/devices/{uuid}/export
 * answers a device's bundle as a download; POST /api/v1/import takes one
 * (a spool route: bundles of many devices can be large) and answers what it
 * added, or 400 naming the member at fault, having written nothing. What
 * parsing a bundle may cost is bounded before jansson sees it (json_body.h).
 */
#include <string.h>

#include "server/api/handlers.h"
#include "server/app.h"
#include "server/bundles/bundle.h"
#include "server/http/json_body.h"

void h_device_export(struct http_req *rq, struct http_resp *rs)
{
    const char *uuid = rq->params[0];
    const char *const one[] = {uuid};
    char err[512], disposition[200];
    int unknown = 0;
    static const char *const known[] = {NULL};
    if (query_only(rq, rs, known) < 0)
        return;
    json_t *b = bundle_build(rq->app->db, one, 1, NULL, &unknown, err, sizeof err);
    if (!b) {
        if (unknown)
            problem(rq, rs, 404, "not-found", "%s", err);
        else
            problem(rq, rs, 503, "unavailable", "the bundle could not be built: %s", err);
        return;
    }
    http_json(rs, 200, b);
    snprintf(disposition, sizeof disposition, "attachment; filename=\"gpuprobe-%.60s.json\"",
             uuid);
    http_add_header(rs, "Content-Disposition", strdup(disposition));
}

void h_import(struct http_req *rq, struct http_resp *rs)
{
    struct bundle_counts c;
    char err[1024], field[200];
    static const char *const known[] = {NULL};
    if (query_only(rq, rs, known) < 0)
        return;
    if (!rq->body_file || rq->body_len == 0) {
        problem(rq, rs, 400, "invalid-request", "the body is empty: send a result bundle");
        return;
    }
    json_t *b = json_body(rq, rs, rq->app->cfg.import_limit, "import_limit",
                          JSON_REJECT_DUPLICATES);
    if (!b)
        return;
    if (bundle_import(rq->app->db, b, &c, err, sizeof err, field, sizeof field) == 0)
        http_json(rs, 200, bundle_counts_json(&c));
    else if (field[0])
        problem_field(rq, rs, 400, "invalid-bundle", field, "%s", err);
    else
        problem(rq, rs, 503, "unavailable", "the bundle could not be stored: %s", err);
    json_decref(b);
}
