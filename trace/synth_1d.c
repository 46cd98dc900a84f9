/*
 * One-dimensional kernels: one pass of a tree reduction, a streaming copy
 * and a strided gather (tests/gpu/kernels/synth/{reduce,stream,strided}.cu).
 *
 * DESIGN
 * reduce is one launch of the classic shared-memory tree reduction with the
 * first addition done while loading: block b of B threads sums elements
 * [2bB, 2bB + 2B) of in, thread i loading in[2bB + i] and in[2bB + B + i]
 * (where they exist), the tree runs in shared memory (no global traffic),
 * and thread 0 stores the block's sum to out[b]. A whole reduction repeats
 * the launch on the partial sums (--size ceil(N / 2B)) until one is left.
 * stream copies out[i] = in[i]; strided reads in[i*S] (in holds N*S
 * elements) into out[i], the access pattern of a column walk.
 */
#include "trace/synth_patterns.h"
#include "trace/tiles.h"

enum { ARR_IN, ARR_OUT };

/* reduce: sum = in[i]; sum += in[i+B]: the first value waits for the second
 * load (flag 0), the second is added and stored to shared memory at once. */
static const struct synth_insn reduce_insns[] = {
    {"ld in[2*b*B+tx]", ARR_IN, 0, 0},
    {"ld in[2*b*B+B+tx]", ARR_IN, 1, 0},
    {"st out[b] (tx == 0)", ARR_OUT, 0, 1},
};
static const struct synth_insn stream_insns[] = {
    {"ld in[i]", ARR_IN, 1, 0},
    {"st out[i]", ARR_OUT, 0, 1},
};
static const struct synth_insn strided_insns[] = {
    {"ld in[i*S]", ARR_IN, 1, 0},
    {"st out[i]", ARR_OUT, 0, 1},
};

static int reduce_setup(struct synth_kernel *k, char *why, size_t len)
{
    (void)why, (void)len;
    uint64_t per_block = 2ull * k->block[0];
    k->grid[0] = tile_count(k->dim[0], per_block);
    k->grid[1] = 1;
    synth_array(k, ARR_IN, "in", k->dim[0]);
    synth_array(k, ARR_OUT, "out", k->grid[0]);
    return 0;
}

static void reduce(const struct synth_kernel *k, struct synth_emit *e, uint64_t bx, uint64_t by,
                   uint32_t tx, uint32_t ty)
{
    (void)by, (void)ty;
    uint64_t b = k->block[0], i = tile_index(bx, 2 * b, tx), n = k->dim[0];
    if (i < n)
        synth_emit_req(e, 0, i);
    if (i + b < n)
        synth_emit_req(e, 1, i + b);
    if (tx == 0)
        synth_emit_req(e, 2, bx);
}

static int copy_setup(struct synth_kernel *k, char *why, size_t len)
{
    uint64_t in = k->dim[0];
    if (k->stride && synth_mul(k->dim[0], k->stride, &in, why, len) < 0)
        return -1;
    k->grid[0] = tile_count(k->dim[0], k->block[0]);
    k->grid[1] = 1;
    synth_array(k, ARR_IN, "in", in);
    synth_array(k, ARR_OUT, "out", k->dim[0]);
    return 0;
}

/* stream and strided: in[i * stride] -> out[i] (stream: stride 0 means 1). */
static void copy(const struct synth_kernel *k, struct synth_emit *e, uint64_t bx, uint64_t by,
                 uint32_t tx, uint32_t ty)
{
    (void)by, (void)ty;
    uint64_t i = tile_index(bx, k->block[0], tx);
    if (i >= k->dim[0])
        return;
    synth_emit_req(e, 0, k->stride ? i * k->stride : i);
    synth_emit_req(e, 1, i);
}

const struct synth_pattern synth_reduce = {
    .name = "reduce",
    .summary = "one pass of a tree reduction (2 loads per thread, one store per block)",
    .sizes = "N",
    .max_sizes = 1,
    .dim_name = {"N"},
    .default_block = {256, 1},
    .insns = reduce_insns,
    .ninsns = 3,
    .setup = reduce_setup,
    .thread = reduce,
};

const struct synth_pattern synth_stream = {
    .name = "stream",
    .summary = "streaming copy out[i] = in[i]",
    .sizes = "N",
    .max_sizes = 1,
    .dim_name = {"N"},
    .default_block = {256, 1},
    .insns = stream_insns,
    .ninsns = 2,
    .setup = copy_setup,
    .thread = copy,
};

const struct synth_pattern synth_strided = {
    .name = "strided",
    .summary = "strided gather out[i] = in[i*S] (--stride S elements, default 32)",
    .sizes = "N",
    .max_sizes = 1,
    .dim_name = {"N"},
    .default_block = {256, 1},
    .takes_stride = 1,
    .insns = strided_insns,
    .ninsns = 2,
    .setup = copy_setup,
    .thread = copy,
};
