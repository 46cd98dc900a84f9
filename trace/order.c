/*
 * Step 1d, event-driven (see order.h for the model and docs/trace-sort.md
 * for every rule Nugteren et al.'s method leaves open).
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
 * With an L1 (order_l1.h) a transaction is a fetch, a hit or a merged
 * request: only fetches count as in flight for 6d (struct fly's n); a hit
 * or merged request that its warp waits for is a *wait* entry of the same
 * set, which frees no MSHR when it completes (fly_wait). Without an L1 the
 * loop takes the same path it always took (in issue), byte for byte.
 */
#include "trace/order.h"

#include <assert.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "trace/rng.h"

#define NONE UINT32_MAX

/* The steps of issuing a transaction, inlined where they are used: each
 * has two callers (the loop with and without an L1), and as calls they
 * cost the sorter without an L1 6% more instructions per request. */
#define HOT static inline __attribute__((always_inline))
#define OUTBUF 1024
#define BIN_ROOM 8192 /* encoded records asked for at once (an output queue's buffer) */

struct ev {
    uint64_t t;
    uint32_t pos;               /* WAIT set: a wait entry, not a fetch */
};

/* Marks a position as a wait entry in the in-flight set (positions are
 * far below it: at most 64 blocks of 32 warps); NONE never carries it. */
#define WAIT 0x80000000u

/* The in-flight set: a timing wheel (a bucket per clock value modulo a
 * power of two above the longest delay; each bucket a count and a list of
 * the warps waiting) when delays stay under WHEEL_MAX ticks, which holds
 * for every preset; a binary min-heap by completion clock otherwise. */
#define WHEEL_MAX 65536u

