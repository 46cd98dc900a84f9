/*
 * Exact LRU replacement over a set-associative array of slots: what the
 * exact engine's cache and its fully associative shadow are made of.
 *
 * DESIGN
 * Slot s belongs to set s / assoc. Each set keeps its slots on a doubly
 * linked recency list (head: most recent, tail: least), so a hit, a fill
 * and an eviction cost O(1) whatever the associativity — Hopper's L1 is
 * modelled with hundreds of ways, where a scan of the set per access would
 * dominate. A slot holds its owner (a line index of the level's line map),
 * and the caller keeps the reverse link (cache_line.slot / .shadow), which
 * an eviction hands back so it can be cleared. Sets fill slot by slot
 * before the first eviction.
 * Sets of at most CACHE_LRU_ROW ways (the L2's 16) are instead a row of
 * owners in recency order, one processor cache line: a move shifts the row
 * (a scan and a memmove inside that line) rather than touching a list
 * node, its neighbours and the set's head and tail in five other arrays.
 * Slot numbers then mean nothing but "resident" (cache_lru_insert returns
 * 0), and cache_lru_touch finds the owner in its row.
 * A line can also leave without a replacement (cache_lru_remove): its slot
 * becomes empty (owner CACHE_NONE) at the least recent end, where the next
 * insert finds it.
 */
#ifndef GPUPROBE_CACHE_LRU_H
#define GPUPROBE_CACHE_LRU_H

#include <stddef.h>
#include <stdint.h>

#define CACHE_LRU_ROW 16u

struct cache_lru {
    uint32_t sets, assoc;
    int rows;                        /* assoc <= CACHE_LRU_ROW: owner[] is rows of
                                        owners, most recent first, CACHE_NONE empty */
    uint32_t *owner, *prev, *next;   /* per slot */
    uint32_t *head, *tail, *used;    /* per set */
};

/* sets * assoc slots, all empty. 0, or -1 out of memory. */
int cache_lru_init(struct cache_lru *c, uint32_t sets, uint32_t assoc);
void cache_lru_free(struct cache_lru *c);
/* Empties every set. */
void cache_lru_reset(struct cache_lru *c);

/* Makes slot (of set), held by owner, the most recent. */
void cache_lru_touch(struct cache_lru *c, uint32_t set, uint32_t slot, uint32_t owner);

/* Puts owner in set as its most recent line, in an empty slot or in place of
 * the least recent; *evicted gets the owner put out, or CACHE_NONE. Returns
 * the slot. */
uint32_t cache_lru_insert(struct cache_lru *c, uint32_t set, uint32_t owner, uint32_t *evicted);

/* Empties slot (of set), held by owner: the line leaves the cache without
 * a replacement (a store discarded it). The emptied slot goes to the
 * least recent end, so the set's next insert takes it and evicts nothing;
 * empty slots stay behind every held one. */
void cache_lru_remove(struct cache_lru *c, uint32_t set, uint32_t slot, uint32_t owner);

/* Rows only: 1 when owner is in set's row (resident), else 0. */
static inline int cache_lru_row_has(const struct cache_lru *c, uint32_t set, uint32_t owner)
{
    const uint32_t *row = c->owner + (size_t)set * c->assoc;
    int found = 0;
    for (uint32_t i = 0; i < c->assoc; i++) /* no early exit: a short fixed loop the compiler unrolls */
        found |= row[i] == owner;
    return found;
}

/* The line set would put out on its next insert (CACHE_NONE: it has room),
 * for prefetching; and the memory of set's row or list heads. */
static inline uint32_t cache_lru_victim(const struct cache_lru *c, uint32_t set)
{
    if (c->rows)
        return c->owner[(size_t)set * c->assoc + c->assoc - 1];
    return c->used[set] == c->assoc ? c->owner[c->tail[set]] : UINT32_MAX;
}

#endif
