// C = A x B, n x n floats, one thread per element of C: 2n loads and one
// store per thread.
extern "C" __global__ void matmul_naive(const float *a, const float *b, float *c, int n)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n || col >= n)
        return;
    float acc = 0.0f;
    #pragma unroll 1
    for (int k = 0; k < n; k++)
        acc += a[row * n + k] * b[k * n + col];
    c[row * n + col] = acc;
}
