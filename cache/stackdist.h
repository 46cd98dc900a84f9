/*
 * Stack (reuse) distances of a stream of line indices: for each access, how
 * many distinct other lines were accessed since the previous access to the
 * same line — the depth at which an LRU stack finds it.
 *
 * DESIGN
 * Bennett and Kruskal's method on a Fenwick tree: every access takes the
 * next position; a line's last access is its mark, and the distance of an
 * access is the number of marks after its line's previous position. The
 * tree counts the other positions, the *holes* (accesses that are no
 * longer their line's last): marks after p = positions after p - holes
 * after p, a prefix sum in O(log n), and the previous position becomes a
 * hole. The tree counts holes per block of 32 positions (within a block
 * they are counted on a bitmap of the holes, a word a block, by popcount),
 * so it is 32 times smaller than the positions and stays in the
 * processor's caches; a reuse a few positions back reads a word or two of
 * the bitmap and no tree. A first access (most of a streaming kernel's)
 * touches no tree at all. Positions are not the stream's whole length: when they run out,
 * the marks (one per line seen) are renumbered in order into a tree with
 * no holes and twice their number of positions, so the tree stays
 * O(distinct lines) and the cost amortised O(log n) per access, whatever
 * the stream's length. A caller that only needs distances below some D
 * keeps at most D marks (cache_stack_evict_oldest when there are more): a
 * line deeper than D marks has a distance >= D whatever comes next, so
 * forgetting it changes no distance below D, and the tree stays O(D). A
 * line's position is kept in its own state (the
 * slot field of struct cache_line, which the reuse engine does not
 * otherwise use), read in the same cache line as the rest of its state.
 */
#ifndef GPUPROBE_CACHE_STACKDIST_H
#define GPUPROBE_CACHE_STACKDIST_H

#include <stdint.h>

#include "cache/linemap.h"

#define CACHE_DIST_INF UINT64_MAX  /* first access to a line */
/* The tree counts holes per block of this many positions; a distance
 * counts the holes of its mark's block on the hole bitmap. */
#define CACHE_STACK_BLOCK 32u

struct cache_stack {
    uint32_t *tree;    /* Fenwick tree of holes per block of 32 positions */
    uint32_t *owner;   /* line at each position, CACHE_NONE when unmarked */
    uint32_t *hole;    /* per block, a bit per position: a hole (positions < next) */
    uint32_t cap, next, live;
    uint32_t holes;    /* in the tree */
    uint32_t low;      /* no mark before this position */
    uint32_t gen;      /* times the marks were renumbered, for prefetch cursors */
};

/* 0, or -1 out of memory. */
int cache_stack_init(struct cache_stack *s);
void cache_stack_free(struct cache_stack *s);
/* Forgets every access, keeping the memory. */
void cache_stack_reset(struct cache_stack *s);

/* An access to line index id, whose state is lines[id] (its slot holds its
 * position; set here). fresh: the line has no mark (never seen, or evicted).
 * Returns its distance (CACHE_DIST_INF when fresh), or -2 (as uint64_t) out
 * of memory. */
uint64_t cache_stack_access(struct cache_stack *s, struct cache_line *lines, uint32_t id, int fresh);

/* The distance an access to line index id (marked: its slot holds its
 * position) would have now, without making the access: what a store at a
 * level that does not allocate on stores looks up. */
uint64_t cache_stack_depth(const struct cache_stack *s, const struct cache_line *lines, uint32_t id);

/* Removes the oldest mark (the deepest line; live > 0) and returns its line
 * index, whose position is no longer valid. */
uint32_t cache_stack_evict_oldest(struct cache_stack *s);

#endif
