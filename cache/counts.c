/*
 * The request outcome both engines share (counts.h).
 */
#include "cache/counts.h"

#include <stdlib.h>

static const char *const miss_names[CACHE_MISS_CLASSES] = {
    "compulsory", "capacity", "associativity", "sector", "latency", "mshr"};

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

uint32_t cache_line_fill(struct cache_line *l, uint32_t want, uint64_t t, enum cache_miss cls,
                         const struct cache_timing *tm, struct cache_mshr *ms,
                         struct cache_counts *c)
{
    c->requests++;
    c->sectors += cache_popcount(want);
    c->miss[cls]++;
    l->sectors = want;
    l->ready = t + tm->latency;
    l->merges = 0;
    return fetch(want, t, tm, ms, c);
}

uint32_t cache_line_resident(struct cache_line *l, uint32_t want, uint64_t t,
                             const struct cache_timing *tm, struct cache_mshr *ms,
                             struct cache_counts *c, enum cache_outcome *out)
{
    uint32_t missing = want & ~l->sectors;
    c->requests++;
    c->sectors += cache_popcount(want);
    *out = CACHE_OUT_MISS;
    if (t < l->ready) {
        if (l->merges < tm->max_merge) {
            /* every wanted sector already on its way: the request waits on
             * that fetch (what a tag lookup counts as a hit, nothing goes
             * below); a sector not yet asked for is a sector miss of its own */
            c->miss[missing ? CACHE_MISS_SECTOR : CACHE_MISS_LATENCY]++;
            l->merges++;
            l->sectors |= missing;
            return missing ? fetch(missing, t, tm, ms, c) : 0;
        }
        c->miss[CACHE_MISS_MSHR]++;
        l->sectors |= want;
        l->ready = t + tm->latency;
        l->merges = 0;
        return fetch(want, t, tm, ms, c);
    }
    c->sector_hits += cache_popcount(want & l->sectors);
    if (!missing) {
        c->hits++;
        *out = CACHE_OUT_HIT;
        return 0;
    }
    c->miss[CACHE_MISS_SECTOR]++;
    l->sectors |= missing;
    l->ready = t + tm->latency;
    l->merges = 0;
    return fetch(missing, t, tm, ms, c);
}
