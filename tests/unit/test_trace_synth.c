/*
 * Unit tests of the synthetic traces (trace/synth*.c): every pattern on a
 * tiny size against the records worked out by hand from its kernel
 * (tests/gpu/kernels/synth/): thread ids, PCs, addresses, widths and flags,
 * with partial edge tiles where the pattern has tiles; counts on larger
 * sizes from closed forms (each element of A loaded once per block column,
 * ...); that every pattern's stream is thread-major, keeps one flag per PC
 * and stays inside its arrays; that the writes, and only they, carry the
 * store flag (the kernels' last instruction, from docs/trace-synth.md's
 * table); array placement; the sink stopping the run; synth_count equal
 * to the records made, for every pattern and grid shape, and its limit;
 * and the refusals of sizes, tiles, blocks and element sizes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/synth.h"

#define A0 0x100000000ull /* SYNTH_BASE: the first array */
#define B0 0x100200000ull /* the second: the next 2 MiB boundary for small arrays */
#define C0 0x100400000ull

/* An expected record: thread, PC, address, flag (width given per test). */
struct exp {
    uint64_t tid, pc, addr;
    uint32_t dep;
};

struct collect {
    struct trace_rec *r;
    size_t n, cap;
};

static int collect(void *ctx, const struct trace_rec *r)
{
    struct collect *c = ctx;
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->r = realloc(c->r, c->cap * sizeof *c->r);
        assert_non_null(c->r);
    }
    c->r[c->n++] = *r;
    return 0;
}

static void resolve(const char *pattern, const char *size, const char *block, uint64_t tile,
                    uint32_t elem, uint64_t stride, struct synth_kernel *k)
{
    struct synth_opts o = {.tile = tile, .elem = elem, .stride = stride};
    char why[256] = "";
    const struct synth_pattern *p = synth_pattern_find(pattern);
    assert_non_null(p);
    assert_int_equal(synth_parse_size(size, &o, why, sizeof why), 0);
    if (block)
        assert_int_equal(synth_parse_block(block, &o, why, sizeof why), 0);
    if (synth_resolve(p, &o, k, why, sizeof why) != 0)
        fail_msg("%s: %s", pattern, why);
}

static void check(const char *pattern, const char *size, const char *block, uint64_t tile,
                  uint32_t elem, uint64_t stride, const struct exp *e, size_t n)
{
    struct synth_kernel k;
    resolve(pattern, size, block, tile, elem, stride, &k);
    struct collect c = {0};
    uint64_t records = 0;
    assert_int_equal(synth_run(&k, collect, &c, &records), 0);
    assert_int_equal(records, c.n);
    for (size_t i = 0; i < n && i < c.n; i++) {
        const struct trace_rec *r = &c.r[i];
        if (r->tid != e[i].tid || r->pc != e[i].pc || r->addr != e[i].addr || r->dep != e[i].dep ||
            r->width != (elem ? elem : 4))
            fail_msg("%s record %zu: got tid %llu pc 0x%llx addr 0x%llx width %u dep %u, "
                     "expected tid %llu pc 0x%llx addr 0x%llx dep %u",
                     pattern, i, (unsigned long long)r->tid, (unsigned long long)r->pc,
                     (unsigned long long)r->addr, r->width, r->dep, (unsigned long long)e[i].tid,
                     (unsigned long long)e[i].pc, (unsigned long long)e[i].addr, e[i].dep);
    }
    assert_int_equal(c.n, n);
    free(c.r);
}

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* C(2x2) = A(2x2) x B(2x2), block 2x2: thread (tx=col, ty=row), k = 0, 1. */
static void test_matmul_naive(void **state)
{
    (void)state;
    static const struct exp e[] = {
        {0, 0x00, A0 + 0x0, 0},  {0, 0x10, B0 + 0x0, 1}, {0, 0x00, A0 + 0x4, 0},
        {0, 0x10, B0 + 0x8, 1},  {0, 0x20, C0 + 0x0, 0}, /* row 0, col 0 */
        {1, 0x00, A0 + 0x0, 0},  {1, 0x10, B0 + 0x4, 1}, {1, 0x00, A0 + 0x4, 0},
        {1, 0x10, B0 + 0xc, 1},  {1, 0x20, C0 + 0x4, 0}, /* row 0, col 1 */
        {2, 0x00, A0 + 0x8, 0},  {2, 0x10, B0 + 0x0, 1}, {2, 0x00, A0 + 0xc, 0},
        {2, 0x10, B0 + 0x8, 1},  {2, 0x20, C0 + 0x8, 0}, /* row 1, col 0 */
        {3, 0x00, A0 + 0x8, 0},  {3, 0x10, B0 + 0x4, 1}, {3, 0x00, A0 + 0xc, 0},
        {3, 0x10, B0 + 0xc, 1},  {3, 0x20, C0 + 0xc, 0}, /* row 1, col 1 */
    };
    check("matmul-naive", "2", "2x2", 0, 0, 0, e, N_OF(e));
}

