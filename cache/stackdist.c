/*
 * Stack distances on a compacting Fenwick tree (stackdist.h).
 */
#include "cache/stackdist.h"

#include <stdlib.h>
#include <string.h>

#include "cache/linemap.h"

#define MIN_CAP 4096u

int cache_stack_init(struct cache_stack *s)
{
    memset(s, 0, sizeof *s);
    s->cap = MIN_CAP;
    s->tree = calloc(s->cap, sizeof *s->tree);
    s->owner = malloc(s->cap * sizeof *s->owner);
    s->pos_cap = MIN_CAP;
    s->pos = malloc(s->pos_cap * sizeof *s->pos);
    if (!s->tree || !s->owner || !s->pos) {
        cache_stack_free(s);
        return -1;
    }
    return 0;
}

void cache_stack_free(struct cache_stack *s)
{
    free(s->tree);
    free(s->owner);
    free(s->pos);
    memset(s, 0, sizeof *s);
}

static inline void add(uint32_t *tree, uint32_t cap, uint32_t i, uint32_t v)
{
    for (; i < cap; i |= i + 1)
        tree[i] += v;
}

/* Marks at positions [0, i]. */
static inline uint32_t prefix(const uint32_t *tree, uint32_t i)
{
    uint32_t sum = 0;
    for (int64_t k = i; k >= 0; k = (k & (k + 1)) - 1)
        sum += tree[k];
    return sum;
}

/* Renumbers the live marks 0..live-1 in order, into a tree of 2 * live
 * (at least MIN_CAP) positions. */
static int compact(struct cache_stack *s)
{
    uint32_t cap = s->live * 2 > MIN_CAP ? s->live * 2 : MIN_CAP;
    uint32_t *owner = malloc(cap * sizeof *owner);
    uint32_t *tree = calloc(cap, sizeof *tree);
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
        s->pos[id] = k;
        tree[k] = 1;
        k++;
    }
    for (uint32_t i = 0; i < cap; i++) {  /* O(n) Fenwick build */
        uint32_t j = i | (i + 1);
        if (j < cap)
            tree[j] += tree[i];
    }
    free(s->owner);
    free(s->tree);
    s->owner = owner;
    s->tree = tree;
    s->cap = cap;
    s->next = k;
    return 0;
}

uint64_t cache_stack_access(struct cache_stack *s, uint32_t id, int fresh)
{
    if (s->next == s->cap && compact(s))
        return (uint64_t)-2;
    uint64_t d;
    if (fresh) {
        if (id >= s->pos_cap) {
            uint32_t nc = s->pos_cap * 2;
            uint32_t *p = realloc(s->pos, (size_t)nc * sizeof *p);
            if (!p)
                return (uint64_t)-2;
            s->pos = p;
            s->pos_cap = nc;
        }
        s->live++;
        d = CACHE_DIST_INF;
    } else {
        uint32_t p = s->pos[id];
        d = s->live - prefix(s->tree, p);
        add(s->tree, s->cap, p, (uint32_t)-1);
        s->owner[p] = CACHE_NONE;
    }
    uint32_t now = s->next++;
    s->owner[now] = id;
    s->pos[id] = now;
    add(s->tree, s->cap, now, 1);
    return d;
}
