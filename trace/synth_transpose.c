/*
 * Matrix transpose out = in^T (tests/gpu/kernels/synth/transpose-*.cu).
 *
 * DESIGN
 * in is R x C, out is C x R, row-major. Untiled: thread (x, y) with x the
 * column (the fast index) reads in(y, x), coalesced, and writes out(x, y),
 * a column of out, so a warp's stores are R elements apart. Tiled (block
 * T x T): the block copies tile (bx, by) of in into shared memory, row by
 * row, then, after a barrier, writes it as tile (by, bx) of out, thread
 * (tx, ty) writing out(bx*T + ty, by*T + tx) from tile[tx][ty]: both the
 * loads and the stores run along rows. Partial edge tiles: threads outside
 * in load nothing, threads whose out element lies outside store nothing.
 */
#include "trace/synth_patterns.h"
#include "trace/tiles.h"

enum { R, C };
enum { ARR_IN, ARR_OUT };

/* The load feeds the store (naive) or a shared-memory store (tiled) before
 * the next global request: flag 1. */
static const struct synth_insn naive_insns[] = {
    {"ld in[y*C+x]", ARR_IN, 1, 0},
    {"st out[x*R+y]", ARR_OUT, 0, 1},
};
static const struct synth_insn tiled_insns[] = {
    {"ld in[(by*T+ty)*C+bx*T+tx]", ARR_IN, 1, 0},
    {"st out[(bx*T+ty)*R+by*T+tx]", ARR_OUT, 0, 1},
};

static int setup(struct synth_kernel *k, char *why, size_t len)
{
    uint64_t n;
    if (synth_mul(k->dim[R], k->dim[C], &n, why, len) < 0)
        return -1;
    synth_array(k, ARR_IN, "in", n);
    synth_array(k, ARR_OUT, "out", n);
    k->grid[0] = tile_count(k->dim[C], k->block[0]);
    k->grid[1] = tile_count(k->dim[R], k->block[1]);
    return 0;
}

static void naive(const struct synth_kernel *k, struct synth_emit *e, uint64_t bx, uint64_t by,
                  uint32_t tx, uint32_t ty)
{
    uint64_t x = tile_index(bx, k->block[0], tx), y = tile_index(by, k->block[1], ty);
    if (x >= k->dim[C] || y >= k->dim[R])
        return;
    synth_emit_req(e, 0, y * k->dim[C] + x);
    synth_emit_req(e, 1, x * k->dim[R] + y);
}

static void tiled(const struct synth_kernel *k, struct synth_emit *e, uint64_t bx, uint64_t by,
                  uint32_t tx, uint32_t ty)
{
    uint64_t t = k->tile, rows = k->dim[R], cols = k->dim[C];
    uint64_t x = tile_index(bx, t, tx), y = tile_index(by, t, ty);
    if (x < cols && y < rows)
        synth_emit_req(e, 0, y * cols + x);
    uint64_t ox = tile_index(by, t, tx), oy = tile_index(bx, t, ty); /* out is C x R */
    if (ox < rows && oy < cols)
        synth_emit_req(e, 1, oy * rows + ox);
}

const struct synth_pattern synth_transpose_naive = {
    .name = "transpose-naive",
    .summary = "out = in^T, one thread per element: reads along rows, writes down columns",
    .sizes = "N or R,C",
    .max_sizes = 2,
    .dim_name = {"R", "C"},
    .default_block = {16, 16},
    .insns = naive_insns,
    .ninsns = 2,
    .setup = setup,
    .thread = naive,
};

const struct synth_pattern synth_transpose_tiled = {
    .name = "transpose-tiled",
    .summary = "out = in^T through a T x T shared-memory tile: reads and writes along rows",
    .sizes = "N or R,C",
    .max_sizes = 2,
    .dim_name = {"R", "C"},
    .default_tile = 16,
    .insns = tiled_insns,
    .ninsns = 2,
    .setup = setup,
    .thread = tiled,
};
