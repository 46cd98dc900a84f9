/*
 * Encoded responses kept while the data behind them is unchanged.
 *
 * DESIGN
 * Dashboards poll the same listings every few seconds, and a listing only
 * changes when the data behind it does. Each entry is tagged with a
 * generation of that data (the store's write generation for listings read
 * from the store, the fleet index's version for fleet views) read before
 * the data was; an entry whose tag differs from the current generation is
 * stale and never served. The table is small and fixed (oldest entry
 * replaced first); one mutex guards it, held only to compare keys and copy
 * bytes. Not for data that changes without its generation moving.
 */
#ifndef GPUPROBE_SERVER_HTTP_RESP_CACHE_H
#define GPUPROBE_SERVER_HTTP_RESP_CACHE_H

#include <stddef.h>
#include <stdint.h>

struct resp_cache;

struct resp_cache *resp_cache_new(size_t entries);
void resp_cache_free(struct resp_cache *c);

/* On a hit (same key, same generation) returns 1 with a malloc'd copy of the
 * body in *body; else 0. */
int resp_cache_get(struct resp_cache *c, const char *key, uint64_t generation, char **body,
                   size_t *len);
/* Remembers body for key at generation (the generation read BEFORE the data). */
void resp_cache_put(struct resp_cache *c, const char *key, uint64_t generation, const char *body,
                    size_t len);

#endif
