/*
 * Dense line ids: each distinct line number a run meets gets the next
 * 32-bit id, 0, 1, 2 ..., the first time it is met. What lets the L2's
 * engines keep their per-line state in arrays (linemap.h, dense) instead
 * of looking every request up in a hash table.
 *
 * DESIGN
 * The L1 pass reads every request anyway, and spills (spill.h) the ones
 * that go to the L2: it names each spilled line by its id here, so the L2
 * pass — the model's slow part, tens of megabytes of state touched at
 * random — indexes its arrays directly, with no chain of dependent misses
 * (bucket, then state) before the state, nothing to drop, no seen set to
 * probe. The hash lookups move to the L1 pass, where the stream is read
 * in order and each is prefetched some requests ahead. Open addressing
 * with linear probing over (line + 1, id) pairs, lines hashed one by one
 * (cache_lineid_hash, below), at most three quarters full, doubling when
 * it gets there. Sized at first for the count of lines the caller expects
 * (distinct.h's estimate, with a sixteenth of slack: the model's table
 * doubles only when the estimate is that far low).
 * Memory: a 16-byte bucket per 0.375-0.75 distinct lines (the table a
 * power of two, at most three quarters full), 21-43 bytes a distinct line,
 * for the L1 pass only (the model frees it before the L2 pass); while it
 * doubles, the old table as well. Ids are assigned in the order lines are
 * met, which no count depends on: an id only names its line.
 */
#ifndef GPUPROBE_CACHE_LINEID_H
#define GPUPROBE_CACHE_LINEID_H

#include <stdint.h>

#include "cache/linemap.h"

struct cache_lineid {
    struct cache_bucket *b;    /* key line + 1 (0: empty), idx its id */
    uint64_t mask;             /* buckets - 1 */
    uint32_t n;                /* ids handed out: the next id */
};

/* An empty table with room for about `expect` ids before it doubles (0:
 * the smallest table). 0, or -1 out of memory. */
int cache_lineid_init(struct cache_lineid *m, uint64_t expect);
void cache_lineid_free(struct cache_lineid *m);

/* Lines one by one (not in blocks of 8 as the line map hashes them): most
 * of the lookups here are of new lines, whose probe runs on to an empty
 * bucket, and keys of a block side by side lengthen the runs. */
static inline uint64_t cache_lineid_hash(uint64_t key)
{
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 31);
}

/* Asks the processor for line's bucket (and the next processor cache line
 * of buckets, where a probe for a new line runs on) ahead of its lookup. */
__attribute__((always_inline)) static inline void cache_lineid_prefetch(const struct cache_lineid *m,
                                                                      uint64_t line)
{
    uint64_t j = cache_lineid_hash(line + 1) & m->mask;
    __builtin_prefetch(&m->b[j]);
    if (j + 4 <= m->mask)
        __builtin_prefetch(&m->b[j + 4]);
}

/* line's id, assigning the next one (m->n) when line is new. CACHE_NONE
 * out of memory or when CACHE_NONE - 1 ids are taken. */
uint32_t cache_lineid_get(struct cache_lineid *m, uint64_t line);

#endif
