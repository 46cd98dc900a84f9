/*
 * The exact engine: one cache level simulated request by request — a
 * set-associative LRU cache, with a fully associative LRU shadow of the
 * same size beside it to classify misses.
 *
 * DESIGN
 * A request looks its line up in the level's line map (every line seen:
 * a line never seen is a compulsory miss). The shadow is updated on every
 * request; a miss of the real cache that the shadow hits is an
 * associativity (conflict) miss, one the shadow misses too a capacity
 * miss (Hill's three Cs). Residency decided, counts.h does the rest
 * (latency, MSHR and sector misses, what goes below), exactly as the reuse
 * engine does: on a fully associative cache the two engines count the same.
 * Costs: O(1) per request (a hash probe and two list moves); memory the
 * line map (distinct lines seen) plus 12 bytes a slot for both arrays.
 */
#ifndef GPUPROBE_CACHE_EXACT_H
#define GPUPROBE_CACHE_EXACT_H

#include "cache/counts.h"
#include "cache/geometry.h"
#include "cache/linemap.h"
#include "cache/lru.h"

struct cache_exact {
    const struct cache_geom *g;
    struct cache_timing tm;
    struct cache_linemap map;
    struct cache_lru sa, fa;
    struct cache_mshr ms;
};

/* g must be checked and outlive e. 0, or -1 out of memory. */
int cache_exact_init(struct cache_exact *e, const struct cache_geom *g, const struct cache_timing *tm);
void cache_exact_free(struct cache_exact *e);
/* Back to an empty cache that has seen nothing, keeping the memory. */
void cache_exact_reset(struct cache_exact *e);

/* One request for `want` sectors of line number `line` at time t, counted
 * in c. Returns the sectors fetched from below (0: none), or -1 out of
 * memory (as int64). */
int64_t cache_exact_access(struct cache_exact *e, uint64_t line, uint32_t want, uint64_t t,
                           struct cache_counts *c);

#endif
