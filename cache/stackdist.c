/*
 * Stack distances on a compacting Fenwick tree (stackdist.h).
 */
#include "cache/stackdist.h"

#include <stdlib.h>
#include <string.h>

#include "cache/bigalloc.h"
#include "cache/linemap.h"

#define MIN_CAP 4096u
/* Reuses at most this many positions back are counted on the hole bitmap
 * (a word or two) instead of the tree. */
#define SCAN_GAP 32u
/* The tree counts holes per block of BLOCK positions (within a block they
 * are counted on the bitmap of holes, one word a block): a tree 32 times
 * smaller stays in the processor's caches. */
#define BLOCK CACHE_STACK_BLOCK
_Static_assert(BLOCK == 32, "a block's holes are one 32-bit word");

int cache_stack_init(struct cache_stack *s)
{
    memset(s, 0, sizeof *s);
    s->cap = MIN_CAP;
    s->tree = calloc(s->cap / BLOCK + 1, sizeof *s->tree);
    s->owner = malloc(s->cap * sizeof *s->owner);
    s->hole = calloc(s->cap / BLOCK + 1, sizeof *s->hole);
    if (!s->tree || !s->owner || !s->hole) {
        cache_stack_free(s);
        return -1;
    }
    return 0;
}

void cache_stack_free(struct cache_stack *s)
{
    free(s->tree);
    free(s->owner);
    free(s->hole);
    memset(s, 0, sizeof *s);
}

void cache_stack_reset(struct cache_stack *s)
{
    memset(s->tree, 0, (s->cap / BLOCK + 1) * sizeof *s->tree);
    memset(s->hole, 0, (size_t)(s->next + BLOCK - 1) / BLOCK * sizeof *s->hole); /* none past next */
    s->next = s->live = s->holes = s->low = 0;
}

static inline void add(uint32_t *tree, uint32_t cap, uint32_t i, uint32_t v)
{
    for (; i < cap; i |= i + 1)
        tree[i] += v;
}

/* Entries [0, i] of the tree. */
static inline uint32_t prefix(const uint32_t *tree, int64_t i)
{
    uint32_t sum = 0;
    for (int64_t k = i; k >= 0; k = (k & (k + 1)) - 1)
        sum += tree[k];
    return sum;
}

/* Holes at positions [b * BLOCK, p] of p's block b. */
static inline uint32_t holes_in_block_upto(const struct cache_stack *s, uint32_t p)
{
    uint32_t below = (uint32_t)(((uint64_t)2 << (p % BLOCK)) - 1); /* bits 0 .. p % BLOCK */
    return (uint32_t)__builtin_popcount(s->hole[p / BLOCK] & below);
}

/* Holes at positions [0, p]: the tree's whole blocks before p's, then p's
 * block on the bitmap. */
static inline uint32_t holes_upto(const struct cache_stack *s, uint32_t p)
{
    return prefix(s->tree, (int64_t)(p / BLOCK) - 1) + holes_in_block_upto(s, p);
}

/* Position p (< next, marked) becomes a hole. */
static inline void make_hole(struct cache_stack *s, uint32_t p)
{
    add(s->tree, s->cap / BLOCK + 1, p / BLOCK, 1);
    s->hole[p / BLOCK] |= 1u << (p % BLOCK);
    s->holes++;
    s->owner[p] = CACHE_NONE;
}

/* Renumbers the marks 0..live-1 in order, into a tree of 2 * live (at
 * least MIN_CAP) positions and no holes. */
static int compact(struct cache_stack *s, struct cache_line *lines)
{
    uint32_t cap = s->live * 2 > MIN_CAP ? s->live * 2 : MIN_CAP;
    uint32_t *owner = cache_big_alloc(cap, sizeof *owner, 0);
    uint32_t *tree = cache_big_alloc(cap / BLOCK + 1, sizeof *tree, 1);
    uint32_t *hole = cache_big_alloc(cap / BLOCK + 1, sizeof *hole, 1);
    if (!owner || !tree || !hole) {
        free(owner);
        free(tree);
        free(hole);
        return -1;
    }
    uint32_t k = 0;
    for (uint32_t p = 0; p < s->next; p++) {
        uint32_t id = s->owner[p];
        if (id == CACHE_NONE)
            continue;
        owner[k] = id;
        lines[id].slot = k;
        k++;
    }
    free(s->owner);
    free(s->tree);
    free(s->hole);
    s->owner = owner;
    s->tree = tree;
    s->hole = hole;
    s->cap = cap;
    s->next = k;
    s->holes = 0;
    s->low = 0;
    s->gen++;
    return 0;
}

uint32_t cache_stack_evict_oldest(struct cache_stack *s)
{
    while (s->owner[s->low] == CACHE_NONE) /* live > 0: a mark lies ahead */
        s->low++;
    uint32_t p = s->low++, id = s->owner[p];
    make_hole(s, p);
    s->live--;
    return id;
}

uint64_t cache_stack_depth(const struct cache_stack *s, const struct cache_line *lines, uint32_t id)
{
    uint32_t p = lines[id].slot, gap = s->next - 1 - p;
    if (gap <= SCAN_GAP) { /* a recent reuse (the common case): the holes of a block or two */
        if (gap == 0)
            return 0;
        uint32_t last = s->next - 1, h = holes_in_block_upto(s, last) - holes_in_block_upto(s, p);
        if (last / BLOCK != p / BLOCK) /* the rest of p's block */
            h += holes_in_block_upto(s, p / BLOCK * BLOCK + BLOCK - 1);
        return (uint64_t)gap - h;
    }
    /* positions p+1 .. next-1, less the holes among them */
    return (uint64_t)gap - (s->holes - holes_upto(s, p));
}

uint64_t cache_stack_access(struct cache_stack *s, struct cache_line *lines, uint32_t id, int fresh)
{
    if (s->next == s->cap && compact(s, lines))
        return (uint64_t)-2;
    uint64_t d;
    if (fresh) {
        s->live++;
        d = CACHE_DIST_INF;
    } else {
        uint32_t p = lines[id].slot;
        d = cache_stack_depth(s, lines, id);
        make_hole(s, p);
    }
    uint32_t now = s->next++;
    s->owner[now] = id;
    lines[id].slot = now;
    return d;
}
