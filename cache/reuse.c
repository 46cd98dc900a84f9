/*
 * The reuse-distance engine (reuse.h) and the associativity correction.
 */
#include "cache/reuse.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void cache_rdhist_add(struct cache_rdhist *a, const struct cache_rdhist *b)
{
    for (int i = 0; i < CACHE_RD_BINS; i++)
        a->bin[i] += b->bin[i];
    a->cold += b->cold;
    a->beyond += b->beyond;
    if (b->beyond_from)
        a->beyond_from = b->beyond_from;
}

unsigned cache_rd_bin(uint64_t d)
{
    unsigned k = d ? 64u - (unsigned)__builtin_clzll(d) : 0;
    return k < CACHE_RD_BINS ? k : CACHE_RD_BINS - 1;
}

/* Either engine: a line map over line numbers (dense 0) or over ids
 * below `ids` (dense 1). */
static int init(struct cache_reuse *r, const struct cache_geom *g, const struct cache_timing *tm,
                uint64_t track, int dense, uint32_t ids)
{
    memset(r, 0, sizeof *r);
    r->g = g;
    r->tm = *tm;
    r->span = cache_assoc_span(g);
    r->track = track && track < r->span ? r->span : track;
    if (r->track >= CACHE_NONE) /* as many as the stack can hold: uncapped */
        r->track = 0;
    r->hist.beyond_from = r->track;
    /* calloc: pages zero as the system hands them over, touched only where
     * a distance is counted (the stores' table not at all without stores) */
    r->at = calloc(r->span, sizeof *r->at);
    r->st_at = calloc(r->span, sizeof *r->st_at);
    if (!r->at || !r->st_at ||
        (dense ? cache_linemap_init_dense(&r->map, ids)
               : cache_linemap_init(&r->map, r->track != 0) ||
                     (r->track && cache_linemap_reserve(&r->map, (uint32_t)r->track + 1))) ||
        cache_stack_init(&r->st) || cache_mshr_init(&r->ms, tm->mshr)) {
        cache_reuse_free(r);
        return -1;
    }
    return 0;
}

int cache_reuse_init(struct cache_reuse *r, const struct cache_geom *g, const struct cache_timing *tm,
                     uint64_t track)
{
    return init(r, g, tm, track, 0, 0);
}

int cache_reuse_init_dense(struct cache_reuse *r, const struct cache_geom *g, const struct cache_timing *tm,
                           uint64_t track, uint32_t ids)
{
    return init(r, g, tm, track, 1, ids);
}

void cache_reuse_free(struct cache_reuse *r)
{
    cache_linemap_free(&r->map);
    cache_stack_free(&r->st);
    cache_mshr_free(&r->ms);
    free(r->at);
    free(r->st_at);
    r->at = r->st_at = NULL;
}

void cache_reuse_reset(struct cache_reuse *r)
{
    memset(&r->pf, 0, sizeof r->pf);
    cache_linemap_reset(&r->map);
    cache_stack_reset(&r->st);
    cache_mshr_reset(&r->ms);
    memset(&r->hist, 0, sizeof r->hist);
    r->hist.beyond_from = r->track;
    memset(r->at, 0, r->at_end * sizeof *r->at);
    memset(r->st_at, 0, r->at_end * sizeof *r->st_at);
    r->at_end = 0;
    r->npend = 0;
}

#define PENDING (sizeof ((struct cache_reuse *)0)->pend / sizeof *((struct cache_reuse *)0)->pend)

static void at_add(struct cache_reuse *r, const struct cache_at_pending *a)
{
    r->at_end = a->d < r->at_end ? r->at_end : a->d + 1;
    r->at[a->d].n++;
    r->at[a->d].sectors += a->sectors;
    if (a->store) {
        r->st_at[a->d].n++;
        r->st_at[a->d].sectors += a->sectors;
    }
}

/* A hit (or a capacity miss the correction may win back) at distance d of
 * `sectors` sectors, for the correction: its table entries asked for now,
 * the count added PENDING counts later (struct cache_reuse, pend). */
static void at_distance(struct cache_reuse *r, uint64_t d, uint64_t sectors, int store)
{
    struct cache_at_pending *a = &r->pend[r->npend % PENDING];
    __builtin_prefetch(&r->at[d], 1);
    if (store)
        __builtin_prefetch(&r->st_at[d], 1);
    if (r->npend >= PENDING)
        at_add(r, a);
    *a = (struct cache_at_pending){d, sectors, store};
    r->npend++;
}

