/*
 * Unit tests of the sorter's driver and of spooling (trace/sort.c,
 * trace/spool.c): a thread-major binary file sorts to exactly what the same
 * records sort to in memory, with threads_per_block taken from the header
 * unless set; a file in text order (threads interleaved warp by warp) is
 * spooled on the way, through several runs when memory is small, and sorts
 * the same; the spool alone is a stable sort by thread (each thread's order
 * kept) for any memory size; threads thousands of records long sort the
 * same from a file (read through per-thread buffers) as from memory, and so
 * do small blocks copied whole or read in place; a bad
 * record or a broken thread order is
 * reported with its byte offset before any output; a sorted file is refused
 * as input; bad parameters are refused; a sink's non-zero value stops the
 * sort and comes back; two threads (SMs in parallel) hand the sink the
 * same records in the same batches, whatever their reorder memory, and
 * stop on a sink's value too; the sorted binary output round-trips with its
 * header; the summary's JSON and text carry the counts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/support/tmpfile.h"
#include "trace/binfmt.h"
#include "trace/rng.h"
#include "trace/sort.h"
#include "trace/spool.h"

struct vec {
    struct trace_out *o;
    size_t n, cap;
};

static int collect(void *ctx, const struct trace_out *o, size_t n)
{
    struct vec *v = ctx;
    if (v->n + n > v->cap) {
        v->cap = (v->n + n) * 2;
        v->o = realloc(v->o, v->cap * sizeof *v->o);
        assert_non_null(v->o);
    }
    memcpy(v->o + v->n, o, n * sizeof *o);
    v->n += n;
    return 0;
}

static void same(const struct vec *a, const struct vec *b)
{
    assert_int_equal(a->n, b->n);
    for (size_t i = 0; i < a->n; i++) {
        uint8_t x[TRACE_BIN_OUT_BYTES], y[TRACE_BIN_OUT_BYTES];
        trace_bin_out_encode(&a->o[i], x);
        trace_bin_out_encode(&b->o[i], y);
        if (memcmp(x, y, sizeof x))
            fail_msg("record %zu differs", i);
    }
}

static int setup(void **state)
{
    return tmp_setup(state, "sort", "in.bin");
}

static int teardown(void **state)
{
    struct tmp *t = *state;
    char p[200];
    snprintf(p, sizeof p, "%s/out.bin", t->dir);
    unlink(p);
    return tmp_teardown(state);
}

/* A kernel of `blocks` blocks of 64 threads, `iters` iterations of two loads
 * (coalesced, and a dependent gather), thread-major. */
static struct trace_rec *kernel(uint64_t blocks, uint32_t iters, size_t *n)
{
    struct trace_rng g;
    trace_rng_seed(&g, 5);
    size_t cap = blocks * 64 * iters * 2;
    struct trace_rec *r = malloc(cap * sizeof *r);
    assert_non_null(r);
    *n = 0;
    for (uint64_t tid = 0; tid < blocks * 64; tid++)
        for (uint32_t i = 0; i < iters; i++) {
            r[(*n)++] = (struct trace_rec){tid, 0x100, 0x100000 + (tid + i * 4096) * 4, 4, 0, 0, 0};
            r[(*n)++] = (struct trace_rec){tid, 0x110, 0x800000 + (trace_rng_next(&g) % 4096) * 8, 8, 1, 0, 0};
        }
    return r;
}

/* The same records in the order a warp-level text trace gives them:
 * instruction by instruction, 32 threads at a time. */
static struct trace_rec *interleave(const struct trace_rec *r, size_t n, uint32_t per_thread)
{
    struct trace_rec *o = malloc(n * sizeof *o);
    assert_non_null(o);
    size_t threads = n / per_thread, k = 0;
    for (size_t w = 0; w < threads; w += 32)
        for (uint32_t i = 0; i < per_thread; i++)
            for (size_t t = w; t < w + 32 && t < threads; t++)
                o[k++] = r[t * per_thread + i];
    assert_int_equal(k, n);
    return o;
}

static void write_trace(const char *path, const struct trace_rec *r, size_t n, uint32_t tpb)
{
    struct trace_bin_header h;
    trace_bin_header_init(&h, TRACE_BIN_REQUESTS, NULL);
    h.threads_per_block = tpb;
    struct trace_err err;
    struct trace_bin_writer *w = trace_bin_writer_open(path, &h, &err);
    assert_non_null(w);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(trace_bin_write_rec(w, &r[i]), 0);
    assert_int_equal(trace_bin_writer_close(w, &err), 0);
}

