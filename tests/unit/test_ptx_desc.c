/*
 * Unit tests of PTX -> kernel description (model/ptx_desc.c).
 *
 * DESIGN
 * The validation kernels (probes/validation_ptx.c) are real inputs: their
 * expected counts are worked out from the PTX by hand below (loop trip
 * counts from the launch parameters, coalescing from the address
 * arithmetic), so a change in the analysis or in the kernels that moves a
 * count fails here. Where ptxas is installed the kernels must also
 * compile. Small hand-written modules pin each rule: nested loops, the
 * comparison forms, loops that cannot be counted, forward branches,
 * addresses that are not affine in the thread index, 2-D coalescing,
 * atomics and shuffles, entry selection.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/ptx_desc.h"
#include "probes/validation.h"
#include "tests/unit/support/tmpfile.h"

#define PTXAS "/usr/local/cuda/bin/ptxas"

static char err[512];

static void near(double got, double want, const char *what)
{
    if (fabs(got - want) > 1e-9 * fmax(1.0, fabs(want)))
        fail_msg("%s: got %.10g, want %.10g", what, got, want);
}

static struct pd_launch launch_of(const struct val_kernel *k)
{
    struct pd_launch l;
    memset(&l, 0, sizeof l);
    memcpy(l.grid, k->grid, sizeof l.grid);
    memcpy(l.block, k->block, sizeof l.block);
    l.nparams = k->nints;
    for (int i = 0; i < k->nints; i++) {
        snprintf(l.params[i].name, sizeof l.params[i].name, "%s", k->int_names[i]);
        l.params[i].value = k->ints[i];
    }
    return l;
}

static struct pd_desc describe_kernel(enum val_kernel_id id)
{
    struct pd_desc d;
    struct pd_launch l = launch_of(&val_kernels[id]);
    char *ptx = val_ptx(id, 9, 0);
    assert_non_null(ptx);
    if (pd_describe(ptx, NULL, &l, &d, err, sizeof err) != 0)
        fail_msg("%s: %s", val_kernels[id].name, err);
    free(ptx);
    return d;
}

/* ---- the validation kernels ------------------------------------------------------ */

static void test_copy(void **state)
{
    (void)state;
    struct pd_desc d = describe_kernel(VK_COPY);
    /* base + (ctaid x ntid + tid) x 4: one load and one store, a 128-byte line each */
    near(d.coal, 2, "coalesced");
    near(d.uncoal, 0, "uncoalesced");
    near(d.coal_bytes, 128, "bytes");
    near(d.stores, 1, "the store");
    /* the load waits when the store uses its value; the store is a period of its own */
    near(d.mem_periods, 2, "memory periods");
    near(d.sync_mem, 0, "no barrier");
    /* 2 cvta, 3 mov, mad, 2 mul.wide, 2 add */
    near(d.insts[MC_INT], 10, "int");
    near(d.insts[MC_FP32], 0, "fp32");
    assert_int_equal(d.loops, 0);
    assert_int_equal(d.nnotes, 0);
}

static void test_strided(void **state)
{
    (void)state;
    struct pd_desc d = describe_kernel(VK_STRIDED);
    /* 16 iterations (p_iters) of a load at base + idx x 128: a line a lane */
    near(d.uncoal, VAL_STRIDED_ITERS, "uncoalesced");
    near(d.uncoal_per_access, 32, "transactions");
    near(d.coal, 1, "the store");
    /* 16 adds in the loop and the accumulator's mov */
    near(d.insts[MC_FP32], VAL_STRIDED_ITERS + 1, "fp32");
    assert_int_equal(d.loops, 1);
}

static void test_ffma(void **state)
{
    (void)state;
    struct pd_desc d = describe_kernel(VK_FFMA);
    /* 512 x 32 FMAs, 8 + 1 movs, 7 adds */
    near(d.insts[MC_FP32], VAL_FFMA_ITERS * 32.0 + 16, "fp32");
    /* 3 a loop iteration (add, setp, bra); outside: cvta, 2 mov.b32, 3 mov and mad of the
     * index, mov of the counter, mul.wide and add of the store address */
    near(d.insts[MC_INT], VAL_FFMA_ITERS * 3.0 + 10, "int");
    near(d.coal, 1, "the store");
}

static void test_mixed(void **state)
{
    (void)state;
    struct pd_desc d = describe_kernel(VK_MIXED);
    /* 16 x 4 FMAs, 3 + 1 movs, 3 adds */
    near(d.insts[MC_FP32], VAL_MIXED_ITERS * 4.0 + 7, "fp32");
    near(d.coal, 2, "load and store");
    near(d.uncoal, 0, "uncoalesced");
}

static void test_reduce(void **state)
{
    (void)state;
    struct pd_desc d = describe_kernel(VK_REDUCE);
    /* bar.sync after the store and after each of 8 tree steps */
    near(d.sync, 9, "barriers");
    /* only the first follows the global loads; the tree steps wait on shared memory */
    near(d.sync_mem, 1, "barriers waiting on memory");
    /* the 4 loads are issued before their sum uses them: one wait; the store one more */
    near(d.mem_periods, 2, "memory periods");
    near(d.stores, 1, "stores");
    /* 1 store, 8 x (2 loads, 1 store), the final load */
    near(d.insts[MC_SHARED], 26, "shared");
    /* 4 loads at base, +1024, +2048, +3072 of a thread's line; the store of lane 0
     * (broadcast address: one sector) */
    near(d.coal, 5, "coalesced");
    near(d.coal_bytes, (4 * 128 + 32) / 5.0, "bytes");
    assert_true(d.nnotes >= 1);
    assert_non_null(strstr(d.notes[0], "forward branch"));
}

static void test_matmul_naive(void **state)
{
    (void)state;
    struct pd_desc d = describe_kernel(VK_MM_NAIVE);
    /* n = 2048 iterations; A[row][k]: 2 rows of a 16 x 16 block in a warp, 2 sectors;
     * B[k][col]: 16 consecutive words, 2 sectors; both no more than 4 = coalesced */
    near(d.coal, 2 * VAL_MM_N + 1.0, "coalesced");
    near(d.uncoal, 0, "uncoalesced");
    near(d.coal_bytes, (2.0 * VAL_MM_N * 64 + 128) / (2 * VAL_MM_N + 1), "bytes");
    near(d.insts[MC_FP32], VAL_MM_N + 1.0, "fp32");
}

