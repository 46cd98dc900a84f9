/*
 * Hand-worked unit tests of step 1c (trace/coalesce.c) and the thread ->
 * warp -> block -> SM mapping of step 1b (trace/schedule.c).
 * Coalescing: 4-byte requests of a warp over one 128-byte line make one
 * request of width 128; 8-byte ones merge only within half warps and
 * 16-byte ones within quarter warps, even when every lane reads the same
 * bytes; the merge keeps the smaller thread id with its own address and the
 * smallest power-of-two width covering all merged bytes (also when the kept
 * address is not the lowest); line128 vs sector32 on the same accesses;
 * scattered accesses stay one request each, in lane order; the line size
 * parameter decides the key; mixed widths use the widest; dependency flags
 * are ORed; a load and a store of one line never merge (both policies),
 * each keeping its kind. Instruction forming: min-PC with divergent lanes, a partial
 * warp, exhausted lanes, and an empty warp.
 * Scheduling: block, warp and lane of a thread with blocks of 48 threads
 * (partial warps), both placements, and their inverse.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "trace/coalesce.h"
#include "trace/schedule.h"

static struct trace_coalescer coalescer(enum trace_coalesce policy, uint32_t line)
{
    struct trace_params p;
    trace_params_default(&p);
    p.coalesce = policy;
    p.line_bytes = line;
    struct trace_coalescer c;
    trace_coalescer_init(&c, &p);
    return c;
}

/* One instruction: lane i (of n, from lane0) at base + i * stride, width w, tid = 100 + lane. */
static uint32_t run(enum trace_coalesce policy, uint32_t n, uint64_t base, uint64_t stride, uint32_t w,
                    struct trace_group *g)
{
    static struct trace_rec r[TRACE_WARP_SIZE];
    const struct trace_rec *req[TRACE_WARP_SIZE];
    uint8_t lane[TRACE_WARP_SIZE];
    for (uint32_t i = 0; i < n; i++) {
        r[i] = (struct trace_rec){.tid = 100 + i, .pc = 0x40, .addr = base + i * stride, .width = w, .dep = 0};
        req[i] = &r[i];
        lane[i] = (uint8_t)i;
    }
    struct trace_coalescer c = coalescer(policy, 128);
    return trace_coalesce(&c, req, lane, n, g);
}

static void txn_is(const struct trace_rec *t, uint64_t tid, uint64_t addr, uint32_t width)
{
    assert_int_equal(t->tid, tid);
    assert_int_equal(t->addr, addr);
    assert_int_equal(t->width, width);
    assert_int_equal(t->pc, 0x40);
}

static void test_width4_one_line(void **state)
{
    (void)state;
    struct trace_group g;
    assert_int_equal(run(TRACE_COALESCE_LINE128, 32, 0x1000, 4, 4, &g), 1);
    txn_is(&g.txn[0], 100, 0x1000, 128);
    assert_int_equal(g.records, 32);
    /* shifted by 64 bytes: two lines, 16 lanes each, each half covered */
    assert_int_equal(run(TRACE_COALESCE_LINE128, 32, 0x1040, 4, 4, &g), 2);
    txn_is(&g.txn[0], 100, 0x1040, 64);
    txn_is(&g.txn[1], 116, 0x1080, 64);
}

static void test_width8_half_warps(void **state)
{
    (void)state;
    struct trace_group g;
    /* 256 contiguous bytes: lanes 0-15 fill line 0, 16-31 line 1 */
    assert_int_equal(run(TRACE_COALESCE_LINE128, 32, 0x2000, 8, 8, &g), 2);
    txn_is(&g.txn[0], 100, 0x2000, 128);
    txn_is(&g.txn[1], 116, 0x2080, 128);
    /* every lane reads the same 8 bytes: still one request per half warp */
    assert_int_equal(run(TRACE_COALESCE_LINE128, 32, 0x2000, 0, 8, &g), 2);
    txn_is(&g.txn[0], 100, 0x2000, 8);
    txn_is(&g.txn[1], 116, 0x2000, 8);
    /* sector32 takes the whole warp */
    assert_int_equal(run(TRACE_COALESCE_SECTOR32, 32, 0x2000, 0, 8, &g), 1);
    txn_is(&g.txn[0], 100, 0x2000, 8);
}

