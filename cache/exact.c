/*
 * The exact engine (exact.h).
 */
#include "cache/exact.h"

#include <string.h>

/* The parts beside the line map (made by the caller). */
static int init_rest(struct cache_exact *e, const struct cache_geom *g, const struct cache_timing *tm)
{
    if (cache_lru_init(&e->sa, g->sets, g->assoc) ||
        cache_fa_init(&e->fa, g->lines) || cache_mshr_init(&e->ms, tm->mshr)) {
        cache_exact_free(e);
        return -1;
    }
    return 0;
}

int cache_exact_init(struct cache_exact *e, const struct cache_geom *g, const struct cache_timing *tm,
                     int bounded)
{
    memset(e, 0, sizeof *e);
    e->g = g;
    e->tm = *tm;
    if (cache_linemap_init(&e->map, bounded) ||
        (bounded && cache_linemap_reserve(&e->map, g->lines > CACHE_NONE / 2 ? CACHE_NONE - 1 : 2 * g->lines + 1))) {
        cache_exact_free(e);
        return -1;
    }
    return init_rest(e, g, tm);
}

int cache_exact_init_dense(struct cache_exact *e, const struct cache_geom *g, const struct cache_timing *tm,
                           uint32_t ids)
{
    memset(e, 0, sizeof *e);
    e->g = g;
    e->tm = *tm;
    if (cache_linemap_init_dense(&e->map, ids) || init_rest(e, g, tm)) {
        cache_exact_free(e);
        return -1;
    }
    e->by_row = e->sa.rows;
    return 0;
}

void cache_exact_free(struct cache_exact *e)
{
    cache_linemap_free(&e->map);
    cache_lru_free(&e->sa);
    cache_fa_free(&e->fa);
    cache_mshr_free(&e->ms);
}

void cache_exact_reset(struct cache_exact *e)
{
    memset(&e->pf, 0, sizeof e->pf);
    cache_linemap_reset(&e->map);
    cache_lru_reset(&e->sa);
    cache_fa_reset(&e->fa);
    cache_mshr_reset(&e->ms);
}

/* Is line index id (state l, of set `set`) in the cache? */
static inline int resident(const struct cache_exact *e, const struct cache_line *l, uint32_t set, uint32_t id)
{
    return e->by_row ? cache_lru_row_has(&e->sa, set, id) : l->slot != CACHE_NONE;
}

/* A store at a write-through, no-allocate level: looked up, never added. */
static int64_t store_through(struct cache_exact *e, uint64_t line, uint32_t set, uint32_t want, uint64_t t,
                             struct cache_counts *c)
{
    uint32_t id = cache_linemap_find(&e->map, line);
    struct cache_line *l = id == CACHE_NONE ? NULL : e->map.lines + id;
    enum cache_outcome out;
    if (l && resident(e, l, set, id)) {
        cache_store_through(l, want, t, CACHE_MISS_COMPULSORY, c, &out);
        cache_lru_remove(&e->sa, set, l->slot, id);
        l->slot = CACHE_NONE;
        l->sectors = 0; /* invalidated: what a later load's miss is classed by */
        c->invalidations++;
        if (l->shadow == CACHE_NONE && e->map.bounded)
            cache_linemap_drop(&e->map, id);
        return want;
    }
    /* not resident: the class a load would get, the shadow left as it is */
    enum cache_miss cls = !l ? (e->map.bounded && cache_seen_has(&e->map.seen, line) ? CACHE_MISS_CAPACITY
                                                                                      : CACHE_MISS_COMPULSORY)
                          : l->shadow == CACHE_NONE ? CACHE_MISS_CAPACITY
                          : l->sectors == 0         ? CACHE_MISS_INVALIDATED
                                                    : CACHE_MISS_CONFLICT;
    return cache_store_through(NULL, want, t, cls, c, &out);
}

int64_t cache_exact_access(struct cache_exact *e, uint64_t line, uint32_t want, uint64_t t, int store,
                           struct cache_counts *c)
{
    return cache_exact_access_set(e, line, cache_set_of(e->g, line), want, t, store, c);
}

int64_t cache_exact_access_set(struct cache_exact *e, uint64_t line, uint32_t set, uint32_t want, uint64_t t,
                               int store, struct cache_counts *c)
{
    if (store && e->g->write == CACHE_WRITE_THROUGH_NO_ALLOCATE)
        return store_through(e, line, set, want, t, c);
    int fresh;
    uint32_t id = cache_linemap_get(&e->map, line, &fresh), ev;
    if (id == CACHE_NONE)
        return -1;
    struct cache_line *lines = e->map.lines, *l = lines + id;
    int shadow_hit = cache_fa_use(&e->fa, lines, id, &ev);
    if (ev != CACHE_NONE && e->map.bounded && lines[ev].slot == CACHE_NONE)
        cache_linemap_drop(&e->map, ev);
    if (resident(e, l, set, id)) {
        enum cache_outcome out;
        cache_lru_touch(&e->sa, set, l->slot, id);
        return cache_line_resident(l, want, t, store, &e->tm, &e->ms, c, &out);
    }
    /* a line a store discarded (sectors cleared) that the shadow still
     * holds was lost to the store, not to the sets */
    enum cache_miss cls = fresh         ? CACHE_MISS_COMPULSORY
                          : !shadow_hit ? CACHE_MISS_CAPACITY
                          : l->sectors  ? CACHE_MISS_CONFLICT
                                        : CACHE_MISS_INVALIDATED;
    l->slot = cache_lru_insert(&e->sa, set, id, &ev);
    if (ev != CACHE_NONE && !e->by_row &&
        (lines[ev].slot = CACHE_NONE, lines[ev].shadow == CACHE_NONE) && e->map.bounded)
        cache_linemap_drop(&e->map, ev);
    return cache_line_fill(l, want, t, store, cls, &e->tm, &e->ms, c);
}

