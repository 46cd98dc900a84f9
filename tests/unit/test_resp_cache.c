/*
 * The response cache serves a body only for the same key at the same store
 * generation, replaces its oldest entry when full, never lets an older answer
 * replace a newer one, and hands out copies the caller owns.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "server/http/resp_cache.h"

static void test_hit_only_at_same_generation(void **state)
{
    (void)state;
    struct resp_cache *c = resp_cache_new(4);
    char *body;
    size_t len;
    assert_int_equal(resp_cache_get(c, "a", 1, &body, &len), 0);
    resp_cache_put(c, "a", 1, "one", 3);
    assert_int_equal(resp_cache_get(c, "a", 1, &body, &len), 1);
    assert_int_equal(len, 3);
    assert_memory_equal(body, "one", 3);
    free(body);
    assert_int_equal(resp_cache_get(c, "a", 2, &body, &len), 0);
    assert_int_equal(resp_cache_get(c, "b", 1, &body, &len), 0);
    resp_cache_free(c);
}

static void test_newer_answer_is_kept(void **state)
{
    (void)state;
    struct resp_cache *c = resp_cache_new(2);
    char *body;
    size_t len;
    resp_cache_put(c, "a", 5, "new", 3);
    resp_cache_put(c, "a", 4, "old", 3);
    assert_int_equal(resp_cache_get(c, "a", 5, &body, &len), 1);
    assert_memory_equal(body, "new", 3);
    free(body);
    resp_cache_put(c, "a", 6, "newer", 5);
    assert_int_equal(resp_cache_get(c, "a", 6, &body, &len), 1);
    assert_memory_equal(body, "newer", 5);
    free(body);
    resp_cache_free(c);
}

static void test_oldest_entry_replaced(void **state)
{
    (void)state;
    struct resp_cache *c = resp_cache_new(2);
    char *body;
    size_t len;
    resp_cache_put(c, "a", 1, "A", 1);
    resp_cache_put(c, "b", 1, "B", 1);
    resp_cache_put(c, "c", 1, "C", 1);
    assert_int_equal(resp_cache_get(c, "a", 1, &body, &len), 0);
    assert_int_equal(resp_cache_get(c, "b", 1, &body, &len), 1);
    free(body);
    assert_int_equal(resp_cache_get(c, "c", 1, &body, &len), 1);
    free(body);
    resp_cache_free(c);
}

static void test_copies_are_independent(void **state)
{
    (void)state;
    struct resp_cache *c = resp_cache_new(1);
    char src[] = "abc", *body;
    size_t len;
    resp_cache_put(c, "k", 1, src, 3);
    src[0] = 'X';
    assert_int_equal(resp_cache_get(c, "k", 1, &body, &len), 1);
    assert_memory_equal(body, "abc", 3);
    body[1] = 'Y';
    free(body);
    assert_int_equal(resp_cache_get(c, "k", 1, &body, &len), 1);
    assert_memory_equal(body, "abc", 3);
    free(body);
    resp_cache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hit_only_at_same_generation),
        cmocka_unit_test(test_newer_answer_is_kept),
        cmocka_unit_test(test_oldest_entry_replaced),
        cmocka_unit_test(test_copies_are_independent),
    };
    return cmocka_run_group_tests_name("resp_cache", tests, NULL, NULL);
}
