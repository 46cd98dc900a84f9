/*
 * The model-validation kernels as PTX, and their launch table (see
 * validation.h).
 *
 * DESIGN
 * Each kernel is written the way a compiler front end would emit it for a
 * simple CUDA C kernel: a global index from %ctaid/%ntid/%tid, address
 * arithmetic by mul.wide and add, counted loops (step an induction register,
 * compare with the bound, branch back), so that model/ptx_desc.h can read
 * them as it would read a user's kernel. Constants the compiler must not
 * fold away (the FMA multiplier 1.0 and addend 0.0, saxpy_sfu's a) come in
 * as parameters; so do the sizes that bound loops or make strides, as a
 * compiler would see them for a runtime n. Each kernel's inputs are 1.0f or
 * a pattern of validation_data.h, so its answer is known: the run checks it.
 * Each kernel's entry line is written from its row of val_kernels (entry
 * point, pointer count, integer parameter names), so what the run passes
 * and what the PTX declares are one fact. Kernels that differ in a few
 * lines are one writer with those lines as arguments: grid_stride() for
 * the strided and bandwidth reads, fma_kernel() for the FMA chains,
 * mm_dot() for the untiled matrix products, mm_tiled() for the tiled ones
 * (16 and 32). Every module assembles with ptxas for sm_90
 * (test_ptx_desc's compile check, where ptxas is installed).
 */
#include "probes/validation.h"

#include <stdio.h>
#include <stdlib.h>

#include "probes/gpu/ptx.h"

#define F_ONE 0x3F800000u   /* 1.0f */
#define F_ZERO 0u           /* 0.0f */

const struct val_kernel val_kernels[VK_ALL] = {
    [VK_COPY] = {"copy", "streaming copy: one coalesced load and store a thread", "copy",
                 {VAL_COPY_N / 256, 1, 1}, {256, 1, 1}, 20, 0, {0}, {0}, 2},
    [VK_STRIDED] = {"strided", "uncoalesced reads: each thread a 128-byte stride, 16 loads",
                    "strided", {4096, 1, 1}, {256, 1, 1}, 20, 1, {"p_iters"},
                    {VAL_STRIDED_ITERS}, 2},
    [VK_FFMA] = {"ffma", "compute-bound: 8 independent FMA chains, 16384 FMAs a thread",
                 "ffma", {4096, 1, 1}, {256, 1, 1}, 10, 3, {"p_iters", "p_m", "p_c"},
                 {VAL_FFMA_ITERS, F_ONE, F_ZERO}, 1},
    [VK_MIXED] = {"mixed", "coalesced load, 64 FMAs in 4 chains, coalesced store", "mixed",
                  {VAL_MIXED_N / 256, 1, 1}, {256, 1, 1}, 20, 3, {"p_iters", "p_m", "p_c"},
                  {VAL_MIXED_ITERS, F_ONE, F_ZERO}, 2},
    [VK_REDUCE] = {"reduce", "block reduction: 4 loads a thread, shared-memory tree, 9 barriers",
                   "reduce", {VAL_REDUCE_N / 1024, 1, 1}, {256, 1, 1}, 20, 0, {0}, {0}, 2},
    [VK_MM_NAIVE] = {"matmul_naive", "C = A x B, a thread an element, A row broadcast, B "
                     "coalesced", "mm_naive", {VAL_MM_N / 16, VAL_MM_N / 16, 1}, {16, 16, 1}, 3,
                     1, {"p_n"}, {VAL_MM_N}, 3},
    [VK_MM_TILED] = {"matmul_tiled", "C = A x B through 16x16 shared-memory tiles, 2 barriers "
                     "a tile", "mm_tiled", {VAL_MM_N / 16, VAL_MM_N / 16, 1}, {16, 16, 1}, 5, 1,
                     {"p_n"}, {VAL_MM_N}, 3},
    [VK_MM_ABT] = {"matmul_abt", "C = A x transpose(B), naive: B read down columns "
                   "(uncoalesced)", "mm_abt", {VAL_MM_N / 16, VAL_MM_N / 16, 1}, {16, 16, 1}, 2,
                   1, {"p_n"}, {VAL_MM_N}, 3},
    [VK_TR_NAIVE] = {"transpose_naive", "out[x][y] = in[y][x], 4096 x 4096: coalesced read, "
                     "strided write", "transpose_naive", {VAL_TR_N / 16, VAL_TR_N / 16, 1},
                     {16, 16, 1}, 20, 1, {"p_n"}, {VAL_TR_N}, 2},
    [VK_TR_TILED] = {"transpose_tiled", "transpose through a padded 32x33 shared tile, one "
                     "barrier, 4 rows a thread", "transpose_tiled",
                     {VAL_TR_N / 32, VAL_TR_N / 32, 1}, {32, 8, 1}, 20, 1, {"p_n"}, {VAL_TR_N},
                     2},
    [VK_STENCIL] = {"stencil7", "7-point stencil on a 256^3 grid: a thread a column of "
                    "interior points walking z, 7 loads a point", "stencil7",
                    {VAL_ST_N / 32, VAL_ST_N / 8, 1}, {32, 8, 1}, 20, 1, {"p_n"}, {VAL_ST_N}, 2},
    [VK_GATHER] = {"gather", "out[i] = in[idx[i]], idx a random permutation of 2^24", "gather",
                   {VAL_GATHER_N / 256, 1, 1}, {256, 1, 1}, 20, 0, {0}, {0}, 3},
    [VK_HISTOGRAM] = {"histogram", "2^26 bytes into 256 bins: shared-memory atomics, then a "
                      "global reduction a bin a block", "histogram", {1024, 1, 1}, {256, 1, 1},
                      20, 1, {"p_iters"}, {VAL_HIST_ITERS}, 2},
    [VK_MM_TILED32] = {"matmul_tiled32", "C = A x B through 32x32 shared-memory tiles, 2 "
                       "barriers a tile", "mm_tiled32", {VAL_MM_N / 32, VAL_MM_N / 32, 1},
                       {32, 32, 1}, 5, 1, {"p_n"}, {VAL_MM_N}, 3},
    [VK_SFU] = {"saxpy_sfu", "y = a x + t(x), t 32 steps of sin.approx and ex2.approx (SFU), "
                "streaming", "saxpy_sfu", {VAL_SFU_N / 256, 1, 1}, {256, 1, 1}, 20, 2,
                {"p_iters", "p_a"}, {VAL_SFU_ITERS, VAL_SFU_A}, 2},
    [VK_SGEMV] = {"sgemv", "y = A x, 8192 x 8192: a warp a row, coalesced, shuffle reduction",
                  "sgemv", {VAL_GEMV_N / 8, 1, 1}, {32, 8, 1}, 20, 1, {"p_n"}, {VAL_GEMV_N}, 3},
    [VK_BW_READ] = {"bandwidth", "read-only: 16-byte coalesced loads over 2 GiB", "bw_read",
                    {16384, 1, 1}, {256, 1, 1}, 10, 1, {"p_iters"}, {VAL_BW_ITERS}, 2},
    /* grid and p_nvec are the device's: validation_run.c sets them from its L2 size */
    [VK_L2_READ] = {"l2_bandwidth", "read-only: 16-byte coalesced L2-only loads (ld.global.cg) "
                    "re-reading a quarter of the L2", "l2_read", {VAL_L2_BLOCKS, 1, 1},
                    {256, 1, 1}, 10, 2, {"p_iters", "p_nvec"}, {VAL_L2_ITERS, 0}, 2},
};

