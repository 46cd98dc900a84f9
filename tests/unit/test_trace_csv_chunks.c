/*
 * Unit tests of the chunked CSV reader (trace_csv_read_fd, trace/csv.c): a
 * file read in chunks of 1 to 97 bytes must give exactly what
 * trace_csv_read gives on the whole text (the records, the result, and for
 * a bad record its line, byte offset and message), whatever chunk boundary
 * falls inside a record, between a CR and its LF, inside the header, or in
 * a last line without '\n'. Explicit cases pin the positions (so the two
 * readers cannot agree on a wrong answer), and a line that has not ended
 * within TRACE_CSV_MAX_LINE bytes is refused with its own line and offset
 * (the buffer stays bounded). The reader on several threads
 * (trace_csv_read_fd_batch, 1 to 3 threads) must give the same again, its
 * chunks handed on in file order whichever thread parsed them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/csv.h"

#define MAX_RECS 64

struct got {
    struct trace_rec r[MAX_RECS];
    size_t n;
};

static int collect(void *ctx, const struct trace_rec *r)
{
    struct got *g = ctx;
    if (g->n < MAX_RECS)
        g->r[g->n] = *r;
    g->n++;
    return 0;
}

static int collect_batch(void *ctx, struct trace_rec *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        collect(ctx, &r[i]);
    return 0;
}

/* Reads text[0..len) through a file in chunks of `chunk` bytes: with
 * trace_csv_read_fd when threads is 0, else with trace_csv_read_fd_batch
 * on that many threads; base (may be NULL) gives the flags and the PC
 * limit. */
static int read_chunked_opts(const char *text, size_t len, size_t chunk, int threads,
                             const struct trace_csv_opts *base, struct got *g, struct trace_err *e)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fflush(f), 0);
    rewind(f);
    memset(g, 0, sizeof *g);
    memset(e, 0, sizeof *e);
    struct trace_csv_opts o = {.chunk_bytes = chunk, .threads = threads};
    if (base) {
        o.flags = base->flags;
        o.max_pcs = base->max_pcs;
    }
    int rc = threads ? trace_csv_read_fd_batch(fileno(f), &o, collect_batch, g, e)
                     : trace_csv_read_fd(fileno(f), &o, collect, g, e);
    fclose(f);
    return rc;
}

static int read_chunked_on(const char *text, size_t len, size_t chunk, int threads, struct got *g,
                           struct trace_err *e)
{
    return read_chunked_opts(text, len, chunk, threads, NULL, g, e);
}

static int read_chunked(const char *text, size_t len, size_t chunk, struct got *g, struct trace_err *e)
{
    return read_chunked_on(text, len, chunk, 0, g, e);
}

static int read_whole(const char *text, size_t len, struct got *g, struct trace_err *e)
{
    char *b = malloc(len ? len : 1);
    assert_non_null(b);
    memcpy(b, text, len);
    memset(g, 0, sizeof *g);
    memset(e, 0, sizeof *e);
    int rc = trace_csv_read(b, len, NULL, collect, g, e);
    free(b);
    return rc;
}

static const char *const inputs[] = {
    "tid,pc,addr,width,dep\n0,0x40,0x1000,4,1\n1,64,4100,8,1\n2,0x40,0xabcdef0123,16,1\n",
    "tid,pc,addr,width,dep\r\n0,0x40,0x1000,4,1\r\n1,64,4100,8,1\r\n2,0x40,0xabcdef0123,16,1\r\n",
    "tid,pc,addr,width,dep\n0,0x40,0x1000,4,1\n1,64,4100,8,1\n2,0x40,0xabcdef0123,16,1",
    "tid,pc,addr,width,dep\r\n0,0x40,0x1000,4,1\r\n1,64,4100,8,1\r",
    "tid,pc,addr,width,dep\n0,0x40,0x1000,4,1\n1,64,4100,3,1\n2,0x40,0x10,16,1\n",
    "tid,pc,addr,width,dep\n0,0x40,0x1000,4,1\n\n2,0x40,0x10,16,1\n",
    "tid,pc,addr,width,dep\n0,0x40,0x1000,4,1\n1,0x40,0x1000,4,0\n",
    "tid,pc,addr,width,dep\n0,0x40,0x1000,4,1\n1,0x40,0x1\r000,4,1\n",
    "tid,pc,addr,width,dep\n0,0x40,0x1000,4,1\n1,0x40,0x1000,4,1,7",
    "tid,pc,addr,width\n0,0x40,0x1000,4,1\n",
    "tid,pc,addr,width,dep",
    "",
    "tid,pc,addr,width,dep\n99999999999999999999,0x40,0x1000,4,1\n",
    "tid,pc,addr,width,dep,op\n0,0x40,0x1000,4,0,ld\n1,0x50,0x10,8,1,st\n2,0x40,0x1004,4,0,ld\n"
    "3,0x50,0x18,8,1,st\n4,0x60,0x1,1,0,st\n5,0x40,0x1008,4,0,st\n6,0x40,0x100c,4,0,ld\n",
    "tid,pc,addr,width,dep,op\r\n0,0x40,0x1000,4,0,ld\r\n1,0x50,0x10,8,1,st\r\n2,0x40,0x1004,4,0,ld\r\n"
    "3,0x50,0x18,8,1,st\r\n4,0x60,0x1,1,0,st\r\n5,0x50,0x1008,4,0,st\r\n6,0x40,0x100c,4,0,ld\r\n",
};

