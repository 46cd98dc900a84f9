/*
 * The set of every line a cache level has ever seen: what tells a
 * compulsory miss from the others once the level's line map (linemap.h)
 * only holds the lines the cache can still hit.
 *
 * DESIGN
 * Open addressing with linear probing over blocks of 8 consecutive lines:
 * a bucket is the block's number + 1 (0: empty) and, in a parallel byte
 * array, a bitmap of the block's lines seen. A stream's neighbouring lines
 * share one bucket, so a dense trace costs about 9/8 bytes a line and a
 * scattered one (a line per block) 9 bytes a line, over a table at most
 * three quarters full, which doubles when it gets there. Lines are never
 * removed. The keys are what a probe compares; the bitmap byte is read
 * only on the bucket that matched.
 */
#ifndef GPUPROBE_CACHE_SEEN_H
#define GPUPROBE_CACHE_SEEN_H

#include <stdint.h>

struct cache_seen {
    uint64_t *key;     /* block + 1; 0: empty */
    uint8_t *bits;     /* lines of the block seen */
    uint64_t mask;     /* buckets - 1 */
    uint64_t n;        /* blocks held */
};

static inline uint64_t cache_seen_hash(uint64_t block)
{
    uint64_t h = block * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
}

/* Asks the processor for line's bucket ahead of a cache_seen_add. */
__attribute__((always_inline)) static inline void cache_seen_prefetch(const struct cache_seen *s, uint64_t line)
{
    __builtin_prefetch(&s->key[cache_seen_hash((line >> 3) + 1) & s->mask]);
}

/* 0, or -1 out of memory. */
int cache_seen_init(struct cache_seen *s);
void cache_seen_free(struct cache_seen *s);
/* Forgets every line, keeping the memory. */
void cache_seen_reset(struct cache_seen *s);

/* Adds line: 1 when it was not in the set, 0 when it was, -1 out of memory
 * (the line then not added). */
int cache_seen_add(struct cache_seen *s, uint64_t line);

/* 1 when line is in the set, else 0; adds nothing. */
int cache_seen_has(const struct cache_seen *s, uint64_t line);

/* Bytes the set holds (its tables). */
uint64_t cache_seen_bytes(const struct cache_seen *s);

#endif