/* ---- shared pieces ------------------------------------------------------------ */

/* A pointer parameter and the register that holds its global address. */
struct pointer_param {
    const char *name, *reg;
};

/* Output first, as val_kernels[].pointers counts them. */
static const struct pointer_param vector_pointers[] = {{"p_out", "%o"}, {"p_in", "%a"}};
static const struct pointer_param matrix_pointers[] = {{"p_c", "%pc"}, {"p_a", "%pa"}, {"p_b", "%pb"}};

/* The global index %g = %ctaid.x * %ntid.x + %tid.x, with %t = %tid.x. */
static const char global_index[] =
    "\tmov.u32 %t, %tid.x;\n\tmov.u32 %b, %ctaid.x;\n\tmov.u32 %nt, %ntid.x;\n"
    "\tmad.lo.u32 %g, %b, %nt, %t;\n";

/* Kernel id's entry line, its parameters as val_kernels[id] lists them
 * (the launch and the PTX cannot disagree), the body's declarations
 * `decls`, and each pointer parameter loaded into its register as a
 * global address. */
static void entry(struct ptx *p, enum val_kernel_id id, const struct pointer_param *ptrs,
                  const char *decls)
{
    const struct val_kernel *k = &val_kernels[id];
    ptx_add(p, ".visible .entry %s(", k->entry);
    for (int i = 0; i < k->pointers; i++)
        ptx_add(p, "%s.param .u64 %s", i ? ", " : "", ptrs[i].name);
    for (int i = 0; i < k->nints; i++)
        ptx_add(p, ", .param .u32 %s", k->int_names[i]);
    ptx_add(p, ")\n{\n%s", decls);
    for (int i = 0; i < k->pointers; i++)
        ptx_add(p, "\tld.param.u64 %s, [%s];\n\tcvta.to.global.u64 %s, %s;\n", ptrs[i].reg,
                ptrs[i].name, ptrs[i].reg, ptrs[i].reg);
}

/* Stores %acc at out[%g] and ends the kernel. */
static void store_and_return(struct ptx *p)
{
    ptx_add(p, "\tmul.wide.u32 %%off, %%g, 4;\n\tadd.u64 %%o, %%o, %%off;\n"
               "\tst.global.f32 [%%o], %%acc;\n\tret;\n}\n");
}

/* 2-D kernels of square blocks (2^shift a side): %row = %ctaid.y * 2^shift +
 * %tid.y, %col = %ctaid.x * 2^shift + %tid.x. */
static void row_col(struct ptx *p, int shift)
{
    ptx_add(p, "\tmov.u32 %%tx, %%tid.x;\n\tmov.u32 %%ty, %%tid.y;\n"
               "\tmov.u32 %%bx, %%ctaid.x;\n\tmov.u32 %%by, %%ctaid.y;\n"
               "\tshl.b32 %%row, %%by, %d;\n\tadd.u32 %%row, %%row, %%ty;\n"
               "\tshl.b32 %%col, %%bx, %d;\n\tadd.u32 %%col, %%col, %%tx;\n",
            shift, shift);
}

/* The matrix kernels' entry, registers and indices, for tiles of 2^shift. */
static void mm_params(struct ptx *p, enum val_kernel_id id, int shift)
{
    entry(p, id, matrix_pointers,
          "\t.reg .u32 %tx, %ty, %bx, %by, %row, %col, %n, %k, %rn, %i;\n"
          "\t.reg .u64 %pc, %pa, %pb, %off, %step;\n"
          "\t.reg .f32 %a, %bv, %acc, %x, %y;\n\t.reg .pred %q;\n");
    ptx_add(p, "\tld.param.u32 %%n, [p_n];\n");
    row_col(p, shift);
}

/* C[row * n + col] = %acc. */
static void mm_store(struct ptx *p)
{
    ptx_add(p, "\tmul.lo.u32 %%i, %%row, %%n;\n\tadd.u32 %%i, %%i, %%col;\n"
               "\tmul.wide.u32 %%off, %%i, 4;\n\tadd.u64 %%pc, %%pc, %%off;\n"
               "\tst.global.f32 [%%pc], %%acc;\n\tret;\n}\n");
}

/* ---- the kernels ------------------------------------------------------------------ */

