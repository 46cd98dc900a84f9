/*
 * Trace sorter benchmark driver (bench/trace/run.sh builds and runs it).
 *
 *   bench gen SHAPE OUT.bin [SCALE]
 *       writes a thread-major binary requests file of one trace shape
 *       (SCALE, default 1, multiplies its thread count). Every shape but
 *       gather is a loop over eight memory instructions (pc 0x100 + 0x10 k,
 *       k = load % 8); a coalesced load reads 4 B at base_k + 4 * (i * T +
 *       tid) (a warp's 32 loads fill one 128-byte line), a scattered one
 *       8 B at a random 8-byte slot of 64 MiB (its own line); pc 0x120 is
 *       dependent (dep 1), the others not:
 *         mixed      65,536 threads x 128 loads (8.4 M records), loads
 *                    k = 3 and 7 scattered, the rest coalesced: the issue's
 *                    `gpuprobe trace sort` case
 *         scattered  65,536 x 128, every load scattered (no coalescing:
 *                    one output request per record, the heaviest output)
 *         long       512 threads x 16,384 loads (8.4 M): two blocks of 134
 *                    MB, read through per-thread buffers
 *         mixed129   65,024 x 129 (8.4 M), mixed's loads: its blocks of
 *                    256 threads are 1.03 MB, just over the size read in
 *                    place (TRACE_SORT_STREAM_ABOVE), so they are read
 *                    through per-thread buffers: short threads streamed
 *         short      2,097,152 threads x 4 loads (8.4 M): 8,192 blocks
 *         gather     the gather kernel of the first benchmark: 40 records a
 *                    thread (a[i], idx[i], b[idx[i]] random and skipped by
 *                    every 7th thread on odd iterations, v[4i], out[i]),
 *                    209,716 threads (8.4 M records)
 *   bench csv IN.bin OUT.csv
 *       rewrites a binary requests file as CSV requests (the CSV input).
 *   bench pipe IN OUT [name=value...]
 *       sorts IN into OUT through the real pipeline (trace/pipeline.h, what
 *       `gpuprobe trace sort IN -o OUT` runs: input of any format, output
 *       written to the file, part file and rename) and prints one line.
 *   bench sort IN.bin [name=value...] [l1=feedback|merge|both]
 *       the baseline: the sorter alone on a binary input, its output only
 *       checksummed (discarded); l1= sorts with cache feedback
 *       (cache/feedback.h, as `trace sort --feedback`, `--mshr-merge` or
 *       both: the L1 of the parameters' arch, fermi by default, hit
 *       latency and merge limit by default) and adds the L1's hits,
 *       merges and fetches to the line.
 *   bench read IN
 *       the other baseline: reading the input alone (a binary file's
 *       records touched in place; any other format through trace_read_path
 *       into a counting sink).
 *   bench read2 IN.csv
 *       reading a CSV input alone on two threads (trace_csv_read_fd_batch,
 *       what the pipeline's copy runs with a core free) into a counting
 *       sink: the parse's own scaling, against read.
 * Each prints: records_in, requests_out, seconds (wall), records_per_s
 * (input records over wall time), cpu_seconds (user + system of the whole
 * process: the sorting thread and the output's writer thread),
 * main_cpu_seconds (the sorting thread alone), peak_rss_kb (getrusage
 * ru_maxrss) and output_bytes.
 *   bench write OUT BYTES
 *       the machine's own cost of writing: BYTES of zeros to a new file in
 *       1 MiB write(2) calls (the page cache the output goes to).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#if __has_include("cache/feedback.h") /* not in a revision built for BENCH_BEFORE */
#include "cache/feedback.h"
#define BENCH_L1 1
#endif
#include "trace/binfmt.h"
#include "trace/csv.h"
#include "trace/pipeline.h"
#include "trace/readfile.h"
#include "trace/rng.h"
#include "trace/sort.h"

#define TPB 256u

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- generating -------------------------------------------------------------- */

struct shape {
    const char *name;
    uint64_t threads, loads;
    uint32_t scattered; /* bit k: load k % 8 is scattered */
};

