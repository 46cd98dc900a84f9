/*
 * Unit tests of the binary trace format (trace/binfmt.c, docs/trace-format.md):
 * the header and both record kinds round-trip through the writer and the
 * mapped reader, with the exact little-endian bytes the document gives; the
 * writer marks a requests file thread-major only when it is, and leaves the
 * count "unknown" on a pipe, which the reader then takes from the size; a
 * longer header of a later minor revision is skipped. Refusals name the
 * byte offset: bad magic, version, kind, header size, record size, unknown
 * flags, a file ending inside the header or inside a record, bytes after the
 * announced records, bad parameters in a sorted header; validation finds
 * the first bad record (width, flag, address overflow, thread order, a
 * sorted record's SM or width) and trace_bin_read / trace_bin_read_out stop
 * on it or on the sink's own non-zero value. Releasing
 * pages leaves the data readable.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/support/tmpfile.h"
#include "trace/binfmt.h"

static int setup(void **state)
{
    return tmp_setup(state, "binfmt", "t.bin");
}

static int teardown(void **state)
{
    return tmp_teardown(state);
}

static void write_requests(const char *path, const struct trace_rec *r, size_t n, uint32_t tpb)
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

static size_t slurp(const char *path, uint8_t *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

static void spit(const char *path, const uint8_t *buf, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

struct outs {
    struct trace_out *o;
    size_t n;
};

static int collect_out(void *ctx, const struct trace_out *o, size_t n)
{
    struct outs *c = ctx;
    memcpy(c->o + c->n, o, n * sizeof *o);
    c->n += n;
    return 0;
}

/* Two stores (records 0 and 2: the store flag is byte 29). */
static const struct trace_rec sample[] = {
    {7, 0x30, 0x1000, 16, 0, 1, 0},
    {7, 0x40, 0x2000, 8, 1, 0, 0},
    {9, 0x30, 0x1010, 1, 0, 1, 0},
    {0x0102030405060708ull, 0x1122, 0xdeadbeef00ull, 4, 1, 0, 0},
};

static void test_requests_roundtrip(void **state)
{
    struct tmp *t = *state;
    write_requests(t->path, sample, 4, 96);
    uint8_t buf[512];
    size_t n = slurp(t->path, buf, sizeof buf);
    assert_int_equal(n, 128 + 4 * 32);
    assert_memory_equal(buf, "GPTRACE\0", 8);
    assert_int_equal(buf[8], 2);    /* version */
    assert_int_equal(buf[10], 1);   /* kind: requests */
    assert_int_equal(buf[12], 128); /* header bytes */
    assert_int_equal(buf[14], 32);  /* record bytes */
    assert_int_equal(buf[16], 1);   /* thread-major */
    assert_int_equal(buf[20], 96);  /* threads per block */
    assert_int_equal(buf[24], 4);   /* count */
    static const uint8_t rec3[32] = {8, 7, 6, 5, 4, 3, 2, 1, 0x22, 0x11, 0, 0, 0, 0, 0, 0,
                                     0x00, 0xef, 0xbe, 0xad, 0xde, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0};
    assert_memory_equal(buf + 128 + 3 * 32, rec3, 32);
    static const uint8_t rec2_tail[8] = {1, 0, 0, 0, 0, 1, 0, 0}; /* width 1, dep 0, store 1 */
    assert_memory_equal(buf + 128 + 2 * 32 + 24, rec2_tail, 8);

    struct trace_bin b;
    struct trace_err err;
    assert_int_equal(trace_bin_open(t->path, &b, &err), 0);
    assert_int_equal(b.h.kind, TRACE_BIN_REQUESTS);
    assert_int_equal(b.count, 4);
    assert_int_equal(b.h.threads_per_block, 96);
    assert_true(b.h.flags & TRACE_BIN_FLAG_THREAD_MAJOR);
    for (int i = 0; i < 4; i++) {
        assert_true(b.recs[i].tid == sample[i].tid);
        assert_true(b.recs[i].addr == sample[i].addr);
        assert_int_equal(b.recs[i].width, sample[i].width);
        assert_int_equal(b.recs[i].dep, sample[i].dep);
        assert_int_equal(b.recs[i].store, sample[i].store); /* in place, as the sorter reads it */
        struct trace_rec d;
        trace_bin_req_decode(buf + 128 + 32 * i, &d);
        assert_memory_equal(&d, &sample[i], sizeof d);
    }
    assert_int_equal(trace_bin_validate(&b, &err), 0);
    trace_bin_release(&b, 0, b.count);
    assert_true(b.recs[2].tid == 9); /* still readable */
    trace_bin_close(&b);

    /* not thread-major: the flag stays clear */
    struct trace_rec back[2] = {sample[3], sample[1]};
    write_requests(t->path, back, 2, 0);
    assert_int_equal(trace_bin_open(t->path, &b, &err), 0);
    assert_int_equal(b.h.flags, 0);
    assert_int_equal(b.count, 2);
    trace_bin_close(&b);
}

