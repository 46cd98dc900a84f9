/*
 * The L1 pass's single-producer, single-consumer queue of blocks
 * (handoff.h).
 */
#include "cache/handoff.h"

#include <stdlib.h>
#include <string.h>

int cache_handoff_init(struct cache_handoff *h)
{
    memset(h, 0, sizeof *h);
    h->blk = malloc((size_t)CACHE_HANDOFF_BLOCKS * CACHE_HANDOFF_BLOCK * sizeof *h->blk);
    if (!h->blk)
        return -1;
    if (pthread_mutex_init(&h->mu, NULL)) {
        free(h->blk);
        return -1;
    }
    if (pthread_cond_init(&h->cv, NULL)) {
        pthread_mutex_destroy(&h->mu);
        free(h->blk);
        return -1;
    }
    return 0;
}

void cache_handoff_free(struct cache_handoff *h)
{
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->mu);
    free(h->blk);
    h->blk = NULL;
}

/* Producer: hands the block being filled over (if it has fetches), then
 * waits for a free one. 0, or -1 when the consumer has failed. */
static int hand_over(struct cache_handoff *h)
{
    pthread_mutex_lock(&h->mu);
    if (h->used) {
        h->fill[h->made % CACHE_HANDOFF_BLOCKS] = h->used;
        h->made++;
        h->used = 0;
        pthread_cond_broadcast(&h->cv);
    }
    while (!h->failed && h->made - h->taken == CACHE_HANDOFF_BLOCKS)
        pthread_cond_wait(&h->cv, &h->mu);
    int rc = h->failed ? -1 : 0;
    pthread_mutex_unlock(&h->mu);
    return rc;
}

struct cache_l1_out *cache_handoff_slot(struct cache_handoff *h)
{
    if (h->used == CACHE_HANDOFF_BLOCK && hand_over(h))
        return NULL;
    /* the producer alone writes made, so reads it without the lock; the
     * block it fills is its own until handed over */
    return &h->blk[(h->made % CACHE_HANDOFF_BLOCKS) * CACHE_HANDOFF_BLOCK + h->used++];
}

void cache_handoff_close(struct cache_handoff *h)
{
    pthread_mutex_lock(&h->mu);
    if (h->used) {
        h->fill[h->made % CACHE_HANDOFF_BLOCKS] = h->used;
        h->made++;
        h->used = 0;
    }
    h->closed = 1;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

const struct cache_l1_out *cache_handoff_take(struct cache_handoff *h, uint32_t *n)
{
    pthread_mutex_lock(&h->mu);
    while (h->taken == h->made && !h->closed)
        pthread_cond_wait(&h->cv, &h->mu);
    const struct cache_l1_out *b = NULL;
    if (h->taken < h->made) {
        uint32_t k = (uint32_t)(h->taken % CACHE_HANDOFF_BLOCKS);
        *n = h->fill[k];
        b = &h->blk[(size_t)k * CACHE_HANDOFF_BLOCK];
    }
    pthread_mutex_unlock(&h->mu);
    return b;
}

void cache_handoff_done(struct cache_handoff *h)
{
    pthread_mutex_lock(&h->mu);
    h->taken++;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

void cache_handoff_fail(struct cache_handoff *h)
{
    pthread_mutex_lock(&h->mu);
    h->failed = 1;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
}
