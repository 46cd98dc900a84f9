/*
 * The reuse-distance engine (reuse.h) and the associativity correction.
 */
#include "cache/reuse.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void cache_rdhist_add(struct cache_rdhist *a, const struct cache_rdhist *b)
{
    for (int i = 0; i < CACHE_RD_BINS; i++)
        a->bin[i] += b->bin[i];
    a->cold += b->cold;
}

unsigned cache_rd_bin(uint64_t d)
{
    unsigned k = d ? 64u - (unsigned)__builtin_clzll(d) : 0;
    return k < CACHE_RD_BINS ? k : CACHE_RD_BINS - 1;
}

int cache_reuse_init(struct cache_reuse *r, const struct cache_geom *g, const struct cache_timing *tm)
{
    memset(r, 0, sizeof *r);
    r->g = g;
    r->tm = *tm;
    r->hit_at = calloc(g->lines, sizeof *r->hit_at);
    r->sector_hits_at = calloc(g->lines, sizeof *r->sector_hits_at);
    if (!r->hit_at || !r->sector_hits_at || cache_linemap_init(&r->map) ||
        cache_stack_init(&r->st) || cache_mshr_init(&r->ms, tm->mshr)) {
        cache_reuse_free(r);
        return -1;
    }
    return 0;
}

void cache_reuse_free(struct cache_reuse *r)
{
    cache_linemap_free(&r->map);
    cache_stack_free(&r->st);
    cache_mshr_free(&r->ms);
    free(r->hit_at);
    free(r->sector_hits_at);
    r->hit_at = r->sector_hits_at = NULL;
}

int64_t cache_reuse_access(struct cache_reuse *r, uint64_t line, uint32_t want, uint64_t t,
                           struct cache_counts *c)
{
    int fresh;
    uint32_t id = cache_linemap_get(&r->map, line, &fresh);
    if (id == CACHE_NONE)
        return -1;
    uint64_t d = cache_stack_access(&r->st, id, fresh);
    if (d == (uint64_t)-2)
        return -1;
    struct cache_line *l = r->map.lines + id;
    if (fresh) {
        r->hist.cold++;
        return cache_line_fill(l, want, t, CACHE_MISS_COMPULSORY, &r->tm, &r->ms, c);
    }
    r->hist.bin[cache_rd_bin(d)]++;
    if (d >= r->g->lines)
        return cache_line_fill(l, want, t, CACHE_MISS_CAPACITY, &r->tm, &r->ms, c);
    enum cache_outcome out;
    uint64_t sh = c->sector_hits;
    uint32_t below = cache_line_resident(l, want, t, &r->tm, &r->ms, c, &out);
    if (out == CACHE_OUT_HIT) {
        r->hit_at[d]++;
        r->sector_hits_at[d] += c->sector_hits - sh;
    }
    return below;
}

void cache_assoc_conflict_prob(const struct cache_geom *g, double *p)
{
    uint32_t a = g->assoc, n = g->lines;
    if (g->sets == 1) {          /* fully associative: d < lines never conflicts */
        memset(p, 0, n * sizeof *p);
        return;
    }
    double q = 1.0 / g->sets, lq = log(q), lr = log1p(-q);
    for (uint32_t d = 0; d < n; d++) {
        if (d < a) {
            p[d] = 0;
            continue;
        }
        if (d > a && p[d - 1] >= 1.0 - 1e-15) {
            p[d] = 1.0;
            continue;
        }
        /* P(X < a) = sum_{k < a} C(d,k) q^k (1-q)^(d-k), terms in log space */
        double lt = (double)d * lr, below = 0;
        for (uint32_t k = 0; k < a; k++) {
            below += exp(lt);
            lt += log((double)(d - k) / (double)(k + 1)) + lq - lr;
        }
        double v = 1.0 - below;
        p[d] = v < 0 ? 0 : v > 1 ? 1 : v;
    }
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
}

void cache_reuse_estimate(const struct cache_reuse *r, const double *p, const struct cache_counts *c,
                          double share_of_hits, struct cache_estimate *e)
{
    double lost = 0, lost_sectors = 0;
    for (uint32_t d = 0; d < r->g->lines; d++) {
        if (p[d] == 0 || !r->hit_at[d])
            continue;
        lost += p[d] * (double)r->hit_at[d];
        lost_sectors += p[d] * (double)r->sector_hits_at[d];
    }
    cache_estimate_of(c, e);
    e->hits -= lost * share_of_hits;
    e->sector_hits -= lost_sectors * share_of_hits;
    e->miss[CACHE_MISS_CONFLICT] += lost * share_of_hits;
}