/* Sets byte `at` of the file at path to v (a header field of a written trace). */
static void put_byte(const char *path, long at, uint8_t v)
{
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    assert_int_equal(fseek(f, at, SEEK_SET), 0);
    assert_int_equal(fwrite(&v, 1, 1, f), 1);
    assert_int_equal(fclose(f), 0);
}

/* Sorting the file at path is refused, with nothing written, at byte
 * offset `at` with a message that says `says`. */
static void sort_refused(const char *path, const struct trace_params *p, uint64_t at, const char *says)
{
    struct vec out = {0};
    struct trace_summary s;
    struct trace_err err;
    assert_int_equal(trace_sort_file(path, p, NULL, collect, &out, &s, &err), TRACE_SORT_EINPUT);
    assert_int_equal(out.n, 0);
    assert_int_equal(err.offset, at);
    if (!strstr(err.msg, says))
        fail_msg("'%s' does not say '%s'", err.msg, says);
    trace_summary_free(&s);
    free(out.o);
}

static struct trace_params small_params(void)
{
    struct trace_params p;
    trace_params_default(&p);
    p.sms = 3;
    p.set |= TRACE_P_SMS;
    return p;
}

static void test_file_equals_memory(void **state)
{
    struct tmp *t = *state;
    size_t n;
    struct trace_rec *r = kernel(10, 3, &n);
    write_trace(t->path, r, n, 64);
    struct trace_params p = small_params();
    struct vec mem = {0}, file = {0};
    struct trace_summary sm, sf;
    struct trace_err err;
    /* the header's 64 threads per block apply when the parameter is not set */
    struct trace_params pm = p;
    pm.threads_per_block = 64;
    assert_int_equal(trace_sort_records(r, n, &pm, NULL, collect, &mem, &sm, &err), 0);
    assert_int_equal(trace_sort_file(t->path, &p, NULL, collect, &file, &sf, &err), 0);
    assert_int_equal(sf.params.threads_per_block, 64);
    assert_int_equal(sf.blocks, 10);
    same(&mem, &file);
    assert_int_equal(sf.records_in, n);
    trace_summary_free(&sf);
    /* an explicit value wins over the header */
    file.n = 0;
    struct trace_params p32 = p;
    assert_int_equal(trace_params_parse(&p32, "threads_per_block=32", err.msg, sizeof err.msg), 0);
    assert_int_equal(trace_sort_file(t->path, &p32, NULL, collect, &file, &sf, &err), 0);
    assert_int_equal(sf.params.threads_per_block, 32);
    assert_int_equal(sf.blocks, 20);
    trace_summary_free(&sf);
    trace_summary_free(&sm);
    free(mem.o);
    free(file.o);
    free(r);
}

static void test_text_order_is_spooled(void **state)
{
    struct tmp *t = *state;
    size_t n;
    struct trace_rec *r = kernel(40, 4, &n); /* 20480 records, 640 KB */
    struct trace_rec *mixed = interleave(r, n, 8);
    write_trace(t->path, mixed, n, 64);
    struct trace_params p = small_params();
    p.threads_per_block = 64;
    struct vec mem = {0}, file = {0};
    struct trace_summary sm, sf;
    struct trace_err err;
    assert_int_equal(trace_sort_records(r, n, &p, NULL, collect, &mem, &sm, &err), 0);
    struct trace_sort_opts o = {.tmpdir = t->dir, .spool_mem = 64 << 10}; /* 1024 records a run */
    assert_int_equal(trace_sort_file(t->path, &p, &o, collect, &file, &sf, &err), 0);
    same(&mem, &file);
    trace_summary_free(&sf);
    /* in memory, the interleaved order is refused with the first offending record */
    struct vec none = {0};
    assert_int_equal(trace_sort_records(mixed, n, &p, NULL, collect, &none, &sf, &err), TRACE_SORT_EINPUT);
    assert_int_equal(none.n, 0);
    assert_int_equal(err.offset, 32 * 32); /* record 32: thread 0's second request */
    assert_non_null(strstr(err.msg, "not thread-major"));
    trace_summary_free(&sf);
    trace_summary_free(&sm);
    free(mem.o);
    free(file.o);
    free(mixed);
    free(r);
}

