/*
 * Unit tests of the cache geometry (cache/geometry.c): parsing
 * "SIZE,ASSOC,LINE,SECTOR" with its suffixes and "full", the derived counts,
 * the refusals; the set-index functions worked by hand (modulo, xor over a
 * power-of-two and another set count, xor spreading a stride that modulo
 * piles into one set); the sectors a request touches; the presets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "cache/geometry.h"

static struct cache_geom parse_ok(const char *text)
{
    struct cache_geom g = {0};
    char msg[256];
    assert_int_equal(cache_geom_parse(text, &g, msg, sizeof msg), 0);
    return g;
}

static void test_parse(void **state)
{
    (void)state;
    struct cache_geom g = parse_ok("224K,448,128,32");
    assert_int_equal(g.size, 224 * 1024);
    assert_int_equal(g.lines, 1792);
    assert_int_equal(g.sets, 4);
    assert_int_equal(g.sectors_per_line, 4);
    g = parse_ok("16KiB,full,128,128");
    assert_int_equal(g.assoc, 128);
    assert_int_equal(g.sets, 1);
    g = parse_ok("1M,16,64,32");
    assert_int_equal(g.lines, 16384);
    assert_int_equal(g.sets, 1024);
    g = parse_ok("512,0,128,32");
    assert_int_equal(g.sets, 1);
}

static void test_refusals(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "1000,4,128,32",  /* not a whole number of lines */
        "16K,3,128,32",   /* 3 ways do not divide 128 lines */
        "16K,4,100,32",   /* line not a power of two */
        "16K,4,128,256",  /* sector above line */
        "16K,4,4096,4",   /* 1024 sectors a line */
        "16K,4,128",      /* three fields */
        "16K,4,128,32,1", /* five */
        "16Q,4,128,32",   /* suffix */
        "-16K,4,128,32",
        "0,4,128,32",
        "16K,256,128,32", /* more ways than lines */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct cache_geom g = {0};
        char msg[256] = "";
        assert_int_equal(cache_geom_parse(bad[i], &g, msg, sizeof msg), -1);
        assert_true(strlen(msg) > 0);
    }
}

static void test_set_index(void **state)
{
    (void)state;
    struct cache_geom g = parse_ok("2K,4,128,32"); /* 16 lines, 4 sets */
    assert_int_equal(cache_set_of(&g, 5), 1);
    assert_int_equal(cache_set_of(&g, 12), 0);
    g.index = CACHE_SET_XOR; /* b = 2: 5 ^ 1 ^ 0 = 4 -> set 0 */
    assert_int_equal(cache_set_of(&g, 5), 0);
    /* a stride of 4 lines: modulo piles them into set 0, xor spreads them */
    uint32_t seen = 0;
    for (uint64_t k = 0; k < 4; k++)
        seen |= 1u << cache_set_of(&g, 4 * k);
    assert_int_equal(seen, 0xf);
    g.index = CACHE_SET_MODULO;
    for (uint64_t k = 0; k < 4; k++)
        assert_int_equal(cache_set_of(&g, 4 * k), 0);

    struct cache_geom h = parse_ok("1536,4,128,32"); /* 12 lines, 3 sets */
    assert_int_equal(cache_set_of(&h, 7), 1);
    h.index = CACHE_SET_XOR; /* b = 2: 7 ^ 1 ^ 0 = 6 -> 6 % 3 = 0 */
    assert_int_equal(cache_set_of(&h, 7), 0);
    for (uint64_t l = 0; l < 1000; l++)
        assert_true(cache_set_of(&h, l) < 3);

    assert_int_equal(cache_set_index_parse("xor"), CACHE_SET_XOR);
    assert_int_equal(cache_set_index_parse("modulo"), CACHE_SET_MODULO);
    assert_int_equal(cache_set_index_parse("hash"), -1);
    assert_string_equal(cache_set_index_name(CACHE_SET_XOR), "xor");
}

