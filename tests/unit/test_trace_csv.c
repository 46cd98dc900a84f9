/*
 * Unit tests of the CSV trace format (trace/csv.c). Reader: the exact
 * header (CRLF allowed, anything else refused), decimal and 0x-hex numbers
 * with their 64-bit edges, widths 1/2/4/8/16 only, dep exactly 0 or 1, LF
 * and CRLF lines, a last line with or without '\n', blank lines, blanks,
 * stray CR and NUL bytes refused, too few and too many fields; every error
 * checked for its 1-based line and the byte offset of its line; the sink
 * never sees the bad record nor anything after it and its own stop value is
 * returned; the one-flag-per-PC rule (naming the first line), the user's
 * per-PC table replacing flags, and the distinct-PC limit; the optional op
 * column (ld/st, one kind per PC; absent: every record a load). Inputs are
 * exact-size heap copies, so ASan catches any read past the end.
 * Writers: exact text of both record kinds and headers, number formatting
 * checked against snprintf over edge values, flushing through a small
 * buffer, flush failure, FILE output, and round trips write -> read -> equal
 * (random records and the sample fixture).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/support/tmpfile.h"
#include "trace/csv.h"

/* ---- helpers ------------------------------------------------------------ */

#define MAX_RECS 20000

struct got {
    struct trace_rec r[MAX_RECS];
    size_t n;
    size_t stop_after; /* 0: never stop */
    int stop_value;
};

static int collect(void *ctx, const struct trace_rec *r)
{
    struct got *g = ctx;
    assert_true(g->n < MAX_RECS);
    g->r[g->n++] = *r;
    if (g->stop_after && g->n == g->stop_after)
        return g->stop_value;
    return 0;
}

static struct got *new_got(void)
{
    struct got *g = calloc(1, sizeof *g);
    assert_non_null(g);
    return g;
}

/* Reads len bytes of text from an exact-size heap copy. */
static int read_n(const char *text, size_t len, const struct trace_csv_opts *o, struct got *g,
                  struct trace_err *e)
{
    char *b = malloc(len ? len : 1);
    assert_non_null(b);
    memcpy(b, text, len);
    memset(e, 0, sizeof *e);
    int r = trace_csv_read(b, len, o, collect, g, e);
    free(b);
    return r;
}

static int read_s(const char *text, const struct trace_csv_opts *o, struct got *g,
                  struct trace_err *e)
{
    return read_n(text, strlen(text), o, g, e);
}

static void expect_rec(const struct trace_rec *r, uint64_t tid, uint64_t pc, uint64_t addr,
                       uint32_t width, uint32_t dep)
{
    assert_true(r->tid == tid);
    assert_true(r->pc == pc);
    assert_true(r->addr == addr);
    assert_int_equal(r->width, width);
    assert_int_equal(r->dep, dep);
}

/* ---- reader: good input ------------------------------------------------- */

static void test_read_basic(void **state)
{
    (void)state;
    struct got *g = new_got();
    struct trace_err e;
    const char *t = "tid,pc,addr,width,dep\n"
                    "0,0x40,0x1000,4,1\n"
                    "1,64,4100,8,1\n"
                    "18446744073709551615,0XFFFFFFFFFFFFFFFF,18446744073709551600,16,0\n"
                    "3,0x0000000000000000050,0xaBcD,1,0\n"
                    "4,0,0,2,0";
    assert_int_equal(read_s(t, NULL, g, &e), 0);
    assert_int_equal(g->n, 5);
    expect_rec(&g->r[0], 0, 0x40, 0x1000, 4, 1);
    expect_rec(&g->r[1], 1, 0x40, 4100, 8, 1);
    expect_rec(&g->r[2], UINT64_MAX, UINT64_MAX, UINT64_MAX - 15, 16, 0); /* the last 16 bytes */
    expect_rec(&g->r[3], 3, 0x50, 0xabcd, 1, 0);
    expect_rec(&g->r[4], 4, 0, 0, 2, 0);
    free(g);
}

static void test_read_line_ends(void **state)
{
    (void)state;
    struct got *g = new_got();
    struct trace_err e;
    assert_int_equal(
        read_s("tid,pc,addr,width,dep\r\n1,2,3,4,0\r\n5,6,7,8,1\n9,10,11,16,0\r\n", NULL, g, &e),
        0);
    assert_int_equal(g->n, 3);
    expect_rec(&g->r[2], 9, 10, 11, 16, 0);
    g->n = 0;
    assert_int_equal(read_s("tid,pc,addr,width,dep", NULL, g, &e), 0); /* header only, no newline */
    assert_int_equal(g->n, 0);
    assert_int_equal(read_s("tid,pc,addr,width,dep\r\n", NULL, g, &e), 0);
    assert_int_equal(read_s("tid,pc,addr,width,dep\n1,2,3,4,0\r", NULL, g, &e), 0); /* CR at EOF */
    assert_int_equal(g->n, 1);
    free(g);
}

