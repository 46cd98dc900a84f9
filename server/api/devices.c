/*
 * /api/v1/devices: the GPUs attached now (from discovery, pre-encoded) and
 * any GPU this store has seen (present or not: results outlive hardware).
 */
#include <stdlib.h>
#include <string.h>

#include "server/app.h"
#include "server/api/handlers.h"
#include "server/api/job_json.h"

void h_devices_list(struct http_req *rq, struct http_resp *rs)
{
    struct app *app = rq->app;
    pthread_mutex_lock(&app->inv_lock);
    if (app->devices_body)
        http_copy(rs, 200, HTTP_JSON, app->devices_body, app->devices_body_len);
    pthread_mutex_unlock(&app->inv_lock);
    if (!app->devices_body)
        problem(rq, rs, 503, "unavailable", "device discovery has not finished yet");
}

/* The attached device with this UUID as JSON, or NULL. */
static json_t *attached_device(struct app *app, const char *uuid)
{
    json_t *j = NULL;
    pthread_mutex_lock(&app->inv_lock);
    for (size_t i = 0; i < app->inv.count && !j; i++)
        if (strcmp(app->inv.devices[i].uuid, uuid) == 0)
            j = gpu_device_to_json(&app->inv.devices[i], &app->inv);
    pthread_mutex_unlock(&app->inv_lock);
    return j;
}

void h_device_get(struct http_req *rq, struct http_resp *rs)
{
    const char *uuid = rq->params[0];
    struct device_row row;
    char err[256];
    int rc = store_device_get(rq->app->db, uuid, &row, err, sizeof err);
    if (rc < 0) {
        problem(rq, rs, 503, "unavailable", "device %s could not be read: %s", uuid, err);
        return;
    }
    json_t *dev = attached_device(rq->app, uuid);
    int present = dev != NULL;
    if (!dev && rc == 0)
        dev = json_loads(row.info_json, 0, NULL);
    if (!dev) {
        if (rc == 0)
            device_row_free(&row);
        problem(rq, rs, 404, "not-found", "no device %s has been seen on this host", uuid);
        return;
    }
    json_object_set_new(dev, "present", json_boolean(present));
    json_object_set_new(dev, "first_seen", time_to_json(rc == 0 ? row.first_seen_ms : 0));
    json_object_set_new(dev, "last_seen", time_to_json(rc == 0 ? row.last_seen_ms : 0));
    if (rc == 0)
        device_row_free(&row);
    http_json(rs, 200, dev);
}
