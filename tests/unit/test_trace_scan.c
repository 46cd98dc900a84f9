/*
 * Unit tests of trace/scan.c, the text reading every trace reader shares:
 * the line walk (LF, CRLF, a final line with or without its LF, a CR that is
 * not a line end kept for the reader to refuse, an empty buffer), the error
 * positions (column-aware, line-only, and the bounded-table result mapping)
 * and the cursor (literals, numbers that leave the cursor in place when they
 * fail, x,y,z triples that stop where they went wrong, blanks and words).
 * The number scanners are tested in test_trace_pcflags.c, where they lived
 * first; the readers' own tests check that their errors keep their places.
 * The short scanner of the readers' fast paths agrees with the full one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "trace/scan.h"

/* The next line's content as a string (into buf), or NULL at the end. */
static const char *next_line(struct trace_text *t, char *buf, size_t cap)
{
    struct trace_cur c;
    if (!trace_text_line(t, &c))
        return NULL;
    size_t n = (size_t)(c.e - c.p);
    assert_true(n < cap);
    memcpy(buf, c.p, n);
    buf[n] = '\0';
    return buf;
}

static void test_lines(void **state)
{
    (void)state;
    const char *s = "a\r\n\nb\rc\nlast\r";
    struct trace_text t;
    char b[32];
    trace_text_init(&t, s, strlen(s), NULL);
    assert_int_equal(t.line, 0);
    assert_string_equal(next_line(&t, b, sizeof b), "a");
    assert_int_equal(t.line, 1);
    assert_ptr_equal(t.ls, s);
    assert_string_equal(next_line(&t, b, sizeof b), "");
    assert_string_equal(next_line(&t, b, sizeof b), "b\rc"); /* a CR inside stays */
    assert_int_equal(t.line, 3);
    assert_ptr_equal(t.ls, s + 4);
    assert_string_equal(next_line(&t, b, sizeof b), "last"); /* CR before the end drops */
    assert_null(next_line(&t, b, sizeof b));
    assert_null(next_line(&t, b, sizeof b));

    trace_text_init(&t, "x\n", 2, NULL); /* a final LF starts no line */
    assert_string_equal(next_line(&t, b, sizeof b), "x");
    assert_null(next_line(&t, b, sizeof b));
    trace_text_init(&t, "", 0, NULL);
    assert_null(next_line(&t, b, sizeof b));
    assert_int_equal(t.line, 0);
}

static void test_errors(void **state)
{
    (void)state;
    const char *s = "first\nsecond line\n";
    struct trace_text t;
    struct trace_cur c;
    struct trace_err e;
    trace_text_init(&t, s, strlen(s), &e);
    assert_true(trace_text_line(&t, &c));
    assert_true(trace_text_line(&t, &c));
    assert_int_equal(trace_text_bad(&t, c.p + 7, "bad %s", "thing"), TRACE_EINPUT);
    assert_int_equal(e.line, 2);
    assert_int_equal(e.offset, 6);
    assert_string_equal(e.msg, "bad thing (column 8)");
    assert_int_equal(trace_text_fail(&t, 42, "whole %d", 7), 42);
    assert_int_equal(e.offset, 6);
    assert_string_equal(e.msg, "whole 7");
    e.msg[0] = '\0';
    assert_int_equal(trace_text_put_result(&t, 0, "PCs"), 0);
    assert_string_equal(e.msg, "");
    assert_int_equal(trace_text_put_result(&t, TRACE_ENOMEM, "PCs"), TRACE_ENOMEM);
    assert_string_equal(e.msg, "out of memory");
    assert_int_equal(trace_text_put_result(&t, 1, "warps"), TRACE_EINPUT);
    assert_string_equal(e.msg, "more than the allowed number of warps");
    assert_int_equal(trace_text_put_result(&t, 2, "PCs"), TRACE_EINPUT);
    assert_string_equal(e.msg, "more than the allowed number of PCs");

    trace_text_init(&t, s, strlen(s), NULL); /* no err: nothing is written */
    assert_true(trace_text_line(&t, &c));
    assert_int_equal(trace_text_bad(&t, c.p, "x"), TRACE_EINPUT);
    assert_int_equal(trace_text_fail(&t, TRACE_ENOMEM, "y"), TRACE_ENOMEM);
}

static struct trace_cur cur(const char *s)
{
    return (struct trace_cur){s, s + strlen(s)};
}

