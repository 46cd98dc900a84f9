// Which SM each block of a launch runs on, and when it started: the block
// placement experiment (tests/gpu/placement.sh). Thread 0 of each block
// writes %smid and %globaltimer; every thread then spins `spin` SM cycles,
// so that with a long spin the whole first wave is resident before any block
// ends (its placement is the dealing order, not the order blocks finish).
// The launch runs twice and the second is reported (the first pays for
// loading the module). Prints "grid G block B spin S", then one line a block:
// "block sm start_ns" (start relative to the earliest block).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "../check.cuh"

__global__ void place(unsigned *sm, unsigned long long *start, long long spin)
{
    if (threadIdx.x == 0) {
        unsigned s;
        unsigned long long t;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        sm[blockIdx.x] = s;
        start[blockIdx.x] = t;
    }
    long long c = clock64();
    while (clock64() - c < spin) {
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: placement GRID BLOCK SPIN_CYCLES\n");
        return 2;
    }
    int grid = atoi(argv[1]), block = atoi(argv[2]);
    long long spin = atoll(argv[3]);
    unsigned *sm, *h_sm = (unsigned *)malloc(grid * sizeof *h_sm);
    unsigned long long *start, *h_start = (unsigned long long *)malloc(grid * sizeof *h_start);
    check(cudaMalloc(&sm, grid * sizeof *sm), "cudaMalloc");
    check(cudaMalloc(&start, grid * sizeof *start), "cudaMalloc");
    for (int i = 0; i < 2; i++) {
        place<<<grid, block>>>(sm, start, spin);
        check(cudaDeviceSynchronize(), "launch");
    }
    check(cudaMemcpy(h_sm, sm, grid * sizeof *sm, cudaMemcpyDeviceToHost), "copy");
    check(cudaMemcpy(h_start, start, grid * sizeof *start, cudaMemcpyDeviceToHost), "copy");
    unsigned long long t0 = ~0ull;
    for (int i = 0; i < grid; i++)
        t0 = h_start[i] < t0 ? h_start[i] : t0;
    printf("grid %d block %d spin %lld\n", grid, block, spin);
    for (int i = 0; i < grid; i++)
        printf("%d %u %llu\n", i, h_sm[i], h_start[i] - t0);
    return 0;
}
