/*
 * Unit tests of trace/readfile.c: format names; detection from content (the
 * binary magic, the exact CSV header with LF or CRLF, NVBit and both
 * Accel-Sim layouts from the committed fixtures, markers only at the start
 * of a line, nothing for anything else); trace_read_path on each fixture
 * (record counts, the format used, the geometry of NVBit traces), with a
 * per-PC flag table replacing the flags of a binary file, refusing a sorted
 * binary file and an undetectable one (line 1, offset 0), and telling a
 * missing file (TRACE_ENOMEM) from a bad one; trace_err_format's two forms.
 * Run from the repository root (the fixtures are tests/fixtures/traces/).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/support/tmpfile.h"
#include "trace/binfmt.h"
#include "trace/csv.h"
#include "trace/readfile.h"

#define FIX "tests/fixtures/traces/"

static enum trace_format detect_text(const char *s)
{
    return trace_format_detect(s, strlen(s));
}

static void test_names(void **state)
{
    (void)state;
    for (int f = TRACE_FMT_AUTO; f <= TRACE_FMT_ACCELSIM; f++)
        assert_int_equal(trace_format_parse(trace_format_name((enum trace_format)f)), f);
    assert_int_equal(trace_format_parse("CSV"), -1);
    assert_int_equal(trace_format_parse(NULL), -1);
}

static void test_detect_text(void **state)
{
    (void)state;
    assert_int_equal(detect_text("tid,pc,addr,width,dep\n0,1,2,4,1\n"), TRACE_FMT_CSV);
    assert_int_equal(detect_text("tid,pc,addr,width,dep\r\n"), TRACE_FMT_CSV);
    assert_int_equal(detect_text("tid,pc,addr,width,dep"), TRACE_FMT_CSV);
    assert_int_equal(detect_text("tid,pc,addr,width,dep,x\n"), TRACE_FMT_AUTO);
    assert_int_equal(detect_text("tid,pc,addr,width,dep\r"), TRACE_FMT_AUTO);
    assert_int_equal(detect_text("banner\nMEMTRACE: CTX 0x1 - LAUNCH\n"), TRACE_FMT_NVBIT);
    assert_int_equal(detect_text("x MEMTRACE: CTX\n"), TRACE_FMT_AUTO); /* not at a line start */
    assert_int_equal(detect_text("-kernel name = k\n"), TRACE_FMT_ACCELSIM);
    assert_int_equal(detect_text("\n\n#BEGIN_TB\n"), TRACE_FMT_ACCELSIM);
    assert_int_equal(trace_format_detect("GPTRACE", 7), TRACE_FMT_AUTO); /* magic cut short */
    assert_int_equal(trace_format_detect("GPTRACE\0xyz", 11), TRACE_FMT_BIN);
    assert_int_equal(detect_text(""), TRACE_FMT_AUTO);
    assert_int_equal(detect_text("pc,dep\n0x40,1\n"), TRACE_FMT_AUTO);
}

static void test_detect_fixtures(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        enum trace_format fmt;
    } cases[] = {
        {FIX "sample.csv", TRACE_FMT_CSV},
        {FIX "nvbit_memtrace.txt", TRACE_FMT_NVBIT},
        {FIX "kernel-1.trace", TRACE_FMT_ACCELSIM},
        {FIX "kernel-1.traceg", TRACE_FMT_ACCELSIM},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        enum trace_format f = TRACE_FMT_AUTO;
        struct trace_err err = {0};
        assert_int_equal(trace_detect_path(cases[i].file, &f, &err), 0);
        assert_int_equal(f, cases[i].fmt);
    }
}

static int count(void *ctx, const struct trace_rec *r)
{
    (void)r;
    ++*(uint64_t *)ctx;
    return 0;
}

static void test_read_fixtures(void **state)
{
    (void)state;
    struct trace_err err = {0};
    struct trace_read_stats st;
    enum trace_format used;
    uint64_t n = 0;
    assert_int_equal(trace_read_path(FIX "sample.csv", TRACE_FMT_AUTO, NULL, count, &n, &st, &used,
                                     &err),
                     0);
    assert_int_equal(n, 14);
    assert_int_equal(used, TRACE_FMT_CSV);
    n = 0;
    assert_int_equal(trace_read_path(FIX "nvbit_memtrace.txt", TRACE_FMT_NVBIT, NULL, count, &n,
                                     &st, &used, &err),
                     0);
    assert_int_equal(n, 320);
    assert_int_equal(st.threads_per_block, 64);
    n = 0;
    assert_int_equal(trace_read_path(FIX "kernel-1.traceg", TRACE_FMT_AUTO, NULL, count, &n, NULL,
                                     NULL, &err),
                     0);
    assert_int_equal(n, 320);
    /* named wrongly: the reader's own error, with its line */
    assert_int_equal(trace_read_path(FIX "sample.csv", TRACE_FMT_NVBIT, NULL, count, &n, NULL,
                                     NULL, &err),
                     TRACE_EINPUT); /* no MEMTRACE line at all: not NVBit's output */
    assert_non_null(strstr(err.msg, "mem_trace"));
    assert_int_equal(err.line, 1);
    assert_int_equal(trace_read_path(FIX "nvbit_memtrace.txt", TRACE_FMT_CSV, NULL, count, &n,
                                     NULL, NULL, &err),
                     TRACE_EINPUT);
    assert_int_equal(err.line, 1);
}

