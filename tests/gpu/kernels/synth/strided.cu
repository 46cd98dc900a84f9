/*
 * Strided gather out[i] = in[i * S] (in holds n * S elements).
 * The kernel trace/synth_1d.c describes for `gpuprobe trace synth --pattern strided`
 * (docs/trace-synth.md): the same index arithmetic, the same global loads
 * and stores in the same order, one memory instruction per access (loops
 * carry `#pragma unroll 1`). Launch: grid ceil(N/B), block B.
 */
extern "C" __global__ void strided(const float *in, float *out, size_t n, size_t S)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i * S]; /* insn 0 (flag 1), insn 1 */
}