static void test_spool_stable(void **state)
{
    struct tmp *t = *state;
    struct trace_rng g;
    trace_rng_seed(&g, 9);
    size_t mems[] = {1, 64 << 10, 200 << 10, 0};
    for (size_t m = 0; m < sizeof mems / sizeof mems[0]; m++) {
        const size_t n = 30000;
        struct trace_rec *r = malloc(n * sizeof *r);
        uint32_t seq[600] = {0};
        for (size_t i = 0; i < n; i++) {
            uint64_t tid = trace_rng_next(&g) % 600;
            r[i] = (struct trace_rec){tid * 1000003, seq[tid]++, i, 4, 0, 0, 0}; /* pc: the thread's own count */
        }
        struct trace_err err;
        struct trace_spool *s = trace_spool_new(t->dir, mems[m], &err);
        assert_non_null(s);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(trace_spool_add(s, &r[i]), 0);
        assert_int_equal(trace_spool_count(s), n);
        struct trace_bin_header h;
        trace_bin_header_init(&h, TRACE_BIN_REQUESTS, NULL);
        struct trace_bin_writer *w = trace_bin_writer_open(t->path, &h, &err);
        assert_int_equal(trace_spool_finish(s, w, &err), 0);
        assert_int_equal(trace_bin_writer_close(w, &err), 0);
        assert_int_equal(trace_spool_add(s, &r[0]), 1); /* finished */
        trace_spool_free(s);
        struct trace_bin b;
        assert_int_equal(trace_bin_open(t->path, &b, &err), 0);
        assert_int_equal(b.count, n);
        assert_true(b.h.flags & TRACE_BIN_FLAG_THREAD_MAJOR);
        for (size_t i = 1; i < n; i++) {
            assert_true(b.recs[i - 1].tid <= b.recs[i].tid);
            if (b.recs[i - 1].tid == b.recs[i].tid)
                assert_int_equal(b.recs[i - 1].pc + 1, b.recs[i].pc); /* input order kept */
        }
        trace_bin_close(&b);
        free(r);
    }
}

static void test_errors_before_output(void **state)
{
    struct tmp *t = *state;
    size_t n;
    struct trace_rec *r = kernel(10, 3, &n);
    r[n - 3].width = 12; /* near the end */
    write_trace(t->path, r, n, 64);
    struct trace_params p = small_params();
    struct vec out = {0};
    struct trace_summary s;
    struct trace_err err;
    sort_refused(t->path, &p, 128 + 32 * (n - 3), "width 12");
    /* a file that says thread-major but is not */
    r[n - 3].width = 4;
    r[n - 1].tid = 3;
    write_trace(t->path, r, n, 64);
    put_byte(t->path, 16, 1); /* the thread-major flag */
    sort_refused(t->path, &p, 128 + 32 * (n - 1), "thread-major");
    /* a version-1 file (no store flag) whose byte 29 is set is damaged */
    r[n - 1].tid = r[n - 2].tid;
    r[n - 5].store = 1;
    write_trace(t->path, r, n, 64);
    put_byte(t->path, 8, 1); /* version 1 */
    sort_refused(t->path, &p, 128 + 32 * (n - 5), "version-1");
    r[n - 5].store = 0;
    write_trace(t->path, r, n, 64);
    put_byte(t->path, 8, 1);
    assert_int_equal(trace_sort_file(t->path, &p, NULL, collect, &out, &s, &err), 0);
    assert_true(out.n > 0);
    out.n = 0;
    trace_summary_free(&s);
    /* a sorted file is not an input */
    struct trace_params q = p;
    trace_params_resolve(&q, 0);
    struct trace_bin_header h;
    trace_bin_header_init(&h, TRACE_BIN_SORTED, &q);
    struct trace_bin_writer *w = trace_bin_writer_open(t->path, &h, &err);
    assert_int_equal(trace_bin_writer_close(w, &err), 0);
    assert_int_equal(trace_sort_file(t->path, &p, NULL, collect, &out, &s, &err), TRACE_SORT_EINPUT);
    assert_non_null(strstr(err.msg, "sorted trace"));
    /* parameters */
    p.mshr = 0;
    assert_int_equal(trace_sort_records(r, n, &p, NULL, collect, &out, &s, &err), TRACE_SORT_EINPUT);
    assert_non_null(strstr(err.msg, "mshr"));
    assert_int_equal(out.n, 0);
    free(out.o);
    free(r);
}

/* The checking pass finds every kind of bad record, and names it and its
 * offset, whichever field is wrong; good records of every width pass. */