/* The op column: ld and st read into the store flag; without the column
 * every record is a load. */
static void test_read_op_column(void **state)
{
    (void)state;
    struct got *g = new_got();
    struct trace_err e;
    assert_int_equal(read_s("tid,pc,addr,width,dep,op\n0,0x40,0x1000,4,1,ld\n1,0x50,0x2000,8,0,st\r\n"
                            "2,0x40,0x1004,4,1,ld",
                            NULL, g, &e),
                     0);
    assert_int_equal(g->n, 3);
    expect_rec(&g->r[1], 1, 0x50, 0x2000, 8, 0);
    assert_int_equal(g->r[0].store, 0);
    assert_int_equal(g->r[1].store, 1);
    assert_int_equal(g->r[2].store, 0);
    g->n = 0;
    assert_int_equal(read_s("tid,pc,addr,width,dep\n0,0x50,0x2000,8,0\n", NULL, g, &e), 0);
    assert_int_equal(g->r[0].store, 0);
    /* a per-PC flag table replaces dep, never op, and the op rule still holds */
    struct trace_pcflags t;
    trace_pcflags_init(&t, 0);
    assert_int_equal(trace_pcflags_set(&t, 0x50, 1, 1, NULL), 0);
    struct trace_csv_opts o = {.flags = &t};
    g->n = 0;
    assert_int_equal(read_s("tid,pc,addr,width,dep,op\n0,0x50,0x2000,8,0,st\n", &o, g, &e), 0);
    assert_int_equal(g->r[0].dep, 1);
    assert_int_equal(g->r[0].store, 1);
    assert_int_equal(read_s("tid,pc,addr,width,dep,op\n0,0x50,0x2000,8,0,st\n0,0x50,0x2000,8,0,ld\n", &o, g, &e),
                     TRACE_EINPUT);
    assert_int_equal(e.line, 3);
    assert_non_null(strstr(e.msg, "op ld here but op st on line 2"));
    trace_pcflags_free(&t);
    free(g);
}

static void test_read_all_widths(void **state)
{
    (void)state;
    static const unsigned good[] = {1, 2, 4, 8, 16};
    for (size_t i = 0; i < 5; i++) {
        char t[128];
        struct got *g = new_got();
        struct trace_err e;
        snprintf(t, sizeof t, "tid,pc,addr,width,dep\n1,2,3,%u,0\n", good[i]);
        assert_int_equal(read_s(t, NULL, g, &e), 0);
        assert_int_equal(g->r[0].width, good[i]);
        free(g);
    }
}

/* ---- reader: errors ------------------------------------------------------ */

struct bad_case {
    const char *text;
    uint64_t line;
    const char *msg;
};

