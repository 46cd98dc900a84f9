/*
 * The tile decomposition (trace/tiles.h): index = tile * T + local.
 *
 * DESIGN
 * Division and remainder only; tile_count avoids n + t - 1 so that no n
 * overflows. Linear numbers are split x first, as CUDA numbers blocks and
 * threads.
 */
#include "trace/tiles.h"

#include <assert.h>

uint64_t tile_count(uint64_t n, uint64_t t)
{
    assert(t > 0);
    return n / t + (n % t != 0);
}

uint64_t tile_index(uint64_t tile, uint64_t t, uint64_t local)
{
    assert(t > 0 && local < t);
    return tile * t + local;
}

void tile_split(uint64_t index, uint64_t t, uint64_t *tile, uint64_t *local)
{
    assert(t > 0);
    *tile = index / t;
    *local = index % t;
}

uint64_t tile_extent(uint64_t n, uint64_t t, uint64_t tile)
{
    assert(t > 0);
    if (tile >= tile_count(n, t))
        return 0;
    uint64_t first = tile * t;
    return n - first < t ? n - first : t;
}

int tile_is_partial(uint64_t n, uint64_t t, uint64_t tile)
{
    return tile_extent(n, t, tile) < t;
}

int tiling_init(struct tiling *t, int rank, const uint64_t *extent, const uint64_t *tile)
{
    if (rank < 1 || rank > TILES_MAX_RANK)
        return -1;
    t->rank = rank;
    for (int d = 0; d < TILES_MAX_RANK; d++) {
        t->extent[d] = d < rank ? extent[d] : 1;
        t->tile[d] = d < rank ? tile[d] : 1;
        if (t->tile[d] == 0)
            return -1;
    }
    return 0;
}

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
    return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

uint64_t tiling_grid(const struct tiling *t, uint64_t grid[TILES_MAX_RANK])
{
    uint64_t total = 1;
    for (int d = 0; d < TILES_MAX_RANK; d++) {
        grid[d] = tile_count(t->extent[d], t->tile[d]);
        total = mul_sat(total, grid[d]);
    }
    return total;
}

uint64_t tiling_tile_size(const struct tiling *t)
{
    uint64_t size = 1;
    for (int d = 0; d < TILES_MAX_RANK; d++)
        size = mul_sat(size, t->tile[d]);
    return size;
}

int tiling_global(const struct tiling *t, uint64_t tile_linear, uint64_t local_linear,
                  uint64_t index[TILES_MAX_RANK])
{
    uint64_t grid[TILES_MAX_RANK];
    tiling_grid(t, grid);
    int inside = 1;
    for (int d = 0; d < TILES_MAX_RANK; d++) {
        uint64_t tile = tile_linear % grid[d], local = local_linear % t->tile[d];
        tile_linear /= grid[d];
        local_linear /= t->tile[d];
        index[d] = tile_index(tile, t->tile[d], local);
        if (index[d] >= t->extent[d])
            inside = 0;
    }
    return inside;
}