struct fly {
    uint32_t n;                 /* fetches in flight: MSHRs in use */
    uint32_t waits;             /* wait entries in flight (hits and merged requests waited for) */
    int wheel;
    struct ev *heap;            /* heap: hn entries */
    uint32_t hn;
    uint32_t mask, nwords;      /* wheel: buckets - 1, bitmap words */
    uint32_t *count, *head;     /* per bucket: fetches, first waiting node */
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
    const struct trace_l1_ops *l1ops; /* NULL: every transaction is a fetch */
    void *l1;                         /* this SM's L1, from l1ops->open */

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
    const struct trace_bin_room *bin; /* set: records go encoded to bout, not to out */
    uint8_t *bout;
    size_t bcap;                      /* records bout has room for; 0: ask at the next record */
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
    uint32_t i = f->hn++;
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
    struct ev last = f->heap[f->hn - 1];
    uint32_t n = --f->hn, i = 0;
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

/* Puts warp pos (or a wait entry, pos | WAIT) on bucket b's list. */
HOT void wheel_node(struct fly *f, uint32_t b, uint32_t pos)
{
    uint32_t node = f->free_node;
    f->free_node = f->node_next[node];
    f->node_pos[node] = pos;
    f->node_next[node] = f->head[b];
    f->head[b] = node;
}

/* A fetch, counted in its bucket, with the warp waiting for it or NONE. */
HOT void wheel_push(struct fly *f, uint64_t t, uint32_t pos)
{
    uint32_t b = (uint32_t)t & f->mask;
    f->count[b]++;
    f->bits[b >> 6] |= 1ull << (b & 63);
    if (pos != NONE)
        wheel_node(f, b, pos);
}

/* A wait entry: on its bucket's list only (no fetch counted). */
static void wheel_wait(struct fly *f, uint64_t t, uint32_t pos)
{
    uint32_t b = (uint32_t)t & f->mask;
    f->bits[b >> 6] |= 1ull << (b & 63);
    wheel_node(f, b, pos | WAIT);
}

/* A fetch completing at t; pos: the warp waiting for it, or NONE. */
HOT void fly_push(struct fly *f, uint64_t t, uint32_t pos)
{
    if (f->wheel)
        wheel_push(f, t, pos);
    else
        heap_push(f, t, pos);
    f->n++;
}

/* A hit or merged request that warp pos waits for, back at t: no MSHR. */
static void fly_wait(struct fly *f, uint64_t t, uint32_t pos)
{
    if (f->wheel)
        wheel_wait(f, t, pos);
    else
        heap_push(f, t, pos | WAIT);
    f->waits++;
}

/* Earliest completion clock after `clock` (something in flight). */
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

/* Entries the in-flight set may hold at once: a fetch per MSHR (one more
 * while 6e puts a fetch in before the next 6d), and with an L1 a wait entry
 * per transaction of every warp's last instruction. */
static size_t fly_slots(const struct trace_params *p, const struct trace_l1_ops *l1, uint32_t npos)
{
    return (size_t)p->mshr + 1 + (l1 ? (size_t)npos * TRACE_WARP_SIZE : 0);
}

/* Chooses wheel or heap for p's delays (and a hit's) and takes their arrays
 * from c. */
static void fly_carve(struct fly *f, const struct trace_params *p, const struct trace_l1_ops *l1, uint32_t npos,
                      struct carve *c)
{
    uint64_t longest = p->lat_min;
    if (p->delay == TRACE_DELAY_NORMAL)
        longest += (uint64_t)(p->lat_sigma * TRACE_HALF_NORMAL_MAX) + 1;
    if (l1 && l1->hit_latency > longest)
        longest = l1->hit_latency;
    size_t slots = fly_slots(p, l1, npos);
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
static void fly_init(struct fly *f, size_t slots)
{
    if (!f->wheel)
        return;
    memset(f->head, 0xff, ((size_t)f->mask + 1) * sizeof *f->head); /* NONE */
    for (size_t i = 0; i < slots; i++)
        f->node_next[i] = (uint32_t)i + 1;
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

/* Completes the warps waiting on bucket b's list, in list order, and
 * frees the nodes. */
static void wheel_complete(struct loop *l, uint32_t b)
{
    struct fly *f = &l->fly;
    uint32_t node = f->head[b];
    f->head[b] = NONE;
    while (node != NONE) {
        uint32_t next = f->node_next[node], pos = f->node_pos[node];
        if (pos & WAIT) {
            f->waits--;
            pos &= ~WAIT;
        }
        complete(l, pos);
        f->node_next[node] = f->free_node;
        f->free_node = node;
        node = next;
    }
}

/* The heap's completions at t. */
static void heap_complete(struct loop *l, uint64_t t)
{
    struct fly *f = &l->fly;
    while (f->hn && f->heap[0].t == t) {
        uint32_t pos = heap_pop(f);
        if (pos != NONE && (pos & WAIT)) {
            f->waits--;
            pos &= ~WAIT;
        } else {
            f->n--;
        }
        complete(l, pos);
    }
}

/* Moves the clock to t (no completion before t) and handles those at t.
 * Inlined: most ticks find an empty bucket, or one of fetches nobody waits
 * for (a count); only waiting warps and refills take a call. */
HOT void advance_to(struct loop *l, uint64_t t)
{
    struct fly *f = &l->fly;
    l->clock = t;
    if (f->wheel) {
        uint32_t b = (uint32_t)t & f->mask;
        if (f->bits[b >> 6] & (1ull << (b & 63))) {
            f->bits[b >> 6] &= ~(1ull << (b & 63));
            f->n -= f->count[b];
            f->count[b] = 0;
            if (f->head[b] != NONE)
                wheel_complete(l, b);
        }
    } else {
        heap_complete(l, t);
    }
    if (l->free_slots)
        admit(l);
}

/* One 6c. */
HOT void tick(struct loop *l)
{
    l->st->ticks++;
    advance_to(l, l->clock + 1);
}

/* 6c repeated until the next completion; returns the ticks it took. */
HOT uint64_t jump(struct loop *l)
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
    if (l->bin) {
        if (l->nout && !l->err) {
            int rc = l->bin->commit(l->bin->ctx, l->nout);
            if (rc)
                l->err = rc;
        }
        l->nout = l->bcap = 0;
        return;
    }
    if (l->nout && !l->err) {
        int rc = l->emit->sink(l->emit->ctx, l->out, l->nout);
        if (rc)
            l->err = rc;
    }
    l->nout = 0;
}

/* emit_one encoding into the room's memory: the record's only copy on its
 * way to the output file (no trace_out, no second pass to encode). */
HOT void emit_bin(struct loop *l, const struct trace_rec *t)
{
    size_t nout = l->nout;
    uint64_t seq = l->seq;
    if (nout == l->bcap) { /* nout is 0: the last room was committed when full */
        l->bcap = BIN_ROOM;
        l->bout = l->bin->room(l->bin->ctx, &l->bcap);
    }
    l->nout = nout + 1;
    l->seq = seq + 1;
    trace_bin_out_put(l->bout + nout * TRACE_BIN_OUT_BYTES, seq, t->tid, t->pc, t->addr, l->sm, t->width, t->dep,
                      t->store);
    if (nout + 1 == l->bcap)
        flush(l);
}

HOT void emit_one(struct loop *l, const struct trace_rec *t)
{
    if (l->bin) {
        emit_bin(l, t);
        return;
    }
    /* the loop's fields read once, before the record's stores (which the
     * compiler must assume may alias them) */
    size_t nout = l->nout;
    uint64_t seq = l->seq;
    struct trace_out *o = &l->out[nout];
    l->nout = nout + 1;
    l->seq = seq + 1;
    o->sm = l->sm;
    o->seq = seq;
    o->tid = t->tid;
    o->pc = t->pc;
    o->addr = t->addr;
    o->width = t->width;
    o->dep = t->dep;
    o->store = t->store;
    if (nout + 1 == OUTBUF)
        flush(l);
}

/* 6e's in-flight part for a fetch of warp pos (waited for when dep), with
 * the L1. */
static void put_fetch(struct loop *l, uint32_t pos, uint32_t delay, int dep)
{
    fly_push(&l->fly, l->clock + delay, dep ? pos : NONE);
    if (dep)
        l->outstanding[pos]++;
    if (l->fly.n > l->st->max_in_flight)
        l->st->max_in_flight = l->fly.n;
}

/* 6c-6e for one transaction of warp pos, the L1 consulted: 6d holds back
 * only a transaction that would fetch; a hit or a merged one holds no MSHR,
 * and is put in flight only when its warp waits for it. Not inlined: kept
 * out of the loop without an L1, whose registers it would crowd. */
__attribute__((noinline)) static void issue_txn_l1(struct loop *l, uint32_t pos, const struct trace_rec *t,
                                                   uint32_t delay, int dep)
{
    struct trace_l1_answer a;
    tick(l); /* 6c */
    for (;;) {
        if (l->l1ops->access(l->l1, t->addr, t->width, l->clock, delay, l->fly.n < l->p->mshr, &a) < 0) {
            l->err = -2;
            return;
        }
        if (a.verdict != TRACE_L1_STALL)
            break;
        l->st->mshr_stall_ticks += jump(l); /* 6d: a fetch, and every MSHR taken */
    }
    emit_one(l, t); /* 6e */
    uint64_t back;
    switch (a.verdict) {
    case TRACE_L1_FETCH:
        put_fetch(l, pos, delay, dep);
        return;
    case TRACE_L1_HIT:
        l->st->l1_hits++;
        if (l->l1ops->hit_latency == 0)
            return;
        back = l->clock + l->l1ops->hit_latency;
        break;
    default:
        /* the L1's contract (order_l1.h): back after now, with the fetch it joined */
        assert(a.verdict == TRACE_L1_MERGED && a.done > l->clock);
        l->st->l1_merged++;
        back = a.done;
        break;
    }
    if (dep) {
        fly_wait(&l->fly, back, pos);
        l->outstanding[pos]++;
    }
}

/* 6b's instruction through 6c-6e, transaction by transaction. */
static void issue(struct loop *l, uint32_t pos)
{
    struct trace_group *g = &l->g;
    uint32_t delay[TRACE_WARP_SIZE];
    trace_warp_next(&l->warps[pos], &l->co, g);
    /* the instruction's delays in one call: the same draws, in the same
     * order, as one per transaction below (nothing else draws in between);
     * with an L1, a transaction that does not fetch leaves its draw unused */
    trace_rng_delays(&l->rng, l->fixed, l->p->lat_min, l->p->lat_sigma, delay, g->n);
    l->st->instructions++;
    l->issuing = pos;
    ready_clear(l, pos);
    if (l->l1ops) {
        if (l->l1ops->prefetch) /* a scattered instruction's lines, asked for at once */
            for (uint32_t i = 0; i < g->n; i++)
                l->l1ops->prefetch(l->l1, g->txn[i].addr);
        for (uint32_t i = 0; i < g->n && !l->err; i++)
            issue_txn_l1(l, pos, &g->txn[i], delay[i], g->dep);
    } else { /* every transaction a fetch: the loop as it was before the L1 */
        const uint32_t mshr = l->p->mshr, waiter = g->dep ? pos : NONE;
        uint64_t most = l->st->max_in_flight; /* nothing else reads it meanwhile */
        for (uint32_t i = 0; i < g->n && !l->err; i++) {
            tick(l);                        /* 6c */
            while (l->fly.n >= mshr)        /* 6d */
                l->st->mshr_stall_ticks += jump(l);
            emit_one(l, &g->txn[i]);        /* 6e */
            fly_push(&l->fly, l->clock + delay[i], waiter);
            if (waiter != NONE)
                l->outstanding[pos]++;
            if (l->fly.n > most)
                most = l->fly.n;
        }
        l->st->max_in_flight = most;
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
    l->out = carve(c, l->bin ? 0 : OUTBUF, sizeof *l->out); /* encoded output needs no batch */
    fly_carve(&l->fly, p, l->l1ops, l->npos, c);
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
    fly_init(&l->fly, fly_slots(p, l->l1ops, l->npos));
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
        if (!l->fly.n && !l->fly.waits) { /* no warp ready and nothing to wait for: cannot happen */
            l->err = -2;
            break;
        }
        l->st->idle_ticks += jump(l);
    }
    flush(l);
    l->st->requests_out = l->seq; /* one seq per transaction emitted, from 0 */
}

int trace_order_sm(const struct trace_params *p, uint32_t sm, const struct trace_block_src *src,
                   const struct trace_emit *emit, struct trace_sm_stats *st)
{
    return trace_order_sm_l1(p, sm, src, emit, NULL, st);
}

int trace_order_sm_l1(const struct trace_params *p, uint32_t sm, const struct trace_block_src *src,
                      const struct trace_emit *emit, const struct trace_l1_ops *l1, struct trace_sm_stats *st)
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
    l->bin = emit->bin;
    l->st = st;
    l->issuing = NONE;
    l->gto_pos = NONE;
    l->fixed = p->delay == TRACE_DELAY_FIXED;
    l->l1ops = l1;
    trace_coalescer_init(&l->co, p);
    trace_rng_seed_stream(&l->rng, p->seed, sm);
    int rc = setup(l, p) || (l1 && !(l->l1 = l1->open(l1->ctx, sm))) ? -2 : 0;
    if (rc == 0) {
        run(l);
        rc = l->err;
    }
    if (l->l1)
        l1->close(l->l1);
    free(l->mem);
    free(l);
    return rc;
}
