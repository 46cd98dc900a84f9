/*
 * The cache model's driver (model.h): the lockstep walk over the SMs'
 * streams, the engines' instances, the correction at the end.
 */
#include "cache/model.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/distinct.h"
#include "cache/exact.h"
#include "cache/lineid.h"
#include "cache/partition.h"
#include "cache/spill.h"

_Static_assert(CACHE_INPUT_MAX_SMS <= 65536, "an SM id fits cache_fetch.sm");
_Static_assert(CACHE_MAX_LINES <= CACHE_SPILL_SET_MASK + 1u, "an L2 set fits the spill's set field");

/* How many requests ahead the L1 pass asks for the line map's buckets:
 * the lookups are the engines' cache misses, and the stream is known. */
#define PREFETCH_AHEAD 24

/* What one run holds: the engines it runs, from the L1s to the L2. */
struct run {
    const struct cache_config *cfg;
    struct cache_result *res;
    int engines;                     /* CACHE_ENGINE_* bits */
    struct cache_exact ex1, ex2[2];  /* the current SM's L1, and the L2 (per partition) */
    struct cache_reuse rd1, rd2[2];
    int ex1_on, rd1_on, ex2_on, rd2_on;
    int parts;                       /* L2 partitions: 1, or 2 (cache/partition.h) */
    struct cache_geom g2;            /* the L2 of one partition */
    struct cache_conflict p1;        /* the L1's conflict probabilities (p NULL: no reuse engine) */
    struct cache_correction k1;      /* the L1 corrections of all SMs, summed */
    struct cache_spill spill[2];     /* per engine: what the L1s sent below */
    int spill_on[2];
    struct cache_lineid ids;         /* the L1 pass: the spilled lines' dense ids */
    int ids_on;
};

double cache_rate(double h, double n)
{
    return n > 0 ? h / n : 0;
}

static void sm_free(struct run *r)
{
    if (r->ex1_on)
        cache_exact_free(&r->ex1);
    if (r->rd1_on)
        cache_reuse_free(&r->rd1);
    r->ex1_on = r->rd1_on = 0;
}

/* The L1s of the next SM: built for the first, emptied for the others. */
static int sm_init(struct run *r)
{
    const struct cache_config *cfg = r->cfg;
    if (r->ex1_on)
        cache_exact_reset(&r->ex1);
    if (r->rd1_on)
        cache_reuse_reset(&r->rd1);
    if (r->ex1_on || r->rd1_on)
        return 0;
    if ((r->engines & CACHE_ENGINE_EXACT) && cache_exact_init(&r->ex1, &cfg->geom[0], &cfg->timing[0], 0))
        return -1;
    r->ex1_on = (r->engines & CACHE_ENGINE_EXACT) != 0;
    if ((r->engines & CACHE_ENGINE_REUSE) && cache_reuse_init(&r->rd1, &cfg->geom[0], &cfg->timing[0], 0))
        return -1;
    r->rd1_on = (r->engines & CACHE_ENGINE_REUSE) != 0;
    return 0;
}

static void run_free(struct run *r)
{
    sm_free(r);
    for (int k = 0; k < r->parts; k++) {
        if (r->ex2_on)
            cache_exact_free(&r->ex2[k]);
        if (r->rd2_on)
            cache_reuse_free(&r->rd2[k]);
    }
    for (int e = 0; e < 2; e++)
        if (r->spill_on[e])
            cache_spill_close(&r->spill[e]);
    if (r->ids_on)
        cache_lineid_free(&r->ids);
    cache_conflict_free(&r->p1);
}

