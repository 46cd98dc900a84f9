/*
 * The exact engine: one cache level simulated request by request — a
 * set-associative LRU cache, with a fully associative LRU shadow of the
 * same size beside it to classify misses.
 *
 * DESIGN
 * A request looks its line up in the level's line map (a line never seen
 * is a compulsory miss). The shadow is updated on every
 * request; a miss of the real cache that the shadow hits is an
 * associativity (conflict) miss, one the shadow misses too a capacity
 * miss (Hill's three Cs). Residency decided, counts.h does the rest
 * (latency, MSHR and sector misses, what goes below), exactly as the reuse
 * engine does: on a fully associative cache the two engines count the same.
 * The shadow is a ring of last uses (fifo.h). Bounded (the L2), the line
 * map (linemap.h) holds a line while it is in the
 * cache or in the shadow, and dropped when it has left both — its state
 * (arrival, sectors, merges) is only read while it is resident, and a
 * refill starts it afresh — so what stays of a line gone from both is its
 * bit in the seen set, which is all a compulsory miss needs.
 * Unbounded (an L1), it keeps every line seen. Dense (the L2,
 * cache_exact_init_dense): lines are named by ids (lineid.h) and their
 * states are an array, so nothing is looked up or dropped — a line's state
 * is kept as an unbounded map keeps it, which counts the same — and with
 * rows a line is resident when its set's row holds its id, so an eviction
 * writes nothing but the row.
 * Stores (counts.h): at a write-allocate level a store is a request like
 * any other. At a write-through, no-allocate level it is looked up without
 * being added to anything — the map (a line only stored to stays unseen:
 * its first load is compulsory), the sets' recency, the shadow — and a
 * resident line it finds is discarded from its set (its slot emptied, its
 * sectors cleared, which is what marks it invalidated). The shadow holds
 * the recency of the loads alone, so a load that misses a line a store
 * discarded is an invalidated miss while the shadow still has the line and
 * a capacity miss once it has not (a cache of this size would have lost
 * it anyway).
 * Costs: O(1) per request (a hash probe, on a line not held a probe of the
 * seen set, a set move and a ring append); bounded, memory at most
 * 2 x lines held states (24 bytes, an 8-byte key and ~21 of buckets), 12 bytes a
 * slot for the set-associative LRU (4 for sets of <= 16 ways), 8-9 for the
 * ring, and the seen set (1-12 bytes a distinct line); dense, 24 bytes and
 * a bit an id, the rows and the ring.
 */
#ifndef GPUPROBE_CACHE_EXACT_H
#define GPUPROBE_CACHE_EXACT_H

#include "cache/counts.h"
#include "cache/fifo.h"
#include "cache/geometry.h"
#include "cache/linemap.h"
#include "cache/lru.h"

struct cache_exact {
    const struct cache_geom *g;
    struct cache_timing tm;
    struct cache_linemap map;
    struct cache_lru sa;
    struct cache_fa fa;             /* the fully associative shadow */
    struct cache_mshr ms;
    struct cache_ring_pf pf;        /* the shadow's coming victims, prefetched up to */
    int by_row;                     /* dense with rows: a line is resident when its set's row
                                       holds it (its slot is not kept: an eviction then
                                       touches no state but the row) */
};

/* g must be checked and outlive e. bounded: the line map holds only the
 * lines in the cache or the shadow, and a seen set the rest (the L2, where
 * the trace's distinct lines outnumber the cache's by far); 0: every line
 * seen stays in the map (an L1, one SM's lines, where a lookup that finds
 * every line at once is faster). The counts are the same either way. 0, or
 * -1 out of memory. */
int cache_exact_init(struct cache_exact *e, const struct cache_geom *g, const struct cache_timing *tm,
                     int bounded);
/* An L2 over dense line ids below `ids` (linemap.h, dense): every line
 * argument below is then an id, and the set is the caller's
 * (cache_exact_access_set, cache_exact_prefetch_set: the id says nothing
 * of the address). The counts are those of cache_exact_init's engines on
 * the lines the ids stand for. 0, or -1 out of memory. */
int cache_exact_init_dense(struct cache_exact *e, const struct cache_geom *g, const struct cache_timing *tm,
                           uint32_t ids);
void cache_exact_free(struct cache_exact *e);
/* Back to an empty cache that has seen nothing, keeping the memory. */
void cache_exact_reset(struct cache_exact *e);

/* Asks the processor for what a request for `line` will touch, in stages
 * issued some requests apart (0 first): 0 its buckets (line map, seen
 * set); 1 its state and its set's LRU lists (those buckets are in by
 * then); 2 the state and line number of the line its set would evict; 3
 * that line's bucket (a drop looks it up). Also, bounded, the shadow's
 * coming victims: their states and line numbers at stage 2, their buckets
 * at stage 3, each once (e->pf). Reads the engine and moves e->pf only:
 * the counts do not depend on it. */
void cache_exact_prefetch(struct cache_exact *e, uint64_t line, int stage);
/* The same for a line of set `set` (cache_set_of's; a dense engine's
 * lines are ids: the caller knows their sets). */
void cache_exact_prefetch_set(struct cache_exact *e, uint64_t line, uint32_t set, int stage);

/* One request (store: 1 for a store, atomic or reduction) for `want`
 * sectors of line number `line` at time t, counted in c. Returns the
 * sectors fetched from below, or a store's written through (0: none), or
 * -1 out of memory (as int64). */
int64_t cache_exact_access(struct cache_exact *e, uint64_t line, uint32_t want, uint64_t t, int store,
                           struct cache_counts *c);
/* The same for a line of set `set` (cache_set_of's). */
int64_t cache_exact_access_set(struct cache_exact *e, uint64_t line, uint32_t set, uint32_t want, uint64_t t,
                               int store, struct cache_counts *c);

#endif
