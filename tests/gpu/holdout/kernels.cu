// Hold-out kernels for the kernel-time model: written after its rules were
// fixed and never used to set them (docs/model.md, "Hold-out kernels"). Ordinary
// CUDA C as a user would write it, compiled with nvcc -ptx; holdout.sh times
// each through the Driver API and asks `gpuprobe model predict --hits`.
#include <cstdint>

extern "C" {

// float4 vector add: 16-byte loads and stores.
__global__ void vec_add4(const float4 *a, const float4 *b, float4 *c)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 x = a[i], y = b[i];
    c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
}

// saxpy over a grid-stride loop: the trip count comes from n and the grid.
__global__ void saxpy_gs(int n, float a, const float *x, float *y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}

// 2-D five-point stencil, one thread a point; neighbours reused from the caches.
__global__ void stencil2d(const float *in, float *out, int nx, int ny)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= nx - 1 || y >= ny - 1)
        return;
    int i = y * nx + x;
    out[i] = 0.2f * (in[i] + in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx]);
}

// 1-D convolution with 9 taps read from global memory.
__global__ void conv1d9(const float *in, const float *w, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < 9; k++)
        s += w[k] * in[i + k];
    out[i] = s;
}

// Sum: each thread adds 8 strided elements, a shared-memory tree per block,
// one global atomic per block.
__global__ void sum_atomic(const float *in, float *out)
{
    __shared__ float s[256];
    int t = threadIdx.x;
    size_t base = (size_t)blockIdx.x * 256 * 8 + t;
    float v = 0.f;
#pragma unroll
    for (int k = 0; k < 8; k++)
        v += in[base + k * 256];
    s[t] = v;
    __syncthreads();
    for (int st = 128; st > 0; st >>= 1) {
        if (t < st)
            s[t] += s[t + st];
        __syncthreads();
    }
    if (t == 0)
        atomicAdd(out, s[0]);
}

// Tiled matrix multiply with 8 x 8 tiles (C = A x B, n x n, n a multiple of 8).
__global__ void matmul_tile8(const float *A, const float *B, float *C, int n)
{
    __shared__ float As[8][8], Bs[8][8];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * 8 + ty, col = blockIdx.x * 8 + tx;
    float acc = 0.f;
    for (int t = 0; t < n; t += 8) {
        As[ty][tx] = A[row * n + t + tx];
        Bs[ty][tx] = B[(t + ty) * n + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < 8; k++)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * n + col] = acc;
}

// Sparse matrix-vector product in ELL form, column-major: each row has the
// same number of entries; the columns are random, so x is gathered.
__global__ void spmv_ell(const int *cols, const float *vals, const float *x, float *y,
                         int rows, int per_row)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    float s = 0.f;
    for (int k = 0; k < per_row; k++) {
        int c = cols[k * rows + r] & (rows - 1);
        s += vals[k * rows + r] * x[c];
    }
    y[r] = s;
}

// Double precision: a degree-32 polynomial by Horner's rule per element.
__global__ void poly_fp64(const double *x, double *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    double v = x[i], acc = 1.0;
#pragma unroll
    for (int k = 0; k < 32; k++)
        acc = acc * v + 1.0 / (k + 2);
    y[i] = acc;
}

// Integer work: 16 rounds of a multiply-xorshift hash per element.
__global__ void hash_int(const uint32_t *in, uint32_t *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t h = in[i];
#pragma unroll
    for (int r = 0; r < 16; r++) {
        h ^= h >> 16;
        h *= 0x7feb352du;
        h ^= h >> 15;
        h *= 0x846ca68bu;
    }
    out[i] = h;
}

// Every other element: loads and stores at a stride of 8 bytes.
__global__ void stride2_scale(const float *in, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[2 * i] = 3.0f * in[2 * i];
}

// Row normalisation: one block of 256 a row of 4096 floats, two shared-memory
// reductions (mean, then variance), then the row written scaled.
__global__ void rownorm(const float *in, float *out)
{
    __shared__ float s[256];
    const float *row = in + (size_t)blockIdx.x * 4096;
    float *orow = out + (size_t)blockIdx.x * 4096;
    int t = threadIdx.x;
    float v[16], sum = 0.f;
#pragma unroll
    for (int k = 0; k < 16; k++) {
        v[k] = row[t + k * 256];
        sum += v[k];
    }
    s[t] = sum;
    __syncthreads();
    for (int st = 128; st > 0; st >>= 1) {
        if (t < st)
            s[t] += s[t + st];
        __syncthreads();
    }
    float mean = s[0] / 4096.f, sq = 0.f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 16; k++)
        sq += (v[k] - mean) * (v[k] - mean);
    s[t] = sq;
    __syncthreads();
    for (int st = 128; st > 0; st >>= 1) {
        if (t < st)
            s[t] += s[t + st];
        __syncthreads();
    }
    float inv = rsqrtf(s[0] / 4096.f + 1e-5f);
#pragma unroll
    for (int k = 0; k < 16; k++)
        orow[t + k * 256] = (v[k] - mean) * inv;
}
}