static void k_copy(struct ptx *p)
{
    entry(p, VK_COPY, vector_pointers,
          "\t.reg .u32 %t, %b, %nt, %g;\n\t.reg .u64 %o, %a, %off;\n\t.reg .f32 %acc;\n");
    ptx_add(p, "%s", global_index);
    ptx_add(p, "\tmul.wide.u32 %%off, %%g, 4;\n\tadd.u64 %%a, %%a, %%off;\n"
               "\tld.global.f32 %%acc, [%%a];\n");
    store_and_return(p);
}

/* The grid-stride read of p_in that the strided and bandwidth kernels
 * share: p_iters times, each thread reads at (%g + j * all threads) *
 * stride bytes into %p and `body` adds what it read to %acc. values: the
 * f32 registers body reads into. The kernel's end is the caller's. */
static void grid_stride(struct ptx *p, enum val_kernel_id id, const char *values, int stride,
                        const char *body)
{
    char decls[256];
    snprintf(decls, sizeof decls,
             "\t.reg .u32 %%t, %%b, %%nt, %%nc, %%g, %%T, %%idx, %%j, %%iters;\n"
             "\t.reg .u64 %%o, %%a, %%off, %%p;\n\t.reg .f32 %s, %%acc;\n\t.reg .pred %%q;\n",
             values);
    entry(p, id, vector_pointers, decls);
    ptx_add(p, "\tld.param.u32 %%iters, [p_iters];\n%s", global_index);
    ptx_add(p, "\tmov.u32 %%nc, %%nctaid.x;\n\tmul.lo.u32 %%T, %%nt, %%nc;\n"
               "\tmov.f32 %%acc, 0f00000000;\n\tmov.u32 %%idx, %%g;\n\tmov.u32 %%j, 0;\n"
               "$L_loop:\n"
               "\tmul.wide.u32 %%off, %%idx, %d;\n\tadd.u64 %%p, %%a, %%off;\n%s"
               "\tadd.u32 %%idx, %%idx, %%T;\n\tadd.u32 %%j, %%j, 1;\n"
               "\tsetp.lt.u32 %%q, %%j, %%iters;\n\t@%%q bra $L_loop;\n",
            stride, body);
}

static void k_strided(struct ptx *p)
{
    grid_stride(p, VK_STRIDED, "%v", 128,
                "\tld.global.f32 %v, [%p];\n\tadd.f32 %acc, %acc, %v;\n");
    store_and_return(p);
}

/* n chains of `unroll` FMAs each per iteration: x_i = x_i * m + c. */
static void fma_body(struct ptx *p, int chains, int unroll)
{
    for (int u = 0; u < unroll; u++)
        for (int i = 0; i < chains; i++)
            ptx_add(p, "\tfma.rn.f32 %%x%d, %%x%d, %%m, %%c;\n", i, i);
}

/* The FMA kernels: `chains` chains %x0.. started by `start` (which has the
 * global index %g), `unroll` FMAs each per loop trip, p_iters trips, the
 * chains' sum stored at out[%g]. With an input (two pointers) the u64
 * registers include its address %a. */
static void fma_kernel(struct ptx *p, enum val_kernel_id id, int chains, int unroll,
                       const char *start)
{
    char decls[256];
    snprintf(decls, sizeof decls,
             "\t.reg .u32 %%t, %%b, %%nt, %%g, %%j, %%iters, %%mi, %%ci;\n"
             "\t.reg .u64 %%o, %s%%off;\n\t.reg .f32 %%x<%d>, %%m, %%c, %%acc;\n"
             "\t.reg .pred %%q;\n",
             val_kernels[id].pointers > 1 ? "%a, " : "", chains);
    entry(p, id, vector_pointers, decls);
    ptx_add(p, "\tld.param.u32 %%iters, [p_iters];\n\tld.param.u32 %%mi, [p_m];\n"
               "\tld.param.u32 %%ci, [p_c];\n\tmov.b32 %%m, %%mi;\n\tmov.b32 %%c, %%ci;\n");
    ptx_add(p, "%s%s", global_index, start);
    ptx_add(p, "\tmov.u32 %%j, 0;\n$L_loop:\n");
    fma_body(p, chains, unroll);
    ptx_add(p, "\tadd.u32 %%j, %%j, 1;\n\tsetp.lt.u32 %%q, %%j, %%iters;\n\t@%%q bra $L_loop;\n"
               "\tmov.f32 %%acc, %%x0;\n");
    for (int i = 1; i < chains; i++)
        ptx_add(p, "\tadd.f32 %%acc, %%acc, %%x%d;\n", i);
    store_and_return(p);
}

static void k_ffma(struct ptx *p)
{
    fma_kernel(p, VK_FFMA, 8, 4,
               "\tmov.f32 %x0, 0f3F800000;\n\tmov.f32 %x1, 0f3F800000;\n"
               "\tmov.f32 %x2, 0f3F800000;\n\tmov.f32 %x3, 0f3F800000;\n"
               "\tmov.f32 %x4, 0f3F800000;\n\tmov.f32 %x5, 0f3F800000;\n"
               "\tmov.f32 %x6, 0f3F800000;\n\tmov.f32 %x7, 0f3F800000;\n");
}

static void k_mixed(struct ptx *p)
{
    fma_kernel(p, VK_MIXED, 4, 1,
               "\tmul.wide.u32 %off, %g, 4;\n\tadd.u64 %a, %a, %off;\n"
               "\tld.global.f32 %x0, [%a];\n\tmov.f32 %x1, %x0;\n\tmov.f32 %x2, %x0;\n"
               "\tmov.f32 %x3, %x0;\n");
}