static void test_sorted_roundtrip(void **state)
{
    struct tmp *t = *state;
    struct trace_params p;
    trace_params_default(&p);
    trace_params_resolve(&p, 0);
    p.lat_sigma = 2.75;
    p.seed = 0xfedcba9876543210ull;
    p.schedule = TRACE_SCHEDULE_GTO;
    struct trace_bin_header h;
    trace_bin_header_init(&h, TRACE_BIN_SORTED, &p);
    struct trace_err err;
    struct trace_bin_writer *w = trace_bin_writer_open(t->path, &h, &err);
    assert_non_null(w);
    struct trace_out o[3] = {
        {0, 0, 5, 0x30, 0x1000, 128, 0, 0}, {0, 1, 7, 0x40, 0x2000, 32, 1, 1}, {3, 0, 9, 0x50, 0x3000, 4, 0, 0},
    };
    assert_int_equal(trace_bin_write_out(w, o, 2), 0);
    assert_int_equal(trace_bin_write_out(w, o + 2, 1), 0);
    trace_bin_writer_set_input(w, 77);
    assert_int_equal(trace_bin_writer_close(w, &err), 0);

    uint8_t buf[512];
    assert_int_equal(slurp(t->path, buf, sizeof buf), 128 + 3 * 40);
    assert_int_equal(buf[10], 2);
    assert_int_equal(buf[14], 40);
    static const uint8_t rec1[40] = {1, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0,
                                     0, 0, 0, 0, 0,    0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 1, 1};
    assert_memory_equal(buf + 128 + 40, rec1, 40);

    struct trace_bin b;
    assert_int_equal(trace_bin_open(t->path, &b, &err), 0);
    assert_int_equal(b.h.kind, TRACE_BIN_SORTED);
    assert_int_equal(b.count, 3);
    assert_null(b.recs);
    assert_int_equal(b.h.input_records, 77);
    assert_int_equal(b.h.params.sms, p.sms);
    assert_int_equal(b.h.params.blocks_per_sm, p.blocks_per_sm);
    assert_int_equal(b.h.params.threads_per_block, p.threads_per_block);
    assert_int_equal(b.h.params.mshr, p.mshr);
    assert_int_equal(b.h.params.lat_min, p.lat_min);
    assert_true(b.h.params.lat_sigma == 2.75);
    assert_true(b.h.params.seed == p.seed);
    assert_int_equal(b.h.params.schedule, TRACE_SCHEDULE_GTO);
    for (int i = 0; i < 3; i++) {
        struct trace_out g;
        trace_bin_get_out(&b, (uint64_t)i, &g);
        assert_int_equal(g.sm, o[i].sm);
        assert_int_equal(g.seq, o[i].seq);
        assert_int_equal(g.tid, o[i].tid);
        assert_int_equal(g.addr, o[i].addr);
        assert_int_equal(g.width, o[i].width);
        assert_int_equal(g.dep, o[i].dep);
        assert_int_equal(g.store, o[i].store);
    }
    assert_int_equal(trace_bin_validate(&b, &err), 0);
    struct trace_out got[4];
    struct outs c = {got, 0};
    assert_int_equal(trace_bin_read_out(&b, collect_out, &c, &err), 0);
    assert_int_equal(c.n, 3);
    assert_int_equal(got[2].sm, 3);
    assert_int_equal(got[1].width, 32);
    assert_int_equal(trace_bin_read(&b, NULL, NULL, &err), -1); /* not a requests file */
    trace_bin_close(&b);
}

