/*
 * Cache feedback into the sorter's order (cache/feedback.c behind
 * trace/order_l1.h; docs/trace-sort.md, "Cache feedback"): hand-worked
 * orders and tick counts with fixed delays, each sorted by both loops
 * (order.c and the literal order_ref.c), which must agree:
 *  - a warp whose loads hit runs ahead of a warp whose loads miss (and
 *    without feedback the two alternate);
 *  - MSHR merging turns a second fetch of a line in flight into a merge,
 *    so it neither fetches nor waits for an MSHR; merging alone (no cache)
 *    does the same and never hits;
 *  - with every MSHR taken, a hit still issues while a miss waits, and a
 *    request that waited for an MSHR can find its line back meanwhile;
 *  - the verdict the L1 gives before an access is what the engine then
 *    does (random streams, every kind of L1), and an answer of STALL
 *    changes nothing;
 *  - cache_linemap_find looks without adding; the default hit latency.
 * That the order is unchanged with the options off is
 * tests/integration/t_sort_feedback.sh's (golden outputs from before).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "cache/feedback.h"
#include "cache/linemap.h"
#include "trace/rng.h"
#include "trace/sort.h"

#define MAXOUT 256

struct out {
    struct trace_out o[MAXOUT];
    size_t n;
};

static int collect(void *ctx, const struct trace_out *o, size_t n)
{
    struct out *c = ctx;
    for (size_t i = 0; i < n; i++) {
        assert_true(c->n < MAXOUT);
        c->o[c->n++] = o[i];
    }
    return 0;
}

/* Sorts with both loops and l1 (NULL: none); they must agree on the output
 * and every statistic. */
static void both(const struct trace_rec *r, size_t n, const struct trace_params *p, const struct trace_l1_ops *l1,
                 struct out *out, struct trace_summary *sum)
{
    static struct out ref;
    struct trace_summary rs;
    struct trace_err err;
    struct trace_sort_opts fast_o = {.l1 = l1}, ref_o = {.reference = 1, .l1 = l1};
    out->n = ref.n = 0;
    assert_int_equal(trace_sort_records(r, n, p, &fast_o, collect, out, sum, &err), 0);
    assert_int_equal(trace_sort_records(r, n, p, &ref_o, collect, &ref, &rs, &err), 0);
    assert_int_equal(out->n, ref.n);
    for (size_t i = 0; i < out->n; i++) { /* field by field: the padding is nobody's */
        const struct trace_out *x = &out->o[i], *y = &ref.o[i];
        assert_true(x->sm == y->sm && x->seq == y->seq && x->tid == y->tid && x->pc == y->pc &&
                    x->addr == y->addr && x->width == y->width && x->dep == y->dep);
    }
    assert_int_equal(sum->nsms, rs.nsms);
    assert_memory_equal(sum->sm, rs.sm, sum->nsms * sizeof *sum->sm);
    trace_summary_free(&rs);
}

/* One SM, one block of 64 threads (warp 0 = thread 0, warp 1 = thread 32),
 * round-robin, fixed delay M. */
static struct trace_params params(uint32_t tpb, uint32_t mshr, uint32_t lat)
{
    struct trace_params p;
    trace_params_default(&p);
    p.threads_per_block = tpb;
    p.blocks_per_sm = 1;
    p.sms = 1;
    p.mshr = mshr;
    p.lat_min = lat;
    p.delay = TRACE_DELAY_FIXED;
    p.set = TRACE_P_THREADS_PER_BLOCK | TRACE_P_BLOCKS_PER_SM;
    return p;
}

/* The L1 of the test at hand: 16 KiB, 4 ways, 128-byte lines of 32-byte
 * sectors; each call replaces the one before (what it kept is freed). */
static struct cache_feedback fb;
static struct trace_l1_ops ops;
static int fb_live;

static void l1_done(void)
{
    if (fb_live)
        cache_feedback_done(&fb);
    fb_live = 0;
}

static const struct trace_l1_ops *l1_of(int keep, uint32_t max_merge, uint32_t hit_latency)
{
    char msg[200];
    l1_done();
    memset(&fb, 0, sizeof fb);
    assert_int_equal(cache_geom_parse("16K,4,128,32", &fb.geom, msg, sizeof msg), 0);
    fb.keep = keep;
    fb.max_merge = max_merge;
    fb.hit_latency = hit_latency;
    cache_feedback_ops(&fb, &ops);
    fb_live = 1;
    return &ops;
}

