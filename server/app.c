/*
 * Shared daemon state: device discovery at start-up and device references.
 *
 * Discovery runs in a worker process like every other GPU access, so a
 * driver that hangs or crashes in cuInit costs a failed discovery (with the
 * reason served at /readyz and /api/v1/devices), never the daemon.
 */
#include "server/app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/discovery.h"
#include "server/log.h"
#include "server/spawn.h"

#define DISCOVERY_OUTPUT_LIMIT (4u << 20)

int app_resolve_device(struct app *app, const char *uuid_or_null, long long index, char *uuid,
                       char *err, size_t errlen)
{
    int rc = -1;
    pthread_mutex_lock(&app->inv_lock);
    for (size_t i = 0; i < app->inv.count && rc < 0; i++) {
        const struct gpu_device *d = &app->inv.devices[i];
        if (uuid_or_null ? strcmp(d->uuid, uuid_or_null) == 0 : d->index == index) {
            snprintf(uuid, 48, "%s", d->uuid);
            rc = 0;
        }
    }
    if (rc < 0 && app->inv.count == 0)
        snprintf(err, errlen, "no GPU is attached to this host (%s)",
                 app->inv.reason[0] ? app->inv.reason : "discovery found none");
    else if (rc < 0 && uuid_or_null)
        snprintf(err, errlen, "no attached GPU has UUID '%s'", uuid_or_null);
    else if (rc < 0)
        snprintf(err, errlen, "no attached GPU has index %lld (there are %zu)", index,
                 app->inv.count);
    pthread_mutex_unlock(&app->inv_lock);
    return rc;
}

/* Asks a worker what is attached. Never fails: a failure becomes the reason. */
static void discover(struct app *app, struct gpu_inventory *inv)
{
    char *argv[] = {app->self_exe, "worker", "--discover", NULL};
    char *out = NULL, err[512];
    json_error_t je;
    memset(inv, 0, sizeof *inv);
    if (child_run(app->self_exe, argv, app->cfg.discovery_timeout_s, DISCOVERY_OUTPUT_LIMIT, &out,
                  err, sizeof err) == 0) {
        json_t *doc = json_loads(out, JSON_REJECT_DUPLICATES, &je);
        int rc = doc ? gpu_inventory_from_json(json_object_get(doc, "result"), inv, err, sizeof err)
                     : (snprintf(err, sizeof err, "%s", je.text), -1);
        json_decref(doc);
        free(out);
        if (rc == 0)
            return;
    }
    gpu_inventory_free(inv);
    memset(inv, 0, sizeof *inv);
    snprintf(inv->reason, sizeof inv->reason, "device discovery failed: %.200s", err);
}

/* Records host and devices in the store; failures are logged, not fatal. */
static void remember(struct app *app, const struct gpu_inventory *inv)
{
    char err[256];
    const char **uuids = calloc(inv->count + 1, sizeof *uuids);
    if (!uuids || store_host_upsert(app->db, app->hostname, "", &app->host_id, err, sizeof err) < 0)
        goto out;
    for (size_t i = 0; i < inv->count; i++) {
        const struct gpu_device *d = &inv->devices[i];
        char cc[16];
        snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
        json_t *j = gpu_device_to_json(d, inv);
        char *text = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        int rc = text ? store_device_upsert(app->db, app->host_id, d->uuid, d->name, cc, text, err,
                                            sizeof err)
                      : -1;
        free(text);
        if (rc < 0)
            goto out;
        uuids[i] = d->uuid;
    }
    if (store_devices_mark_absent(app->db, app->host_id, uuids, inv->count, err, sizeof err) == 0) {
        free(uuids);
        return;
    }
out:
    free(uuids);
    log_kv(LOG_ERROR, "store_failed", "op=devices error=%s", uuids ? err : "out of memory");
}

static char *encode_devices(const struct app *app, const struct gpu_inventory *inv, size_t *len)
{
    json_t *j = gpu_inventory_to_json(inv);
    json_object_set_new(j, "host", json_pack("{s:s}", "hostname", app->hostname));
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    *len = text ? strlen(text) : 0;
    return text;
}

void discovery_run(struct app *app)
{
    struct gpu_inventory inv;
    discover(app, &inv);
    remember(app, &inv);
    size_t len;
    char *body = encode_devices(app, &inv, &len);
    char q[600];
    log_kv(inv.count ? LOG_INFO : LOG_WARN, "devices_discovered", "count=%zu driver=%s reason=%s",
           inv.count, inv.driver_version[0] ? inv.driver_version : "none",
           log_quote(q, sizeof q, inv.reason));
    pthread_mutex_lock(&app->inv_lock);
    gpu_inventory_free(&app->inv);
    app->inv = inv;
    free(app->devices_body);
    app->devices_body = body;
    app->devices_body_len = len;
    app->discovery = strncmp(inv.reason, "device discovery failed", 23) == 0 ? DISCOVERY_FAILED
                                                                             : DISCOVERY_DONE;
    pthread_mutex_unlock(&app->inv_lock);
}