/* A requests file through a pipe: the count stays unknown. */
static void test_pipe_unknown_count(void **state)
{
    struct tmp *t = *state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    struct trace_bin_header h;
    trace_bin_header_init(&h, TRACE_BIN_REQUESTS, NULL);
    struct trace_err err;
    struct trace_bin_writer *w = trace_bin_writer_fd(fds[1], 1, &h, &err);
    assert_non_null(w);
    for (int i = 0; i < 3; i++)
        assert_int_equal(trace_bin_write_rec(w, &sample[i]), 0);
    assert_int_equal(trace_bin_writer_close(w, &err), 0);
    uint8_t buf[512];
    ssize_t n = read(fds[0], buf, sizeof buf);
    close(fds[0]);
    assert_int_equal(n, 128 + 3 * 32);
    for (int i = 24; i < 32; i++)
        assert_int_equal(buf[i], 0xff);
    assert_int_equal(buf[16], 0); /* thread order unknown */
    spit(t->path, buf, (size_t)n);
    struct trace_bin b;
    assert_int_equal(trace_bin_open(t->path, &b, &err), 0);
    assert_int_equal(b.count, 3);
    trace_bin_close(&b);
    spit(t->path, buf, (size_t)n - 5); /* unknown count, file ends inside record 2 */
    assert_int_equal(trace_bin_open(t->path, &b, &err), -1);
    assert_int_equal(err.offset, 128 + 2 * 32);
    assert_non_null(strstr(err.msg, "inside record 2"));
}

static void test_longer_header(void **state)
{
    struct tmp *t = *state;
    write_requests(t->path, sample, 4, 0);
    uint8_t buf[512], big[600];
    size_t n = slurp(t->path, buf, sizeof buf);
    memcpy(big, buf, 128);
    memset(big + 128, 0xab, 8);
    memcpy(big + 136, buf + 128, n - 128);
    big[12] = 136;
    spit(t->path, big, n + 8);
    struct trace_bin b;
    struct trace_err err;
    assert_int_equal(trace_bin_open(t->path, &b, &err), 0);
    assert_int_equal(b.count, 4);
    assert_true(b.recs[1].addr == 0x2000);
    trace_bin_close(&b);
}

/* Writes a patched copy of a good file and expects trace_bin_open to refuse it. */
static void refused(const char *path, const uint8_t *good, size_t n, size_t at, const void *bytes, size_t len,
                    uint64_t offset, const char *needle)
{
    uint8_t buf[1024];
    memcpy(buf, good, n);
    if (bytes)
        memcpy(buf + at, bytes, len);
    spit(path, buf, bytes ? n : at);
    struct trace_bin b;
    struct trace_err err;
    if (trace_bin_open(path, &b, &err) == 0)
        fail_msg("accepted a file that should fail with '%s'", needle);
    if (err.offset != offset || !strstr(err.msg, needle))
        fail_msg("offset %llu '%s', expected %llu '%s'", (unsigned long long)err.offset, err.msg,
                 (unsigned long long)offset, needle);
}

