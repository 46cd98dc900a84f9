/*
 * Property tests of the trace sorter on random traces and random parameter
 * sets (every policy, partial warps and blocks, absent threads and blocks,
 * divergent lanes, tiny and huge delay spreads so both in-flight structures
 * of the fast loop run, MSHR caps from 1):
 *  - the event-driven loop and the literal 6a-6f loop give the same output,
 *    record for record and byte for byte in the binary encoding, and the
 *    same statistics on every SM; so do both when blocks are read through
 *    per-thread buffers rather than in place;
 *  - the output holds exactly the coalesced requests: per warp, the
 *    transactions in output order are those an independent re-implementation
 *    of instruction forming and of Nugteren et al.'s merge computes, in
 *    order, and each SM holds exactly the warps of its blocks; loads, stores
 *    and instructions mixing both (lanes alternating: the binary format does
 *    not forbid it) keep their kind, and a load never merges with a store;
 *  - each thread's requests keep their order: the (pc, addr) of the
 *    transactions a thread keeps form a subsequence of its input;
 *  - records_in, requests_out and seq numbers add up, SMs come in order;
 *  - same seed, same output; over all cases some seed change changes it;
 *  - the encoded output (trace_sort_opts.bin: the loop encodes each record
 *    straight into the memory a room hands out, rooms of any size) is the
 *    byte encoding of the trace_out output, with one sorting thread or two
 *    (held records too: a reorder memory of a few records) and with the
 *    literal loop; a commit's failure stops the sort with its value;
 *  - with cache feedback (a random small L1 from cache/feedback.h: kept or
 *    in flight only, merging or not, hit latencies from 0), both loops
 *    again agree byte for byte and on every statistic, with one sorting
 *    thread or two; the output is still exactly the coalesced requests in
 *    each thread's order, and the feedback does change orders.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cache/feedback.h"
#include "trace/binfmt.h"
#include "trace/deal.h"
#include "trace/rng.h"
#include "trace/sort.h"

#define CASES 1000

struct vec {
    struct trace_out *o;
    size_t n, cap;
};

static int collect(void *ctx, const struct trace_out *o, size_t n)
{
    struct vec *v = ctx;
    if (v->n + n > v->cap) {
        v->cap = (v->n + n) * 2;
        v->o = realloc(v->o, v->cap * sizeof *v->o);
        assert_non_null(v->o);
    }
    memcpy(v->o + v->n, o, n * sizeof *o);
    v->n += n;
    return 0;
}

static uint64_t rnd(struct trace_rng *g, uint64_t n)
{
    return trace_rng_next(g) % n;
}

/* ---- random parameters and traces -------------------------------------- */

/* The dealing order of placement dealt: every SM below sms in a random
 * order, then random SMs (some come round more often, as on the H200). */
static uint16_t deal_sm[16];
static struct trace_deal deal = {0, deal_sm};

static void random_deal(struct trace_rng *g, uint32_t sms)
{
    deal.n = sms + (uint32_t)rnd(g, 8);
    for (uint32_t i = 0; i < sms; i++)
        deal_sm[i] = (uint16_t)i;
    for (uint32_t i = sms; i > 1; i--) {
        uint32_t j = (uint32_t)rnd(g, i);
        uint16_t t = deal_sm[i - 1];
        deal_sm[i - 1] = deal_sm[j];
        deal_sm[j] = t;
    }
    for (uint32_t i = sms; i < deal.n; i++)
        deal_sm[i] = (uint16_t)rnd(g, sms);
}

