/*
 * C = A x B with TILE x TILE tiles of A and B staged through shared memory.
 * The kernel trace/synth_matmul.c describes for `gpuprobe trace synth --pattern matmul-tiled`
 * (docs/trace-synth.md): the same index arithmetic, the same global loads
 * and stores in the same order, one memory instruction per access (loops
 * carry `#pragma unroll 1`). Launch: grid (ceil(N/TILE), ceil(M/TILE)), block (TILE, TILE); TILE is a compile-time constant (-DTILE=16 by default; the macro is not named T, which CUDA's headers use as a template parameter).
 */
#ifndef TILE
#define TILE 16
#endif

extern "C" __global__ void matmul_tiled(const float *A, const float *B, float *C, size_t M, size_t N,
                                        size_t K)
{
    __shared__ float As[TILE][TILE], Bs[TILE][TILE];
    unsigned int tx = threadIdx.x, ty = threadIdx.y;
    size_t row = (size_t)blockIdx.y * TILE + ty, col = (size_t)blockIdx.x * TILE + tx;
    size_t steps = (K + TILE - 1) / TILE;
    float sum = 0.0f;
#pragma unroll 1
    for (size_t s = 0; s < steps; s++) {
        size_t ka = s * TILE + tx, kb = s * TILE + ty;
        As[ty][tx] = row < M && ka < K ? A[row * K + ka] : 0.0f; /* insn 0 (flag 1) */
        Bs[ty][tx] = col < N && kb < K ? B[kb * N + col] : 0.0f; /* insn 1 (flag 1) */
        __syncthreads();
        for (int i = 0; i < TILE; i++)
            sum += As[ty][i] * Bs[i][tx];
        __syncthreads();
    }
    if (row < M && col < N)
        C[row * N + col] = sum; /* insn 2 */
}
