/*
 * Unit tests of trace/pcflags.c: the u64 hash map (growth past many keys,
 * replace, entry limit), the number scanners (decimal, hex, signed; exact
 * overflow edges; "0x" without digits; stopping at the first non-digit and
 * never reading past the end, checked by giving them exact-size heap copies
 * under ASan), the error setter, and the per-PC flag table: set/force/get
 * semantics and the "pc,dep" parser with its header, comments, blank lines,
 * CRLF, duplicates, conflicts, limit and every error with its line and byte
 * offset.
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
#include "trace/pcflags.h"

/* A heap copy of s without its NUL, so reading past the end trips ASan. */
static char *exact(const char *s, size_t *n)
{
    *n = strlen(s);
    char *b = malloc(*n ? *n : 1);
    assert_non_null(b);
    memcpy(b, s, *n);
    return b;
}
/* ---- map ---------------------------------------------------------------- */

static void test_map_many_keys(void **state)
{
    (void)state;
    struct trace_map m;
    trace_map_init(&m, 0);
    uint64_t v = 0;
    assert_int_equal(trace_map_get(&m, 1, &v), 0);
    for (uint64_t k = 0; k < 20000; k++)
        assert_int_equal(trace_map_put(&m, k * 0x10000 + 7, k), 0);
    assert_int_equal(m.count, 20000);
    for (uint64_t k = 0; k < 20000; k++) {
        assert_int_equal(trace_map_get(&m, k * 0x10000 + 7, &v), 1);
        assert_int_equal(v, k);
    }
    assert_int_equal(trace_map_get(&m, 8, &v), 0);
    assert_int_equal(trace_map_put(&m, 7, 99), 0); /* replace */
    assert_int_equal(trace_map_get(&m, 7, &v), 1);
    assert_int_equal(v, 99);
    assert_int_equal(m.count, 20000);
    assert_true(m.cap >= 2 * m.count);
    trace_map_free(&m);
    assert_int_equal(trace_map_get(&m, 7, &v), 0);
}

static void test_map_limit(void **state)
{
    (void)state;
    struct trace_map m;
    trace_map_init(&m, 3);
    uint64_t v;
    assert_int_equal(trace_map_put(&m, UINT64_MAX, 1), 0);
    assert_int_equal(trace_map_put(&m, 0, 2), 0);
    assert_int_equal(trace_map_put(&m, 5, 3), 0);
    assert_int_equal(trace_map_put(&m, 6, 4), 1);
    assert_int_equal(trace_map_get(&m, 6, &v), 0);
    assert_int_equal(trace_map_put(&m, 5, 30), 0); /* replacing is not growing */
    assert_int_equal(trace_map_get(&m, 5, &v), 1);
    assert_int_equal(v, 30);
    assert_int_equal(trace_map_get(&m, UINT64_MAX, &v), 1);
    assert_int_equal(v, 1);
    trace_map_free(&m);
}

/* ---- scanners ------------------------------------------------------------- */

static int scan(const char *s, int hex, uint64_t *v, size_t *used)
{
    size_t n;
    char *b = exact(s, &n);
    const char *q = NULL;
    int r = trace_scan_u64(b, b + n, hex, v, &q);
    *used = (size_t)(q - b);
    free(b);
    return r;
}

