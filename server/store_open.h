/*
 * Opening the store as gpuprobe uses it: the database with, installed, the
 * work every saved result does besides its own rows.
 *
 * DESIGN
 * The daemon and every command that writes results (probe --db, import,
 * push) open the store here, so a result saved by any of them also stores
 * the device's fleet figures (fleet/record.h) and, when the store names an
 * upstream, its row of the outbox (server/push/push.h) in the same
 * transaction, and figures derived under older rules are derived again
 * once.
 */
#ifndef GPUPROBE_SERVER_STORE_OPEN_H
#define GPUPROBE_SERVER_STORE_OPEN_H

#include <stddef.h>

#include "db/store.h"

struct fleet_index;

/* store_open, the result hook (which also tells fleet, when not NULL, of
 * each device whose figures changed), then the figures brought up to date;
 * *rederived (may be NULL) says how many results they were derived from
 * again (0: they were current). -1 with the reason. */
int gpuprobe_store_open(store **out, const char *path, struct fleet_index *fleet,
                        size_t *rederived, char *err, size_t errlen);

#endif
