/*
 * Step 1d, event-driven (see order.h for the model and docs/trace-sort.md
 * for every rule the seed leaves open).
 *
 * DESIGN
 * State per resident warp slot (pos = slot * warps_per_block + warp): its
 * lane cursors (struct trace_warp; the warp is exhausted when no lane has
 * records left, live == 0), the number of its dependent transactions still
 * in flight, and a ready bit: resident, not exhausted, nothing dependent in
 * flight. The in-flight set holds (completion clock, pos, or NONE for
 * requests nobody waits for): a timing wheel when every delay fits in
 * WHEEL_MAX ticks (every preset), a binary min-heap otherwise (struct fly).
 * Completions are handled at the tick they fall on: a warp whose last
 * dependent transaction returns becomes ready, or finishes if it has
 * nothing left; a block whose warps all finished frees its slot, and freed
 * slots are refilled in increasing slot order once the tick's completions
 * are all handled (or right after an instruction that finished a block).
 * All of a loop's arrays are carved from one allocation ("memory" below).
 */
#include "trace/order.h"

#include <assert.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "trace/rng.h"

#define NONE UINT32_MAX
#define OUTBUF 1024

struct ev {
    uint64_t t;
    uint32_t pos;
};

/* The in-flight set: a timing wheel (a bucket per clock value modulo a
 * power of two above the longest delay; each bucket a count and a list of
 * the warps waiting) when delays stay under WHEEL_MAX ticks, which holds
 * for every preset; a binary min-heap by completion clock otherwise. */
#define WHEEL_MAX 65536u

struct fly {
    uint32_t n;                 /* requests in flight */
    int wheel;
    struct ev *heap;            /* heap: n entries */
    uint32_t mask, nwords;      /* wheel: buckets - 1, bitmap words */
    uint32_t *count, *head;     /* per bucket: requests, first waiting node */
    uint64_t *bits;             /* non-empty buckets */
    uint32_t *node_pos, *node_next, free_node;
};

struct loop {
    const struct trace_params *p;
    uint32_t sm;
    const struct trace_block_src *src;
    const struct trace_emit *emit;
    struct trace_sm_stats *st;
    struct trace_coalescer co;
    struct trace_rng rng;
    int fixed;

    uint32_t wpb, nslots, npos, nwords;
    struct trace_warp *warps;
    uint32_t *outstanding;
    uint64_t *ready;
    uint64_t *slot_block;
    uint32_t *slot_left;
    uint64_t free_slots;
    uint32_t resident;
    int queue_done;

    struct fly fly;
    uint64_t clock;

    uint32_t issuing;
    uint32_t rr_next;
    uint32_t gto_pos;
    uint64_t gto_block;

    struct trace_out *out;
    size_t nout;
    uint64_t seq;
    int err;
    struct trace_group g;

    char *mem; /* the allocation that warps ... out and the fly's arrays are carved from */
};

/* ---- memory ------------------------------------------------------------ */

/* The loop's arrays share one zeroed allocation, carved by the same walk run
 * twice: first with no base, only adding up the sizes, then over the block
 * to hand out the pieces. So setup has one failure to check, teardown one
 * free, and no list of arrays is written twice. */
struct carve {
    char *base;  /* NULL while sizing */
    size_t used; /* bytes handed out, each piece aligned for any type */
};

/* n elements of size bytes (NULL while sizing). */
static void *carve(struct carve *c, size_t n, size_t size)
{
    const size_t align = _Alignof(max_align_t);
    size_t at = (c->used + align - 1) / align * align;
    c->used = at + n * size;
    return c->base ? c->base + at : NULL;
}

/* ---- ready bitmap ------------------------------------------------------ */

static inline void ready_set(struct loop *l, uint32_t pos)
{
    l->ready[pos >> 6] |= 1ull << (pos & 63);
}
static inline void ready_clear(struct loop *l, uint32_t pos)
{
    l->ready[pos >> 6] &= ~(1ull << (pos & 63));
}
static inline int ready_test(const struct loop *l, uint32_t pos)
{
    return (l->ready[pos >> 6] >> (pos & 63)) & 1;
}

/* First ready position at or after `from`, wrapping; NONE if none. */
static uint32_t ready_next(const struct loop *l, uint32_t from)
{
    uint32_t w = from >> 6;
    uint64_t bits = l->ready[w] & (~0ull << (from & 63));
    for (uint32_t i = 0; i <= l->nwords; i++) {
        if (bits)
            return (w << 6) + (uint32_t)__builtin_ctzll(bits);
        w = w + 1 == l->nwords ? 0 : w + 1;
        bits = l->ready[w];
    }
    return NONE;
}