static const struct shape shapes[] = {
    {"mixed", 65536, 128, 0x88},
    {"scattered", 65536, 128, 0xff},
    {"long", 512, 16384, 0x88},
    {"mixed129", 65024, 129, 0x88},
    {"short", 2097152, 4, 0x88},
};

static int put(struct trace_bin_writer *w, uint64_t tid, uint64_t pc, uint64_t addr, uint32_t width,
               uint32_t dep)
{
    struct trace_rec r = {.tid = tid, .pc = pc, .addr = addr, .width = width, .dep = (uint8_t)dep};
    return trace_bin_write_rec(w, &r);
}

static int gen_loop(struct trace_bin_writer *w, const struct shape *s, uint64_t threads)
{
    struct trace_rng g;
    trace_rng_seed(&g, 1);
    for (uint64_t tid = 0; tid < threads; tid++)
        for (uint64_t i = 0; i < s->loads; i++) {
            uint32_t k = (uint32_t)(i % 8);
            uint64_t pc = 0x100 + 0x10 * k;
            int rc;
            if (s->scattered >> k & 1)
                rc = put(w, tid, pc, 0x40000000ull + (trace_rng_next(&g) % (8u << 20)) * 8, 8, k == 2);
            else
                rc = put(w, tid, pc, ((uint64_t)(k + 1) << 36) + 4 * ((i / 8) * threads + tid), 4, k == 2);
            if (rc)
                return -1;
        }
    return 0;
}

static int gen_gather(struct trace_bin_writer *w, uint64_t threads)
{
    struct trace_rng g;
    trace_rng_seed(&g, 1);
    for (uint64_t tid = 0; tid < threads; tid++)
        for (uint64_t it = 0; it < 8; it++) {
            uint64_t i = tid + it * threads;
            int skip = tid % 7 == 3 && it % 2;
            if (put(w, tid, 0x100, 0x10000000ull + i * 4, 4, 0) || put(w, tid, 0x110, 0x20000000ull + i * 4, 4, 1) ||
                (!skip && put(w, tid, 0x120, 0x40000000ull + (trace_rng_next(&g) % (8u << 20)) * 8, 8, 1)) ||
                put(w, tid, 0x130, 0x80000000ull + i * 64, 16, 0) || put(w, tid, 0x140, 0x30000000ull + i * 4, 4, 0))
                return -1;
        }
    return 0;
}

static int gen(const char *shape, const char *out, uint64_t scale)
{
    struct trace_bin_header h;
    trace_bin_header_init(&h, TRACE_BIN_REQUESTS, NULL);
    h.threads_per_block = TPB;
    struct trace_err err = {0};
    struct trace_bin_writer *w = trace_bin_writer_open(out, &h, &err);
    if (!w) {
        fprintf(stderr, "gen: %s\n", err.msg);
        return 1;
    }
    int rc = -1;
    if (strcmp(shape, "gather") == 0)
        rc = gen_gather(w, 209716 * scale);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        if (strcmp(shape, shapes[i].name) == 0)
            rc = gen_loop(w, &shapes[i], shapes[i].threads * scale);
    if (trace_bin_writer_close(w, &err) || rc) {
        fprintf(stderr, "gen: %s\n", rc ? "unknown shape or write error" : err.msg);
        return 1;
    }
    return 0;
}

/* ---- measuring --------------------------------------------------------------- */

static double t0;

static void report(const char *what, uint64_t in, uint64_t out, long long bytes)
{
    double dt = now() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
                 (double)ru.ru_stime.tv_usec * 1e-6;
    struct rusage th;
    getrusage(RUSAGE_THREAD, &th);
    double main_cpu = (double)th.ru_utime.tv_sec + (double)th.ru_utime.tv_usec * 1e-6 + (double)th.ru_stime.tv_sec +
                      (double)th.ru_stime.tv_usec * 1e-6;
    printf("%s records_in=%" PRIu64 " requests_out=%" PRIu64 " seconds=%.3f records_per_s=%.0f cpu_seconds=%.3f "
           "main_cpu_seconds=%.3f peak_rss_kb=%ld output_bytes=%lld\n",
           what, in, out, dt, (double)in / dt, cpu, main_cpu, ru.ru_maxrss, bytes);
}