static void k_reduce(struct ptx *p)
{
    entry(p, VK_REDUCE, vector_pointers,
          "\t.shared .align 4 .f32 sh[256];\n"
          "\t.reg .u32 %t, %b, %base, %sa, %to, %my;\n"
          "\t.reg .u64 %o, %a, %off;\n\t.reg .f32 %v<4>, %s, %x, %y;\n"
          "\t.reg .pred %q;\n");
    ptx_add(p, "\tmov.u32 %%t, %%tid.x;\n\tmov.u32 %%b, %%ctaid.x;\n"
               "\tshl.b32 %%base, %%b, 10;\n\tadd.u32 %%base, %%base, %%t;\n"
               "\tmul.wide.u32 %%off, %%base, 4;\n\tadd.u64 %%a, %%a, %%off;\n"
               "\tld.global.f32 %%v0, [%%a];\n\tld.global.f32 %%v1, [%%a+1024];\n"
               "\tld.global.f32 %%v2, [%%a+2048];\n\tld.global.f32 %%v3, [%%a+3072];\n"
               "\tadd.f32 %%s, %%v0, %%v1;\n\tadd.f32 %%s, %%s, %%v2;\n"
               "\tadd.f32 %%s, %%s, %%v3;\n"
               "\tmov.u32 %%sa, sh;\n\tshl.b32 %%to, %%t, 2;\n\tadd.u32 %%my, %%sa, %%to;\n"
               "\tst.shared.f32 [%%my], %%s;\n\tbar.sync 0;\n");
    for (int s = 128; s >= 1; s /= 2)
        ptx_add(p, "\tsetp.lt.u32 %%q, %%t, %d;\n\t@!%%q bra $L_s%d;\n"
                   "\tld.shared.f32 %%x, [%%my];\n\tld.shared.f32 %%y, [%%my+%d];\n"
                   "\tadd.f32 %%x, %%x, %%y;\n\tst.shared.f32 [%%my], %%x;\n"
                   "$L_s%d:\n\tbar.sync 0;\n", s, s, 4 * s, s);
    ptx_add(p, "\tsetp.ne.u32 %%q, %%t, 0;\n\t@%%q bra $L_end;\n"
               "\tld.shared.f32 %%x, [%%sa];\n\tmul.wide.u32 %%off, %%b, 4;\n"
               "\tadd.u64 %%o, %%o, %%off;\n\tst.global.f32 [%%o], %%x;\n$L_end:\n\tret;\n}\n");
}

/* The untiled matrix products: C[row][col] = sum over k of A[row][k] times
 * a B element, %pb set on the first by b_start and moved on by b_step
 * bytes a step (B or its transpose). */
static void mm_dot(struct ptx *p, enum val_kernel_id id, const char *b_start, const char *b_step)
{
    mm_params(p, id, 4);
    ptx_add(p, "\tmul.lo.u32 %%rn, %%row, %%n;\n\tmul.wide.u32 %%off, %%rn, 4;\n"
               "\tadd.u64 %%pa, %%pa, %%off;\n%s"
               "\tmov.f32 %%acc, 0f00000000;\n\tmov.u32 %%k, 0;\n"
               "$L_k:\n"
               "\tld.global.f32 %%a, [%%pa];\n\tld.global.f32 %%bv, [%%pb];\n"
               "\tfma.rn.f32 %%acc, %%a, %%bv, %%acc;\n"
               "\tadd.u64 %%pa, %%pa, 4;\n\tadd.u64 %%pb, %%pb, %s;\n"
               "\tadd.u32 %%k, %%k, 1;\n\tsetp.lt.u32 %%q, %%k, %%n;\n\t@%%q bra $L_k;\n",
            b_start, b_step);
    mm_store(p);
}

/* B read along a row: the next k is n floats further. */
static void k_mm_naive(struct ptx *p)
{
    mm_dot(p, VK_MM_NAIVE,
           "\tmul.wide.u32 %off, %col, 4;\n\tadd.u64 %pb, %pb, %off;\n"
           "\tmul.wide.u32 %step, %n, 4;\n",
           "%step");
}

/* B read down a column (A x transpose(B)): the next k is the next float. */
static void k_mm_abt(struct ptx *p)
{
    mm_dot(p, VK_MM_ABT,
           "\tmul.lo.u32 %i, %col, %n;\n\tmul.wide.u32 %off, %i, 4;\n"
           "\tadd.u64 %pb, %pb, %off;\n",
           "4");
}

/* C = A x B through shared tiles of 2^shift x 2^shift (the block's shape):
 * per tile each thread stores one element of A and of B, a barrier, the
 * tile's dot product (unrolled), a barrier. */
