/*
 * Unit tests of the PTX text builder (probes/gpu/ptx.c): template
 * expansion, the module header, a builder's reuse after take and free,
 * and the builder's contracts.
 *
 * DESIGN
 * Expansion is checked on small templates whose expected text is written
 * out by hand: known keys, an unknown key and a key with a NULL value
 * (both copied as they are), a brace that never closes. Every generator
 * in probes/ builds on this, and their golden files (tests/fixtures/ptx/)
 * check the generators' own text; these check the rules they rely on.
 * Contracts are proven as in test_protocol.c: the call that breaks one
 * runs in a child, which must die of the assert (support/death.h), and
 * the same call within the contract must return.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "probes/gpu/ptx.h"
#include "tests/unit/support/death.h"

/* Expands tmpl alone and returns the text (caller frees). */
static char *expand(const char *tmpl, const char *const *keys, const char *const *vals, size_t n)
{
    struct ptx p;
    ptx_init(&p);
    ptx_expand(&p, tmpl, keys, vals, n);
    char *text = ptx_take(&p);
    assert_non_null(text);
    return text;
}

static void test_expand(void **state)
{
    static const char *const keys[] = {"x", "ty", "z"};
    static const char *const vals[] = {"%r1", ".f32", NULL};
    struct {
        const char *tmpl, *want;
    } cases[] = {
        {"add{ty} {x}, {x}, 1;", "add.f32 %r1, %r1, 1;"},
        {"{x}{x}", "%r1%r1"},
        {"mov {w}, {x};", "mov {w}, %r1;"},          /* unknown key: as it is */
        {"mov {z}, {x};", "mov {z}, %r1;"},          /* NULL value: as it is */
        {"no keys at all", "no keys at all"},
        {"open {x and never closed", "open {x and never closed"},
        {"{}", "{}"},
        {"", ""},
    };
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = expand(cases[i].tmpl, keys, vals, 3);
        if (strcmp(got, cases[i].want) != 0)
            fail_msg("\"%s\" expanded to \"%s\", not \"%s\"", cases[i].tmpl, got, cases[i].want);
        free(got);
    }
    char *plain = expand("{x}", NULL, NULL, 0);        /* no keys: nothing replaced */
    assert_string_equal(plain, "{x}");
    free(plain);
}

static void test_header_and_reuse(void **state)
{
    struct ptx p;
    (void)state;
    ptx_init(&p);
    ptx_header(&p, 9, 0);
    ptx_add(&p, "// %d%s\n", 42, "!");
    char *text = ptx_take(&p);
    assert_string_equal(text, ".version 8.0\n.target sm_90\n.address_size 64\n\n// 42!\n");
    free(text);
    /* take left an empty builder: it builds again from nothing */
    ptx_add(&p, "again");
    text = ptx_take(&p);
    assert_string_equal(text, "again");
    free(text);
    /* so does free, and nothing of the dropped text survives */
    ptx_add(&p, "dropped");
    ptx_free(&p);
    ptx_header(&p, 7, 5);
    text = ptx_take(&p);
    assert_string_equal(text, ".version 8.0\n.target sm_75\n.address_size 64\n\n");
    free(text);
}

/* Long text crosses the buffer's first size (4096) and keeps every byte. */
static void test_growth(void **state)
{
    struct ptx p;
    (void)state;
    ptx_init(&p);
    for (int i = 0; i < 1000; i++)
        ptx_add(&p, "%04d\n", i);
    char *text = ptx_take(&p);
    assert_int_equal(strlen(text), 5000);
    assert_memory_equal(text + 4995, "0999\n", 5);
    assert_memory_equal(text + 2000, "0400\n", 5);
    free(text);
}

/* ---- contracts ------------------------------------------------------------ */

static void add_to_uninitialised(void *arg)
{
    struct ptx p;
    (void)arg;
    memset(&p, 0xa5, sizeof p);      /* what a builder never given to ptx_init may hold */
    ptx_add(&p, "x");
}

static void expand_count_without_keys(void *arg)
{
    struct ptx p;
    (void)arg;
    ptx_init(&p);
    ptx_expand(&p, "{x}", NULL, NULL, 1);
}

static void expand_with_a_null_key(void *arg)
{
    static const char *const keys[] = {"x", NULL};
    static const char *const vals[] = {"1", "2"};
    struct ptx p;
    (void)arg;
    ptx_init(&p);
    ptx_expand(&p, "{y}", keys, vals, 2);
}

static void expand_no_template(void *arg)
{
    struct ptx p;
    (void)arg;
    ptx_init(&p);
    ptx_expand(&p, NULL, NULL, NULL, 0);
}

static void take_from_nothing(void *arg)
{
    (void)arg;
    free(ptx_take(NULL));
}

static void test_contracts(void **state)
{
    (void)state;
    assert_true(dies_by_assert(add_to_uninitialised, NULL));
    assert_true(dies_by_assert(expand_count_without_keys, NULL));
    assert_true(dies_by_assert(expand_with_a_null_key, NULL));
    assert_true(dies_by_assert(expand_no_template, NULL));
    assert_true(dies_by_assert(take_from_nothing, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expand),
        cmocka_unit_test(test_header_and_reuse),
        cmocka_unit_test(test_growth),
        cmocka_unit_test(test_contracts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
