/*
 * Dense line ids (lineid.h): linear probing, doubled at three quarters.
 */
#include "cache/lineid.h"

#include <stdlib.h>

#include "cache/bigalloc.h"

#define INITIAL_BUCKETS 1024u

int cache_lineid_init(struct cache_lineid *m, uint64_t expect)
{
    /* room for expect ids at most three quarters full, and some slack for
     * an estimate a little low (distinct.h: ~1.6% standard error) */
    uint64_t nb = INITIAL_BUCKETS, want = expect + expect / 16;
    while (nb < ((uint64_t)1 << 33) && want * 4 > nb * 3)
        nb *= 2;
    m->n = 0;
    m->mask = nb - 1;
    m->b = cache_big_alloc(nb, sizeof *m->b, 1);
    return m->b ? 0 : -1;
}

void cache_lineid_free(struct cache_lineid *m)
{
    free(m->b);
    m->b = NULL;
    m->mask = 0;
    m->n = 0;
}

static int grow(struct cache_lineid *m)
{
    uint64_t nb = (m->mask + 1) * 2;
    struct cache_bucket *b = cache_big_alloc(nb, sizeof *b, 1);
    if (!b)
        return -1;
    cache_buckets_rehash(m->b, m->mask, b, nb - 1, cache_lineid_hash);
    m->b = b;
    m->mask = nb - 1;
    return 0;
}

uint32_t cache_lineid_get(struct cache_lineid *m, uint64_t line)
{
    uint64_t key = line + 1, j = cache_lineid_hash(key) & m->mask;
    for (; m->b[j].key; j = (j + 1) & m->mask)
        if (m->b[j].key == key)
            return m->b[j].idx;
    if (m->n == CACHE_NONE - 1)
        return CACHE_NONE;
    if (((uint64_t)m->n + 1) * 4 > (m->mask + 1) * 3) {
        if (grow(m))
            return CACHE_NONE;
        for (j = cache_lineid_hash(key) & m->mask; m->b[j].key; j = (j + 1) & m->mask)
            ;
    }
    m->b[j] = (struct cache_bucket){key, m->n};
    return m->n++;
}
