/*
 * The daemon's shared state, handed to every handler through the request.
 *
 * The store and the scheduler are thread-safe on their own. The device
 * inventory is written once, by discovery at start-up, and read by handlers
 * under inv_lock; its encoded JSON is kept ready because dashboards ask for
 * it far more often than it changes.
 */
#ifndef GPUPROBE_SERVER_APP_H
#define GPUPROBE_SERVER_APP_H

#include <pthread.h>
#include <stdint.h>

#include "db/store.h"
#include "probes/gpu/devices.h"
#include "server/config.h"

struct auth;
struct scheduler;
struct http_server;
struct req_stats;
struct resp_cache;
struct fleet_index;

enum discovery_state { DISCOVERY_PENDING, DISCOVERY_DONE, DISCOVERY_FAILED };

struct app {
    struct config cfg;
    store *db;
    struct auth *auth;
    /* set once discovery has sized it, while HTTP already answers: until
     * then requests see NULL (jobs wait in the store, readyz says 503) */
    struct scheduler *_Atomic sched;
    char self_exe[4096];           /* this binary, for spawning workers */
    char hostname[256];
    int64_t host_id;

    pthread_mutex_t inv_lock;
    struct gpu_inventory inv;
    enum discovery_state discovery;
    char *devices_body;            /* GET /api/v1/devices, encoded */
    size_t devices_body_len;

    struct resp_cache *resp_cache; /* encoded listings (jobs, devices), by query and store
                                      generation */
    struct resp_cache *fleet_cache; /* encoded fleet views, by query and fleet index version */
    struct fleet_index *fleet;     /* the devices compared with their peers (fleet/index.h) */
    struct req_stats *req_stats;   /* the transport's request counts, read by /metrics */
    /* the transport, set once it serves and until it has stopped (NULL
     * outside): /metrics reads its connection guard's counts */
    struct http_server *_Atomic http;
};

/* Fills app from cfg (a copy is kept); the store, tokens, scheduler and
 * inventory are set up later by serve.c. */
void app_init(struct app *app, const struct config *cfg);
/* Frees what app_init and the daemon's start-up created (not the scheduler,
 * which serve.c stops first). */
void app_release(struct app *app);

/* Resolves a device reference (a UUID string or an integer index) against
 * the inventory. Writes the UUID into uuid (>= 48 bytes) and returns 0; -1 with
 * the reason in err if no such device is attached now. */
int app_resolve_device(struct app *app, const char *uuid_or_null, long long index,
                       char *uuid, char *err, size_t errlen);

#endif