/* B^T: thread (row, col) reads B(col, k) = B[col*K + k]. The default
 * block, 16x16: row 1 starts at thread 16, and 252 threads are idle. */
static void test_matmul_naive_bt(void **state)
{
    (void)state;
    static const struct exp e[] = {
        {0, 0x00, A0 + 0x0, 0}, {0, 0x10, B0 + 0x0, 1}, {0, 0x00, A0 + 0x4, 0},
        {0, 0x10, B0 + 0x4, 1}, {0, 0x20, C0 + 0x0, 0},
        {1, 0x00, A0 + 0x0, 0}, {1, 0x10, B0 + 0x8, 1}, {1, 0x00, A0 + 0x4, 0},
        {1, 0x10, B0 + 0xc, 1}, {1, 0x20, C0 + 0x4, 0},
        {16, 0x00, A0 + 0x8, 0}, {16, 0x10, B0 + 0x0, 1}, {16, 0x00, A0 + 0xc, 0},
        {16, 0x10, B0 + 0x4, 1}, {16, 0x20, C0 + 0x8, 0},
        {17, 0x00, A0 + 0x8, 0}, {17, 0x10, B0 + 0x8, 1}, {17, 0x00, A0 + 0xc, 0},
        {17, 0x10, B0 + 0xc, 1}, {17, 0x20, C0 + 0xc, 0},
    };
    check("matmul-naive-bt", "2", NULL, 0, 0, 0, e, N_OF(e));
}

/* 3x3 matrices, T = 2: a 2x2 grid of 2x2 blocks, every block but (0,0)
 * partial; two k steps, the second partial (k = 2 only). Thread (tx, ty)
 * loads A(row, 2s + tx) and B(2s + ty, col) where they exist. */
static void test_matmul_tiled(void **state)
{
    (void)state;
    static const struct exp e[] = {
        /* block (0,0) */
        {0, 0x00, A0 + 0x00, 1}, {0, 0x10, B0 + 0x00, 1}, {0, 0x00, A0 + 0x08, 1},
        {0, 0x10, B0 + 0x18, 1}, {0, 0x20, C0 + 0x00, 0},
        {1, 0x00, A0 + 0x04, 1}, {1, 0x10, B0 + 0x04, 1}, {1, 0x10, B0 + 0x1c, 1},
        {1, 0x20, C0 + 0x04, 0},
        {2, 0x00, A0 + 0x0c, 1}, {2, 0x10, B0 + 0x0c, 1}, {2, 0x00, A0 + 0x14, 1},
        {2, 0x20, C0 + 0x0c, 0},
        {3, 0x00, A0 + 0x10, 1}, {3, 0x10, B0 + 0x10, 1}, {3, 0x20, C0 + 0x10, 0},
        /* block (1,0): columns 2, 3 (3 is outside) */
        {4, 0x00, A0 + 0x00, 1}, {4, 0x10, B0 + 0x08, 1}, {4, 0x00, A0 + 0x08, 1},
        {4, 0x10, B0 + 0x20, 1}, {4, 0x20, C0 + 0x08, 0},
        {5, 0x00, A0 + 0x04, 1},
        {6, 0x00, A0 + 0x0c, 1}, {6, 0x10, B0 + 0x14, 1}, {6, 0x00, A0 + 0x14, 1},
        {6, 0x20, C0 + 0x14, 0},
        {7, 0x00, A0 + 0x10, 1},
        /* block (0,1): rows 2, 3 (3 is outside) */
        {8, 0x00, A0 + 0x18, 1}, {8, 0x10, B0 + 0x00, 1}, {8, 0x00, A0 + 0x20, 1},
        {8, 0x10, B0 + 0x18, 1}, {8, 0x20, C0 + 0x18, 0},
        {9, 0x00, A0 + 0x1c, 1}, {9, 0x10, B0 + 0x04, 1}, {9, 0x10, B0 + 0x1c, 1},
        {9, 0x20, C0 + 0x1c, 0},
        {10, 0x10, B0 + 0x0c, 1},
        {11, 0x10, B0 + 0x10, 1},
        /* block (1,1) */
        {12, 0x00, A0 + 0x18, 1}, {12, 0x10, B0 + 0x08, 1}, {12, 0x00, A0 + 0x20, 1},
        {12, 0x10, B0 + 0x20, 1}, {12, 0x20, C0 + 0x20, 0},
        {13, 0x00, A0 + 0x1c, 1},
        {14, 0x10, B0 + 0x14, 1},
    };
    check("matmul-tiled", "3", NULL, 2, 0, 0, e, N_OF(e));
}

