/*
 * What the model-validation kernels read and what they must write: the
 * buffers each kernel's pointers are bound to, the host-made input patterns,
 * and every kernel's known answer (see validation.h for the kernels).
 *
 * DESIGN
 * Plain C, no CUDA, so the answers are unit-tested without a GPU. The first
 * eight kernels read buffers of 1.0f and write one value everywhere (the run
 * reads back two words, as it always has). The second eight read patterns
 * whose answers differ from word to word, and the run reads back and checks
 * their whole output, so a wrong index anywhere shows:
 *   VI_SEQ    word i = (float)i, exact below 2^24 (the transposes, gather's
 *             data): out[j] names the input element it came from;
 *   VI_PERM   word i = the i-th value of a full-period LCG modulo 2^24
 *             (x' = 1664525 x + 1013904223, from 0): a permutation of
 *             [0, 2^24) that scatters neighbouring lanes (gather's indices);
 *   VI_GRID   word i = (float)(hash(i) >> 22), an integer below 1024 (the
 *             stencil's grid): 7 of them add up exactly in any order, and a
 *             neighbour taken from the wrong place changes the sum;
 *   VI_BYTES  byte j = hash(j) >> 24, little-endian in the words (the
 *             histogram's input): bins of about 2^18 each, spread as random
 *             bytes are.
 * Each answer is recomputed here from the pattern's formula, not read back
 * from a host copy of the input. saxpy_sfu's SFU instructions are
 * approximate, so its answer is compared within a tolerance; every other
 * answer is exact.
 */
#ifndef GPUPROBE_PROBES_VALIDATION_DATA_H
#define GPUPROBE_PROBES_VALIDATION_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "probes/validation.h"

/* The run's device buffers: the first five are filled with 1.0f, the rest
 * with the pattern of the same name. */
enum val_buffer {
    VB_OUT,    /* 512 MiB, every kernel's output but the matrix products' */
    VB_BIG,    /* 2 GiB */
    VB_MA,     /* the matrices, 2048 x 2048 */
    VB_MB,
    VB_MC,
    VB_SEQ,    /* the patterns, VAL_INPUT_WORDS words each */
    VB_PERM,
    VB_GRID,
    VB_BYTES,
    VB_COUNT
};

enum val_input { VI_SEQ, VI_PERM, VI_GRID, VI_BYTES, VI_COUNT };

#define VAL_INPUT_WORDS (1u << 24)
#define VAL_SFU_TOLERANCE 1e-4   /* absolute, on an answer near 2.6 */

/* Kernel id's pointer parameters (output first, val_kernels[id].pointers of
 * them) as buffers. */
extern const enum val_buffer val_bindings[VK_ALL][3];

/* The bytes of buffer b. */
uint64_t val_buffer_bytes(enum val_buffer b);

/* The fill (trace capture's, probes/capture.h) that stands for buffer b's
 * contents where the addresses a kernel makes depend on them: gather's
 * indices are a permutation (perm:1), the histogram's bytes random (rand:1);
 * the others' values do not move an address (f32:1). */
const char *val_buffer_fill(enum val_buffer b);

/* The buffer that holds input in. */
enum val_buffer val_input_buffer(enum val_input in);

/* Fills w[0..VAL_INPUT_WORDS) with input `in`. */
void val_input_fill(enum val_input in, uint32_t *w);

/* The permutation's value after x (VI_PERM's step). */
uint32_t val_perm_next(uint32_t x);

/* How many 32-bit words of kernel id's output, from its first, the run
 * reads back and checks (0: the bandwidth kernels, which are not checked). */
size_t val_check_words(enum val_kernel_id id);

/* 0 if out[0..val_check_words(id)) is what kernel id writes in one launch
 * over its bound buffers, the checked words having been zeroed before it;
 * else -1 with the first wrong word, what it holds and what it should. */
int val_output_check(enum val_kernel_id id, const uint32_t *out, char *err, size_t errlen);

#endif