static struct trace_params random_params(struct trace_rng *g)
{
    static const uint32_t tpbs[] = {32, 64, 96, 256, 48, 1, 33, 100, 130};
    static const uint32_t lines[] = {32, 64, 128, 256};
    struct trace_params p;
    trace_params_default(&p);
    p.threads_per_block = rnd(g, 3) ? tpbs[rnd(g, 9)] : 1 + (uint32_t)rnd(g, 140);
    p.blocks_per_sm = 1 + (uint32_t)rnd(g, 4);
    p.sms = 1 + (uint32_t)rnd(g, 4);
    p.line_bytes = lines[rnd(g, 4)];
    p.mshr = 1 + (uint32_t)rnd(g, 12);
    p.lat_min = 1 + (uint32_t)rnd(g, 15);
    uint64_t s = rnd(g, 10);
    p.lat_sigma = s == 0 ? 0.0 : s == 1 ? 5000.0 + (double)rnd(g, 100) : (double)rnd(g, 60) / 8.0;
    p.seed = trace_rng_next(g);
    p.coalesce = (enum trace_coalesce)rnd(g, 2);
    p.schedule = (enum trace_schedule)rnd(g, 2);
    p.delay = rnd(g, 4) ? TRACE_DELAY_NORMAL : TRACE_DELAY_FIXED;
    p.placement = (enum trace_placement)rnd(g, 3);
    if (p.placement == TRACE_PLACEMENT_DEALT) {
        random_deal(g, p.sms);
        p.deal = &deal;
    }
    p.set = TRACE_P_THREADS_PER_BLOCK | TRACE_P_BLOCKS_PER_SM;
    return p;
}

struct instr {
    uint64_t pc, base;
    uint32_t width, dep, pattern, kind; /* kind 0 load, 1 store, 2 by the thread's parity */
};

static void push(struct trace_rec **r, size_t *n, size_t *cap, struct trace_rec x)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 1024;
        *r = realloc(*r, *cap * sizeof **r);
        assert_non_null(*r);
    }
    (*r)[(*n)++] = x;
}

/* A few blocks (ids with gaps), each running a small random program: per
 * thread the program repeated 1-3 times, each instruction skipped now and
 * then (divergence), some threads absent. */
static struct trace_rec *random_trace(struct trace_rng *g, const struct trace_params *p, size_t *n)
{
    struct trace_rec *r = NULL;
    size_t cap = 0;
    *n = 0;
    uint64_t nblocks = rnd(g, 10), block = rnd(g, 3);
    uint32_t tpb = p->threads_per_block;
    for (uint64_t b = 0; b < nblocks; b++, block += 1 + rnd(g, 3)) {
        struct instr prog[6];
        uint32_t len = 1 + (uint32_t)rnd(g, 6);
        for (uint32_t i = 0; i < len; i++) {
            prog[i].pc = 0x100 + 0x10 * rnd(g, 8);
            prog[i].width = 1u << rnd(g, 5);
            prog[i].dep = (uint32_t)(prog[i].pc >> 4) & 1; /* a property of the PC */
            prog[i].pattern = (uint32_t)rnd(g, 4);
            prog[i].kind = (uint32_t)rnd(g, 3);
            prog[i].base = 0x10000 * (1 + rnd(g, 16));
        }
        uint32_t reps = 1 + (uint32_t)rnd(g, 3), skip = (uint32_t)rnd(g, 4);
        uint32_t threads = rnd(g, 4) ? tpb : 1 + (uint32_t)rnd(g, tpb);
        for (uint32_t t = 0; t < threads; t++) {
            if (rnd(g, 8) == 0)
                continue;
            uint64_t tid = block * tpb + t;
            for (uint32_t k = 0; k < reps; k++)
                for (uint32_t i = 0; i < len; i++) {
                    if (skip && rnd(g, 8) < skip)
                        continue;
                    const struct instr *in = &prog[i];
                    uint64_t w = in->width, a;
                    switch (in->pattern) {
                    case 0: a = in->base + tid * w + k * 4096; break;          /* coalesced */
                    case 1: a = in->base + tid * w * 5 + k * 64; break;        /* strided */
                    case 2: a = in->base + rnd(g, 96) * w; break;              /* gather */
                    default: a = in->base + k * w; break;                      /* broadcast */
                    }
                    uint8_t store = (uint8_t)(in->kind == 2 ? tid & 1 : in->kind);
                    push(&r, n, &cap, (struct trace_rec){tid, in->pc, a, in->width, (uint8_t)in->dep, store, 0});
                }
        }
    }
    return r;
}

/* ---- an independent coalescer (the oracle) ------------------------------ */

