/*
 * One pass of a tree reduction: block b sums in[2bB .. 2bB+2B) into out[b].
 * The kernel trace/synth_1d.c describes for `gpuprobe trace synth --pattern reduce`
 * (docs/trace-synth.md): the same index arithmetic, the same global loads
 * and stores in the same order, one memory instruction per access (loops
 * carry `#pragma unroll 1`). Launch: grid ceil(N/(2B)), block B (a power of two), B * sizeof(float) bytes of dynamic shared memory.
 */
extern "C" __global__ void reduce(const float *in, float *out, size_t n)
{
    extern __shared__ float sdata[];
    unsigned int tx = threadIdx.x, B = blockDim.x;
    size_t i = (size_t)blockIdx.x * 2 * B + tx;
    float sum = i < n ? in[i] : 0.0f; /* insn 0 (flag 0) */
    if (i + B < n)
        sum += in[i + B];             /* insn 1 (flag 1) */
    sdata[tx] = sum;
    __syncthreads();
    for (unsigned int s = B / 2; s > 0; s >>= 1) {
        if (tx < s)
            sdata[tx] += sdata[tx + s];
        __syncthreads();
    }
    if (tx == 0)
        out[blockIdx.x] = sdata[0];   /* insn 2 */
}