static void test_scan_u64(void **state)
{
    (void)state;
    uint64_t v = 0;
    size_t used;
    assert_int_equal(scan("0", 0, &v, &used), TRACE_SCAN_OK);
    assert_int_equal(v, 0);
    assert_int_equal(scan("18446744073709551615", 0, &v, &used), TRACE_SCAN_OK);
    assert_true(v == UINT64_MAX);
    assert_int_equal(used, 20);
    assert_int_equal(scan("18446744073709551616", 0, &v, &used), TRACE_SCAN_OVERFLOW);
    assert_int_equal(scan("99999999999999999999", 0, &v, &used), TRACE_SCAN_OVERFLOW);
    assert_int_equal(scan("000000000000000000000042", 0, &v, &used), TRACE_SCAN_OK);
    assert_int_equal(v, 42);
    assert_int_equal(scan("123,4", 0, &v, &used), TRACE_SCAN_OK);
    assert_int_equal(v, 123);
    assert_int_equal(used, 3);
    assert_int_equal(scan("0x10", 0, &v, &used), TRACE_SCAN_OK); /* decimal only: stops at x */
    assert_int_equal(v, 0);
    assert_int_equal(used, 1);
    assert_int_equal(scan("0x10", 1, &v, &used), TRACE_SCAN_OK);
    assert_int_equal(v, 16);
    assert_int_equal(scan("0XfFfFfFfFfFfFfFfF", 1, &v, &used), TRACE_SCAN_OK);
    assert_true(v == UINT64_MAX);
    assert_int_equal(scan("0x000000000000000000001", 1, &v, &used), TRACE_SCAN_OK);
    assert_int_equal(v, 1);
    assert_int_equal(scan("0x10000000000000000", 1, &v, &used), TRACE_SCAN_OVERFLOW);
    assert_int_equal(scan("0x", 1, &v, &used), TRACE_SCAN_NOHEX);
    assert_int_equal(used, 0);
    assert_int_equal(scan("0xg", 1, &v, &used), TRACE_SCAN_NOHEX);
    assert_int_equal(scan("", 1, &v, &used), TRACE_SCAN_NONE);
    assert_int_equal(scan("-1", 0, &v, &used), TRACE_SCAN_NONE);
    assert_int_equal(scan(" 1", 0, &v, &used), TRACE_SCAN_NONE);
    assert_int_equal(scan("7", 1, &v, &used), TRACE_SCAN_OK); /* hex allowed, decimal given */
    assert_int_equal(v, 7);
}

static void test_scan_hex_and_i64(void **state)
{
    (void)state;
    size_t n;
    const char *q;
    uint64_t v = 0;
    int64_t i = 0;
    char *b = exact("00aF zz", &n);
    assert_int_equal(trace_scan_hex(b, b + n, &v, &q), TRACE_SCAN_OK);
    assert_int_equal(v, 0xaf);
    assert_ptr_equal(q, b + 4);
    assert_int_equal(trace_scan_hex(b + 5, b + n, &v, &q), TRACE_SCAN_NONE);
    free(b);
    b = exact("0x7f", &n);
    assert_int_equal(trace_scan_hex(b, b + n, &v, &q), TRACE_SCAN_OK);
    assert_int_equal(v, 0x7f);
    free(b);
    b = exact("12345678901234567", &n); /* 17 hex digits */
    assert_int_equal(trace_scan_hex(b, b + n, &v, &q), TRACE_SCAN_OVERFLOW);
    free(b);
    b = exact("-9223372036854775808", &n);
    assert_int_equal(trace_scan_i64(b, b + n, &i, &q), TRACE_SCAN_OK);
    assert_true(i == INT64_MIN);
    free(b);
    b = exact("9223372036854775807", &n);
    assert_int_equal(trace_scan_i64(b, b + n, &i, &q), TRACE_SCAN_OK);
    assert_true(i == INT64_MAX);
    free(b);
    b = exact("9223372036854775808", &n);
    assert_int_equal(trace_scan_i64(b, b + n, &i, &q), TRACE_SCAN_OVERFLOW);
    free(b);
    b = exact("-9223372036854775809", &n);
    assert_int_equal(trace_scan_i64(b, b + n, &i, &q), TRACE_SCAN_OVERFLOW);
    free(b);
    b = exact("-", &n);
    assert_int_equal(trace_scan_i64(b, b + n, &i, &q), TRACE_SCAN_NONE);
    assert_ptr_equal(q, b);
    free(b);
    b = exact("-12x", &n);
    assert_int_equal(trace_scan_i64(b, b + n, &i, &q), TRACE_SCAN_OK);
    assert_int_equal(i, -12);
    assert_ptr_equal(q, b + 3);
    free(b);
}