struct otxn {
    uint64_t tid, pc, addr, lo, hi, key;
    uint32_t dep, store;
};

/* Expected transactions of one warp, in order; lanes[l] are the records of
 * lane l (first[l] .. first[l] + count[l]). Returns how many. */
static size_t oracle_warp(const struct trace_params *p, const struct trace_rec *const *first, const size_t *count,
                          struct otxn *out)
{
    size_t head[32] = {0}, nout = 0;
    for (;;) {
        int any = 0;
        uint64_t minpc = 0;
        for (int l = 0; l < 32; l++)
            if (head[l] < count[l] && (!any || first[l][head[l]].pc < minpc)) {
                minpc = first[l][head[l]].pc;
                any = 1;
            }
        if (!any)
            return nout;
        const struct trace_rec *part[32];
        int lanes[32], np = 0;
        uint32_t w = 0;
        for (int l = 0; l < 32; l++)
            if (head[l] < count[l] && first[l][head[l]].pc == minpc) {
                part[np] = &first[l][head[l]++];
                lanes[np++] = l;
                if (part[np - 1]->width > w)
                    w = part[np - 1]->width;
            }
        int group = p->coalesce == TRACE_COALESCE_SECTOR32 ? 32 : w <= 4 ? 32 : w == 8 ? 16 : 8;
        uint64_t unit = p->coalesce == TRACE_COALESCE_SECTOR32 ? 32 : p->line_bytes;
        for (int gi = 0; gi < 32 / group; gi++) {
            size_t start = nout;
            for (int i = 0; i < np; i++) {
                if (lanes[i] / group != gi)
                    continue;
                const struct trace_rec *r = part[i];
                size_t j = start;
                while (j < nout && (out[j].key != r->addr / unit || out[j].store != r->store))
                    j++;
                if (j == nout)
                    out[nout++] = (struct otxn){r->tid, r->pc, r->addr, r->addr, r->addr + r->width, r->addr / unit,
                                                r->dep, r->store};
                else {
                    if (r->tid < out[j].tid) {
                        out[j].tid = r->tid;
                        out[j].addr = r->addr;
                    }
                    if (r->addr < out[j].lo)
                        out[j].lo = r->addr;
                    if (r->addr + r->width > out[j].hi)
                        out[j].hi = r->addr + r->width;
                    out[j].dep |= r->dep;
                }
            }
        }
    }
}

static uint32_t pow2_at_least(uint64_t x)
{
    uint32_t w = 1;
    while (w < x)
        w *= 2;
    return w;
}

/* Checks the output warp by warp against the oracle. */
static void check_coalesced(const struct trace_params *p, const struct trace_rec *r, size_t n, const struct vec *out)
{
    uint32_t tpb = p->threads_per_block, wpb = (tpb + 31) / 32;
    struct otxn *want = malloc((n + 1) * sizeof *want);
    assert_non_null(want);
    size_t i = 0, matched = 0;
    while (i < n) {
        uint64_t block = r[i].tid / tpb;
        for (uint32_t w = 0; w < wpb; w++) {
            const struct trace_rec *first[32] = {0};
            size_t count[32] = {0};
            for (size_t j = i; j < n && r[j].tid / tpb == block; j++) {
                uint32_t in = (uint32_t)(r[j].tid % tpb);
                if (in / 32 != w)
                    continue;
                if (!count[in % 32])
                    first[in % 32] = &r[j];
                count[in % 32]++;
            }
            size_t nw = oracle_warp(p, first, count, want);
            /* this warp's transactions in the output, in output order */
            size_t k = 0;
            uint32_t sm = (uint32_t)(p->placement == TRACE_PLACEMENT_RR ? block % p->sms
                                     : (block % ((uint64_t)p->sms * p->blocks_per_sm)) / p->blocks_per_sm);
            if (p->placement == TRACE_PLACEMENT_DEALT) {
                uint32_t wave[4 * 4];
                assert_int_equal(trace_deal_wave(p->deal, p->sms, p->blocks_per_sm, wave, NULL, 0), 0);
                sm = wave[block % ((uint64_t)p->sms * p->blocks_per_sm)];
            }
            for (size_t o = 0; o < out->n; o++) {
                const struct trace_out *t = &out->o[o];
                if (t->tid / tpb != block || (t->tid % tpb) / 32 != w)
                    continue;
                assert_true(k < nw);
                assert_int_equal(t->sm, sm);
                assert_int_equal(t->tid, want[k].tid);
                assert_int_equal(t->pc, want[k].pc);
                assert_int_equal(t->addr, want[k].addr);
                assert_int_equal(t->dep, want[k].dep);
                assert_int_equal(t->store, want[k].store);
                assert_int_equal(t->width, pow2_at_least(want[k].hi - want[k].lo));
                k++;
            }
            assert_int_equal(k, nw);
            matched += k;
        }
        while (i < n && r[i].tid / tpb == block)
            i++;
    }
    assert_int_equal(matched, out->n);
    free(want);
}

