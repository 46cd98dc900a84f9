/*
 * The tile decomposition of an index space (after a patent on a "tile
 * communication operator" for data-parallel languages of the C++ AMP family):
 * per dimension, index = tile_index * T + local_index with
 * 0 <= local_index < T, and a tile grid of extent (n + T - 1) / T, the last
 * tile partial when T does not divide n.
 *
 * DESIGN
 * Plain arithmetic on uint64_t, no allocation, usable from any generator
 * (trace/synth*.c describes CUDA grids and blocks with it: a thread block is
 * one tile of the thread index space, a shared-memory tile one tile of a
 * matrix). The grid extent is computed without forming n + T - 1, so it
 * cannot overflow for any n. struct tiling holds up to three dimensions,
 * x fastest, the order CUDA linearizes blockIdx and threadIdx in.
 * Every function takes T >= 1; T = 0 is a caller's bug (asserted).
 */
#ifndef GPUPROBE_TRACE_TILES_H
#define GPUPROBE_TRACE_TILES_H

#include <stdint.h>

#define TILES_MAX_RANK 3

/* Tiles of extent t covering n indices: (n + t - 1) / t. */
uint64_t tile_count(uint64_t n, uint64_t t);

/* The global index of local index `local` of tile `tile`: tile * t + local. */
uint64_t tile_index(uint64_t tile, uint64_t t, uint64_t local);

/* The unique decomposition of a global index: *tile = index / t,
 * *local = index % t. */
void tile_split(uint64_t index, uint64_t t, uint64_t *tile, uint64_t *local);

/* How many indices tile `tile` holds inside [0, n): t for a whole tile,
 * n - tile * t for the partial last one, 0 past the grid. */
uint64_t tile_extent(uint64_t n, uint64_t t, uint64_t tile);

/* 1 if tile `tile` is partial (holds fewer than t indices of [0, n)). */
int tile_is_partial(uint64_t n, uint64_t t, uint64_t tile);

/* An N-dimensional decomposition, dimension 0 (x) fastest. */
struct tiling {
    int rank;                          /* 1..TILES_MAX_RANK */
    uint64_t extent[TILES_MAX_RANK];   /* the parent's extent per dimension */
    uint64_t tile[TILES_MAX_RANK];     /* T per dimension */
};

/* Sets up t; dimensions past rank get extent 1, tile 1. 0, or -1 for a rank
 * out of range or a tile of 0. */
int tiling_init(struct tiling *t, int rank, const uint64_t *extent, const uint64_t *tile);

/* Tiles per dimension (grid[d] = tile_count(extent[d], tile[d])) and their
 * product (the number of tiles, saturating at UINT64_MAX). */
uint64_t tiling_grid(const struct tiling *t, uint64_t grid[TILES_MAX_RANK]);

/* Elements in one whole tile: the product of the tile extents. */
uint64_t tiling_tile_size(const struct tiling *t);

/* Linear tile number and linear local number -> global index per dimension
 * (x fastest in both); returns 1 if that index lies inside the parent's
 * extent in every dimension, 0 if it lies in the part of a partial tile
 * past the edge. */
int tiling_global(const struct tiling *t, uint64_t tile_linear, uint64_t local_linear,
                  uint64_t index[TILES_MAX_RANK]);

#endif
