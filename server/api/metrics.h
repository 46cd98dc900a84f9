/*
 * GET /metrics: the daemon and the probe figures it holds, in the
 * Prometheus text format (server/http/prom_text.h; docs/metrics.md lists
 * every family).
 *
 * DESIGN
 * The page is written in two parts, each a function of its own so a unit
 * test can write it without a daemon: the daemon's own families (jobs,
 * the queue, worker failures, HTTP requests, the store's size, the build),
 * and the newest probe figures of a list of devices as gauges, named as
 * fleet/metrics.h names them and labelled as NVIDIA's dcgm-exporter labels
 * GPUs, so the two join on the GPU. The handler (metrics.c) picks the
 * devices (config metrics_devices) and calls both.
 */
#ifndef GPUPROBE_SERVER_API_METRICS_H
#define GPUPROBE_SERVER_API_METRICS_H

#include <stddef.h>

#include "db/store.h"
#include "server/http/prom_text.h"

struct http_server;
struct req_stats;
struct route;

/* The labels every probe figure of a device carries, in this order, as
 * dcgm-exporter names them (docs/metrics.md says why model_name is not
 * dcgm's modelName). */
#define METRICS_LABEL_GPU "gpu"
#define METRICS_LABEL_UUID "UUID"
#define METRICS_LABEL_MODEL "model_name"
#define METRICS_LABEL_HOST "Hostname"
/* The label that holds a categorical figure's category. */
#define METRICS_LABEL_CATEGORY "value"

/* A device whose figures are written. */
struct metrics_device {
    const char *uuid;
    const char *name;          /* the model, as the driver names it */
    const char *host;          /* the host it was measured on */
    int index;                 /* its index on this host; -1 when not attached here */
};

/* The stored figures of devs[0..n) (db/fleet_store.h), one gauge family
 * per family of fleet/metrics.h that any of them has, each sample with the
 * device's labels and the figure's own; a categorical figure is a sample of
 * value 1 with its category in the label "value". A figure of a family the
 * table does not know is left out. 0, or -1 with the reason in err. */
int metrics_write_figures(store *db, const struct metrics_device *devs, size_t n,
                          struct prom_page *p, char *err, size_t errlen);

/* The store's jobs by kind and state (every kind of the registry in every
 * state, zeros included, and any other kind the store holds), and the
 * number queued. 0, or -1 with the reason in err. */
int metrics_write_jobs(store *db, struct prom_page *p, char *err, size_t errlen);
/* Worker failures by kind (every kind of the registry) and reason. */
void metrics_write_worker_failures(struct prom_page *p);
/* The connection guard's families (server/http/conn_guard.h); nothing when
 * http is NULL (the transport not serving yet). */
void metrics_write_connections(struct http_server *http, struct prom_page *p);
/* The requests counted in s for routes[0..req_stats_routes(s)): counts by
 * route and status code, and a duration histogram per route requested. */
void metrics_write_http(const struct req_stats *s, const struct route *routes,
                        struct prom_page *p);
/* The size of the database at db_path and its write-ahead log, and this
 * gpuprobe's version. */
void metrics_write_build_and_store(const char *db_path, struct prom_page *p);

#endif