static int run_init(struct run *r, const struct cache_config *cfg, struct cache_result *res, int engines,
                    uint64_t lines)
{
    memset(r, 0, sizeof *r);
    r->cfg = cfg;
    r->res = res;
    r->engines = engines;
    r->parts = cfg->l2 && cfg->parts.count == 2 ? 2 : 1;
    r->g2 = cfg->geom[1];
    if (r->parts == 2) {
        char msg[128];
        if (cache_part_geom(&cfg->geom[1], &r->g2, msg, sizeof msg))
            return -1;
    }
    for (int e = 0; e < 2; e++) {
        if (!cfg->l2 || !(engines & (1 << e)))
            continue;
        if (cache_spill_open(&r->spill[e], res->sms, cfg->tmpdir))
            return -1;
        r->spill_on[e] = 1;
    }
    if (cfg->l2) {
        if (cache_lineid_init(&r->ids, lines))
            return -1;
        r->ids_on = 1;
    }
    if (engines & CACHE_ENGINE_REUSE) {
        if (cache_conflict_init(&r->p1, &cfg->geom[0]))
            return -1;
    }
    return 0;
}

/* SM s's whole stream through its L1s; what they fetch goes to the spills. */
static int l1_pass(struct run *r, const struct cache_input *in, uint32_t s)
{
    const struct cache_geom *g1 = &r->cfg->geom[0], *g2 = &r->g2;
    struct cache_counts *ce = &r->res->r[CACHE_EXACT][CACHE_L1].sm[s];
    struct cache_counts *cr = &r->res->r[CACHE_REUSE][CACHE_L1].sm[s];
    for (uint64_t i = 0; i < in->len[s]; i++) {
        uint64_t seq, addr;
        uint32_t width;
        int store;
        if (i + PREFETCH_AHEAD < in->len[s]) {
            cache_input_req(in, s, i + PREFETCH_AHEAD, &seq, &addr, &width, &store);
            if (r->ex1_on)
                cache_linemap_prefetch(&r->ex1.map, addr >> g1->line_shift);
            if (r->rd1_on)
                cache_linemap_prefetch(&r->rd1.map, addr >> g1->line_shift);
            if (r->ids_on) /* most requests go below: a streaming kernel's L1 hardly hits */
                cache_lineid_prefetch(&r->ids, addr >> g1->line_shift);
        }
        cache_input_req(in, s, i, &seq, &addr, &width, &store);
        uint64_t line = addr >> g1->line_shift;
        uint32_t want = cache_sectors_of(g1, addr, width);
        uint32_t id = CACHE_NONE, set = 0; /* the line's id and L2 set, once one engine sends it below */
        unsigned home = 0;                  /* and its home partition */
        /* what goes below keeps the request's kind: the L2 counts stores apart */
        for (int e = 0; e < 2; e++) {
            if (!(e == CACHE_EXACT ? r->ex1_on : r->rd1_on))
                continue;
            int64_t b = e == CACHE_EXACT ? cache_exact_access(&r->ex1, line, want, seq, store, ce)
                                         : cache_reuse_access(&r->rd1, line, want, seq, store, cr);
            if (b < 0)
                return -1;
            if (!b || !r->spill_on[e])
                continue;
            if (id == CACHE_NONE) {
                if ((id = cache_lineid_get(&r->ids, line)) == CACHE_NONE)
                    return -1;
                set = cache_set_of(g2, line);
                home = r->parts == 2 ? (unsigned)cache_part_home(&r->cfg->parts, addr) : 0;
            }
            if (cache_spill_add(&r->spill[e], s, seq, id, set, (uint32_t)b, store, home))
                return -1;
        }
        if ((i & 0xffff) == 0xffff)
            cache_input_release(in, s, i);
    }
    cache_input_release(in, s, in->len[s]);
    if (r->rd1_on) {
        struct cache_level_result *l = &r->res->r[CACHE_REUSE][CACHE_L1];
        struct cache_correction k;
        cache_reuse_correction(&r->rd1, &r->p1, &k);
        cache_estimate_corrected(cr, &k, NULL, &l->est_sm[s]);
        cache_correction_add(&r->k1, &k);
        cache_rdhist_add(&l->hist, &r->rd1.hist);
    }
    return 0;
}

/* The lockstep order over the spilled fetches: round i takes the fetches
 * of seq i of SM 0, 1, 2 ... in turn (rounds with no fetch skipped) — the
 * order in which they would have left the L1s had all SMs advanced one
 * request a round. Each SM's next seq is kept apart (next), so a round's
 * scans stay in a few processor cache lines instead of touching every
 * SM's run; each run is read in windows of its own (132 runs read side
 * by side), prefetched ahead as it is read. */