static void test_checking_pass_each_field(void **state)
{
    (void)state;
    size_t n;
    struct trace_rec *r = kernel(4, 2, &n);
    struct trace_params p = small_params();
    p.threads_per_block = 64;
    struct vec out = {0};
    struct trace_summary s;
    struct trace_err err;
    static const uint32_t good_widths[] = {1, 2, 4, 8, 16};
    for (size_t i = 0; i < sizeof good_widths / sizeof good_widths[0]; i++) {
        r[i].width = good_widths[i];
        r[i].addr = UINT64_MAX - (good_widths[i] - 1); /* its last byte is the top one */
    }
    r[5].store = 1;
    assert_int_equal(trace_sort_records(r, n, &p, NULL, collect, &out, &s, &err), 0);
    trace_summary_free(&s);
    struct {
        const char *field;
        uint32_t width;
        uint8_t dep, store;
        uint16_t reserved;
        uint64_t addr;
        const char *says;
    } bad[] = {
        {"width 0", 0, 0, 0, 0, 0x1000, "width 0"},     {"width 3", 3, 0, 0, 0, 0x1000, "width 3"},
        {"width 32", 32, 0, 0, 0, 0x1000, "width 32"},  {"width 2^31", 1u << 31, 0, 0, 0, 0x1000, "width"},
        {"dep 2", 4, 2, 0, 0, 0x1000, "dependency"},    {"dep 255", 4, 255, 0, 0, 0x1000, "dependency"},
        {"store 2", 4, 0, 2, 0, 0x1000, "store"},       {"reserved", 4, 0, 0, 1, 0x1000, "reserved"},
        {"reserved high", 4, 0, 0, 0x100, 0x1000, "reserved"},
        {"past 2^64", 8, 0, 0, 0, UINT64_MAX - 6, "passes 2^64"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        size_t at = (k * 7 + 3) % n;
        struct trace_rec keep = r[at];
        r[at].width = bad[k].width;
        r[at].dep = bad[k].dep;
        r[at].store = bad[k].store;
        r[at].reserved = bad[k].reserved;
        r[at].addr = bad[k].addr;
        out.n = 0;
        if (trace_sort_records(r, n, &p, NULL, collect, &out, &s, &err) != TRACE_SORT_EINPUT)
            fail_msg("%s: accepted", bad[k].field);
        assert_int_equal(out.n, 0);
        assert_int_equal(err.offset, 32 * at);
        if (!strstr(err.msg, bad[k].says))
            fail_msg("%s: \"%s\"", bad[k].field, err.msg);
        trace_summary_free(&s);
        r[at] = keep;
    }
    free(out.o);
    free(r);
}

/* Threads thousands of records long: their blocks (10 MB each) are read
 * through per-thread buffers, not in place; the output must not change. */
static void test_long_threads(void **state)
{
    struct tmp *t = *state;
    size_t n;
    struct trace_rec *r = kernel(2, 2500, &n); /* 128 threads, 5000 records each */
    write_trace(t->path, r, n, 64);
    struct trace_params p = small_params();
    struct vec mem = {0}, file = {0};
    struct trace_summary sm, sf;
    struct trace_err err;
    struct trace_params pm = p;
    pm.threads_per_block = 64;
    assert_int_equal(trace_sort_records(r, n, &pm, NULL, collect, &mem, &sm, &err), 0);
    assert_int_equal(trace_sort_file(t->path, &p, NULL, collect, &file, &sf, &err), 0);
    same(&mem, &file);
    /* and the same with every block of a small file buffered */
    file.n = 0;
    trace_summary_free(&sf);
    write_trace(t->path, r, 6000, 64);
    struct trace_sort_opts o = {.stream_above = 1};
    assert_int_equal(trace_sort_file(t->path, &p, &o, collect, &file, &sf, &err), 0);
    mem.n = 0;
    trace_summary_free(&sm);
    assert_int_equal(trace_sort_records(r, 6000, &pm, NULL, collect, &mem, &sm, &err), 0);
    same(&mem, &file);
    trace_summary_free(&sm);
    trace_summary_free(&sf);
    free(mem.o);
    free(file.o);
    free(r);
}

/* Blocks read through buffers on an SM whose resident blocks' big (16 KiB
 * a thread) buffers would pass the SM's budget: four blocks of 256 threads
 * at once on one SM, the first two slots with big buffers, the others with
 * small ones (threads of 400 records: one read each, or four); the output
 * is the one sorted in memory with every block read in place. */
static void test_stream_buffers_mixed(void **state)
{
    struct tmp *t = *state;
    size_t n;
    struct trace_rec *r = kernel(16, 200, &n); /* 1,024 threads, 400 records each */
    write_trace(t->path, r, n, 256);
    struct trace_params p = small_params();
    p.sms = 1;
    struct trace_params pm = p;
    pm.threads_per_block = 256;
    struct vec mem = {0}, file = {0};
    struct trace_summary sm, sf;
    struct trace_err err;
    struct trace_sort_opts in_place = {.stream_above = SIZE_MAX}; /* the reference reads no buffer */
    assert_int_equal(trace_sort_records(r, n, &pm, &in_place, collect, &mem, &sm, &err), 0);
    assert_true(sm.params.blocks_per_sm >= 4);
    struct trace_sort_opts o = {.stream_above = 1};
    assert_int_equal(trace_sort_file(t->path, &p, &o, collect, &file, &sf, &err), 0);
    same(&mem, &file);
    assert_int_equal(sf.ticks, sm.ticks);
    trace_summary_free(&sm);
    trace_summary_free(&sf);
    free(mem.o);
    free(file.o);
    free(r);
}

/* Each of the n ways runs[] of sorting the file at path gives the records
 * and the ticks sorted in memory (mem, sm). */
static void sorts_agree(const char *path, const struct trace_params *p, const struct trace_sort_opts *runs, size_t n,
                        const struct vec *mem, const struct trace_summary *sm)
{
    for (size_t i = 0; i < n; i++) {
        struct vec file = {0};
        struct trace_summary sf;
        struct trace_err err;
        assert_int_equal(trace_sort_file(path, p, &runs[i], collect, &file, &sf, &err), 0);
        same(mem, &file);
        assert_int_equal(sf.ticks, sm->ticks);
        trace_summary_free(&sf);
        free(file.o);
    }
}

/* Threads of uneven lengths read through buffers: a thread shorter than,
 * as long as and longer than a buffer (128 or 512 records), than a window
 * of the split (2,048), one of a record, runs of equal lengths (whose end
 * the split guesses from the thread before) broken by a different one,
 * and thread ids with gaps; the output is the one sorted in memory with
 * every block read in place. */
static void test_stream_uneven_threads(void **state)
{
    struct tmp *t = *state;
    static const uint32_t len[] = {1,    127,  128,  129, 511, 512, 513, 2047, 2048, 2049, 3000,
                                   300,  300,  300,  300, 301, 300, 300, 5000, 5000, 5000, 4999,
                                   1,    1,    2,    2049, 2047, 600, 7,  129,  129,  129,  128};
    const size_t nlen = sizeof len / sizeof len[0];
    size_t cap = 0;
    for (size_t i = 0; i < nlen; i++)
        cap += len[i];
    cap *= 4;
    struct trace_rec *r = malloc(cap * sizeof *r);
    assert_non_null(r);
    size_t n = 0, k = 0;
    for (uint64_t tid = 0; tid < 192; tid++) {
        if (tid % 7 == 3) /* no records: a gap in the thread ids */
            continue;
        uint32_t m = len[k++ % nlen];
        if (n + m > cap)
            break;
        for (uint32_t i = 0; i < m; i++)
            r[n++] = (struct trace_rec){tid, 0x100 + 0x10 * (i % 3), 0x100000 + (tid * 8191 + i * 64) * 4, 4,
                                        i % 3 == 1, 0, 0};
    }
    write_trace(t->path, r, n, 64);
    struct trace_params p = small_params();
    struct trace_params pm = p;
    pm.threads_per_block = 64;
    struct vec mem = {0};
    struct trace_summary sm;
    struct trace_err err;
    struct trace_sort_opts in_place = {.stream_above = SIZE_MAX};
    assert_int_equal(trace_sort_records(r, n, &pm, &in_place, collect, &mem, &sm, &err), 0);
    const struct trace_sort_opts runs[] = {{.stream_above = 1}, {0}, {.stream_above = 1, .threads = 2}};
    sorts_agree(t->path, &p, runs, sizeof runs / sizeof runs[0], &mem, &sm);
    trace_summary_free(&sm);
    free(mem.o);
    free(r);
}

/* The three ways a block is read from a file (sort.h): copied whole (the
 * default for these 24 KiB blocks), in place from the mapping (copy_upto 1:
 * no block copied), through per-thread buffers (stream_above 1), and
 * copied by two threads, all give the records sorted in memory. */
static void test_block_reads_agree(void **state)
{
    struct tmp *t = *state;
    size_t n;
    struct trace_rec *r = kernel(40, 6, &n);
    write_trace(t->path, r, n, 64);
    struct trace_params p = small_params();
    struct trace_params pm = p;
    pm.threads_per_block = 64;
    struct vec mem = {0};
    struct trace_summary sm;
    struct trace_err err;
    assert_int_equal(trace_sort_records(r, n, &pm, NULL, collect, &mem, &sm, &err), 0);
    assert_true(mem.n > 1000);
    const struct trace_sort_opts runs[] = {{0}, {.copy_upto = 1}, {.stream_above = 1}, {.threads = 2},
                                           {.threads = 2, .copy_upto = 1, .reorder_bytes = 4096},
                                           {.threads = 2, .split_above = 1}};
    sorts_agree(t->path, &p, runs, sizeof runs / sizeof runs[0], &mem, &sm);
    trace_summary_free(&sm);
    free(mem.o);
    free(r);
}

/* The checking pass in two halves at once (two threads, split_above 1):
 * wherever the middle falls (inside a thread, between threads, at a block's
 * start, for every length from 1 record up), the index is the one thread's
 * (the same output and summary); the first bad record in file order is the
 * one reported, whichever half it is in; a thread order broken exactly at
 * the middle is found. */
static void test_split_checking_pass(void **state)
{
    (void)state;
    size_t n;
    struct trace_rec *all = kernel(3, 2, &n); /* 3 blocks of 64 threads, 4 records each */
    struct trace_params p = small_params();
    p.threads_per_block = 64;
    struct trace_sort_opts split = {.threads = 2, .split_above = 1};
    struct trace_err err;
    for (size_t len = 1; len <= n; len += len < 300 ? 1 : 97) {
        struct vec want = {0}, got = {0};
        struct trace_summary sw, sg;
        assert_int_equal(trace_sort_records(all, len, &p, NULL, collect, &want, &sw, &err), 0);
        assert_int_equal(trace_sort_records(all, len, &p, &split, collect, &got, &sg, &err), 0);
        same(&want, &got);
        assert_int_equal(sg.blocks, sw.blocks);
        assert_int_equal(sg.ticks, sw.ticks);
        trace_summary_free(&sw);
        trace_summary_free(&sg);
        free(want.o);
        free(got.o);
    }
    struct vec out = {0};
    struct trace_summary s;
    /* bad records in both halves: the first half's is reported */
    struct trace_rec a = all[10], b = all[n - 5];
    all[10].width = 3;
    all[n - 5].width = 5;
    assert_int_equal(trace_sort_records(all, n, &p, &split, collect, &out, &s, &err), TRACE_SORT_EINPUT);
    assert_int_equal(err.offset, 32 * 10);
    assert_non_null(strstr(err.msg, "width 3"));
    trace_summary_free(&s);
    /* only in the second half: that one, with its offset */
    all[10] = a;
    assert_int_equal(trace_sort_records(all, n, &p, &split, collect, &out, &s, &err), TRACE_SORT_EINPUT);
    assert_int_equal(err.offset, 32 * (n - 5));
    assert_non_null(strstr(err.msg, "width 5"));
    trace_summary_free(&s);
    all[n - 5] = b;
    /* the thread order broken at the middle record */
    size_t mid = n / 2;
    all[mid].tid = all[mid - 1].tid - 1;
    assert_int_equal(trace_sort_records(all, n, &p, &split, collect, &out, &s, &err), TRACE_SORT_EINPUT);
    assert_int_equal(err.offset, 32 * mid);
    assert_non_null(strstr(err.msg, "not thread-major"));
    assert_int_equal(out.n, 0);
    trace_summary_free(&s);
    free(out.o);
    free(all);
}

/* Blocks noted by the input's writer (trace_blocks, a CSV copy's) stand
 * for the checking pass: the same output in any batching of the notes,
 * the records no longer checked (a width the pass refuses goes through),
 * and the pass run again when the notes are not of these records (fewer
 * of them, other threads per block, not thread-major). */
static void test_noted_blocks(void **state)
{
    (void)state;
    size_t n;
    struct trace_rec *all = kernel(5, 3, &n); /* 5 blocks of 64 threads, 6 records each */
    struct trace_params p = small_params();
    p.threads_per_block = 64;
    struct trace_err err;
    struct vec want = {0};
    struct trace_summary sw;
    assert_int_equal(trace_sort_records(all, n, &p, NULL, collect, &want, &sw, &err), 0);
    size_t batches[] = {1, 7, 64 * 6, n};
    for (size_t k = 0; k < sizeof batches / sizeof *batches; k++) {
        struct trace_blocks b;
        trace_blocks_init(&b, 64);
        for (size_t i = 0; i < n; i += batches[k])
            trace_blocks_note(&b, all + i, n - i < batches[k] ? n - i : batches[k]);
        assert_false(b.failed);
        assert_int_equal(b.n, 5);
        struct trace_sort_opts o = {.blocks = &b};
        struct vec got = {0};
        struct trace_summary sg;
        assert_int_equal(trace_sort_records(all, n, &p, &o, collect, &got, &sg, &err), 0);
        same(&want, &got);
        assert_int_equal(sg.blocks, sw.blocks);
        trace_summary_free(&sg);
        free(got.o);
        trace_blocks_free(&b);
    }
    trace_summary_free(&sw);
    free(want.o);

    struct trace_blocks b;
    trace_blocks_init(&b, 64);
    trace_blocks_note(&b, all, n);
    all[7].width = 3; /* the notes' records were checked by their reader */
    struct trace_sort_opts o = {.blocks = &b};
    struct vec out = {0};
    struct trace_summary s;
    assert_int_equal(trace_sort_records(all, n, &p, &o, collect, &out, &s, &err), 0);
    trace_summary_free(&s);
    out.n = 0;
    assert_int_equal(trace_sort_records(all, n - 1, &p, &o, collect, &out, &s, &err), TRACE_SORT_EINPUT);
    trace_summary_free(&s);
    p.threads_per_block = 32;
    assert_int_equal(trace_sort_records(all, n, &p, &o, collect, &out, &s, &err), TRACE_SORT_EINPUT);
    assert_non_null(strstr(err.msg, "width 3"));
    assert_int_equal(out.n, 0);
    trace_summary_free(&s);
    trace_blocks_free(&b);

    trace_blocks_init(&b, 64);
    struct trace_rec t = all[100];
    all[100] = all[400];
    all[400] = t;
    trace_blocks_note(&b, all, n);
    assert_true(b.failed);
    trace_blocks_free(&b);
    free(out.o);
    free(all);
}

static int stop_after_first(void *ctx, const struct trace_out *o, size_t n)
{
    (void)o;
    (void)n;
    ++*(int *)ctx;
    return 42;
}

static void test_sink_stops(void **state)
{
    (void)state;
    size_t n;
    struct trace_rec *r = kernel(10, 3, &n);
    struct trace_params p = small_params();
    p.threads_per_block = 64;
    int calls = 0;
    struct trace_summary s;
    struct trace_err err;
    struct trace_sort_opts ref = {.reference = 1};
    assert_int_equal(trace_sort_records(r, n, &p, NULL, stop_after_first, &calls, &s, &err), 42);
    assert_int_equal(calls, 1);
    trace_summary_free(&s);
    calls = 0;
    assert_int_equal(trace_sort_records(r, n, &p, &ref, stop_after_first, &calls, &s, &err), 42);
    assert_int_equal(calls, 1);
    trace_summary_free(&s);
    free(r);
}

/* Batches as the sink saw them: their sizes, in order. */
struct batches {
    struct vec recs;
    size_t sizes[4096], n;
};

static int collect_batches(void *ctx, const struct trace_out *o, size_t n)
{
    struct batches *b = ctx;
    assert_true(b->n < sizeof b->sizes / sizeof b->sizes[0]);
    b->sizes[b->n++] = n;
    return collect(&b->recs, o, n);
}

/* Two threads give the sink the one thread's records in the same batches,
 * and the same summary: with the default reorder memory (both SMs at once),
 * with so little that the thread ahead waits at every batch, and from a
 * file with every block read through buffers. */
static void test_two_threads_same_output(void **state)
{
    struct tmp *t = *state;
    size_t n;
    struct trace_rec *r = kernel(40, 6, &n);
    write_trace(t->path, r, n, 64);
    struct trace_params p = small_params();
    p.sms = 7;
    struct trace_sort_opts one = {0}, two = {.threads = 2}, tight = {.threads = 2, .reorder_bytes = 1},
                           two_buffered = {.threads = 2, .stream_above = 1, .reorder_bytes = 4096},
                           two_split = {.threads = 2, .split_above = 1};
    const struct trace_sort_opts *runs[] = {&two, &tight, &two_buffered, &two_split};
    struct batches *want = calloc(1, sizeof *want);
    assert_non_null(want);
    struct trace_summary sw;
    struct trace_err err;
    assert_int_equal(trace_sort_file(t->path, &p, &one, collect_batches, want, &sw, &err), 0);
    assert_true(want->n > 7); /* several batches per SM */
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        struct batches *got = calloc(1, sizeof *got);
        assert_non_null(got);
        struct trace_summary sg;
        assert_int_equal(trace_sort_file(t->path, &p, runs[i], collect_batches, got, &sg, &err), 0);
        same(&want->recs, &got->recs);
        assert_int_equal(got->n, want->n);
        assert_memory_equal(got->sizes, want->sizes, want->n * sizeof want->sizes[0]);
        assert_int_equal(sg.records_in, sw.records_in);
        assert_int_equal(sg.ticks, sw.ticks);
        assert_int_equal(sg.sm[6].requests_out, sw.sm[6].requests_out);
        trace_summary_free(&sg);
        free(got->recs.o);
        free(got);
    }
    /* a sink that stops: its value comes back, and both threads stop */
    int calls = 0;
    struct trace_summary ss;
    assert_int_equal(trace_sort_file(t->path, &p, &tight, stop_after_first, &calls, &ss, &err), 42);
    assert_int_equal(calls, 1);
    trace_summary_free(&ss);
    trace_summary_free(&sw);
    free(want->recs.o);
    free(want);
    free(r);
}