static void test_sectors(void **state)
{
    (void)state;
    struct cache_geom g = parse_ok("16K,4,128,32");
    assert_int_equal(cache_sectors_of(&g, 0x1040, 4), 0x4);   /* byte 64: sector 2 */
    assert_int_equal(cache_sectors_of(&g, 0x1030, 32), 0x2);  /* aligned 0x20-0x3f */
    assert_int_equal(cache_sectors_of(&g, 0x1000, 256), 0xf); /* clipped to the line */
    assert_int_equal(cache_sectors_of(&g, 0x107c, 8), 0x8);
    assert_int_equal(cache_sectors_of(&g, 0x1010, 64), 0x3);
    struct cache_geom f = parse_ok("16K,4,128,128");
    assert_int_equal(cache_sectors_of(&f, 0x1044, 4), 0x1);
}

static void test_presets(void **state)
{
    (void)state;
    struct cache_geom l1, l2;
    char msg[256];
    assert_int_equal(cache_arch_geometry("hopper", &l1, &l2, msg, sizeof msg), 0);
    assert_int_equal(l1.size, 224 * 1024);
    assert_int_equal(l1.sets, 4);
    assert_int_equal(l2.size, 50u << 20);
    assert_int_equal(l2.line, l1.line);
    assert_int_equal(cache_arch_geometry("fermi", &l1, &l2, msg, sizeof msg), 0);
    assert_int_equal(l1.sets, 32);
    assert_int_equal(cache_arch_geometry("pascal", &l1, &l2, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "hopper"));
}

/* A sort's parameters against a geometry: trace sort's default (the fermi
 * preset: 15 SMs) is not an order for Hopper's 132; the hopper preset's is;
 * a line the L1 does not have is not either. The preset a sort used is
 * named when all its numbers are one's. */
static void test_fits_sort(void **state)
{
    (void)state;
    struct cache_geom l1, l2;
    struct trace_params p;
    char msg[256], as[16];
    assert_int_equal(cache_arch_geometry("hopper", &l1, &l2, msg, sizeof msg), 0);
    trace_params_default(&p); /* what trace sort sorts for unless told */
    assert_int_equal(cache_arch_fits_sort("hopper", &l1, &p, as, sizeof as, msg, sizeof msg), -1);
    assert_string_equal(as, "fermi");
    assert_string_equal(msg, "sorted for 15 SMs, 128-byte lines (trace sort's fermi preset); the "
                             "hopper geometry is for 132 SMs, 128-byte lines");
    assert_int_equal(trace_params_preset(&p, "hopper", msg, sizeof msg), 0);
    assert_int_equal(cache_arch_fits_sort("hopper", &l1, &p, as, sizeof as, msg, sizeof msg), 0);
    assert_string_equal(as, "hopper");
    /* a Hopper part of another SM count: its own preset no more */
    p.sms = 114;
    assert_int_equal(cache_arch_fits_sort("hopper", &l1, &p, as, sizeof as, msg, sizeof msg), -1);
    assert_string_equal(as, "");
    assert_non_null(strstr(msg, "sorted for 114 SMs, 128-byte lines; the hopper geometry"));
    /* the line the sorter coalesced by must be the L1's */
    p.sms = 132;
    p.line_bytes = 64;
    assert_int_equal(cache_arch_fits_sort("hopper", &l1, &p, as, sizeof as, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "64-byte lines"));
    /* fermi's geometry fits fermi's sort */
    assert_int_equal(cache_arch_geometry("fermi", &l1, &l2, msg, sizeof msg), 0);
    trace_params_default(&p);
    assert_int_equal(cache_arch_fits_sort("fermi", &l1, &p, as, sizeof as, msg, sizeof msg), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),   cmocka_unit_test(test_refusals), cmocka_unit_test(test_set_index),
        cmocka_unit_test(test_sectors), cmocka_unit_test(test_presets),
        cmocka_unit_test(test_fits_sort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
