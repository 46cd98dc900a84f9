// SFU overlap experiment: cycles per warp per SM for several instruction mixes.
#include <cstdio>
#include <cuda_runtime.h>
#define N_IT 256
__global__ void k_sin_chain(float *o, float s) { float t = threadIdx.x * 1e-3f + s;
  for (int i = 0; i < N_IT; i++) { t = __sinf(t); } o[blockIdx.x * blockDim.x + threadIdx.x] = t; }
__global__ void k_sin_indep(float *o, float s) { float a = threadIdx.x * 1e-3f + s, b = a + 1, c = a + 2, d = a + 3;
  for (int i = 0; i < N_IT / 4; i++) { a = __sinf(a); b = __sinf(b); c = __sinf(c); d = __sinf(d); } o[blockIdx.x * blockDim.x + threadIdx.x] = a + b + c + d; }
__global__ void k_fmul_indep(float *o, float s) { float a = threadIdx.x * 1e-3f + s, b = a + 1, c = a + 2, d = a + 3;
  for (int i = 0; i < N_IT; i++) { a = a * 0.999f; b = b * 0.999f; c = c * 0.999f; d = d * 0.999f; } o[blockIdx.x * blockDim.x + threadIdx.x] = a + b + c + d; }
// sin chain plus 4 independent FMUL streams: if the pipes overlap, time ~ max, else ~ sum
__global__ void k_sin_plus_fmul(float *o, float s) { float t = threadIdx.x * 1e-3f + s, a = t + 1, b = t + 2, c = t + 3, d = t + 4;
  for (int i = 0; i < N_IT; i++) { t = __sinf(t); a = a * 0.999f; b = b * 0.999f; c = c * 0.999f; d = d * 0.999f; } o[blockIdx.x * blockDim.x + threadIdx.x] = t + a + b + c + d; }
__global__ void k_sin_indep_plus_fmul(float *o, float s) { float a = threadIdx.x * 1e-3f + s, b = a + 1, c = a + 2, d = a + 3, e = a + 4, f = a + 5, g = a + 6, h = a + 7;
  for (int i = 0; i < N_IT / 4; i++) { a = __sinf(a); b = __sinf(b); c = __sinf(c); d = __sinf(d);
    e *= 0.999f; f *= 0.999f; g *= 0.999f; h *= 0.999f; e *= 0.999f; f *= 0.999f; g *= 0.999f; h *= 0.999f;
    e *= 0.999f; f *= 0.999f; g *= 0.999f; h *= 0.999f; e *= 0.999f; f *= 0.999f; g *= 0.999f; h *= 0.999f; }
  o[blockIdx.x * blockDim.x + threadIdx.x] = a + b + c + d + e + f + g + h; }
// the validation step: sin.approx then ex2.approx (not ftz), dependent
__global__ void k_saxpy_step(float *o, float s) { float t = threadIdx.x * 1e-3f + s;
  for (int i = 0; i < N_IT / 2; i++) { float u, v; asm("sin.approx.f32 %0, %1;" : "=f"(u) : "f"(t)); asm("ex2.approx.f32 %0, %1;" : "=f"(v) : "f"(-t * 0.5f)); t = (u + v) * 0.5f; }
  o[blockIdx.x * blockDim.x + threadIdx.x] = t; }
__global__ void k_ex2_chain(float *o, float s) { float t = threadIdx.x * 1e-3f + s;
  for (int i = 0; i < N_IT; i++) { asm("ex2.approx.f32 %0, %1;" : "=f"(t) : "f"(-t)); } o[blockIdx.x * blockDim.x + threadIdx.x] = t; }
__global__ void k_ex2ftz_indep(float *o, float s) { float a = threadIdx.x * 1e-3f + s, b = a + 1, c = a + 2, d = a + 3;
  for (int i = 0; i < N_IT / 4; i++) { asm("ex2.approx.ftz.f32 %0, %0;" : "+f"(a)); asm("ex2.approx.ftz.f32 %0, %0;" : "+f"(b)); asm("ex2.approx.ftz.f32 %0, %0;" : "+f"(c)); asm("ex2.approx.ftz.f32 %0, %0;" : "+f"(d)); a = -a; b = -b; c = -c; d = -d; }
  o[blockIdx.x * blockDim.x + threadIdx.x] = a + b + c + d; }
typedef void (*kern)(float *, float);
int main() {
  int sms, clk; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0); cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
  float *o; cudaMalloc(&o, 64ull << 20);
  struct { const char *name; kern k; int mufu, fp32; } ks[] = {
    {"sin_chain", k_sin_chain, N_IT, 0}, {"sin_indep", k_sin_indep, N_IT, 0}, {"fmul_indep", k_fmul_indep, 0, 4 * N_IT},
    {"sin+fmul", k_sin_plus_fmul, N_IT, 4 * N_IT}, {"sin_indep+fmul", k_sin_indep_plus_fmul, N_IT, 4 * N_IT},
    {"saxpy_step", k_saxpy_step, N_IT, -1}, {"ex2_chain", k_ex2_chain, N_IT, -1}, {"ex2ftz_indep", k_ex2ftz_indep, N_IT, N_IT}};
  int blocks = sms * 8 * 4, threads = 256; // 64 warps an SM, 4 waves
  for (auto &x : ks) {
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    x.k<<<blocks, threads>>>(o, 0.5f); cudaDeviceSynchronize();
    float best = 1e30f;
    for (int r = 0; r < 5; r++) { cudaEventRecord(a); x.k<<<blocks, threads>>>(o, 0.5f); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); if (ms < best) best = ms; }
    double warps_per_sm = (double)blocks * threads / 32 / sms;
    double cyc = best * 1e-3 * clk * 1e3; // at the max clock (kHz attr)
    printf("%-16s %8.4f ms  %7.1f SM-cycles a warp  mufu %d fp32 %d  => %.2f SM-cycles a MUFU\n", x.name, best, cyc / warps_per_sm, x.mufu, x.fp32, x.mufu ? cyc / warps_per_sm / x.mufu : 0);
  }
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
