/*
 * Device discovery for the daemon (see discovery.h).
 *
 * Discovery runs in a worker process like every other GPU access, so a
 * driver that hangs or crashes in cuInit costs a failed discovery (with the
 * reason served at /readyz and /api/v1/devices), never the daemon.
 */
#include "server/discovery.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/app.h"
#include "server/jobs/protocol.h"
#include "server/jobs/spawn.h"
#include "server/log.h"

#define DISCOVERY_OUTPUT_LIMIT (4u << 20)

/* Asks a worker what is attached. Never fails: a failure becomes the
 * inventory's reason, and the answer says whether discovery itself failed
 * (as opposed to finding no GPU). */
static enum discovery_state discover(struct app *app, struct gpu_inventory *inv)
{
    struct worker_call call = {.mode = WORKER_DISCOVER};
    struct worker_argv wa;
    struct worker_reply r = {0};
    char *out = NULL, err[512], why[480];
    memset(inv, 0, sizeof *inv);
    worker_argv(&wa, app->self_exe, &call);
    int rc = child_run(app->self_exe, wa.argv, app->cfg.discovery_timeout_s,
                       DISCOVERY_OUTPUT_LIMIT, &out, why, sizeof why);
    if (rc != 0) /* child_run says how it ended; what ran is said here */
        snprintf(err, sizeof err, "its worker process: %s", why);
    if (rc == 0)
        rc = worker_reply_read(out, strlen(out), &r, err, sizeof err);
    if (rc == 0 && !r.ok) {
        snprintf(err, sizeof err, "%.400s", r.error);
        rc = -1;
    }
    if (rc == 0)
        rc = gpu_inventory_from_json(r.result, inv, err, sizeof err);
    worker_reply_free(&r);
    free(out);
    if (rc == 0)
        return DISCOVERY_DONE;
    gpu_inventory_free(inv);
    memset(inv, 0, sizeof *inv);
    snprintf(inv->reason, sizeof inv->reason, "device discovery failed: %.200s", err);
    return DISCOVERY_FAILED;
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
    enum discovery_state state = discover(app, &inv);
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
    app->discovery = state;
    pthread_mutex_unlock(&app->inv_lock);
}
