/*
 * The sorter's L1 (feedback.h): one SM's cache, asked about each
 * transaction the ordering loop issues.
 */
#include "cache/feedback.h"

#include <stdlib.h>
#include <string.h>

#include "cache/counts.h"
#include "cache/exact.h"
#include "cache/linemap.h"

/* A fetch an in-flight-only L1 made: its line and when it is back. */
struct fetched {
    uint64_t line, ready;
};

/* One SM's L1. */
struct l1 {
    struct cache_feedback *fb;   /* what it is, and where it goes back to */
    struct cache_exact e;       /* keep: the cache */
    struct cache_linemap map;   /* in flight only: bounded, the lines fetched and not yet
                                   seen to be back */
    struct fetched *ring;       /* in flight only: its fetches in the order made (a ring) */
    size_t head, n, cap;
    struct cache_timing tm;     /* in flight only: the latency of the access at hand */
    struct cache_mshr ms;       /* in flight only: not tracked (the loop's 6d is the MSHR limit) */
    struct cache_counts c;      /* what the engine counted (the loop counts verdicts itself) */
};

/* A fresh L1, or NULL out of memory. */
static struct l1 *l1_new(struct cache_feedback *fb)
{
    struct l1 *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->fb = fb;
    /* latency is set per access; mshr 0: the engine tracks none */
    c->tm = (struct cache_timing){0, 0, fb->max_merge};
    int rc = fb->keep ? cache_exact_init(&c->e, &fb->geom, &c->tm, 1)
                      : cache_linemap_init(&c->map, 1) || cache_mshr_init(&c->ms, 0);
    if (rc) {
        free(c);
        return NULL;
    }
    return c;
}

static void l1_free(struct l1 *c)
{
    if (c->fb->keep) {
        cache_exact_free(&c->e);
    } else {
        cache_linemap_free(&c->map);
        cache_mshr_free(&c->ms);
        free(c->ring);
    }
    free(c);
}

/* A kept L1 when there is one (emptied when it was closed), else a new one. */
static void *l1_open(void *ctx, uint32_t sm)
{
    (void)sm; /* every SM's L1 starts empty alike */
    struct cache_feedback *fb = ctx;
    struct l1 *c = NULL;
    pthread_mutex_lock(&fb->mu);
    if (fb->nspare)
        c = fb->spare[--fb->nspare];
    pthread_mutex_unlock(&fb->mu);
    return c ? c : l1_new(fb);
}

/* Empties the L1 (keeping its tables) and keeps it for the next SM. */
static void l1_close(void *h)
{
    struct l1 *c = h;
    struct cache_feedback *fb = c->fb;
    if (fb->keep) {
        cache_exact_reset(&c->e);
    } else {
        cache_linemap_reset(&c->map);
        cache_mshr_reset(&c->ms);
        c->head = c->n = 0;
    }
    memset(&c->c, 0, sizeof c->c);
    pthread_mutex_lock(&fb->mu);
    if (fb->nspare < CACHE_FEEDBACK_SPARES) {
        fb->spare[fb->nspare++] = c;
        c = NULL;
    }
    pthread_mutex_unlock(&fb->mu);
    if (c)
        l1_free(c);
}

/* Asks for the bucket of addr's line (order_l1.h's prefetch). */
static void l1_prefetch(void *h, uint64_t addr)
{
    const struct l1 *c = h;
    cache_linemap_prefetch(c->fb->keep ? &c->e.map : &c->map, addr >> c->fb->geom.line_shift);
}

/* The state of `line` that decides a request at t, or NULL when the L1
 * does not hold the line (keep: not resident; in flight only: no fetch of
 * it in flight at t). Looks only: the line is not "seen" by asking. */
static const struct cache_line *held(const struct l1 *c, uint64_t line, uint64_t t)
{
    const struct cache_linemap *m = c->fb->keep ? &c->e.map : &c->map;
    uint32_t id = cache_linemap_find(m, line);
    if (id == CACHE_NONE)
        return NULL;
    const struct cache_line *l = &m->lines[id];
    if (c->fb->keep ? l->slot == CACHE_NONE : t >= l->ready)
        return NULL;
    return l;
}

/* What the engine will do with `want` sectors of l at t: counts.h's rules
 * (cache_line_resident) read without applying them. In flight (t < ready):
 * merged when every wanted sector is on its way and the fetch has room for
 * one more merge, else a fetch (the missing sectors, or the line again);
 * back: a hit when it holds every wanted sector. */
static enum trace_l1_verdict verdict(const struct cache_line *l, uint32_t want, uint64_t t, uint32_t max_merge)
{
    if (!l)
        return TRACE_L1_FETCH;
    uint32_t missing = want & ~l->sectors;
    if (t < l->ready)
        return !missing && l->merges < max_merge ? TRACE_L1_MERGED : TRACE_L1_FETCH;
    return missing ? TRACE_L1_FETCH : TRACE_L1_HIT;
}

