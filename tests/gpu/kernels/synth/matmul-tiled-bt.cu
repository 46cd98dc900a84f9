/*
 * C = A x B^T with T x T tiles; B's tile is loaded along B's rows (coalesced).
 * The kernel trace/synth_matmul.c describes for `gpuprobe trace synth --pattern matmul-tiled-bt`
 * (docs/trace-synth.md): the same index arithmetic, the same global loads
 * and stores in the same order, one memory instruction per access (loops
 * carry `#pragma unroll 1`). Launch: grid (ceil(N/T), ceil(M/T)), block (T, T); T is a compile-time constant (-DT=16 by default).
 */
#ifndef T
#define T 16
#endif

extern "C" __global__ void matmul_tiled_bt(const float *A, const float *B, float *C, size_t M,
                                           size_t N, size_t K)
{
    __shared__ float As[T][T], Bs[T][T + 1]; /* Bs[n][k]; +1 avoids bank conflicts */
    unsigned int tx = threadIdx.x, ty = threadIdx.y;
    size_t row = (size_t)blockIdx.y * T + ty, col = (size_t)blockIdx.x * T + tx;
    size_t brow = (size_t)blockIdx.x * T + ty; /* a row of B = a column of C */
    size_t steps = (K + T - 1) / T;
    float sum = 0.0f;
#pragma unroll 1
    for (size_t s = 0; s < steps; s++) {
        size_t ka = s * T + tx;
        As[ty][tx] = row < M && ka < K ? A[row * K + ka] : 0.0f;  /* insn 0 (flag 1) */
        Bs[ty][tx] = brow < N && ka < K ? B[brow * K + ka] : 0.0f; /* insn 1 (flag 1) */
        __syncthreads();
        for (int i = 0; i < T; i++)
            sum += As[ty][i] * Bs[tx][i];
        __syncthreads();
    }
    if (row < M && col < N)
        C[row * N + col] = sum; /* insn 2 */
}