/* Every chunk size gives what the whole-buffer reader gives. */
static void test_same_as_whole(void **state)
{
    (void)state;
    struct got *want = malloc(sizeof *want), *got = malloc(sizeof *got);
    assert_non_null(want);
    assert_non_null(got);
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        size_t len = strlen(inputs[i]);
        struct trace_err we, ge;
        int wrc = read_whole(inputs[i], len, want, &we);
        for (size_t chunk = 1; chunk <= 97; chunk++)
            for (int threads = 0; threads <= 3; threads++) {
                int grc = read_chunked_on(inputs[i], len, chunk, threads, got, &ge);
                if (grc != wrc || got->n != want->n || memcmp(got->r, want->r, want->n * sizeof want->r[0]) ||
                    ge.line != we.line || ge.offset != we.offset || strcmp(ge.msg, we.msg))
                    fail_msg("input %zu, chunk %zu, threads %d: rc %d/%d, %zu/%zu records, line %llu/%llu, "
                             "offset %llu/%llu, '%s' / '%s'",
                             i, chunk, threads, grc, wrc, got->n, want->n, (unsigned long long)ge.line,
                             (unsigned long long)we.line, (unsigned long long)ge.offset,
                             (unsigned long long)we.offset, ge.msg, we.msg);
            }
    }
    free(want);
    free(got);
}

/* A record split across chunks, a CRLF split between CR and LF, a last
 * line without '\n': the records themselves. */
static void test_boundaries(void **state)
{
    (void)state;
    struct got *g = malloc(sizeof *g);
    assert_non_null(g);
    struct trace_err e;
    const char *t = "tid,pc,addr,width,dep\r\n"    /* 23 bytes */
                    "12345,0x40,0x1000,4,1\r\n"    /* 23: a 30-byte chunk cuts it after "1234" */
                    "7,0x80,0xfff,16,0";           /* no newline at the end */
    /* 22: the header's LF comes in the second read; 30: line 2 is cut after
     * "12345,0"; 45: the first read ends on line 2's CR, its LF comes next;
     * 4: every line is put together from several reads */
    size_t chunks[] = {22, 23, 30, 45, 4};
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
        assert_int_equal(read_chunked(t, strlen(t), chunks[i], g, &e), 0);
        assert_int_equal(g->n, 2);
        assert_true(g->r[0].tid == 12345 && g->r[0].pc == 0x40 && g->r[0].addr == 0x1000);
        assert_int_equal(g->r[0].width, 4);
        assert_int_equal(g->r[0].dep, 1);
        assert_true(g->r[1].tid == 7 && g->r[1].pc == 0x80 && g->r[1].addr == 0xfff);
        assert_int_equal(g->r[1].width, 16);
        assert_int_equal(g->r[1].dep, 0);
    }
    free(g);
}

/* A bad record's line and byte offset are those of the whole file, not of
 * its chunk. */
static void test_error_position(void **state)
{
    (void)state;
    struct got *g = malloc(sizeof *g);
    assert_non_null(g);
    struct trace_err e;
    const char *t = "tid,pc,addr,width,dep\n" /* offset 0, 22 bytes */
                    "0,0x40,0x1000,4,1\n"     /* offset 22, 18 bytes */
                    "1,0x40,0x1000,4,1\r\n"   /* offset 40, 19 bytes */
                    "2,0x40,0x1000,5,1\n";    /* offset 59: width 5 */
    for (size_t chunk = 1; chunk <= 80; chunk += 7)
        for (int threads = 0; threads <= 2; threads++) {
            assert_int_equal(read_chunked_on(t, strlen(t), chunk, threads, g, &e), TRACE_EINPUT);
            assert_int_equal(e.line, 4);
            assert_int_equal(e.offset, 59);
            assert_non_null(strstr(e.msg, "width must be 1, 2, 4, 8 or 16 (column 15)"));
            assert_int_equal(g->n, 2);
        }
    free(g);
}

/* A line that has not ended after TRACE_CSV_MAX_LINE bytes: refused where
 * it starts, the records before it handed on. */
