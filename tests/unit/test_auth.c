/*
 * Unit tests of write authorization (server/http/auth.c): auth_token_equal is
 * true exactly for equal byte strings (not for a prefix, a longer string,
 * one differing only in its last byte, or anything over AUTH_TOKEN_MAX);
 * auth_load reads every token of a file around comments, blank lines and
 * CRLF endings, and refuses a missing file, a file with no token, a token
 * with white space and an over-long token with a reason naming the file (and
 * line); auth_check answers MISSING, WRONG or OK for each kind of
 * Authorization header against every configured token, case-insensitively
 * in the scheme; and an auth loaded without a file answers DISABLED to every
 * header, including one carrying a valid-looking token; auth_first_token
 * reads a node's upstream token as auth_load reads tokens. Token files live in
 * a fresh mkdtemp directory removed by the teardown.
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

#include "tests/unit/support/tmpfile.h"
#include "server/http/auth.h"

static int setup_tmp(void **state) { return tmp_setup(state, "auth", "tokens"); }
static int teardown_tmp(void **state) { return tmp_teardown(state); }

/* Loads path, failing the test with the reason if it is refused. */
static struct auth *load_ok(const char *path)
{
    struct auth *a = NULL;
    char err[512] = "";
    if (auth_load(&a, path, err, sizeof err) != 0)
        fail_msg("auth_load(%s) refused: %s", path ? path : "NULL", err);
    assert_non_null(a);
    return a;
}

/* Loads path expecting a refusal; returns the reason in err. */
static void load_refused(const char *path, char *err, size_t errlen)
{
    struct auth *a = (struct auth *)(uintptr_t)1;
    err[0] = '\0';
    assert_int_equal(auth_load(&a, path, err, errlen), -1);
    assert_null(a);
}

/* ---- auth_token_equal ----------------------------------------------------- */

static void test_token_equal(void **state)
{
    (void)state;
    assert_int_equal(auth_token_equal("abc", 3, "abc", 3), 1);
    assert_int_equal(auth_token_equal("abc", 3, "abcd", 4), 0);  /* prefix of the other */
    assert_int_equal(auth_token_equal("abcd", 4, "abc", 3), 0);
    assert_int_equal(auth_token_equal("abc", 3, "abd", 3), 0);   /* last byte differs */
    assert_int_equal(auth_token_equal("xbc", 3, "abc", 3), 0);   /* first byte differs */
    assert_int_equal(auth_token_equal("", 0, "", 0), 1);
    assert_int_equal(auth_token_equal("", 0, "a", 1), 0);
    assert_int_equal(auth_token_equal("a", 1, "", 0), 0);
    /* only the given lengths count */
    assert_int_equal(auth_token_equal("abcX", 3, "abcY", 3), 1);
    /* a NUL inside the compared bytes is compared like any byte */
    assert_int_equal(auth_token_equal("ab\0c", 4, "ab\0d", 4), 0);
    assert_int_equal(auth_token_equal("ab\0c", 4, "ab", 2), 0);
}

static void test_token_equal_long(void **state)
{
    (void)state;
    char a[AUTH_TOKEN_MAX + 8], b[AUTH_TOKEN_MAX + 8];
    memset(a, 'k', sizeof a);
    memset(b, 'k', sizeof b);
    assert_int_equal(auth_token_equal(a, AUTH_TOKEN_MAX - 1, b, AUTH_TOKEN_MAX - 1), 1);
    assert_int_equal(auth_token_equal(a, AUTH_TOKEN_MAX, b, AUTH_TOKEN_MAX), 1);
    b[AUTH_TOKEN_MAX - 1] = 'q'; /* differs at the very last byte */
    assert_int_equal(auth_token_equal(a, AUTH_TOKEN_MAX, b, AUTH_TOKEN_MAX), 0);
    /* over the maximum nothing is equal, even identical bytes */
    assert_int_equal(auth_token_equal(a, AUTH_TOKEN_MAX + 1, a, AUTH_TOKEN_MAX + 1), 0);
    assert_int_equal(auth_token_equal(a, AUTH_TOKEN_MAX + 1, a, AUTH_TOKEN_MAX), 0);
}

/* ---- auth_load + auth_check ------------------------------------------------ */