static void test_err_set(void **state)
{
    (void)state;
    struct trace_err e;
    trace_err_set(&e, 3, 17, "bad %s %d", "thing", 5);
    assert_int_equal(e.line, 3);
    assert_int_equal(e.offset, 17);
    assert_string_equal(e.msg, "bad thing 5");
    char big[600];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    trace_err_set(&e, 1, 0, "%s", big);
    assert_int_equal(strlen(e.msg), sizeof e.msg - 1);
    trace_err_set(NULL, 1, 0, "ignored");
}

/* ---- table ------------------------------------------------------------- */

static void test_table_set_force_get(void **state)
{
    (void)state;
    struct trace_pcflags t;
    trace_pcflags_init(&t, 2);
    uint32_t dep = 9;
    uint64_t line = 0, first = 0;
    assert_int_equal(trace_pcflags_get(&t, 0x40, &dep, &line), 0);
    assert_int_equal(trace_pcflags_get(NULL, 0x40, &dep, &line), 0);
    assert_int_equal(trace_pcflags_count(NULL), 0);
    assert_int_equal(trace_pcflags_set(&t, 0x40, 1, 5, &first), 0);
    assert_int_equal(trace_pcflags_set(&t, 0x40, 1, 9, &first), 0); /* same flag: fine */
    assert_int_equal(trace_pcflags_get(&t, 0x40, &dep, &line), 1);
    assert_int_equal(dep, 1);
    assert_int_equal(line, 5); /* the first line is kept */
    assert_int_equal(trace_pcflags_set(&t, 0x40, 0, 11, &first), 1);
    assert_int_equal(first, 5);
    assert_int_equal(trace_pcflags_set(&t, 0x50, 0, 12, NULL), 0);
    assert_int_equal(trace_pcflags_set(&t, 0x60, 0, 13, NULL), 2); /* limit 2 */
    assert_int_equal(trace_pcflags_force(&t, 0x40, 0, 14), 0);
    assert_int_equal(trace_pcflags_get(&t, 0x40, &dep, NULL), 1);
    assert_int_equal(dep, 0);
    assert_int_equal(trace_pcflags_force(&t, 0x70, 0, 15), 2);
    assert_int_equal(trace_pcflags_count(&t), 2);
    trace_pcflags_free(&t);
}

static int parse(const char *text, struct trace_pcflags *t, size_t max, struct trace_err *e)
{
    size_t n;
    char *b = exact(text, &n);
    trace_pcflags_init(t, max);
    memset(e, 0, sizeof *e);
    int r = trace_pcflags_parse(t, b, n, e);
    free(b);
    return r;
}

static void expect_flag(const struct trace_pcflags *t, uint64_t pc, uint32_t want)
{
    uint32_t dep = 9;
    assert_int_equal(trace_pcflags_get(t, pc, &dep, NULL), 1);
    assert_int_equal(dep, want);
}

static void test_parse_ok(void **state)
{
    (void)state;
    struct trace_pcflags t;
    struct trace_err e;
    assert_int_equal(parse("# flags\r\n\r\npc,dep\r\n0x40,1\r\n64,1\r\n\n0X50,0\n# end\n"
                           "18446744073709551615,1",
                           &t, 0, &e),
                     0);
    assert_int_equal(trace_pcflags_count(&t), 3);
    expect_flag(&t, 0x40, 1);
    expect_flag(&t, 0x50, 0);
    expect_flag(&t, UINT64_MAX, 1);
    trace_pcflags_free(&t);
    /* no header, empty input, only comments */
    assert_int_equal(parse("16,0\n", &t, 0, &e), 0);
    expect_flag(&t, 16, 0);
    trace_pcflags_free(&t);
    assert_int_equal(parse("", &t, 0, &e), 0);
    assert_int_equal(trace_pcflags_count(&t), 0);
    trace_pcflags_free(&t);
    assert_int_equal(parse("#x\n\n", &t, 0, &e), 0);
    trace_pcflags_free(&t);
}

