/*
 * What the store keeps for the fleet: each device's newest fleet figures
 * (device_figures), named settings of the store (store_meta), and the hook
 * through which the layer above learns of every result saved.
 *
 * DESIGN
 * db knows nothing of what a figure means: the figures arrive as names and
 * values from the caller (fleet/, which reads them off result documents),
 * and the hook lets that caller add them in the very transaction that saves
 * the result, whichever way it arrives (a job the scheduler finished,
 * `gpuprobe probe --db`, an import), so a result and its figures are never
 * stored apart. A result's figures are one row (per device and result
 * kind), not one row each: a central takes thousands of results a second,
 * and 200 index updates per result would be most of its work.
 */
#ifndef GPUPROBE_DB_FLEET_STORE_H
#define GPUPROBE_DB_FLEET_STORE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "db/store.h"

/* Called inside the transaction of every result saved, after the kind's
 * saver, with the job's id and its result; a nonzero answer rolls the whole
 * transaction back (-1 with the reason in err). */
typedef int store_result_hook_fn(void *ctx, struct store_tx *tx, int64_t job_id,
                                 const json_t *result, char *err, size_t errlen);
/* Installs the hook (NULL removes it). Contract: called before the store is
 * shared between threads. */
void store_set_result_hook(store *s, store_result_hook_fn *fn, void *ctx);

/* The store's generation when tx began (store_generation): the commit of tx
 * makes it larger. */
uint64_t store_tx_generation(const struct store_tx *tx);

/* The job a result belongs to, read inside tx: its kind and device ("" for
 * a CPU job), and whether it was imported (origin_host set). 0, or -1. */
struct store_job_brief {
    char kind[32];
    char device[48];
    int imported;
};
int store_job_brief_tx(struct store_tx *tx, int64_t job_id, struct store_job_brief *out,
                       char *err, size_t errlen);

/* One figure: a number, or a category when text is not NULL. */
struct store_metric {
    const char *name;
    double value;
    const char *text;
};

/* Writes the figures of job_id's result (of kind, on device, measured under
 * driver: NULL when the result does not say) as measured at the
 * transaction's measured time, replacing the device's figures from its last
 * result of that kind unless that one was measured later (an older result
 * imported afterwards changes nothing). Contract: names and texts hold no
 * tab or newline (fleet/metrics.h makes them so). */
int store_device_metrics_put(struct store_tx *tx, const char *device, const char *kind,
                             int64_t job_id, const char *driver, const struct store_metric *m,
                             size_t n, char *err, size_t errlen);

/* A stored figure, as handed to a reader's callback (valid during the call). */
struct store_metric_row {
    const char *device;
    const char *metric;
    double value;
    const char *text;            /* NULL for a number */
    int64_t job_id;
    int64_t measured_ms;
    const char *driver;          /* the driver its result was measured under; NULL: unknown */
};
/* Calls fn for every figure of device (every device when NULL), each the
 * newest of the device's rows that has it, ordered by device then name;
 * stops at fn's first nonzero answer and returns it. */
int store_device_metrics_each(store *s, const char *device,
                              int (*fn)(void *ctx, const struct store_metric_row *r), void *ctx,
                              char *err, size_t errlen);

/* Derives the figures again when the store setting `setting` is not
 * `version` (or not set): in one transaction, removes every figure, hands
 * every succeeded result that has a device to fn, oldest first, each with
 * the transaction's measured time set to when its job finished, and sets the
 * setting. *results says how many results fn got (0: the figures were
 * current). */
int store_device_metrics_rebuild(store *s, const char *setting, const char *version,
                                 store_result_hook_fn *fn, void *ctx, size_t *results,
                                 char *err, size_t errlen);

#endif