/* 2x2, T = 2, A x B^T: thread (tx, ty) loads A(ty, tx) and B(ty, tx). */
static void test_matmul_tiled_bt(void **state)
{
    (void)state;
    static const struct exp e[] = {
        {0, 0x00, A0 + 0x0, 1}, {0, 0x10, B0 + 0x0, 1}, {0, 0x20, C0 + 0x0, 0},
        {1, 0x00, A0 + 0x4, 1}, {1, 0x10, B0 + 0x4, 1}, {1, 0x20, C0 + 0x4, 0},
        {2, 0x00, A0 + 0x8, 1}, {2, 0x10, B0 + 0x8, 1}, {2, 0x20, C0 + 0x8, 0},
        {3, 0x00, A0 + 0xc, 1}, {3, 0x10, B0 + 0xc, 1}, {3, 0x20, C0 + 0xc, 0},
    };
    check("matmul-tiled-bt", "2", NULL, 2, 0, 0, e, N_OF(e));
}

/* in 2x3 -> out 3x2, block 2x2: grid 2x1, thread (x, y) reads in[3y + x],
 * writes out[2x + y]. */
static void test_transpose_naive(void **state)
{
    (void)state;
    static const struct exp e[] = {
        {0, 0x00, A0 + 0x00, 1}, {0, 0x10, B0 + 0x00, 0},
        {1, 0x00, A0 + 0x04, 1}, {1, 0x10, B0 + 0x08, 0},
        {2, 0x00, A0 + 0x0c, 1}, {2, 0x10, B0 + 0x04, 0},
        {3, 0x00, A0 + 0x10, 1}, {3, 0x10, B0 + 0x0c, 0},
        {4, 0x00, A0 + 0x08, 1}, {4, 0x10, B0 + 0x10, 0},
        {6, 0x00, A0 + 0x14, 1}, {6, 0x10, B0 + 0x14, 0},
    };
    check("transpose-naive", "2,3", "2x2", 0, 0, 0, e, N_OF(e));
}

/* The same with T = 2: the block (1,0) loads column 2 of in and stores
 * rows 2 of out, thread (tx, ty) storing out[2(2 + ty) + tx]. */
static void test_transpose_tiled(void **state)
{
    (void)state;
    static const struct exp e[] = {
        {0, 0x00, A0 + 0x00, 1}, {0, 0x10, B0 + 0x00, 0},
        {1, 0x00, A0 + 0x04, 1}, {1, 0x10, B0 + 0x04, 0},
        {2, 0x00, A0 + 0x0c, 1}, {2, 0x10, B0 + 0x08, 0},
        {3, 0x00, A0 + 0x10, 1}, {3, 0x10, B0 + 0x0c, 0},
        {4, 0x00, A0 + 0x08, 1}, {4, 0x10, B0 + 0x10, 0},
        {5, 0x10, B0 + 0x14, 0},
        {6, 0x00, A0 + 0x14, 1},
    };
    check("transpose-tiled", "2,3", NULL, 2, 0, 0, e, N_OF(e));
}