static void test_long_line(void **state)
{
    (void)state;
    const char *head = "tid,pc,addr,width,dep\n1,0x40,0x1000,4,1\n"; /* line 3 starts at 40 */
    const char *tail = "\n2,0x40,0x1000,4,1\n";
    size_t n = strlen(head), len = n + TRACE_CSV_MAX_LINE + strlen(tail);
    char *t = malloc(len);
    assert_non_null(t);
    memcpy(t, head, n);
    memset(t + n, '0', TRACE_CSV_MAX_LINE);
    memcpy(t + n + TRACE_CSV_MAX_LINE, tail, strlen(tail));
    struct got *g = malloc(sizeof *g);
    assert_non_null(g);
    struct trace_err e;
    for (int threads = 0; threads <= 2; threads++) {
        assert_int_equal(read_chunked_on(t, len, 4096, threads, g, &e), TRACE_EINPUT);
        assert_int_equal(e.line, 3);
        assert_int_equal(e.offset, 40);
        assert_non_null(strstr(e.msg, "line longer than"));
        assert_int_equal(g->n, 1);
    }
    free(g);
    free(t);
}

/* The checks the threads leave to the turn: the user's flags replace the
 * file's (and so avoid a conflict), and the PC limit is hit on the line
 * where the reader of one thread hits it, whatever thread parsed it. */
static void test_threads_flags_and_limit(void **state)
{
    (void)state;
    const char *t = "tid,pc,addr,width,dep,op\n"
                    "0,0x40,0x1000,4,0,ld\n" /* line 2: the table makes it dep 1 */
                    "1,0x40,0x1004,4,1,ld\n" /* line 3: dep 1 in the file too */
                    "2,0x50,0x10,8,1,st\n"
                    "3,0x40,0x1008,4,0,ld\n"
                    "4,0x50,0x18,8,1,st\n"
                    "5,0x60,0x20,8,0,ld\n"   /* line 7, offset 126: a third PC */
                    "6,0x40,0x100c,4,0,ld\n";
    struct trace_pcflags flags;
    trace_pcflags_init(&flags, 0);
    assert_int_equal(trace_pcflags_set(&flags, 0x40, 1, 1, NULL), 0);
    struct trace_csv_opts o = {.flags = &flags, .max_pcs = 2};
    struct got *g = malloc(sizeof *g);
    assert_non_null(g);
    struct trace_err e;
    for (size_t chunk = 1; chunk <= 64; chunk += 3)
        for (int threads = 0; threads <= 3; threads++) {
            assert_int_equal(read_chunked_opts(t, strlen(t), chunk, threads, &o, g, &e), TRACE_EINPUT);
            assert_int_equal(e.line, 7);
            assert_int_equal(e.offset, 126);
            assert_non_null(strstr(e.msg, "more than 2 distinct PCs"));
            assert_int_equal(g->n, 5);
            assert_int_equal(g->r[0].dep, 1); /* the table's */
            assert_int_equal(g->r[3].dep, 1);
        }
    trace_pcflags_free(&flags);
    free(g);
}

/* Sinks that refuse every record after the first two: a write failing. */
static int refuse_late(void *ctx, const struct trace_rec *r)
{
    struct got *g = ctx;
    if (g->n >= 2)
        return 1;
    return collect(ctx, r);
}

static int refuse_late_batch(void *ctx, struct trace_rec *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (refuse_late(ctx, &r[i]))
            return 1;
    return 0;
}

/* A write that fails before a bad line is reached ends the reading with
 * the write's result, as the reader of one thread (which hands each
 * record on before it checks the next) ends it, not with the bad line's
 * error, wherever the chunks fall and whichever thread checks the line. */
static void test_write_failure_before_bad_line(void **state)
{
    (void)state;
    const char *t = "tid,pc,addr,width,dep\n"
                    "0,0x40,0x1000,4,1\n"
                    "1,0x40,0x1004,4,1\n"
                    "2,0x40,0x1008,4,1\n"  /* line 4: refused by the sink */
                    "3,0x40,0x100c,4,0\n"; /* line 5: the flag differs from line 2's */
    struct got *g = malloc(sizeof *g);
    assert_non_null(g);
    for (size_t chunk = 1; chunk <= 128; chunk += 5)
        for (int threads = 0; threads <= 3; threads++) {
            FILE *f = tmpfile();
            assert_non_null(f);
            assert_int_equal(fputs(t, f) >= 0, 1);
            assert_int_equal(fflush(f), 0);
            rewind(f);
            memset(g, 0, sizeof *g);
            struct trace_err e = {0};
            struct trace_csv_opts o = {.chunk_bytes = chunk, .threads = threads};
            int rc = threads ? trace_csv_read_fd_batch(fileno(f), &o, refuse_late_batch, g, &e)
                             : trace_csv_read_fd(fileno(f), &o, refuse_late, g, &e);
            fclose(f);
            if (rc != 1)
                fail_msg("chunk %zu, threads %d: rc %d, '%s'", chunk, threads, rc, e.msg);
            assert_int_equal(g->n, 2);
        }
    free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_as_whole),
        cmocka_unit_test(test_boundaries),
        cmocka_unit_test(test_error_position),
        cmocka_unit_test(test_long_line),
        cmocka_unit_test(test_threads_flags_and_limit),
        cmocka_unit_test(test_write_failure_before_bad_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