static void test_parse_fixture(void **state)
{
    (void)state;
    FILE *f = fopen("tests/fixtures/traces/pcflags.csv", "rb");
    assert_non_null(f);
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    struct trace_pcflags t;
    struct trace_err e;
    trace_pcflags_init(&t, 0);
    assert_int_equal(trace_pcflags_parse(&t, buf, n, &e), 0);
    assert_int_equal(trace_pcflags_count(&t), 3);
    expect_flag(&t, 0x40, 1);
    expect_flag(&t, 0x50, 0);
    expect_flag(&t, 0x80, 0);
    trace_pcflags_free(&t);
}

struct bad_case {
    const char *text;
    uint64_t line;
    const char *msg; /* a part of the message */
};

static void test_parse_errors(void **state)
{
    (void)state;
    static const struct bad_case cases[] = {
        {"0x40,2\n", 1, "dep must be 0 or 1"},
        {"0x40,01\n", 1, "dep must be 0 or 1"},
        {"0x40,\n", 1, "dep must be 0 or 1"},
        {"0x40,1,0\n", 1, "dep must be 0 or 1"},
        {"0x40\n", 1, "expected \"pc,dep\""},
        {"x,1\n", 1, "expected \"pc,dep\""},
        {" 0x40,1\n", 1, "expected \"pc,dep\""},
        {"0x,1\n", 1, "expected \"pc,dep\""},
        {"0x40 ,1\n", 1, "expected \"pc,dep\""},
        {"pc,dep\n1,1\n0x10000000000000000,1\n", 3, "does not fit 64 bits"},
        {"pc,dep\n0x40,1\n# c\n64,0\n", 4, "given dep 0 here and dep 1 on line 2"},
        {"1,1\npc,dep\n", 2, "expected \"pc,dep\""}, /* the header only comes first */
        {"1,1\n2,1\r\r\n", 2, "stray CR"},
        {"1,1\n2,\0001\n", 2, "stray CR or NUL"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct trace_pcflags t;
        struct trace_err e;
        const char *text = cases[i].text;
        size_t len = strlen(text);
        if (i == sizeof cases / sizeof cases[0] - 1)
            len = 10; /* holds a NUL */
        char *b = malloc(len);
        assert_non_null(b);
        memcpy(b, text, len);
        trace_pcflags_init(&t, 0);
        memset(&e, 0, sizeof e);
        int r = trace_pcflags_parse(&t, b, len, &e);
        free(b);
        trace_pcflags_free(&t);
        if (r != TRACE_EINPUT)
            fail_msg("case %zu: result %d", i, r);
        if (e.line != cases[i].line || e.offset != line_offset(text, cases[i].line) ||
            !strstr(e.msg, cases[i].msg))
            fail_msg("case %zu: line %llu offset %llu msg '%s'", i, (unsigned long long)e.line,
                     (unsigned long long)e.offset, e.msg);
    }
}

static void test_parse_limit(void **state)
{
    (void)state;
    struct trace_pcflags t;
    struct trace_err e;
    assert_int_equal(parse("1,1\n2,0\n1,1\n3,0\n", &t, 2, &e), TRACE_EINPUT);
    assert_int_equal(e.line, 4);
    assert_int_equal(e.offset, 12);
    assert_non_null(strstr(e.msg, "more than 2 PCs"));
    trace_pcflags_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_map_many_keys), cmocka_unit_test(test_map_limit),
        cmocka_unit_test(test_scan_u64),      cmocka_unit_test(test_scan_hex_and_i64),
        cmocka_unit_test(test_err_set),       cmocka_unit_test(test_table_set_force_get),
        cmocka_unit_test(test_parse_ok),      cmocka_unit_test(test_parse_fixture),
        cmocka_unit_test(test_parse_errors),  cmocka_unit_test(test_parse_limit),
    };
    return cmocka_run_group_tests_name("trace_pcflags", tests, NULL, NULL);
}
