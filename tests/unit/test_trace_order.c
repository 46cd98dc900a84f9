/*
 * Hand-worked unit tests of step 1d, the ordering loop (trace/order.c and
 * the literal trace/order_ref.c), through trace_sort_records. Every case is
 * run with both loops, which must agree on the output and on every
 * statistic; the expected orders and tick counts were worked out by hand
 * (the reasoning is next to each case) with fixed delays:
 * a dependent load blocks its warp while another warp runs ahead; the
 * MSHR cap stalls issue (round-robin interleaves, greedy-then-oldest drains
 * one warp first); every warp blocked advances time until one frees; a block
 * waits for a resident slot, which frees only once the finished block's
 * dependent loads returned; partial warps and blocks (48 threads) coalesce
 * and land on their SMs; a single thread; an empty trace; the three block
 * placements (dealt with an order that skips a full SM).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "trace/deal.h"
#include "trace/sort.h"

#define MAXOUT 512

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

static void same_out(const struct trace_out *a, const struct trace_out *b)
{
    assert_int_equal(a->sm, b->sm);
    assert_int_equal(a->seq, b->seq);
    assert_int_equal(a->tid, b->tid);
    assert_int_equal(a->pc, b->pc);
    assert_int_equal(a->addr, b->addr);
    assert_int_equal(a->width, b->width);
    assert_int_equal(a->dep, b->dep);
}

/* Sorts with both loops; they must agree. The fast loop's result is kept. */
static void both(const struct trace_rec *r, size_t n, const struct trace_params *p, struct out *out,
                 struct trace_summary *sum)
{
    static struct out ref;
    struct trace_summary rs;
    struct trace_err err;
    struct trace_sort_opts fast_o = {0}, ref_o = {.reference = 1};
    out->n = 0;
    ref.n = 0;
    assert_int_equal(trace_sort_records(r, n, p, &fast_o, collect, out, sum, &err), 0);
    assert_int_equal(trace_sort_records(r, n, p, &ref_o, collect, &ref, &rs, &err), 0);
    assert_int_equal(out->n, ref.n);
    for (size_t i = 0; i < out->n; i++)
        same_out(&out->o[i], &ref.o[i]);
    assert_int_equal(sum->nsms, rs.nsms);
    assert_memory_equal(sum->sm, rs.sm, sum->nsms * sizeof *sum->sm);
    trace_summary_free(&rs);
}

static struct trace_params params(uint32_t tpb, uint32_t bps, uint32_t sms, uint32_t mshr, uint32_t lat)
{
    struct trace_params p;
    trace_params_default(&p);
    p.threads_per_block = tpb;
    p.blocks_per_sm = bps;
    p.sms = sms;
    p.mshr = mshr;
    p.lat_min = lat;
    p.delay = TRACE_DELAY_FIXED;
    p.set = TRACE_P_THREADS_PER_BLOCK | TRACE_P_BLOCKS_PER_SM;
    return p;
}

static void addrs_are(const struct out *o, const uint64_t *want, size_t n)
{
    assert_int_equal(o->n, n);
    for (size_t i = 0; i < n; i++) {
        if (o->o[i].addr != want[i])
            fail_msg("record %zu: address 0x%llx, expected 0x%llx", i, (unsigned long long)o->o[i].addr,
                     (unsigned long long)want[i]);
        assert_int_equal(o->o[i].seq, i);
    }
}

static struct out result;

/* Warp 0 = thread 0, warp 1 = thread 32 (one block of 64), M = 3.
 * clock 1: A1 (dep, back at 4; warp 0 blocked); 2: B1; 3: B2 (warp 0 still
 * blocked); 4: A1 returns, B3 issues; 5: A2. */