static const struct bad_case bad_cases[] = {
    {"", 1, "the first line must be exactly"},
    {"\n", 1, "the first line must be exactly"},
    {"tid,pc,addr,width\n", 1, "the first line must be exactly"},
    {"tid,pc,addr,width,dep,x\n", 1, "the first line must be exactly"},
    {"tid, pc,addr,width,dep\n", 1, "the first line must be exactly"},
    {"TID,PC,ADDR,WIDTH,DEP\n", 1, "the first line must be exactly"},
    {"\xef\xbb\xbftid,pc,addr,width,dep\n", 1, "the first line must be exactly"},
    {"tid,pc,addr,width,dep \n", 1, "the first line must be exactly"},
    {"tid,pc,addr,width,dep\n1,2,3,4,0\n\n2,2,3,4,0\n", 3, "blank line"},
    {"tid,pc,addr,width,dep\n1,2,3,4,0\n\n", 3, "blank line"},
    {"tid,pc,addr,width,dep\n1,2,3,4,0\r\n\r\n", 3, "blank line"},
    {"tid,pc,addr,width,dep\n 1,2,3,4,0\n", 2, "field tid: expected a decimal number (column 1)"},
    {"tid,pc,addr,width,dep\n1 ,2,3,4,0\n", 2, "field tid: unexpected character (column 2)"},
    {"tid,pc,addr,width,dep\n1,2,3,4,0 \n", 2, "field dep: unexpected character (column 10)"},
    {"tid,pc,addr,width,dep\n0x1,2,3,4,0\n", 2, "field tid: unexpected character (column 2)"},
    {"tid,pc,addr,width,dep\n-1,2,3,4,0\n", 2, "field tid: expected a decimal number"},
    {"tid,pc,addr,width,dep\n18446744073709551616,2,3,4,0\n", 2, "field tid does not fit 64 bits"},
    {"tid,pc,addr,width,dep\n1,0x10000000000000000,3,4,0\n", 2, "field pc does not fit 64 bits"},
    {"tid,pc,addr,width,dep\n1,2,0x,4,0\n", 2, "field addr: \"0x\" without hex digits (column 5)"},
    {"tid,pc,addr,width,dep\n1,2,x3,4,0\n", 2, "field addr: expected a decimal or 0x-hex number"},
    {"tid,pc,addr,width,dep\n1,2,3,3,0\n", 2, "width must be 1, 2, 4, 8 or 16 (column 7)"},
    {"tid,pc,addr,width,dep\n1,2,3,0,0\n", 2, "width must be 1, 2, 4, 8 or 16"},
    {"tid,pc,addr,width,dep\n1,2,3,32,0\n", 2, "width must be 1, 2, 4, 8 or 16"},
    {"tid,pc,addr,width,dep\n1,2,3,4294967300,0\n", 2, "width must be 1, 2, 4, 8 or 16"},
    {"tid,pc,addr,width,dep\n1,2,3,0x4,0\n", 2, "field width: unexpected character"},
    {"tid,pc,addr,width,dep\n1,2,3,4,2\n", 2, "dep must be 0 or 1 (column 9)"},
    {"tid,pc,addr,width,dep\n1,2,3,4,0\n1,2,0xfffffffffffffffe,4,0\n", 3,
     "address 0xfffffffffffffffe + width 4 passes 2^64 (column 5)"},
    {"tid,pc,addr,width,dep\n1,2,18446744073709551615,2,0\n", 2, "passes 2^64 (column 5)"},
    {"tid,pc,addr,width,dep\n1,2,3,4,01\n", 2, "dep must be 0 or 1"},
    {"tid,pc,addr,width,dep\n1,2,3,4,\n", 2, "field dep: expected a decimal number"},
    {"tid,pc,addr,width,dep\n1,2,3,4\n", 2, "line ends after field width: 5 fields expected"},
    {"tid,pc,addr,width,dep\n1\n", 2, "line ends after field tid"},
    {"tid,pc,addr,width,dep\n1,2,3,4,0,\n", 2, "more than 5 fields"},
    {"tid,pc,addr,width,dep\n1,2,3,4,0,7\n", 2, "more than 5 fields"},
    {"tid,pc,addr,width,dep\n1,2,3,4,0\n1,2\r,3,4,0\n", 3, "field pc: unexpected character"},
    {"tid,pc,addr,width,dep\n1,2,3,4,0\r\r\n", 2, "field dep: unexpected character"},
    {"tid,pc,addr,width,dep\n1;2;3;4;0\n", 2, "field tid: unexpected character"},
    {"tid,pc,addr,width,dep\n1,2,3,4,1\n1,2,3,4,1\n1,0x2,3,4,0\n", 4,
     "pc 0x2 has dep 0 here but dep 1 on line 2"},
    /* the op column */
    {"tid,pc,addr,width,dep,op\n1,2,3,4,0\n", 2, "line ends after field dep: 6 fields expected"},
    {"tid,pc,addr,width,dep,op\n1,2,3,4,0,\n", 2, "op must be ld or st (column 11)"},
    {"tid,pc,addr,width,dep,op\n1,2,3,4,0,LD\n", 2, "op must be ld or st"},
    {"tid,pc,addr,width,dep,op\n1,2,3,4,0,ldx\n", 2, "field op: unexpected character"},
    {"tid,pc,addr,width,dep,op\n1,2,3,4,0,st,\n", 2, "more than 6 fields"},
    {"tid,pc,addr,width,dep,op\n1,2,3,4,0,1\n", 2, "op must be ld or st"},
    {"tid,pc,addr,width,dep\n1,2,3,4,0,st\n", 2, "more than 5 fields"},
    {"tid,pc,addr,width,dep,op\n1,2,3,4,0,st\n2,2,7,4,0,st\n3,0x2,3,4,0,ld\n", 4,
     "pc 0x2 has op ld here but op st on line 2"},
};

