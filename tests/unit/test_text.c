/*
 * Unit tests of util/text.c's parsers: a number is written one way, plain
 * decimal, in its range (query arguments, settings and options take their
 * numbers through them: "+5", " 5", "0x10" and "inf" were taken by some).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>

#include "util/text.h"

static void test_parse_ll(void **state)
{
    (void)state;
    long long v = 0;
    assert_int_equal(parse_ll("5", 1, 10, &v), 0);
    assert_int_equal(v, 5);
    assert_int_equal(parse_ll("-3", -5, 5, &v), 0);
    assert_int_equal(v, -3);
    const char *bad[] = {"", " 5", "+5", "5 ", "0x5", "5x", "-", "11", "1e1", "- 3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = 42;
        if (parse_ll(bad[i], -5, 10, &v) != -1 || v != 42)
            fail_msg("parse_ll took '%s'", bad[i]);
    }
}

static void test_parse_real(void **state)
{
    (void)state;
    double v = 0;
    assert_int_equal(parse_real("0.02", 0, 10, &v), 0);
    assert_true(v == 0.02);
    assert_int_equal(parse_real("6", 0.5, 100, &v), 0);
    assert_true(v == 6);
    assert_int_equal(parse_real("1e1", 0, 100, &v), 0);
    assert_true(v == 10);
    assert_int_equal(parse_real("-0", -1, 1, &v), 0);
    assert_false(signbit(v)); /* answered as 0, not -0 */
    const char *bad[] = {"", " 5", "+5", "5 ", "0x10", "0x1p3", "inf", "nan", "-inf", ".5", "5%", "1e400", "101"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = 42;
        if (parse_real(bad[i], -100, 100, &v) != -1 || v != 42)
            fail_msg("parse_real took '%s'", bad[i]);
    }
}

/* The folder a file is made in, as probe --db and trace synth's space check
 * ask for it. */
static void test_path_folder(void **state)
{
    (void)state;
    char dir[64];
    path_folder("a/b/c.db", dir, sizeof dir);
    assert_string_equal(dir, "a/b");
    path_folder("c.db", dir, sizeof dir);
    assert_string_equal(dir, ".");
    path_folder("/c.db", dir, sizeof dir);
    assert_string_equal(dir, "/");
    path_folder("/x/c.db", dir, sizeof dir);
    assert_string_equal(dir, "/x");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_ll),
        cmocka_unit_test(test_parse_real),
        cmocka_unit_test(test_path_folder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
