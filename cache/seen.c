/*
 * The set of lines seen (seen.h): 8-line blocks with a bitmap, linear
 * probing, doubled at three quarters full.
 */
#include "cache/seen.h"

#include "cache/bigalloc.h"

#include <stdlib.h>
#include <string.h>

#define INITIAL_BUCKETS 1024u

int cache_seen_init(struct cache_seen *s)
{
    memset(s, 0, sizeof *s);
    s->key = calloc(INITIAL_BUCKETS, sizeof *s->key);
    s->bits = calloc(INITIAL_BUCKETS, sizeof *s->bits);
    if (!s->key || !s->bits) {
        cache_seen_free(s);
        return -1;
    }
    s->mask = INITIAL_BUCKETS - 1;
    return 0;
}

void cache_seen_free(struct cache_seen *s)
{
    free(s->key);
    free(s->bits);
    memset(s, 0, sizeof *s);
}

void cache_seen_reset(struct cache_seen *s)
{
    memset(s->key, 0, (s->mask + 1) * sizeof *s->key);
    memset(s->bits, 0, (s->mask + 1) * sizeof *s->bits);
    s->n = 0;
}

uint64_t cache_seen_bytes(const struct cache_seen *s)
{
    return (s->mask + 1) * (sizeof *s->key + sizeof *s->bits);
}

static int grow(struct cache_seen *s)
{
    uint64_t nb = (s->mask + 1) * 2;
    uint64_t *key = cache_big_alloc(nb, sizeof *key, 1);
    uint8_t *bits = cache_big_alloc(nb, sizeof *bits, 1);
    if (!key || !bits) {
        free(key);
        free(bits);
        return -1;
    }
    for (uint64_t i = 0; i <= s->mask; i++) {
        if (!s->key[i])
            continue;
        uint64_t j = cache_seen_hash(s->key[i]) & (nb - 1);
        while (key[j])
            j = (j + 1) & (nb - 1);
        key[j] = s->key[i];
        bits[j] = s->bits[i];
    }
    free(s->key);
    free(s->bits);
    s->key = key;
    s->bits = bits;
    s->mask = nb - 1;
    return 0;
}

int cache_seen_has(const struct cache_seen *s, uint64_t line)
{
    uint64_t k = (line >> 3) + 1;
    for (uint64_t j = cache_seen_hash(k) & s->mask; s->key[j]; j = (j + 1) & s->mask)
        if (s->key[j] == k)
            return (s->bits[j] >> (line & 7)) & 1;
    return 0;
}

int cache_seen_add(struct cache_seen *s, uint64_t line)
{
    uint64_t k = (line >> 3) + 1;
    uint8_t bit = (uint8_t)(1u << (line & 7));
    uint64_t j = cache_seen_hash(k) & s->mask;
    for (; s->key[j]; j = (j + 1) & s->mask)
        if (s->key[j] == k) {
            if (s->bits[j] & bit)
                return 0;
            s->bits[j] |= bit;
            return 1;
        }
    if ((s->n + 1) * 4 > (s->mask + 1) * 3) {
        if (grow(s))
            return -1;
        for (j = cache_seen_hash(k) & s->mask; s->key[j]; j = (j + 1) & s->mask)
            ;
    }
    s->key[j] = k;
    s->bits[j] = bit;
    s->n++;
    return 1;
}
