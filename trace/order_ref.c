/*
 * The literal 6a-6f loop (see order_ref.h; the model is docs/trace-sort.md,
 * "Step 1d").
 *
 * DESIGN
 * 6a: blocked[] per warp position, an in-flight array of (remaining delay,
 * waiting warp) and the output. 6b: scan the positions for a ready warp
 * (round-robin from the one after the last issuer, or greedy-then-oldest);
 * if none, every warp is blocked: run 6c until one frees. For each
 * transaction of the picked instruction: 6c decrements every delay and drops
 * those at 0 (a waiting warp whose count of dependent transactions in flight
 * reaches 0 is unblocked); 6d repeats 6c while the array holds mshr
 * requests; 6e appends the transaction to the output and puts it in flight.
 * After the instruction the warp is blocked if it carried the dependency
 * flag and some of its transactions are still out. 6f: done when no block
 * is resident and none is left to place. Residency is re-derived by
 * scanning after every 6c and after every instruction.
 * With an L1 (order_l1.h) each transaction is asked about at its 6e, tick
 * by tick while it would fetch with the MSHRs all taken (6d counts fetches
 * only); a hit or a merged transaction that its warp waits for goes into
 * the same array, marked as holding no MSHR, with the ticks until its data
 * is back; the clock is the count of 6c.
 */
#include "trace/order_ref.h"

#include <stdlib.h>
#include <string.h>

#include "trace/rng.h"

#define NONE UINT32_MAX

/* ---- collecting the input -------------------------------------------- */

static int collect_warp(const struct trace_coalescer *co, struct trace_warp *w, struct trace_ref_warp *rw)
{
    size_t cap = 0;
    struct trace_group g;
    while (trace_warp_next(w, co, &g)) {
        if (rw->ngroups == cap) {
            cap = cap ? cap * 2 : 8;
            struct trace_group *ng = realloc(rw->groups, cap * sizeof *ng);
            if (!ng)
                return -2;
            rw->groups = ng;
        }
        rw->groups[rw->ngroups++] = g;
    }
    return 0;
}

static int collect_block(const struct trace_params *p, const struct trace_coalescer *co,
                         struct trace_warp *warps, struct trace_ref_block *b)
{
    uint32_t wpb = trace_params_warps_per_block(p);
    b->warps = calloc(wpb, sizeof *b->warps);
    if (!b->warps)
        return -2;
    for (uint32_t w = 0; w < wpb; w++)
        if (collect_warp(co, &warps[w], &b->warps[w]))
            return -2;
    return 0;
}

int trace_ref_collect(const struct trace_params *p, const struct trace_block_src *src,
                      struct trace_ref_block **blocks, size_t *n)
{
    uint32_t wpb = trace_params_warps_per_block(p);
    struct trace_coalescer co;
    trace_coalescer_init(&co, p);
    struct trace_warp *warps = malloc(wpb * sizeof *warps);
    size_t cap = 0;
    int rc = warps ? 0 : -2;
    *blocks = NULL;
    *n = 0;
    while (rc == 0) {
        memset(warps, 0, wpb * sizeof *warps);
        uint64_t id, records = 0;
        int got = src->next(src->ctx, 0, &id, &records, warps);
        if (got <= 0) {
            rc = got;
            break;
        }
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            struct trace_ref_block *nb = realloc(*blocks, cap * sizeof *nb);
            if (!nb) {
                rc = -2;
                break;
            }
            *blocks = nb;
        }
        struct trace_ref_block *b = &(*blocks)[(*n)++];
        memset(b, 0, sizeof *b);
        b->id = id;
        b->records = records;
        rc = collect_block(p, &co, warps, b);
    }
    free(warps);
    return rc;
}

void trace_ref_blocks_free(const struct trace_params *p, struct trace_ref_block *blocks, size_t n)
{
    uint32_t wpb = trace_params_warps_per_block(p);
    for (size_t i = 0; i < n; i++) {
        if (blocks[i].warps)
            for (uint32_t w = 0; w < wpb; w++)
                free(blocks[i].warps[w].groups);
        free(blocks[i].warps);
    }
    free(blocks);
}