/* ---- in-flight set ------------------------------------------------------ */

static void heap_push(struct fly *f, uint64_t t, uint32_t pos)
{
    uint32_t i = f->n;
    while (i) {
        uint32_t up = (i - 1) >> 1;
        if (f->heap[up].t <= t)
            break;
        f->heap[i] = f->heap[up];
        i = up;
    }
    f->heap[i].t = t;
    f->heap[i].pos = pos;
}

static uint32_t heap_pop(struct fly *f)
{
    uint32_t pos = f->heap[0].pos;
    struct ev last = f->heap[f->n - 1];
    uint32_t n = f->n - 1, i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && f->heap[c + 1].t < f->heap[c].t)
            c++;
        if (last.t <= f->heap[c].t)
            break;
        f->heap[i] = f->heap[c];
        i = c;
    }
    if (n)
        f->heap[i] = last;
    return pos;
}

static void wheel_push(struct fly *f, uint64_t t, uint32_t pos)
{
    uint32_t b = (uint32_t)t & f->mask;
    f->count[b]++;
    f->bits[b >> 6] |= 1ull << (b & 63);
    if (pos == NONE)
        return;
    uint32_t node = f->free_node;
    f->free_node = f->node_next[node];
    f->node_pos[node] = pos;
    f->node_next[node] = f->head[b];
    f->head[b] = node;
}

static void fly_push(struct fly *f, uint64_t t, uint32_t pos)
{
    if (f->wheel)
        wheel_push(f, t, pos);
    else
        heap_push(f, t, pos);
    f->n++;
}

/* Earliest completion clock after `clock` (f->n > 0). */
static uint64_t fly_next(const struct fly *f, uint64_t clock)
{
    if (!f->wheel)
        return f->heap[0].t;
    uint32_t from = (uint32_t)(clock + 1) & f->mask;
    uint32_t w = from >> 6;
    uint64_t bits = f->bits[w] & (~0ull << (from & 63));
    for (uint32_t i = 0;; i++) {
        if (bits) {
            uint32_t b = (w << 6) + (uint32_t)__builtin_ctzll(bits);
            return clock + 1 + ((b - from) & f->mask);
        }
        w = w + 1 == f->nwords ? 0 : w + 1;
        bits = f->bits[w];
        if (i > f->nwords) /* cannot happen with f->n > 0 */
            return clock + 1;
    }
}

/* Chooses wheel or heap for p's delays and takes their arrays from c. */
static void fly_carve(struct fly *f, const struct trace_params *p, struct carve *c)
{
    uint64_t longest = p->lat_min;
    if (p->delay == TRACE_DELAY_NORMAL)
        longest += (uint64_t)(p->lat_sigma * TRACE_HALF_NORMAL_MAX) + 1;
    size_t slots = (size_t)p->mshr + 1;
    f->wheel = longest < WHEEL_MAX;
    if (!f->wheel) {
        f->heap = carve(c, slots, sizeof *f->heap);
        return;
    }
    uint32_t buckets = 64;
    while (buckets <= longest)
        buckets *= 2;
    f->mask = buckets - 1;
    f->nwords = buckets / 64;
    f->count = carve(c, buckets, sizeof *f->count);
    f->head = carve(c, buckets, sizeof *f->head);
    f->bits = carve(c, f->nwords, sizeof *f->bits);
    f->node_pos = carve(c, slots, sizeof *f->node_pos);
    f->node_next = carve(c, slots, sizeof *f->node_next);
}

/* An empty set on zeroed arrays: no warp waits in any bucket, every wheel
 * node is free (an empty heap needs nothing). */
static void fly_init(struct fly *f, const struct trace_params *p)
{
    if (!f->wheel)
        return;
    memset(f->head, 0xff, ((size_t)f->mask + 1) * sizeof *f->head); /* NONE */
    for (uint32_t i = 0; i <= p->mshr; i++)
        f->node_next[i] = i + 1;
    f->free_node = 0;
}

/* ---- residency ---------------------------------------------------------- */

static void finish_warp(struct loop *l, uint32_t pos)
{
    ready_clear(l, pos);
    uint32_t slot = pos / l->wpb;
    if (--l->slot_left[slot] == 0) {
        if (l->src->retire)
            l->src->retire(l->src->ctx, slot);
        l->resident--;
        l->free_slots |= 1ull << slot;
    }
}

/* Sets up the warps of the block just placed in `slot`; returns how many
 * have requests. */
static uint32_t activate_block(struct loop *l, uint32_t slot)
{
    uint32_t live = 0;
    for (uint32_t w = 0; w < l->wpb; w++) {
        uint32_t pos = slot * l->wpb + w;
        l->outstanding[pos] = 0;
        if (!l->warps[pos].live)
            continue;
        live++;
        ready_set(l, pos);
    }
    return live;
}

