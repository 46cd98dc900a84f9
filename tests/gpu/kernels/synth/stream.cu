/*
 * Streaming copy out[i] = in[i].
 * The kernel trace/synth_1d.c describes for `gpuprobe trace synth --pattern stream`
 * (docs/trace-synth.md): the same index arithmetic, the same global loads
 * and stores in the same order, one memory instruction per access (loops
 * carry `#pragma unroll 1`). Launch: grid ceil(N/B), block B.
 */
extern "C" __global__ void stream(const float *in, float *out, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i]; /* insn 0 (flag 1), insn 1 */
}