/* The (pc, addr) of the transactions each thread keeps are a subsequence of
 * that thread's records, in order: one cursor per thread walks its records. */
static void check_thread_order(const struct trace_rec *r, size_t n, const struct vec *out)
{
    size_t *cursor = malloc((n + 1) * sizeof *cursor);
    assert_non_null(cursor);
    for (size_t i = 0; i < n; i++)
        cursor[i] = SIZE_MAX;
    for (size_t o = 0; o < out->n; o++) {
        const struct trace_out *t = &out->o[o];
        size_t lo = 0, hi = n; /* the thread's first record */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (r[mid].tid < t->tid)
                lo = mid + 1;
            else
                hi = mid;
        }
        assert_true(lo < n && r[lo].tid == t->tid);
        size_t cur = cursor[lo] == SIZE_MAX ? lo : cursor[lo];
        while (cur < n && r[cur].tid == t->tid && !(r[cur].pc == t->pc && r[cur].addr == t->addr))
            cur++;
        if (!(cur < n && r[cur].tid == t->tid))
            fail_msg("output record %zu (thread %llu) is not in order in its thread's input", o,
                     (unsigned long long)t->tid);
        cursor[lo] = cur + 1;
    }
    free(cursor);
}

static void check_counts(const struct trace_params *p, size_t n, const struct vec *out, const struct trace_summary *s)
{
    assert_int_equal(s->records_in, n);
    assert_int_equal(s->requests_out, out->n);
    uint64_t per_sm = 0;
    for (uint32_t i = 0; i < s->nsms; i++)
        per_sm += s->sm[i].requests_out;
    assert_int_equal(per_sm, out->n);
    uint32_t sm = 0;
    uint64_t seq = 0;
    for (size_t o = 0; o < out->n; o++) {
        const struct trace_out *t = &out->o[o];
        assert_true(t->sm < p->sms);
        assert_true(t->sm >= sm);
        if (t->sm != sm) {
            assert_int_equal(seq, s->sm[sm].requests_out);
            sm = t->sm;
            seq = 0;
        }
        assert_int_equal(t->seq, seq++);
    }
}

static void same_bytes(const struct vec *a, const struct vec *b)
{
    assert_int_equal(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        uint8_t x[TRACE_BIN_OUT_BYTES], y[TRACE_BIN_OUT_BYTES];
        trace_bin_out_encode(&a->o[i], x);
        trace_bin_out_encode(&b->o[i], y);
        if (memcmp(x, y, sizeof x))
            fail_msg("record %zu differs", i);
    }
}

/* One random case: parameters, trace, and its fast-loop output. */
struct rcase {
    struct trace_params p, resolved;
    struct trace_rec *r;
    size_t n;
    struct vec out;
    struct trace_summary sum;
};

static void case_make(struct trace_rng *g, struct rcase *c)
{
    memset(c, 0, sizeof *c);
    c->p = random_params(g);
    c->r = random_trace(g, &c->p, &c->n);
    c->resolved = c->p;
    trace_params_resolve(&c->resolved, 0);
    struct trace_err err;
    struct trace_sort_opts fast = {0};
    if (trace_sort_records(c->r, c->n, &c->p, &fast, collect, &c->out, &c->sum, &err))
        fail_msg("%s", err.msg);
}