static void mm_tiled(struct ptx *p, enum val_kernel_id id, int shift)
{
    int t = 1 << shift, row_bytes = 4 * t;
    ptx_add(p, ".shared .align 16 .f32 tA[%d];\n.shared .align 16 .f32 tB[%d];\n\n", t * t,
            t * t);
    mm_params(p, id, shift);
    ptx_add(p, "\t.reg .u32 %%sA, %%sB, %%o1, %%o2, %%o3, %%myA, %%myB, %%rowA, %%colB, %%n%d;\n"
               /* A: (row * n + tx) * 4, a tile's row on per tile */
               "\tmul.lo.u32 %%rn, %%row, %%n;\n\tadd.u32 %%i, %%rn, %%tx;\n"
               "\tmul.wide.u32 %%off, %%i, 4;\n\tadd.u64 %%pa, %%pa, %%off;\n"
               /* B: (ty * n + col) * 4, a tile's rows on per tile */
               "\tmul.lo.u32 %%i, %%ty, %%n;\n\tadd.u32 %%i, %%i, %%col;\n"
               "\tmul.wide.u32 %%off, %%i, 4;\n\tadd.u64 %%pb, %%pb, %%off;\n"
               "\tshl.b32 %%n%d, %%n, %d;\n\tcvt.u64.u32 %%step, %%n%d;\n"
               "\tmov.u32 %%sA, tA;\n\tmov.u32 %%sB, tB;\n"
               "\tshl.b32 %%o1, %%ty, %d;\n\tshl.b32 %%o2, %%tx, 2;\n\tadd.u32 %%o3, %%o1, %%o2;\n"
               "\tadd.u32 %%myA, %%sA, %%o3;\n\tadd.u32 %%myB, %%sB, %%o3;\n"
               "\tadd.u32 %%rowA, %%sA, %%o1;\n\tadd.u32 %%colB, %%sB, %%o2;\n"
               "\tmov.f32 %%acc, 0f00000000;\n\tmov.u32 %%k, 0;\n"
               "$L_t:\n"
               "\tld.global.f32 %%a, [%%pa];\n\tst.shared.f32 [%%myA], %%a;\n"
               "\tld.global.f32 %%bv, [%%pb];\n\tst.shared.f32 [%%myB], %%bv;\n"
               "\tbar.sync 0;\n",
            row_bytes, row_bytes, shift + 2, row_bytes, shift + 2);
    for (int k = 0; k < t; k++)
        ptx_add(p, "\tld.shared.f32 %%x, [%%rowA+%d];\n\tld.shared.f32 %%y, [%%colB+%d];\n"
                   "\tfma.rn.f32 %%acc, %%x, %%y, %%acc;\n", 4 * k, row_bytes * k);
    ptx_add(p, "\tbar.sync 0;\n\tadd.u64 %%pa, %%pa, %d;\n\tadd.u64 %%pb, %%pb, %%step;\n"
               "\tadd.u32 %%k, %%k, %d;\n\tsetp.lt.u32 %%q, %%k, %%n;\n\t@%%q bra $L_t;\n",
            row_bytes, t);
    mm_store(p);
}

static void k_mm_tiled(struct ptx *p)
{
    mm_tiled(p, VK_MM_TILED, 4);
}

static void k_mm_tiled32(struct ptx *p)
{
    mm_tiled(p, VK_MM_TILED32, 5);
}

/* ---- the second eight ----------------------------------------------------------------- */

static const struct pointer_param gather_pointers[] = {
    {"p_out", "%o"}, {"p_in", "%a"}, {"p_idx", "%ix"}};
static const struct pointer_param gemv_pointers[] = {
    {"p_y", "%o"}, {"p_a", "%pa"}, {"p_x", "%px"}};

/* out[col][row] = in[row][col] on 16 x 16 blocks: the read's half-warps take
 * 64 bytes of a row each, the write's lanes are a row (n floats) apart. */
static void k_transpose_naive(struct ptx *p)
{
    entry(p, VK_TR_NAIVE, vector_pointers,
          "\t.reg .u32 %tx, %ty, %bx, %by, %row, %col, %n, %i;\n"
          "\t.reg .u64 %o, %a, %off;\n\t.reg .f32 %v;\n");
    ptx_add(p, "\tld.param.u32 %%n, [p_n];\n");
    row_col(p, 4);
    ptx_add(p, "\tmad.lo.u32 %%i, %%row, %%n, %%col;\n\tmul.wide.u32 %%off, %%i, 4;\n"
               "\tadd.u64 %%a, %%a, %%off;\n\tld.global.f32 %%v, [%%a];\n"
               "\tmad.lo.u32 %%i, %%col, %%n, %%row;\n\tmul.wide.u32 %%off, %%i, 4;\n"
               "\tadd.u64 %%o, %%o, %%off;\n\tst.global.f32 [%%o], %%v;\n\tret;\n}\n");
}

/* A 32 x 32 tile through shared memory, 32 x 8 threads, each 4 rows 8 apart:
 * tile[ty + 8j][tx] = in[by*32 + ty + 8j][bx*32 + tx], a barrier, then
 * out[bx*32 + ty + 8j][by*32 + tx] = tile[tx][ty + 8j]. Rows of 33 floats
 * keep the column read free of bank conflicts. */
static void k_transpose_tiled(struct ptx *p)
{
    ptx_add(p, ".shared .align 4 .f32 tile[%d];\n\n", 32 * 33);
    entry(p, VK_TR_TILED, vector_pointers,
          "\t.reg .u32 %tx, %ty, %bx, %by, %x, %y, %n, %i, %st, %sw, %sr;\n"
          "\t.reg .u64 %o, %a, %off, %rows;\n\t.reg .f32 %v<4>;\n");
    ptx_add(p, "\tld.param.u32 %%n, [p_n];\n"
               "\tmov.u32 %%tx, %%tid.x;\n\tmov.u32 %%ty, %%tid.y;\n"
               "\tmov.u32 %%bx, %%ctaid.x;\n\tmov.u32 %%by, %%ctaid.y;\n"
               /* 8 rows of n floats, in bytes: the step between a thread's rows */
               "\tmul.wide.u32 %%rows, %%n, 32;\n"
               "\tshl.b32 %%x, %%bx, 5;\n\tadd.u32 %%x, %%x, %%tx;\n"
               "\tshl.b32 %%y, %%by, 5;\n\tadd.u32 %%y, %%y, %%ty;\n"
               "\tmad.lo.u32 %%i, %%y, %%n, %%x;\n\tmul.wide.u32 %%off, %%i, 4;\n"
               "\tadd.u64 %%a, %%a, %%off;\n"
               "\tld.global.f32 %%v0, [%%a];\n\tadd.u64 %%a, %%a, %%rows;\n"
               "\tld.global.f32 %%v1, [%%a];\n\tadd.u64 %%a, %%a, %%rows;\n"
               "\tld.global.f32 %%v2, [%%a];\n\tadd.u64 %%a, %%a, %%rows;\n"
               "\tld.global.f32 %%v3, [%%a];\n"
               "\tmov.u32 %%st, tile;\n"
               "\tmad.lo.u32 %%i, %%ty, 33, %%tx;\n\tshl.b32 %%i, %%i, 2;\n"
               "\tadd.u32 %%sw, %%st, %%i;\n"
               "\tst.shared.f32 [%%sw], %%v0;\n\tst.shared.f32 [%%sw+%d], %%v1;\n"
               "\tst.shared.f32 [%%sw+%d], %%v2;\n\tst.shared.f32 [%%sw+%d], %%v3;\n"
               "\tbar.sync 0;\n"
               "\tmad.lo.u32 %%i, %%tx, 33, %%ty;\n\tshl.b32 %%i, %%i, 2;\n"
               "\tadd.u32 %%sr, %%st, %%i;\n"
               "\tld.shared.f32 %%v0, [%%sr];\n\tld.shared.f32 %%v1, [%%sr+32];\n"
               "\tld.shared.f32 %%v2, [%%sr+64];\n\tld.shared.f32 %%v3, [%%sr+96];\n"
               "\tshl.b32 %%x, %%by, 5;\n\tadd.u32 %%x, %%x, %%tx;\n"
               "\tshl.b32 %%y, %%bx, 5;\n\tadd.u32 %%y, %%y, %%ty;\n"
               "\tmad.lo.u32 %%i, %%y, %%n, %%x;\n\tmul.wide.u32 %%off, %%i, 4;\n"
               "\tadd.u64 %%o, %%o, %%off;\n"
               "\tst.global.f32 [%%o], %%v0;\n\tadd.u64 %%o, %%o, %%rows;\n"
               "\tst.global.f32 [%%o], %%v1;\n\tadd.u64 %%o, %%o, %%rows;\n"
               "\tst.global.f32 [%%o], %%v2;\n\tadd.u64 %%o, %%o, %%rows;\n"
               "\tst.global.f32 [%%o], %%v3;\n\tret;\n}\n",
            8 * 33 * 4, 16 * 33 * 4, 24 * 33 * 4);
}

