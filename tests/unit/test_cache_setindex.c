/*
 * Unit tests of the set-index functions as text and the masks function
 * (cache/setindex.c, cache_set_of's masks branch in cache/geometry.h):
 * parsing and its refusals; masks over address bits 7..8 are modulo 4 and
 * masks over 7,9,11 / 8,10,12 are the model's own xor with 4 sets, line
 * for line; applying masks fixes the sets and derives the ways; the text
 * written back reads again the same.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "cache/setindex.h"

static struct cache_geom geom(const char *text)
{
    struct cache_geom g = {0};
    char msg[256];
    if (cache_geom_parse(text, &g, msg, sizeof msg) != 0)
        fail_msg("%s: %s", text, msg);
    return g;
}

static struct cache_set_spec spec(const char *text)
{
    struct cache_set_spec s;
    char msg[256];
    if (cache_set_spec_parse(text, &s, msg, sizeof msg) != 0)
        fail_msg("%s: %s", text, msg);
    return s;
}

static void apply(struct cache_geom *g, const char *text)
{
    struct cache_set_spec s = spec(text);
    char msg[256];
    if (cache_geom_set_index(g, &s, msg, sizeof msg) != 0)
        fail_msg("%s: %s", text, msg);
}

static void test_parse(void **state)
{
    (void)state;
    struct cache_set_spec s = spec("mask:0x80,0x100");
    assert_int_equal(s.index, CACHE_SET_MASKS);
    assert_int_equal(s.nmasks, 2);
    assert_int_equal(s.masks[0], 0x80);
    assert_int_equal(s.masks[1], 0x100);
    s = spec("mask:2688,0X1500");
    assert_int_equal(s.masks[0], 0xa80);
    assert_int_equal(s.masks[1], 0x1500);
    s = spec("mask:none");
    assert_int_equal(s.index, CACHE_SET_MASKS);
    assert_int_equal(s.nmasks, 0);
    assert_int_equal(spec("xor").index, CACHE_SET_XOR);
    assert_int_equal(spec("modulo").index, CACHE_SET_MODULO);
}

static void test_parse_refusals(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "hash", "mask:", "mask:0", "mask:0x80,", "mask:,0x80", "mask:0x80,0x80", "mask:-128",
        "mask: 0x80", "mask:0x80;0x100", "mask:0xzz", "masks:0x80",
        "mask:1,2,4,8,16,32,64,128,256,512,1024,2048,4096,8192,16384,32768,65536",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct cache_set_spec s;
        char msg[256] = "";
        if (cache_set_spec_parse(bad[i], &s, msg, sizeof msg) != -1 || !msg[0])
            fail_msg("'%s' was not refused (message '%s')", bad[i], msg);
    }
    /* a mask that is the XOR of earlier ones: fewer sets than it claims */
    static const char *const dependent[] = {"mask:0x80,0x100,0x180", "mask:0x180,0x80,0x100",
                                            "mask:0x80,0x300,0x100,0x280"};
    for (size_t i = 0; i < sizeof dependent / sizeof dependent[0]; i++) {
        struct cache_set_spec s;
        char msg[256] = "";
        if (cache_set_spec_parse(dependent[i], &s, msg, sizeof msg) != -1 || !strstr(msg, "XOR"))
            fail_msg("'%s' was not refused as dependent (message '%s')", dependent[i], msg);
    }
    struct cache_set_spec s;
    char msg[256];
    assert_int_equal(cache_set_spec_parse("mask:0x80,0x180,0x300", &s, msg, sizeof msg), 0);
    assert_int_equal(s.nmasks, 3);
}

static void test_masks_are_modulo(void **state)
{
    (void)state;
    struct cache_geom g = geom("224K,448,128,32"), m = g;
    apply(&m, "mask:0x80,0x100");
    assert_int_equal(m.sets, 4);
    assert_int_equal(m.assoc, 448);
    for (uint64_t line = 0; line < 100000; line += 7)
        assert_int_equal(cache_set_of(&m, line), cache_set_of(&g, line));
}

static void test_masks_are_the_models_xor(void **state)
{
    (void)state;
    struct cache_geom x = geom("64K,128,128,32"), m = x;
    x.index = CACHE_SET_XOR;     /* 4 sets, b = 2: line ^ line >> 2 ^ line >> 4 */
    apply(&m, "mask:0xa80,0x1500");
    for (uint64_t line = 0; line < (1u << 12); line++)
        assert_int_equal(cache_set_of(&m, line), cache_set_of(&x, line));
    /* and they differ from modulo somewhere */
    m.index = CACHE_SET_MODULO;
    assert_int_not_equal(cache_set_of(&m, 4), cache_set_of(&x, 4));
}

static void test_masks_set_the_sets(void **state)
{
    (void)state;
    struct cache_geom g = geom("64K,4,128,32");   /* 128 sets */
    apply(&g, "mask:0x80,0x100,0x200");
    assert_int_equal(g.sets, 8);
    assert_int_equal(g.assoc, 64);
    assert_int_equal(g.size, 64 * 1024);
    for (uint64_t line = 0; line < 5000; line++)
        assert_true(cache_set_of(&g, line) < 8);
    apply(&g, "mask:none");
    assert_int_equal(g.sets, 1);
    assert_int_equal(g.assoc, 512);
    apply(&g, "modulo");             /* back: the ways as they were left */
    assert_int_equal(g.index, CACHE_SET_MODULO);
    assert_int_equal(g.sets, 1);
}

static void test_apply_refusals(void **state)
{
    (void)state;
    char msg[256];
    struct cache_geom g = geom("1536,4,128,32");  /* 12 lines */
    struct cache_set_spec s = spec("mask:0x80,0x100,0x200");
    assert_int_equal(cache_geom_set_index(&g, &s, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "whole ways"));
    assert_int_equal(g.index, CACHE_SET_MODULO);  /* unchanged */
    assert_int_equal(g.sets, 3);
    struct cache_geom h = geom("16K,4,128,32");
    s = spec("mask:0x40");
    assert_int_equal(cache_geom_set_index(&h, &s, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "inside the 128-byte line"));
    /* a geometry whose sets are not 2^masks is refused by the check */
    h.index = CACHE_SET_MASKS;
    h.nmasks = 1;
    h.masks[0] = 1;
    assert_int_equal(cache_geom_check(&h, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "set-index masks"));
}

static void test_text_round_trip(void **state)
{
    (void)state;
    char buf[256];
    struct cache_geom g = geom("32K,64,128,32");
    assert_string_equal(cache_set_index_text(&g, buf, sizeof buf), "modulo");
    apply(&g, "mask:0xa80,0x1500");
    assert_string_equal(cache_set_index_text(&g, buf, sizeof buf), "mask:0xa80,0x1500");
    struct cache_geom h = geom("32K,64,128,32");
    apply(&h, buf);
    assert_memory_equal(h.masks, g.masks, sizeof g.masks);
    apply(&g, "mask:none");
    assert_string_equal(cache_set_index_text(&g, buf, sizeof buf), "mask:none");
    apply(&g, "xor");
    assert_string_equal(cache_set_index_text(&g, buf, sizeof buf), "xor");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_parse_refusals),
        cmocka_unit_test(test_masks_are_modulo),
        cmocka_unit_test(test_masks_are_the_models_xor),
        cmocka_unit_test(test_masks_set_the_sets),
        cmocka_unit_test(test_apply_refusals),
        cmocka_unit_test(test_text_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
