/*
 * The cache model's driver (model.h): the lockstep walk over the SMs'
 * streams, the engines' instances, the correction at the end.
 */
#include "cache/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/exact.h"

/* What one run holds. */
struct run {
    const struct cache_config *cfg;
    struct cache_exact *ex1, ex2;    /* [sms] L1s and the L2 */
    struct cache_reuse *rd1, rd2;
    uint64_t t2[2];                  /* L2 time, per engine */
    int ex2_on, rd2_on;
};

double cache_rate(double h, double n)
{
    return n > 0 ? h / n : 0;
}

static void run_free(struct run *r, uint32_t sms)
{
    for (uint32_t s = 0; s < sms; s++) {
        if (r->ex1)
            cache_exact_free(&r->ex1[s]);
        if (r->rd1)
            cache_reuse_free(&r->rd1[s]);
    }
    free(r->ex1);
    free(r->rd1);
    if (r->ex2_on)
        cache_exact_free(&r->ex2);
    if (r->rd2_on)
        cache_reuse_free(&r->rd2);
}

static int run_init(struct run *r, const struct cache_config *cfg, uint32_t sms)
{
    memset(r, 0, sizeof *r);
    r->cfg = cfg;
    const struct cache_geom *g = cfg->geom;
    const struct cache_timing *tm = cfg->timing;
    if (cfg->engines & CACHE_ENGINE_EXACT) {
        if (!(r->ex1 = calloc(sms, sizeof *r->ex1)))
            return -1;
        for (uint32_t s = 0; s < sms; s++)
            if (cache_exact_init(&r->ex1[s], &g[0], &tm[0]))
                return -1;
        if (cfg->l2 && cache_exact_init(&r->ex2, &g[1], &tm[1]) == 0)
            r->ex2_on = 1;
        else if (cfg->l2)
            return -1;
    }
    if (cfg->engines & CACHE_ENGINE_REUSE) {
        if (!(r->rd1 = calloc(sms, sizeof *r->rd1)))
            return -1;
        for (uint32_t s = 0; s < sms; s++)
            if (cache_reuse_init(&r->rd1[s], &g[0], &tm[0]))
                return -1;
        if (cfg->l2 && cache_reuse_init(&r->rd2, &g[1], &tm[1]) == 0)
            r->rd2_on = 1;
        else if (cfg->l2)
            return -1;
    }
    return 0;
}

/* One record of SM s through both engines' L1 and, for what misses, L2. */
static int step(struct run *r, struct cache_result *res, uint32_t s, const struct trace_out *o)
{
    const struct cache_geom *g1 = &r->cfg->geom[0];
    uint64_t line = o->addr >> g1->line_shift;
    uint32_t want = cache_sectors_of(g1, o->addr, o->width);
    if (r->ex1) {
        int64_t b = cache_exact_access(&r->ex1[s], line, want, o->seq, &res->r[CACHE_EXACT][CACHE_L1].sm[s]);
        if (b < 0)
            return -1;
        if (b && r->ex2_on &&
            cache_exact_access(&r->ex2, line, (uint32_t)b, r->t2[0]++,
                               &res->r[CACHE_EXACT][CACHE_L2].sm[s]) < 0)
            return -1;
    }
    if (r->rd1) {
        int64_t b = cache_reuse_access(&r->rd1[s], line, want, o->seq, &res->r[CACHE_REUSE][CACHE_L1].sm[s]);
        if (b < 0)
            return -1;
        if (b && r->rd2_on &&
            cache_reuse_access(&r->rd2, line, (uint32_t)b, r->t2[1]++,
                               &res->r[CACHE_REUSE][CACHE_L2].sm[s]) < 0)
            return -1;
    }
    return 0;
}

/* The lockstep walk: round i takes seq i of every SM that still has one. */
static int walk(struct run *r, const struct cache_input *in, struct cache_result *res)
{
    uint32_t *active = malloc((in->sms ? in->sms : 1) * sizeof *active), n = 0;
    if (!active)
        return -1;
    for (uint32_t s = 0; s < in->sms; s++)
        if (in->len[s])
            active[n++] = s;
    for (uint64_t i = 0; n; i++) {
        uint32_t keep = 0;
        for (uint32_t k = 0; k < n; k++) {
            uint32_t s = active[k];
            struct trace_out o;
            cache_input_get(in, s, i, &o);
            if (step(r, res, s, &o)) {
                free(active);
                return -1;
            }
            if (i + 1 < in->len[s])
                active[keep++] = s;
            if ((i & 0xffff) == 0xffff)
                cache_input_release(in, s, i);
        }
        n = keep;
    }
    free(active);
    return 0;
}