/* out = the sum of a point and its 6 neighbours, for 1 <= x, y, z < n - 1;
 * a thread takes column (x, y) and walks z; threads on the x or y boundary
 * leave at once, and no thread writes a boundary point. */
static void k_stencil7(struct ptx *p)
{
    entry(p, VK_STENCIL, vector_pointers,
          "\t.reg .u32 %tx, %ty, %bx, %by, %x, %y, %z, %n, %n1, %i;\n"
          "\t.reg .u64 %o, %a, %off, %row, %plane, %nb;\n\t.reg .f32 %v, %acc;\n"
          "\t.reg .pred %q, %e;\n");
    ptx_add(p, "\tld.param.u32 %%n, [p_n];\n"
               "\tmov.u32 %%tx, %%tid.x;\n\tmov.u32 %%ty, %%tid.y;\n"
               "\tmov.u32 %%bx, %%ctaid.x;\n\tmov.u32 %%by, %%ctaid.y;\n"
               "\tshl.b32 %%x, %%bx, 5;\n\tadd.u32 %%x, %%x, %%tx;\n"
               "\tshl.b32 %%y, %%by, 3;\n\tadd.u32 %%y, %%y, %%ty;\n"
               "\tsub.u32 %%n1, %%n, 1;\n"
               "\tsetp.eq.u32 %%q, %%x, 0;\n\tsetp.ge.u32 %%e, %%x, %%n1;\n\tor.pred %%q, %%q, %%e;\n"
               "\tsetp.eq.u32 %%e, %%y, 0;\n\tor.pred %%q, %%q, %%e;\n"
               "\tsetp.ge.u32 %%e, %%y, %%n1;\n\tor.pred %%q, %%q, %%e;\n"
               "\t@%%q bra $L_end;\n"
               /* bytes of a row and of a plane; the column starts at z = 1 */
               "\tmul.wide.u32 %%row, %%n, 4;\n\tmul.lo.u32 %%i, %%n, %%n;\n"
               "\tmul.wide.u32 %%plane, %%i, 4;\n"
               "\tmad.lo.u32 %%i, %%y, %%n, %%x;\n\tmul.wide.u32 %%off, %%i, 4;\n"
               "\tadd.u64 %%off, %%off, %%plane;\n"
               "\tadd.u64 %%a, %%a, %%off;\n\tadd.u64 %%o, %%o, %%off;\n"
               "\tmov.u32 %%z, 1;\n"
               "$L_z:\n"
               "\tld.global.f32 %%acc, [%%a];\n"
               "\tld.global.f32 %%v, [%%a+-4];\n\tadd.f32 %%acc, %%acc, %%v;\n"
               "\tld.global.f32 %%v, [%%a+4];\n\tadd.f32 %%acc, %%acc, %%v;\n"
               "\tsub.u64 %%nb, %%a, %%row;\n\tld.global.f32 %%v, [%%nb];\n"
               "\tadd.f32 %%acc, %%acc, %%v;\n"
               "\tadd.u64 %%nb, %%a, %%row;\n\tld.global.f32 %%v, [%%nb];\n"
               "\tadd.f32 %%acc, %%acc, %%v;\n"
               "\tsub.u64 %%nb, %%a, %%plane;\n\tld.global.f32 %%v, [%%nb];\n"
               "\tadd.f32 %%acc, %%acc, %%v;\n"
               "\tadd.u64 %%nb, %%a, %%plane;\n\tld.global.f32 %%v, [%%nb];\n"
               "\tadd.f32 %%acc, %%acc, %%v;\n"
               "\tst.global.f32 [%%o], %%acc;\n"
               "\tadd.u64 %%a, %%a, %%plane;\n\tadd.u64 %%o, %%o, %%plane;\n"
               "\tadd.u32 %%z, %%z, 1;\n\tsetp.lt.u32 %%q, %%z, %%n1;\n\t@%%q bra $L_z;\n"
               "$L_end:\n\tret;\n}\n");
}

