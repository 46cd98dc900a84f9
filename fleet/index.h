/*
 * The fleet in memory: every device the store knows, with its model, host
 * and newest fleet figures, grouped by model with each figure's
 * distribution and outliers computed once per change.
 *
 * DESIGN
 * A fleet view compares every figure of every GPU of a model: at 10,000
 * GPUs that is two million numbers, which SQLite reads in seconds but a
 * page of memory holds. So the daemon loads them once (device_figures
 * and devices) and keeps them current cheaply: the store's result hook marks a
 * device touched (fleet_index_touch, inside the transaction that saves the
 * result, with the store generation of that moment), and the next reader
 * re-reads the touched devices alone. The generation says when the touch
 * is safe to clear: a device touched at generation g has been committed
 * (or rolled back) once the generation has moved past g; until then it is
 * re-read at every sync. A model's distributions are computed on the first
 * view after one of its devices changed and kept until the next change,
 * so a view of an unchanged fleet costs the JSON alone.
 * Thread-safe: one mutex; views hold it while they read.
 */
#ifndef GPUPROBE_FLEET_INDEX_H
#define GPUPROBE_FLEET_INDEX_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "db/store.h"
#include "fleet/stats.h"

struct fleet_index;

struct fleet_index *fleet_index_new(void);
void fleet_index_free(struct fleet_index *ix);

/* Marks device's figures changed by a transaction of the store that began
 * at generation gen (called from the store's result hook). */
void fleet_index_touch(struct fleet_index *ix, const char *device, uint64_t gen);

/* Brings the index up to the store: the first call loads everything, later
 * ones re-read the devices touched since (and any device new to the store).
 * 0 with the index's version in *version (when not NULL: equal versions
 * give equal views, so an answer can be kept under it), or -1 with the
 * reason. */
int fleet_index_sync(struct fleet_index *ix, store *s, uint64_t *version, char *err,
                     size_t errlen);

/* What a view asks for: NULL or "" for any. */
struct fleet_query {
    const char *model;
    const char *host;
    struct fleet_rule rule;
};

/* GET /api/v1/fleet, as JSON text (malloc'd, *len bytes): the rule, per
 * model its devices, hosts, every figure's distribution with its outlier
 * count, and its outliers (each with device, host, figure, value, median,
 * deviation, the job that measured it); and the devices matching the query
 * with their outlier counts. Models and outliers are restricted by model,
 * devices and outliers by host; distributions are always of the whole
 * model. NULL when memory ran out. Docs: docs/api.md "Fleet".
 * Text rather than a json_t: at 10,000 GPUs the device list is most of the
 * answer, and writing it from names encoded once costs a tenth of building
 * and encoding 10,000 objects. */
char *fleet_index_view(struct fleet_index *ix, const struct fleet_query *q, size_t *len);

/* GET /api/v1/fleet/distribution: one figure of one model, every device's
 * value (sorted) with host, job and whether it is an outlier, and the
 * bounds. NULL with the reason in err when the model or figure is unknown
 * (*unknown set) or memory ran out. */
json_t *fleet_index_distribution(struct fleet_index *ix, const char *model, const char *metric,
                                 const struct fleet_rule *rule, int *unknown, char *err,
                                 size_t errlen);

#endif
