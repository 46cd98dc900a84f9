/*
 * Cache model benchmark driver (bench/cache/run.sh builds and runs it).
 *
 *   bench SORTED ENGINE L2 [ARCH]
 *       runs the cache model (cache/model.h) over a sorted binary file with
 *       the ARCH geometry (default hopper) and the timing of the file's own
 *       sort (latency lat_min, its MSHR count, 8 merges): ENGINE exact,
 *       reuse or both, each with a 2 after it (exact2, reuse2, both2) for
 *       cache_config.threads = 2 (with both engines and the L2, each
 *       engine's walk on a thread of its own; one engine: one thread), L2 1 or 0
 *       (with or without the shared L2). Prints
 *       one line: sorted records, wall seconds of the whole call (open,
 *       index pass, model, correction), records/s over it, CPU seconds
 *       (user + system), peak RSS (getrusage ru_maxrss, this process) and
 *       the L1/L2 hit rates of each engine run, so runs can be compared.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "cache/input.h"
#include "cache/model.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench SORTED exact|reuse|both[2] 0|1 [ARCH]\n");
        return 2;
    }
    struct cache_config cfg;
    char msg[256];
    memset(&cfg, 0, sizeof cfg);
    if (cache_arch_geometry(argc > 4 ? argv[4] : "hopper", &cfg.geom[0], &cfg.geom[1], msg, sizeof msg)) {
        fprintf(stderr, "bench: %s\n", msg);
        return 2;
    }
    cfg.engines = strncmp(argv[2], "exact", 5) == 0   ? CACHE_ENGINE_EXACT
                  : strncmp(argv[2], "reuse", 5) == 0 ? CACHE_ENGINE_REUSE
                                                      : CACHE_ENGINE_BOTH;
    cfg.threads = strchr(argv[2], '2') ? 2 : 1;
    cfg.l2 = atoi(argv[3]) != 0;
    double t0 = now();
    struct cache_input in;
    struct trace_err err = {0};
    if (cache_input_open(&in, argv[1], &err)) {
        fprintf(stderr, "bench: %s (offset %" PRIu64 ")\n", err.msg, err.offset);
        return 1;
    }
    cfg.timing[0] = (struct cache_timing){in.params.lat_min, in.params.mshr, 8};
    cfg.timing[1] = (struct cache_timing){0, 0, 8};
    struct cache_result res;
    if (cache_model_run(&in, &cfg, &res, msg, sizeof msg)) {
        fprintf(stderr, "bench: %s\n", msg);
        return 1;
    }
    double dt = now() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
                 (double)ru.ru_stime.tv_usec * 1e-6;
    printf("%s l2=%d records=%" PRIu64 " sms=%u seconds=%.3f records_per_s=%.0f cpu_seconds=%.3f "
           "peak_rss_kb=%ld",
           argv[2], cfg.l2, in.count, in.sms, dt, (double)in.count / dt, cpu, ru.ru_maxrss);
    static const char *const eng[2] = {"exact", "reuse"};
    for (int e = 0; e < 2; e++)
        for (int lv = 0; lv < (cfg.l2 ? 2 : 1); lv++)
            if (cfg.engines & (1 << e)) {
                const struct cache_estimate *x = &res.r[e][lv].est;
                printf(" %s_l%d_hit=%.4f", eng[e], lv + 1, cache_rate(x->hits, x->requests));
            }
    putchar('\n');
    cache_result_free(&res);
    cache_input_close(&in);
    return 0;
}