/* ---- the loop ------------------------------------------------------------ */

struct inflight {
    uint64_t remaining;
    uint32_t pos;
    int fetch;             /* holds an MSHR */
};

struct ref {
    const struct trace_params *p;
    const struct trace_ref_block *blocks;
    size_t nblocks, next_block;
    uint32_t wpb, nslots, npos;
    long *slot;            /* index into blocks, -1 when empty */
    size_t *cursor;        /* next instruction, per position */
    int *blocked;          /* 6a's flags */
    uint32_t *waiting_for; /* dependent transactions in flight, per position */
    int *finished;
    struct inflight *fly;
    uint32_t nfly;
    uint32_t nfetch;       /* entries of fly that hold an MSHR */
    const struct trace_l1_ops *l1ops;
    void *l1;
    uint32_t issuing, last_pos;
    uint64_t last_block;
    struct trace_rng rng;
    struct trace_sm_stats *st;
    const struct trace_emit *emit;
    uint32_t sm;
    uint64_t seq;
    int err;
};

static const struct trace_ref_warp *warp_at(const struct ref *r, uint32_t pos)
{
    return &r->blocks[r->slot[pos / r->wpb]].warps[pos % r->wpb];
}

static int ready(const struct ref *r, uint32_t pos)
{
    if (r->slot[pos / r->wpb] < 0 || r->finished[pos] || r->blocked[pos])
        return 0;
    return r->cursor[pos] < warp_at(r, pos)->ngroups;
}

/* Places blocks into empty slots, lowest slot first. */
static void place_blocks(struct ref *r)
{
    for (uint32_t s = 0; s < r->nslots; s++) {
        while (r->slot[s] < 0 && r->next_block < r->nblocks) {
            size_t bi = r->next_block++;
            const struct trace_ref_block *b = &r->blocks[bi];
            r->st->blocks++;
            r->st->records_in += b->records;
            int any = 0;
            for (uint32_t w = 0; w < r->wpb; w++) {
                uint32_t pos = s * r->wpb + w;
                r->cursor[pos] = 0;
                r->blocked[pos] = 0;
                r->waiting_for[pos] = 0;
                r->finished[pos] = b->warps[w].ngroups == 0;
                if (b->warps[w].ngroups) {
                    any = 1;
                    r->st->warps++;
                }
            }
            if (any)
                r->slot[s] = (long)bi;
        }
    }
}

/* Marks finished warps and empties the slots of finished blocks, then
 * places new blocks. */
static void settle(struct ref *r)
{
    for (uint32_t s = 0; s < r->nslots; s++) {
        if (r->slot[s] < 0)
            continue;
        int all = 1;
        for (uint32_t w = 0; w < r->wpb; w++) {
            uint32_t pos = s * r->wpb + w;
            if (!r->finished[pos] && pos != r->issuing && !r->blocked[pos] &&
                r->cursor[pos] == warp_at(r, pos)->ngroups && r->waiting_for[pos] == 0)
                r->finished[pos] = 1;
            all &= r->finished[pos];
        }
        if (all)
            r->slot[s] = -1;
    }
    place_blocks(r);
}

/* 6c: every delay minus one; drop those at 0. */
static void step_6c(struct ref *r)
{
    r->st->ticks++;
    uint32_t keep = 0;
    for (uint32_t i = 0; i < r->nfly; i++) {
        r->fly[i].remaining--;
        if (r->fly[i].remaining) {
            r->fly[keep++] = r->fly[i];
            continue;
        }
        uint32_t pos = r->fly[i].pos;
        r->nfetch -= r->fly[i].fetch;
        if (pos != NONE && --r->waiting_for[pos] == 0)
            r->blocked[pos] = 0;
    }
    r->nfly = keep;
    settle(r);
}