static void test_read_errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const struct bad_case *c = &bad_cases[i];
        struct got *g = new_got();
        struct trace_err e;
        int r = read_s(c->text, NULL, g, &e);
        if (r != TRACE_EINPUT)
            fail_msg("case %zu: result %d", i, r);
        if (e.line != c->line || e.offset != line_offset(c->text, c->line) ||
            !strstr(e.msg, c->msg))
            fail_msg("case %zu: line %llu offset %llu msg '%s'", i, (unsigned long long)e.line,
                     (unsigned long long)e.offset, e.msg);
        /* every line before the bad one was handed on, the bad one never */
        if (c->line >= 2 && g->n != c->line - 2)
            fail_msg("case %zu: %zu records before the error", i, g->n);
        free(g);
    }
}

static void test_read_nul_byte(void **state)
{
    (void)state;
    static const char t[] = "tid,pc,addr,width,dep\n1,2,3,4,0\n1,2,\0003,4,0\n";
    struct got *g = new_got();
    struct trace_err e;
    assert_int_equal(read_n(t, sizeof t - 1, NULL, g, &e), TRACE_EINPUT);
    assert_int_equal(e.line, 3);
    assert_int_equal(e.offset, 32);
    assert_int_equal(g->n, 1);
    free(g);
}

static void test_read_sink_stop(void **state)
{
    (void)state;
    struct got *g = new_got();
    struct trace_err e;
    g->stop_after = 2;
    g->stop_value = 7;
    assert_int_equal(
        read_s("tid,pc,addr,width,dep\n1,2,3,4,0\n2,2,3,4,0\n3,2,3,4,0\nbad\n", NULL, g, &e), 7);
    assert_int_equal(g->n, 2);
    free(g);
}

/* ---- reader: flags -------------------------------------------------------- */

static void test_read_flag_table_and_limit(void **state)
{
    (void)state;
    struct trace_pcflags t;
    struct trace_err e;
    trace_pcflags_init(&t, 0);
    assert_int_equal(trace_pcflags_set(&t, 0x40, 0, 1, NULL), 0);
    struct trace_csv_opts o = {.flags = &t};
    struct got *g = new_got();
    /* 0x40's flags disagree in the file, but the table replaces them */
    assert_int_equal(
        read_s("tid,pc,addr,width,dep\n1,0x40,3,4,1\n2,64,3,4,0\n3,0x50,3,4,1\n", &o, g, &e), 0);
    assert_int_equal(g->n, 3);
    assert_int_equal(g->r[0].dep, 0);
    assert_int_equal(g->r[1].dep, 0);
    assert_int_equal(g->r[2].dep, 1);
    trace_pcflags_free(&t);
    free(g);

    struct trace_csv_opts lim = {.max_pcs = 2};
    g = new_got();
    const char *text = "tid,pc,addr,width,dep\n1,1,3,4,1\n1,2,3,4,1\n1,1,3,4,1\n1,3,3,4,1\n";
    assert_int_equal(read_s(text, &lim, g, &e), TRACE_EINPUT);
    assert_int_equal(e.line, 5);
    assert_int_equal(e.offset, line_offset(text, 5));
    assert_non_null(strstr(e.msg, "more than 2 distinct PCs"));
    assert_int_equal(g->n, 3);
    free(g);
}

/* ---- writers ------------------------------------------------------------ */

struct mem {
    char *p;
    size_t n, cap;
    int fail_at; /* fail the fail_at-th flush (1-based); 0: never */
    int flushes;
};

static int mem_flush(void *ctx, const char *data, size_t n)
{
    struct mem *m = ctx;
    if (++m->flushes == m->fail_at)
        return -1;
    if (m->n + n + 1 > m->cap) {
        m->cap = (m->n + n + 1) * 2;
        m->p = realloc(m->p, m->cap);
        assert_non_null(m->p);
    }
    memcpy(m->p + m->n, data, n);
    m->n += n;
    m->p[m->n] = '\0';
    return 0;
}

