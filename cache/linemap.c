/*
 * The line map (linemap.h): open addressing, linear probing, a
 * multiplicative hash of the line number; removal by backward shifting.
 */
#include "cache/linemap.h"

#include "cache/bigalloc.h"

#include <stdlib.h>
#include <string.h>

#define INITIAL_BUCKETS 1024u
#define hash cache_linemap_hash

/* The lines a table of nb buckets takes: half (an L1's map, every line
 * seen, where the speed of a short probe matters most), three quarters
 * when bounded (the L2's: holding up to ~1.35M lines for the hopper reuse
 * engine, where a half-full table would double its buckets and states). */
static uint64_t room(const struct cache_linemap *m, uint64_t nb)
{
    uint64_t r = m->bounded ? nb / 4 * 3 : nb / 2;
    return r < CACHE_NONE ? r : CACHE_NONE;
}


int cache_linemap_init(struct cache_linemap *m, int bounded)
{
    memset(m, 0, sizeof *m);
    m->bounded = bounded;
    m->cap = (uint32_t)room(m, INITIAL_BUCKETS);
    m->b = calloc(INITIAL_BUCKETS, sizeof *m->b);
    m->lines = malloc(m->cap * sizeof *m->lines);
    m->free_ids = malloc(m->cap * sizeof *m->free_ids);
    if (bounded)
        m->keys = malloc(m->cap * sizeof *m->keys);
    if (!m->b || !m->lines || !m->free_ids || (bounded && (!m->keys || cache_seen_init(&m->seen)))) {
        cache_linemap_free(m);
        return -1;
    }
    m->mask = INITIAL_BUCKETS - 1;
    return 0;
}

int cache_linemap_init_dense(struct cache_linemap *m, uint32_t ids)
{
    memset(m, 0, sizeof *m);
    m->ids = ids;
    /* zeroed pages as the system hands them over: a state is written when
     * its id is first seen, so only the bitmap needs zeroes */
    m->lines = cache_big_alloc(ids ? ids : 1, sizeof *m->lines, 0);
    m->dense_seen = cache_big_alloc(((uint64_t)ids + 63) / 64 + 1, sizeof *m->dense_seen, 1);
    if (!m->lines || !m->dense_seen) {
        cache_linemap_free(m);
        return -1;
    }
    return 0;
}

void cache_linemap_free(struct cache_linemap *m)
{
    free(m->dense_seen);
    free(m->b);
    free(m->lines);
    free(m->free_ids);
    free(m->keys);
    if (m->bounded)
        cache_seen_free(&m->seen);
    memset(m, 0, sizeof *m);
}

void cache_linemap_reset(struct cache_linemap *m)
{
    if (m->dense_seen) {
        memset(m->dense_seen, 0, (((uint64_t)m->ids + 63) / 64 + 1) * sizeof *m->dense_seen);
        return;
    }
    memset(m->b, 0, (m->mask + 1) * sizeof *m->b);
    m->n = m->nfree = 0;
    if (m->bounded)
        cache_seen_reset(&m->seen);
}

void cache_buckets_rehash(struct cache_bucket *from, uint64_t from_mask, struct cache_bucket *to, uint64_t to_mask,
                          uint64_t (*hash_of)(uint64_t key))
{
    for (uint64_t i = 0; i <= from_mask; i++) {
        if (!from[i].key)
            continue;
        uint64_t j = hash_of(from[i].key) & to_mask;
        while (to[j].key)
            j = (j + 1) & to_mask;
        to[j] = from[i];
    }
    free(from);
}

static int grow(struct cache_linemap *m)
{
    uint64_t nb = (m->mask + 1) * 2;
    struct cache_bucket *b = cache_big_alloc(nb, sizeof *b, 1);
    struct cache_line *lines = cache_big_grow(m->lines, m->n, room(m, nb), sizeof *lines);
    if (lines)
        m->lines = lines;
    uint32_t *ids = realloc(m->free_ids, room(m, nb) * sizeof *ids);
    if (ids)
        m->free_ids = ids;
    uint64_t *keys = NULL;
    if (m->bounded && (keys = cache_big_grow(m->keys, m->n, room(m, nb), sizeof *keys)))
        m->keys = keys;
    if (!b || !lines || !ids || (m->bounded && !keys)) {
        free(b);
        return -1;
    }
    cache_buckets_rehash(m->b, m->mask, b, nb - 1, cache_linemap_hash);
    m->b = b;
    m->mask = nb - 1;
    m->cap = (uint32_t)room(m, nb);
    return 0;
}

int cache_linemap_reserve(struct cache_linemap *m, uint32_t held)
{
    while (m->cap < held)
        if (grow(m))
            return -1;
    return 0;
}

uint32_t cache_linemap_find(const struct cache_linemap *m, uint64_t line)
{
    if (m->dense_seen)
        return cache_linemap_dense_has(m, line) ? (uint32_t)line : CACHE_NONE;
    uint64_t key = line + 1;
    for (uint64_t j = hash(key) & m->mask;; j = (j + 1) & m->mask) {
        if (m->b[j].key == key)
            return m->b[j].idx;
        if (!m->b[j].key)
            return CACHE_NONE;
    }
}

uint32_t cache_linemap_get(struct cache_linemap *m, uint64_t line, int *fresh)
{
    if (m->dense_seen) {
        uint64_t bit = 1ull << (line & 63), *w = &m->dense_seen[line >> 6];
        *fresh = !(*w & bit);
        if (*fresh) {
            *w |= bit;
            m->lines[line] = (struct cache_line){0, CACHE_NONE, CACHE_NONE, 0, 0};
        }
        return (uint32_t)line;
    }
    uint64_t key = line + 1;
    uint64_t j = hash(key) & m->mask;
    for (;; j = (j + 1) & m->mask) {
        if (m->b[j].key == key) {
            *fresh = 0;
            return m->b[j].idx;
        }
        if (!m->b[j].key)
            break;
    }
    int isnew = 1;
    if (m->bounded && (isnew = cache_seen_add(&m->seen, line)) < 0)
        return CACHE_NONE;
    uint32_t idx;
    if (m->nfree) {
        idx = m->free_ids[--m->nfree];
    } else {
        if (m->n >= m->cap) {
            if (m->n == CACHE_NONE - 1 || grow(m))
                return CACHE_NONE;
            j = hash(key) & m->mask;
            while (m->b[j].key)
                j = (j + 1) & m->mask;
        }
        idx = m->n++;
    }
    m->b[j] = (struct cache_bucket){key, idx};
    m->lines[idx] = (struct cache_line){0, CACHE_NONE, CACHE_NONE, 0, 0};
    if (m->bounded)
        m->keys[idx] = line;
    *fresh = isnew;
    return idx;
}

void cache_linemap_drop(struct cache_linemap *m, uint32_t idx)
{
    if (m->dense_seen) {
        m->lines[idx].slot = CACHE_NONE;
        return;
    }
    uint64_t key = m->keys[idx] + 1, j = hash(key) & m->mask;
    while (m->b[j].key != key)
        j = (j + 1) & m->mask;
    /* backward shift: move up every later bucket of the run whose home is
     * not in (j, i], so that no lookup meets a hole before its key */
    for (uint64_t i = j;;) {
        i = (i + 1) & m->mask;
        if (!m->b[i].key)
            break;
        uint64_t h = hash(m->b[i].key) & m->mask;
        if (j <= i ? (j < h && h <= i) : (j < h || h <= i))
            continue;
        m->b[j] = m->b[i];
        j = i;
    }
    m->b[j].key = 0;
    m->free_ids[m->nfree++] = idx;
}
