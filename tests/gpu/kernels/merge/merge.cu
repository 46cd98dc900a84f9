// How many requests for one sector in flight become one fetch: the merge
// experiment (tests/gpu/merge.sh), read by Nsight Compute's counters.
// BLOCKS blocks of WARPS warps; every lane of every warp loads the same
// 4 bytes (ld.global.ca: one request of one sector a warp), all at once:
// the warps of a block after a barrier; the blocks after a grid-wide
// meeting made of atomics (not loads, so the load counters see only the
// measured load), then at the next %globaltimer instant that is a multiple
// of 8.192 us plus one more: blocks released within a few hundred ns of
// one another mostly pick the same instant; each block's instant is
// written out and the host counts how many blocks did not share block
// 0's. SPREAD 1 gives each block its own sector (4 KiB apart), so only the
// warps of one SM can merge; SPREAD 0 one sector for all, so the SMs'
// fetches meet below the L1s. One block per SM: dynamic shared memory of
// 120 KiB. Prints "blocks B warps W spread S apart A".
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "../check.cuh"

__global__ void merge(const float *buf, float *out, int spread, unsigned *count,
                      unsigned long long *instant)
{
    extern __shared__ float pad[];
    if (threadIdx.x == 0) {
        unsigned long long now;
        atomicAdd(count, 1u);
        while (atomicAdd(count, 0u) < gridDim.x) {
        }
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        unsigned long long at = ((now >> 13) + 2) << 13;
        do
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        while (now < at);
        instant[blockIdx.x] = at;
    }
    __syncthreads();
    const float *p = buf + (spread ? blockIdx.x * 1024 : 0);
    float v;
    asm volatile("ld.global.ca.f32 %0, [%1];" : "=f"(v) : "l"(p));
    out[blockIdx.x * blockDim.x + threadIdx.x] = v + pad[0] * 0.0f;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: merge BLOCKS WARPS SPREAD\n");
        return 2;
    }
    int blocks = atoi(argv[1]), warps = atoi(argv[2]), spread = atoi(argv[3]);
    const int smem = 120 << 10;
    float *buf, *out;
    unsigned long long *instant, *h_instant = (unsigned long long *)calloc(blocks, 8);
    unsigned *count;
    check(cudaFuncSetAttribute(merge, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), "smem");
    check(cudaMalloc(&buf, (size_t)blocks * 4096 + 4096), "cudaMalloc");
    check(cudaMemset(buf, 0, (size_t)blocks * 4096 + 4096), "cudaMemset");
    check(cudaMalloc(&out, (size_t)blocks * warps * 32 * 4), "cudaMalloc");
    check(cudaMalloc(&instant, (size_t)blocks * 8), "cudaMalloc");
    check(cudaMalloc(&count, 4), "cudaMalloc");
    check(cudaMemset(count, 0, 4), "cudaMemset");
    merge<<<blocks, warps * 32, smem>>>(buf, out, spread, count, instant);
    check(cudaDeviceSynchronize(), "launch");
    check(cudaMemcpy(h_instant, instant, (size_t)blocks * 8, cudaMemcpyDeviceToHost), "copy");
    int apart = 0;
    for (int b = 0; b < blocks; b++)
        apart += h_instant[b] != h_instant[0];
    printf("blocks %d warps %d spread %d apart %d\n", blocks, warps, spread, apart);
    return 0;
}
