/*
 * Stack distances on a compacting Fenwick tree (stackdist.h).
 */
#include "cache/stackdist.h"

#include <stdlib.h>
#include <string.h>

#include "cache/bigalloc.h"
#include "cache/linemap.h"

#define MIN_CAP 4096u
/* Reuses at most this many positions back are counted on the owner array
 * (a cache line or two) instead of the tree. */
#define SCAN_GAP 32u
/* The tree counts holes per block of BLOCK positions (within a block they
 * are counted on the owner array, two processor cache lines): a tree 32
 * times smaller stays in the processor's caches. */
#define BLOCK CACHE_STACK_BLOCK

int cache_stack_init(struct cache_stack *s)
{
    memset(s, 0, sizeof *s);
    s->cap = MIN_CAP;
    s->tree = calloc(s->cap / BLOCK + 1, sizeof *s->tree);
    s->owner = malloc(s->cap * sizeof *s->owner);
    if (!s->tree || !s->owner) {
        cache_stack_free(s);
        return -1;
    }
    return 0;
}

void cache_stack_free(struct cache_stack *s)
{
    free(s->tree);
    free(s->owner);
    memset(s, 0, sizeof *s);
}

void cache_stack_reset(struct cache_stack *s)
{
    memset(s->tree, 0, (s->cap / BLOCK + 1) * sizeof *s->tree);
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

/* Holes at positions [0, p]: the tree's whole blocks before p's, then p's
 * block counted on the owner array. */
static inline uint32_t holes_upto(const struct cache_stack *s, uint32_t p)
{
    uint32_t b = p / BLOCK, n = prefix(s->tree, (int64_t)b - 1);
    for (uint32_t q = b * BLOCK; q <= p; q++)
        n += s->owner[q] == CACHE_NONE;
    return n;
}

/* Renumbers the marks 0..live-1 in order, into a tree of 2 * live (at
 * least MIN_CAP) positions and no holes. */
static int compact(struct cache_stack *s, struct cache_line *lines)
{
    uint32_t cap = s->live * 2 > MIN_CAP ? s->live * 2 : MIN_CAP;
    uint32_t *owner = cache_big_alloc(cap, sizeof *owner, 0);
    uint32_t *tree = cache_big_alloc(cap / BLOCK + 1, sizeof *tree, 1);
    if (!owner || !tree) {
        free(owner);
        free(tree);
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
    s->owner = owner;
    s->tree = tree;
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
    add(s->tree, s->cap / BLOCK + 1, p / BLOCK, 1);
    s->holes++;
    s->owner[p] = CACHE_NONE;
    s->live--;
    return id;
}

uint64_t cache_stack_depth(const struct cache_stack *s, const struct cache_line *lines, uint32_t id)
{
    uint32_t p = lines[id].slot, gap = s->next - 1 - p;
    if (gap <= SCAN_GAP) { /* a recent reuse (the common case): count the marks */
        uint64_t d = 0;
        for (uint32_t q = p + 1; q < s->next; q++)
            d += s->owner[q] != CACHE_NONE;
        return d;
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
        add(s->tree, s->cap / BLOCK + 1, p / BLOCK, 1);
        s->holes++;
        s->owner[p] = CACHE_NONE;
    }
    uint32_t now = s->next++;
    s->owner[now] = id;
    lines[id].slot = now;
    return d;
}