static void test_cursor_numbers(void **state)
{
    (void)state;
    struct trace_cur c = cur("0x1F,12");
    uint64_t v;
    uint32_t w;
    assert_true(trace_cur_u64(&c, 0, &v)); /* without hex: the decimal 0, up to the 'x' */
    assert_int_equal(v, 0);
    assert_int_equal(c.p[0], 'x');
    c = cur("0x1F,12");
    assert_true(trace_cur_u64(&c, 1, &v));
    assert_int_equal(v, 0x1f);
    assert_true(trace_cur_lit(&c, ","));
    assert_false(trace_cur_lit(&c, "123"));
    assert_true(trace_cur_u32(&c, &w));
    assert_int_equal(w, 12);
    assert_ptr_equal(c.p, c.e);

    const char *big = "4294967296";
    c = cur(big);
    assert_false(trace_cur_u32(&c, &w)); /* 2^32: the cursor stays */
    assert_ptr_equal(c.p, big);
    c = cur("99999999999999999999");
    assert_false(trace_cur_u64(&c, 0, &v));
    assert_ptr_equal(c.p, c.e - 20);
}

static void test_cursor_triple(void **state)
{
    (void)state;
    uint32_t v[3] = {0};
    const char *s = "1,2,3 rest";
    struct trace_cur c = cur(s);
    assert_true(trace_cur_triple(&c, v));
    assert_int_equal(v[0], 1);
    assert_int_equal(v[2], 3);
    assert_ptr_equal(c.p, s + 5);

    s = "1,2;3";
    c = cur(s);
    assert_false(trace_cur_triple(&c, v));
    assert_ptr_equal(c.p, s + 3); /* where the ',' was missing */
    s = "1,4294967296,3";
    c = cur(s);
    assert_false(trace_cur_triple(&c, v));
    assert_ptr_equal(c.p, s + 2); /* where the number too large starts */
}

static void test_cursor_words(void **state)
{
    (void)state;
    const char *s = " \t LDG.E  0x10\t";
    struct trace_cur c = cur(s);
    struct trace_tok t = trace_cur_word(&c);
    assert_int_equal(t.n, 0); /* at a blank */
    trace_cur_skip_blanks(&c);
    t = trace_cur_word(&c);
    assert_ptr_equal(t.s, s + 3);
    assert_int_equal(t.n, 5);
    trace_cur_skip_blanks(&c);
    t = trace_cur_word(&c);
    assert_int_equal(t.n, 4);
    trace_cur_skip_blanks(&c);
    assert_ptr_equal(c.p, c.e);
    assert_int_equal(trace_cur_word(&c).n, 0);
}

/* trace_scan_u64_short against trace_scan_u64 on many strings: random
 * digits, lengths around both limits (16 hex, 19 and 20 decimal digits),
 * leading zeros, prefixes with and without digits, stray bytes after.
 * Whenever the short scanner takes a number, the full one takes the same
 * number and stops at the same byte; the short one leaves the position as
 * it was when it declines, and it declines only what it must (too long,
 * or no number). */
static void test_short_scanner_agrees(void **state)
{
    (void)state;
    static const char digits[] = "0123456789abcdefABCDEF";
    static const char *const prefixes[] = {"", "0x", "0X", "0", "00", "x", "-"};
    static const char *const tails[] = {"", ",", "g", " 1", "x1", "\n"};
    uint64_t seed = 12345;
    size_t taken = 0, declined = 0;
    for (int k = 0; k < 200000; k++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        char buf[64];
        size_t n = 0;
        const char *pre = prefixes[(seed >> 33) % 7];
        for (const char *c = pre; *c; c++)
            buf[n++] = *c;
        size_t len = (seed >> 40) % 24; /* 0..23 digits */
        int dec_only = (seed >> 20) & 1;
        for (size_t i = 0; i < len; i++) {
            uint64_t h = seed * (i + 7) >> 29;
            buf[n++] = digits[h % (dec_only ? 10 : 22)];
        }
        for (const char *c = tails[(seed >> 50) % 6]; *c; c++)
            buf[n++] = *c;
        const char *end = buf + n;
        for (int hex = 0; hex <= 1; hex++) {
            const char *p = buf, *next = NULL;
            uint64_t v = 0, w = 0;
            int got = trace_scan_u64_short(&p, end, hex, &v);
            int full = trace_scan_u64(buf, end, hex, &w, &next);
            if (!got) {
                assert_ptr_equal(p, buf);
                declined++;
                /* a number the full scanner reads in 1..16 hex / 1..19 decimal digits is not declined */
                if (full == TRACE_SCAN_OK) {
                    int is_hex = hex && n >= 2 && buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X');
                    size_t digits_read = (size_t)(next - buf) - (is_hex ? 2 : 0);
                    assert_true(digits_read > (is_hex ? 16u : 19u));
                }
                continue;
            }
            taken++;
            assert_int_equal(full, TRACE_SCAN_OK);
            assert_true(v == w);
            assert_ptr_equal(p, next);
        }
    }
    assert_true(taken > 50000 && declined > 50000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines),          cmocka_unit_test(test_errors),
        cmocka_unit_test(test_cursor_numbers), cmocka_unit_test(test_cursor_triple),
        cmocka_unit_test(test_cursor_words),   cmocka_unit_test(test_short_scanner_agrees),
    };
    return cmocka_run_group_tests_name("trace_scan", tests, NULL, NULL);
}
