// Two kernels for the rewriter's corners. chase: an index chase (each load
// gives the next index: the load's flag is 1), steps loads per thread.
// copy4: float4 copy through a const __restrict__ pointer (ld.global.nc.v4,
// 16-byte accesses), guarded, plus a 2-byte and a 1-byte store.
extern "C" __global__ void chase(const unsigned *next, unsigned *out, int steps)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    #pragma unroll 1
    for (int s = 0; s < steps; s++)
        i = next[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = i;
}

extern "C" __global__ void copy4(const float4 *__restrict__ in, float4 *out,
                                 unsigned short *tag16, unsigned char *tag8, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i];
        tag16[i] = (unsigned short)i;
        tag8[i] = (unsigned char)i;
    }
}