static void case_free(struct rcase *c)
{
    trace_summary_free(&c->sum);
    free(c->out.o);
    free(c->r);
}

/* Runs `check` on CASES random cases, always the same ones. */
static void each_case(void (*check)(struct rcase *c, int i))
{
    struct trace_rng g;
    trace_rng_seed(&g, 20240601);
    for (int i = 0; i < CASES; i++) {
        struct rcase c;
        case_make(&g, &c);
        check(&c, i);
        case_free(&c);
    }
}

static void same_stats(const struct trace_summary *a, const struct trace_summary *b, int i)
{
    assert_int_equal(a->nsms, b->nsms);
    for (uint32_t s = 0; s < a->nsms; s++)
        if (memcmp(&a->sm[s], &b->sm[s], sizeof a->sm[s]))
            fail_msg("case %d: statistics of SM %u differ (ticks %llu vs %llu)", i, s,
                     (unsigned long long)a->sm[s].ticks, (unsigned long long)b->sm[s].ticks);
}

/* Sorts the case again with other options; output and statistics must match. */
static void same_as(struct rcase *c, int i, const struct trace_sort_opts *o)
{
    struct vec v = {0};
    struct trace_summary s;
    struct trace_err err;
    if (trace_sort_records(c->r, c->n, &c->p, o, collect, &v, &s, &err))
        fail_msg("case %d: %s", i, err.msg);
    same_bytes(&c->out, &v);
    same_stats(&c->sum, &s, i);
    trace_summary_free(&s);
    free(v.o);
}

static int heap_cases, stalled, idled, waited, queued;
static uint64_t records;

static void check_reference(struct rcase *c, int i)
{
    struct trace_sort_opts ref = {.reference = 1}, buffered = {.stream_above = 1},
                           ref_buffered = {.reference = 1, .stream_above = 1};
    same_as(c, i, &ref);
    same_as(c, i, i % 4 ? &buffered : &ref_buffered); /* blocks through per-thread buffers */
    heap_cases += c->p.lat_sigma >= 5000.0 && c->p.delay == TRACE_DELAY_NORMAL;
    stalled += c->sum.mshr_stall_ticks > 0;
    idled += c->sum.idle_ticks > 0;
    waited += c->sum.dep_blocks > 0;
    queued += c->sum.blocks > (uint64_t)c->resolved.blocks_per_sm * c->resolved.sms;
    records += c->n;
}

static void test_fast_equals_reference(void **state)
{
    (void)state;
    each_case(check_reference);
    /* the cases exercise what they are meant to */
    assert_true(heap_cases > CASES / 20);
    assert_true(stalled > CASES / 4);
    assert_true(idled > CASES / 4);
    assert_true(waited > CASES / 2);
    assert_true(queued > CASES / 10);
    assert_true(records > (uint64_t)CASES * 500);
    print_message("%d cases, %llu records; MSHR stalls in %d, every warp blocked in %d, dependency waits in "
                  "%d, blocks waiting for a slot in %d, heap in %d\n",
                  CASES, (unsigned long long)records, stalled, idled, waited, queued, heap_cases);
}

static void check_coalesced_case(struct rcase *c, int i)
{
    (void)i;
    check_counts(&c->resolved, c->n, &c->out, &c->sum);
    check_coalesced(&c->resolved, c->r, c->n, &c->out);
}

static void test_exactly_the_coalesced_requests(void **state)
{
    (void)state;
    each_case(check_coalesced_case);
}

static void check_order_case(struct rcase *c, int i)
{
    (void)i;
    check_thread_order(c->r, c->n, &c->out);
}

static void test_thread_order_kept(void **state)
{
    (void)state;
    each_case(check_order_case);
}

static int seed_mattered;