static void test_matmul_tiled(void **state)
{
    (void)state;
    struct pd_desc d = describe_kernel(VK_MM_TILED);
    /* 2048 / 16 = 128 tiles: 2 global loads (two 64-byte row halves = 4 sectors), 2 shared
     * stores, 32 shared loads, 16 FMAs, 2 barriers */
    near(d.coal, 2 * 128 + 1.0, "coalesced");
    near(d.coal_bytes, 128, "bytes");
    near(d.insts[MC_SHARED], 128 * 34.0, "shared");
    near(d.sync, 256, "barriers");
    /* a tile's loads are stored to shared memory, then the first barrier waits for them;
     * the second follows the tile's FMAs only */
    near(d.sync_mem, 128, "barriers waiting on memory");
    /* in PTX order each load is stored to shared memory before the next is issued: two
     * waits a tile (ptxas hoists the second load; the PTX order cannot know), C's store */
    near(d.mem_periods, 2 * 128 + 1, "memory periods");
    near(d.insts[MC_FP32], 128 * 16 + 1.0, "fp32");
}

static void test_matmul_abt(void **state)
{
    (void)state;
    struct pd_desc d = describe_kernel(VK_MM_ABT);
    /* B[col][k]: the 16 lanes of a row are 8 KiB apart: 16 sectors, uncoalesced */
    near(d.uncoal, VAL_MM_N, "uncoalesced");
    near(d.uncoal_per_access, 16, "transactions");
    near(d.coal, VAL_MM_N + 1.0, "coalesced");
}

static void test_transpose_naive(void **state)
{
    (void)state;
    struct pd_desc d = describe_kernel(VK_TR_NAIVE);
    /* read in[row][col]: a 16 x 16 block's first warp is two 64-byte row halves, 4 sectors;
     * write out[col][row]: the 16 columns are n floats apart, lanes 16 apart share one:
     * 16 sectors, uncoalesced */
    near(d.coal, 1, "coalesced read");
    near(d.uncoal, 1, "strided write");
    near(d.uncoal_per_access, 16, "transactions");
    near(d.coal_bytes, 128, "bytes");
    /* 2 cvta, 4 mov, 2 shl, 2 add; 2 x (mad, mul.wide, add) */
    near(d.insts[MC_INT], 16, "int");
    assert_int_equal(d.loops, 0);
    assert_int_equal(d.nnotes, 0);
}

static void test_transpose_tiled(void **state)
{
    (void)state;
    struct pd_desc d = describe_kernel(VK_TR_TILED);
    /* 4 loads and 4 stores of a 32-float row each (32 x 8 blocks: the first warp is a row),
     * through 4 shared stores, one barrier, 4 shared loads */
    near(d.coal, 8, "coalesced");
    near(d.uncoal, 0, "uncoalesced");
    near(d.coal_bytes, 128, "bytes");
    near(d.insts[MC_SHARED], 8, "shared");
    near(d.sync, 1, "barrier");
    /* 2 cvta, 4 mov, the row step; x, y (4); 2 x (mad, mul.wide, add) and 2 x 3 pointer
     * steps; mov of the tile; 2 x (mad, shl, add) into it; x, y again (4) */
    near(d.insts[MC_INT], 34, "int");
    assert_int_equal(d.loops, 0);
}

static void test_stencil7(void **state)
{
    (void)state;
    struct pd_desc d = describe_kernel(VK_STENCIL);
    const double trips = VAL_ST_N - 2; /* z = 1 .. n - 2 */
    /* a trip: 7 loads and a store, each a 32-float row of the first warp (the +-4-byte
     * offsets are immediates: the address's thread coefficients are the centre's) */
    near(d.coal, trips * 8, "coalesced");
    near(d.uncoal, 0, "uncoalesced");
    near(d.insts[MC_FP32], trips * 6, "6 adds a point");
    /* a trip: 4 neighbour addresses, 2 pointer steps, add/setp/bra; before it: 2 cvta, 4 mov,
     * x and y (4), n - 1, the boundary test (4 setp, 3 or, bra), row and plane (3), the
     * start (mad, mul.wide, 3 add), z = 1 */
    near(d.insts[MC_INT], 28 + trips * 9, "int");
    assert_int_equal(d.loops, 1);
    /* the boundary columns' early exit is counted as if every thread went on */
    assert_int_equal(d.nnotes, 1);
    assert_non_null(strstr(d.notes[0], "1 forward branch"));
}

static void test_gather(void **state)
{
    (void)state;
    struct pd_desc d = describe_kernel(VK_GATHER);
    /* idx[g] and the store are coalesced; in[idx[g]] has an address loaded from memory:
     * uncoalesced, a transaction a lane, and said so */
    near(d.coal, 2, "coalesced");
    near(d.uncoal, 1, "the gathered load");
    near(d.uncoal_per_access, 32, "a transaction a lane");
    near(d.insts[MC_INT], 13, "int");
    assert_int_equal(d.nnotes, 1);
    assert_non_null(strstr(d.notes[0], "not affine"));
}

static void test_histogram(void **state)
{
    (void)state;
    struct pd_desc d = describe_kernel(VK_HISTOGRAM);
    /* 64 words a thread (p_iters), 4 atom.shared.add each; the zeroing store and the final
     * load of a thread's bin */
    near(d.insts[MC_SHARED], 1 + 4.0 * VAL_HIST_ITERS + 1, "shared");
    /* 64 coalesced word loads and the red.global.add at bins + tid x 4: coalesced */
    near(d.coal, VAL_HIST_ITERS + 1.0, "coalesced");
    near(d.uncoal, 0, "uncoalesced");
    near(d.sync, 2, "barriers");
    /* a trip: address (2), 4 x (bfe, shl, add), idx, j, setp, bra; before: 2 cvta, 4 index,
     * my bin (3), zero and one, nctaid and the stride, idx and j; after: the bin's address */
    near(d.insts[MC_INT], 15 + VAL_HIST_ITERS * 18.0 + 2, "int");
    assert_int_equal(d.loops, 1);
    assert_int_equal(d.nnotes, 0);
}

