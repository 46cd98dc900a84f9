/*
 * Unit tests of the tile decomposition (trace/tiles.c): the grid extent
 * (n + T - 1) / T at and around multiples of T and at the top of the range
 * (no overflow), the unique decomposition index = tile * T + local both
 * ways, partial edge tiles and their extents, and the N-dimensional form:
 * refusals, the grid, and that the tiles' in-range indices cover a 2-D and
 * a 3-D parent exactly once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "trace/tiles.h"

static void test_count(void **state)
{
    (void)state;
    assert_int_equal(tile_count(0, 16), 0);
    assert_int_equal(tile_count(1, 16), 1);
    assert_int_equal(tile_count(15, 16), 1);
    assert_int_equal(tile_count(16, 16), 1);
    assert_int_equal(tile_count(17, 16), 2);
    assert_int_equal(tile_count(40, 16), 3);
    assert_int_equal(tile_count(7, 1), 7);
    /* n + T - 1 would wrap here */
    assert_true(tile_count(UINT64_MAX, 2) == (UINT64_MAX >> 1) + 1);
    assert_true(tile_count(UINT64_MAX, UINT64_MAX) == 1);
}

static void test_index_split(void **state)
{
    (void)state;
    assert_int_equal(tile_index(0, 16, 5), 5);
    assert_int_equal(tile_index(2, 16, 7), 39);
    uint64_t tile, local;
    tile_split(39, 16, &tile, &local);
    assert_int_equal(tile, 2);
    assert_int_equal(local, 7);
    tile_split(48, 16, &tile, &local);
    assert_int_equal(tile, 3);
    assert_int_equal(local, 0);
    for (uint64_t t = 1; t <= 9; t++)
        for (uint64_t i = 0; i < 100; i++) {
            tile_split(i, t, &tile, &local);
            assert_true(local < t);
            assert_int_equal(tile_index(tile, t, local), i);
        }
}

static void test_extent_partial(void **state)
{
    (void)state;
    assert_int_equal(tile_extent(40, 16, 0), 16);
    assert_int_equal(tile_extent(40, 16, 1), 16);
    assert_int_equal(tile_extent(40, 16, 2), 8);
    assert_int_equal(tile_extent(40, 16, 3), 0);
    assert_int_equal(tile_extent(32, 16, 1), 16);
    assert_false(tile_is_partial(40, 16, 1));
    assert_true(tile_is_partial(40, 16, 2));
    assert_false(tile_is_partial(32, 16, 1));
    assert_true(tile_is_partial(3, 16, 0));
    /* the extents add up to n */
    for (uint64_t n = 0; n < 70; n++) {
        uint64_t sum = 0;
        for (uint64_t k = 0; k < tile_count(n, 16); k++)
            sum += tile_extent(n, 16, k);
        assert_int_equal(sum, n);
    }
}

static void test_tiling_refusals(void **state)
{
    (void)state;
    struct tiling t;
    uint64_t e[3] = {4, 4, 4}, tl[3] = {2, 2, 2}, zero[3] = {2, 0, 2};
    assert_int_equal(tiling_init(&t, 0, e, tl), -1);
    assert_int_equal(tiling_init(&t, 4, e, tl), -1);
    assert_int_equal(tiling_init(&t, 2, e, zero), -1);
    assert_int_equal(tiling_init(&t, 1, e, zero), 0); /* dimension 1 is unused at rank 1 */
    assert_int_equal(t.extent[1], 1);
    assert_int_equal(t.tile[1], 1);
}

static void test_tiling_grid(void **state)
{
    (void)state;
    struct tiling t;
    uint64_t e[2] = {40, 17}, tl[2] = {16, 4}, grid[3];
    assert_int_equal(tiling_init(&t, 2, e, tl), 0);
    assert_int_equal(tiling_grid(&t, grid), 15);
    assert_int_equal(grid[0], 3);
    assert_int_equal(grid[1], 5);
    assert_int_equal(grid[2], 1);
    assert_int_equal(tiling_tile_size(&t), 64);
    /* tile 4 (x 1, y 1), local 5 (x 5, y 0) */
    uint64_t idx[3];
    assert_int_equal(tiling_global(&t, 4, 5, idx), 1);
    assert_int_equal(idx[0], 21);
    assert_int_equal(idx[1], 4);
    /* tile 2 (x 2: the partial one), local 9 (x 9 -> 41): past the edge */
    assert_int_equal(tiling_global(&t, 2, 9, idx), 0);
    assert_int_equal(idx[0], 41);
}

/* Every index of the parent is reached from exactly one (tile, local). */
static void cover(int rank, const uint64_t *e, const uint64_t *tl)
{
    struct tiling t;
    uint64_t grid[3], idx[3];
    static unsigned char hits[7 * 5 * 3];
    assert_int_equal(tiling_init(&t, rank, e, tl), 0);
    uint64_t tiles = tiling_grid(&t, grid), size = tiling_tile_size(&t);
    uint64_t n = t.extent[0] * t.extent[1] * t.extent[2];
    assert_true(n <= sizeof hits);
    memset(hits, 0, sizeof hits);
    uint64_t outside = 0;
    for (uint64_t k = 0; k < tiles; k++)
        for (uint64_t l = 0; l < size; l++) {
            if (!tiling_global(&t, k, l, idx)) {
                outside++;
                continue;
            }
            hits[(idx[2] * t.extent[1] + idx[1]) * t.extent[0] + idx[0]]++;
        }
    for (uint64_t i = 0; i < n; i++)
        assert_int_equal(hits[i], 1);
    assert_int_equal(outside, tiles * size - n);
}

static void test_tiling_cover(void **state)
{
    (void)state;
    uint64_t e2[2] = {7, 5}, t2[2] = {2, 3};
    cover(2, e2, t2);
    uint64_t e3[3] = {7, 5, 3}, t3[3] = {4, 2, 2};
    cover(3, e3, t3);
    uint64_t e1[1] = {7}, t1[1] = {7};
    cover(1, e1, t1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count),           cmocka_unit_test(test_index_split),
        cmocka_unit_test(test_extent_partial),  cmocka_unit_test(test_tiling_refusals),
        cmocka_unit_test(test_tiling_grid),     cmocka_unit_test(test_tiling_cover),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
