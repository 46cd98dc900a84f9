/*
 * C = A x B with T x T tiles of A and B staged through shared memory.
 * The kernel trace/synth_matmul.c describes for `gpuprobe trace synth --pattern matmul-tiled`
 * (docs/trace-synth.md): the same index arithmetic, the same global loads
 * and stores in the same order, one memory instruction per access (loops
 * carry `#pragma unroll 1`). Launch: grid (ceil(N/T), ceil(M/T)), block (T, T); T is a compile-time constant (-DT=16 by default).
 */
#ifndef T
#define T 16
#endif

extern "C" __global__ void matmul_tiled(const float *A, const float *B, float *C, size_t M, size_t N,
                                        size_t K)
{
    __shared__ float As[T][T], Bs[T][T];
    unsigned int tx = threadIdx.x, ty = threadIdx.y;
    size_t row = (size_t)blockIdx.y * T + ty, col = (size_t)blockIdx.x * T + tx;
    size_t steps = (K + T - 1) / T;
    float sum = 0.0f;
#pragma unroll 1
    for (size_t s = 0; s < steps; s++) {
        size_t ka = s * T + tx, kb = s * T + ty;
        As[ty][tx] = row < M && ka < K ? A[row * K + ka] : 0.0f; /* insn 0 (flag 1) */
        Bs[ty][tx] = col < N && kb < K ? B[kb * N + col] : 0.0f; /* insn 1 (flag 1) */
        __syncthreads();
        for (int i = 0; i < T; i++)
            sum += As[ty][i] * Bs[i][tx];
        __syncthreads();
    }
    if (row < M && col < N)
        C[row * N + col] = sum; /* insn 2 */
}