static void test_binary_output_and_summary(void **state)
{
    struct tmp *t = *state;
    size_t n;
    struct trace_rec *r = kernel(10, 3, &n);
    write_trace(t->path, r, n, 64);
    struct trace_params p = small_params();
    struct trace_input in;
    struct trace_err err;
    assert_int_equal(trace_input_open(&in, t->path, NULL, &err), 0);
    assert_int_equal(in.spooled, 0);
    trace_params_resolve(&p, in.bin.h.threads_per_block);
    char out_path[200];
    snprintf(out_path, sizeof out_path, "%s/out.bin", t->dir);
    struct trace_bin_header h;
    trace_bin_header_init(&h, TRACE_BIN_SORTED, &p);
    struct trace_bin_writer *w = trace_bin_writer_open(out_path, &h, &err);
    assert_non_null(w);
    struct trace_summary s;
    assert_int_equal(trace_sort_input(&in, &p, NULL, trace_bin_write_out, w, &s, &err), 0);
    trace_bin_writer_set_input(w, s.records_in);
    assert_int_equal(trace_bin_writer_close(w, &err), 0);
    struct vec mem = {0};
    struct trace_summary s2;
    assert_int_equal(trace_sort_records(in.bin.recs, (size_t)in.bin.count, &p, NULL, collect, &mem, &s2, &err), 0);
    trace_input_close(&in);
    struct trace_bin b;
    assert_int_equal(trace_bin_open(out_path, &b, &err), 0);
    assert_int_equal(b.count, mem.n);
    assert_int_equal(b.h.input_records, n);
    assert_int_equal(b.h.params.sms, 3);
    assert_int_equal(b.h.params.threads_per_block, 64);
    for (size_t i = 0; i < mem.n; i++) {
        struct trace_out o;
        trace_bin_get_out(&b, i, &o);
        assert_int_equal(o.addr, mem.o[i].addr);
        assert_int_equal(o.seq, mem.o[i].seq);
        assert_int_equal(o.sm, mem.o[i].sm);
    }
    trace_bin_close(&b);

    json_t *j = trace_summary_to_json(&s);
    assert_non_null(j);
    assert_int_equal(json_integer_value(json_object_get(j, "records_in")), n);
    assert_int_equal(json_integer_value(json_object_get(j, "requests_out")), mem.n);
    double ratio = json_real_value(json_object_get(j, "coalescing_ratio"));
    assert_true(ratio > 1.0 && ratio < 32.0);
    assert_true(fabs(ratio - (double)n / (double)mem.n) < 1e-9);
    json_t *stalls = json_object_get(j, "stalls");
    assert_non_null(json_object_get(stalls, "mshr_full_ticks"));
    assert_non_null(json_object_get(stalls, "all_blocked_ticks"));
    json_t *sms = json_object_get(j, "sms");
    assert_int_equal(json_array_size(sms), 3);
    json_int_t sum = 0;
    for (size_t i = 0; i < 3; i++)
        sum += json_integer_value(json_object_get(json_array_get(sms, i), "requests_out"));
    assert_int_equal(sum, mem.n);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "params"), "sms")), 3);
    json_decref(j);

    char text[4096] = "";
    FILE *f = fmemopen(text, sizeof text - 1, "w");
    trace_summary_print(&s, f);
    fclose(f);
    assert_non_null(strstr(text, "requests in 3840"));
    assert_non_null(strstr(text, "sm 2:"));
    trace_summary_free(&s);
    trace_summary_free(&s2);
    free(mem.o);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_file_equals_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_order_is_spooled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spool_stable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors_before_output, setup, teardown),
        cmocka_unit_test(test_checking_pass_each_field),
        cmocka_unit_test_setup_teardown(test_long_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_buffers_mixed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stream_uneven_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_block_reads_agree, setup, teardown),
        cmocka_unit_test(test_split_checking_pass),
        cmocka_unit_test(test_noted_blocks),
        cmocka_unit_test(test_sink_stops),
        cmocka_unit_test_setup_teardown(test_two_threads_same_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_binary_output_and_summary, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
