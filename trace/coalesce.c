/*
 * Step 1c: instruction forming (min-PC) and the merge of 4a-4d, line128 and
 * sector32 (rules in coalesce.h).
 *
 * DESIGN
 * Everything is bounded by a warp: at most 32 participants, 32 transactions,
 * so the merged set is a small array searched linearly from the start of the
 * current lane group (participants arrive in lane order, so groups are
 * contiguous runs, a new one starting at the first lane past the current
 * group's last). A 256-bit filter of the group's keys skips that search
 * for a key certainly new, so a scattered instruction (32 different lines)
 * costs 32 probes, not 32 * 31 / 2 comparisons. Each merged entry tracks its lowest first byte and
 * highest last byte (inclusive, so no overflow at the top of the address
 * space), from its first merge on (a lone request needs none: a scattered
 * instruction's 32); the width is computed once at the end. The newest
 * transaction, which the lanes after it join in a coalesced instruction
 * (the same line as the lane before), grows in local variables and is
 * written back once, when another starts: its requests cost compares in
 * registers, not loads and stores of the transaction and its span.
 */
#include "trace/coalesce.h"

#include <assert.h>
#include <string.h>

void trace_coalescer_init(struct trace_coalescer *c, const struct trace_params *p)
{
    /* a line that is not a power of two would split requests at the wrong bytes */
    assert(p->line_bytes >= 32 && (p->line_bytes & (p->line_bytes - 1)) == 0);
    c->policy = p->coalesce;
    if (p->coalesce == TRACE_COALESCE_SECTOR32) {
        c->key_shift = 5;
    } else {
        unsigned s = 0;
        while ((1u << s) < p->line_bytes)
            s++;
        c->key_shift = s;
    }
}

/* log2 of the lanes that may merge with each other (see coalesce.h): 5
 * for 32 lanes, 4 for 16, 3 for 8, down to 0. */
static unsigned group_shift(const struct trace_coalescer *c, uint32_t width)
{
    if (c->policy == TRACE_COALESCE_SECTOR32 || width <= 4)
        return 5;
    unsigned s = 5;
    for (uint32_t w = 4; w < width && s > 0; w *= 2)
        s--;
    return s;
}

struct span {
    uint64_t key, lo, last;
};

/* Merges r into transaction t; first: t has merged nothing yet (its span
 * is then started from t, which is still its first request). */
static void merge_into(struct trace_rec *t, struct span *s, const struct trace_rec *r, int first)
{
    if (first) {
        s->lo = t->addr;
        s->last = t->addr + (t->width - 1);
    }
    if (r->tid < t->tid) {
        t->tid = r->tid;
        t->addr = r->addr;
    }
    uint64_t last = r->addr + (r->width - 1);
    if (r->addr < s->lo)
        s->lo = r->addr;
    if (last > s->last)
        s->last = last;
    t->dep |= r->dep;
}

/* Writes back what merge kept in local variables while requests joined
 * its newest transaction t (span s); returns 1, its bit in `merged`. */
static inline uint32_t run_close(struct trace_rec *t, struct span *s, uint64_t tid, uint64_t addr, uint32_t dep,
                                 uint64_t lo, uint64_t last)
{
    t->tid = tid;
    t->addr = addr;
    t->dep = (uint8_t)dep;
    s->lo = lo;
    s->last = last;
    return 1;
}

/* 4a-4d over requests in lane order, given the widest width and the OR of
 * the dependency flags. A transaction of one request keeps its width (a
 * power of two: the requests' contract), so only merged ones are widened
 * at the end; with one group for the whole warp (sector32, or widths up to
 * 4 bytes) no lane's group is computed. */