/* out[g] = in[idx[g]]: the second load's address is a loaded value. */
static void k_gather(struct ptx *p)
{
    entry(p, VK_GATHER, gather_pointers,
          "\t.reg .u32 %t, %b, %nt, %g, %j;\n\t.reg .u64 %o, %a, %ix, %off;\n"
          "\t.reg .f32 %acc;\n");
    ptx_add(p, "%s", global_index);
    ptx_add(p, "\tmul.wide.u32 %%off, %%g, 4;\n\tadd.u64 %%ix, %%ix, %%off;\n"
               "\tld.global.u32 %%j, [%%ix];\n\tmul.wide.u32 %%off, %%j, 4;\n"
               "\tadd.u64 %%a, %%a, %%off;\n\tld.global.f32 %%acc, [%%a];\n");
    store_and_return(p);
}

/* 256 bins in shared memory, zeroed by the block's 256 threads; p_iters
 * grid-stride words a thread, 4 byte-bins each by atom.shared.add; then each
 * thread adds its bin to the global one (red.global.add). */
static void k_histogram(struct ptx *p)
{
    ptx_add(p, ".shared .align 4 .u32 bins[%u];\n\n", VAL_HIST_BINS);
    entry(p, VK_HISTOGRAM, vector_pointers,
          "\t.reg .u32 %t, %b, %nt, %nc, %g, %T, %idx, %j, %iters, %sb, %my, %w, %k, %s,"
          " %old, %c, %zero, %one;\n"
          "\t.reg .u64 %o, %a, %off, %p;\n\t.reg .pred %q;\n");
    ptx_add(p, "\tld.param.u32 %%iters, [p_iters];\n%s", global_index);
    ptx_add(p, "\tmov.u32 %%sb, bins;\n\tshl.b32 %%k, %%t, 2;\n\tadd.u32 %%my, %%sb, %%k;\n"
               "\tmov.u32 %%zero, 0;\n\tmov.u32 %%one, 1;\n"
               "\tst.shared.u32 [%%my], %%zero;\n\tbar.sync 0;\n"
               "\tmov.u32 %%nc, %%nctaid.x;\n\tmul.lo.u32 %%T, %%nt, %%nc;\n"
               "\tmov.u32 %%idx, %%g;\n\tmov.u32 %%j, 0;\n"
               "$L_loop:\n"
               "\tmul.wide.u32 %%off, %%idx, 4;\n\tadd.u64 %%p, %%a, %%off;\n"
               "\tld.global.u32 %%w, [%%p];\n");
    for (int byte = 0; byte < 4; byte++)
        ptx_add(p, "\tbfe.u32 %%k, %%w, %d, 8;\n\tshl.b32 %%k, %%k, 2;\n"
                   "\tadd.u32 %%s, %%sb, %%k;\n\tatom.shared.add.u32 %%old, [%%s], %%one;\n",
                8 * byte);
    ptx_add(p, "\tadd.u32 %%idx, %%idx, %%T;\n\tadd.u32 %%j, %%j, 1;\n"
               "\tsetp.lt.u32 %%q, %%j, %%iters;\n\t@%%q bra $L_loop;\n"
               "\tbar.sync 0;\n\tld.shared.u32 %%c, [%%my];\n"
               "\tmul.wide.u32 %%off, %%t, 4;\n\tadd.u64 %%o, %%o, %%off;\n"
               "\tred.global.add.u32 [%%o], %%c;\n\tret;\n}\n");
}

/* t = x, p_iters times t = (sin t + 2^-t) / 2 (a contraction: it settles
 * near 0.615 whatever the SFU's last-bit errors), then y = a x + t. */
static void k_saxpy_sfu(struct ptx *p)
{
    entry(p, VK_SFU, vector_pointers,
          "\t.reg .u32 %t, %b, %nt, %g, %j, %iters, %ai;\n\t.reg .u64 %o, %a, %off;\n"
          "\t.reg .f32 %x, %s, %e, %m, %av, %acc;\n\t.reg .pred %q;\n");
    ptx_add(p, "\tld.param.u32 %%iters, [p_iters];\n\tld.param.u32 %%ai, [p_a];\n"
               "\tmov.b32 %%av, %%ai;\n%s", global_index);
    ptx_add(p, "\tmul.wide.u32 %%off, %%g, 4;\n\tadd.u64 %%a, %%a, %%off;\n"
               "\tld.global.f32 %%x, [%%a];\n\tmov.f32 %%acc, %%x;\n\tmov.u32 %%j, 0;\n"
               "$L_loop:\n"
               "\tsin.approx.f32 %%s, %%acc;\n\tneg.f32 %%m, %%acc;\n"
               "\tex2.approx.f32 %%e, %%m;\n\tadd.f32 %%s, %%s, %%e;\n"
               "\tmul.f32 %%acc, %%s, 0f3F000000;\n"
               "\tadd.u32 %%j, %%j, 1;\n\tsetp.lt.u32 %%q, %%j, %%iters;\n\t@%%q bra $L_loop;\n"
               "\tfma.rn.f32 %%acc, %%av, %%x, %%acc;\n");
    store_and_return(p);
}

/* A warp a row (32 x 8 blocks: %tid.x the lane, %tid.y the row in the
 * block): each lane sums every 32nd product of the row, the warp adds its
 * lanes by a butterfly of shuffles, lane 0 stores. */