/* Adds the counts still pending. */
static void at_flush(struct cache_reuse *r)
{
    uint64_t n = r->npend < PENDING ? r->npend : PENDING;
    for (uint64_t i = 0; i < n; i++)
        at_add(r, &r->pend[i]);
    r->npend = 0;
}

/* A store at a write-through, no-allocate level: its distance looked up,
 * nothing recorded; a resident line discarded. */
static int64_t store_through(struct cache_reuse *r, uint64_t line, uint32_t want, uint64_t t,
                             struct cache_counts *c)
{
    uint32_t id = cache_linemap_find(&r->map, line);
    enum cache_outcome out;
    if (id == CACHE_NONE) /* never loaded here (or, capped, forgotten: deeper than the span) */
        return cache_store_through(NULL, want, t,
                                   r->map.bounded && cache_seen_has(&r->map.seen, line) ? CACHE_MISS_CAPACITY
                                                                                        : CACHE_MISS_COMPULSORY,
                                   c, &out);
    struct cache_line *l = r->map.lines + id;
    uint64_t d = l->slot == CACHE_NONE ? CACHE_DIST_INF : cache_stack_depth(&r->st, r->map.lines, id);
    if (d >= r->g->lines) {
        if (d < r->span && l->sectors) /* a set-associative cache may still hold it */
            at_distance(r, d, cache_popcount(want), 1);
        return cache_store_through(NULL, want, t, CACHE_MISS_CAPACITY, c, &out);
    }
    if (!l->sectors)
        return cache_store_through(NULL, want, t, CACHE_MISS_INVALIDATED, c, &out);
    uint64_t sh = c->sector_hits;
    cache_store_through(l, want, t, CACHE_MISS_COMPULSORY, c, &out);
    if (out == CACHE_OUT_HIT)
        at_distance(r, d, c->sector_hits - sh, 1);
    l->sectors = 0;
    c->invalidations++;
    return want;
}

int64_t cache_reuse_access(struct cache_reuse *r, uint64_t line, uint32_t want, uint64_t t, int store,
                           struct cache_counts *c)
{
    if (store && r->g->write == CACHE_WRITE_THROUGH_NO_ALLOCATE)
        return store_through(r, line, want, t, c);
    int fresh;
    uint32_t id = cache_linemap_get(&r->map, line, &fresh);
    if (id == CACHE_NONE)
        return -1;
    /* capped: a line seen but not held was deeper than track */
    int beyond = !fresh && r->map.lines[id].slot == CACHE_NONE;
    uint64_t d = cache_stack_access(&r->st, r->map.lines, id, fresh || beyond);
    if (d == (uint64_t)-2)
        return -1;
    if (r->track && r->st.live > r->track)
        cache_linemap_drop(&r->map, cache_stack_evict_oldest(&r->st));
    struct cache_line *l = r->map.lines + id;
    if (fresh) {
        r->hist.cold++;
        return cache_line_fill(l, want, t, store, CACHE_MISS_COMPULSORY, &r->tm, &r->ms, c);
    }
    if (beyond) { /* d >= track >= span: a capacity miss, out of the correction */
        r->hist.beyond++;
        return cache_line_fill(l, want, t, store, CACHE_MISS_CAPACITY, &r->tm, &r->ms, c);
    }
    r->hist.bin[cache_rd_bin(d)]++;
    if (d >= r->g->lines) {
        /* a line a store discarded (sectors cleared) cannot be won back */
        if (d < r->span && l->sectors)
            at_distance(r, d, cache_popcount(want), store);
        return cache_line_fill(l, want, t, store, CACHE_MISS_CAPACITY, &r->tm, &r->ms, c);
    }
    if (!l->sectors) /* resident by its distance, but a store discarded it */
        return cache_line_fill(l, want, t, store, CACHE_MISS_INVALIDATED, &r->tm, &r->ms, c);
    enum cache_outcome out;
    uint64_t sh = c->sector_hits;
    uint32_t below = cache_line_resident(l, want, t, store, &r->tm, &r->ms, c, &out);
    if (out == CACHE_OUT_HIT)
        at_distance(r, d, c->sector_hits - sh, store);
    return below;
}

/* P(Binomial(d, q) < a), the chance a line reused at distance d is still in
 * its set: the sum of the first a terms, in linear steps from (1-q)^d while
 * that does not underflow, else in log space. */
