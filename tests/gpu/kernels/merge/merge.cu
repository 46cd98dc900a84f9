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
// 120 KiB. With SM and MEET given, 100 KiB (two blocks an SM) and only the
// MEET blocks that land on SM take part (the others leave before any
// load): 2 x 32 warps of one SM, every warp an SM holds. Prints "blocks B
// warps W spread S apart A" (A among the blocks that took part).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "../check.cuh"

__global__ void merge(const float *buf, float *out, int spread, unsigned *count,
                      unsigned long long *instant, int sm, unsigned meet)
{
    extern __shared__ float pad[];
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    if (sm >= 0 && smid != (unsigned)sm)
        return;
    if (threadIdx.x == 0) {
        unsigned long long now;
        atomicAdd(count, 1u);
        while (atomicAdd(count, 0u) < meet) {
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
    if (argc != 4 && argc != 6) {
        fprintf(stderr, "usage: merge BLOCKS WARPS SPREAD [SM MEET]\n");
        return 2;
    }
    int blocks = atoi(argv[1]), warps = atoi(argv[2]), spread = atoi(argv[3]);
    int sm = argc == 6 ? atoi(argv[4]) : -1;
    unsigned meet = argc == 6 ? (unsigned)atoi(argv[5]) : (unsigned)blocks;
    const int smem = (sm >= 0 ? 100 : 120) << 10;
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
    check(cudaMemset(instant, 0, (size_t)blocks * 8), "cudaMemset");
    merge<<<blocks, warps * 32, smem>>>(buf, out, spread, count, instant, sm, meet);
    check(cudaDeviceSynchronize(), "launch");
    check(cudaMemcpy(h_instant, instant, (size_t)blocks * 8, cudaMemcpyDeviceToHost), "copy");
    int apart = 0;
    unsigned long long first = 0;
    for (int b = 0; b < blocks; b++) {
        if (!h_instant[b])
            continue; /* did not take part */
        first = first ? first : h_instant[b];
        apart += h_instant[b] != first;
    }
    printf("blocks %d warps %d spread %d apart %d\n", blocks, warps, spread, apart);
    return 0;
}
