/*
 * The daemon's shared state (see app.h): its set-up and release, and device
 * references resolved against the inventory.
 */
#include "server/app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fleet/index.h"
#include "server/http/auth.h"
#include "server/http/req_stats.h"
#include "server/http/resp_cache.h"

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

void app_init(struct app *app, const struct config *cfg)
{
    memset(app, 0, sizeof *app);
    app->cfg = *cfg;
    pthread_mutex_init(&app->inv_lock, NULL);
    /* Workers are this very binary, even if the file on disk is replaced. */
    snprintf(app->self_exe, sizeof app->self_exe, "/proc/self/exe");
    app->resp_cache = resp_cache_new(32);
    app->fleet_cache = resp_cache_new(8);
    app->fleet = fleet_index_new();
    if (gethostname(app->hostname, sizeof app->hostname - 1) < 0)
        snprintf(app->hostname, sizeof app->hostname, "unknown");
}

void app_release(struct app *app)
{
    store_close(app->db);
    auth_free(app->auth);
    gpu_inventory_free(&app->inv);
    free(app->devices_body);
    resp_cache_free(app->resp_cache);
    resp_cache_free(app->fleet_cache);
    fleet_index_free(app->fleet);
    req_stats_free(app->req_stats);
    pthread_mutex_destroy(&app->inv_lock);
}
