/*
 * Trace sorter benchmark driver (bench/trace/run.sh builds and runs it).
 *
 *   bench gen OUT RECORDS [SEED [ITERS]]
 *       writes a thread-major binary requests file of exactly RECORDS
 *       records: a synthetic kernel of 256-thread blocks whose threads loop
 *       over five memory instructions per iteration, the mix of a gather
 *       kernel (out[i] = a[i] * b[idx[i]] plus a 16-byte strided read):
 *         0x100 a[i]      4 B, coalesced,          dep 0
 *         0x110 idx[i]    4 B, coalesced,          dep 1 (feeds the gather)
 *         0x120 b[idx]    8 B, random in 64 MiB,   dep 1 (skipped by every
 *                                                  7th thread on odd
 *                                                  iterations: divergence)
 *         0x130 v[4i]    16 B, stride 64 B,        dep 0
 *         0x140 out[i]    4 B, coalesced store,    dep 0
 *       ITERS (8) iterations, so 40 records per thread; the grid grows with
 *       RECORDS.
 *   bench sort IN fast|ref [OUT.bin] [name=value...]
 *       sorts IN with the event-driven loop or the literal reference and
 *       prints one line: records in, requests out, wall seconds, records/s
 *       (over wall time), CPU seconds (user + system, whole process), peak
 *       RSS (getrusage ru_maxrss, this process only) and a checksum of the
 *       output stream (equal for fast and ref on the same input). With
 *       OUT.bin the sorted stream is written there as a binary file; without
 *       it goes to a sink that only checksums it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "trace/binfmt.h"
#include "trace/rng.h"
#include "trace/sort.h"

#define TPB 256u
#define PER_ITER 5u

static uint32_t iters = 8;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Appends one thread's records (at most `left`) to the writer; returns how many. */
static uint64_t gen_thread(struct trace_bin_writer *w, struct trace_rng *g, uint64_t tid, uint64_t nthreads_hint,
                           uint64_t left)
{
    uint64_t n = 0;
    for (uint32_t it = 0; it < iters && n < left; it++) {
        uint64_t i = tid + (uint64_t)it * nthreads_hint;
        struct trace_rec r[PER_ITER] = {
            {tid, 0x100, 0x10000000ull + i * 4, 4, 0},
            {tid, 0x110, 0x20000000ull + i * 4, 4, 1},
            {tid, 0x120, 0x40000000ull + (trace_rng_next(g) % (8u << 20)) * 8, 8, 1},
            {tid, 0x130, 0x80000000ull + i * 64, 16, 0},
            {tid, 0x140, 0x30000000ull + i * 4, 4, 0},
        };
        for (uint32_t k = 0; k < PER_ITER && n < left; k++) {
            if (k == 2 && tid % 7 == 3 && it % 2)
                continue;
            if (trace_bin_write_rec(w, &r[k]))
                return UINT64_MAX;
            n++;
        }
    }
    return n;
}

static int gen(const char *out, uint64_t records, uint64_t seed)
{
    struct trace_bin_header h;
    trace_bin_header_init(&h, TRACE_BIN_REQUESTS, NULL);
    h.threads_per_block = TPB;
    struct trace_err err;
    struct trace_bin_writer *w = trace_bin_writer_open(out, &h, &err);
    if (!w) {
        fprintf(stderr, "gen: %s\n", err.msg);
        return 1;
    }
    struct trace_rng g;
    trace_rng_seed(&g, seed);
    uint64_t hint = records / (iters * PER_ITER) + 1, done = 0;
    for (uint64_t tid = 0; done < records; tid++) {
        uint64_t n = gen_thread(w, &g, tid, hint, records - done);
        if (n == UINT64_MAX)
            break;
        done += n;
    }
    if (trace_bin_writer_close(w, &err) || done != records) {
        fprintf(stderr, "gen: %s\n", err.msg);
        return 1;
    }
    return 0;
}

struct check {
    uint64_t n, h;
};

