/*
 * The request outcome both engines share (counts.h).
 */
#include "cache/counts.h"

#include <stdlib.h>

static const char *const miss_names[CACHE_MISS_CLASSES] = {
    "compulsory", "capacity", "associativity", "sector", "latency", "mshr", "invalidated"};

const char *cache_miss_name(enum cache_miss m)
{
    return (unsigned)m < CACHE_MISS_CLASSES ? miss_names[m] : "?";
}

void cache_counts_add(struct cache_counts *a, const struct cache_counts *b)
{
    a->requests += b->requests;
    a->hits += b->hits;
    a->sectors += b->sectors;
    a->sector_hits += b->sector_hits;
    for (int i = 0; i < CACHE_MISS_CLASSES; i++)
        a->miss[i] += b->miss[i];
    a->below += b->below;
    a->below_sectors += b->below_sectors;
    a->mshr_full += b->mshr_full;
    a->invalidations += b->invalidations;
    a->pending_sectors += b->pending_sectors;
    a->stores.pending_sectors += b->stores.pending_sectors;
    a->stores.requests += b->stores.requests;
    a->stores.hits += b->stores.hits;
    a->stores.sectors += b->stores.sectors;
    a->stores.sector_hits += b->stores.sector_hits;
    a->stores.latency += b->stores.latency;
    a->stores.capacity += b->stores.capacity;
}

int cache_mshr_init(struct cache_mshr *m, uint32_t cap)
{
    m->n = m->head = 0;
    m->cap = cap;
    m->t = NULL;
    if (cap && !(m->t = malloc(cap * sizeof *m->t)))
        return -1;
    return 0;
}

void cache_mshr_reset(struct cache_mshr *m)
{
    m->n = m->head = 0;
}

void cache_mshr_free(struct cache_mshr *m)
{
    free(m->t);
    m->t = NULL;
}

/* A fetch leaves at t: counts it below and whether every MSHR was busy. */
static uint32_t fetch(uint32_t sectors, uint64_t t, const struct cache_timing *tm,
                      struct cache_mshr *ms, struct cache_counts *c)
{
    c->below++;
    c->below_sectors += cache_popcount(sectors);
    if (ms->cap) {
        /* the oldest of the last cap fetches still in flight: all busy */
        if (ms->n == ms->cap && ms->t[ms->head] + tm->latency > t)
            c->mshr_full++;
        ms->t[ms->head] = t;
        ms->head = ms->head + 1 == ms->cap ? 0 : ms->head + 1;
        if (ms->n < ms->cap)
            ms->n++;
    }
    return sectors;
}

/* A request of n sectors arrives (a store's counted in the stores' part too). */
static void count_request(struct cache_counts *c, uint32_t n, int store)
{
    c->requests++;
    c->sectors += n;
    if (store) {
        c->stores.requests++;
        c->stores.sectors += n;
    }
}

/* It hit (whole: all its sectors) on n sectors. */
static void count_hit(struct cache_counts *c, uint32_t n, int whole, int store)
{
    c->sector_hits += n;
    c->hits += (uint64_t)whole;
    if (store) {
        c->stores.sector_hits += n;
        c->stores.hits += (uint64_t)whole;
    }
}

/* n of its sectors were found on their way. */
static void count_pending(struct cache_counts *c, uint32_t n, int store)
{
    c->pending_sectors += n;
    if (store)
        c->stores.pending_sectors += n;
}

/* A miss of class m. */
static void count_miss(struct cache_counts *c, enum cache_miss m, int store)
{
    c->miss[m]++;
    if (store && m == CACHE_MISS_LATENCY)
        c->stores.latency++;
    if (store && m == CACHE_MISS_CAPACITY)
        c->stores.capacity++;
}

uint32_t cache_line_fill(struct cache_line *l, uint32_t want, uint64_t t, int store, enum cache_miss cls,
                         const struct cache_timing *tm, struct cache_mshr *ms,
                         struct cache_counts *c)
{
    count_request(c, cache_popcount(want), store);
    count_miss(c, cls, store);
    l->sectors = want;
    l->ready = t + tm->latency;
    l->merges = 0;
    return fetch(want, t, tm, ms, c);
}

uint32_t cache_line_resident(struct cache_line *l, uint32_t want, uint64_t t, int store,
                             const struct cache_timing *tm, struct cache_mshr *ms,
                             struct cache_counts *c, enum cache_outcome *out)
{
    uint32_t missing = want & ~l->sectors;
    count_request(c, cache_popcount(want), store);
    *out = CACHE_OUT_MISS;
    if (t < l->ready) {
        if (l->merges < tm->max_merge) {
            /* every wanted sector already on its way: the request waits on
             * that fetch (what a tag lookup counts as a hit, nothing goes
             * below); a sector not yet asked for is a sector miss of its own */
            count_miss(c, missing ? CACHE_MISS_SECTOR : CACHE_MISS_LATENCY, store);
            count_pending(c, cache_popcount(want & l->sectors), store);
            l->merges++;
            l->sectors |= missing;
            return missing ? fetch(missing, t, tm, ms, c) : 0;
        }
        count_miss(c, CACHE_MISS_MSHR, store);
        l->sectors |= want;
        l->ready = t + tm->latency;
        l->merges = 0;
        return fetch(want, t, tm, ms, c);
    }
    count_hit(c, cache_popcount(want & l->sectors), !missing, store);
    if (!missing) {
        *out = CACHE_OUT_HIT;
        return 0;
    }
    count_miss(c, CACHE_MISS_SECTOR, store);
    l->sectors |= missing;
    l->ready = t + tm->latency;
    l->merges = 0;
    return fetch(missing, t, tm, ms, c);
}

uint32_t cache_store_through(const struct cache_line *l, uint32_t want, uint64_t t, enum cache_miss cls,
                             struct cache_counts *c, enum cache_outcome *out)
{
    count_request(c, cache_popcount(want), 1);
    *out = CACHE_OUT_MISS;
    if (!l) {
        count_miss(c, cls, 1);
    } else if (want & ~l->sectors) {
        count_miss(c, CACHE_MISS_SECTOR, 1);      /* some of its sectors are not there */
        if (t >= l->ready)
            count_hit(c, cache_popcount(want & l->sectors), 0, 1);
        else
            count_pending(c, cache_popcount(want & l->sectors), 1);
    } else if (t < l->ready) {
        count_miss(c, CACHE_MISS_LATENCY, 1);     /* there, on their way: a lookup hit */
        count_pending(c, cache_popcount(want), 1);
    } else {
        count_hit(c, cache_popcount(want), 1, 1);
        *out = CACHE_OUT_HIT;
    }
    /* written through: the sectors go below, and nothing comes back to wait for */
    c->below++;
    c->below_sectors += cache_popcount(want);
    return want;
}
