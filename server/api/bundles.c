/*
 * Result bundles over HTTP (docs/bundles.md): GET /api/v1/devices/{uuid}/export
 * answers a device's bundle as a download; POST /api/v1/import takes one
 * (a spool route: bundles of many devices can be large) and answers what it
 * added, or 400 naming the member at fault, having written nothing.
 */
#include <string.h>

#include "server/api/handlers.h"
#include "server/app.h"
#include "server/bundles/bundle.h"
#include "util/jsonfile.h"

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
    json_error_t je;
    struct bundle_counts c;
    char err[1024], field[200];
    static const char *const known[] = {NULL};
    if (query_only(rq, rs, known) < 0)
        return;
    if (!rq->body_file || rq->body_len == 0) {
        problem(rq, rs, 400, "invalid-request", "the body is empty: send a result bundle");
        return;
    }
    json_t *b = json_load_path(rq->body_file, JSON_REJECT_DUPLICATES, &je);
    if (!b) {
        problem_json(rq, rs, &je);
        return;
    }
    if (bundle_import(rq->app->db, b, &c, err, sizeof err, field, sizeof field) == 0)
        http_json(rs, 200, bundle_counts_json(&c));
    else if (field[0])
        problem_field(rq, rs, 400, "invalid-bundle", field, "%s", err);
    else
        problem(rq, rs, 503, "unavailable", "the bundle could not be stored: %s", err);
    json_decref(b);
}
