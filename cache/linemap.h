/*
 * A map from line number to the state of that line (struct cache_line),
 * for every line a cache level has seen: what both engines look a request
 * up in.
 *
 * DESIGN
 * Open addressing with linear probing over (line + 1, index) pairs (0 marks
 * an empty bucket; blocks of 8 consecutive lines hashed together, so a
 * stream's lookups stay in few processor cache lines), at most half full, doubling when it reaches that; the
 * states live in one array in order of first sight, so an index is stable
 * and is what the LRU lists and the stack-distance tree store. Lines are
 * never removed: a line seen once stays known, which is exactly what
 * telling a compulsory miss from the others needs. Memory is therefore
 * about 40 bytes per distinct line the level has seen.
 */
#ifndef GPUPROBE_CACHE_LINEMAP_H
#define GPUPROBE_CACHE_LINEMAP_H

#include <stdint.h>

#define CACHE_NONE UINT32_MAX

/* What a level knows of one line. */
struct cache_line {
    uint64_t ready;    /* seq at which its last fetch returns; in flight while seq < ready */
    uint32_t slot;     /* exact: its slot in the set-associative LRU, CACHE_NONE if not
                          resident; reuse: its position in the stack (stackdist.h) */
    uint32_t shadow;   /* exact: its slot in the fully associative shadow, or CACHE_NONE */
    uint32_t sectors;  /* sectors fetched since it was (re)filled */
    uint32_t merges;   /* requests merged into its fetch in flight */
};

struct cache_linemap {
    struct cache_bucket {
        uint64_t key;  /* line + 1; 0: empty */
        uint32_t idx;
    } *b;
    uint64_t mask;     /* buckets - 1 */
    struct cache_line *lines;
    uint32_t n, cap;   /* lines known; room in `lines` */
};

/* Blocks of 8 consecutive lines are scattered by a multiplicative hash,
 * the lines of a block stay in neighbouring buckets: a stream's lines share
 * the processor's cache lines instead of each costing a miss. */
static inline uint64_t cache_linemap_hash(uint64_t key)
{
    uint64_t block = (key >> 3) * 0x9E3779B97F4A7C15ull;
    return ((block ^ (block >> 29)) << 3) | (key & 7);
}

/* Asks the processor for line's bucket ahead of its lookup. (Always
 * inlined: as a function of its own GCC finds it free of side effects and
 * drops the calls.) */
__attribute__((always_inline)) static inline void cache_linemap_prefetch(const struct cache_linemap *m, uint64_t line)
{
    __builtin_prefetch(&m->b[cache_linemap_hash(line + 1) & m->mask]);
}

/* 0, or -1 out of memory. */
int cache_linemap_init(struct cache_linemap *m);
void cache_linemap_free(struct cache_linemap *m);
/* Forgets every line, keeping the memory (the next SM reuses it). */
void cache_linemap_reset(struct cache_linemap *m);

/* The index of `line`'s state, adding a fresh one (*fresh = 1, state zero
 * but slot and shadow CACHE_NONE) when it was not known. CACHE_NONE when out
 * of memory or at CACHE_NONE lines. The state pointer m->lines + index stays
 * valid until the next call. */
uint32_t cache_linemap_get(struct cache_linemap *m, uint64_t line, int *fresh);

#endif
