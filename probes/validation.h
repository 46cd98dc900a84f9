/*
 * The model-validation run: sixteen kernels of different character, timed
 * on the GPU through the Driver API, plus the device-memory, L2 and
 * host-link bandwidths the model needs.
 *
 * DESIGN
 * Every kernel is PTX written here (validation_ptx.c), one module each, with
 * its launch shape and sizes fixed in the table below; the worker adds each
 * kernel's description (model/ptx_desc.h) and the daemon's saver predicts
 * it from the stored parameters, so this file only measures.
 * Timing: host CLOCK_MONOTONIC around `launches` back-to-back launches and
 * one cuCtxSynchronize (the Driver API table has no events), after one
 * untimed warm-up launch; the per-launch time is the interval divided by
 * the launches, repeated `repeats` times (median, min, max kept). Each
 * kernel's output is checked against its known answer before its time is
 * trusted: the inputs are all 1.0f, or one of the host-made patterns of
 * validation_data.h, whose answers that file computes.
 * Bandwidth: a read-only kernel (16-byte coalesced loads over 2 GiB, nothing
 * stored) gives the device-memory bandwidth; the same loads kept in the L2
 * (ld.global.cg over a quarter of the L2's size, re-read many times) give
 * the L2's read bandwidth; cuMemcpyHtoD of 256 MiB from pageable host
 * memory gives the host link's.
 *
 *   name            character                                  grid x block
 *   copy            streaming copy, 2^27 floats                 2^19 x 256
 *   strided         uncoalesced reads: a 128-byte stride per      4096 x 256
 *                   thread, 16 per thread over 2 GiB
 *   ffma            compute-bound: 8 FMA chains, 512 x 32 FMAs   4096 x 256
 *   mixed           coalesced read, 64 FMAs, coalesced write   2^18 x 256
 *   reduce          block sums in shared memory, 9 barriers    2^16 x 256
 *   matmul_naive    C = A x B, one thread an element           128x128 x 16x16
 *   matmul_tiled    C = A x B through 16x16 shared tiles       128x128 x 16x16
 *   matmul_abt      C = A x transpose(B), naive (uncoalesced)  128x128 x 16x16
 *   transpose_naive out[x][y] = in[y][x], 4096^2: coalesced     256x256 x 16x16
 *                   read, strided write
 *   transpose_tiled the same through a padded 32x33 shared tile, 128x128 x 32x8
 *                   one barrier, 4 rows a thread
 *   stencil7        7-point stencil on a 256^3 grid, interior    8x32 x 32x8
 *                   points, a thread a column walking z
 *   gather          out[i] = in[idx[i]], idx a permutation of    2^16 x 256
 *                   2^24 (host LCG)
 *   histogram       2^26 bytes into 256 bins: shared atomics,      1024 x 256
 *                   then one global reduction a bin a block
 *   matmul_tiled32  C = A x B through 32x32 shared tiles         64x64 x 32x32
 *   saxpy_sfu       y = a x + t(x), t 32 steps of sin.approx and   2^16 x 256
 *                   ex2.approx (the SFU), streaming 2^24 floats
 *   sgemv           y = A x, 8192^2: a warp a row, coalesced,     1024 x 32x8
 *                   butterfly shuffle reduction
 * (matrices 2048 x 2048 floats).
 */
#ifndef GPUPROBE_PROBES_VALIDATION_H
#define GPUPROBE_PROBES_VALIDATION_H

#include <jansson.h>
#include <stddef.h>

enum val_kernel_id {
    VK_COPY,
    VK_STRIDED,
    VK_FFMA,
    VK_MIXED,
    VK_REDUCE,
    VK_MM_NAIVE,
    VK_MM_TILED,
    VK_MM_ABT,
    VK_TR_NAIVE,
    VK_TR_TILED,
    VK_STENCIL,
    VK_GATHER,
    VK_HISTOGRAM,
    VK_MM_TILED32,
    VK_SFU,
    VK_SGEMV,
    VK_COUNT,
    VK_BW_READ = VK_COUNT,     /* the bandwidth kernels, not validated: device memory */
    VK_L2_READ,                /* ... and the L2 */
    VK_ALL
};

#define VAL_MAX_PARAMS 4

struct val_kernel {
    const char *name;
    const char *character;
    const char *entry;
    unsigned grid[3], block[3];
    int launches;               /* timed back to back per measurement */
    int nints;                  /* integer parameters after the pointers */
    const char *int_names[VAL_MAX_PARAMS];
    unsigned ints[VAL_MAX_PARAMS];
    int pointers;               /* pointer parameters (output first) */
};

extern const struct val_kernel val_kernels[VK_ALL];

#define VAL_COPY_N (1u << 27)
#define VAL_STRIDED_ITERS 16
#define VAL_FFMA_ITERS 512
#define VAL_MIXED_N (1u << 26)
#define VAL_MIXED_ITERS 16
#define VAL_REDUCE_N (1u << 26)
#define VAL_MM_N 2048u
#define VAL_TR_N 4096u               /* transposes: VAL_TR_N^2 = 2^24 floats */
#define VAL_ST_N 256u                /* stencil grid: VAL_ST_N^3 = 2^24 floats */
#define VAL_GATHER_N (1u << 24)
#define VAL_HIST_BYTES (1u << 26)
#define VAL_HIST_BINS 256u
#define VAL_HIST_ITERS 64            /* 4-byte words a thread: 2^24 words / (1024 x 256) */
#define VAL_SFU_N (1u << 24)
#define VAL_SFU_ITERS 32
#define VAL_SFU_A 0x40000000u        /* a = 2.0f */
#define VAL_GEMV_N 8192u
#define VAL_BW_ITERS 32
#define VAL_L2_ITERS 256             /* 16-byte loads a thread per launch of the L2 kernel */
#define VAL_L2_BLOCKS 1024u          /* its grid, fewer when a quarter of the L2 holds less */
#define VAL_BIG_BYTES (2ull << 30)   /* the 2 GiB buffer the strided and bandwidth kernels read */

/* The module of kernel id for a device of cc major.minor (malloc'd; NULL
 * when memory ran out). */
char *val_ptx(enum val_kernel_id id, int cc_major, int cc_minor);

/* Runs the validation measurements on a device (UUID or index), each kernel
 * timed `repeats` times (1..50). The document (db/model_store.h) with, per kernel,
 * "ptx" (its module) for the description; NULL with the reason when nothing
 * can run. A kernel that fails or computes a wrong answer has
 * {"error": ...} as its measured_s. */
json_t *validation_run(const char *device, int repeats, char *err, size_t errlen);

#endif