static void test_blocking(void **state)
{
    (void)state;
    struct trace_rec r[] = {
        {0, 0x10, 0x000, 4, 1, 0, 0},   {0, 0x20, 0x080, 4, 0, 0, 0},   {32, 0x10, 0x1000, 4, 0, 0, 0},
        {32, 0x20, 0x1080, 4, 0, 0, 0}, {32, 0x30, 0x1100, 4, 0, 0, 0},
    };
    struct trace_params p = params(64, 1, 1, 16, 3);
    struct trace_summary s;
    both(r, 5, &p, &result, &s);
    addrs_are(&result, (uint64_t[]){0x000, 0x1000, 0x1080, 0x1100, 0x080}, 5);
    assert_int_equal(s.ticks, 5);
    assert_int_equal(s.dep_blocks, 1);
    assert_int_equal(s.idle_ticks, 0);
    assert_int_equal(s.mshr_stall_ticks, 0);
    assert_int_equal(s.max_in_flight, 3);
    assert_int_equal(s.instructions, 5);
    assert_int_equal(s.requests_out, 5);
    assert_int_equal(s.records_in, 5);
    assert_int_equal(result.o[0].dep, 1);
    trace_summary_free(&s);
    /* without the dependency, plain round-robin */
    r[0].dep = 0;
    both(r, 5, &p, &result, &s);
    addrs_are(&result, (uint64_t[]){0x000, 0x1000, 0x080, 0x1080, 0x1100}, 5);
    assert_int_equal(s.dep_blocks, 0);
    trace_summary_free(&s);
}

/* mshr 1, M = 2: every issue after the first waits one tick for the MSHR.
 * rr: A1 B1 A2 B2 A3 B3; gto: A1 A2 A3 B1 B2 B3; 11 ticks, 5 of them stalls. */
static void test_mshr_full(void **state)
{
    (void)state;
    struct trace_rec r[] = {
        {0, 0x10, 0x000, 4, 0, 0, 0},   {0, 0x20, 0x080, 4, 0, 0, 0},   {0, 0x30, 0x100, 4, 0, 0, 0},
        {32, 0x10, 0x1000, 4, 0, 0, 0}, {32, 0x20, 0x1080, 4, 0, 0, 0}, {32, 0x30, 0x1100, 4, 0, 0, 0},
    };
    struct trace_params p = params(64, 1, 1, 1, 2);
    struct trace_summary s;
    both(r, 6, &p, &result, &s);
    addrs_are(&result, (uint64_t[]){0x000, 0x1000, 0x080, 0x1080, 0x100, 0x1100}, 6);
    assert_int_equal(s.ticks, 11);
    assert_int_equal(s.mshr_stall_ticks, 5);
    assert_int_equal(s.max_in_flight, 1);
    trace_summary_free(&s);
    p.schedule = TRACE_SCHEDULE_GTO;
    both(r, 6, &p, &result, &s);
    addrs_are(&result, (uint64_t[]){0x000, 0x080, 0x100, 0x1000, 0x1080, 0x1100}, 6);
    assert_int_equal(s.ticks, 11);
    assert_int_equal(s.mshr_stall_ticks, 5);
    trace_summary_free(&s);
    /* a bigger MSHR: no stalls, 6 ticks */
    p.mshr = 8;
    both(r, 6, &p, &result, &s);
    assert_int_equal(s.ticks, 6);
    assert_int_equal(s.mshr_stall_ticks, 0);
    trace_summary_free(&s);
}

/* Both warps' requests are dependent, M = 4: A1 (1, back 5), B1 (2, back 6),
 * idle 3-5, A2 (6, back 10), B2 (7, back 11), idle to 10, warp 0 done,
 * idle to 11, warp 1 done: 11 ticks, 7 idle. */
static void test_all_blocked(void **state)
{
    (void)state;
    struct trace_rec r[] = {
        {0, 0x10, 0x000, 4, 1, 0, 0}, {0, 0x20, 0x080, 4, 1, 0, 0}, {32, 0x10, 0x1000, 4, 1, 0, 0}, {32, 0x20, 0x1080, 4, 1, 0, 0},
    };
    struct trace_params p = params(64, 1, 1, 16, 4);
    struct trace_summary s;
    both(r, 4, &p, &result, &s);
    addrs_are(&result, (uint64_t[]){0x000, 0x1000, 0x080, 0x1080}, 4);
    assert_int_equal(s.ticks, 11);
    assert_int_equal(s.idle_ticks, 7);
    assert_int_equal(s.dep_blocks, 4);
    trace_summary_free(&s);
    /* greedy-then-oldest cannot be greedy either: same order */
    p.schedule = TRACE_SCHEDULE_GTO;
    both(r, 4, &p, &result, &s);
    addrs_are(&result, (uint64_t[]){0x000, 0x1000, 0x080, 0x1080}, 4);
    trace_summary_free(&s);
}

