/*
 * Unit tests of the key=value logger (server/log.c): log_quote leaves plain
 * tokens unchanged and double-quotes anything else (empty or NULL strings,
 * spaces, '"', '\\', '=', control characters and DEL), escaping '"' and '\\'
 * with a backslash and control characters as \xNN; cut into a small buffer
 * it stays NUL-terminated inside the buffer (a canary byte after it is never
 * touched), keeps its closing quote and never splits an escape; this holds
 * for every buffer size, down to one byte. log_level_parse knows the four
 * names and nothing else, and log_kv writes one "ts=... level=L msg=M k=v"
 * line per event at or above the set level, cut to its 4 KB buffer with the
 * newline kept.
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
#include <unistd.h>

#include "server/log.h"

#define CANARY ((char)0xA5)

/* log_quote into a len-byte window of a larger array, checking the canary. */
static void quote_into(const char *s, size_t len, char *out, size_t outlen)
{
    char buf[512];
    assert_true(len + 16 <= sizeof buf);
    memset(buf, CANARY, sizeof buf);
    const char *r = log_quote(buf, len, s);
    assert_ptr_equal(r, buf);
    for (size_t i = len; i < sizeof buf; i++)
        if (buf[i] != CANARY)
            fail_msg("log_quote(len %zu) wrote byte %zu past the buffer", len, i - len);
    if (!memchr(buf, '\0', len))
        fail_msg("log_quote(len %zu) left no NUL inside the buffer", len);
    snprintf(out, outlen, "%s", buf);
}

static void quoted(const char *s, const char *want)
{
    char out[512];
    quote_into(s, 256, out, sizeof out);
    assert_string_equal(out, want);
}

static void test_plain_tokens(void **state)
{
    (void)state;
    static const char *const plain[] = {
        "job_started", "GPU-0a0a0a0a-0000-4000-8000-00000000000a", "/api/v1/jobs/42",
        "127.0.0.1:8080", "a", "x.y,z;(1)[2]{3}'4'", "100%", "~!@#$^&*+-<>?|`",
    };
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        quoted(plain[i], plain[i]);
}

static void test_quoted_and_escaped(void **state)
{
    (void)state;
    quoted("", "\"\"");
    quoted(NULL, "\"\"");
    quoted("hello world", "\"hello world\"");
    quoted(" ", "\" \"");
    quoted("say \"hi\"", "\"say \\\"hi\\\"\"");
    quoted("\"", "\"\\\"\"");
    quoted("C:\\dir", "\"C:\\\\dir\"");
    quoted("\\", "\"\\\\\"");
    quoted("a=b", "\"a=b\"");
    quoted("=", "\"=\"");
    quoted("line1\nline2", "\"line1\\x0aline2\"");
    quoted("tab\there", "\"tab\\x09here\"");
    quoted("cr\r", "\"cr\\x0d\"");
    quoted("\x01", "\"\\x01\"");
    quoted("\x1f", "\"\\x1f\"");
    quoted("del\x7f", "\"del\\x7f\"");
    quoted("\x1b[31mred", "\"\\x1b[31mred\"");
    quoted("msg=\"a b\\c\"\n", "\"msg=\\\"a b\\\\c\\\"\\x0a\"");
}

/* The inner part of a truncated quote is a whole-escape prefix of the full one. */
static void check_truncations(const char *s)
{
    char full[512], cut[512];
    quote_into(s, 400, full, sizeof full);
    size_t fl = strlen(full);
    for (size_t len = 3; len <= fl + 2; len++) {
        quote_into(s, len, cut, sizeof cut);
        size_t cl = strlen(cut);
        assert_true(cl < len);
        if (full[0] != '"') { /* plain: a plain prefix */
            assert_memory_equal(cut, full, cl);
            continue;
        }
        if (cl < 2 || cut[0] != '"' || cut[cl - 1] != '"')
            fail_msg("len %zu: '%s' is not a quoted string", len, cut);
        /* inner text is a prefix of the full inner text ending on an escape boundary */
        assert_memory_equal(cut + 1, full + 1, cl - 2);
        size_t inner = cl - 2;
        size_t pos = 1; /* walk escapes of the full text up to inner */
        while (pos - 1 < inner) {
            if (full[pos] == '\\')
                pos += full[pos + 1] == 'x' ? 4 : 2;
            else
                pos++;
        }
        if (pos - 1 != inner)
            fail_msg("len %zu: '%s' splits an escape of '%s'", len, cut, full);
    }
}

static void test_truncation(void **state)
{
    (void)state;
    check_truncations("plain_token_that_is_long");
    check_truncations("hello world, this is a message with spaces");
    check_truncations("\"\"\"\\\\\\");
    check_truncations("\n\n\n\t\t\x7f\x01");
    check_truncations("mix \"q\" \\ \n = end");
    check_truncations("");
}