static uint32_t merge(const struct trace_coalescer *c, const struct trace_rec *const *req, const uint8_t *lane,
                      uint32_t n, uint32_t width, uint32_t dep, struct trace_group *g)
{
    struct span sp[TRACE_WARP_SIZE];
    unsigned gs = group_shift(c, width), ks = c->key_shift;
    uint32_t nt = 0, seg = 0, group_end = 0, merged = 0; /* merged: bit per widened transaction */
    uint64_t seen[4] = {0, 0, 0, 0}; /* the group's keys, hashed to 1 of 256 bits */
    /* The newest transaction (nt - 1) while the lanes after it join it (a
     * coalesced instruction's usual case): its key, and once something
     * joined (run) the fields that change, kept here and written back to
     * g->txn[nt - 1] and sp[nt - 1] when another transaction starts. */
    uint64_t run_key = 0, run_tid = 0, run_addr = 0, run_lo = 0, run_last = 0;
    uint32_t run = 0, run_dep = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct trace_rec *r = req[i];
        if (lane[i] >= group_end) { /* the first lane of a group (lanes come in increasing order) */
            group_end = (((uint32_t)lane[i] >> gs) + 1) << gs;
            seg = nt;
            seen[0] = seen[1] = seen[2] = seen[3] = 0;
        }
        /* a load and a store of one line are two requests: the key carries
         * the kind (addr >> ks < 2^59, so the shift loses nothing) */
        uint64_t key = (r->addr >> ks) << 1 | r->store;
        if (nt > seg && run_key == key) { /* the usual case: same line as the lane before */
            if (!run) { /* the first to join: the transaction is its first request still */
                const struct trace_rec *t = &g->txn[nt - 1];
                run = 1;
                run_tid = t->tid;
                run_addr = run_lo = t->addr;
                run_last = t->addr + (t->width - 1);
                run_dep = t->dep;
            }
            if (r->tid < run_tid) {
                run_tid = r->tid;
                run_addr = r->addr;
            }
            uint64_t last = r->addr + (r->width - 1);
            run_lo = r->addr < run_lo ? r->addr : run_lo;
            run_last = last > run_last ? last : run_last;
            run_dep |= r->dep;
            continue; /* (its key is in seen since it was new) */
        }
        uint32_t h = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 56);
        uint64_t bit = 1ull << (h & 63);
        uint32_t j = nt;
        if (seen[h >> 6] & bit) /* maybe seen: search (a scattered warp rarely gets here) */
            for (j = seg; j < nt && sp[j].key != key; j++)
                ;
        seen[h >> 6] |= bit;
        if (j < nt) { /* an older transaction of the group: never nt - 1, tested above */
            merge_into(&g->txn[j], &sp[j], r, !(merged >> j & 1));
            merged |= 1u << j;
            continue;
        }
        if (run) { /* the newest transaction is done growing */
            merged |= run_close(&g->txn[nt - 1], &sp[nt - 1], run_tid, run_addr, run_dep, run_lo, run_last)
                      << (nt - 1);
            run = 0;
        }
        memcpy(&g->txn[nt], r, sizeof *r); /* (two 16-byte moves; the assignment took four 8-byte ones) */
        sp[nt].key = run_key = key; /* its span only once something merges into it */
        nt++;
    }
    if (run) {
        merged |= run_close(&g->txn[nt - 1], &sp[nt - 1], run_tid, run_addr, run_dep, run_lo, run_last) << (nt - 1);
    }
    for (; merged; merged &= merged - 1) {
        uint32_t j = (uint32_t)__builtin_ctz(merged);
        g->txn[j].width = (uint32_t)trace_pow2_ceil(sp[j].last - sp[j].lo + 1);
    }
    g->n = nt;
    g->dep = dep ? 1 : 0;
    g->records = n;
    return nt;
}

uint32_t trace_coalesce(const struct trace_coalescer *c, const struct trace_rec *const *req,
                        const uint8_t *lane, uint32_t n, struct trace_group *g)
{
    assert(n <= TRACE_WARP_SIZE); /* one warp instruction's requests */
    uint32_t width = 0, dep = 0;
    for (uint32_t i = 0; i < n; i++) {
        assert(lane[i] < TRACE_WARP_SIZE && (i == 0 || lane[i] > lane[i - 1])); /* merge finds groups so */
        if (req[i]->width > width)
            width = req[i]->width;
        dep |= req[i]->dep;
    }
    return merge(c, req, lane, n, width, dep, g);
}

int trace_warp_next(struct trace_warp *w, const struct trace_coalescer *c, struct trace_group *g)
{
    uint32_t live = w->live;
    if (!live)
        return 0;
    const struct trace_rec *req[TRACE_WARP_SIZE];
    uint8_t lane[TRACE_WARP_SIZE];
    uint32_t n = 0;
    uint64_t minpc = UINT64_MAX;
    uint32_t width = 0, dep = 0; /* the widest width and the flags' OR of the participants so far */
    for (uint32_t m = live; m; m &= m - 1) {
        unsigned l = (unsigned)__builtin_ctz(m);
        const struct trace_rec *r = w->cur[l];
        uint64_t pc = r->pc;
        if (pc < minpc) {
            minpc = pc;
            n = 0;
            width = dep = 0;
        }
        if (pc == minpc) {
            req[n] = r;
            lane[n] = (uint8_t)l;
            n++;
            width = r->width > width ? r->width : width;
            dep |= r->dep;
        }
    }
    merge(c, req, lane, n, width, dep, g); /* before a refill reuses a buffer */
    for (uint32_t i = 0; i < n; i++) {
        unsigned l = lane[i];
        if (++w->cur[l] != w->end[l]) {
            __builtin_prefetch(w->cur[l]); /* read at this warp's next instruction */
            continue;
        }
        if (!(w->more & (1u << l)) || !w->refill(w->refill_ctx, w, l))
            live &= ~(1u << l);
    }
    w->live = live;
    return 1;
}