static int teardown(void **state)
{
    (void)state;
    l1_done();
    return 0;
}

static void tids_are(const struct out *o, const uint64_t *want, size_t n)
{
    assert_int_equal(o->n, n);
    for (size_t i = 0; i < n; i++)
        if (o->o[i].tid != want[i])
            fail_msg("record %zu: thread %llu, expected %llu", i, (unsigned long long)o->o[i].tid,
                     (unsigned long long)want[i]);
}

static struct out result;

/* Warp 0 (thread 0) loads line 0x1000 six times, warp 1 (thread 32) six
 * lines of its own; every load dependent; M = 10, hit latency 1.
 * Without feedback every load is a 10-tick fetch and the two warps take
 * turns: warp 0's k-th load at clock 1 + 11k, warp 1's at 2 + 11k, the
 * last back at 67.
 * With it: clock 1 warp 0 fetches 0x1000 (back 11), 2 warp 1 fetches (back
 * 12); both blocked until 11; 12 warp 0 hits (back 13); 13 warp 1 fetches
 * (back 23); 14 warp 0 hits (back 15); then warp 0 alone, a hit every
 * other tick (16, 18, 20), while warp 1 waits for 23: 0 32 0 32 0 0 0 0,
 * then warp 1's last four (24, 35, 46, 57, each back 10 later): warp 1
 * bounds the SM, 67 ticks either way; the order is what changed. */
static void test_hits_run_ahead(void **state)
{
    (void)state;
    struct trace_rec r[12];
    for (int k = 0; k < 6; k++) {
        r[k] = (struct trace_rec){0, 0x10, 0x1000, 4, 1, 0, 0};
        r[6 + k] = (struct trace_rec){32, 0x10, 0x100000 + 0x1000 * (uint64_t)k, 4, 1, 0, 0};
    }
    struct trace_params p = params(64, 32, 10);
    struct trace_summary s;
    both(r, 12, &p, NULL, &result, &s);
    tids_are(&result, (uint64_t[]){0, 32, 0, 32, 0, 32, 0, 32, 0, 32, 0, 32}, 12);
    assert_int_equal(s.ticks, 67);
    assert_false(s.l1);
    trace_summary_free(&s);

    both(r, 12, &p, l1_of(1, 0, 1), &result, &s);
    tids_are(&result, (uint64_t[]){0, 32, 0, 32, 0, 0, 0, 0, 32, 32, 32, 32}, 12);
    assert_true(s.l1);
    assert_int_equal(s.l1_hits, 5);
    assert_int_equal(s.l1_merged, 0);
    assert_int_equal(s.ticks, 67);
    assert_int_equal(s.dep_blocks, 12);
    trace_summary_free(&s);

    /* greedy-then-oldest with hits that never hold their warp: from clock
     * 12 warp 0 hits five times in a row (12-16) while warp 1, ready since
     * 12, waits its turn; then warp 1 from 17 (17, 28, 39, 50, 61, back 71).
     * With the hit latency 1 warp 0 is blocked after each hit and warp 1
     * gets in at 13, as with round-robin. */
    p.schedule = TRACE_SCHEDULE_GTO;
    both(r, 12, &p, l1_of(1, 0, 0), &result, &s);
    tids_are(&result, (uint64_t[]){0, 32, 0, 0, 0, 0, 0, 32, 32, 32, 32, 32}, 12);
    assert_int_equal(s.l1_hits, 5);
    assert_int_equal(s.ticks, 71);
    trace_summary_free(&s);
    both(r, 12, &p, l1_of(1, 0, 1), &result, &s);
    tids_are(&result, (uint64_t[]){0, 32, 0, 32, 0, 0, 0, 0, 32, 32, 32, 32}, 12);
    trace_summary_free(&s);
}

/* Three warps (96 threads) load, in turn, line A, line A and line B, not
 * dependent; one MSHR, M = 10.
 * Without an L1, warp 1's A is a second fetch: it waits for the MSHR
 * (2 -> 11), and B after it (12 -> 21): 21 ticks, 18 with the MSHRs full,
 * three fetches. With feedback alone (no merging), warp 1's A would fetch
 * again and waits for the MSHR too (2 -> 11), but by then A is back: a hit,
 * and B fetches at 12 with the MSHR free: 12 ticks, 9 stalled, two fetches.
 * With merging, warp 1 merges into the fetch in flight at clock 2 (no
 * MSHR), and B waits from 3 to 11: 11 ticks, 8 stalled, two fetches. */