static uint32_t pick_rr(const struct ref *r)
{
    uint32_t start = r->last_pos == NONE ? 0 : (r->last_pos + 1) % r->npos;
    for (uint32_t k = 0; k < r->npos; k++) {
        uint32_t pos = (start + k) % r->npos;
        if (ready(r, pos))
            return pos;
    }
    return NONE;
}

static uint32_t pick_gto(const struct ref *r)
{
    if (r->last_pos != NONE && ready(r, r->last_pos) &&
        r->blocks[r->slot[r->last_pos / r->wpb]].id == r->last_block)
        return r->last_pos;
    uint32_t best = NONE;
    for (uint32_t pos = 0; pos < r->npos; pos++) {
        if (!ready(r, pos))
            continue;
        if (best == NONE) {
            best = pos;
            continue;
        }
        uint64_t b = r->blocks[r->slot[pos / r->wpb]].id, bb = r->blocks[r->slot[best / r->wpb]].id;
        if (b < bb || (b == bb && pos % r->wpb < best % r->wpb))
            best = pos;
    }
    return best;
}

static void output(struct ref *r, const struct trace_rec *t)
{
    struct trace_out o = {
        .sm = r->sm, .seq = r->seq++, .tid = t->tid, .pc = t->pc, .addr = t->addr, .width = t->width, .dep = t->dep,
        .store = t->store,
    };
    r->st->requests_out++;
    if (!r->err) {
        int rc = r->emit->sink(r->emit->ctx, &o, 1);
        if (rc)
            r->err = rc;
    }
}

/* Puts a transaction of warp pos in flight for d ticks: a fetch (an MSHR)
 * or not; waited for when dep. */
static void put_in_flight(struct ref *r, uint32_t pos, uint64_t d, int fetch, uint32_t dep)
{
    r->fly[r->nfly].remaining = d;
    r->fly[r->nfly].pos = dep ? pos : NONE;
    r->fly[r->nfly].fetch = fetch;
    r->nfly++;
    r->nfetch += fetch;
    if (dep)
        r->waiting_for[pos]++;
    if (r->nfetch > r->st->max_in_flight)
        r->st->max_in_flight = r->nfetch;
}

static void step_6e(struct ref *r, uint32_t pos, const struct trace_rec *t, uint32_t dep)
{
    output(r, t);
    uint64_t d = trace_rng_delay(&r->rng, r->p->delay == TRACE_DELAY_FIXED, r->p->lat_min, r->p->lat_sigma);
    put_in_flight(r, pos, d, 1, dep);
}

/* 6d and 6e with the L1 asked: the clock is the ticks so far. A hit or a
 * merged transaction nobody waits for is not kept in flight (it would hold
 * nothing). */
static void step_6de_l1(struct ref *r, uint32_t pos, const struct trace_rec *t, uint32_t dep)
{
    uint64_t d = trace_rng_delay(&r->rng, r->p->delay == TRACE_DELAY_FIXED, r->p->lat_min, r->p->lat_sigma);
    struct trace_l1_answer a;
    for (;;) {
        if (r->l1ops->access(r->l1, t->addr, t->width, r->st->ticks, (uint32_t)d, r->nfetch < r->p->mshr, &a) < 0) {
            r->err = -2;
            return;
        }
        if (a.verdict != TRACE_L1_STALL)
            break;
        r->st->mshr_stall_ticks++;
        step_6c(r);
    }
    output(r, t);
    if (a.verdict == TRACE_L1_FETCH) {
        put_in_flight(r, pos, d, 1, dep);
        return;
    }
    uint64_t back = a.verdict == TRACE_L1_HIT ? r->l1ops->hit_latency : a.done - r->st->ticks;
    if (a.verdict == TRACE_L1_HIT)
        r->st->l1_hits++;
    else
        r->st->l1_merged++;
    if (dep && back)
        put_in_flight(r, pos, back, 0, dep);
}