static void check_seed_case(struct rcase *c, int i)
{
    struct trace_sort_opts fast = {0};
    same_as(c, i, &fast);
    struct trace_params ps = c->p;
    ps.seed ^= 0x9e3779b97f4a7c15ull;
    struct vec other = {0};
    struct trace_summary s;
    struct trace_err err;
    assert_int_equal(trace_sort_records(c->r, c->n, &ps, &fast, collect, &other, &s, &err), 0);
    assert_int_equal(other.n, c->out.n);
    for (size_t k = 0; k < other.n; k++)
        if (other.o[k].tid != c->out.o[k].tid || other.o[k].addr != c->out.o[k].addr) {
            seed_mattered++;
            break;
        }
    trace_summary_free(&s);
    free(other.o);
}

static void test_same_seed_same_output(void **state)
{
    (void)state;
    each_case(check_seed_case);
    assert_true(seed_mattered > CASES / 10);
    print_message("another seed changed the order in %d of %d cases\n", seed_mattered, CASES);
}

/* ---- with cache feedback ------------------------------------------------ */

/* A small random L1 (1-8 KiB, 1 to 8 ways or fully associative, 32-256 B
 * lines) so that lines are reused, evicted and in flight at once. */
static void random_l1(struct trace_rng *g, struct cache_feedback *fb)
{
    static const char *const geoms[] = {"1K,1,32,32", "2K,2,64,32", "4K,4,128,32", "8K,full,128,32",
                                        "4K,8,256,32", "2K,full,32,32", "8K,2,128,128"};
    char msg[200];
    memset(fb, 0, sizeof *fb);
    if (cache_geom_parse(geoms[rnd(g, 7)], &fb->geom, msg, sizeof msg))
        fail_msg("%s", msg);
    fb->geom.index = (enum cache_set_index)rnd(g, 2);
    fb->keep = rnd(g, 4) != 0;
    fb->max_merge = rnd(g, 3) ? 1 + (uint32_t)rnd(g, 8) : 0;
    fb->hit_latency = (uint32_t)rnd(g, 6);
}

static int l1_hit_cases, l1_merge_cases, l1_changed, l1_stall_hits;

static void check_l1_case(struct rcase *c, int i, struct trace_rng *g)
{
    struct cache_feedback fb;
    struct trace_l1_ops ops;
    random_l1(g, &fb);
    cache_feedback_ops(&fb, &ops);
    struct trace_sort_opts fast = {.l1 = &ops}, ref = {.reference = 1, .l1 = &ops}, two = {.threads = 2, .l1 = &ops};
    struct rcase l = *c;
    struct trace_err err;
    memset(&l.out, 0, sizeof l.out);
    if (trace_sort_records(l.r, l.n, &l.p, &fast, collect, &l.out, &l.sum, &err))
        fail_msg("case %d: %s", i, err.msg);
    same_as(&l, i, &ref);
    same_as(&l, i, &two);
    check_counts(&l.resolved, l.n, &l.out, &l.sum);
    check_coalesced(&l.resolved, l.r, l.n, &l.out);
    check_thread_order(l.r, l.n, &l.out);
    assert_true(l.sum.l1 && l.sum.l1_hits + l.sum.l1_merged <= l.sum.requests_out);
    assert_true(fb.keep || l.sum.l1_hits == 0);
    assert_true(fb.max_merge || l.sum.l1_merged == 0);
    l1_hit_cases += l.sum.l1_hits > 0;
    l1_merge_cases += l.sum.l1_merged > 0;
    l1_stall_hits += l.sum.l1_hits > 0 && l.sum.mshr_stall_ticks > 0;
    for (size_t k = 0; k < l.out.n; k++)
        if (l.out.o[k].tid != c->out.o[k].tid || l.out.o[k].addr != c->out.o[k].addr) {
            l1_changed++;
            break;
        }
    trace_summary_free(&l.sum);
    free(l.out.o);
    cache_feedback_done(&fb);
}

/* An encoded output in memory, handing out rooms of at most lim records
 * and failing (returning 5) once more than fail_after records came. */
struct broom {
    uint8_t *b;
    size_t n, cap, lim, granted, fail_after;
};

static void *broom_room(void *ctx, size_t *n)
{
    struct broom *r = ctx;
    if (*n > r->lim)
        *n = r->lim;
    if (r->n + *n > r->cap) {
        r->cap = (r->n + *n) * 2;
        r->b = realloc(r->b, r->cap * TRACE_BIN_OUT_BYTES);
        assert_non_null(r->b);
    }
    r->granted = *n;
    return r->b + r->n * TRACE_BIN_OUT_BYTES;
}

