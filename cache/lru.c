/*
 * Exact LRU over set-associative slots (lru.h): a recency list per set.
 */
#include "cache/lru.h"

#include <stdlib.h>
#include <string.h>

#include "cache/bigalloc.h"
#include "cache/linemap.h"

int cache_lru_init(struct cache_lru *c, uint32_t sets, uint32_t assoc)
{
    size_t slots = (size_t)sets * assoc;
    memset(c, 0, sizeof *c);
    c->sets = sets;
    c->assoc = assoc;
    c->rows = assoc <= CACHE_LRU_ROW;
    c->owner = cache_big_alloc(slots, sizeof *c->owner, 0);
    c->prev = cache_big_alloc(slots, sizeof *c->prev, 0);
    c->next = cache_big_alloc(slots, sizeof *c->next, 0);
    c->head = malloc(sets * sizeof *c->head);
    c->tail = malloc(sets * sizeof *c->tail);
    c->used = calloc(sets, sizeof *c->used);
    if (!c->owner || !c->prev || !c->next || !c->head || !c->tail || !c->used) {
        cache_lru_free(c);
        return -1;
    }
    cache_lru_reset(c);
    return 0;
}

void cache_lru_free(struct cache_lru *c)
{
    free(c->owner);
    free(c->prev);
    free(c->next);
    free(c->head);
    free(c->tail);
    free(c->used);
    memset(c, 0, sizeof *c);
}

void cache_lru_reset(struct cache_lru *c)
{
    if (c->rows)
        memset(c->owner, 0xff, (size_t)c->sets * c->assoc * sizeof *c->owner); /* CACHE_NONE */
    memset(c->used, 0, c->sets * sizeof *c->used);
    for (uint32_t s = 0; s < c->sets; s++)
        c->head[s] = c->tail[s] = CACHE_NONE;
}

static void unlink_slot(struct cache_lru *c, uint32_t set, uint32_t s)
{
    uint32_t p = c->prev[s], n = c->next[s];
    if (p != CACHE_NONE)
        c->next[p] = n;
    else
        c->head[set] = n;
    if (n != CACHE_NONE)
        c->prev[n] = p;
    else
        c->tail[set] = p;
}

static void push_head(struct cache_lru *c, uint32_t set, uint32_t s)
{
    uint32_t h = c->head[set];
    c->prev[s] = CACHE_NONE;
    c->next[s] = h;
    if (h != CACHE_NONE)
        c->prev[h] = s;
    else
        c->tail[set] = s;
    c->head[set] = s;
}

void cache_lru_touch(struct cache_lru *c, uint32_t set, uint32_t slot, uint32_t owner)
{
    if (c->rows) {
        uint32_t *row = c->owner + (size_t)set * c->assoc, i = 0;
        while (row[i] != owner)
            i++;
        memmove(row + 1, row, i * sizeof *row);
        row[0] = owner;
        return;
    }
    if (c->head[set] == slot)
        return;
    unlink_slot(c, set, slot);
    push_head(c, set, slot);
}

static void push_tail(struct cache_lru *c, uint32_t set, uint32_t s)
{
    uint32_t t = c->tail[set];
    c->next[s] = CACHE_NONE;
    c->prev[s] = t;
    if (t != CACHE_NONE)
        c->next[t] = s;
    else
        c->head[set] = s;
    c->tail[set] = s;
}

void cache_lru_remove(struct cache_lru *c, uint32_t set, uint32_t slot, uint32_t owner)
{
    if (c->rows) {
        uint32_t *row = c->owner + (size_t)set * c->assoc, i = 0;
        while (row[i] != owner)
            i++;
        memmove(row + i, row + i + 1, (c->assoc - 1 - i) * sizeof *row);
        row[c->assoc - 1] = CACHE_NONE;
        return;
    }
    c->owner[slot] = CACHE_NONE;
    if (c->tail[set] != slot) {
        unlink_slot(c, set, slot);
        push_tail(c, set, slot);
    }
}

uint32_t cache_lru_insert(struct cache_lru *c, uint32_t set, uint32_t owner, uint32_t *evicted)
{
    uint32_t s;
    if (c->rows) {
        uint32_t *row = c->owner + (size_t)set * c->assoc;
        *evicted = row[c->assoc - 1];
        memmove(row + 1, row, (c->assoc - 1) * sizeof *row);
        row[0] = owner;
        return 0;
    }
    if (c->used[set] < c->assoc) {
        s = set * c->assoc + c->used[set]++;
        *evicted = CACHE_NONE;
    } else {
        s = c->tail[set];
        *evicted = c->owner[s];
        unlink_slot(c, set, s);
    }
    c->owner[s] = owner;
    push_head(c, set, s);
    return s;
}