static void test_merging_removes_fetches(void **state)
{
    (void)state;
    struct trace_rec r[] = {{0, 0x10, 0x1000, 4, 0, 0, 0}, {32, 0x10, 0x1004, 4, 0, 0, 0}, {64, 0x10, 0x2000, 4, 0, 0, 0}};
    struct trace_params p = params(96, 1, 10);
    struct trace_summary s;

    both(r, 3, &p, NULL, &result, &s);
    assert_int_equal(s.ticks, 21);
    assert_int_equal(s.mshr_stall_ticks, 18);
    trace_summary_free(&s);

    both(r, 3, &p, l1_of(1, 0, 1), &result, &s);
    assert_int_equal(s.ticks, 12);
    assert_int_equal(s.mshr_stall_ticks, 9);
    assert_int_equal(s.l1_hits, 1);
    assert_int_equal(s.l1_merged, 0);
    trace_summary_free(&s);

    for (int keep = 0; keep < 2; keep++) { /* merging alone, and with the cache */
        both(r, 3, &p, l1_of(keep, 8, 1), &result, &s);
        tids_are(&result, (uint64_t[]){0, 32, 64}, 3);
        assert_int_equal(s.l1_merged, 1);
        assert_int_equal(s.requests_out - s.l1_hits - s.l1_merged, 2); /* fetches */
        assert_int_equal(s.ticks, 11);
        assert_int_equal(s.mshr_stall_ticks, 8);
        assert_int_equal(s.max_in_flight, 1);
        trace_summary_free(&s);
    }
}

/* A merged load that its warp depends on is back with the fetch it joined,
 * not a delay after its own issue: warp 0 fetches A at 1 (back 11), warp 1
 * merges at 2 and is blocked until 11 (a fetch of its own would be back at
 * 12), warp 0 loads its second line at 3, warp 1 its second at 12 (not
 * waited for): 12 ticks (13 without merging). */
static void test_merged_waits_for_its_fetch(void **state)
{
    (void)state;
    struct trace_rec r[] = {{0, 0x10, 0x1000, 4, 0, 0, 0}, {0, 0x20, 0x3000, 4, 0, 0, 0},
                            {32, 0x10, 0x1000, 4, 1, 0, 0}, {32, 0x20, 0x2000, 4, 0, 0, 0}};
    struct trace_params p = params(64, 8, 10);
    struct trace_summary s;
    both(r, 4, &p, l1_of(0, 8, 1), &result, &s);
    tids_are(&result, (uint64_t[]){0, 32, 0, 32}, 4);
    assert_int_equal(result.o[3].addr, 0x2000);
    assert_int_equal(s.l1_merged, 1);
    assert_int_equal(s.dep_blocks, 1);
    assert_int_equal(s.ticks, 12);
    trace_summary_free(&s);
}

/* One MSHR, M = 10, hit latency 1; warp 0: A (dependent), B, C; warp 1:
 * A (dependent), A. With the L1: 1 w0 fetches A (back 11); 2 w1's A is in
 * flight and may not merge: a fetch, no MSHR: it waits to 11, when A is
 * back: a hit (back 12); 12 w0 fetches B (back 22); 13 w1's A hits although
 * the MSHR is taken; 14 w0's C waits for it to 22: 22 ticks, 9 + 8 stalled,
 * 2 hits. Without: every load a fetch behind the one MSHR: 41 ticks, 36
 * stalled. */
static void test_hits_pass_a_full_mshr(void **state)
{
    (void)state;
    struct trace_rec r[] = {{0, 0x10, 0x1000, 4, 1, 0, 0}, {0, 0x20, 0x2000, 4, 0, 0, 0}, {0, 0x30, 0x3000, 4, 0, 0, 0},
                            {32, 0x10, 0x1000, 4, 1, 0, 0}, {32, 0x40, 0x1000, 4, 1, 0, 0}};
    struct trace_params p = params(64, 1, 10);
    struct trace_summary s;
    both(r, 5, &p, NULL, &result, &s);
    tids_are(&result, (uint64_t[]){0, 32, 0, 32, 0}, 5);
    assert_int_equal(s.ticks, 41);
    assert_int_equal(s.mshr_stall_ticks, 36);
    trace_summary_free(&s);

    both(r, 5, &p, l1_of(1, 0, 1), &result, &s);
    tids_are(&result, (uint64_t[]){0, 32, 0, 32, 0}, 5);
    assert_int_equal(s.l1_hits, 2);
    assert_int_equal(s.ticks, 22);
    assert_int_equal(s.mshr_stall_ticks, 17);
    trace_summary_free(&s);
}