struct lockstep {
    const struct cache_spill *sp;
    struct cache_spill_rec *win;      /* per SM, WINDOW records of its run */
    uint64_t *at, *seq, *next, round; /* per SM: records taken, the last fetch's seq, the next
                                         one's (UINT64_MAX: none) */
    uint32_t *pos, *have;             /* per SM: the window's next record, records in it */
    uint32_t *active, n, k, keep;
    int err;                          /* a read failed */
};

/* Records of a run read at a time (16 KiB: 2 MiB for 132 SMs), and how
 * many of them are asked for ahead of their turn (4 processor cache lines). */
#ifndef WINDOW
#define WINDOW 1024u
#endif
#ifndef SPILL_AHEAD
#define SPILL_AHEAD 16u
#endif

/* SM s's next record, read in with the next window when its window is
 * spent; NULL when the run is over or the read fails (w->err). */
static const struct cache_spill_rec *lockstep_rec(struct lockstep *w, uint32_t s)
{
    const struct cache_spill *sp = w->sp;
    struct cache_spill_rec *win = w->win + (size_t)s * WINDOW;
    if (w->at[s] == sp->len[s])
        return NULL;
    if (w->pos[s] == w->have[s]) {
        uint64_t left = sp->len[s] - w->at[s];
        uint32_t n = left < WINDOW ? (uint32_t)left : WINDOW;
        if (cache_spill_read(sp, s, w->at[s], win, n)) {
            w->err = 1;
            return NULL;
        }
        w->pos[s] = 0;
        w->have[s] = n;
    }
    if (w->pos[s] + SPILL_AHEAD < w->have[s])
        __builtin_prefetch(&win[w->pos[s] + SPILL_AHEAD]);
    return &win[w->pos[s]];
}

/* SM s's next fetch: its seq into next[s], fillers on the way taken. */
static void lockstep_peek(struct lockstep *w, uint32_t s)
{
    const struct cache_spill_rec *rec;
    while ((rec = lockstep_rec(w, s)) && rec->line == CACHE_SPILL_FILLER) {
        w->seq[s] += rec->dseq;
        w->at[s]++;
        w->pos[s]++;
    }
    w->next[s] = rec ? w->seq[s] + rec->dseq : UINT64_MAX;
}

static int lockstep_init(struct lockstep *w, const struct cache_spill *sp)
{
    uint32_t sms = sp->sms ? sp->sms : 1;
    memset(w, 0, sizeof *w);
    w->sp = sp;
    w->win = malloc((size_t)sms * WINDOW * sizeof *w->win);
    w->at = calloc(sms, sizeof *w->at);
    w->seq = calloc(sms, sizeof *w->seq);
    w->next = malloc(sms * sizeof *w->next);
    w->pos = calloc(sms, sizeof *w->pos);
    w->have = calloc(sms, sizeof *w->have);
    w->active = malloc(sms * sizeof *w->active);
    if (!w->win || !w->at || !w->seq || !w->next || !w->pos || !w->have || !w->active)
        return -1;
    for (uint32_t s = 0; s < sp->sms; s++) {
        lockstep_peek(w, s);
        if (w->next[s] != UINT64_MAX)
            w->active[w->n++] = s;
    }
    w->k = w->keep = w->n; /* the first call starts a round */
    return w->err ? -1 : 0;
}

static void lockstep_free(struct lockstep *w)
{
    free(w->win);
    free(w->at);
    free(w->seq);
    free(w->next);
    free(w->pos);
    free(w->have);
    free(w->active);
}

/* The next fetch in the order, unpacked into *f: 1, or 0 when there is
 * none left (or a read failed: w->err). */
