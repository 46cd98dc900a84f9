/*
 * C = A x B^TILE with TILE x TILE tiles; B's tile is loaded along B's rows (coalesced).
 * The kernel trace/synth_matmul.c describes for `gpuprobe trace synth --pattern matmul-tiled-bt`
 * (docs/trace-synth.md): the same index arithmetic, the same global loads
 * and stores in the same order, one memory instruction per access (loops
 * carry `#pragma unroll 1`). Launch: grid (ceil(N/TILE), ceil(M/TILE)), block (TILE, TILE); TILE is a compile-time constant (-DTILE=16 by default; the macro is not named T, which CUDA's headers use as a template parameter).
 */
#ifndef TILE
#define TILE 16
#endif

extern "C" __global__ void matmul_tiled_bt(const float *A, const float *B, float *C, size_t M,
                                           size_t N, size_t K)
{
    __shared__ float As[TILE][TILE], Bs[TILE][TILE + 1]; /* Bs[n][k]; +1 avoids bank conflicts */
    unsigned int tx = threadIdx.x, ty = threadIdx.y;
    size_t row = (size_t)blockIdx.y * TILE + ty, col = (size_t)blockIdx.x * TILE + tx;
    size_t brow = (size_t)blockIdx.x * TILE + ty; /* a row of B = a column of C */
    size_t steps = (K + TILE - 1) / TILE;
    float sum = 0.0f;
#pragma unroll 1
    for (size_t s = 0; s < steps; s++) {
        size_t ka = s * TILE + tx;
        As[ty][tx] = row < M && ka < K ? A[row * K + ka] : 0.0f;  /* insn 0 (flag 1) */
        Bs[ty][tx] = brow < N && ka < K ? B[brow * K + ka] : 0.0f; /* insn 1 (flag 1) */
        __syncthreads();
        for (int i = 0; i < TILE; i++)
            sum += As[ty][i] * Bs[tx][i];
        __syncthreads();
    }
    if (row < M && col < N)
        C[row * N + col] = sum; /* insn 2 */
}