/* Refills the freed slots in increasing order from the block source. */
static void admit(struct loop *l)
{
    while (l->free_slots && !l->err) {
        uint32_t slot = (uint32_t)__builtin_ctzll(l->free_slots);
        if (l->queue_done) {
            l->free_slots = 0;
            return;
        }
        memset(&l->warps[slot * l->wpb], 0, l->wpb * sizeof *l->warps);
        uint64_t records = 0;
        int rc = l->src->next(l->src->ctx, slot, &l->slot_block[slot], &records, &l->warps[slot * l->wpb]);
        if (rc < 0) {
            l->err = rc;
            return;
        }
        if (rc == 0) {
            l->queue_done = 1;
            continue;
        }
        l->st->blocks++;
        l->st->records_in += records;
        uint32_t live = activate_block(l, slot);
        l->st->warps += live;
        if (live == 0) { /* nothing to issue: it finishes at once */
            if (l->src->retire)
                l->src->retire(l->src->ctx, slot);
            continue;
        }
        l->slot_left[slot] = live;
        l->resident++;
        l->free_slots &= ~(1ull << slot);
    }
}

/* ---- time --------------------------------------------------------------- */

static void complete(struct loop *l, uint32_t pos)
{
    if (pos == NONE || --l->outstanding[pos] != 0 || pos == l->issuing)
        return;
    if (l->warps[pos].live == 0)
        finish_warp(l, pos);
    else
        ready_set(l, pos);
}

/* Moves the clock to t (no completion before t) and handles those at t. */
static void advance_to(struct loop *l, uint64_t t)
{
    struct fly *f = &l->fly;
    l->clock = t;
    if (f->wheel) {
        uint32_t b = (uint32_t)t & f->mask;
        if (f->bits[b >> 6] & (1ull << (b & 63))) {
            f->bits[b >> 6] &= ~(1ull << (b & 63));
            f->n -= f->count[b];
            f->count[b] = 0;
            uint32_t node = f->head[b];
            f->head[b] = NONE;
            while (node != NONE) {
                uint32_t next = f->node_next[node];
                complete(l, f->node_pos[node]);
                f->node_next[node] = f->free_node;
                f->free_node = node;
                node = next;
            }
        }
    } else {
        while (f->n && f->heap[0].t == t) {
            uint32_t pos = heap_pop(f);
            f->n--;
            complete(l, pos);
        }
    }
    if (l->free_slots)
        admit(l);
}

/* One 6c. */
static void tick(struct loop *l)
{
    l->st->ticks++;
    advance_to(l, l->clock + 1);
}

/* 6c repeated until the next completion; returns the ticks it took. */
static uint64_t jump(struct loop *l)
{
    uint64_t t = fly_next(&l->fly, l->clock);
    uint64_t d = t - l->clock;
    l->st->ticks += d;
    advance_to(l, t);
    return d;
}

/* ---- 6b: the scheduling policies --------------------------------------- */

static uint32_t pick_gto(const struct loop *l)
{
    if (l->gto_pos != NONE && ready_test(l, l->gto_pos) && l->slot_block[l->gto_pos / l->wpb] == l->gto_block)
        return l->gto_pos;
    uint32_t best = NONE;
    uint64_t best_block = 0;
    for (uint32_t w = 0; w < l->nwords; w++)
        for (uint64_t bits = l->ready[w]; bits; bits &= bits - 1) {
            uint32_t pos = (w << 6) + (uint32_t)__builtin_ctzll(bits);
            uint64_t b = l->slot_block[pos / l->wpb];
            if (best == NONE || b < best_block || (b == best_block && pos % l->wpb < best % l->wpb)) {
                best = pos;
                best_block = b;
            }
        }
    return best;
}

static uint32_t pick(const struct loop *l)
{
    if (l->p->schedule == TRACE_SCHEDULE_GTO)
        return pick_gto(l);
    return ready_next(l, l->rr_next);
}

/* ---- 6e: output ------------------------------------------------------ */

static void flush(struct loop *l)
{
    if (l->nout && !l->err) {
        int rc = l->emit->sink(l->emit->ctx, l->out, l->nout);
        if (rc)
            l->err = rc;
    }
    l->nout = 0;
}

static void emit_one(struct loop *l, const struct trace_rec *t)
{
    struct trace_out *o = &l->out[l->nout++];
    l->st->requests_out++;
    o->sm = l->sm;
    o->seq = l->seq++;
    o->tid = t->tid;
    o->pc = t->pc;
    o->addr = t->addr;
    o->width = t->width;
    o->dep = t->dep;
    o->store = t->store;
    if (l->nout == OUTBUF)
        flush(l);
}