/* In flight only: forgets the lines whose fetches are back by t, oldest
 * fetch first, so the map holds what is in flight (and the few lines back
 * behind an older fetch still out: the ring stops at the first one still
 * in flight). A line fetched again since is kept. */
static void forget_returned(struct l1 *c, uint64_t t)
{
    while (c->n && c->ring[c->head].ready <= t) {
        uint32_t id = cache_linemap_find(&c->map, c->ring[c->head].line);
        if (id != CACHE_NONE && c->map.lines[id].ready <= t)
            cache_linemap_drop(&c->map, id);
        c->head = c->head + 1 == c->cap ? 0 : c->head + 1;
        c->n--;
    }
}

/* In flight only: notes a fetch of line back at ready. 0, or -1 out of
 * memory. */
static int note_fetch(struct l1 *c, uint64_t line, uint64_t ready)
{
    if (c->n == c->cap) { /* grow, unwrapping the ring */
        size_t cap = c->cap ? 2 * c->cap : 256;
        struct fetched *r = malloc(cap * sizeof *r);
        if (!r)
            return -1;
        for (size_t i = 0; i < c->n; i++)
            r[i] = c->ring[(c->head + i) % c->cap];
        free(c->ring);
        c->ring = r;
        c->cap = cap;
        c->head = 0;
    }
    c->ring[(c->head + c->n++) % c->cap] = (struct fetched){line, ready};
    return 0;
}

/* In flight only: the request to the line map and counts.h's rules, the
 * line's fetch taking `delay`. As apply. */
static int64_t apply_in_flight(struct l1 *c, uint64_t line, uint32_t want, uint64_t t, uint32_t delay)
{
    forget_returned(c, t);
    int fresh;
    uint32_t id = cache_linemap_get(&c->map, line, &fresh);
    if (id == CACHE_NONE)
        return -1;
    struct cache_line *l = &c->map.lines[id];
    c->tm.latency = delay;
    if (!fresh && t < l->ready) {
        enum cache_outcome out;
        return cache_line_resident(l, want, t, 0, &c->tm, &c->ms, &c->c, &out);
    }
    return cache_line_fill(l, want, t, 0, fresh ? CACHE_MISS_COMPULSORY : CACHE_MISS_CAPACITY, &c->tm,
                           &c->ms,
                           &c->c);
}

/* The request applied to the engine, its fetch taking `delay`: the sectors
 * fetched (0: none), or -1 out of memory. The sorter's L1 table passes no
 * store flag: every request is a load here (a store's place in the order does
 * not wait on the L1 either way; the cache model applies the write policy). */
static int64_t apply(struct l1 *c, uint64_t line, uint32_t want, uint64_t t, uint32_t delay)
{
    if (c->fb->keep) {
        c->e.tm.latency = delay; /* the engine reads it when it fetches */
        return cache_exact_access(&c->e, line, want, t, 0, &c->c);
    }
    int64_t got = apply_in_flight(c, line, want, t, delay);
    if (got > 0 && note_fetch(c, line, t + delay))
        return -1;
    return got;
}

static int l1_access(void *h, uint64_t addr, uint32_t width, uint64_t t, uint32_t delay, int mshr_free,
                     struct trace_l1_answer *a)
{
    struct l1 *c = h;
    const struct cache_geom *g = &c->fb->geom;
    uint64_t line = addr >> g->line_shift;
    uint32_t want = cache_sectors_of(g, addr, width);
    const struct cache_line *l = held(c, line, t);
    enum trace_l1_verdict v = verdict(l, want, t, c->fb->max_merge);
    if (v == TRACE_L1_FETCH && !mshr_free) {
        a->verdict = TRACE_L1_STALL;
        return 0;
    }
    uint64_t done = v == TRACE_L1_MERGED ? l->ready : 0; /* before the access moves any state */
    int64_t got = apply(c, line, want, t, delay);
    /* out of memory, or the engine did not do what the rules said it would */
    if (got < 0 || (got > 0) != (v == TRACE_L1_FETCH))
        return -1;
    a->verdict = v;
    a->done = done;
    return 0;
}

void cache_feedback_ops(struct cache_feedback *fb, struct trace_l1_ops *ops)
{
    pthread_mutex_init(&fb->mu, NULL);
    fb->nspare = 0;
    *ops = (struct trace_l1_ops){.open = l1_open, .access = l1_access, .close = l1_close,
                                 .prefetch = l1_prefetch, .ctx = fb, .hit_latency = fb->hit_latency};
}

void cache_feedback_done(struct cache_feedback *fb)
{
    while (fb->nspare)
        l1_free(fb->spare[--fb->nspare]);
    pthread_mutex_destroy(&fb->mu);
}

uint32_t cache_feedback_hit_latency(uint32_t lat_min)
{
    uint64_t h = ((uint64_t)lat_min * 32 + 250) / 500;
    return h ? (uint32_t)h : 1;
}
