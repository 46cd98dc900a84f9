/*
 * Keeping each device's fleet figures with its results.
 *
 * DESIGN
 * fleet_record_result is meant for the store's result hook (db/fleet_store.h):
 * inside the transaction that saves a result, it reads the figures off the
 * document (metrics.h) and stores them, with the driver the result was
 * measured under, as the device's newest, so a result and its figures are
 * saved together whichever way the result came (a job, `gpuprobe probe
 * --db`, an import). Figures derived under another FLEET_METRICS_VERSION
 * are derived again from the stored results once, at start
 * (fleet_record_refresh), so a change to what a document yields reaches
 * old results too.
 */
#ifndef GPUPROBE_FLEET_RECORD_H
#define GPUPROBE_FLEET_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "db/fleet_store.h"

struct fleet_index;

/* Stores the figures of job_id's result (a store_result_hook_fn's work) and
 * marks the device touched in ix (may be NULL: no index in this process). */
int fleet_record_result(struct store_tx *tx, int64_t job_id, const json_t *result,
                        struct fleet_index *ix, char *err, size_t errlen);

/* Derives every device's figures again from its stored results when they
 * were derived under another version, in one transaction; *results says how
 * many results were read (0: nothing to do). */
int fleet_record_refresh(store *s, size_t *results, char *err, size_t errlen);

#endif