static void test_load_and_check(void **state)
{
    struct tmp *t = *state;
    write_file(t->path, "# write tokens for gpuprobe\n"
                        "\n"
                        "alpha-123\n"
                        "#not-a-token\n"
                        "beta-456\r\n"
                        "   \n"
                        "gamma-789   \n"
                        "\r\n"
                        "delta-0"); /* no final newline */
    struct auth *a = load_ok(t->path);

    assert_int_equal(auth_check(a, "Bearer alpha-123"), AUTH_OK);
    assert_int_equal(auth_check(a, "Bearer beta-456"), AUTH_OK);
    assert_int_equal(auth_check(a, "Bearer gamma-789"), AUTH_OK);
    assert_int_equal(auth_check(a, "Bearer delta-0"), AUTH_OK);
    assert_int_equal(auth_check(a, "bearer alpha-123"), AUTH_OK);
    assert_int_equal(auth_check(a, "BEARER beta-456"), AUTH_OK);
    assert_int_equal(auth_check(a, "BeArEr gamma-789"), AUTH_OK);
    assert_int_equal(auth_check(a, "Bearer   alpha-123"), AUTH_OK); /* extra spaces */

    assert_int_equal(auth_check(a, NULL), AUTH_MISSING);
    assert_int_equal(auth_check(a, "Bearer "), AUTH_MISSING);
    assert_int_equal(auth_check(a, "Bearer    "), AUTH_MISSING);

    assert_int_equal(auth_check(a, "Basic x"), AUTH_WRONG);
    assert_int_equal(auth_check(a, "Basic YWxwaGEtMTIzOg=="), AUTH_WRONG);
    assert_int_equal(auth_check(a, "alpha-123"), AUTH_WRONG);
    assert_int_equal(auth_check(a, "Bearer wrong"), AUTH_WRONG);
    assert_int_equal(auth_check(a, "Bearer alpha-12"), AUTH_WRONG);   /* prefix */
    assert_int_equal(auth_check(a, "Bearer alpha-1234"), AUTH_WRONG); /* longer */
    assert_int_equal(auth_check(a, "Bearer alpha-124"), AUTH_WRONG);  /* last byte */
    assert_int_equal(auth_check(a, "Bearer ALPHA-123"), AUTH_WRONG);  /* tokens are exact */
    assert_int_equal(auth_check(a, "Bearer #not-a-token"), AUTH_WRONG);
    assert_int_equal(auth_check(a, "Bearer not-a-token"), AUTH_WRONG);
    assert_int_equal(auth_check(a, "Bearer beta-456\r"), AUTH_WRONG);
    assert_int_equal(auth_check(a, "Bearer alpha-123beta-456"), AUTH_WRONG);
    auth_free(a);
}

static void test_longest_token(void **state)
{
    struct tmp *t = *state;
    char tok[AUTH_TOKEN_MAX + 8], hdr[AUTH_TOKEN_MAX + 32];
    memset(tok, 'L', AUTH_TOKEN_MAX - 1);
    tok[AUTH_TOKEN_MAX - 1] = '\0';
    snprintf(hdr, sizeof hdr, "%s\n", tok);
    write_file(t->path, hdr);
    struct auth *a = load_ok(t->path);
    snprintf(hdr, sizeof hdr, "Bearer %s", tok);
    assert_int_equal(auth_check(a, hdr), AUTH_OK);
    snprintf(hdr, sizeof hdr, "Bearer %sL", tok); /* one byte more */
    assert_int_equal(auth_check(a, hdr), AUTH_WRONG);
    hdr[strlen(hdr) - 2] = '\0'; /* one byte less */
    assert_int_equal(auth_check(a, hdr), AUTH_WRONG);
    auth_free(a);
}

/* A header far longer than any token is refused, not truncated to a match. */
static void test_overlong_header(void **state)
{
    struct tmp *t = *state;
    char tok[AUTH_TOKEN_MAX], hdr[4 * AUTH_TOKEN_MAX];
    memset(tok, 'T', AUTH_TOKEN_MAX - 1);
    tok[AUTH_TOKEN_MAX - 1] = '\0';
    char line[AUTH_TOKEN_MAX + 2];
    snprintf(line, sizeof line, "%s\n", tok);
    write_file(t->path, line);
    struct auth *a = load_ok(t->path);
    memset(hdr, 'T', sizeof hdr - 1);
    memcpy(hdr, "Bearer ", 7);
    hdr[sizeof hdr - 1] = '\0';
    assert_int_equal(auth_check(a, hdr), AUTH_WRONG);
    auth_free(a);
}

static void test_refuse_missing_file(void **state)
{
    struct tmp *t = *state;
    char path[192], err[512], want[512];
    snprintf(path, sizeof path, "%s/absent", t->dir);
    load_refused(path, err, sizeof err);
    snprintf(want, sizeof want, "%s: No such file or directory", path);
    assert_string_equal(err, want);
}

static void test_refuse_empty_file(void **state)
{
    struct tmp *t = *state;
    char err[512], want[512];
    snprintf(want, sizeof want, "%s: holds no token", t->path);

    write_file(t->path, "");
    load_refused(t->path, err, sizeof err);
    assert_string_equal(err, want);

    write_file(t->path, "# only a comment\n\n\r\n   \n");
    load_refused(t->path, err, sizeof err);
    assert_string_equal(err, want);
}