/* 3x3x4 with one 4x4 block: only (1,1) is interior (thread 5); z = 1, 2;
 * plane 9, i = 9z + 4. */
static void test_stencil7(void **state)
{
    (void)state;
    static const struct exp e[] = {
        {5, 0x00, A0 + 0x34, 0}, {5, 0x10, A0 + 0x30, 0}, {5, 0x20, A0 + 0x38, 0},
        {5, 0x30, A0 + 0x28, 0}, {5, 0x40, A0 + 0x40, 0}, {5, 0x50, A0 + 0x10, 0},
        {5, 0x60, A0 + 0x58, 1}, {5, 0x70, B0 + 0x34, 0},
        {5, 0x00, A0 + 0x58, 0}, {5, 0x10, A0 + 0x54, 0}, {5, 0x20, A0 + 0x5c, 0},
        {5, 0x30, A0 + 0x4c, 0}, {5, 0x40, A0 + 0x64, 0}, {5, 0x50, A0 + 0x34, 0},
        {5, 0x60, A0 + 0x7c, 1}, {5, 0x70, B0 + 0x58, 0},
    };
    check("stencil7", "3,3,4", "4x4", 0, 0, 0, e, N_OF(e));
}

/* N = 5, B = 2: block 0 sums in[0..3], block 1 in[4]; thread 0 of each
 * stores. */
static void test_reduce(void **state)
{
    (void)state;
    static const struct exp e[] = {
        {0, 0x00, A0 + 0x0, 0},  {0, 0x10, A0 + 0x8, 1}, {0, 0x20, B0 + 0x0, 0},
        {1, 0x00, A0 + 0x4, 0},  {1, 0x10, A0 + 0xc, 1},
        {2, 0x00, A0 + 0x10, 0}, {2, 0x20, B0 + 0x4, 0},
    };
    check("reduce", "5", "2", 0, 0, 0, e, N_OF(e));
}

static void test_stream(void **state)
{
    (void)state;
    static const struct exp e[] = {
        {0, 0x00, A0 + 0x0, 1}, {0, 0x10, B0 + 0x0, 0},
        {1, 0x00, A0 + 0x4, 1}, {1, 0x10, B0 + 0x4, 0},
        {2, 0x00, A0 + 0x8, 1}, {2, 0x10, B0 + 0x8, 0},
    };
    check("stream", "3", "2", 0, 0, 0, e, N_OF(e));
}

/* Stride 4, 8-byte elements: in[4i]. */
static void test_strided(void **state)
{
    (void)state;
    static const struct exp e[] = {
        {0, 0x00, A0 + 0x00, 1}, {0, 0x10, B0 + 0x00, 0},
        {1, 0x00, A0 + 0x20, 1}, {1, 0x10, B0 + 0x08, 0},
        {2, 0x00, A0 + 0x40, 1}, {2, 0x10, B0 + 0x10, 0},
    };
    check("strided", "3", "4", 0, 8, 4, e, N_OF(e));
}

/* ---- properties on larger sizes --------------------------------------- */

struct tally {
    uint64_t last_tid, n, per_pc[SYNTH_MAX_INSNS], stores;
    int dep[SYNTH_MAX_INSNS];
    const struct synth_kernel *k;
    int stop_after; /* > 0: the sink refuses record stop_after */
};

static int tally(void *ctx, const struct trace_rec *r)
{
    struct tally *t = ctx;
    if (t->stop_after && t->n + 1 == (uint64_t)t->stop_after)
        return 7;
    assert_true(t->n == 0 || r->tid >= t->last_tid); /* thread-major */
    t->last_tid = r->tid;
    assert_int_equal(r->pc % SYNTH_PC_STEP, 0);
    uint64_t insn = r->pc / SYNTH_PC_STEP;
    assert_true(insn < (uint64_t)t->k->pat->ninsns);
    if (t->per_pc[insn] == 0)
        t->dep[insn] = (int)r->dep;
    assert_int_equal(t->dep[insn], (int)r->dep); /* one flag per PC */
    int arr = t->k->pat->insns[insn].array;
    assert_true(r->addr >= t->k->base[arr]);
    assert_true(r->addr + r->width <= t->k->base[arr] + t->k->array_elems[arr] * t->k->elem);
    assert_int_equal(r->addr % r->width, 0);
    t->per_pc[insn]++;
    t->stores += r->store;
    /* every pattern writes with its last instruction and only there
     * (docs/trace-synth.md: C, out) */
    assert_int_equal(r->store, insn + 1 == (uint64_t)t->k->pat->ninsns);
    t->n++;
    return 0;
}