static void test_header_refusals(void **state)
{
    struct tmp *t = *state;
    write_requests(t->path, sample, 4, 0);
    uint8_t good[512];
    size_t n = slurp(t->path, good, sizeof good);
    uint8_t three[2] = {3, 0}, hundred[2] = {100, 0}, forty[2] = {40, 0}, flag[1] = {2};
    uint8_t five[8] = {5, 0, 0, 0, 0, 0, 0, 0}, three8[8] = {3, 0, 0, 0, 0, 0, 0, 0};
    refused(t->path, good, n, 0, "GPTRACF", 7, 0, "magic");
    refused(t->path, good, n, 8, three, 2, 8, "version 3");
    refused(t->path, good, n, 10, three, 2, 10, "kind 3");
    refused(t->path, good, n, 12, hundred, 2, 12, "header size 100");
    refused(t->path, good, n, 14, forty, 2, 14, "record size 40");
    refused(t->path, good, n, 16, flag, 1, 16, "unknown flags 0x2");
    refused(t->path, good, n, 10, NULL, 0, 0, "not a gpuprobe binary trace");
    refused(t->path, good, n, 100, NULL, 0, 100, "inside the 128-byte header");
    refused(t->path, good, n, 24, five, 8, 128 + 4 * 32, "truncated");
    refused(t->path, good, n, 24, three8, 8, 128 + 3 * 32, "32 bytes after the 3 records");
    refused(t->path, good, n - 7, 0, good, 0, 128 + 3 * 32, "ends inside record 3");
    /* a sorted header with impossible parameters */
    struct trace_params p;
    trace_params_default(&p);
    trace_params_resolve(&p, 0);
    p.sms = 0;
    struct trace_bin_header h;
    trace_bin_header_init(&h, TRACE_BIN_SORTED, &p);
    h.count = 0;
    uint8_t hdr[128];
    trace_bin_header_encode(&h, hdr);
    refused(t->path, hdr, 128, 0, hdr, 1, 20, "header parameters: sms");
}

static int stop_at_two(void *ctx, const struct trace_rec *r)
{
    int *seen = ctx;
    (void)r;
    return ++*seen == 2 ? 7 : 0;
}

static int count_recs(void *ctx, const struct trace_rec *r)
{
    (void)r;
    ++*(int *)ctx;
    return 0;
}

static void bad_record(const char *path, struct trace_rec patch, size_t at, const char *needle)
{
    struct trace_rec r[6];
    for (int i = 0; i < 6; i++)
        r[i] = (struct trace_rec){(uint64_t)i, 0x10, 0x100 * (uint64_t)i, 4, 0, 0, 0};
    r[at] = patch;
    write_requests(path, r, 6, 0);
    struct trace_bin b;
    struct trace_err err;
    assert_int_equal(trace_bin_open(path, &b, &err), 0); /* the header and size are fine */
    assert_int_equal(trace_bin_validate(&b, &err), -1);
    assert_int_equal(err.offset, 128 + 32 * at);
    if (!strstr(err.msg, needle))
        fail_msg("'%s' lacks '%s'", err.msg, needle);
    int seen = 0;
    assert_int_equal(trace_bin_read(&b, count_recs, &seen, &err), -1);
    assert_int_equal(seen, (int)at);
    assert_int_equal(err.offset, 128 + 32 * at);
    trace_bin_close(&b);
}