static int check_sink(void *ctx, const struct trace_out *o, size_t n)
{
    struct check *c = ctx;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = o[i].addr ^ (o[i].tid << 20) ^ ((uint64_t)o[i].sm << 48) ^ o[i].width;
        c->h = (c->h ^ v) * 0x100000001b3ull;
    }
    c->n += n;
    return 0;
}

static int sort(int argc, char **argv)
{
    const char *in = argv[2];
    struct trace_sort_opts o = {.reference = strcmp(argv[3], "ref") == 0};
    const char *outpath = argc > 4 && !strchr(argv[4], '=') ? argv[4] : NULL;
    struct trace_params p;
    trace_params_default(&p);
    char msg[200];
    for (int i = outpath ? 5 : 4; i < argc; i++)
        if (trace_params_parse(&p, argv[i], msg, sizeof msg)) {
            fprintf(stderr, "sort: %s\n", msg);
            return 2;
        }
    struct trace_input input;
    struct trace_err err;
    struct trace_summary sum;
    struct check c = {0, 0xcbf29ce484222325ull};
    double t0 = now();
    if (trace_input_open(&input, in, &o, &err)) {
        fprintf(stderr, "sort: %s (offset %" PRIu64 ")\n", err.msg, err.offset);
        return 1;
    }
    trace_params_resolve(&p, input.bin.h.threads_per_block);
    struct trace_bin_writer *w = NULL;
    if (outpath) {
        struct trace_bin_header h;
        trace_bin_header_init(&h, TRACE_BIN_SORTED, &p);
        w = trace_bin_writer_open(outpath, &h, &err);
        if (!w) {
            fprintf(stderr, "sort: %s\n", err.msg);
            return 1;
        }
    }
    int rc = w ? trace_sort_input(&input, &p, &o, trace_bin_write_out, w, &sum, &err)
               : trace_sort_input(&input, &p, &o, check_sink, &c, &sum, &err);
    if (w) {
        trace_bin_writer_set_input(w, sum.records_in);
        if (trace_bin_writer_close(w, rc ? NULL : &err) && !rc)
            rc = 1;
        c.n = sum.requests_out;
    }
    trace_input_close(&input);
    double dt = now() - t0;
    if (rc) {
        fprintf(stderr, "sort: %s (offset %" PRIu64 ")\n", err.msg, err.offset);
        return 1;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    char check[24] = "in-file";
    if (!outpath)
        snprintf(check, sizeof check, "%016" PRIx64, c.h);
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
                 (double)ru.ru_stime.tv_usec * 1e-6;
    printf("%s records_in=%" PRIu64 " requests_out=%" PRIu64 " seconds=%.3f records_per_s=%.0f cpu_seconds=%.3f "
           "peak_rss_kb=%ld checksum=%s coalescing=%.3f ticks=%" PRIu64 " mshr_full=%" PRIu64 " all_blocked=%" PRIu64 "\n",
           argv[3], sum.records_in, c.n, dt, (double)sum.records_in / dt, cpu, ru.ru_maxrss, check,
           sum.requests_out ? (double)sum.records_in / (double)sum.requests_out : 0.0, sum.ticks,
           sum.mshr_stall_ticks, sum.idle_ticks);
    trace_summary_free(&sum);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "gen") == 0) {
        if (argc >= 6)
            iters = (uint32_t)strtoul(argv[5], NULL, 10);
        if (iters == 0)
            iters = 1;
        return gen(argv[2], strtoull(argv[3], NULL, 10), argc > 4 ? strtoull(argv[4], NULL, 10) : 1);
    }
    if (argc >= 4 && strcmp(argv[1], "sort") == 0 && (!strcmp(argv[3], "fast") || !strcmp(argv[3], "ref")))
        return sort(argc, argv);
    fprintf(stderr, "usage: bench gen OUT RECORDS [SEED [ITERS]] | bench sort IN fast|ref [OUT.bin] [name=value...]\n");
    return 2;
}