static void k_sgemv(struct ptx *p)
{
    entry(p, VK_SGEMV, gemv_pointers,
          "\t.reg .u32 %tx, %ty, %bx, %row, %n, %k, %i;\n\t.reg .u64 %o, %pa, %px, %off;\n"
          "\t.reg .f32 %a, %xv, %acc, %t;\n\t.reg .pred %q;\n");
    ptx_add(p, "\tld.param.u32 %%n, [p_n];\n"
               "\tmov.u32 %%tx, %%tid.x;\n\tmov.u32 %%ty, %%tid.y;\n\tmov.u32 %%bx, %%ctaid.x;\n"
               "\tshl.b32 %%row, %%bx, 3;\n\tadd.u32 %%row, %%row, %%ty;\n"
               "\tmad.lo.u32 %%i, %%row, %%n, %%tx;\n\tmul.wide.u32 %%off, %%i, 4;\n"
               "\tadd.u64 %%pa, %%pa, %%off;\n"
               "\tmul.wide.u32 %%off, %%tx, 4;\n\tadd.u64 %%px, %%px, %%off;\n"
               "\tmov.f32 %%acc, 0f00000000;\n\tmov.u32 %%k, 0;\n"
               "$L_k:\n"
               "\tld.global.f32 %%a, [%%pa];\n\tld.global.f32 %%xv, [%%px];\n"
               "\tfma.rn.f32 %%acc, %%a, %%xv, %%acc;\n"
               "\tadd.u64 %%pa, %%pa, 128;\n\tadd.u64 %%px, %%px, 128;\n"
               "\tadd.u32 %%k, %%k, 32;\n\tsetp.lt.u32 %%q, %%k, %%n;\n\t@%%q bra $L_k;\n");
    for (int lane = 16; lane >= 1; lane /= 2)
        ptx_add(p, "\tshfl.sync.bfly.b32 %%t, %%acc, %d, 31, -1;\n"
                   "\tadd.f32 %%acc, %%acc, %%t;\n", lane);
    ptx_add(p, "\tsetp.eq.u32 %%q, %%tx, 0;\n"
               "\tmul.wide.u32 %%off, %%row, 4;\n\tadd.u64 %%o, %%o, %%off;\n"
               "\t@%%q st.global.f32 [%%o], %%acc;\n\tret;\n}\n");
}

static void k_bw_read(struct ptx *p)
{
    grid_stride(p, VK_BW_READ, "%v<4>", 16,
                "\tld.global.v4.f32 {%v0, %v1, %v2, %v3}, [%p];\n"
                "\tadd.f32 %acc, %acc, %v0;\n\tadd.f32 %acc, %acc, %v1;\n"
                "\tadd.f32 %acc, %acc, %v2;\n\tadd.f32 %acc, %acc, %v3;\n");
    /* never true for inputs of 1.0: keeps the loads alive without traffic */
    ptx_add(p, "\tsetp.eq.f32 %%q, %%acc, 0fBF800000;\n"
               "\t@%%q st.global.f32 [%%o], %%acc;\n\tret;\n}\n");
}

/* The L2's read bandwidth: every thread p_iters 16-byte loads that skip the
 * L1 (ld.global.cg), a grid stride apart, wrapped to the first p_nvec
 * vectors (a quarter of the L2, which the warm-up launch brings in; the
 * grid is at most p_nvec threads, so one subtraction wraps). */
static void k_l2_read(struct ptx *p)
{
    entry(p, VK_L2_READ, vector_pointers,
          "\t.reg .u32 %t, %b, %nt, %nc, %g, %T, %idx, %j, %iters, %nvec;\n"
          "\t.reg .u64 %o, %a, %off, %p;\n\t.reg .f32 %v<4>, %acc;\n\t.reg .pred %q, %w;\n");
    ptx_add(p, "\tld.param.u32 %%iters, [p_iters];\n\tld.param.u32 %%nvec, [p_nvec];\n%s",
            global_index);
    ptx_add(p, "\tmov.u32 %%nc, %%nctaid.x;\n\tmul.lo.u32 %%T, %%nt, %%nc;\n"
               "\tmov.f32 %%acc, 0f00000000;\n\tmov.u32 %%idx, %%g;\n\tmov.u32 %%j, 0;\n"
               "$L_loop:\n"
               "\tmul.wide.u32 %%off, %%idx, 16;\n\tadd.u64 %%p, %%a, %%off;\n"
               "\tld.global.cg.v4.f32 {%%v0, %%v1, %%v2, %%v3}, [%%p];\n"
               "\tadd.f32 %%acc, %%acc, %%v0;\n\tadd.f32 %%acc, %%acc, %%v1;\n"
               "\tadd.f32 %%acc, %%acc, %%v2;\n\tadd.f32 %%acc, %%acc, %%v3;\n"
               "\tadd.u32 %%idx, %%idx, %%T;\n\tsetp.ge.u32 %%w, %%idx, %%nvec;\n"
               "\t@%%w sub.u32 %%idx, %%idx, %%nvec;\n"
               "\tadd.u32 %%j, %%j, 1;\n\tsetp.lt.u32 %%q, %%j, %%iters;\n\t@%%q bra $L_loop;\n"
               /* never true for inputs of 1.0: keeps the loads alive without traffic */
               "\tsetp.eq.f32 %%q, %%acc, 0fBF800000;\n"
               "\t@%%q st.global.f32 [%%o], %%acc;\n\tret;\n}\n");
}

static void (*const writers[VK_ALL])(struct ptx *) = {
    [VK_COPY] = k_copy,         [VK_STRIDED] = k_strided,   [VK_FFMA] = k_ffma,
    [VK_MIXED] = k_mixed,       [VK_REDUCE] = k_reduce,     [VK_MM_NAIVE] = k_mm_naive,
    [VK_MM_TILED] = k_mm_tiled, [VK_MM_ABT] = k_mm_abt,
    [VK_TR_NAIVE] = k_transpose_naive, [VK_TR_TILED] = k_transpose_tiled,
    [VK_STENCIL] = k_stencil7,  [VK_GATHER] = k_gather,     [VK_HISTOGRAM] = k_histogram,
    [VK_MM_TILED32] = k_mm_tiled32, [VK_SFU] = k_saxpy_sfu, [VK_SGEMV] = k_sgemv,
    [VK_BW_READ] = k_bw_read,   [VK_L2_READ] = k_l2_read,
};

char *val_ptx(enum val_kernel_id id, int cc_major, int cc_minor)
{
    struct ptx p;
    if ((unsigned)id >= VK_ALL)
        return NULL;
    ptx_init(&p);
    ptx_header(&p, cc_major, cc_minor);
    writers[id](&p);
    return ptx_take(&p);
}
