/*
 * out = in^T (in is R x C), one thread per element: loads along rows, stores down columns.
 * The kernel trace/synth_transpose.c describes for `gpuprobe trace synth --pattern transpose-naive`
 * (docs/trace-synth.md): the same index arithmetic, the same global loads
 * and stores in the same order, one memory instruction per access (loops
 * carry `#pragma unroll 1`). Launch: grid (ceil(C/BX), ceil(R/BY)), block (BX, BY).
 */
extern "C" __global__ void transpose_naive(const float *in, float *out, size_t R, size_t C)
{
    size_t x = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t y = (size_t)blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= C || y >= R)
        return;
    out[x * R + y] = in[y * C + x]; /* insn 0 (flag 1), insn 1 */
}