static void test_write_exact_text(void **state)
{
    (void)state;
    char buf[TRACE_WBUF_MIN];
    struct mem m = {0};
    struct trace_wbuf w;
    trace_wbuf_init(&w, buf, sizeof buf, mem_flush, &m);
    struct trace_rec r = {.tid = 12, .pc = 0x40, .addr = 0x7f3a40000000, .width = 4, .dep = 1};
    struct trace_out o = {.sm = 3, .seq = 0, .tid = 0, .pc = 0, .addr = 0, .width = 16, .dep = 0, .store = 1};
    struct trace_out big = {UINT32_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, 8, 1, 0};
    assert_int_equal(trace_csv_write_in_header(&w), 0);
    assert_int_equal(trace_csv_write_in(&w, &r), 0);
    assert_int_equal(trace_csv_write_out_header(&w), 0);
    assert_int_equal(trace_csv_write_out(&w, &o), 0);
    assert_int_equal(trace_csv_out_sink(&w, &big, 1), 0);
    assert_int_equal(trace_wbuf_flush(&w), 0);
    assert_string_equal(m.p, "tid,pc,addr,width,dep,op\n"
                             "12,0x40,0x7f3a40000000,4,1,ld\n"
                             "sm,seq,tid,pc,addr,width,dep,op\n"
                             "3,0,0,0x0,0x0,16,0,st\n"
                             "4294967295,18446744073709551615,18446744073709551615,"
                             "0xffffffffffffffff,0xffffffffffffffff,8,1,ld\n");
    assert_true(m.flushes >= 2); /* the 256-byte buffer had to be flushed on the way */
    free(m.p);
}

static void test_write_number_edges(void **state)
{
    (void)state;
    uint64_t vals[200];
    size_t k = 0;
    uint64_t p10 = 1;
    for (int i = 0; i < 20; i++, p10 *= 10) {
        vals[k++] = p10;
        vals[k++] = p10 - 1;
        vals[k++] = p10 + 1;
    }
    for (int b = 0; b < 64; b++)
        vals[k++] = (uint64_t)1 << b;
    vals[k++] = UINT64_MAX;
    char buf[1024];
    struct mem m = {0};
    struct trace_wbuf w;
    trace_wbuf_init(&w, buf, sizeof buf, mem_flush, &m);
    char want[80];
    for (size_t i = 0; i < k; i++) {
        struct trace_rec r = {
            .tid = vals[i], .pc = vals[i], .addr = vals[i] ^ 0xf0f0, .width = 2, .dep = 0};
        assert_int_equal(trace_csv_write_in(&w, &r), 0);
        assert_int_equal(trace_wbuf_flush(&w), 0);
        snprintf(want, sizeof want, "%llu,0x%llx,0x%llx,2,0,ld\n", (unsigned long long)vals[i],
                 (unsigned long long)vals[i], (unsigned long long)(vals[i] ^ 0xf0f0));
        assert_string_equal(m.p, want);
        m.n = 0;
    }
    free(m.p);
}

static void test_write_failures(void **state)
{
    (void)state;
    char buf[TRACE_WBUF_MIN];
    struct mem m = {.fail_at = 1};
    struct trace_wbuf w;
    struct trace_rec r = {1, 2, 3, 4, 0, 0, 0};
    trace_wbuf_init(&w, buf, sizeof buf, mem_flush, &m);
    int failed_at = -1;
    for (int i = 0; i < 100 && failed_at < 0; i++)
        if (trace_csv_write_in(&w, &r) != 0)
            failed_at = i;
    assert_true(failed_at > 0); /* the first flush happened when the buffer was full */
    assert_int_equal(trace_csv_write_in(&w, &r), -1);
    assert_int_equal(trace_csv_sink(&w, &r), 1);
    struct trace_out o = {0};
    assert_int_equal(trace_csv_out_sink(&w, &o, 1), 1);
    assert_int_equal(trace_csv_out_sink(&w, &o, 0), 0);
    assert_int_equal(trace_wbuf_flush(&w), -1);
    assert_null(m.p);
    /* a buffer too small to hold a line refuses every write */
    char tiny[16];
    trace_wbuf_init(&w, tiny, sizeof tiny, mem_flush, &m);
    assert_int_equal(trace_csv_write_in_header(&w), -1);
    assert_int_equal(trace_wbuf_flush(&w), -1);
}

