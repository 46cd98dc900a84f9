// saxpy_sfu's shape with n steps (2n MUFU a thread): one load, n dependent
// sin.approx/ex2.approx steps, one store, 2^24 threads in blocks of 256.
// Per-warp SM-cycles against n: the slope is the SFU's work, the intercept
// what each warp's short life adds.
#include <cstdio>
#include <cuda_runtime.h>
template <int N> __global__ void k_steps(const float *x, float *y) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  float t = x[i];
  #pragma unroll 1
  for (int s = 0; s < N; s++) { float u, v; asm("sin.approx.f32 %0, %1;" : "=f"(u) : "f"(t)); asm("ex2.approx.f32 %0, %1;" : "=f"(v) : "f"(-t * 0.5f)); t = (u + v) * 0.5f; }
  y[i] = 2.0f * x[i] + t;
}
typedef void (*kern)(const float *, float *);
int main() {
  int sms, clk; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0); cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
  const unsigned n = 1u << 24; float *x, *y; cudaMalloc(&x, n * 4); cudaMalloc(&y, n * 4); cudaMemset(x, 0, n * 4);
  struct { int steps; kern k; } ks[] = {{0, k_steps<0>}, {5, k_steps<5>}, {10, k_steps<10>}, {20, k_steps<20>}, {40, k_steps<40>}, {80, k_steps<80>}, {160, k_steps<160>}};
  for (auto &e : ks) {
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    for (int w = 0; w < 3; w++) e.k<<<n / 256, 256>>>(x, y);
    cudaDeviceSynchronize();
    float best = 1e30f;
    for (int r = 0; r < 7; r++) { cudaEventRecord(a); e.k<<<n / 256, 256>>>(x, y); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); if (ms < best) best = ms; }
    double warps_per_sm = (double)n / 32 / sms, cyc = best * 1e-3 * clk * 1e3 / warps_per_sm;
    printf("steps %3d  mufu/warp %3d  %8.4f ms  %7.1f SM-cycles a warp\n", e.steps, 2 * e.steps, best, cyc);
  }
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