static int parse_params(struct trace_params *p, int argc, char **argv, int from)
{
    char msg[200];
    trace_params_default(p);
    for (int i = from; i < argc; i++)
        if (trace_params_parse(p, argv[i], msg, sizeof msg)) {
            fprintf(stderr, "bench: %s\n", msg);
            return -1;
        }
    return 0;
}

static int pipe_run(int argc, char **argv)
{
    struct trace_params p;
    if (parse_params(&p, argc, argv, 4))
        return 2;
    struct trace_files f = {.input = argv[2], .output = argv[3]};
    struct trace_summary sum;
    struct trace_outcome out;
    struct trace_failure fail;
    t0 = now();
    if (trace_pipeline_sort(&f, &p, &sum, &out, &fail)) {
        fprintf(stderr, "pipe: %s\n", fail.msg);
        return 1;
    }
#ifdef TRACE_OUTCOME_SORT_THREADS /* not in a revision built for BENCH_BEFORE */
    printf("threads=%d ", out.sort_threads);
#endif
    report("pipe", sum.records_in, sum.requests_out, out.output_bytes);
    trace_summary_free(&sum);
    return 0;
}

/* IN rewritten as CSV requests (the CSV input of the benchmark). */
static int convert_run(const char *in, const char *out)
{
    struct trace_params p;
    trace_params_default(&p);
    p.out_format = TRACE_OUT_CSV;
    struct trace_files f = {.input = in, .output = out};
    struct trace_outcome o;
    struct trace_failure fail;
    if (trace_pipeline_convert(&f, &p, &o, &fail)) {
        fprintf(stderr, "convert: %s\n", fail.msg);
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

#ifdef BENCH_L1
/* The L1 `trace sort` would consult with --feedback, --mshr-merge or both
 * (what = "feedback", "merge", "both"; server/cli/trace_sort_l1.c makes the
 * same one from the options) into *fb and *ops. -1 on a bad value. */
static int bench_l1(const char *what, const struct trace_params *p, struct cache_feedback *fb,
                    struct trace_l1_ops *ops)
{
    char msg[200];
    struct cache_geom l2;
    int keep = strcmp(what, "merge") != 0, merge = strcmp(what, "feedback") != 0;
    if (!keep && !merge)
        return -1;
    memset(fb, 0, sizeof *fb);
    if (cache_arch_geometry(p->arch[0] ? p->arch : "fermi", &fb->geom, &l2, msg, sizeof msg)) {
        fprintf(stderr, "bench: %s\n", msg);
        return -1;
    }
    fb->keep = keep;
    fb->max_merge = merge ? 8 : 0;
    fb->hit_latency = keep ? cache_feedback_hit_latency(p->lat_min) : 0;
    cache_feedback_ops(fb, ops);
    return 0;
}
#endif

static int sort_run(int argc, char **argv)
{
    struct trace_params p;
    struct trace_sort_opts o = {0};
    const char *l1 = argc > 3 && strncmp(argv[argc - 1], "l1=", 3) == 0 ? argv[argc - 1] + 3 : NULL;
    if (parse_params(&p, argc - (l1 != NULL), argv, 3))
        return 2;
#ifdef BENCH_L1
    struct cache_feedback fb;
    struct trace_l1_ops ops;
    if (l1 && bench_l1(l1, &p, &fb, &ops))
        return 2;
    o.l1 = l1 ? &ops : NULL;
#else
    if (l1)
        return 2;
#endif
    struct trace_summary sum;
    struct trace_err err = {0};
    struct check c = {0, 0xcbf29ce484222325ull};
    t0 = now();
    if (trace_sort_file(argv[2], &p, &o, check_sink, &c, &sum, &err)) {
        fprintf(stderr, "sort: %s (offset %" PRIu64 ")\n", err.msg, err.offset);
        return 1;
    }
#ifdef BENCH_L1
    if (sum.l1)
        printf("l1_hits=%" PRIu64 " l1_merged=%" PRIu64 " l1_fetches=%" PRIu64 " ", sum.l1_hits, sum.l1_merged,
               sum.requests_out - sum.l1_hits - sum.l1_merged);
#endif
    report("sort", sum.records_in, c.n, 0);
#ifdef BENCH_L1
    if (l1)
        cache_feedback_done(&fb);
#endif
    fprintf(stderr, "checksum=%016" PRIx64 "\n", c.h);
    trace_summary_free(&sum);
    return 0;
}

static int count_sink(void *ctx, const struct trace_rec *r)
{
    uint64_t *n = ctx;
    n[0]++;
    n[1] += r->addr;
    return 0;
}

static int read_run(const char *in)
{
    struct trace_err err = {0};
    enum trace_format fmt;
    uint64_t n[2] = {0, 0};
    t0 = now();
    if (trace_detect_path(in, &fmt, &err)) {
        fprintf(stderr, "read: %s\n", err.msg);
        return 1;
    }
    if (fmt == TRACE_FMT_BIN) { /* the records in place, as the sorter reads them */
        struct trace_bin b;
        if (trace_bin_open(in, &b, &err)) {
            fprintf(stderr, "read: %s\n", err.msg);
            return 1;
        }
        for (uint64_t i = 0; i < b.count; i++) {
            n[1] += b.recs[i].addr;
            if (i % (1u << 18) == 0)
                trace_bin_release(&b, i ? i - (1u << 18) : 0, i);
        }
        n[0] = b.count;
        trace_bin_close(&b);
    } else if (trace_read_path(in, fmt, NULL, count_sink, n, NULL, NULL, &err)) {
        fprintf(stderr, "read: %s\n", err.msg);
        return 1;
    }
    report("read", n[0], n[1] & 1, 0);
    return 0;
}

#ifdef TRACE_CSV_READ_FD_BATCH /* else a baseline tree from before it */
static int count_batch(void *ctx, struct trace_rec *r, size_t k)
{
    for (size_t i = 0; i < k; i++)
        count_sink(ctx, &r[i]);
    return 0;
}

static int read2_run(const char *in)
{
    struct trace_err err = {0};
    uint64_t n[2] = {0, 0};
    t0 = now();
    int fd = open(in, O_RDONLY | O_CLOEXEC);
    struct trace_csv_opts o = {.threads = 2};
    if (fd < 0 || trace_csv_read_fd_batch(fd, &o, count_batch, n, &err)) {
        fprintf(stderr, "read2: %s\n", fd < 0 ? strerror(errno) : err.msg);
        if (fd >= 0)
            close(fd);
        return 1;
    }
    close(fd);
    report("read2", n[0], n[1] & 1, 0);
    return 0;
}
#else
static int read2_run(const char *in)
{
    fprintf(stderr, "read2 %s: this tree has no trace_csv_read_fd_batch\n", in);
    return 1;
}
#endif

static int write_run(const char *out, uint64_t bytes)
{
    static char buf[1 << 20];
    t0 = now();
    FILE *f = fopen(out, "wb");
    if (!f)
        return 1;
    setvbuf(f, NULL, _IONBF, 0);
    for (uint64_t left = bytes; left;) {
        size_t k = left < sizeof buf ? (size_t)left : sizeof buf;
        if (fwrite(buf, 1, k, f) != k)
            return 1;
        left -= k;
    }
    if (fclose(f))
        return 1;
    report("write", 0, 0, (long long)bytes);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "write") == 0)
        return write_run(argv[2], strtoull(argv[3], NULL, 10));
    if (argc >= 4 && strcmp(argv[1], "gen") == 0)
        return gen(argv[2], argv[3], argc > 4 ? strtoull(argv[4], NULL, 10) : 1);
    if (argc >= 4 && strcmp(argv[1], "pipe") == 0)
        return pipe_run(argc, argv);
    if (argc >= 3 && strcmp(argv[1], "sort") == 0)
        return sort_run(argc, argv);
    if (argc == 4 && strcmp(argv[1], "csv") == 0)
        return convert_run(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "read") == 0)
        return read_run(argv[2]);
    if (argc == 3 && strcmp(argv[1], "read2") == 0)
        return read2_run(argv[2]);
    fprintf(stderr, "usage: bench gen SHAPE OUT [SCALE] | bench pipe IN OUT [name=value...] | "
                    "bench csv IN OUT | bench sort IN [name=value...] | bench read IN | bench read2 IN.csv | "
                    "bench write OUT BYTES\n");
    return 2;
}
