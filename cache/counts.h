/*
 * What a cache level counts, and what happens to a request once an engine
 * has decided whether its line is resident: the part of the model both
 * engines share, so that they differ only in how they decide residency.
 *
 * DESIGN
 * A request is for one line and a mask of its sectors. An engine decides
 * whether the line is resident (the exact engine from its LRU sets, the
 * reuse engine from the stack distance) and, if not, which class the miss
 * is; then cache_line_fill (not resident) or cache_line_resident (resident)
 * does the rest, the same way for both:
 * - A resident line whose fetch is still in flight (seq < ready: the fetch
 *   was issued less than `latency` requests of this stream ago) cannot hit.
 *   The request merges into the fetch's MSHR entry (a *latency* miss) while
 *   fewer than max_merge requests have merged into it; otherwise it is an
 *   *MSHR* miss and fetches again. Sectors not yet fetched are fetched.
 * - A resident line whose fetch is back hits on the sectors it holds; a
 *   request that needs a sector it does not hold is a *sector* miss and
 *   fetches those sectors (the line's fetch time restarts: in-flight state
 *   is kept per line, not per sector).
 * - A line not resident is a *compulsory* miss (never seen before), a
 *   *capacity* miss (a fully associative LRU cache of the same size would
 *   miss too) or an *associativity* (conflict) miss; it is filled with the
 *   request's sectors.
 * - A line a store discarded (write-through levels, below) and a load asks
 *   for again while a fully associative cache of the same size would still
 *   hold it is an *invalidated* miss: the store, not the cache's size or
 *   sets, lost it.
 * Every miss but a merged latency miss sends a request below (to L2) with
 * the sectors it fetches.
 * Stores. At a write-back, write-allocate level (the L2) a store is all of
 * the above, a load in every respect but its count. At a write-through,
 * no-allocate level (the L1) cache_store_through counts it instead: it is
 * looked up (a hit, a latency or sector miss on a resident line, else a
 * miss of the class the engine found), always sent below with the sectors
 * it writes, never fills, and never takes an MSHR (nothing comes back);
 * the engine then discards a resident line (counted as an invalidation).
 * The stores' share of every count is kept apart (struct
 * cache_store_counts), so loads and stores are reported each on its own. Time is the request's position in its stream
 * (the sorter's seq for L1). A ring of the last mshr fetch times tells
 * whether all MSHRs were busy when a fetch left: counted as mshr_full, a
 * stall the sorter's own MSHR limit already put into the order.
 */
#ifndef GPUPROBE_CACHE_COUNTS_H
#define GPUPROBE_CACHE_COUNTS_H

#include <stdint.h>

#include "cache/linemap.h"

enum cache_miss {
    CACHE_MISS_COMPULSORY,
    CACHE_MISS_CAPACITY,
    CACHE_MISS_CONFLICT,   /* "associativity" in the method's words */
    CACHE_MISS_SECTOR,
    CACHE_MISS_LATENCY,
    CACHE_MISS_MSHR,
    CACHE_MISS_INVALIDATED, /* the line was discarded by a store (write-through levels) */
    CACHE_MISS_CLASSES
};

/* Bits set in a sector mask (no popcount instruction is assumed). */
static inline uint32_t cache_popcount(uint32_t v)
{
    v = v - ((v >> 1) & 0x55555555u);
    v = (v & 0x33333333u) + ((v >> 2) & 0x33333333u);
    return (((v + (v >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24;
}

/* "compulsory", "capacity", "associativity", "sector", "latency", "mshr",
 * "invalidated". */
const char *cache_miss_name(enum cache_miss m);

/* The stores' part of a level's counts (the loads' part is the rest). */
struct cache_store_counts {
    uint64_t requests, hits;
    uint64_t sectors, sector_hits;
    uint64_t latency;               /* latency misses: in flight, merged (a lookup hit) */
    uint64_t capacity;              /* capacity misses (what a correction may win back) */
    uint64_t pending_sectors;
};

/* Counts of one level (or of one SM's share of it), loads and stores. */
struct cache_counts {
    uint64_t requests, hits;
    uint64_t sectors, sector_hits;
    uint64_t miss[CACHE_MISS_CLASSES];
    uint64_t below, below_sectors;  /* requests and sectors sent to the next level */
    uint64_t mshr_full;             /* fetches that left with every MSHR busy */
    uint64_t invalidations;         /* resident lines discarded by stores */
    uint64_t pending_sectors;       /* sectors a request found on their way (fetched, not
                                       back, merged into): tag lookup hits, not yet data */
    struct cache_store_counts stores;
};

/* Adds b to a. */
void cache_counts_add(struct cache_counts *a, const struct cache_counts *b);

/* The timing side of a level. */
struct cache_timing {
    uint32_t latency;    /* requests of the stream issued before a fetch returns; 0: instant */
    uint32_t mshr;       /* fetches in flight at once; 0: unlimited (not tracked) */
    uint32_t max_merge;  /* requests that may merge into one fetch in flight */
};

/* The fetch times of the last `mshr` fetches of one stream. */
struct cache_mshr {
    uint64_t *t;
    uint32_t n, head, cap;
};
int cache_mshr_init(struct cache_mshr *m, uint32_t cap);
void cache_mshr_free(struct cache_mshr *m);
void cache_mshr_reset(struct cache_mshr *m);

/* What became of a request (for the reuse engine's histograms). */
enum cache_outcome { CACHE_OUT_HIT, CACHE_OUT_MISS };

/* A request (a load; store 1: a store at a write-allocate level) for
 * `want` sectors of a resident line l at time t. Counts it in c and returns
 * the sectors to fetch from below (0: none). *out: HIT when it hit. */
uint32_t cache_line_resident(struct cache_line *l, uint32_t want, uint64_t t, int store,
                             const struct cache_timing *tm, struct cache_mshr *ms,
                             struct cache_counts *c, enum cache_outcome *out);

/* A request (store as above) for `want` sectors of line l, not resident: a
 * miss of class cls; the line is filled with those sectors. Returns want. */
uint32_t cache_line_fill(struct cache_line *l, uint32_t want, uint64_t t, int store, enum cache_miss cls,
                         const struct cache_timing *tm, struct cache_mshr *ms,
                         struct cache_counts *c);

/* A store of `want` sectors at a write-through, no-allocate level, at time
 * t: l is its line's state when resident (nothing in it is changed: the
 * engine discards the line after), NULL when not, and then cls is the
 * miss's class. Counts it in c; returns want, the sectors written below. */
uint32_t cache_store_through(const struct cache_line *l, uint32_t want, uint64_t t, enum cache_miss cls,
                             struct cache_counts *c, enum cache_outcome *out);

#endif