static void test_unknown_and_missing(void **state)
{
    (void)state;
    struct trace_err err = {0};
    uint64_t n = 0;
    assert_int_equal(trace_read_path(FIX "pcflags.csv", TRACE_FMT_AUTO, NULL, count, &n, NULL, NULL,
                                     &err),
                     TRACE_EINPUT);
    assert_int_equal(err.line, 1);
    assert_int_equal(err.offset, 0);
    assert_non_null(strstr(err.msg, "cannot tell the format"));
    assert_non_null(strstr(err.msg, "--in-format"));
    assert_int_equal(trace_read_path(FIX "no-such-file", TRACE_FMT_CSV, NULL, count, &n, NULL, NULL,
                                     &err),
                     TRACE_ENOMEM);
    assert_non_null(strstr(err.msg, "No such file")); /* (the callers name the file) */
    enum trace_format f;
    assert_int_equal(trace_detect_path(FIX "no-such-file", &f, &err), TRACE_ENOMEM);
}

/* ---- binary files ----------------------------------------------------------------- */

static int setup(void **state)
{
    return tmp_setup(state, "readfile", "t.bin");
}

static void write_bin(const char *path, enum trace_bin_kind kind)
{
    struct trace_bin_header h;
    struct trace_err err;
    struct trace_params p;
    trace_params_default(&p);
    trace_params_resolve(&p, 0);
    trace_bin_header_init(&h, kind, kind == TRACE_BIN_SORTED ? &p : NULL);
    struct trace_bin_writer *w = trace_bin_writer_open(path, &h, &err);
    assert_non_null(w);
    if (kind == TRACE_BIN_REQUESTS) {
        struct trace_rec r = {.tid = 0, .pc = 0x40, .addr = 0x100, .width = 4, .dep = 0};
        assert_int_equal(trace_bin_write_rec(w, &r), 0);
        r.pc = 0x50;
        assert_int_equal(trace_bin_write_rec(w, &r), 0);
    }
    assert_int_equal(trace_bin_writer_close(w, &err), 0);
}

/* Sums the records' flags in ctx. */
static int sum_dep(void *ctx, const struct trace_rec *r)
{
    *(uint64_t *)ctx += r->dep;
    return 0;
}

static void test_binary_with_flags(void **state)
{
    struct tmp *t = *state;
    struct trace_pcflags flags;
    struct trace_err err = {0};
    uint64_t deps = 0;
    enum trace_format used;
    write_bin(t->path, TRACE_BIN_REQUESTS);
    trace_pcflags_init(&flags, 0);
    assert_int_equal(trace_pcflags_set(&flags, 0x50, 1, 1, NULL), 0);
    assert_int_equal(trace_read_path(t->path, TRACE_FMT_AUTO, NULL, sum_dep, &deps, NULL, &used,
                                     &err),
                     0);
    assert_int_equal(used, TRACE_FMT_BIN);
    assert_int_equal(deps, 0);
    assert_int_equal(trace_read_path(t->path, TRACE_FMT_BIN, &flags, sum_dep, &deps, NULL, NULL,
                                     &err),
                     0);
    assert_int_equal(deps, 1); /* 0x50 now dependent, 0x40 untouched */
    trace_pcflags_free(&flags);
}

static void test_sorted_binary_refused(void **state)
{
    struct tmp *t = *state;
    struct trace_err err = {0};
    uint64_t n = 0;
    write_bin(t->path, TRACE_BIN_SORTED);
    assert_int_equal(trace_read_path(t->path, TRACE_FMT_AUTO, NULL, count, &n, NULL, NULL, &err),
                     TRACE_EINPUT);
    assert_int_equal(err.offset, 10);
    assert_non_null(strstr(err.msg, "sorted"));
}

/* A sorted trace's CSV, what a sort writes by default, is named as such
 * (by detection and by a read), not reported as an unknown format. */
static void test_sorted_csv_named(void **state)
{
    struct tmp *t = *state;
    static const char *const heads[] = {TRACE_CSV_OUT_HEADER, TRACE_CSV_OUT_HEADER_NO_OP};
    for (int i = 0; i < 2; i++) {
        struct trace_err err = {0};
        uint64_t n = 0;
        enum trace_format f;
        FILE *fp = fopen(t->path, "w");
        assert_non_null(fp);
        fprintf(fp, "%s\n0,0,0,0x10,0x100,4,0%s\n", heads[i], i == 0 ? ",ld" : "");
        fclose(fp);
        assert_int_equal(trace_detect_path(t->path, &f, &err), TRACE_EINPUT);
        assert_non_null(strstr(err.msg, "this is a sorted trace"));
        assert_null(strstr(err.msg, "cannot tell the format"));
        memset(&err, 0, sizeof err);
        assert_int_equal(trace_read_path(t->path, TRACE_FMT_AUTO, NULL, count, &n, NULL, NULL, &err),
                         TRACE_EINPUT);
        assert_non_null(strstr(err.msg, "trace cache"));
        assert_int_equal(n, 0);
    }
}

static void test_err_format(void **state)
{
    (void)state;
    char buf[300];
    struct trace_err e = {.line = 3, .offset = 39, .msg = "width must be 1"};
    trace_err_format(&e, buf, sizeof buf);
    assert_string_equal(buf, "line 3 (byte offset 39): width must be 1");
    e.line = 0;
    e.offset = 160;
    trace_err_format(&e, buf, sizeof buf);
    assert_string_equal(buf, "byte offset 160: width must be 1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_detect_text),
        cmocka_unit_test(test_detect_fixtures),
        cmocka_unit_test(test_read_fixtures),
        cmocka_unit_test(test_unknown_and_missing),
        cmocka_unit_test_setup_teardown(test_binary_with_flags, setup, tmp_teardown),
        cmocka_unit_test_setup_teardown(test_sorted_binary_refused, setup, tmp_teardown),
        cmocka_unit_test_setup_teardown(test_sorted_csv_named, setup, tmp_teardown),
        cmocka_unit_test(test_err_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