static int alloc_level(struct cache_level_result *l, uint32_t sms)
{
    l->sm = calloc(sms ? sms : 1, sizeof *l->sm);
    l->est_sm = calloc(sms ? sms : 1, sizeof *l->est_sm);
    return l->sm && l->est_sm ? 0 : -1;
}

/* Totals, estimates and histograms, once the walk is done. */
static int finish(struct run *r, struct cache_result *res)
{
    const struct cache_config *cfg = r->cfg;
    uint32_t sms = res->sms;
    for (int lv = 0; lv < 2; lv++) {
        if (lv == CACHE_L2 && !cfg->l2)
            continue;
        if (cfg->engines & CACHE_ENGINE_EXACT) {
            struct cache_level_result *l = &res->r[CACHE_EXACT][lv];
            for (uint32_t s = 0; s < sms; s++) {
                cache_counts_add(&l->total, &l->sm[s]);
                cache_estimate_of(&l->sm[s], &l->est_sm[s]);
            }
            cache_estimate_of(&l->total, &l->est);
        }
        if (!(cfg->engines & CACHE_ENGINE_REUSE))
            continue;
        struct cache_level_result *l = &res->r[CACHE_REUSE][lv];
        uint64_t span = cache_assoc_span(&cfg->geom[lv]);
        double *p = malloc(span * sizeof *p);
        if (!p)
            return -1;
        cache_assoc_conflict_prob(&cfg->geom[lv], p, span);
        for (uint32_t s = 0; s < sms; s++)
            cache_counts_add(&l->total, &l->sm[s]);
        if (lv == CACHE_L1) {
            struct cache_estimate e;
            memset(&l->est, 0, sizeof l->est);
            for (uint32_t s = 0; s < sms; s++) {
                cache_reuse_estimate(&r->rd1[s], p, &l->sm[s], 1.0, &l->est_sm[s]);
                cache_rdhist_add(&l->hist, &r->rd1[s].hist);
            }
            /* the total of the per-SM estimates */
            struct cache_counts zero = {0};
            cache_estimate_of(&zero, &e);
            for (uint32_t s = 0; s < sms; s++) {
                const struct cache_estimate *x = &l->est_sm[s];
                e.requests += x->requests;
                e.hits += x->hits;
                e.sectors += x->sectors;
                e.sector_hits += x->sector_hits;
                for (int m = 0; m < CACHE_MISS_CLASSES; m++)
                    e.miss[m] += x->miss[m];
                e.below += x->below;
                e.below_sectors += x->below_sectors;
                e.mshr_full += x->mshr_full;
            }
            l->est = e;
        } else {
            /* one L2 for all SMs: each SM takes its share of the correction */
            cache_reuse_estimate(&r->rd2, p, &l->total, 1.0, &l->est);
            for (uint32_t s = 0; s < sms; s++)
                cache_reuse_estimate(&r->rd2, p, &l->sm[s],
                                     cache_rate((double)l->sm[s].hits, (double)l->total.hits),
                                     &l->est_sm[s]);
            l->hist = r->rd2.hist;
        }
        free(p);
    }
    return 0;
}

int cache_model_run(const struct cache_input *in, const struct cache_config *cfg,
                    struct cache_result *res, char *msg, size_t msglen)
{
    memset(res, 0, sizeof *res);
    res->sms = in->sms;
    res->records = in->count;
    res->engines = cfg->engines;
    res->l2 = cfg->l2;
    for (int e = 0; e < 2; e++)
        for (int lv = 0; lv < 2; lv++)
            if (alloc_level(&res->r[e][lv], in->sms)) {
                snprintf(msg, msglen, "out of memory");
                return -1;
            }
    struct run r;
    int rc = run_init(&r, cfg, in->sms);
    if (rc == 0)
        rc = walk(&r, in, res);
    if (rc == 0)
        rc = finish(&r, res);
    run_free(&r, in->sms);
    if (rc)
        snprintf(msg, msglen, "out of memory");
    return rc;
}

void cache_result_free(struct cache_result *res)
{
    for (int e = 0; e < 2; e++)
        for (int lv = 0; lv < 2; lv++) {
            free(res->r[e][lv].sm);
            free(res->r[e][lv].est_sm);
        }
    memset(res, 0, sizeof *res);
}