static int lockstep_next(struct lockstep *w, struct cache_fetch *f)
{
    for (;;) {
        if (w->k == w->n) { /* a new round: the smallest seq among the SMs' next fetches */
            w->n = w->keep;
            w->k = w->keep = 0;
            if (!w->n || w->err)
                return 0;
            w->round = UINT64_MAX;
            for (uint32_t i = 0; i < w->n; i++) {
                uint64_t q = w->next[w->active[i]];
                w->round = q < w->round ? q : w->round;
            }
        }
        uint32_t s = w->active[w->k];
        if (w->next[s] == w->round) {
            cache_spill_unpack(&w->win[(size_t)s * WINDOW + w->pos[s]], s, w->next[s], f);
            w->seq[s] = w->next[s];
            w->at[s]++;
            w->pos[s]++;
            lockstep_peek(w, s);
            return 1;
        }
        if (w->next[s] != UINT64_MAX)
            w->active[w->keep++] = s;
        w->k++;
    }
}

/* The L2 lookups are the model's processor-cache misses, and the order is
 * known ahead: fetches wait in a ring, and each is prefetched in stages as
 * it nears its turn (the engines' *_prefetch: buckets, then states and
 * sets, then victims), each stage's loads arriving before the next needs
 * them. */
#define RING 128u
static const uint32_t stage_ahead[] = {96, 48, 16, 4};
#define STAGES (sizeof stage_ahead / sizeof *stage_ahead)

/* The partition SM sm reads the L2 through (0 with one L2). */
static int near_part(const struct run *r, uint32_t sm)
{
    return r->parts == 2 ? cache_part_of_sm(&r->cfg->parts, sm) : 0;
}

static void l2_prefetch(struct run *r, int e, const struct cache_fetch *f, int stage)
{
    int k = near_part(r, f->sm);
    if (e == CACHE_EXACT)
        cache_exact_prefetch_set(&r->ex2[k], f->line, f->set, stage);
    else
        cache_reuse_prefetch(&r->rd2[k], f->line, stage);
}

static int64_t l2_access(struct run *r, int e, int k, const struct cache_fetch *f, uint32_t sectors,
                         uint64_t t, struct cache_counts *c)
{
    return e == CACHE_EXACT ? cache_exact_access_set(&r->ex2[k], f->line, f->set, sectors, t, f->store, c)
                            : cache_reuse_access(&r->rd2[k], f->line, sectors, t, f->store, c);
}

/* One fetch through the L2: its SM's partition, then, for what missed
 * there of a line homed in the other one, the other one (the fabric's
 * lookups, counted apart). */
static int64_t l2_fetch(struct run *r, int e, const struct cache_fetch *f, uint64_t t)
{
    struct cache_level_result *l = &r->res->r[e][CACHE_L2];
    int k = near_part(r, f->sm);
    int64_t b = l2_access(r, e, k, f, f->sectors, t, &l->sm[f->sm]);
    if (b <= 0 || r->parts != 2 || f->home == k)
        return b;
    return l2_access(r, e, f->home, f, (uint32_t)b, t, &l->fabric);
}

/* The L2 of engine e over the spilled fetches, in the lockstep order. */
static int l2_pass(struct run *r, int e)
{
    struct cache_spill *sp = &r->spill[e];
    struct lockstep w = {0}; /* freed below even when its init fails half-way */
    struct cache_fetch q[RING];
    uint64_t head = 0, tail = 0, t = 0;
    int more = 1, rc = 0;
    if (cache_spill_finish(sp) || lockstep_init(&w, sp)) {
        lockstep_free(&w);
        return -1;
    }
    while (rc == 0) {
        while (more && tail - head < stage_ahead[0] && (more = lockstep_next(&w, &q[tail % RING])))
            l2_prefetch(r, e, &q[tail++ % RING], 0);
        if (head == tail)
            break;
        for (uint32_t k = 1; k < STAGES; k++)
            if (tail - head > stage_ahead[k])
                l2_prefetch(r, e, &q[(head + stage_ahead[k]) % RING], (int)k);
        const struct cache_fetch *f = &q[head++ % RING];
        int64_t b = l2_fetch(r, e, f, t);
        t++;
        if (b < 0)
            rc = -1;
    }
    if (w.err)
        rc = -1;
    lockstep_free(&w);
    return rc;
}