static void run_tally(const char *pattern, const char *size, const char *block, uint64_t tile,
                      struct synth_kernel *k, struct tally *t)
{
    resolve(pattern, size, block, tile, 0, 0, k);
    memset(t, 0, sizeof *t);
    t->k = k;
    assert_int_equal(synth_run(k, tally, t, NULL), 0);
}

/* M=40, N=24, K=37 with T=16: every A(row, k) is loaded once per block
 * column, every B(k, col) once per block row, every C once. */
static void test_tiled_counts(void **state)
{
    (void)state;
    struct synth_kernel k;
    struct tally t;
    run_tally("matmul-tiled", "40,24,37", NULL, 16, &k, &t);
    assert_int_equal(k.grid[0], 2);
    assert_int_equal(k.grid[1], 3);
    assert_int_equal(t.per_pc[0], 40 * 37 * 2);
    assert_int_equal(t.per_pc[1], 37 * 24 * 3);
    assert_int_equal(t.per_pc[2], 40 * 24);
    run_tally("matmul-tiled-bt", "40,24,37", NULL, 16, &k, &t);
    assert_int_equal(t.per_pc[0], 40 * 37 * 2);
    assert_int_equal(t.per_pc[1], 24 * 37 * 3);
    run_tally("matmul-naive", "40,24,37", "16x8", 0, &k, &t);
    assert_int_equal(t.per_pc[0], 40 * 24 * 37);
    assert_int_equal(t.per_pc[1], 40 * 24 * 37);
    assert_int_equal(t.per_pc[2], 40 * 24);
    run_tally("transpose-tiled", "33,17", NULL, 8, &k, &t);
    assert_int_equal(t.per_pc[0], 33 * 17);
    assert_int_equal(t.per_pc[1], 33 * 17);
    run_tally("stencil7", "20,10,6", "8x4", 0, &k, &t);
    assert_int_equal(t.per_pc[0], 18 * 8 * 4);
    assert_int_equal(t.per_pc[7], 18 * 8 * 4);
    run_tally("reduce", "1000", "64", 0, &k, &t);
    assert_int_equal(t.per_pc[0] + t.per_pc[1], 1000);
    assert_int_equal(t.per_pc[2], 8); /* ceil(1000 / 128) blocks */
    assert_int_equal(t.stores, 8);
    run_tally("transpose-naive", "33,17", NULL, 0, &k, &t);
    assert_int_equal(t.stores, 33 * 17); /* one write per element, every read a load */
    assert_int_equal(t.n - t.stores, 33 * 17);
}

/* Every pattern at a size with partial tiles: thread-major, one flag per
 * PC, inside its arrays (checked by tally), and the same stream twice. */
static void test_all_patterns(void **state)
{
    (void)state;
    for (size_t i = 0; i < synth_pattern_count(); i++) {
        const struct synth_pattern *p = synth_pattern_at(i);
        struct synth_kernel k;
        struct tally t, again;
        run_tally(p->name, "19", NULL, 0, &k, &t);
        assert_true(t.n > 0);
        run_tally(p->name, "19", NULL, 0, &k, &again);
        assert_int_equal(t.n, again.n);
        assert_memory_equal(t.per_pc, again.per_pc, sizeof t.per_pc);
        assert_ptr_equal(synth_pattern_find(p->name), p);
    }
    assert_null(synth_pattern_find("matmul"));
    assert_null(synth_pattern_at(synth_pattern_count()));
}

static void test_sink_stops(void **state)
{
    (void)state;
    struct synth_kernel k;
    resolve("matmul-naive", "8", NULL, 0, 0, 0, &k);
    struct tally t = {.k = &k, .stop_after = 10};
    uint64_t records = 0;
    assert_int_equal(synth_run(&k, tally, &t, &records), 7);
    assert_int_equal(records, 9);
    assert_int_equal(t.n, 9);
}