static void issue(struct ref *r, uint32_t pos)
{
    const struct trace_group *g = &warp_at(r, pos)->groups[r->cursor[pos]++];
    r->st->instructions++;
    r->issuing = pos;
    for (uint32_t i = 0; i < g->n; i++) {
        step_6c(r);
        if (r->l1ops) {
            step_6de_l1(r, pos, &g->txn[i], g->dep);
            continue;
        }
        while (r->nfly >= r->p->mshr) { /* 6d */
            r->st->mshr_stall_ticks++;
            step_6c(r);
        }
        step_6e(r, pos, &g->txn[i], g->dep);
    }
    r->issuing = NONE;
    r->last_pos = pos;
    r->last_block = r->blocks[r->slot[pos / r->wpb]].id;
    if (g->dep && r->waiting_for[pos]) {
        r->blocked[pos] = 1;
        r->st->dep_blocks++;
    }
    settle(r);
}

static int any_resident(const struct ref *r)
{
    for (uint32_t s = 0; s < r->nslots; s++)
        if (r->slot[s] >= 0)
            return 1;
    return 0;
}

static void loop(struct ref *r)
{
    place_blocks(r);
    while (!r->err && any_resident(r)) { /* 6f */
        uint32_t pos = r->p->schedule == TRACE_SCHEDULE_GTO ? pick_gto(r) : pick_rr(r); /* 6b */
        if (pos != NONE) {
            issue(r, pos);
            continue;
        }
        if (!r->nfly) {
            r->err = -2;
            break;
        }
        r->st->idle_ticks++; /* every warp blocked: 6c until one frees */
        step_6c(r);
    }
}

int trace_order_ref_sm(const struct trace_params *p, uint32_t sm, const struct trace_ref_block *blocks,
                       size_t nblocks, const struct trace_emit *emit, struct trace_sm_stats *st)
{
    return trace_order_ref_sm_l1(p, sm, blocks, nblocks, emit, NULL, st);
}

int trace_order_ref_sm_l1(const struct trace_params *p, uint32_t sm, const struct trace_ref_block *blocks,
                          size_t nblocks, const struct trace_emit *emit, const struct trace_l1_ops *l1,
                          struct trace_sm_stats *st)
{
    struct ref r = {
        .p = p, .blocks = blocks, .nblocks = nblocks, .st = st, .emit = emit, .sm = sm,
        .issuing = NONE, .last_pos = NONE, .l1ops = l1,
    };
    memset(st, 0, sizeof *st);
    r.wpb = trace_params_warps_per_block(p);
    r.nslots = p->blocks_per_sm;
    r.npos = r.nslots * r.wpb;
    r.slot = malloc(r.nslots * sizeof *r.slot);
    r.cursor = calloc(r.npos, sizeof *r.cursor);
    r.blocked = calloc(r.npos, sizeof *r.blocked);
    r.waiting_for = calloc(r.npos, sizeof *r.waiting_for);
    r.finished = calloc(r.npos, sizeof *r.finished);
    /* a fetch per MSHR and one more; with an L1, a waited-for transaction
     * of every warp's last instruction */
    r.fly = calloc((size_t)p->mshr + 1 + (l1 ? (size_t)r.npos * TRACE_WARP_SIZE : 0), sizeof *r.fly);
    if (l1)
        r.l1 = l1->open(l1->ctx, sm);
    int rc = -2;
    if (r.slot && r.cursor && r.blocked && r.waiting_for && r.finished && r.fly && (!l1 || r.l1)) {
        for (uint32_t s = 0; s < r.nslots; s++)
            r.slot[s] = -1;
        trace_rng_seed_stream(&r.rng, p->seed, sm);
        loop(&r);
        rc = r.err;
    }
    free(r.slot);
    free(r.cursor);
    free(r.blocked);
    free(r.waiting_for);
    free(r.finished);
    free(r.fly);
    if (r.l1)
        l1->close(r.l1);
    return rc;
}
