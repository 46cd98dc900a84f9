/*
 * A map from line number to the state of that line (struct cache_line),
 * for every line a cache level has seen: what both engines look a request
 * up in.
 *
 * DESIGN
 * Open addressing with linear probing over (line + 1, index) pairs (0 marks
 * an empty bucket; blocks of 8 consecutive lines hashed together, so a
 * stream's lookups stay in few processor cache lines), at most half full
 * (bounded: three quarters), doubling when it reaches that; the states live in one array, so an index
 * is stable while its line is held and is what the LRU lists and the
 * stack-distance tree store.
 * Two modes. Unbounded: lines are never removed, so a line seen once stays
 * known, which is what telling a compulsory miss from the others needs;
 * about 40-70 bytes per distinct line. Bounded: the engine drops a line
 * (cache_linemap_drop) once no structure can hit it any more (the exact
 * engine: out of both its LRU arrays; the reuse engine: deeper in the stack
 * than it tracks), so the map holds O(the cache's lines) whatever the
 * trace, and the lines ever seen are kept apart in a compact set (seen.h,
 * about 1-12 bytes a line) consulted only when a line is not in the map.
 * A dropped line's bucket is emptied by backward shifting (no tombstones)
 * and its index goes on a free list for the next new line.
 * Dense (the L2's, cache_linemap_init_dense): the caller names its lines
 * by dense ids below a known count (lineid.h assigns them as the L1
 * pass spills its fetches), so the map is no map: an id is its state's
 * index, a bitmap says which ids were seen, and nothing is hashed or
 * dropped (cache_linemap_drop only clears the line's slot: the reuse
 * engine's capped stack forgetting it). Memory: 24 bytes and a bit an id,
 * the trace's distinct lines rather than the cache's; in return a lookup
 * is one array access with no chain of dependent misses before it.
 */
#ifndef GPUPROBE_CACHE_LINEMAP_H
#define GPUPROBE_CACHE_LINEMAP_H

#include <stdint.h>

#include "cache/seen.h"

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
    uint32_t n, cap;   /* indices handed out (held or free); room in `lines` */
    uint32_t *free_ids, nfree;       /* dropped indices, reused first */
    uint64_t *keys;                  /* bounded: the line of each index (what a drop
                                        looks up; apart, so an L1's states stay 24 bytes) */
    int bounded;                     /* lines are dropped; `seen` knows them all */
    struct cache_seen seen;          /* bounded: every line ever seen */
    uint64_t *dense_seen;            /* dense: bit id set once id was seen; NULL: not dense */
    uint32_t ids;                    /* dense: ids below this */
};

/* Dense: was id seen (an id below m->ids)? */
static inline int cache_linemap_dense_has(const struct cache_linemap *m, uint64_t id)
{
    return (int)((m->dense_seen[id >> 6] >> (id & 63)) & 1);
}

/* Moves the held buckets of the table `from` (from_mask + 1 buckets) into
 * the empty table `to` (to_mask + 1 buckets, more than are held), placed
 * by hash and linear probing, and frees `from`: a table's doubling (the
 * line map's, the line ids'). */
void cache_buckets_rehash(struct cache_bucket *from, uint64_t from_mask, struct cache_bucket *to, uint64_t to_mask,
                          uint64_t (*hash_of)(uint64_t key));

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
    if (m->dense_seen) { /* the bit and the state itself: nothing to find first */
        __builtin_prefetch(&m->dense_seen[line >> 6]);
        __builtin_prefetch(&m->lines[line]);
        __builtin_prefetch((const char *)&m->lines[line] + sizeof *m->lines - 1);
        return;
    }
    /* a line not held probes on past its bucket (runs are long in a table
     * three quarters full, longer with lines hashed by blocks of 8): the
     * next processor cache line too */
    uint64_t j = cache_linemap_hash(line + 1) & m->mask;
    __builtin_prefetch(&m->b[j]);
    if (j + 4 <= m->mask)
        __builtin_prefetch(&m->b[j + 4]);
    if (m->bounded) /* a line not held is looked up there next */
        cache_seen_prefetch(&m->seen, line);
}

/* Asks for line's bucket alone: what dropping a held line looks up (a
 * line held is never looked up in the seen set). */
__attribute__((always_inline)) static inline void cache_linemap_prefetch_bucket(const struct cache_linemap *m,
                                                                              uint64_t line)
{
    if (!m->dense_seen)
        __builtin_prefetch(&m->b[cache_linemap_hash(line + 1) & m->mask]);
}

/* How far ahead a ring of line indices (the exact engine's shadow, the
 * capped stack) has been prefetched: the lines it evicts next are its
 * oldest marks, in order, so each position ahead of its oldest is asked
 * for once, whatever the jumps over emptied positions. Renumbering the
 * ring (gen changes) starts the cursors again from the oldest mark. */