static void test_record_checks(void **state)
{
    struct tmp *t = *state;
    bad_record(t->path, (struct trace_rec){5, 0x10, 0x500, 3, 0, 0, 0}, 5, "record 5: width 3 is not 1, 2, 4, 8 or 16");
    bad_record(t->path, (struct trace_rec){2, 0x10, 0x500, 4, 2, 0, 0}, 2, "dependency flag 2");
    bad_record(t->path, (struct trace_rec){3, 0x10, UINT64_MAX - 2, 4, 0, 0, 0}, 3, "passes 2^64");
    bad_record(t->path, (struct trace_rec){0, 0x10, 0, 0, 0, 0, 0}, 0, "width 0");
    bad_record(t->path, (struct trace_rec){4, 0x10, 0x500, 4, 0, 2, 0}, 4, "store flag 2");
    bad_record(t->path, (struct trace_rec){1, 0x10, 0x500, 4, 0, 1, 0x100}, 1, "reserved bytes");

    /* thread order, checked only when the file says it is thread-major */
    struct trace_rec r[4] = {{1, 0x10, 0, 4, 0, 0, 0}, {2, 0x10, 0, 4, 0, 0, 0}, {3, 0x10, 0, 4, 0, 0, 0}, {0, 0x10, 0, 4, 0, 0, 0}};
    write_requests(t->path, r, 4, 0);
    uint8_t buf[512];
    size_t n = slurp(t->path, buf, sizeof buf);
    assert_int_equal(buf[16], 0);
    struct trace_bin b;
    struct trace_err err;
    assert_int_equal(trace_bin_open(t->path, &b, &err), 0);
    assert_int_equal(trace_bin_validate(&b, &err), 0);
    trace_bin_close(&b);
    buf[16] = 1; /* claims thread-major */
    spit(t->path, buf, n);
    assert_int_equal(trace_bin_open(t->path, &b, &err), 0);
    assert_int_equal(trace_bin_validate(&b, &err), -1);
    assert_int_equal(err.offset, 128 + 3 * 32);
    assert_non_null(strstr(err.msg, "thread 0 after thread 3"));
    int seen = 0;
    assert_int_equal(trace_bin_read(&b, stop_at_two, &seen, &err), 7);
    assert_int_equal(seen, 2);
    trace_bin_close(&b);
}

/* A version-1 file (written before the store flag, bytes 28-31 a 32-bit
 * dep) reads the same, every record a load: requests and sorted. */
static void test_version1_reads_as_loads(void **state)
{
    struct tmp *t = *state;
    write_requests(t->path, sample + 1, 1, 0); /* a load: dep 1 */
    uint8_t buf[512];
    size_t n = slurp(t->path, buf, sizeof buf);
    buf[8] = 1;
    spit(t->path, buf, n);
    struct trace_bin b;
    struct trace_err err;
    assert_int_equal(trace_bin_open(t->path, &b, &err), 0);
    assert_int_equal(b.h.version, 1);
    assert_int_equal(trace_bin_validate(&b, &err), 0);
    assert_int_equal(b.recs[0].dep, 1);
    assert_int_equal(b.recs[0].store, 0);
    trace_bin_close(&b);
    /* what a version-1 writer put at bytes 28-31: put32(dep) */
    static const uint8_t v1_tail[4] = {1, 0, 0, 0};
    assert_memory_equal(buf + 128 + 28, v1_tail, 4);

    struct trace_params p;
    trace_params_default(&p);
    trace_params_resolve(&p, 0);
    struct trace_bin_header h;
    trace_bin_header_init(&h, TRACE_BIN_SORTED, &p);
    h.version = 1; /* the writer writes its own version whatever the header says */
    struct trace_bin_writer *w = trace_bin_writer_open(t->path, &h, &err);
    struct trace_out o = {0, 0, 1, 2, 0x40, 4, 1, 0};
    assert_int_equal(trace_bin_write_out(w, &o, 1), 0);
    assert_int_equal(trace_bin_writer_close(w, &err), 0);
    n = slurp(t->path, buf, sizeof buf);
    assert_int_equal(buf[8], 2);
    buf[8] = 1;
    spit(t->path, buf, n);
    assert_int_equal(trace_bin_open(t->path, &b, &err), 0);
    struct trace_out g;
    trace_bin_get_out(&b, 0, &g);
    assert_int_equal(g.dep, 1);
    assert_int_equal(g.store, 0);
    assert_int_equal(trace_bin_validate(&b, &err), 0);
    trace_bin_close(&b);
    /* a version-1 sorted record with byte 39 set is damaged, not a store */
    buf[128 + 39] = 1;
    spit(t->path, buf, n);
    assert_int_equal(trace_bin_open(t->path, &b, &err), 0);
    assert_int_equal(trace_bin_validate(&b, &err), -1);
    assert_int_equal(err.offset, 128);
    assert_non_null(strstr(err.msg, "version-1"));
    trace_bin_close(&b);
}