static void test_matmul_tiled32(void **state)
{
    (void)state;
    struct pd_desc d = describe_kernel(VK_MM_TILED32);
    const double tiles = VAL_MM_N / 32;
    /* a tile: 2 global loads (a 128-byte row each), 2 shared stores, 64 shared loads,
     * 32 FMAs, 2 barriers */
    near(d.coal, 2 * tiles + 1, "coalesced");
    near(d.coal_bytes, 128, "bytes");
    near(d.insts[MC_SHARED], tiles * 66, "shared");
    near(d.sync, 2 * tiles, "barriers");
    near(d.insts[MC_FP32], tiles * 32 + 1, "fp32");
    /* the 16 x 16 kernel's int count with 64 tiles of 5 loop instructions instead of 128 */
    near(d.insts[MC_INT], 31 + tiles * 5 + 4, "int");
}

static void test_saxpy_sfu(void **state)
{
    (void)state;
    struct pd_desc d = describe_kernel(VK_SFU);
    /* 32 trips of sin.approx and ex2.approx (SFU), neg, add, mul (fp32), add/setp/bra */
    near(d.insts[MC_SFU], 2.0 * VAL_SFU_ITERS, "sfu");
    near(d.insts[MC_FP32], 3.0 * VAL_SFU_ITERS + 2, "fp32 (and t = x, the final fma)");
    near(d.insts[MC_INT], 3.0 * VAL_SFU_ITERS + 12, "int");
    near(d.coal, 2, "streaming load and store");
}

static void test_sgemv(void **state)
{
    (void)state;
    struct pd_desc d = describe_kernel(VK_SGEMV);
    const double trips = VAL_GEMV_N / 32;
    /* 32 x 8 blocks: the first warp is row 0's lanes, A[row][k + lane] and x[k + lane] a
     * 128-byte row each; lane 0's store of y[row] is the warp's one address (a sector) */
    near(d.coal, 2 * trips + 1, "coalesced");
    near(d.coal_bytes, (2 * trips * 128 + 32) / (2 * trips + 1), "bytes");
    near(d.uncoal, 0, "uncoalesced");
    /* 5 butterfly shuffles, in the shared class (ptx_desc.h) */
    near(d.insts[MC_SHARED], 5, "shuffles");
    near(d.insts[MC_FP32], trips + 5 + 1, "fma a trip, 5 adds, the zero");
    near(d.insts[MC_INT], 14 + trips * 5 + 3, "int");
    assert_int_equal(d.nnotes, 0);
}

