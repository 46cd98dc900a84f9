/*
 * Exploratory measurement of Hopper's two L2 partitions (for the memory
 * probe's l2_partitions and the cache model's L2 hit rates): which SMs
 * share a partition, which lines each partition is home to, and whether an
 * SM's partition keeps a copy of a line homed in the other one. Built with
 * nvcc on the GPU machine by run.sh; development evidence, not part of the
 * daemon (the catalog's probe is built from PTX through the Driver API).
 *
 * DESIGN
 * One thread on one chosen SM (blocks whose %smid is not the target leave at
 * once; the first block on the target claims the work) reads N lines with
 * ld.global.cg, each load timed alone between two clock64 reads, its value
 * stored to shared memory before the second read so the load has returned.
 * The next load's address adds the value just read (the buffer holds zeros),
 * so loads never overlap. For every SM s: the L2 is flushed (a 2 x L2 read
 * of other data), the warmer SM W reads the N lines (cold: from memory) and
 * again (warm), then s reads them twice. A line homed in W's partition and
 * read first by W is in the L2 once; s finds it near if s shares W's
 * partition (or keeps copies), far otherwise: the first-read latencies of s,
 * line by line, say which lines and SMs are where, the second read whether s
 * kept a copy.
 * Output: raw.bin = for every s, (w_cold, w_warm, s_first, s_second) x N
 * cycles as uint32, plus a per-SM summary on stdout.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__device__ __forceinline__ unsigned smid()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
    return r;
}
__device__ __forceinline__ long long clk()
{
    long long r;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(r)::"memory");
    return r;
}
__device__ __forceinline__ unsigned ldcg(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

#define NMAX 4096

__global__ void probe(unsigned target, const unsigned *base, const unsigned *offs, int n,
                      unsigned *claim, unsigned *lat_a, unsigned *lat_b)
{
    __shared__ unsigned so[NMAX];
    __shared__ volatile unsigned sink[32];
    if (threadIdx.x || smid() != target || atomicCAS(claim, 0u, 1u) != 0)
        return;
    for (int j = 0; j < n; j++)
        so[j] = offs[j];
    unsigned v = 0;
    for (int pass = 0; pass < 2; pass++) {
        unsigned *lat = pass ? lat_b : lat_a;
        for (int j = 0; j < n; j++) {
            const unsigned *p = base + so[j] + v;
            long long t0 = clk();
            v = ldcg(p);
            sink[j & 31] = v;
            long long t1 = clk();
            lat[j] = (unsigned)(t1 - t0);
        }
    }
}

__global__ void flush(const uint4 *buf, size_t n, unsigned *out)
{
    unsigned acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint4 v;
        asm volatile("ld.global.cg.v4.u32 {%0,%1,%2,%3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(buf + i));
        acc ^= v.x ^ v.w;
    }
    if (acc == 0x12345678u)
        out[0] = acc;
}

static void run_on(unsigned sm, int nsm, const unsigned *base, const unsigned *offs, int n,
                   unsigned *claim, unsigned *a, unsigned *b)
{
    for (int tries = 0; tries < 8; tries++) {
        unsigned c = 0;
        CHECK(cudaMemset(claim, 0, 4));
        probe<<<nsm * 8, 32>>>(sm, base, offs, n, claim, a, b);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(&c, claim, 4, cudaMemcpyDeviceToHost));
        if (c)
            return;
    }
    fprintf(stderr, "SM %u never ran a block\n", sm);
    exit(1);
}

static unsigned median(std::vector<unsigned> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main(int argc, char **argv)
{
    const char *outdir = argc > 1 ? argv[1] : ".";
    unsigned warmer = argc > 2 ? (unsigned)atoi(argv[2]) : 0;
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    int nsm = prop.multiProcessorCount;
    size_t l2 = prop.l2CacheSize;
    printf("device %s, %d SMs, L2 %zu bytes, warmer SM %u\n", prop.name, nsm, l2, warmer);

    /* lines: 1024 consecutive (128 KiB from 0), 1024 at a 64 KiB stride from 16 MiB,
     * 1024 at a 4 KiB stride + 128 B x j from 96 MiB (page-offset bits moving) */
    std::vector<unsigned> offs;
    for (unsigned j = 0; j < 1024; j++) offs.push_back(j * 32);
    for (unsigned j = 0; j < 1024; j++) offs.push_back((16u << 20) / 4 + j * (65536 / 4));
    for (unsigned j = 0; j < 1024; j++) offs.push_back((96u << 20) / 4 + j * (4096 / 4) + (j % 32) * 32);
    int n = (int)offs.size();
    size_t region = 104u << 20;

    unsigned *base, *doffs, *claim, *a, *b, *fo;
    uint4 *fbuf;
    size_t fbytes = 3 * l2;
    CHECK(cudaMalloc(&base, region));
    CHECK(cudaMemset(base, 0, region));
    CHECK(cudaMalloc(&doffs, n * 4));
    CHECK(cudaMemcpy(doffs, offs.data(), n * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMalloc(&claim, 4));
    CHECK(cudaMalloc(&a, n * 4));
    CHECK(cudaMalloc(&b, n * 4));
    CHECK(cudaMalloc(&fo, 4));
    CHECK(cudaMalloc(&fbuf, fbytes));
    CHECK(cudaMemset(fbuf, 1, fbytes));

    std::vector<unsigned> raw((size_t)nsm * 4 * n);
    for (int s = 0; s < nsm; s++) {
        unsigned *r = &raw[(size_t)s * 4 * n];
        flush<<<nsm * 4, 512>>>(fbuf, fbytes / 16, fo);
        CHECK(cudaDeviceSynchronize());
        run_on(warmer, nsm, base, doffs, n, claim, a, b);
        CHECK(cudaMemcpy(r, a, n * 4, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(r + n, b, n * 4, cudaMemcpyDeviceToHost));
        run_on((unsigned)s, nsm, base, doffs, n, claim, a, b);
        CHECK(cudaMemcpy(r + 2 * n, a, n * 4, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(r + 3 * n, b, n * 4, cudaMemcpyDeviceToHost));
        std::vector<unsigned> wc(r, r + n), ww(r + n, r + 2 * n), s1(r + 2 * n, r + 3 * n), s2(r + 3 * n, r + 4 * n);
        unsigned thr = median(ww) + 60, far = 0;
        for (int j = 0; j < n; j++) far += s1[j] > thr;
        printf("sm %3d  w_cold %4u w_warm %4u  s_first %4u (p90 %4u) far %4u/%d  s_second %4u\n", s,
               median(wc), median(ww), median(s1), [&] { auto t = s1; std::sort(t.begin(), t.end()); return t[n * 9 / 10]; }(),
               far, n, median(s2));
    }
    char path[512];
    snprintf(path, sizeof path, "%s/raw.bin", outdir);
    FILE *f = fopen(path, "wb");
    fwrite(raw.data(), 4, raw.size(), f);
    fclose(f);
    printf("wrote %s: %d SMs x 4 passes x %d lines, uint32 cycles\n", path, nsm, n);
    return 0;
}