/* A sink that only counts. */
static int count_only(void *ctx, const struct trace_rec *r)
{
    (void)r;
    ++*(uint64_t *)ctx;
    return 0;
}

/* synth_count against the records synth_run makes, for every pattern over
 * sizes that give grids of one, two, three and more blocks per dimension,
 * full and partial, with the blocks, tiles and strides the patterns take;
 * and its limit: met exactly, passed by one. */
static void test_count(void **state)
{
    (void)state;
    static const char *const sizes[] = {"1", "2", "3", "15", "16", "17", "31", "33", "48", "50",
                                        "40,24,37", "17,3,40", "3,40,17", "70,5", "5,70"};
    static const char *const blocks[] = {NULL, "8x4", "1x16", "7x3", "5", "64"};
    static const uint64_t tiles[] = {0, 1, 5, 8};
    int checked = 0;
    for (size_t i = 0; i < synth_pattern_count(); i++) {
        const struct synth_pattern *p = synth_pattern_at(i);
        for (size_t si = 0; si < N_OF(sizes); si++)
            for (size_t bi = 0; bi < N_OF(blocks); bi++)
                for (size_t ti = 0; ti < N_OF(tiles); ti++) {
                    struct synth_opts o = {.tile = tiles[ti], .stride = p->takes_stride ? 3 : 0};
                    struct synth_kernel k;
                    char why[256];
                    assert_int_equal(synth_parse_size(sizes[si], &o, why, sizeof why), 0);
                    if (blocks[bi])
                        assert_int_equal(synth_parse_block(blocks[bi], &o, why, sizeof why), 0);
                    if (synth_resolve(p, &o, &k, why, sizeof why) != 0)
                        continue; /* a combination the pattern does not take */
                    uint64_t made = 0, counted = 0, n = 0;
                    assert_int_equal(synth_run(&k, count_only, &n, &made), 0);
                    assert_int_equal(synth_count(&k, UINT64_MAX, &counted), 0);
                    if (counted != made)
                        fail_msg("%s --size %s --block %s --tile %llu: counted %llu, made %llu", p->name,
                                 sizes[si], blocks[bi] ? blocks[bi] : "-",
                                 (unsigned long long)tiles[ti], (unsigned long long)counted,
                                 (unsigned long long)made);
                    assert_int_equal(synth_count(&k, made, &counted), 0);
                    assert_int_equal(counted, made);
                    if (made > 0) {
                        assert_int_equal(synth_count(&k, made - 1, &counted), 1);
                        assert_int_equal(counted, made - 1);
                    }
                    checked++;
                }
    }
    assert_true(checked > 500);
    /* the limit bounds the work: 2^40 C elements of 2 * 2^20 + 1 requests
     * each (2^61 in all) are past 1000 after one thread */
    struct synth_kernel k;
    resolve("matmul-naive", "1048576", NULL, 0, 0, 0, &k);
    uint64_t counted = 0;
    assert_int_equal(synth_count(&k, 1000, &counted), 1);
    assert_int_equal(counted, 1000);
    /* a large grid is counted from at most nine blocks: 2^24 threads of 8193 */
    resolve("matmul-naive", "4096", NULL, 0, 0, 0, &k);
    assert_int_equal(synth_count(&k, UINT64_MAX, &counted), 0);
    assert_true(counted == 4096ull * 4096 * (2 * 4096 + 1));
}

static void test_placement(void **state)
{
    (void)state;
    struct synth_kernel k;
    resolve("matmul-naive", "1000", NULL, 0, 0, 0, &k); /* 4,000,000 bytes each */
    assert_int_equal(k.base[0], SYNTH_BASE);
    assert_int_equal(k.base[1], SYNTH_BASE + 0x400000);
    assert_int_equal(k.base[2], SYNTH_BASE + 0x800000);
    resolve("stream", "524288", NULL, 0, 0, 0, &k); /* exactly 2 MiB */
    assert_int_equal(k.base[1], SYNTH_BASE + SYNTH_ALIGN);
    resolve("stream", "524289", NULL, 0, 0, 0, &k);
    assert_int_equal(k.base[1], SYNTH_BASE + 2 * SYNTH_ALIGN);
    char d[512];
    synth_describe(&k, d, sizeof d);
    assert_non_null(strstr(d, "stream N=524289 elem=4 grid 2049x1 block 256x1"));
    assert_non_null(strstr(d, "in@0x100000000, out@0x100400000"));
}