/* 6b's instruction through 6c-6e, transaction by transaction. */
static void issue(struct loop *l, uint32_t pos)
{
    struct trace_group *g = &l->g;
    uint32_t delay[TRACE_WARP_SIZE];
    trace_warp_next(&l->warps[pos], &l->co, g);
    /* the instruction's delays in one call: the same draws, in the same
     * order, as one per transaction below (nothing else draws in between) */
    trace_rng_delays(&l->rng, l->fixed, l->p->lat_min, l->p->lat_sigma, delay, g->n);
    l->st->instructions++;
    l->issuing = pos;
    ready_clear(l, pos);
    for (uint32_t i = 0; i < g->n && !l->err; i++) {
        tick(l);                        /* 6c */
        while (l->fly.n >= l->p->mshr)  /* 6d */
            l->st->mshr_stall_ticks += jump(l);
        emit_one(l, &g->txn[i]);        /* 6e */
        fly_push(&l->fly, l->clock + delay[i], g->dep ? pos : NONE);
        if (g->dep)
            l->outstanding[pos]++;
        if (l->fly.n > l->st->max_in_flight)
            l->st->max_in_flight = l->fly.n;
    }
    l->issuing = NONE;
    l->rr_next = pos + 1 == l->npos ? 0 : pos + 1;
    l->gto_pos = pos;
    l->gto_block = l->slot_block[pos / l->wpb];
    if (l->outstanding[pos]) {
        l->st->dep_blocks++;
    } else if (l->warps[pos].live == 0) {
        finish_warp(l, pos);
        admit(l);
    } else {
        ready_set(l, pos);
    }
}

/* ---- the loop ----------------------------------------------------------- */

/* Takes every array of the loop from c. */
static void loop_carve(struct loop *l, const struct trace_params *p, struct carve *c)
{
    l->warps = carve(c, l->npos, sizeof *l->warps);
    l->outstanding = carve(c, l->npos, sizeof *l->outstanding);
    l->ready = carve(c, l->nwords, sizeof *l->ready);
    l->slot_block = carve(c, l->nslots, sizeof *l->slot_block);
    l->slot_left = carve(c, l->nslots, sizeof *l->slot_left);
    l->out = carve(c, OUTBUF, sizeof *l->out);
    fly_carve(&l->fly, p, c);
}

static int setup(struct loop *l, const struct trace_params *p)
{
    struct carve c = {0};
    l->wpb = trace_params_warps_per_block(p);
    l->nslots = p->blocks_per_sm;
    l->npos = l->nslots * l->wpb;
    l->nwords = (l->npos + 63) / 64;
    loop_carve(l, p, &c); /* sizes only */
    l->mem = calloc(1, c.used);
    if (!l->mem)
        return -1;
    c = (struct carve){.base = l->mem};
    loop_carve(l, p, &c);
    fly_init(&l->fly, p);
    return 0;
}

static void run(struct loop *l)
{
    l->free_slots = l->nslots == 64 ? ~0ull : (1ull << l->nslots) - 1;
    admit(l);
    while (!l->err && l->resident) {
        uint32_t pos = pick(l);
        if (pos != NONE) {
            issue(l, pos);
            continue;
        }
        if (!l->fly.n) { /* no warp ready and nothing to wait for: cannot happen */
            l->err = -2;
            break;
        }
        l->st->idle_ticks += jump(l);
    }
    flush(l);
}

int trace_order_sm(const struct trace_params *p, uint32_t sm, const struct trace_block_src *src,
                   const struct trace_emit *emit, struct trace_sm_stats *st)
{
    /* resolved and valid parameters, an SM that exists: else the order is wrong */
    assert(p && src && emit && st);
    assert(sm < p->sms && p->blocks_per_sm >= 1 && p->threads_per_block >= 1 && p->mshr >= 1);
    struct loop *l = calloc(1, sizeof *l);
    if (!l)
        return -2;
    memset(st, 0, sizeof *st);
    l->p = p;
    l->sm = sm;
    l->src = src;
    l->emit = emit;
    l->st = st;
    l->issuing = NONE;
    l->gto_pos = NONE;
    l->fixed = p->delay == TRACE_DELAY_FIXED;
    trace_coalescer_init(&l->co, p);
    trace_rng_seed_stream(&l->rng, p->seed, sm);
    int rc = setup(l, p) ? -2 : 0;
    if (rc == 0) {
        run(l);
        rc = l->err;
    }
    free(l->mem);
    free(l);
    return rc;
}
