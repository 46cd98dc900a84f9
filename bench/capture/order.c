/*
 * The capture's record ordering (probes/capture_order.c) against the qsort
 * it replaced, on the same records: N device records (16 bytes, the tid at
 * byte 8) whose threads interleave as a matmul's do (every thread makes
 * PER accesses, the 32 lanes of a warp one after another). Prints both
 * times and the ratio, measured in this run; checks both agree.
 * usage: order N PER
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probes/capture.h"

static const unsigned char *recs;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int by_key(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 33619968ull;
    uint64_t per = argc > 2 ? strtoull(argv[2], NULL, 10) : 513;
    unsigned char *r = malloc(n * PTXI_RECORD_BYTES);
    uint64_t *keys = malloc(n * sizeof *keys);
    uint32_t *order = malloc(n * sizeof *order);
    if (!r || !keys || !order)
        return 2;
    uint64_t threads = n / per ? n / per : 1, warps = (threads + 31) / 32;
    for (uint64_t s = 0; s < n; s++) { /* warp-interleaved: step, warp, lane */
        uint64_t lane = s % 32, warp = (s / 32) % warps;
        uint32_t tid = (uint32_t)((warp * 32 + lane) % threads);
        memcpy(r + s * PTXI_RECORD_BYTES + 8, &tid, 4);
    }
    recs = r;
    double t0 = now();
    for (uint64_t s = 0; s < n; s++) { /* what capture_run did before */
        uint32_t tid;
        memcpy(&tid, r + s * PTXI_RECORD_BYTES + 8, 4);
        keys[s] = (uint64_t)tid << 32 | s;
    }
    qsort(keys, n, sizeof *keys, by_key);
    double t1 = now();
    if (capture_order(r, n, order) < 0)
        return 2;
    double t2 = now();
    for (uint64_t i = 0; i < n; i++)
        if ((uint32_t)keys[i] != order[i]) {
            printf("MISMATCH at %llu\n", (unsigned long long)i);
            return 1;
        }
    printf("records %llu, %llu per thread: qsort %.3f s, radix %.3f s, ratio %.1fx\n",
           (unsigned long long)n, (unsigned long long)per, t1 - t0, t2 - t1, (t1 - t0) / (t2 - t1));
    return 0;
}
