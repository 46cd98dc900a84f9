/*
 * /api/v1/devices: the GPUs attached now (from discovery, pre-encoded) and
 * every other GPU this store knows (one no longer attached, or one whose
 * results were imported from another host: results outlive hardware), each
 * with its host and whether it is attached here (only attached ones take
 * jobs). The listing is cached by the store's write generation, like the
 * job listings, because dashboards poll it.
 */
#include <stdlib.h>
#include <string.h>

#include "server/api/handlers.h"
#include "server/api/job_json.h"
#include "server/app.h"
#include "server/http/resp_cache.h"

/* The discovery document, its devices marked attached on this host. */
static json_t *attached_devices(struct app *app)
{
    json_t *doc = NULL;
    pthread_mutex_lock(&app->inv_lock);
    if (app->devices_body)
        doc = json_loadb(app->devices_body, app->devices_body_len, 0, NULL);
    pthread_mutex_unlock(&app->inv_lock);
    size_t i;
    json_t *d;
    json_array_foreach(json_object_get(doc, "devices"), i, d) {
        json_object_set_new(d, "host", json_string(app->hostname));
        json_object_set_new(d, "attached", json_true());
    }
    return doc;
}

/* Whether uuid is among the first n devices (the attached ones). */
static int attached(const json_t *devices, size_t n, const char *uuid)
{
    for (size_t i = 0; i < n; i++) {
        const char *u = json_string_value(json_object_get(json_array_get(devices, i), "uuid"));
        if (u && strcmp(u, uuid) == 0)
            return 1;
    }
    return 0;
}

/* A stored device that is not attached here, as the listing shows it. */
static json_t *stored_device(const struct device_row *r)
{
    json_t *d = r->info_json ? json_loads(r->info_json, 0, NULL) : NULL;
    if (!json_is_object(d)) {
        json_decref(d);
        d = json_pack("{s:s?, s:s?, s:s?}", "uuid", r->uuid, "name", r->name,
                      "compute_capability", r->compute_capability);
    }
    json_object_set_new(d, "index", json_null()); /* an index names an attached GPU */
    json_object_set_new(d, "host", json_string(r->hostname ? r->hostname : ""));
    json_object_set_new(d, "attached", json_false());
    json_object_set_new(d, "last_seen", time_to_json(r->last_seen_ms));
    return d;
}

void h_devices_list(struct http_req *rq, struct http_resp *rs)
{
    struct app *app = rq->app;
    struct device_row *rows = NULL;
    size_t n = 0;
    char err[256];
    uint64_t gen = store_generation(app->db); /* read before the data it tags */
    if (respond_cached(rs, app->resp_cache, "devices", gen))
        return;
    json_t *doc = attached_devices(app);
    if (!doc) {
        problem(rq, rs, 503, "unavailable", "device discovery has not finished yet");
        return;
    }
    if (store_device_list(app->db, &rows, &n, err, sizeof err) < 0) {
        json_decref(doc);
        problem(rq, rs, 503, "unavailable", "the stored devices could not be read: %s", err);
        return;
    }
    json_t *devices = json_object_get(doc, "devices");
    /* the stored rows are distinct (one per UUID): only the attached GPUs,
     * listed first, can repeat one (a linear scan of the whole list made a
     * store of 50,000 devices take a minute) */
    size_t nattached = json_array_size(devices);
    for (size_t i = 0; i < n; i++)
        if (!attached(devices, nattached, rows[i].uuid))
            json_array_append_new(devices, stored_device(&rows[i]));
    device_rows_free(rows, n);
    http_json(rs, 200, doc);
    keep_response(rs, app->resp_cache, "devices", gen);
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
    json_object_set_new(dev, "attached", json_boolean(present));
    json_object_set_new(dev, "host", json_string(present ? rq->app->hostname
                                                 : rc == 0 && row.hostname ? row.hostname : ""));
    if (!present)
        json_object_set_new(dev, "index", json_null());
    json_object_set_new(dev, "first_seen", time_to_json(rc == 0 ? row.first_seen_ms : 0));
    json_object_set_new(dev, "last_seen", time_to_json(rc == 0 ? row.last_seen_ms : 0));
    if (rc == 0)
        device_row_free(&row);
    http_json(rs, 200, dev);
}
