/*
 * The 3-D 7-point stencil out = f(in and its six neighbours)
 * (tests/gpu/kernels/synth/stencil7.cu).
 *
 * DESIGN
 * in and out are X x Y x Z, element (x, y, z) at (z*Y + y)*X + x. A 2-D
 * grid of 2-D blocks covers the x-y plane, one thread per (x, y) column
 * (x the fast index), and each thread sweeps z from 1 to Z-2, the usual
 * 2.5-D form. Only interior points are computed: threads on the faces or
 * past them issue nothing. Per z: the centre, x-1, x+1, y-1, y+1, z-1,
 * z+1, all loaded before the arithmetic (one expression), then the store.
 */
#include "trace/synth_patterns.h"
#include "trace/tiles.h"

enum { X, Y, Z };
enum { ARR_IN, ARR_OUT };

/* The seven loads are the operands of one expression: only the last one's
 * value is used before another global request (flag 1). */
static const struct synth_insn insns[] = {
    {"ld in[i]", ARR_IN, 0, 0},     {"ld in[i-1]", ARR_IN, 0, 0},   {"ld in[i+1]", ARR_IN, 0, 0},
    {"ld in[i-X]", ARR_IN, 0, 0},   {"ld in[i+X]", ARR_IN, 0, 0},   {"ld in[i-X*Y]", ARR_IN, 0, 0},
    {"ld in[i+X*Y]", ARR_IN, 1, 0}, {"st out[i]", ARR_OUT, 0, 1},
};

static int setup(struct synth_kernel *k, char *why, size_t len)
{
    uint64_t plane, n;
    if (synth_mul(k->dim[X], k->dim[Y], &plane, why, len) < 0 ||
        synth_mul(plane, k->dim[Z], &n, why, len) < 0)
        return -1;
    synth_array(k, ARR_IN, "in", n);
    synth_array(k, ARR_OUT, "out", n);
    k->grid[0] = tile_count(k->dim[X], k->block[0]);
    k->grid[1] = tile_count(k->dim[Y], k->block[1]);
    return 0;
}

static void thread(const struct synth_kernel *k, struct synth_emit *e, uint64_t bx, uint64_t by,
                   uint32_t tx, uint32_t ty)
{
    uint64_t nx = k->dim[X], ny = k->dim[Y], nz = k->dim[Z], plane = nx * ny;
    uint64_t x = tile_index(bx, k->block[0], tx), y = tile_index(by, k->block[1], ty);
    if (x < 1 || y < 1 || x + 1 >= nx || y + 1 >= ny)
        return;
    for (uint64_t z = 1; z + 1 < nz; z++) {
        uint64_t i = z * plane + y * nx + x;
        synth_emit_req(e, 0, i);
        synth_emit_req(e, 1, i - 1);
        synth_emit_req(e, 2, i + 1);
        synth_emit_req(e, 3, i - nx);
        synth_emit_req(e, 4, i + nx);
        synth_emit_req(e, 5, i - plane);
        synth_emit_req(e, 6, i + plane);
        synth_emit_req(e, 7, i);
    }
}

const struct synth_pattern synth_stencil7 = {
    .name = "stencil7",
    .summary = "3-D 7-point stencil, one thread per (x,y) column sweeping z over the interior",
    .sizes = "N or X,Y,Z",
    .max_sizes = 3,
    .dim_name = {"X", "Y", "Z"},
    .default_block = {16, 16},
    .insns = insns,
    .ninsns = 8,
    .setup = setup,
    .thread = thread,
};