static void test_refuse_white_space(void **state)
{
    struct tmp *t = *state;
    char err[512], want[512];

    write_file(t->path, "good-token\n# fine\nbad token\n");
    load_refused(t->path, err, sizeof err);
    snprintf(want, sizeof want, "%s:3: token contains white space", t->path);
    assert_string_equal(err, want);

    write_file(t->path, "tab\there\n");
    load_refused(t->path, err, sizeof err);
    snprintf(want, sizeof want, "%s:1: token contains white space", t->path);
    assert_string_equal(err, want);

    write_file(t->path, "\n  leading\n");
    load_refused(t->path, err, sizeof err);
    snprintf(want, sizeof want, "%s:2: token contains white space", t->path);
    assert_string_equal(err, want);
}

static void test_refuse_long_token(void **state)
{
    struct tmp *t = *state;
    char err[512], want[512], text[AUTH_TOKEN_MAX + 32];
    /* AUTH_TOKEN_MAX bytes: one over the longest allowed, on line 2 */
    text[0] = 'a';
    text[1] = '\n';
    memset(text + 2, 'x', AUTH_TOKEN_MAX);
    snprintf(text + 2 + AUTH_TOKEN_MAX, 4, "\n");
    write_file(t->path, text);
    load_refused(t->path, err, sizeof err);
    snprintf(want, sizeof want, "%s:2: token longer than %d bytes", t->path, AUTH_TOKEN_MAX - 1);
    assert_string_equal(err, want);
}

/* ---- disabled ------------------------------------------------------------------ */

/* A node presents the first token of its upstream token file, read as
 * the upstream reads its own: a comment above it or spaces after it are not
 * part of it (they were, and the upstream answered 403 for ever). */
static void test_first_token(void **state)
{
    struct tmp *t = *state;
    char tok[AUTH_TOKEN_MAX], err[512];
    write_file(t->path, "# the central's write token\n\n   \ncentral-token   \r\nsecond\n");
    assert_int_equal(auth_first_token(t->path, tok, sizeof tok, err, sizeof err), 0);
    assert_string_equal(tok, "central-token");
    struct auth *a = load_ok(t->path);
    char header[300];
    snprintf(header, sizeof header, "Bearer %s", tok);
    assert_int_equal(auth_check(a, header), AUTH_OK);
    auth_free(a);
    write_file(t->path, "# nothing but a comment\n\n");
    assert_int_equal(auth_first_token(t->path, tok, sizeof tok, err, sizeof err), -1);
    assert_non_null(strstr(err, "holds no token"));
    write_file(t->path, "abcdefgh\n");
    assert_int_equal(auth_first_token(t->path, tok, 8, err, sizeof err), -1);
    assert_non_null(strstr(err, "too long"));
    assert_int_equal(auth_first_token("/nonexistent/tokens", tok, sizeof tok, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/tokens: "));
}

static void test_disabled(void **state)
{
    (void)state;
    static const char *const headers[] = {
        NULL, "", "Bearer ", "Bearer x", "bearer alpha-123", "Basic x", "garbage",
    };
    const char *paths[] = {NULL, ""};
    for (size_t p = 0; p < 2; p++) {
        struct auth *a = load_ok(paths[p]);
        for (size_t i = 0; i < sizeof headers / sizeof headers[0]; i++)
            assert_int_equal(auth_check(a, headers[i]), AUTH_DISABLED);
        auth_free(a);
    }
    auth_free(NULL); /* allowed */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_token_equal),
        cmocka_unit_test(test_token_equal_long),
        cmocka_unit_test_setup_teardown(test_load_and_check, setup_tmp, teardown_tmp),
        cmocka_unit_test_setup_teardown(test_longest_token, setup_tmp, teardown_tmp),
        cmocka_unit_test_setup_teardown(test_overlong_header, setup_tmp, teardown_tmp),
        cmocka_unit_test_setup_teardown(test_refuse_missing_file, setup_tmp, teardown_tmp),
        cmocka_unit_test_setup_teardown(test_refuse_empty_file, setup_tmp, teardown_tmp),
        cmocka_unit_test_setup_teardown(test_refuse_white_space, setup_tmp, teardown_tmp),
        cmocka_unit_test_setup_teardown(test_refuse_long_token, setup_tmp, teardown_tmp),
        cmocka_unit_test_setup_teardown(test_first_token, setup_tmp, teardown_tmp),
        cmocka_unit_test(test_disabled),
    };
    return cmocka_run_group_tests_name("auth", tests, NULL, NULL);
}