/* Buffers of one and two bytes cannot hold a quoted string; the output is
 * cut, but must still end inside the buffer. */
static void test_tiny_buffers(void **state)
{
    (void)state;
    static const char *const inputs[] = {"a b", "", "\"", "plain"};
    char out[64];
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++)
        for (size_t len = 1; len <= 3; len++)
            quote_into(inputs[i], len, out, sizeof out);
}

static void test_level_parse(void **state)
{
    (void)state;
    assert_int_equal(log_level_parse("debug"), LOG_DEBUG);
    assert_int_equal(log_level_parse("info"), LOG_INFO);
    assert_int_equal(log_level_parse("warn"), LOG_WARN);
    assert_int_equal(log_level_parse("error"), LOG_ERROR);
    assert_int_equal(log_level_parse("warning"), -1);
    assert_int_equal(log_level_parse("Info"), -1);
    assert_int_equal(log_level_parse(""), -1);
    assert_int_equal(log_level_parse("err"), -1);
}

/* ---- log_kv, with stderr sent into a pipe ---------------------------------------- */

struct capture {
    int saved;
    int pipe[2];
};

static void capture_start(struct capture *c)
{
    fflush(stderr);
    assert_int_equal(pipe(c->pipe), 0);
    fcntl(c->pipe[0], F_SETFL, O_NONBLOCK);
    c->saved = dup(STDERR_FILENO);
    assert_true(c->saved >= 0);
    assert_true(dup2(c->pipe[1], STDERR_FILENO) >= 0);
}

/* Restores stderr and returns what was written (malloc'd). */
static char *capture_end(struct capture *c, size_t *len)
{
    dup2(c->saved, STDERR_FILENO);
    close(c->saved);
    close(c->pipe[1]);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    assert_non_null(buf);
    ssize_t r;
    while ((r = read(c->pipe[0], buf + n, cap - n)) > 0)
        n += (size_t)r;
    close(c->pipe[0]);
    buf[n] = '\0';
    *len = n;
    return buf;
}

static void test_log_kv_lines(void **state)
{
    (void)state;
    struct capture c;
    size_t n;
    log_set_level(LOG_INFO);
    capture_start(&c);
    log_kv(LOG_DEBUG, "hidden", "x=%d", 1);
    log_kv(LOG_INFO, "job_started", "job=%d kind=%s", 12, "test");
    log_kv(LOG_ERROR, "bare", NULL);
    log_set_level(LOG_ERROR);
    log_kv(LOG_WARN, "hidden_too", "y=2");
    log_kv(LOG_ERROR, "shown", "z=3");
    log_set_level(LOG_INFO);
    char *out = capture_end(&c, &n);

    char *lines[4] = {0};
    int nl = 0;
    for (char *save = NULL, *l = strtok_r(out, "\n", &save); l && nl < 4;
         l = strtok_r(NULL, "\n", &save))
        lines[nl++] = l;
    assert_int_equal(nl, 3);
    /* ts=YYYY-MM-DDTHH:MM:SS.mmmZ */
    for (int i = 0; i < 3; i++) {
        const char *l = lines[i];
        assert_memory_equal(l, "ts=", 3);
        assert_true(strlen(l) > 27);
        assert_int_equal(l[7], '-');
        assert_int_equal(l[13], 'T');
        assert_int_equal(l[22], '.');
        assert_int_equal(l[26], 'Z');
        assert_int_equal(l[27], ' ');
    }
    assert_string_equal(lines[0] + 28, "level=info msg=job_started job=12 kind=test");
    assert_string_equal(lines[1] + 28, "level=error msg=bare");
    assert_string_equal(lines[2] + 28, "level=error msg=shown z=3");
    free(out);
}

static void test_log_kv_long_line(void **state)
{
    (void)state;
    struct capture c;
    size_t n;
    char *big = malloc(10001);
    assert_non_null(big);
    memset(big, 'v', 10000);
    big[10000] = '\0';
    capture_start(&c);
    log_kv(LOG_ERROR, "long", "k=%s", big);
    char *out = capture_end(&c, &n);
    free(big);
    assert_int_equal(n, 4095);
    assert_int_equal(out[n - 1], '\n');
    assert_null(memchr(out, '\n', n - 1));
    assert_int_equal(out[n - 2], 'v');
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_tokens),
        cmocka_unit_test(test_quoted_and_escaped),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_tiny_buffers),
        cmocka_unit_test(test_level_parse),
        cmocka_unit_test(test_log_kv_lines),
        cmocka_unit_test(test_log_kv_long_line),
    };
    return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
