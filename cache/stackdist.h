/*
 * Stack (reuse) distances of a stream of line indices: for each access, how
 * many distinct other lines were accessed since the previous access to the
 * same line — the depth at which an LRU stack finds it.
 *
 * DESIGN
 * Bennett and Kruskal's method on a Fenwick tree: every line has one mark,
 * at the time (position) of its last access; the distance of an access is
 * the number of marks after its line's previous position, a prefix sum in
 * O(log n); then its mark moves to the current position. Positions are
 * not the stream's whole length: when they run out, the live marks (one per
 * line seen) are renumbered in order into a tree twice their number, so
 * the tree stays O(distinct lines) and the cost amortised O(log n) per
 * access, whatever the stream's length.
 */
#ifndef GPUPROBE_CACHE_STACKDIST_H
#define GPUPROBE_CACHE_STACKDIST_H

#include <stdint.h>

#define CACHE_DIST_INF UINT64_MAX  /* first access to a line */

struct cache_stack {
    uint32_t *tree;    /* Fenwick tree of marks over positions [0, cap) */
    uint32_t *owner;   /* line at each position, CACHE_NONE when unmarked */
    uint32_t *pos;     /* position of each line's mark */
    uint32_t cap, next, live, pos_cap;
};

/* 0, or -1 out of memory. */
int cache_stack_init(struct cache_stack *s);
void cache_stack_free(struct cache_stack *s);

/* An access to line index id (ids are dense from 0, a fresh one being the
 * next unused). Returns its distance (CACHE_DIST_INF when fresh), or -2
 * (as uint64_t) out of memory. */
uint64_t cache_stack_access(struct cache_stack *s, uint32_t id, int fresh);

#endif