static void test_kernels_compile(void **state)
{
    (void)state;
    if (access(PTXAS, X_OK) != 0) {
        print_message("ptxas not installed at %s: compile check skipped\n", PTXAS);
        skip();
    }
    char dir[] = "/tmp/gpuprobe-test-vptx-XXXXXX", path[96], cmd[256];
    assert_non_null(mkdtemp(dir));
    for (int id = 0; id < VK_ALL; id++) {
        char *ptx = val_ptx((enum val_kernel_id)id, 9, 0);
        snprintf(path, sizeof path, "%s/k.ptx", dir);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(ptx, f);
        fclose(f);
        free(ptx);
        snprintf(cmd, sizeof cmd, "%s -arch=sm_90 %s -o %s/k.cubin", PTXAS, path, dir);
        if (system(cmd) != 0)
            fail_msg("ptxas refused %s", val_kernels[id].name);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- rules on small modules ------------------------------------------------------------ */

/* A launch of grid x (bx, by) threads with p_n = n. */
static struct pd_launch launch_n(unsigned grid, unsigned bx, unsigned by, long long n)
{
    struct pd_launch l;
    memset(&l, 0, sizeof l);
    l.grid[0] = grid;
    l.grid[1] = l.grid[2] = 1;
    l.block[0] = bx;
    l.block[1] = by;
    l.block[2] = 1;
    l.nparams = 1;
    snprintf(l.params[0].name, sizeof l.params[0].name, "p_n");
    l.params[0].value = n;
    return l;
}

/* A module whose entry k runs body after loading p_a, p_n, tid.x and tid.y. */
static void text_module(char *ptx, size_t len, const char *body)
{
    snprintf(ptx, len,
             ".version 8.0\n.target sm_90\n.address_size 64\n"
             ".visible .entry other(.param .u32 p_n)\n{\n\tret;\n}\n"
             ".visible .entry k(.param .u64 p_a, .param .u32 p_n)\n{\n"
             "\t.reg .u32 %%i, %%j, %%n, %%t, %%y, %%w;\n\t.reg .u64 %%a, %%o, %%p;\n"
             "\t.reg .f32 %%v;\n\t.reg .pred %%q, %%r;\n"
             "\tld.param.u64 %%a, [p_a];\n\tld.param.u32 %%n, [p_n];\n"
             "\tmov.u32 %%t, %%tid.x;\n\tmov.u32 %%y, %%tid.y;\n%s\tret;\n}\n",
             body);
}

static int describe_text(const char *body, unsigned bx, unsigned by, long long n,
                         struct pd_desc *d)
{
    char ptx[4096];
    struct pd_launch l = launch_n(1, bx, by, n);
    text_module(ptx, sizeof ptx, body);
    return pd_describe(ptx, "k", &l, d, err, sizeof err);
}

static void test_nested_loops_and_comparisons(void **state)
{
    (void)state;
    struct pd_desc d;
    /* outer: i = 0, 2, 4 .. < 10: 5 trips; inner: j = 10 down to 1 (ne 0): 10 trips */
    assert_int_equal(describe_text("\tmov.u32 %i, 0;\n$O:\n\tmov.u32 %j, 10;\n$I:\n"
                                   "\tadd.f32 %v, %v, %v;\n\tsub.u32 %j, %j, 1;\n"
                                   "\tsetp.ne.u32 %q, %j, 0;\n\t@%q bra $I;\n"
                                   "\tadd.u32 %i, %i, 2;\n\tsetp.lt.u32 %r, %i, %n;\n"
                                   "\t@%r bra $O;\n", 32, 1, 10, &d), 0);
    assert_int_equal(d.loops, 2);
    near(d.insts[MC_FP32], 50, "5 x 10 adds");
    /* compared before the step, taken while the predicate is false: i = 1 .. 10 */
    assert_int_equal(describe_text("\tmov.u32 %i, 1;\n$L:\n\tadd.f32 %v, %v, %v;\n"
                                   "\tsetp.gt.u32 %q, %i, 9;\n\tadd.u32 %i, %i, 1;\n"
                                   "\t@!%q bra $L;\n", 32, 1, 0, &d), 0);
    near(d.insts[MC_FP32], 10, "i = 1..10");
}

static void test_loops_that_cannot_be_counted(void **state)
{
    (void)state;
    struct pd_desc d;
    /* the bound is a loaded value */
    assert_int_equal(describe_text("\tld.global.u32 %w, [%a];\n\tmov.u32 %i, 0;\n$L:\n"
                                   "\tadd.u32 %i, %i, 1;\n\tsetp.lt.u32 %q, %i, %w;\n"
                                   "\t@%q bra $L;\n", 32, 1, 0, &d), -1);
    assert_non_null(strstr(err, "loop at label $L"));
    /* an unconditional branch back */
    assert_int_equal(describe_text("$L:\n\tadd.f32 %v, %v, %v;\n\tbra $L;\n", 32, 1, 0, &d), -1);
    /* a branch to nowhere */
    assert_int_equal(describe_text("\t@%q bra $Nowhere;\n", 32, 1, 0, &d), -1);
    assert_non_null(strstr(err, "Nowhere"));
}

/* nvcc's form of a loop whose bound is a parameter: unrolled by 4, the main
 * loop counting n - n % 4 down, then a remainder loop counting n % 4 down,
 * behind a guard skipping it when n % 4 is 0. Each count register is
 * written before its loop and again inside it: the value before the loop
 * is the one that reaches the loop's start. */
#define UNROLLED_BY_4                                                                          \
    "\tand.b32 %j, %n, 3;\n\tsub.s32 %i, %n, %j;\n\tsetp.lt.u32 %q, %n, 4;\n\t@%q bra $R;\n" \
    "$M:\n\tadd.f32 %v, %v, %v;\n\tadd.f32 %v, %v, %v;\n\tadd.f32 %v, %v, %v;\n"              \
    "\tadd.f32 %v, %v, %v;\n\tadd.s32 %i, %i, -4;\n\tsetp.ne.s32 %q, %i, 0;\n\t@%q bra $M;\n"  \
    "$R:\n\tsetp.eq.s32 %r, %j, 0;\n\t@%r bra $E;\n"                                         \
    "$T:\n\tmul.f32 %v, %v, %v;\n\tadd.s32 %j, %j, -1;\n\tsetp.ne.s32 %r, %j, 0;\n"           \
    "\t@%r bra $T;\n$E:\n"

static int loops_of_text(const char *body, long long n, struct pd_loop *q, int *nq)
{
    char ptx[4096];
    struct pd_launch l = launch_n(1, 32, 1, n);
    text_module(ptx, sizeof ptx, body);
    return pd_loops(ptx, "k", &l, q, 4, nq, err, sizeof err);
}

static void test_unrolled_loop_with_a_remainder(void **state)
{
    (void)state;
    struct pd_desc d;
    struct pd_loop q[4];
    int n;
    /* n = 18: 4 trips of 4 adds, then 2 of the remainder's multiply */
    assert_int_equal(describe_text(UNROLLED_BY_4, 32, 1, 18, &d), 0);
    near(d.insts[MC_FP32], 16 + 2, "18 = 4 x 4 + 2");
    assert_int_equal(loops_of_text(UNROLLED_BY_4, 18, q, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(q[0].trips, 4);
    assert_int_equal(q[1].trips, 2);
    /* n = 16: the guard is taken, the remainder never runs: counted by no warp */
    assert_int_equal(describe_text(UNROLLED_BY_4, 32, 1, 16, &d), 0);
    near(d.insts[MC_FP32], 16, "16 = 4 x 4");
    assert_int_equal(loops_of_text(UNROLLED_BY_4, 16, q, &n), 0);
    assert_int_equal(q[0].trips, 4);
    assert_int_equal(q[1].trips, 0);
    int decided = 0;
    for (int i = 0; i < d.nnotes; i++)
        decided |= strstr(d.notes[i], "2 forward branch(es) decided") != NULL;
    assert_true(decided);
}

/* A value is a constant only where one write of it reaches: not where a later
 * write comes back round a loop, nor where a branch passes the last write by.
 * Either way the guard it feeds stays undecided and its code is counted. */
static void test_constants_only_where_one_write_reaches(void **state)
{
    (void)state;
    struct pd_desc d;
    /* w = i + 5 is 5 on the first trip only: the add behind the guard runs on the others */
    assert_int_equal(describe_text("\tmov.u32 %i, 0;\n$L:\n\tadd.u32 %w, %i, 5;\n"
                                   "\tsetp.eq.u32 %r, %w, 5;\n\t@%r bra $S;\n"
                                   "\tadd.f32 %v, %v, %v;\n$S:\n\tadd.u32 %i, %i, 1;\n"
                                   "\tsetp.lt.u32 %q, %i, %n;\n\t@%q bra $L;\n",
                                   32, 1, 10, &d), 0);
    near(d.insts[MC_FP32], 10, "the add counted on every trip (an upper bound)");
    /* j is 1 or 2 at the compare, as the first branch goes */
    assert_int_equal(describe_text("\tmov.u32 %j, 1;\n\tsetp.lt.u32 %q, %t, 7;\n\t@%q bra $X;\n"
                                   "\tmov.u32 %j, 2;\n$X:\n\tsetp.eq.u32 %r, %j, 2;\n"
                                   "\t@%r bra $S;\n\tadd.f32 %v, %v, %v;\n$S:\n",
                                   32, 1, 0, &d), 0);
    near(d.insts[MC_FP32], 1, "the add counted");
    /* and where one write does reach, the guard is decided: j is 2 */
    assert_int_equal(describe_text("\tmov.u32 %j, 1;\n\tmov.u32 %j, 2;\n"
                                   "\tsetp.eq.u32 %r, %j, 2;\n\t@%r bra $S;\n"
                                   "\tadd.f32 %v, %v, %v;\n$S:\n", 32, 1, 0, &d), 0);
    near(d.insts[MC_FP32], 0, "the add skipped");
}

/* The trips a warp of a grid-stride loop runs, worked out by running each
 * lane's loop: start g (its global index, or n - 1 - g counting down), step
 * the grid's thread count; the longest lane sets the warp's. */
static double mean_warp_trips(unsigned grid, unsigned block, long long n, int down,
                              long long *lo, long long *hi)
{
    long long stride = (long long)grid * block, sum = 0, warps = 0;
    *lo = -1;
    *hi = -1;
    for (long long w = 0; w < stride; w += 32) {
        long long most = 0;
        for (long long g = w; g < w + 32 && g < stride; g++) {
            long long t = 0, i = down ? n - 1 - g : g;
            do { /* do-while, as the PTX below: the guard before it is counted as not taken */
                t++;
                i += down ? -stride : stride;
            } while (down ? i >= 0 : i < n);
            most = t > most ? t : most;
        }
        *lo = *lo < 0 || most < *lo ? most : *lo;
        *hi = most > *hi ? most : *hi;
        sum += most;
        warps++;
    }
    return (double)sum / (double)warps;
}

static int describe_grid(const char *body, unsigned grid, unsigned block, long long n,
                         struct pd_desc *d)
{
    char ptx[4096];
    struct pd_launch l = launch_n(grid, block, 1, n);
    snprintf(ptx, sizeof ptx,
             ".version 8.0\n.target sm_90\n.address_size 64\n"
             ".visible .entry k(.param .u32 p_n)\n{\n\tld.param.u32 %%n, [p_n];\n"
             "\tmov.u32 %%b, %%ntid.x;\n\tmov.u32 %%c, %%ctaid.x;\n\tmov.u32 %%t, %%tid.x;\n"
             "\tmov.u32 %%g, %%nctaid.x;\n\tmul.lo.s32 %%s, %%b, %%g;\n%s\tret;\n}\n",
             body);
    return pd_describe(ptx, "k", &l, d, err, sizeof err);
}

/* A grid-stride loop (nvcc's form: i = blockIdx x blockDim + threadIdx, i +=
 * blockDim x gridDim): its trips differ by warp, and it is counted at their
 * mean over the launch's warps, rounded, the spread noted; up or down. */
static void test_grid_stride_loops(void **state)
{
    (void)state;
    static const char up[] = "\tmad.lo.s32 %i, %c, %b, %t;\n$L:\n\tadd.f32 %v, %v, %v;\n"
                             "\tadd.s32 %i, %i, %s;\n\tsetp.lt.s32 %q, %i, %n;\n\t@%q bra $L;\n";
    static const char down[] = "\tmad.lo.s32 %j, %c, %b, %t;\n\tsub.s32 %i, %n, %j;\n"
                               "\tadd.s32 %i, %i, -1;\n$L:\n\tadd.f32 %v, %v, %v;\n"
                               "\tsetp.ge.s32 %q, %i, %s;\n\tsub.s32 %i, %i, %s;\n"
                               "\t@%q bra $L;\n";
    const struct { unsigned grid, block; long long n; } shapes[] = {
        {4, 64, 1100}, {4, 64, 1024}, {132, 256, 1 << 20}, {7, 96, 5000}, {3, 32, 10},
    };
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
        for (int dn = 0; dn < 2; dn++) {
            struct pd_desc d;
            long long lo, hi;
            double want = mean_warp_trips(shapes[k].grid, shapes[k].block, shapes[k].n, dn, &lo,
                                          &hi);
            if (describe_grid(dn ? down : up, shapes[k].grid, shapes[k].block, shapes[k].n, &d))
                fail_msg("shape %zu %s: %s", k, dn ? "down" : "up", err);
            /* the down loop compares i >= stride before stepping: the same trips as i >= 0 after */
            near(d.insts[MC_FP32], (double)(long long)(want + 0.5), dn ? "down" : "up");
            int noted = 0;
            for (int i = 0; i < d.nnotes; i++)
                noted |= strstr(d.notes[i], "trips a warp") != NULL;
            if (noted != (lo != hi))
                fail_msg("shape %zu: trips %lld to %lld, noted %d", k, lo, hi, noted);
        }
}

/* describe_text's module with the parameters given as names[i] = values[i]. */
static int describe_given(const char *body, const char *const *names, const long long *values,
                          int n, struct pd_desc *d)
{
    char ptx[4096];
    struct pd_launch l;
    memset(&l, 0, sizeof l);
    l.grid[0] = l.grid[1] = l.grid[2] = 1;
    l.block[0] = 32;
    l.block[1] = l.block[2] = 1;
    l.nparams = n;
    for (int i = 0; i < n; i++) {
        snprintf(l.params[i].name, sizeof l.params[i].name, "%s", names[i]);
        l.params[i].value = values[i];
    }
    snprintf(ptx, sizeof ptx,
             ".version 8.0\n.target sm_90\n.address_size 64\n"
             ".visible .entry k(\n\t.param .u64 .ptr .align 8 p_a, // the array\n"
             "\t.param .u32 p_n /* its length, ) */\n)\n{\n"
             "\t.reg .u32 %%i, %%n, %%w;\n\t.reg .u64 %%a;\n\t.reg .f32 %%v;\n"
             "\t.reg .pred %%q;\n"
             "\tld.param.u64 %%a, [p_a];\n\tld.param.u32 %%n, [p_n];\n%s\tret;\n}\n",
             body);
    return pd_describe(ptx, "k", &l, d, err, sizeof err);
}

#define COUNTED_BY_N \
    "\tmov.u32 %i, 0;\n$L:\n\tadd.f32 %v, %v, %v;\n\tadd.u32 %i, %i, 1;\n" \
    "\tsetp.lt.u32 %q, %i, %n;\n\t@%q bra $L;\n"

/* A parameter is given by its name or its index from 0, as trace capture takes
 * it; one the entry does not have, or one given twice, is refused naming it and
 * listing the entry's; a loop that cannot be counted for want of a parameter's
 * value names that parameter (and every other one its bound depends on). */
static void test_parameters_by_name_or_index(void **state)
{
    (void)state;
    struct pd_desc d;
    const char *by_name[] = {"p_n"}, *by_index[] = {"1"}, *bogus[] = {"bogus"},
               *past[] = {"2"}, *twice[] = {"p_n", "1"}, *none[] = {NULL};
    const long long ten[] = {10, 10};
    assert_int_equal(describe_given(COUNTED_BY_N, by_name, ten, 1, &d), 0);
    near(d.insts[MC_FP32], 10, "p_n by name");
    assert_int_equal(describe_given(COUNTED_BY_N, by_index, ten, 1, &d), 0);
    near(d.insts[MC_FP32], 10, "p_n by its index");
    assert_string_equal(d.param, "");
    for (int i = 0; i < 2; i++) {
        assert_int_equal(describe_given(COUNTED_BY_N, i ? past : bogus, ten, 1, &d), -1);
        assert_string_equal(d.param, i ? "2" : "bogus");
        assert_int_equal(d.nmissing, 0);
        assert_non_null(strstr(err, i ? "'2' is not a parameter of k" : "'bogus' is not a parameter of k"));
        assert_non_null(strstr(err, "0 p_a, 1 p_n"));
    }
    assert_int_equal(describe_given(COUNTED_BY_N, twice, ten, 2, &d), -1);
    assert_non_null(strstr(err, "p_n"));
    assert_non_null(strstr(err, "given twice"));
    /* no value for the bound: the loop's label and the parameter, by name and index */
    assert_int_equal(describe_given(COUNTED_BY_N, none, ten, 0, &d), -1);
    assert_non_null(strstr(err, "loop at label $L"));
    assert_non_null(strstr(err, "parameter p_n (index 1) of k"));
    assert_string_equal(d.param, "p_n");
    assert_int_equal(d.nmissing, 1);
    assert_string_equal(d.missing[0], "p_n");
    assert_int_equal(d.missing_index[0], 1);
    /* a bound made of two parameters: both, in the entry's order */
    assert_int_equal(describe_given("\tcvt.u32.u64 %w, %a;\n\tmul.lo.u32 %w, %w, %n;\n"
                                    "\tshr.u32 %w, %w, 4;\n\tmov.u32 %i, 0;\n$L:\n"
                                    "\tadd.u32 %i, %i, 1;\n\tsetp.lt.u32 %q, %i, %w;\n"
                                    "\t@%q bra $L;\n", none, ten, 0, &d), -1);
    assert_non_null(strstr(err, "parameters p_a (index 0), p_n (index 1) of k"));
    assert_int_equal(d.nmissing, 2);
    assert_string_equal(d.param, "p_a");
    /* a bound from a loaded value needs no parameter: the message says what is counted */
    assert_int_equal(describe_given("\tld.global.u32 %w, [%a];\n\tmov.u32 %i, 0;\n$L:\n"
                                    "\tadd.u32 %i, %i, 1;\n\tsetp.lt.u32 %q, %i, %w;\n"
                                    "\t@%q bra $L;\n", by_name, ten, 1, &d), -1);
    assert_string_equal(d.param, "");
    assert_null(strstr(err, "depends on"));
}

/* nvcc's tiled matmul (tests/fixtures/ptx/synth): its K loop's bound is
 * (param_5 + 15) / 16; param_3 (M) does not count it. */
static void test_matmul_tiled_parameters(void **state)
{
    (void)state;
    struct pd_desc d;
    struct pd_launch l;
    char *ptx = must_read_file("tests/fixtures/ptx/synth/matmul-tiled.ptx", NULL);
    memset(&l, 0, sizeof l);
    l.grid[0] = l.grid[1] = 16;
    l.grid[2] = 1;
    l.block[0] = l.block[1] = 16;
    l.block[2] = 1;
    l.nparams = 1;
    snprintf(l.params[0].name, sizeof l.params[0].name, "3");
    l.params[0].value = 1024;
    assert_int_equal(pd_describe(ptx, NULL, &l, &d, err, sizeof err), -1);
    assert_non_null(strstr(err, "loop at label $L__BB0_2"));
    assert_non_null(strstr(err, "parameter matmul_tiled_param_5 (index 5) of matmul_tiled"));
    assert_string_equal(d.param, "matmul_tiled_param_5");
    snprintf(l.params[0].name, sizeof l.params[0].name, "5");
    assert_int_equal(pd_describe(ptx, NULL, &l, &d, err, sizeof err), 0);
    near(d.sync, 2 * 64, "two barriers a trip, 1024 / 16 trips");
    snprintf(l.params[0].name, sizeof l.params[0].name, "matmul_tiled_param_5");
    assert_int_equal(pd_describe(ptx, NULL, &l, &d, err, sizeof err), 0);
    near(d.sync, 2 * 64, "the same by name");
    free(ptx);
}

/* The static shared memory of the validation kernels, as the driver reported it
 * (CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES) on the H200 the run below was taken on:
 * the PTX's .shared declarations must add up to the same. */
#define DRIVER_RUN "tests/gpu/results/2026-11-24-h200-session5/model-validation.json"

static void test_static_smem_as_the_driver_reports(void **state)
{
    (void)state;
    json_error_t je;
    json_t *run = json_load_file(DRIVER_RUN, 0, &je);
    const json_t *k;
    size_t i;
    int seen = 0, shared = 0;
    if (!run)
        fail_msg("%s: %s", DRIVER_RUN, je.text);
    json_array_foreach(json_object_get(run, "kernels"), i, k) {
        const char *name = json_string_value(json_object_get(k, "name"));
        const json_t *want = json_object_get(json_object_get(json_object_get(json_object_get(
                                                 k, "prediction"), "occupancy"), "input"),
                                             "static_smem");
        for (int id = 0; id < VK_COUNT; id++) {
            if (strcmp(val_kernels[id].name, name) != 0)
                continue;
            struct pd_desc d = describe_kernel((enum val_kernel_id)id);
            if (!json_is_integer(want) || d.static_smem != json_integer_value(want))
                fail_msg("%s: %lld bytes from the PTX, the driver said %lld", name,
                         d.static_smem, (long long)json_integer_value(want));
            seen++;
            shared += d.static_smem > 0;
        }
    }
    json_decref(run);
    assert_int_equal(seen, VK_COUNT);
    assert_int_equal(shared, 5); /* reduce, matmul_tiled, transpose_tiled, histogram, matmul_tiled32 */
}

static long long smem_of(const char *module_decls, const char *entry_decls, const char *uses)
{
    char ptx[2048];
    struct pd_desc d;
    struct pd_launch l;
    memset(&l, 0, sizeof l);
    l.grid[0] = l.grid[1] = l.grid[2] = 1;
    l.block[0] = l.block[1] = l.block[2] = 1;
    snprintf(ptx, sizeof ptx,
             ".version 8.0\n.target sm_90\n.address_size 64\n%s\n"
             ".visible .entry k()\n{\n\t.reg .u32 %%r;\n%s\n%s\tret;\n}\n",
             module_decls, entry_decls, uses);
    if (pd_describe(ptx, "k", &l, &d, err, sizeof err) != 0)
        fail_msg("%s", err);
    return d.static_smem;
}

/* The rules of the layout: element sizes, vectors, dimensions, alignment in
 * declaration order; the module's variables when the entry names them; dynamic
 * (.extern) ones not at all. */
static void test_static_smem_declarations(void **state)
{
    (void)state;
    assert_int_equal(smem_of("", "", ""), 0);
    /* nvcc's demoted variables: bytes at an alignment */
    assert_int_equal(smem_of("", "\t.shared .align 4 .b8 As[20480];\n\t.shared .align 4 .b8 Bs[20480];",
                             ""), 40960);
    /* typed arrays, two dimensions, a vector type; a scalar */
    assert_int_equal(smem_of("", "\t.shared .f32 t[32][33];", ""), 4224);
    assert_int_equal(smem_of("", "\t.shared .align 16 .v4 .f32 q[8];", ""), 128);
    assert_int_equal(smem_of("", "\t.shared .u64 flag;", ""), 8);
    /* alignment pads: 3 bytes, then a 16-aligned array starts at 16 */
    assert_int_equal(smem_of("", "\t.shared .b8 c[3];\n\t.shared .align 16 .f32 v[4];", ""), 32);
    /* the module's: counted when the entry names them (as nvcc's tiles at file scope) */
    assert_int_equal(smem_of(".shared .align 16 .f32 tA[256];\n.shared .f32 unused[64];\n"
                             "// .shared .f32 commented[1000];",
                             "", "\tmov.u32 %r, tA;\n"), 1024);
    assert_int_equal(smem_of(".shared .f32 tA[256];", "", "\tmov.u32 %r, tAx;\n"), 0);
    /* dynamic shared memory is the launch's (smem), not the kernel's */
    assert_int_equal(smem_of(".extern .shared .align 16 .b8 dyn[];", "", "\tmov.u32 %r, dyn;\n"), 0);
    /* nvcc's tiled matmul fixture: two 16 x 16 float tiles */
    struct pd_desc d;
    struct pd_launch l;
    char *ptx = must_read_file("tests/fixtures/ptx/synth/matmul-tiled.ptx", NULL);
    memset(&l, 0, sizeof l);
    l.grid[0] = l.grid[1] = 16;
    l.grid[2] = 1;
    l.block[0] = l.block[1] = 16;
    l.block[2] = 1;
    l.nparams = 1;
    snprintf(l.params[0].name, sizeof l.params[0].name, "matmul_tiled_param_5");
    l.params[0].value = 64;
    assert_int_equal(pd_describe(ptx, NULL, &l, &d, err, sizeof err), 0);
    assert_int_equal(d.static_smem, 2048);
    assert_int_equal(d.shared_vars, 2);
    free(ptx);
}

static void test_coalescing_rules(void **state)
{
    (void)state;
    struct pd_desc d;
    /* a[tid.x x 8] with 8-byte loads: 256 bytes, 8 sectors = ideal: coalesced */
    assert_int_equal(describe_text("\tmul.wide.u32 %o, %t, 8;\n\tadd.u64 %p, %a, %o;\n"
                                   "\tld.global.f64 %a, [%p];\n", 32, 1, 0, &d), 0);
    near(d.coal, 1, "8-byte unit stride");
    near(d.coal_bytes, 256, "bytes");
    /* a[tid.x x 8] with 4-byte loads: 32 lanes over 256 bytes, 8 sectors > 4 */
    assert_int_equal(describe_text("\tmul.wide.u32 %o, %t, 8;\n\tadd.u64 %p, %a, %o;\n"
                                   "\tld.global.f32 %v, [%p];\n", 32, 1, 0, &d), 0);
    near(d.uncoal, 1, "stride 2");
    near(d.uncoal_per_access, 8, "sectors");
    /* a 16 x 2 block reading a[tid.y x 4096 + tid.x x 4]: 2 rows of 64 bytes: 4 sectors */
    assert_int_equal(describe_text("\tmul.wide.u32 %o, %y, 4096;\n\tadd.u64 %p, %a, %o;\n"
                                   "\tmul.wide.u32 %o, %t, 4;\n\tadd.u64 %p, %p, %o;\n"
                                   "\tst.global.f32 [%p], %v;\n", 16, 2, 0, &d), 0);
    near(d.coal, 1, "tile rows");
    /* an address from a loaded value: not affine */
    assert_int_equal(describe_text("\tld.global.u64 %p, [%a];\n\tld.global.f32 %v, [%p];\n",
                                   32, 1, 0, &d), 0);
    near(d.coal, 1, "the first load (uniform address)");
    near(d.uncoal, 1, "the dependent load");
    near(d.uncoal_per_access, 32, "one transaction a lane");
    assert_non_null(strstr(d.notes[0], "not affine"));
    /* generic space counts as global, and says so */
    assert_int_equal(describe_text("\tld.f32 %v, [%a];\n", 32, 1, 0, &d), 0);
    near(d.coal, 1, "generic load");
    assert_non_null(strstr(d.notes[0], "generic"));
}

static void test_atomics_and_shuffles(void **state)
{
    (void)state;
    struct pd_desc d;
    /* global atomics are global accesses classified by their address (a + tid x 4:
     * coalesced), shared ones and shuffles are shared-class instructions, and the value an
     * atom returns is a loaded one: an address made from it is not affine */
    assert_int_equal(describe_text("\tmul.wide.u32 %o, %t, 4;\n\tadd.u64 %p, %a, %o;\n"
                                   "\tatom.global.add.u32 %w, [%p], 1;\n"
                                   "\tred.global.add.u32 [%p], %j;\n"
                                   "\tatom.shared.add.u32 %i, [%j], %j;\n"
                                   "\tshfl.sync.bfly.b32 %v, %v, 16, 31, -1;\n"
                                   "\tmul.wide.u32 %o, %w, 4;\n\tadd.u64 %a, %a, %o;\n"
                                   "\tld.global.f32 %v, [%a];\n", 32, 1, 0, &d), 0);
    near(d.coal, 2, "atom.global and red.global at a + tid x 4");
    near(d.insts[MC_SHARED], 2, "atom.shared and shfl");
    near(d.uncoal, 1, "the load through the atom's value");
    near(d.uncoal_per_access, 32, "a transaction a lane");
    /* the two movs of the module around the body, 4 address instructions */
    near(d.insts[MC_INT], 6, "int");
    assert_non_null(strstr(d.notes[0], "not affine"));
}

#define MODULE_HEAD "// a comment first, as nvcc writes\n.version 8.0\n.target sm_90\n"

static void test_bad_modules(void **state)
{
    (void)state;
    struct pd_desc d;
    struct pd_launch l;
    memset(&l, 0, sizeof l);
    l.block[0] = l.block[1] = l.block[2] = 1;
    assert_int_equal(pd_describe(MODULE_HEAD, NULL, &l, &d, err, sizeof err), -1);
    assert_non_null(strstr(err, "no entry"));
    assert_int_equal(pd_describe(MODULE_HEAD ".visible .entry a()\n{\n\tret;\n}\n", "b", &l,
                                 &d, err, sizeof err), -1);
    assert_non_null(strstr(err, "'b'"));
    assert_int_equal(pd_describe(MODULE_HEAD ".visible .entry a()\n{\n\tret;\n", NULL, &l, &d,
                                 err, sizeof err), -1);
    assert_non_null(strstr(err, "not closed"));
    assert_int_equal(pd_describe(MODULE_HEAD ".visible .entry a()\n{\n\tret;\n}\n", NULL, &l,
                                 &d, err, sizeof err), 0);
    l.block[0] = 0;
    assert_int_equal(pd_describe(MODULE_HEAD ".visible .entry a()\n{\n\tret;\n}\n", NULL, &l,
                                 &d, err, sizeof err), -1);
}

/* Text is PTX when it begins with .version then .target: anything else is
 * refused as not PTX, whatever entry it seems to hold, not described (an
 * unknown word would count as an integer instruction). */
static void test_not_ptx(void **state)
{
    (void)state;
    static const char *const texts[] = {
        ".visible .entry a()\n{\n\tret;\n}\n",                      /* no header */
        "hello .entry a { foo bar baz; }\n",                          /* prose */
        ".target sm_90\n.version 8.0\n.entry a()\n{\n\tret;\n}\n",    /* out of order */
        ".version\n.target sm_90\n.entry a()\n{\n\tret;\n}\n",       /* no number */
        ".version 8.0\n.entry a()\n{\n\tret;\n}\n",                  /* no target */
        ".version 8.0\n.target\n.entry a()\n{\n\tret;\n}\n",         /* no target name */
        ".versions 8.0\n.target sm_90\n.entry a()\n{\n\tret;\n}\n",  /* another word */
        "/* .version 8.0 */ .target sm_90\n.entry a()\n{\n\tret;\n}\n",
        "",
    };
    struct pd_desc d;
    struct pd_launch l;
    struct pd_loop q[4];
    int n;
    memset(&l, 0, sizeof l);
    l.block[0] = l.block[1] = l.block[2] = 1;
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        err[0] = '\0';
        if (pd_describe(texts[i], NULL, &l, &d, err, sizeof err) != -1 ||
            !strstr(err, "not PTX"))
            fail_msg("text %zu described, or refused for another reason: '%s'", i, err);
        err[0] = '\0';
        if (pd_loops(texts[i], NULL, &l, q, 4, &n, err, sizeof err) != -1 ||
            !strstr(err, "not PTX"))
            fail_msg("text %zu: loops found, or refused for another reason: '%s'", i, err);
    }
    /* comments and blanks before the header are PTX's own */
    assert_int_equal(pd_describe("\n/* x */ // y\n  .version 8.5 .target sm_90a, debug\n"
                                 ".entry a()\n{\n\tret;\n}\n", NULL, &l, &d, err, sizeof err),
                     0);
}

static void test_json(void **state)
{
    (void)state;
    struct pd_desc d = describe_kernel(VK_MM_ABT);
    json_t *j = pd_desc_json(&d);
    const json_t *pw = json_object_get(j, "per_warp");
    near(json_number_value(json_object_get(pw, "uncoalesced")), VAL_MM_N, "json uncoalesced");
    assert_null(json_object_get(pw, "global"));
    near(json_number_value(json_object_get(j, "uncoal_per_access")), 16, "json transactions");
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy),
        cmocka_unit_test(test_strided),
        cmocka_unit_test(test_ffma),
        cmocka_unit_test(test_mixed),
        cmocka_unit_test(test_reduce),
        cmocka_unit_test(test_matmul_naive),
        cmocka_unit_test(test_matmul_tiled),
        cmocka_unit_test(test_matmul_abt),
        cmocka_unit_test(test_transpose_naive),
        cmocka_unit_test(test_transpose_tiled),
        cmocka_unit_test(test_stencil7),
        cmocka_unit_test(test_gather),
        cmocka_unit_test(test_histogram),
        cmocka_unit_test(test_matmul_tiled32),
        cmocka_unit_test(test_saxpy_sfu),
        cmocka_unit_test(test_sgemv),
        cmocka_unit_test(test_kernels_compile),
        cmocka_unit_test(test_nested_loops_and_comparisons),
        cmocka_unit_test(test_loops_that_cannot_be_counted),
        cmocka_unit_test(test_unrolled_loop_with_a_remainder),
        cmocka_unit_test(test_constants_only_where_one_write_reaches),
        cmocka_unit_test(test_grid_stride_loops),
        cmocka_unit_test(test_parameters_by_name_or_index),
        cmocka_unit_test(test_matmul_tiled_parameters),
        cmocka_unit_test(test_static_smem_as_the_driver_reports),
        cmocka_unit_test(test_static_smem_declarations),
        cmocka_unit_test(test_coalescing_rules),
        cmocka_unit_test(test_atomics_and_shuffles),
        cmocka_unit_test(test_bad_modules),
        cmocka_unit_test(test_not_ptx),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