/* A version-1 requests file whose byte 29 (no store flag in that version)
 * is set is refused, with the record's offset, by the validator and the
 * reader; the same record in version 2 is a store. */
static void test_version1_store_byte_refused(void **state)
{
    struct tmp *t = *state;
    const struct trace_rec loads[2] = {sample[1], sample[3]};
    write_requests(t->path, loads, 2, 0);
    uint8_t buf[512];
    size_t n = slurp(t->path, buf, sizeof buf);
    buf[128 + 32 + 29] = 1;
    spit(t->path, buf, n);
    struct trace_bin b;
    struct trace_err err;
    assert_int_equal(trace_bin_open(t->path, &b, &err), 0);
    assert_int_equal(trace_bin_validate(&b, &err), 0);
    assert_int_equal(b.recs[1].store, 1);
    trace_bin_close(&b);
    buf[8] = 1;
    spit(t->path, buf, n);
    assert_int_equal(trace_bin_open(t->path, &b, &err), 0);
    assert_int_equal(trace_bin_validate(&b, &err), -1);
    assert_int_equal(err.offset, 128 + 32);
    assert_non_null(strstr(err.msg, "version-1"));
    int seen = 0;
    assert_int_equal(trace_bin_read(&b, stop_at_two, &seen, &err), -1);
    assert_int_equal(seen, 1);
    assert_int_equal(err.offset, 128 + 32);
    trace_bin_close(&b);
}

static void test_open_failures(void **state)
{
    struct tmp *t = *state;
    struct trace_bin b;
    struct trace_err err;
    assert_int_equal(trace_bin_open("/nonexistent/gpuprobe/t.bin", &b, &err), -1);
    assert_non_null(strstr(err.msg, "No such file"));
    assert_int_equal(trace_bin_open(t->dir, &b, &err), -1);
    assert_non_null(strstr(err.msg, "not a regular file"));
    assert_null(trace_bin_writer_open("/nonexistent/gpuprobe/t.bin", &(struct trace_bin_header){0}, &err));
    /* the sorted-file validator */
    struct trace_params p;
    trace_params_default(&p);
    trace_params_resolve(&p, 0);
    struct trace_bin_header h;
    trace_bin_header_init(&h, TRACE_BIN_SORTED, &p);
    struct trace_bin_writer *w = trace_bin_writer_open(t->path, &h, &err);
    struct trace_out o[2] = {{0, 0, 1, 2, 3, 4, 0, 0}, {99, 1, 1, 2, 3, 4, 0, 0}};
    assert_int_equal(trace_bin_write_out(w, o, 2), 0);
    assert_int_equal(trace_bin_writer_close(w, &err), 0);
    assert_int_equal(trace_bin_open(t->path, &b, &err), 0);
    assert_int_equal(trace_bin_validate(&b, &err), -1);
    assert_int_equal(err.offset, 128 + 40);
    assert_non_null(strstr(err.msg, "record 1: sm 99"));
    struct trace_out got[2];
    struct outs c = {got, 0};
    assert_int_equal(trace_bin_read_out(&b, collect_out, &c, &err), -1);
    assert_int_equal(err.offset, 128 + 40);
    assert_int_equal(c.n, 0); /* nothing handed on before the bad record's batch */
    trace_bin_close(&b);
    /* and a requests file is not a sorted one */
    write_requests(t->path, sample, 1, 0);
    assert_int_equal(trace_bin_open(t->path, &b, &err), 0);
    assert_int_equal(trace_bin_read_out(&b, collect_out, &c, &err), -1);
    trace_bin_close(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_requests_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sorted_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipe_unknown_count, setup, teardown),
        cmocka_unit_test_setup_teardown(test_longer_header, setup, teardown),
        cmocka_unit_test_setup_teardown(test_header_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_record_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_version1_store_byte_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_version1_reads_as_loads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_failures, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