static int broom_commit(void *ctx, size_t n)
{
    struct broom *r = ctx;
    assert_true(n <= r->granted);
    r->granted = 0;
    r->n += n;
    return r->n > r->fail_after ? 5 : 0;
}

static int encoded_failures;

/* Sorts the case with o into a room of at most lim records: the bytes must
 * be c->out's encoding, the statistics the same. */
static void same_encoded(struct rcase *c, int i, struct trace_sort_opts o, size_t lim)
{
    struct broom r = {.lim = lim, .fail_after = SIZE_MAX};
    struct trace_bin_room room = {.room = broom_room, .commit = broom_commit, .ctx = &r};
    struct trace_summary s;
    struct trace_err err;
    o.bin = &room;
    if (trace_sort_records(c->r, c->n, &c->p, &o, NULL, NULL, &s, &err))
        fail_msg("case %d: %s", i, err.msg);
    assert_int_equal(r.n, c->out.n);
    for (size_t k = 0; k < r.n; k++) {
        uint8_t x[TRACE_BIN_OUT_BYTES];
        trace_bin_out_encode(&c->out.o[k], x);
        if (memcmp(x, r.b + k * TRACE_BIN_OUT_BYTES, sizeof x))
            fail_msg("case %d: encoded record %zu differs", i, k);
    }
    same_stats(&c->sum, &s, i);
    trace_summary_free(&s);
    if (c->out.n > 2) { /* a commit that fails stops the sort with its value */
        r.n = 0;
        r.fail_after = c->out.n / 2;
        int rc = trace_sort_records(c->r, c->n, &c->p, &o, NULL, NULL, &s, &err);
        if (rc != 5)
            fail_msg("case %d: a failing commit gave %d", i, rc);
        trace_summary_free(&s);
        encoded_failures++;
    }
    free(r.b);
}

static void check_encoded_case(struct rcase *c, int i)
{
    static const size_t lims[] = {1, 3, 1000, 8192, SIZE_MAX};
    size_t lim = lims[i % 5];
    same_encoded(c, i, (struct trace_sort_opts){0}, lim);
    same_encoded(c, i, (struct trace_sort_opts){.threads = 2}, lim);
    /* two threads, a later SM's records held (a reorder memory of 3 records) */
    same_encoded(c, i, (struct trace_sort_opts){.threads = 2, .reorder_bytes = 3 * TRACE_BIN_OUT_BYTES}, lim);
    if (i % 4 == 0)
        same_encoded(c, i, (struct trace_sort_opts){.reference = 1}, lim);
}

static void test_encoded_output_same_bytes(void **state)
{
    (void)state;
    each_case(check_encoded_case);
    assert_true(encoded_failures > CASES);
}

static void test_l1_fast_equals_reference(void **state)
{
    (void)state;
    struct trace_rng g, lg;
    trace_rng_seed(&g, 20240601);
    trace_rng_seed(&lg, 77);
    for (int i = 0; i < CASES; i++) {
        struct rcase c;
        case_make(&g, &c);
        check_l1_case(&c, i, &lg);
        case_free(&c);
    }
    assert_true(l1_hit_cases > CASES / 2);
    assert_true(l1_merge_cases > CASES / 4);
    assert_true(l1_stall_hits > CASES / 20);
    assert_true(l1_changed > CASES / 4);
    print_message("%d cases with an L1: hits in %d, merges in %d, hits beside MSHR stalls in %d, order changed "
                  "in %d\n",
                  CASES, l1_hit_cases, l1_merge_cases, l1_stall_hits, l1_changed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_equals_reference),
        cmocka_unit_test(test_exactly_the_coalesced_requests),
        cmocka_unit_test(test_thread_order_kept),
        cmocka_unit_test(test_same_seed_same_output),
        cmocka_unit_test(test_encoded_output_same_bytes),
        cmocka_unit_test(test_l1_fast_equals_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
