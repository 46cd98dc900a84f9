// A grid-stride loop: each thread does every (gridDim.x * blockDim.x)-th
// element, so what one block does depends on the size of the whole grid
// (the case a sample of blocks must record inside the whole launch).
extern "C" __global__ void saxpy_gs(float a, const float *x, float *y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = a * x[i] + y[i];
}

// Float atomic adds into four sums: the order the adds land in is the
// hardware's, so the sums round differently from run to run.
extern "C" __global__ void sum4_f32(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&out[i & 3], in[i]);
}