static double stays(uint64_t d, double q, uint32_t a)
{
    double lr = log1p(-q), ratio = q / (1 - q), sum = 0;
    if ((double)d * -lr < 600) {
        double term = exp((double)d * lr);
        for (uint32_t k = 0; k < a && k <= d; k++) {
            sum += term;
            term *= (double)(d - k) / (double)(k + 1) * ratio;
        }
    } else {
        double lt = (double)d * lr, lratio = log(ratio);
        for (uint32_t k = 0; k < a && k <= d; k++) {
            sum += exp(lt);
            lt += log((double)(d - k) / (double)(k + 1)) + lratio;
        }
    }
    return sum < 0 ? 0 : sum > 1 ? 1 : sum;
}

uint64_t cache_assoc_span(const struct cache_geom *g)
{
    if (g->sets == 1)
        return g->lines;
    double q = 1.0 / g->sets;
    uint64_t max = (uint64_t)g->lines * CACHE_ASSOC_SPAN_MAX;
    /* stays() falls with d: bisect for the first d >= lines under 1e-9 */
    uint64_t lo = g->lines, hi = max;
    if (stays(lo, q, g->assoc) < 1e-9)
        return lo;
    if (stays(hi, q, g->assoc) >= 1e-9)
        return max;
    while (lo + 1 < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (stays(mid, q, g->assoc) < 1e-9)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

void cache_assoc_conflict_prob(const struct cache_geom *g, double *p, uint64_t from, uint64_t n)
{
    if (g->sets == 1) { /* fully associative: conflicts never, beyond lines always */
        for (uint64_t d = from; d < n; d++)
            p[d] = d < g->lines ? 0 : 1;
        return;
    }
    double q = 1.0 / g->sets;
    for (uint64_t d = from; d < n; d++)
        p[d] = d < g->assoc ? 0 : d > g->assoc && p[d - 1] >= 1.0 - 1e-15 ? 1.0 : 1.0 - stays(d, q, g->assoc);
}

int cache_conflict_init(struct cache_conflict *c, const struct cache_geom *g)
{
    c->g = g;
    c->have = 0;
    c->span = cache_assoc_span(g);
    c->p = malloc(c->span * sizeof *c->p);
    return c->p ? 0 : -1;
}

void cache_conflict_free(struct cache_conflict *c)
{
    free(c->p);
    c->p = NULL;
}

/* c's P(d) for every d < end (end <= its span). */
static const double *conflict_upto(struct cache_conflict *c, uint64_t end)
{
    if (end > c->have) {
        cache_assoc_conflict_prob(c->g, c->p, c->have, end);
        c->have = end;
    }
    return c->p;
}

void cache_estimate_of(const struct cache_counts *c, struct cache_estimate *e)
{
    e->requests = (double)c->requests;
    e->hits = (double)c->hits;
    e->sectors = (double)c->sectors;
    e->sector_hits = (double)c->sector_hits;
    for (int i = 0; i < CACHE_MISS_CLASSES; i++)
        e->miss[i] = (double)c->miss[i];
    e->below = (double)c->below;
    e->below_sectors = (double)c->below_sectors;
    e->mshr_full = (double)c->mshr_full;
    e->invalidations = (double)c->invalidations;
    e->stores.requests = (double)c->stores.requests;
    e->stores.hits = (double)c->stores.hits;
    e->stores.sectors = (double)c->stores.sectors;
    e->stores.sector_hits = (double)c->stores.sector_hits;
    e->stores.latency = (double)c->stores.latency;
    e->pending_sectors = (double)c->pending_sectors;
    e->stores.pending_sectors = (double)c->stores.pending_sectors;
}

/* The shift of the hits at[d] (and their sectors) at every distance. */
static void shift_of(const double *p, const struct cache_at *at, uint64_t end, uint64_t lines,
                     struct cache_shift *k)
{
    *k = (struct cache_shift){0, 0, 0, 0};
    for (uint64_t d = 0; d < end; d++) {
        if (!at[d].n)
            continue;
        if (d < lines) {
            k->lost += p[d] * (double)at[d].n;
            k->lost_sectors += p[d] * (double)at[d].sectors;
        } else {
            k->won += (1 - p[d]) * (double)at[d].n;
            k->won_sectors += (1 - p[d]) * (double)at[d].sectors;
        }
    }
}

void cache_reuse_correction(struct cache_reuse *r, struct cache_conflict *c, struct cache_correction *k)
{
    at_flush(r);
    assert(c->span == r->span && r->at_end <= r->span);
    const double *p = conflict_upto(c, r->at_end);
    memset(k, 0, sizeof *k); /* padding too: corrections are compared bytewise */
    shift_of(p, r->at, r->at_end, r->g->lines, &k->all);
    shift_of(p, r->st_at, r->at_end, r->g->lines, &k->stores);
    k->through = r->g->write == CACHE_WRITE_THROUGH_NO_ALLOCATE;
}

static void shift_add(struct cache_shift *a, const struct cache_shift *b)
{
    a->lost += b->lost;
    a->lost_sectors += b->lost_sectors;
    a->won += b->won;
    a->won_sectors += b->won_sectors;
}

void cache_correction_add(struct cache_correction *a, const struct cache_correction *b)
{
    shift_add(&a->all, &b->all);
    shift_add(&a->stores, &b->stores);
    a->through = b->through;
}

void cache_estimate_corrected(const struct cache_counts *c, const struct cache_correction *k,
                              const struct cache_share *share, struct cache_estimate *e)
{
    static const struct cache_share all = {1, 1, 1, 1, 1, 1, 1, 1};
    const struct cache_share *f = share ? share : &all;
    const struct cache_shift *a = &k->all, *s = &k->stores;
    /* this part's terms: the stores' and the loads' (all less stores) */
    double st_lost = s->lost * f->st_hits, st_lost_sectors = s->lost_sectors * f->st_sector_hits;
    double st_won = s->won * f->st_won, st_won_sectors = s->won_sectors * f->st_won_sectors;
    /* (the whole's own terms as they are: no rounding of a - s + s) */
    double lost = share ? (a->lost - s->lost) * f->hits + st_lost : a->lost;
    double lost_sectors = share ? (a->lost_sectors - s->lost_sectors) * f->sector_hits + st_lost_sectors
                                : a->lost_sectors;
    double won = share ? (a->won - s->won) * f->won + st_won : a->won;
    double won_sectors = share ? (a->won_sectors - s->won_sectors) * f->won_sectors + st_won_sectors : a->won_sectors;
    cache_estimate_of(c, e);
    e->hits += won - lost;
    e->sector_hits += won_sectors - lost_sectors;
    e->miss[CACHE_MISS_CONFLICT] += lost;
    e->miss[CACHE_MISS_CAPACITY] -= won;
    e->stores.hits += st_won - st_lost;
    e->stores.sector_hits += st_won_sectors - st_lost_sectors;
    /* a hit lost is a fetch more, one won a fetch less; a store written
     * through goes below hit or miss */
    if (k->through) {
        lost -= st_lost;
        won -= st_won;
        lost_sectors -= st_lost_sectors;
        won_sectors -= st_won_sectors;
    }
    e->below += lost - won;
    e->below_sectors += lost_sectors - won_sectors;
}

/* The capped stack drops its oldest marks in order, about one a new line:
 * their states and line numbers this many positions ahead, then their
 * buckets (cache_linemap_prefetch_ring). */
#define RING_AHEAD_STATE 24u
#define RING_AHEAD_BUCKET 10u

void cache_reuse_prefetch(struct cache_reuse *r, uint64_t line, int stage)
{
    const struct cache_linemap *m = &r->map;
    const struct cache_stack *st = &r->st;
    const struct cache_bucket *b;
    uint32_t v;
    switch (stage) {
    case 0:
        cache_linemap_prefetch(m, line);
        break;
    case 1:
        cache_linemap_prefetch_state(m, line);
        break;
    case 2:
        /* its position and what cache_stack_depth counts holes over: the
         * block of positions holding it (two processor cache lines) */
        if (m->dense_seen)
            v = cache_linemap_dense_has(m, line) ? m->lines[line].slot : CACHE_NONE;
        else
            v = (b = &m->b[cache_linemap_hash(line + 1) & m->mask])->key == line + 1 ? m->lines[b->idx].slot
                                                                                      : CACHE_NONE;
        if (v < st->cap) {
            uint32_t first = v / CACHE_STACK_BLOCK * CACHE_STACK_BLOCK;
            __builtin_prefetch(&st->owner[v]);
            __builtin_prefetch(&st->owner[first]);
            __builtin_prefetch(&st->owner[first + CACHE_STACK_BLOCK / 2]);
        }
        if (r->track)
            cache_linemap_prefetch_ring(m, &r->pf, 0, st->owner, st->low, st->next, st->gen, RING_AHEAD_STATE);
        break;
    default:
        if (r->track)
            cache_linemap_prefetch_ring(m, &r->pf, 1, st->owner, st->low, st->next, st->gen, RING_AHEAD_BUCKET);
        break;
    }
}