static void test_width16_quarter_warps(void **state)
{
    (void)state;
    struct trace_group g;
    assert_int_equal(run(TRACE_COALESCE_LINE128, 32, 0x3000, 16, 16, &g), 4);
    for (int q = 0; q < 4; q++)
        txn_is(&g.txn[q], 100 + 8 * (uint64_t)q, 0x3000 + 128 * (uint64_t)q, 128);
    /* all lanes on one 16-byte word: one request per quarter warp */
    assert_int_equal(run(TRACE_COALESCE_LINE128, 32, 0x3000, 0, 16, &g), 4);
    for (int q = 0; q < 4; q++)
        txn_is(&g.txn[q], 100 + 8 * (uint64_t)q, 0x3000, 16);
    /* 2- and 1-byte requests merge over the whole warp, like 4-byte ones */
    assert_int_equal(run(TRACE_COALESCE_LINE128, 32, 0x3000, 2, 2, &g), 1);
    txn_is(&g.txn[0], 100, 0x3000, 64);
    assert_int_equal(run(TRACE_COALESCE_LINE128, 32, 0x3000, 1, 1, &g), 1);
    txn_is(&g.txn[0], 100, 0x3000, 32);
}

static void test_merge_rule(void **state)
{
    (void)state;
    struct trace_rec r[3] = {
        {.tid = 9, .pc = 0x40, .addr = 0x110, .width = 4, .dep = 0},
        {.tid = 5, .pc = 0x40, .addr = 0x104, .width = 4, .dep = 1},
        {.tid = 7, .pc = 0x40, .addr = 0x100, .width = 2, .dep = 0},
    };
    const struct trace_rec *req[3] = {&r[0], &r[1], &r[2]};
    uint8_t lane[3] = {0, 1, 2};
    struct trace_coalescer c = coalescer(TRACE_COALESCE_LINE128, 128);
    struct trace_group g;
    assert_int_equal(trace_coalesce(&c, req, lane, 3, &g), 1);
    /* smallest tid 5 with its own address; bytes 0x100..0x113 (20) -> 32 */
    assert_int_equal(g.txn[0].tid, 5);
    assert_int_equal(g.txn[0].addr, 0x104);
    assert_int_equal(g.txn[0].width, 32);
    assert_int_equal(g.txn[0].dep, 1);
    assert_int_equal(g.dep, 1);
    assert_int_equal(g.records, 3);
    /* exactly two adjacent 4-byte requests: width 8; overlapping: no widening */
    struct trace_rec s[2] = {{.tid = 1, .pc = 0x40, .addr = 0x204, .width = 4}, {.tid = 2, .pc = 0x40, .addr = 0x200, .width = 4}};
    const struct trace_rec *sq[2] = {&s[0], &s[1]};
    assert_int_equal(trace_coalesce(&c, sq, lane, 2, &g), 1);
    txn_is(&g.txn[0], 1, 0x204, 8);
    s[1].addr = 0x204;
    assert_int_equal(trace_coalesce(&c, sq, lane, 2, &g), 1);
    txn_is(&g.txn[0], 1, 0x204, 4);
    /* a mixed instruction uses the widest width for the lane groups: 16 B
     * means quarter warps, so lanes 0 and 8 do not merge although on one line */
    struct trace_rec m[2] = {{.tid = 0, .pc = 0x40, .addr = 0x300, .width = 4}, {.tid = 8, .pc = 0x40, .addr = 0x310, .width = 16}};
    const struct trace_rec *mq[2] = {&m[0], &m[1]};
    uint8_t ml[2] = {0, 8};
    assert_int_equal(trace_coalesce(&c, mq, ml, 2, &g), 2);
    m[1].tid = 7;
    ml[1] = 7;
    assert_int_equal(trace_coalesce(&c, mq, ml, 2, &g), 1);
    txn_is(&g.txn[0], 0, 0x300, 32);
}

