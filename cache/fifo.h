/*
 * A fully associative LRU cache of a fixed number of lines, kept as the
 * order of last uses in a ring: the exact engine's shadow (exact.h).
 *
 * DESIGN
 * Every use appends the line's index at the next position and empties the
 * line's previous position (its mark moves to the top); the least recent
 * line is the oldest mark, found by a cursor that only moves forward over
 * the emptied positions. So a use writes one random word (the old
 * position) and one sequential one, and an eviction reads sequentially —
 * where a doubly linked recency list over 400K lines touches a random
 * neighbour on each side of every move. When positions run out the marks
 * are packed to the front in place (at most lines of 2 x lines positions,
 * so amortised O(1)). A line's position is kept in its own state (the
 * shadow field of struct cache_line, CACHE_NONE when not resident). The
 * same ordering as cache_stack's (stackdist.h), without its tree: the
 * shadow needs residency, not distances.
 */
#ifndef GPUPROBE_CACHE_FIFO_H
#define GPUPROBE_CACHE_FIFO_H

#include <stdint.h>

#include "cache/linemap.h"

struct cache_fa {
    uint32_t *owner;   /* line index at each position, CACHE_NONE when emptied */
    uint32_t cap, next, low, live, lines;
    uint32_t gen;      /* times the marks were packed (renumbered), for prefetch cursors */
};

/* A shadow of `lines` lines. 0, or -1 out of memory. */
int cache_fa_init(struct cache_fa *f, uint32_t lines);
void cache_fa_free(struct cache_fa *f);
void cache_fa_reset(struct cache_fa *f);

/* A use of line index id (state lines[id]): 1 when it was resident (a hit),
 * 0 when not, in which case it is now, and *evicted gets the line put out
 * for it (its shadow set to CACHE_NONE) or CACHE_NONE. */
int cache_fa_use(struct cache_fa *f, struct cache_line *lines, uint32_t id, uint32_t *evicted);

#endif