static void refused(const char *pattern, const char *size, const char *block, uint64_t tile,
                    uint32_t elem, uint64_t stride, const char *words)
{
    struct synth_opts o = {.tile = tile, .elem = elem, .stride = stride};
    struct synth_kernel k;
    char why[256] = "";
    if (size)
        assert_int_equal(synth_parse_size(size, &o, why, sizeof why), 0);
    if (block)
        assert_int_equal(synth_parse_block(block, &o, why, sizeof why), 0);
    assert_int_equal(synth_resolve(synth_pattern_find(pattern), &o, &k, why, sizeof why), -1);
    if (!strstr(why, words))
        fail_msg("%s: '%s' does not say '%s'", pattern, why, words);
}

static void test_refusals(void **state)
{
    (void)state;
    refused("matmul-naive", NULL, NULL, 0, 0, 0, "needs --size");
    refused("matmul-naive", "4,4", NULL, 0, 0, 0, "takes --size N or M,N,K");
    refused("reduce", "4,4", NULL, 0, 0, 0, "takes --size N");
    refused("matmul-naive", "4", NULL, 16, 0, 0, "not tiled");
    refused("matmul-tiled", "4", "16x8", 0, 0, 0, "TxT (16x16)");
    refused("transpose-tiled", "4", NULL, 33, 0, 0, "more than 1024");
    refused("stencil7", "4", "64x32", 0, 0, 0, "at most 1024");
    refused("stream", "4", "32x2", 0, 0, 0, "1-D blocks");
    refused("stream", "4", NULL, 0, 0, 8, "no --stride");
    refused("stream", "4", NULL, 0, 3, 0, "--elem-size");
    refused("matmul-naive", "1099511627776", NULL, 0, 0, 0, "too large");
    refused("strided", "1099511627776", NULL, 0, 16, 1u << 30, "too large");
    /* the tiled block may be given when it is TxT */
    struct synth_kernel k;
    resolve("matmul-tiled", "4", "8x8", 8, 0, 0, &k);
    assert_int_equal(k.threads_per_block, 64);
}

static void test_parse(void **state)
{
    (void)state;
    struct synth_opts o = {0};
    char why[256];
    assert_int_equal(synth_parse_size("40,24,37", &o, why, sizeof why), 0);
    assert_int_equal(o.nsize, 3);
    assert_int_equal(o.size[2], 37);
    const char *bad_sizes[] = {"", "0", "4,", ",4", "1,2,3,4", "x", "4 ", "-4", "1099511627777"};
    for (size_t i = 0; i < N_OF(bad_sizes); i++)
        assert_int_equal(synth_parse_size(bad_sizes[i], &o, why, sizeof why), -1);
    assert_int_equal(synth_parse_block("32x8", &o, why, sizeof why), 0);
    assert_int_equal(o.block[0], 32);
    assert_int_equal(o.block[1], 8);
    assert_int_equal(synth_parse_block("128", &o, why, sizeof why), 0);
    assert_int_equal(o.block[1], 0);
    const char *bad_blocks[] = {"", "0", "16x", "x16", "16x0", "2000", "16x16x1", "16*16"};
    for (size_t i = 0; i < N_OF(bad_blocks); i++)
        assert_int_equal(synth_parse_block(bad_blocks[i], &o, why, sizeof why), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul_naive),    cmocka_unit_test(test_matmul_naive_bt),
        cmocka_unit_test(test_matmul_tiled),    cmocka_unit_test(test_matmul_tiled_bt),
        cmocka_unit_test(test_transpose_naive), cmocka_unit_test(test_transpose_tiled),
        cmocka_unit_test(test_stencil7),        cmocka_unit_test(test_reduce),
        cmocka_unit_test(test_stream),          cmocka_unit_test(test_strided),
        cmocka_unit_test(test_tiled_counts),    cmocka_unit_test(test_all_patterns),
        cmocka_unit_test(test_sink_stops),      cmocka_unit_test(test_placement),
        cmocka_unit_test(test_count),
        cmocka_unit_test(test_refusals),        cmocka_unit_test(test_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
