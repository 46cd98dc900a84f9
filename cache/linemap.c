/*
 * The line map (linemap.h): open addressing, linear probing, a
 * multiplicative hash of the line number.
 */
#include "cache/linemap.h"

#include <stdlib.h>
#include <string.h>

#define INITIAL_BUCKETS 1024u
#define hash cache_linemap_hash


int cache_linemap_init(struct cache_linemap *m)
{
    memset(m, 0, sizeof *m);
    m->b = calloc(INITIAL_BUCKETS, sizeof *m->b);
    m->lines = malloc(INITIAL_BUCKETS / 2 * sizeof *m->lines);
    if (!m->b || !m->lines) {
        cache_linemap_free(m);
        return -1;
    }
    m->mask = INITIAL_BUCKETS - 1;
    m->cap = INITIAL_BUCKETS / 2;
    return 0;
}

void cache_linemap_free(struct cache_linemap *m)
{
    free(m->b);
    free(m->lines);
    memset(m, 0, sizeof *m);
}

void cache_linemap_reset(struct cache_linemap *m)
{
    memset(m->b, 0, (m->mask + 1) * sizeof *m->b);
    m->n = 0;
}

static int grow(struct cache_linemap *m)
{
    uint64_t nb = (m->mask + 1) * 2;
    struct cache_bucket *b = calloc(nb, sizeof *b);
    struct cache_line *lines = realloc(m->lines, nb / 2 * sizeof *lines);
    if (!b || !lines) {
        free(b);
        if (lines)
            m->lines = lines;
        return -1;
    }
    m->lines = lines;
    for (uint64_t i = 0; i <= m->mask; i++) {
        if (!m->b[i].key)
            continue;
        uint64_t j = hash(m->b[i].key) & (nb - 1);
        while (b[j].key)
            j = (j + 1) & (nb - 1);
        b[j] = m->b[i];
    }
    free(m->b);
    m->b = b;
    m->mask = nb - 1;
    m->cap = (uint32_t)(nb / 2 < CACHE_NONE ? nb / 2 : CACHE_NONE);
    return 0;
}

uint32_t cache_linemap_get(struct cache_linemap *m, uint64_t line, int *fresh)
{
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
    if (m->n >= m->cap) {
        if (m->n == CACHE_NONE - 1 || grow(m))
            return CACHE_NONE;
        j = hash(key) & m->mask;
        while (m->b[j].key)
            j = (j + 1) & m->mask;
    }
    uint32_t idx = m->n++;
    m->b[j] = (struct cache_bucket){key, idx};
    m->lines[idx] = (struct cache_line){0, CACHE_NONE, CACHE_NONE, 0, 0};
    *fresh = 1;
    return idx;
}