/* Lanes alternate load, store, load ... over one line (a malformed trace:
 * one PC is one instruction, but the binary format does not check it): the
 * loads merge, the stores merge, never the two, and each request keeps its
 * kind. */
static void test_load_store_apart(void **state)
{
    (void)state;
    static const enum trace_coalesce policies[2] = {TRACE_COALESCE_LINE128, TRACE_COALESCE_SECTOR32};
    for (int k = 0; k < 2; k++) {
        struct trace_rec r[8];
        const struct trace_rec *req[8];
        uint8_t lane[8];
        for (uint32_t i = 0; i < 8; i++) {
            r[i] = (struct trace_rec){.tid = 100 + i, .pc = 0x40, .addr = 0x1000 + 4 * i, .width = 4,
                                      .store = (uint8_t)(i & 1)};
            req[i] = &r[i];
            lane[i] = (uint8_t)i;
        }
        struct trace_coalescer c = coalescer(policies[k], 128);
        struct trace_group g;
        assert_int_equal(trace_coalesce(&c, req, lane, 8, &g), 2);
        assert_int_equal(g.txn[0].store, 0);
        assert_int_equal(g.txn[1].store, 1);
        assert_int_equal(g.txn[0].tid, 100);
        assert_int_equal(g.txn[1].tid, 101);
        assert_int_equal(g.txn[0].width, 32); /* bytes 0x1000..0x101b */
        assert_int_equal(g.txn[1].width, 32); /* bytes 0x1004..0x101f */
        /* all stores: one request, a store */
        for (uint32_t i = 0; i < 8; i++)
            r[i].store = 1;
        assert_int_equal(trace_coalesce(&c, req, lane, 8, &g), 1);
        assert_int_equal(g.txn[0].store, 1);
    }
}

static void test_line_vs_sector(void **state)
{
    (void)state;
    struct trace_group g;
    assert_int_equal(run(TRACE_COALESCE_LINE128, 32, 0x4000, 4, 4, &g), 1);
    txn_is(&g.txn[0], 100, 0x4000, 128);
    assert_int_equal(run(TRACE_COALESCE_SECTOR32, 32, 0x4000, 4, 4, &g), 4);
    for (int s = 0; s < 4; s++)
        txn_is(&g.txn[s], 100 + 8 * (uint64_t)s, 0x4000 + 32 * (uint64_t)s, 32);
    /* 16-byte: line128 splits by quarter warps, sector32 by sectors: 16 of 32 B */
    assert_int_equal(run(TRACE_COALESCE_SECTOR32, 32, 0x4000, 16, 16, &g), 16);
    txn_is(&g.txn[15], 130, 0x4000 + 15 * 32, 32);
    /* stride 128: one line and one sector per lane under both */
    assert_int_equal(run(TRACE_COALESCE_LINE128, 32, 0x4000, 128, 4, &g), 32);
    assert_int_equal(run(TRACE_COALESCE_SECTOR32, 32, 0x4000, 128, 4, &g), 32);
    for (int i = 0; i < 32; i++)
        txn_is(&g.txn[i], 100 + (uint64_t)i, 0x4000 + 128 * (uint64_t)i, 4);
    /* the line parameter: 64-byte lines split the 128 bytes in two */
    struct trace_rec r[32];
    const struct trace_rec *req[32];
    uint8_t lane[32];
    for (int i = 0; i < 32; i++) {
        r[i] = (struct trace_rec){.tid = (uint64_t)i, .pc = 0x40, .addr = 0x4000 + 4 * (uint64_t)i, .width = 4};
        req[i] = &r[i];
        lane[i] = (uint8_t)i;
    }
    struct trace_coalescer c64 = coalescer(TRACE_COALESCE_LINE128, 64);
    assert_int_equal(trace_coalesce(&c64, req, lane, 32, &g), 2);
    txn_is(&g.txn[1], 16, 0x4040, 64);
}