/* Two blocks of one thread on one SM, M = 5; block 0's last load is
 * dependent. One slot: A1 (1), A2 (2, back 7), idle to 7, then block 1: B1
 * (8). Two slots: A1, B1, A2, idle to 8. */
static void test_residency(void **state)
{
    (void)state;
    struct trace_rec r[] = {{0, 0x10, 0x000, 4, 0, 0, 0}, {0, 0x20, 0x080, 4, 1, 0, 0}, {32, 0x10, 0x1000, 4, 0, 0, 0}};
    struct trace_params p = params(32, 1, 1, 16, 5);
    struct trace_summary s;
    both(r, 3, &p, &result, &s);
    addrs_are(&result, (uint64_t[]){0x000, 0x080, 0x1000}, 3);
    assert_int_equal(s.ticks, 8);
    assert_int_equal(s.idle_ticks, 5);
    assert_int_equal(s.blocks, 2);
    trace_summary_free(&s);
    p.blocks_per_sm = 2;
    both(r, 3, &p, &result, &s);
    addrs_are(&result, (uint64_t[]){0x000, 0x1000, 0x080}, 3);
    assert_int_equal(s.ticks, 8);
    assert_int_equal(s.idle_ticks, 5);
    trace_summary_free(&s);
}

/* 96 threads in blocks of 48 on two SMs; thread t reads 4 bytes at 4t.
 * SM 0 (block 0): warp 0 = threads 0-31, one line: (0, 0, 128); warp 1 =
 * threads 32-47: (32, 128, 64). SM 1 (block 1): warp 0 = 48-79 spans lines
 * 1 and 2: (48, 192, 64), (64, 256, 64); warp 1 = 80-95: (80, 320, 64). */
static void test_partial_warps_and_blocks(void **state)
{
    (void)state;
    static struct trace_rec r[96];
    for (uint64_t t = 0; t < 96; t++)
        r[t] = (struct trace_rec){t, 0x10, 4 * t, 4, 0, 0, 0};
    struct trace_params p = params(48, 2, 2, 16, 3);
    struct trace_summary s;
    both(r, 96, &p, &result, &s);
    struct trace_out want[] = {
        {0, 0, 0, 0x10, 0, 128, 0, 0},    {0, 1, 32, 0x10, 128, 64, 0, 0}, {1, 0, 48, 0x10, 192, 64, 0, 0},
        {1, 1, 64, 0x10, 256, 64, 0, 0}, {1, 2, 80, 0x10, 320, 64, 0, 0},
    };
    assert_int_equal(result.n, 5);
    for (size_t i = 0; i < 5; i++)
        same_out(&result.o[i], &want[i]);
    assert_int_equal(s.sm[0].records_in, 48);
    assert_int_equal(s.sm[1].records_in, 48);
    assert_int_equal(s.sm[0].warps, 2);
    assert_int_equal(s.sm[1].requests_out, 3);
    assert_int_equal(s.blocks, 2);
    trace_summary_free(&s);
}

static void test_single_thread(void **state)
{
    (void)state;
    struct trace_rec r[] = {{5, 0x10, 0x500, 8, 1, 0, 0}, {5, 0x10, 0x508, 8, 1, 0, 0}, {5, 0x30, 0x100, 16, 0, 0, 0}};
    struct trace_params p = params(256, 2, 4, 4, 7);
    p.delay = TRACE_DELAY_NORMAL;
    p.lat_sigma = 3;
    struct trace_summary s;
    both(r, 3, &p, &result, &s);
    addrs_are(&result, (uint64_t[]){0x500, 0x508, 0x100}, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(result.o[i].sm, 0);
        assert_int_equal(result.o[i].tid, 5);
    }
    assert_int_equal(result.o[2].width, 16);
    assert_int_equal(s.blocks, 1);
    assert_int_equal(s.warps, 1);
    assert_int_equal(s.dep_blocks, 2);
    assert_int_equal(s.sm[1].blocks, 0);
    trace_summary_free(&s);
}

