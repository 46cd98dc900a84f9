/*
 * out = in^TILE through a TILE x TILE shared-memory tile: loads and stores along rows.
 * The kernel trace/synth_transpose.c describes for `gpuprobe trace synth --pattern transpose-tiled`
 * (docs/trace-synth.md): the same index arithmetic, the same global loads
 * and stores in the same order, one memory instruction per access (loops
 * carry `#pragma unroll 1`). Launch: grid (ceil(C/TILE), ceil(R/TILE)), block (TILE, TILE); TILE is a compile-time constant (-DTILE=16 by default; the macro is not named T, which CUDA's headers use as a template parameter).
 */
#ifndef TILE
#define TILE 16
#endif

extern "C" __global__ void transpose_tiled(const float *in, float *out, size_t R, size_t C)
{
    __shared__ float tile[TILE][TILE + 1];
    unsigned int tx = threadIdx.x, ty = threadIdx.y;
    size_t x = (size_t)blockIdx.x * TILE + tx, y = (size_t)blockIdx.y * TILE + ty;
    if (x < C && y < R)
        tile[ty][tx] = in[y * C + x]; /* insn 0 (flag 1) */
    __syncthreads();
    size_t ox = (size_t)blockIdx.y * TILE + tx, oy = (size_t)blockIdx.x * TILE + ty; /* out is C x R */
    if (ox < R && oy < C)
        out[oy * R + ox] = tile[tx][ty]; /* insn 1 */
}