/* ---- the verdict against the engine ----------------------------------------- */

/* Random streams over a few lines, random clocks and delays, random MSHR
 * availability, through every kind of L1: every access succeeds (it fails
 * when the engine does something other than the verdict said), and a twin
 * L1 that is never refused an MSHR gives the same verdicts: a STALL
 * changed nothing. */
static void test_verdict_is_what_the_engine_does(void **state)
{
    (void)state;
    struct trace_rng g;
    trace_rng_seed(&g, 4242);
    int seen[4] = {0};
    for (int kind = 0; kind < 6; kind++) {
        char msg[200];
        l1_of(kind & 1, (uint32_t)(kind / 2) * 3, 2); /* merges 0, 3, 6 */
        assert_int_equal(cache_geom_parse("2K,2,128,32", &fb.geom, msg, sizeof msg), 0); /* a smaller one */
        void *a = ops.open(ops.ctx, 0), *b = ops.open(ops.ctx, 0);
        assert_non_null(a);
        assert_non_null(b);
        uint64_t t = 0;
        for (int i = 0; i < 20000; i++) {
            t += trace_rng_next(&g) % 3;
            uint64_t addr = 0x10000 + (trace_rng_next(&g) % 40) * 32;
            uint32_t width = 1u << (trace_rng_next(&g) % 7), delay = 1 + (uint32_t)(trace_rng_next(&g) % 30);
            struct trace_l1_answer x, y;
            int free_mshr = trace_rng_next(&g) % 4 != 0;
            assert_int_equal(ops.access(a, addr, width, t, delay, free_mshr, &x), 0);
            seen[x.verdict]++;
            if (x.verdict == TRACE_L1_STALL) {
                assert_false(free_mshr);
                assert_int_equal(ops.access(a, addr, width, t, delay, 1, &x), 0);
                assert_int_not_equal(x.verdict, TRACE_L1_STALL);
            }
            assert_int_equal(ops.access(b, addr, width, t, delay, 1, &y), 0);
            assert_int_equal(x.verdict, y.verdict);
            assert_true(x.verdict != TRACE_L1_MERGED || (x.done == y.done && x.done > t && x.done <= t + 30));
            assert_true(fb.keep || x.verdict != TRACE_L1_HIT);
            assert_true(fb.max_merge || x.verdict != TRACE_L1_MERGED);
        }
        ops.close(a);
        ops.close(b);
    }
    for (int v = 0; v < 4; v++)
        assert_true(seen[v] > 1000);
}

static void test_linemap_find(void **state)
{
    (void)state;
    struct cache_linemap m;
    int fresh;
    assert_int_equal(cache_linemap_init(&m, 0), 0);
    for (uint64_t line = 0; line < 3000; line += 3)
        assert_int_not_equal(cache_linemap_get(&m, line, &fresh), CACHE_NONE);
    uint32_t held = cache_linemap_held(&m);
    for (uint64_t line = 0; line < 3000; line++) {
        uint32_t id = cache_linemap_find(&m, line);
        if (line % 3) {
            assert_int_equal(id, CACHE_NONE);
        } else {
            assert_int_equal(id, cache_linemap_get(&m, line, &fresh));
            assert_false(fresh);
        }
    }
    assert_int_equal(cache_linemap_held(&m), held); /* finding added nothing */
    cache_linemap_free(&m);
}

/* lat_min x 32 / 500, rounded, at least 1 (feedback.h). */
static void test_default_hit_latency(void **state)
{
    (void)state;
    for (uint32_t m = 1; m <= 2000; m++) {
        uint32_t h = cache_feedback_hit_latency(m);
        assert_true(h >= 1);
        if (m >= 8) /* from here the rounding gives at least 1 itself */
            assert_true(h * 500 <= m * 32 + 250 && m * 32 + 250 < (h + 1) * 500);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_hits_run_ahead, teardown),
        cmocka_unit_test_teardown(test_merging_removes_fetches, teardown),
        cmocka_unit_test_teardown(test_merged_waits_for_its_fetch, teardown),
        cmocka_unit_test_teardown(test_hits_pass_a_full_mshr, teardown),
        cmocka_unit_test_teardown(test_verdict_is_what_the_engine_does, teardown),
        cmocka_unit_test_teardown(test_linemap_find, teardown),
        cmocka_unit_test_teardown(test_default_hit_latency, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