static void test_scattered_order(void **state)
{
    (void)state;
    struct trace_rec r[4] = {
        {.tid = 0, .pc = 0x40, .addr = 0x9000, .width = 4},
        {.tid = 1, .pc = 0x40, .addr = 0x1000, .width = 4},
        {.tid = 2, .pc = 0x40, .addr = 0x9004, .width = 4},
        {.tid = 3, .pc = 0x40, .addr = 0x5000, .width = 4},
    };
    const struct trace_rec *req[4] = {&r[0], &r[1], &r[2], &r[3]};
    uint8_t lane[4] = {0, 1, 2, 3};
    struct trace_coalescer c = coalescer(TRACE_COALESCE_LINE128, 128);
    struct trace_group g;
    assert_int_equal(trace_coalesce(&c, req, lane, 4, &g), 3);
    txn_is(&g.txn[0], 0, 0x9000, 8); /* order of first appearance, not of address */
    txn_is(&g.txn[1], 1, 0x1000, 4);
    txn_is(&g.txn[2], 3, 0x5000, 4);
    assert_int_equal(trace_coalesce(&c, req, lane, 0, &g), 0);
    assert_int_equal(g.n, 0);
}

/* ---- instruction forming ------------------------------------------------ */

static void set_lane(struct trace_warp *w, unsigned lane, const struct trace_rec *r, size_t n)
{
    w->cur[lane] = r;
    w->end[lane] = r + n;
    if (n)
        w->live |= 1u << lane;
}

static void test_min_pc_divergence(void **state)
{
    (void)state;
    /* lane 0: A B C; lane 1: B C; lane 2: A C (took the other branch) */
    static const struct trace_rec l0[] = {{0, 0x10, 0x000, 4, 0, 0, 0}, {0, 0x20, 0x100, 4, 1, 0, 0}, {0, 0x30, 0x200, 4, 0, 0, 0}};
    static const struct trace_rec l1[] = {{1, 0x20, 0x104, 4, 1, 0, 0}, {1, 0x30, 0x204, 4, 0, 0, 0}};
    static const struct trace_rec l2[] = {{2, 0x10, 0x008, 4, 0, 0, 0}, {2, 0x30, 0x208, 4, 0, 0, 0}};
    struct trace_warp w;
    memset(&w, 0, sizeof w);
    set_lane(&w, 0, l0, 3);
    set_lane(&w, 1, l1, 2);
    set_lane(&w, 2, l2, 2);
    struct trace_coalescer c = coalescer(TRACE_COALESCE_LINE128, 128);
    struct trace_group g;
    assert_int_equal(trace_warp_next(&w, &c, &g), 1); /* A: lanes 0, 2 */
    assert_int_equal(g.records, 2);
    assert_int_equal(g.n, 1);
    assert_int_equal(g.txn[0].pc, 0x10);
    assert_int_equal(g.txn[0].width, 16); /* 12 bytes, rounded up */
    assert_int_equal(trace_warp_next(&w, &c, &g), 1); /* B: lanes 0, 1 */
    assert_int_equal(g.records, 2);
    assert_int_equal(g.txn[0].pc, 0x20);
    assert_int_equal(g.dep, 1);
    assert_int_equal(w.live, 0x7); /* C left in every lane */
    assert_int_equal(trace_warp_next(&w, &c, &g), 1); /* C: all three */
    assert_int_equal(g.records, 3);
    assert_int_equal(g.txn[0].tid, 0);
    assert_int_equal(g.txn[0].addr, 0x200);
    assert_int_equal(g.txn[0].width, 16);
    assert_int_equal(g.dep, 0);
    assert_int_equal(w.live, 0);
    assert_int_equal(trace_warp_next(&w, &c, &g), 0);
}

