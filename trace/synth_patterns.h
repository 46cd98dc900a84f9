/*
 * The pattern descriptions behind trace/synth.h, one per kernel, and the
 * helpers their setup functions share. Only trace/synth*.c include this.
 *
 * DESIGN
 * Each pattern file holds the kernels of one family (matrix multiply,
 * transpose, stencil, reduction and copies) as data (the instruction
 * table) plus two small functions (setup: grid and arrays; thread: one
 * thread's requests). The CUDA C each describes is
 * tests/gpu/kernels/synth/NAME.cu; keep the two in step.
 */
#ifndef GPUPROBE_TRACE_SYNTH_PATTERNS_H
#define GPUPROBE_TRACE_SYNTH_PATTERNS_H

#include "trace/synth.h"

extern const struct synth_pattern synth_matmul_naive, synth_matmul_naive_bt, synth_matmul_tiled,
    synth_matmul_tiled_bt, synth_transpose_naive, synth_transpose_tiled, synth_stencil7,
    synth_reduce, synth_stream, synth_strided;

/* *out = a * b; -1 (with why) when that passes 2^64. */
int synth_mul(uint64_t a, uint64_t b, uint64_t *out, char *why, size_t len);

/* Sets array i of k: its name and element count. */
void synth_array(struct synth_kernel *k, int i, const char *name, uint64_t elems);

#endif
