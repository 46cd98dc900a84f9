/*
 * Matrix multiply C = A x B and C = A x B^T, untiled and tiled
 * (tests/gpu/kernels/synth/matmul-*.cu), the worked example of the tile
 * communication operator patent (docs/trace-synth.md).
 *
 * DESIGN
 * C is M x N, A is M x K, B is K x N (or N x K for the B^T forms), all
 * row-major. One thread per element of C: col = blockIdx.x * blockDim.x +
 * threadIdx.x (the fast index, so a warp's threads hold neighbouring
 * columns), row from y. The untiled kernels read A and B straight from
 * global memory in the k loop; the tiled ones (block T x T) stage one T x T
 * tile of A and one of B in shared memory per step of the k loop, thread
 * (tx, ty) loading A(row, t*T + tx) and B(t*T + ty, col) (B^T: B(col0 + ty,
 * t*T + tx), so that those loads too run along rows), and only those global
 * loads and the final store appear in the trace. Edge tiles are partial:
 * a thread outside A or B loads nothing (the kernel writes 0 to shared
 * memory), a thread outside C stores nothing but still helps load.
 */
#include "trace/synth_patterns.h"
#include "trace/tiles.h"

enum { M, N, K };
enum { ARR_A, ARR_B, ARR_C };

/* Untiled: sum += A[..] * B[..]: A's value waits for B's load (flag 0), B's
 * is used at once (flag 1). */
static const struct synth_insn naive_insns[] = {
    {"ld A[row*K+k]", ARR_A, 0, 0},
    {"ld B[k*N+col]", ARR_B, 1, 0},
    {"st C[row*N+col]", ARR_C, 0, 1},
};
static const struct synth_insn naive_bt_insns[] = {
    {"ld A[row*K+k]", ARR_A, 0, 0},
    {"ld B[col*K+k]", ARR_B, 1, 0},
    {"st C[row*N+col]", ARR_C, 0, 1},
};
/* Tiled: each load is stored to shared memory before the next global
 * request (flag 1). */
static const struct synth_insn tiled_insns[] = {
    {"ld A[row*K+t*T+tx]", ARR_A, 1, 0},
    {"ld B[(t*T+ty)*N+col]", ARR_B, 1, 0},
    {"st C[row*N+col]", ARR_C, 0, 1},
};
static const struct synth_insn tiled_bt_insns[] = {
    {"ld A[row*K+t*T+tx]", ARR_A, 1, 0},
    {"ld B[(bx*T+ty)*K+t*T+tx]", ARR_B, 1, 0},
    {"st C[row*N+col]", ARR_C, 0, 1},
};

static int setup(struct synth_kernel *k, char *why, size_t len)
{
    uint64_t a, b, c;
    if (synth_mul(k->dim[M], k->dim[K], &a, why, len) < 0 ||
        synth_mul(k->dim[K], k->dim[N], &b, why, len) < 0 ||
        synth_mul(k->dim[M], k->dim[N], &c, why, len) < 0)
        return -1;
    synth_array(k, ARR_A, "A", a);
    synth_array(k, ARR_B, "B", b);
    synth_array(k, ARR_C, "C", c);
    k->grid[0] = tile_count(k->dim[N], k->block[0]);
    k->grid[1] = tile_count(k->dim[M], k->block[1]);
    return 0;
}

static void naive_thread(const struct synth_kernel *k, struct synth_emit *e, int bt, uint64_t bx,
                         uint64_t by, uint32_t tx, uint32_t ty)
{
    uint64_t col = tile_index(bx, k->block[0], tx), row = tile_index(by, k->block[1], ty);
    uint64_t n = k->dim[N], kk = k->dim[K];
    if (row >= k->dim[M] || col >= n)
        return;
    for (uint64_t i = 0; i < kk; i++) {
        synth_emit_req(e, 0, row * kk + i);
        synth_emit_req(e, 1, bt ? col * kk + i : i * n + col);
    }
    synth_emit_req(e, 2, row * n + col);
}

static void naive(const struct synth_kernel *k, struct synth_emit *e, uint64_t bx, uint64_t by,
                  uint32_t tx, uint32_t ty)
{
    naive_thread(k, e, 0, bx, by, tx, ty);
}

static void naive_bt(const struct synth_kernel *k, struct synth_emit *e, uint64_t bx, uint64_t by,
                     uint32_t tx, uint32_t ty)
{
    naive_thread(k, e, 1, bx, by, tx, ty);
}

static void tiled_thread(const struct synth_kernel *k, struct synth_emit *e, int bt, uint64_t bx,
                         uint64_t by, uint32_t tx, uint32_t ty)
{
    uint64_t t = k->tile, m = k->dim[M], n = k->dim[N], kk = k->dim[K];
    uint64_t row = tile_index(by, t, ty), col = tile_index(bx, t, tx);
    for (uint64_t s = 0; s < tile_count(kk, t); s++) {
        uint64_t ka = tile_index(s, t, tx);
        if (row < m && ka < kk)
            synth_emit_req(e, 0, row * kk + ka);
        if (bt) {
            uint64_t brow = tile_index(bx, t, ty); /* a row of B = a column of C */
            if (brow < n && ka < kk)
                synth_emit_req(e, 1, brow * kk + ka);
        } else {
            uint64_t kb = tile_index(s, t, ty);
            if (col < n && kb < kk)
                synth_emit_req(e, 1, kb * n + col);
        }
    }
    if (row < m && col < n)
        synth_emit_req(e, 2, row * n + col);
}

static void tiled(const struct synth_kernel *k, struct synth_emit *e, uint64_t bx, uint64_t by,
                  uint32_t tx, uint32_t ty)
{
    tiled_thread(k, e, 0, bx, by, tx, ty);
}

static void tiled_bt(const struct synth_kernel *k, struct synth_emit *e, uint64_t bx, uint64_t by,
                     uint32_t tx, uint32_t ty)
{
    tiled_thread(k, e, 1, bx, by, tx, ty);
}

#define MATMUL(ID, NAME, SUMMARY, TILE, INSNS, THREAD)                                           \
    const struct synth_pattern ID = {.name = NAME,                                               \
                                     .summary = SUMMARY,                                         \
                                     .sizes = "N or M,N,K",                                      \
                                     .max_sizes = 3,                                             \
                                     .dim_name = {"M", "N", "K"},                                \
                                     .default_tile = TILE,                                       \
                                     .default_block = {16, 16},                                  \
                                     .insns = INSNS,                                             \
                                     .ninsns = 3,                                                \
                                     .setup = setup,                                             \
                                     .thread = THREAD}

MATMUL(synth_matmul_naive, "matmul-naive", "C = A x B, one thread per C(row,col), A and B from global memory",
       0, naive_insns, naive);
MATMUL(synth_matmul_naive_bt, "matmul-naive-bt", "C = A x B^T (B is N x K), untiled: B read down its columns",
       0, naive_bt_insns, naive_bt);
MATMUL(synth_matmul_tiled, "matmul-tiled", "C = A x B with T x T tiles of A and B staged in shared memory",
       16, tiled_insns, tiled);
MATMUL(synth_matmul_tiled_bt, "matmul-tiled-bt", "C = A x B^T with T x T tiles (B's tile loaded along its rows)",
       16, tiled_bt_insns, tiled_bt);