static void test_partial_warp(void **state)
{
    (void)state;
    /* 16 lanes (the second warp of a 48-thread block), 4 bytes each */
    static struct trace_rec r[16];
    struct trace_warp w;
    memset(&w, 0, sizeof w);
    for (unsigned i = 0; i < 16; i++) {
        r[i] = (struct trace_rec){.tid = 32 + i, .pc = 0x50, .addr = 0x100 + 4 * i, .width = 4};
        set_lane(&w, i, &r[i], 1);
    }
    struct trace_coalescer c = coalescer(TRACE_COALESCE_LINE128, 128);
    struct trace_group g;
    assert_int_equal(trace_warp_next(&w, &c, &g), 1);
    assert_int_equal(g.n, 1);
    assert_int_equal(g.txn[0].tid, 32);
    assert_int_equal(g.txn[0].width, 64);
    assert_int_equal(trace_warp_next(&w, &c, &g), 0);
    memset(&w, 0, sizeof w); /* a warp without records */
    assert_int_equal(trace_warp_next(&w, &c, &g), 0);
}

/* ---- step 1b ------------------------------------------------------------ */

static void test_schedule(void **state)
{
    (void)state;
    struct trace_params p;
    trace_params_default(&p);
    p.threads_per_block = 48;
    p.sms = 3;
    p.blocks_per_sm = 2;
    assert_int_equal(trace_sched_block(&p, 47), 0);
    assert_int_equal(trace_sched_block(&p, 48), 1);
    assert_int_equal(trace_sched_warp_in_block(&p, 31), 0);
    assert_int_equal(trace_sched_warp_in_block(&p, 32), 1);
    assert_int_equal(trace_sched_lane(&p, 47), 15);
    assert_int_equal(trace_sched_warp_in_block(&p, 48), 0); /* block 1 starts a new warp */
    assert_int_equal(trace_sched_lane(&p, 50), 2);
    assert_int_equal(trace_sched_warp_threads(&p, 0), 32);
    assert_int_equal(trace_sched_warp_threads(&p, 1), 16);
    assert_int_equal(trace_sched_warp_threads(&p, 2), 0);
    /* rr: b % sms */
    uint32_t rr[8] = {0, 1, 2, 0, 1, 2, 0, 1};
    for (uint64_t b = 0; b < 8; b++)
        assert_int_equal(trace_sched_block_sm(&p, NULL, b), rr[b]);
    /* fill: two at a time per SM, waves of 6 */
    p.placement = TRACE_PLACEMENT_FILL;
    uint32_t fill[8] = {0, 0, 1, 1, 2, 2, 0, 0};
    for (uint64_t b = 0; b < 8; b++)
        assert_int_equal(trace_sched_block_sm(&p, NULL, b), fill[b]);
    /* trace_sched_sm_block is the inverse of both */
    for (int pl = 0; pl < 2; pl++) {
        p.placement = (enum trace_placement)pl;
        for (uint32_t sm = 0; sm < 3; sm++)
            for (uint64_t k = 0; k < 20; k++) {
                uint64_t b = trace_sched_sm_block(&p, sm, k);
                assert_int_equal(trace_sched_block_sm(&p, NULL, b), sm);
                if (k)
                    assert_true(b > trace_sched_sm_block(&p, sm, k - 1));
            }
    }
    p.placement = TRACE_PLACEMENT_RR;
    assert_true(trace_sched_sm_block(&p, 2, UINT64_MAX / 2) == UINT64_MAX);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_width4_one_line),     cmocka_unit_test(test_width8_half_warps),
        cmocka_unit_test(test_width16_quarter_warps), cmocka_unit_test(test_merge_rule),
        cmocka_unit_test(test_line_vs_sector),      cmocka_unit_test(test_scattered_order),
        cmocka_unit_test(test_min_pc_divergence),   cmocka_unit_test(test_partial_warp),
        cmocka_unit_test(test_schedule),            cmocka_unit_test(test_load_store_apart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