static void test_empty(void **state)
{
    (void)state;
    struct trace_params p = params(256, 2, 3, 4, 7);
    struct trace_summary s;
    both(NULL, 0, &p, &result, &s);
    assert_int_equal(result.n, 0);
    assert_int_equal(s.records_in, 0);
    assert_int_equal(s.requests_out, 0);
    assert_int_equal(s.ticks, 0);
    assert_int_equal(s.nsms, 3);
    json_t *j = trace_summary_to_json(&s);
    assert_non_null(j);
    assert_true(json_real_value(json_object_get(j, "coalescing_ratio")) == 0.0);
    assert_int_equal(json_array_size(json_object_get(j, "sms")), 3);
    json_decref(j);
    trace_summary_free(&s);
}

static void test_placement(void **state)
{
    (void)state;
    struct trace_rec r[] = {{0, 0x10, 0x0, 4, 0, 0, 0}, {32, 0x10, 0x1000, 4, 0, 0, 0}, {64, 0x10, 0x2000, 4, 0, 0, 0}, {96, 0x10, 0x3000, 4, 0, 0, 0}};
    struct trace_params p = params(32, 2, 2, 4, 3);
    struct trace_summary s;
    both(r, 4, &p, &result, &s);
    uint32_t rr_sm[] = {0, 0, 1, 1};
    uint64_t rr_tid[] = {0, 64, 32, 96};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(result.o[i].sm, rr_sm[i]);
        assert_int_equal(result.o[i].tid, rr_tid[i]);
    }
    trace_summary_free(&s);
    p.placement = TRACE_PLACEMENT_FILL;
    both(r, 4, &p, &result, &s);
    uint64_t fill_tid[] = {0, 32, 64, 96};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(result.o[i].sm, rr_sm[i]);
        assert_int_equal(result.o[i].tid, fill_tid[i]);
    }
    trace_summary_free(&s);
    /* dealt: the order 1 0 1 1 0 with SM 1 full at its third entry gives
     * blocks 0 and 2 to SM 1, 1 and 3 to SM 0 */
    uint16_t order[] = {1, 0, 1, 1, 0};
    struct trace_deal d = {5, order};
    p.placement = TRACE_PLACEMENT_DEALT;
    p.deal = &d;
    both(r, 4, &p, &result, &s);
    uint64_t dealt_tid[] = {32, 96, 0, 64};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(result.o[i].sm, rr_sm[i]);
        assert_int_equal(result.o[i].tid, dealt_tid[i]);
    }
    trace_summary_free(&s);
    /* an order without SM 0, or none at all, is refused before any output */
    uint16_t one[] = {1, 1};
    struct trace_deal d1 = {2, one};
    struct trace_err err;
    p.deal = &d1;
    result.n = 0;
    assert_int_equal(trace_sort_records(r, 4, &p, NULL, collect, &result, &s, &err), TRACE_SORT_EINPUT);
    assert_non_null(strstr(err.msg, "SM 0 is not in it"));
    assert_int_equal(result.n, 0);
    p.deal = NULL;
    assert_int_equal(trace_sort_records(r, 4, &p, NULL, collect, &result, &s, &err), TRACE_SORT_EINPUT);
    assert_non_null(strstr(err.msg, "--device"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocking),       cmocka_unit_test(test_mshr_full),
        cmocka_unit_test(test_all_blocked),    cmocka_unit_test(test_residency),
        cmocka_unit_test(test_partial_warps_and_blocks), cmocka_unit_test(test_single_thread),
        cmocka_unit_test(test_empty),          cmocka_unit_test(test_placement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