/* The exact engine's L2 over its spill, freed once its counts are in res
 * (room for the reuse engine's L2 when the two run one after the other). */
static int l2_exact(struct run *r, uint32_t ids)
{
    for (int k = 0; k < r->parts; k++)
        if (cache_exact_init_dense(&r->ex2[k], &r->g2, &r->cfg->timing[1], ids)) {
            while (k--)
                cache_exact_free(&r->ex2[k]);
            return -1;
        }
    r->ex2_on = 1;
    int rc = l2_pass(r, CACHE_EXACT);
    for (int k = 0; k < r->parts; k++)
        cache_exact_free(&r->ex2[k]);
    r->ex2_on = 0;
    return rc;
}

/* The reuse engine's L2 over its spill, kept for its correction (finish).
 * Capped at the span: the counts need no deeper distance, and the L2 is
 * what would otherwise hold every line of the trace. */
static int l2_reuse(struct run *r, uint32_t ids)
{
    for (int k = 0; k < r->parts; k++)
        if (cache_reuse_init_dense(&r->rd2[k], &r->g2, &r->cfg->timing[1], 1, ids)) {
            while (k--)
                cache_reuse_free(&r->rd2[k]);
            return -1;
        }
    r->rd2_on = 1;
    return l2_pass(r, CACHE_REUSE);
}

/* Every SM's L1 pass, SM after SM. */
static int l1_all(struct run *r, const struct cache_input *in)
{
    for (uint32_t s = 0; s < in->sms; s++)
        if (in->len[s] && (sm_init(r) || l1_pass(r, in, s)))
            return -1;
    return 0;
}

static int walk(struct run *r, const struct cache_input *in)
{
    if (l1_all(r, in))
        return -1;
    sm_free(r);
    uint32_t ids = r->ids.n; /* the L2's arrays: one state an id */
    if (r->ids_on) {
        cache_lineid_free(&r->ids);
        r->ids_on = 0;
    }
    int ex = r->spill_on[CACHE_EXACT], rd = r->spill_on[CACHE_REUSE];
    /* one L2 at a time: the reuse one is built once the exact one is done with */
    if (ex && l2_exact(r, ids))
        return -1;
    return rd ? l2_reuse(r, ids) : 0;
}

struct beside {
    struct run *r;
    const struct cache_input *in;
    int rc;
};

static void *walk_thread(void *arg)
{
    struct beside *b = arg;
    b->rc = walk(b->r, b->in);
    return NULL;
}

/* The exact engine's whole walk here and the reuse engine's on a second
 * thread: they share nothing but the input (read only) and the result,
 * where each writes its own engine's counts, so the counts are those of one
 * thread whatever the timing. One thread when no second can be started. */
static int walk_beside(struct run *re, struct run *rr, const struct cache_input *in)
{
    struct beside b = {rr, in, 0};
    pthread_t th;
    if (pthread_create(&th, NULL, walk_thread, &b) != 0)
        return walk(re, in) || walk(rr, in) ? -1 : 0;
    int rc = walk(re, in);
    pthread_join(th, NULL);
    return rc || b.rc ? -1 : 0;
}

/* The share of the counts `part` within `whole` (struct cache_share). */
static void share_of(const struct cache_counts *p, const struct cache_counts *w, struct cache_share *s)
{
    const struct cache_store_counts *ps = &p->stores, *ws = &w->stores;
    s->hits = cache_rate((double)(p->hits - ps->hits), (double)(w->hits - ws->hits));
    s->sector_hits = cache_rate((double)(p->sector_hits - ps->sector_hits), (double)(w->sector_hits - ws->sector_hits));
    s->won = cache_rate((double)(p->miss[CACHE_MISS_CAPACITY] - ps->capacity),
                        (double)(w->miss[CACHE_MISS_CAPACITY] - ws->capacity));
    s->won_sectors = cache_rate((double)(p->sectors - p->sector_hits - (ps->sectors - ps->sector_hits)),
                                (double)(w->sectors - w->sector_hits - (ws->sectors - ws->sector_hits)));
    s->st_hits = cache_rate((double)ps->hits, (double)ws->hits);
    s->st_sector_hits = cache_rate((double)ps->sector_hits, (double)ws->sector_hits);
    s->st_won = cache_rate((double)ps->capacity, (double)ws->capacity);
    s->st_won_sectors = cache_rate((double)(ps->sectors - ps->sector_hits), (double)(ws->sectors - ws->sector_hits));
}

