/*
 * C = A x B, one thread per element of C, A and B read from global memory.
 * The kernel trace/synth_matmul.c describes for `gpuprobe trace synth --pattern matmul-naive`
 * (docs/trace-synth.md): the same index arithmetic, the same global loads
 * and stores in the same order, one memory instruction per access (loops
 * carry `#pragma unroll 1`). Launch: grid (ceil(N/BX), ceil(M/BY)), block (BX, BY).
 */
extern "C" __global__ void matmul_naive(const float *A, const float *B, float *C, size_t M, size_t N,
                                        size_t K)
{
    size_t col = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t row = (size_t)blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N)
        return;
    float sum = 0.0f;
#pragma unroll 1
    for (size_t k = 0; k < K; k++)
        sum += A[row * K + k] * B[k * N + col]; /* insn 0 (flag 0), insn 1 (flag 1) */
    C[row * N + col] = sum;                     /* insn 2 */
}