/* How many positions past the shadow's oldest mark its coming victims are
 * prefetched: states and line numbers, then (some requests later, fewer
 * ahead) buckets. About one victim leaves a request. */
#define RING_AHEAD_STATE 24u
#define RING_AHEAD_BUCKET 10u

void cache_exact_prefetch(struct cache_exact *e, uint64_t line, int stage)
{
    cache_exact_prefetch_set(e, line, cache_set_of(e->g, line), stage);
}

/* Dense (ids: no buckets): 0 the line's state and seen bit, and its set's
 * row; 2 (its state is in) the ring position a shadow hit empties, the
 * state of the line its set would evict, and the states of the shadow's
 * coming victims; 1 and 3 nothing. */
static void prefetch_dense(struct cache_exact *e, uint64_t id, uint32_t set, int stage)
{
    const struct cache_lru *sa = &e->sa;
    const struct cache_line *lines = e->map.lines;
    uint32_t v;
    if (stage == 0) {
        cache_linemap_prefetch(&e->map, id);
        __builtin_prefetch(&sa->owner[(size_t)set * sa->assoc]);
        if (!sa->rows) {
            __builtin_prefetch(&sa->tail[set]);
            __builtin_prefetch(&sa->used[set]);
        }
    } else if (stage == 2) {
        if (cache_linemap_dense_has(&e->map, id) && (v = lines[id].shadow) < e->fa.cap)
            __builtin_prefetch(&e->fa.owner[v]);
        if (!e->by_row && (v = cache_lru_victim(sa, set)) < e->map.ids)
            __builtin_prefetch(&lines[v]);
        cache_linemap_prefetch_ring(&e->map, &e->pf, 0, e->fa.owner, e->fa.low, e->fa.next, e->fa.gen,
                                    RING_AHEAD_STATE);
    }
}

void cache_exact_prefetch_set(struct cache_exact *e, uint64_t line, uint32_t set, int stage)
{
    const struct cache_lru *sa = &e->sa;
    const struct cache_line *lines = e->map.lines;
    uint32_t v;
    if (e->map.dense_seen) {
        prefetch_dense(e, line, set, stage);
        return;
    }
    switch (stage) {
    case 0:
        cache_linemap_prefetch(&e->map, line);
        break;
    case 1:
        cache_linemap_prefetch_state(&e->map, line);
        __builtin_prefetch(&sa->owner[(size_t)set * sa->assoc]);
        if (!sa->rows) {
            __builtin_prefetch(&sa->head[set]);
            __builtin_prefetch(&sa->tail[set]);
            __builtin_prefetch(&sa->used[set]);
            __builtin_prefetch(&sa->prev[(size_t)set * sa->assoc]);
            __builtin_prefetch(&sa->next[(size_t)set * sa->assoc]);
        }
        break;
    case 2: {
        /* a shadow hit empties the line's old position in the ring */
        const struct cache_bucket *bk = &e->map.b[cache_linemap_hash(line + 1) & e->map.mask];
        if (bk->key == line + 1 && (v = lines[bk->idx].shadow) < e->fa.cap)
            __builtin_prefetch(&e->fa.owner[v]);
        /* the set's victim: its state, and its line number (stage 3 reads
         * it to find the victim's bucket; unfetched, that read stalled) */
        if ((v = cache_lru_victim(sa, set)) < e->map.n) {
            __builtin_prefetch(&lines[v]);
            if (e->map.bounded)
                __builtin_prefetch(&e->map.keys[v]);
        }
        /* the shadow evicts its oldest marks in order */
        if (e->map.bounded)
            cache_linemap_prefetch_ring(&e->map, &e->pf, 0, e->fa.owner, e->fa.low, e->fa.next, e->fa.gen,
                                        RING_AHEAD_STATE);
        break;
    }
    default:
        /* the buckets a drop of those lines looks up (their keys fetched at stage 2) */
        if (!e->map.bounded)
            break;
        if ((v = cache_lru_victim(sa, set)) < e->map.n)
            cache_linemap_prefetch_bucket(&e->map, e->map.keys[v]);
        cache_linemap_prefetch_ring(&e->map, &e->pf, 1, e->fa.owner, e->fa.low, e->fa.next, e->fa.gen,
                                    RING_AHEAD_BUCKET);
        break;
    }
}