struct cache_ring_pf {
    uint32_t at[2];    /* next position: [0] states and keys, [1] buckets */
    uint32_t gen[2];   /* the ring's renumbering count each cursor belongs to */
};

/* Prefetches for the positions [cursor, low + ahead) of owner (below next,
 * CACHE_NONE skipped): what 0, each owner's state and line number (keys);
 * what 1, each owner's bucket, which reads its line number (asked for by
 * what 0 some requests earlier). gen: the ring's renumbering count.
 * Bounded maps only (they keep the line numbers). */
__attribute__((always_inline)) static inline void cache_linemap_prefetch_ring(const struct cache_linemap *m,
                                                                            struct cache_ring_pf *pf, int what,
                                                                            const uint32_t *owner, uint32_t low,
                                                                            uint32_t next, uint32_t gen,
                                                                            uint32_t ahead)
{
    uint32_t p = pf->at[what], end = next - low > ahead ? low + ahead : next;
    if (pf->gen[what] != gen || p < low || p > next)
        p = low;
    for (; p < end; p++) {
        uint32_t v = owner[p];
        if (v == CACHE_NONE)
            continue;
        if (what == 0) {
            __builtin_prefetch(&m->lines[v]);
            if (m->keys)
                __builtin_prefetch(&m->keys[v]);
        } else if (m->keys) {
            cache_linemap_prefetch_bucket(m, m->keys[v]);
        }
    }
    pf->at[what] = p;
    pf->gen[what] = gen;
}

/* Asks the processor for line's state, when its bucket (asked for by
 * cache_linemap_prefetch some time before) shows the line held in the
 * first place probed: the second step of a pipelined lookup. Only reads. */
__attribute__((always_inline)) static inline void cache_linemap_prefetch_state(const struct cache_linemap *m,
                                                                             uint64_t line)
{
    if (m->dense_seen)
        return; /* cache_linemap_prefetch asked for it */
    const struct cache_bucket *b = &m->b[cache_linemap_hash(line + 1) & m->mask];
    if (b->key == line + 1)
        __builtin_prefetch(&m->lines[b->idx]);
}

/* An unbounded map (bounded 0) or a bounded one (1). 0, or -1 out of
 * memory. */
int cache_linemap_init(struct cache_linemap *m, int bounded);
/* A dense map of ids [0, ids): every function below takes an id where it
 * says line (get, find, the prefetches), get returns it, and the map
 * behaves as an unbounded one (a line once seen stays known) but for
 * cache_linemap_drop. 0, or -1 out of memory. */
int cache_linemap_init_dense(struct cache_linemap *m, uint32_t ids);
void cache_linemap_free(struct cache_linemap *m);
/* Forgets every line, keeping the memory (the next SM reuses it). */
void cache_linemap_reset(struct cache_linemap *m);

/* The index of `line`'s state, adding a new one (state zero but slot and
 * shadow CACHE_NONE) when the map does not hold it; *fresh = 1 when the
 * line was never seen before (unbounded: not in the map; bounded: not in
 * the seen set either). CACHE_NONE when out of memory or at CACHE_NONE
 * lines. The state pointer m->lines + index stays valid until the next
 * cache_linemap_get (a drop does not move states). */
uint32_t cache_linemap_get(struct cache_linemap *m, uint64_t line, int *fresh);

/* The index of `line`'s state when the map holds it, else CACHE_NONE;
 * changes nothing (a lookup that must not count as the line being seen, and
 * a store at a level that does not allocate on stores must leave a line it
 * never loaded unseen). */
uint32_t cache_linemap_find(const struct cache_linemap *m, uint64_t line);

/* Makes room for `held` lines at once (a bounded map knows its bound: no
 * doubling, rehashing and copying of tens of megabytes along the way). 0,
 * or -1 out of memory. */
int cache_linemap_reserve(struct cache_linemap *m, uint32_t held);

/* Removes the line whose state is index idx (held): its index is free for
 * the next new line. Bounded maps only (an unbounded map would forget the
 * line was seen); on a dense map it only sets the line's slot to
 * CACHE_NONE (seen, held by nothing), keeping its state. */
void cache_linemap_drop(struct cache_linemap *m, uint32_t idx);

/* Lines the map holds now. */
static inline uint32_t cache_linemap_held(const struct cache_linemap *m)
{
    if (m->dense_seen) {
        uint32_t n = 0;
        for (uint64_t w = 0; w < ((uint64_t)m->ids + 63) / 64; w++)
            n += (uint32_t)__builtin_popcountll(m->dense_seen[w]);
        return n;
    }
    return m->n - m->nfree;
}

#endif