static void test_write_file(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    assert_non_null(f);
    char buf[300];
    struct trace_wbuf w;
    trace_wbuf_init_file(&w, buf, sizeof buf, f);
    assert_int_equal(trace_csv_write_in_header(&w), 0);
    for (uint64_t i = 0; i < 1000; i++) {
        struct trace_rec r = {i, 0x100 + i % 7, i * 4, 4, (uint32_t)((0x100 + i % 7) & 1), 0, 0};
        assert_int_equal(trace_csv_write_in(&w, &r), 0);
    }
    assert_int_equal(trace_wbuf_flush(&w), 0);
    long len = ftell(f);
    assert_true(len > 0);
    rewind(f);
    char *text = malloc((size_t)len);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    struct got *g = new_got();
    struct trace_err e;
    assert_int_equal(read_n(text, (size_t)len, NULL, g, &e), 0);
    assert_int_equal(g->n, 1000);
    expect_rec(&g->r[999], 999, 0x100 + 999 % 7, 999 * 4, 4, (0x100 + 999 % 7) & 1);
    free(text);
    free(g);
}

/* ---- round trips -------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
    *s += 0x9e3779b97f4a7c15ULL;
    uint64_t z = *s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void test_round_trip_random(void **state)
{
    (void)state;
    static const uint32_t widths[] = {1, 2, 4, 8, 16};
    struct got *in = new_got(), *out = new_got();
    uint64_t s = 42;
    for (size_t i = 0; i < MAX_RECS; i++) {
        struct trace_rec *r = &in->r[i];
        r->tid = rng_next(&s) >> (rng_next(&s) % 64);
        r->pc = rng_next(&s) % 500 * 16;
        r->addr = rng_next(&s) >> (rng_next(&s) % 64);
        r->width = widths[rng_next(&s) % 5];
        r->dep = (uint8_t)(r->pc >> 4 & 1);   /* one flag per PC */
        r->store = (uint8_t)(r->pc >> 5 & 1); /* one kind per PC */
    }
    in->n = MAX_RECS;
    char buf[TRACE_WBUF_MIN + 7];
    struct mem m = {0};
    struct trace_wbuf w;
    trace_wbuf_init(&w, buf, sizeof buf, mem_flush, &m);
    assert_int_equal(trace_csv_write_in_header(&w), 0);
    for (size_t i = 0; i < in->n; i++)
        assert_int_equal(trace_csv_sink(&w, &in->r[i]), 0);
    assert_int_equal(trace_wbuf_flush(&w), 0);
    struct trace_err e;
    assert_int_equal(read_n(m.p, m.n, NULL, out, &e), 0);
    assert_int_equal(out->n, in->n);
    assert_memory_equal(out->r, in->r, in->n * sizeof in->r[0]);
    free(m.p);
    free(in);
    free(out);
}


static void test_round_trip_fixture(void **state)
{
    (void)state;
    size_t n;
    char *text = must_read_file("tests/fixtures/traces/sample.csv", &n);
    struct got *a = new_got(), *b = new_got();
    struct trace_err e;
    assert_int_equal(read_n(text, n, NULL, a, &e), 0);
    assert_int_equal(a->n, 14);
    expect_rec(&a->r[2], 2, 0x40, 0x7f3a40000008, 4, 1);
    expect_rec(&a->r[8], 0, 0x80, 0x7f3a40200000, 16, 0);
    expect_rec(&a->r[13], 33, 0x90, 0x7f3a40300001, 2, 1);
    char buf[4096];
    struct mem m = {0};
    struct trace_wbuf w;
    trace_wbuf_init(&w, buf, sizeof buf, mem_flush, &m);
    assert_int_equal(trace_csv_write_in_header(&w), 0);
    for (size_t i = 0; i < a->n; i++)
        assert_int_equal(trace_csv_write_in(&w, &a->r[i]), 0);
    assert_int_equal(trace_wbuf_flush(&w), 0);
    assert_int_equal(read_n(m.p, m.n, NULL, b, &e), 0);
    assert_int_equal(b->n, a->n);
    assert_memory_equal(b->r, a->r, a->n * sizeof a->r[0]);
    free(m.p);
    free(text);
    free(a);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_basic),
        cmocka_unit_test(test_read_line_ends),
        cmocka_unit_test(test_read_op_column),
        cmocka_unit_test(test_read_all_widths),
        cmocka_unit_test(test_read_errors),
        cmocka_unit_test(test_read_nul_byte),
        cmocka_unit_test(test_read_sink_stop),
        cmocka_unit_test(test_read_flag_table_and_limit),
        cmocka_unit_test(test_write_exact_text),
        cmocka_unit_test(test_write_number_edges),
        cmocka_unit_test(test_write_failures),
        cmocka_unit_test(test_write_file),
        cmocka_unit_test(test_round_trip_random),
        cmocka_unit_test(test_round_trip_fixture),
    };
    return cmocka_run_group_tests_name("trace_csv", tests, NULL, NULL);
}
