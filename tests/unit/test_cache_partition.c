/*
 * Unit tests of the L2 in two partitions (cache/partition.h, cache/model.c):
 * the home of a line and the partition of an SM, and a two-SM stream
 * worked by hand through both engines — a miss in the requesting SM's
 * partition for a line homed in the other is looked up there too, both
 * lookups fill, and the level's figures count every lookup while each SM's
 * count only its own partition's — beside the same stream on one L2.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>
#include <unistd.h>

#include "cache/model.h"
#include "cache/partition.h"
#include "tests/unit/support/tmpfile.h"

static int setup(void **state)
{
    return tmp_setup(state, "cachepart", "t.csv");
}

static int teardown(void **state)
{
    return tmp_teardown(state);
}

static void test_home_and_sm(void **state)
{
    (void)state;
    struct cache_parts p = {.count = 2, .sms = 3, .sm_part = {1, 0, -1}, .home_mask = 1u << 12};
    assert_int_equal(cache_part_home(&p, 0x0), 0);
    assert_int_equal(cache_part_home(&p, 0x1000), 1);
    assert_int_equal(cache_part_home(&p, 0x1fff), 1);
    assert_int_equal(cache_part_home(&p, 0x2000), 0);
    /* above the page, the virtual address's bits stand in for the frame's */
    assert_int_equal(cache_part_home(&p, 0x200000), 1);
    assert_int_equal(cache_part_home(&p, 0x201000), 0);
    assert_int_equal(cache_part_home(&p, 0x600000), 0);
    assert_int_equal(cache_part_of_sm(&p, 0), 1);
    assert_int_equal(cache_part_of_sm(&p, 1), 0);
    assert_int_equal(cache_part_of_sm(&p, 2), 0); /* not measured: sm mod 2 */
    assert_int_equal(cache_part_of_sm(&p, 7), 1); /* past the probe's SMs */
}

/* SM 0 (partition 0) reads A then B, SM 1 (partition 1) B then A; A =
 * 0x1000 is homed in partition 1, B = 0x2000 in 0. */
static const char stream_csv[] = "sm,seq,tid,pc,addr,width,dep\n"
                                 "0,0,0,0x10,0x1000,4,0\n"
                                 "0,1,0,0x10,0x2000,4,0\n"
                                 "1,0,32,0x10,0x2000,4,0\n"
                                 "1,1,32,0x10,0x1000,4,0\n";

static void run(const char *path, int parts, struct cache_result *res, struct cache_config *cfg)
{
    char msg[256];
    struct cache_input in;
    struct trace_err err = {0};
    memset(cfg, 0, sizeof *cfg);
    assert_int_equal(cache_arch_geometry("hopper", &cfg->geom[0], &cfg->geom[1], msg, sizeof msg), 0);
    cfg->timing[0] = (struct cache_timing){0, 0, 8};
    cfg->timing[1] = (struct cache_timing){0, 0, 8};
    cfg->engines = CACHE_ENGINE_BOTH;
    cfg->l2 = 1;
    if (parts)
        cfg->parts = (struct cache_parts){.count = 2, .sms = 2, .sm_part = {0, 1}, .home_mask = 1u << 12};
    assert_int_equal(cache_input_open(&in, path, &err), 0);
    assert_int_equal(cache_model_run(&in, cfg, res, msg, sizeof msg), 0);
    cache_input_close(&in);
}

static void test_two_partitions_by_hand(void **state)
{
    struct tmp *t = *state;
    const char *path = tmp_path(t, "t.csv");
    write_file(path, stream_csv);
    struct cache_config cfg;
    struct cache_result res;
    /* lockstep: SM0 A (near miss, fabric miss), SM1 B (near miss, fabric
     * miss), SM0 B (near hit: the fabric lookup filled partition 0), SM1 A
     * (near hit) */
    run(path, 1, &res, &cfg);
    for (int e = 0; e < 2; e++) {
        const struct cache_level_result *l = &res.r[e][CACHE_L2];
        assert_int_equal(l->total.requests, 6);
        assert_int_equal(l->total.hits, 2);
        assert_int_equal(l->fabric.requests, 2);
        assert_int_equal(l->fabric.hits, 0);
        for (int s = 0; s < 2; s++) {
            assert_int_equal(l->sm[s].requests, 2);
            assert_int_equal(l->sm[s].hits, 1);
        }
        assert_int_equal(l->total.miss[CACHE_MISS_COMPULSORY], 4);
    }
    cache_result_free(&res);
    /* one L2: A miss, B miss, B hit, A hit */
    run(path, 0, &res, &cfg);
    for (int e = 0; e < 2; e++) {
        assert_int_equal(res.r[e][CACHE_L2].total.requests, 4);
        assert_int_equal(res.r[e][CACHE_L2].total.hits, 2);
        assert_int_equal(res.r[e][CACHE_L2].fabric.requests, 0);
    }
    cache_result_free(&res);
}

static struct cache_geom checked(const char *text)
{
    struct cache_geom g = {0};
    char msg[128];
    assert_int_equal(cache_geom_parse(text, &g, msg, sizeof msg), 0);
    assert_int_equal(cache_geom_check(&g, msg, sizeof msg), 0);
    return g;
}

/* One partition: half the size, the ways kept; fully associative stays so;
 * a half that is not whole sets is refused. */
static void test_partition_geometry(void **state)
{
    (void)state;
    char msg[128];
    struct cache_geom half, l2 = checked("50M,16,128,32");
    assert_int_equal(cache_part_geom(&l2, &half, msg, sizeof msg), 0);
    assert_int_equal(half.size, 25u << 20);
    assert_int_equal(half.assoc, 16);
    assert_int_equal(half.sets, l2.sets / 2);
    l2 = checked("64K,full,128,32");
    assert_int_equal(cache_part_geom(&l2, &half, msg, sizeof msg), 0);
    assert_int_equal(half.sets, 1);
    assert_int_equal(half.assoc, 256);
    l2 = checked("6K,16,128,32"); /* 3 sets: half of it is not whole sets */
    assert_int_equal(cache_part_geom(&l2, &half, msg, sizeof msg), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_home_and_sm),
        cmocka_unit_test(test_partition_geometry),
        cmocka_unit_test_setup_teardown(test_two_partitions_by_hand, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
