/*
 * Times one kernel of a PTX module as the model-validation job times its
 * kernels (probes/validation.h): built by the driver's JIT, one warm-up
 * launch, then 5 intervals of 20 back-to-back launches closed by
 * cuCtxSynchronize, host CLOCK_MONOTONIC; prints the median, min and max
 * seconds per launch and the registers the JIT gave, as one JSON line.
 * A development check (tests/gpu/holdout.sh), built on the GPU machine:
 *   gcc -O2 -I/usr/local/cuda/include time_ptx.c -lcuda -o time_ptx
 *   time_ptx PTX ENTRY GX,GY,GZ BX,BY,BZ ARG...
 * ARG: i32:V, f32:V, or buf:BYTES:FILL with FILL zero, randf (floats in
 * [0,1)), rand (random words) or perm (a random permutation of the words).
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LAUNCHES 20
#define REPEATS 5
#define MAX_ARGS 16

static void die(const char *what, CUresult rc)
{
    const char *s = "?";
    cuGetErrorString(rc, &s);
    fprintf(stderr, "time_ptx: %s: %s\n", what, s);
    exit(1);
}
#define CK(call)                                                                                   \
    do {                                                                                           \
        CUresult rc_ = (call);                                                                     \
        if (rc_ != CUDA_SUCCESS)                                                                   \
            die(#call, rc_);                                                                       \
    } while (0)

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void fill(uint32_t *w, size_t n, const char *how)
{
    uint64_t s = 12345;
    if (!strcmp(how, "zero"))
        memset(w, 0, n * 4);
    else if (!strcmp(how, "randf"))
        for (size_t i = 0; i < n; i++) {
            float f = (float)(mix(&s) >> 40) / (float)(1 << 24);
            memcpy(&w[i], &f, 4);
        }
    else if (!strcmp(how, "rand"))
        for (size_t i = 0; i < n; i++)
            w[i] = (uint32_t)mix(&s);
    else if (!strcmp(how, "perm")) {
        for (size_t i = 0; i < n; i++)
            w[i] = (uint32_t)i;
        for (size_t i = n - 1; i > 0; i--) {
            size_t j = mix(&s) % (i + 1);
            uint32_t t = w[i];
            w[i] = w[j];
            w[j] = t;
        }
    } else {
        fprintf(stderr, "time_ptx: unknown fill %s\n", how);
        exit(2);
    }
}

static void dims(const char *s, unsigned d[3])
{
    d[0] = d[1] = d[2] = 1;
    if (sscanf(s, "%u,%u,%u", &d[0], &d[1], &d[2]) < 1)
        exit(2);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 5 || argc - 5 > MAX_ARGS) {
        fprintf(stderr, "usage: time_ptx PTX ENTRY GRID BLOCK ARG...\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f)
        return perror(argv[1]), 1;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    char *ptx = calloc(1, (size_t)len + 1);
    if (fread(ptx, 1, (size_t)len, f) != (size_t)len)
        return 1;
    fclose(f);
    unsigned g[3], b[3];
    dims(argv[3], g);
    dims(argv[4], b);

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoadData(&mod, ptx));
    CK(cuModuleGetFunction(&fn, mod, argv[2]));

    union { int32_t i; float f; CUdeviceptr p; } vals[MAX_ARGS];
    void *args[MAX_ARGS];
    int nargs = argc - 5;
    for (int a = 0; a < nargs; a++) {
        const char *s = argv[5 + a];
        if (!strncmp(s, "i32:", 4))
            vals[a].i = atoi(s + 4);
        else if (!strncmp(s, "f32:", 4))
            vals[a].f = strtof(s + 4, NULL);
        else if (!strncmp(s, "buf:", 4)) {
            char *end;
            size_t bytes = strtoull(s + 4, &end, 10);
            uint32_t *host = malloc(bytes);
            fill(host, bytes / 4, *end == ':' ? end + 1 : "zero");
            CK(cuMemAlloc(&vals[a].p, bytes));
            CK(cuMemcpyHtoD(vals[a].p, host, bytes));
            free(host);
        } else {
            fprintf(stderr, "time_ptx: bad argument %s\n", s);
            return 2;
        }
        args[a] = &vals[a];
    }

    CK(cuLaunchKernel(fn, g[0], g[1], g[2], b[0], b[1], b[2], 0, 0, args, NULL));
    CK(cuCtxSynchronize());
    double t[REPEATS];
    for (int r = 0; r < REPEATS; r++) {
        double t0 = now();
        for (int l = 0; l < LAUNCHES; l++)
            CK(cuLaunchKernel(fn, g[0], g[1], g[2], b[0], b[1], b[2], 0, 0, args, NULL));
        CK(cuCtxSynchronize());
        t[r] = (now() - t0) / LAUNCHES;
    }
    qsort(t, REPEATS, sizeof t[0], cmp);
    int regs = 0, smem = 0;
    CK(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn));
    CK(cuFuncGetAttribute(&smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn));
    printf("{\"entry\":\"%s\",\"median_s\":%.9g,\"min_s\":%.9g,\"max_s\":%.9g,\"regs\":%d,"
           "\"static_smem\":%d,\"launches\":%d,\"repeats\":%d}\n",
           argv[2], t[REPEATS / 2], t[0], t[REPEATS - 1], regs, smem, LAUNCHES, REPEATS);
    return 0;
}