static int alloc_level(struct cache_level_result *l, uint32_t sms)
{
    l->sm = calloc(sms ? sms : 1, sizeof *l->sm);
    l->est_sm = calloc(sms ? sms : 1, sizeof *l->est_sm);
    return l->sm && l->est_sm ? 0 : -1;
}

/* Totals and the L2's correction, once the passes are done; rr: the run
 * that had the reuse engine (its corrections), if any. */
static int finish(const struct cache_config *cfg, struct run *rr, struct cache_result *res)
{
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
            cache_counts_add(&l->total, &l->fabric); /* every lookup, as the hardware counts */
            cache_estimate_of(&l->total, &l->est);
            cache_estimate_of(&l->fabric, &l->est_fabric);
        }
        if (!(cfg->engines & CACHE_ENGINE_REUSE))
            continue;
        struct cache_level_result *l = &res->r[CACHE_REUSE][lv];
        for (uint32_t s = 0; s < sms; s++)
            cache_counts_add(&l->total, &l->sm[s]);
        cache_counts_add(&l->total, &l->fabric);
        if (lv == CACHE_L1) { /* the per-SM estimates were made by l1_pass; the
                               * correction is linear, so the total's is their sum */
            cache_estimate_corrected(&l->total, &rr->k1, NULL, &l->est);
            continue;
        }
        struct cache_conflict p;
        if (cache_conflict_init(&p, &rr->g2))
            return -1;
        /* one L2 for all SMs: each SM takes its share of the correction */
        struct cache_correction k = {0};
        for (int q = 0; q < rr->parts; q++) {
            struct cache_correction kq;
            cache_reuse_correction(&rr->rd2[q], &p, &kq);
            cache_correction_add(&k, &kq);
        }
        cache_estimate_corrected(&l->total, &k, NULL, &l->est);
        struct cache_share sh;
        for (uint32_t s = 0; s < sms; s++) {
            share_of(&l->sm[s], &l->total, &sh);
            cache_estimate_corrected(&l->sm[s], &k, &sh, &l->est_sm[s]);
        }
        share_of(&l->fabric, &l->total, &sh);
        cache_estimate_corrected(&l->fabric, &k, &sh, &l->est_fabric);
        l->hist = rr->rd2[0].hist;
        if (rr->parts == 2)
            cache_rdhist_add(&l->hist, &rr->rd2[1].hist);
        cache_conflict_free(&p);
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
    /* every line reaches the L2 at least once: the id table is sized for
     * them all (distinct.h) */
    uint64_t lines = cfg->l2 ? (uint64_t)cache_distinct_lines(in, cfg->geom[0].line_shift) : 0;
    struct run r, rr; /* rr: the reuse engine's, when the two run side by side */
    int apart = cfg->engines == CACHE_ENGINE_BOTH && cfg->l2 && cfg->threads == 2;
    int rc = run_init(&r, cfg, res, apart ? CACHE_ENGINE_EXACT : cfg->engines, lines);
    int rc2 = apart ? run_init(&rr, cfg, res, CACHE_ENGINE_REUSE, lines) : 0;
    if (rc == 0 && rc2 == 0)
        rc = apart ? walk_beside(&r, &rr, in) : walk(&r, in);
    if (rc == 0 && rc2 == 0)
        rc = finish(cfg, apart ? &rr : &r, res);
    run_free(&r);
    if (apart)
        run_free(&rr);
    rc = rc || rc2 ? -1 : 0;
    if (rc)
        snprintf(msg, msglen, "out of memory, or the temporary file of the L2 pass failed");
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
