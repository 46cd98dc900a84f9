/*
 * The response cache (see resp_cache.h).
 */
#include "server/http/resp_cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    char *key;
    uint64_t generation;
    char *body;
    size_t len;
};

struct resp_cache {
    pthread_mutex_t lock;
    struct entry *entries;
    size_t n;
    size_t next;          /* the entry replaced next */
};

struct resp_cache *resp_cache_new(size_t entries)
{
    struct resp_cache *c = calloc(1, sizeof *c);
    if (!c || !(c->entries = calloc(entries, sizeof *c->entries))) {
        free(c);
        return NULL;
    }
    c->n = entries;
    pthread_mutex_init(&c->lock, NULL);
    return c;
}

void resp_cache_free(struct resp_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->entries[i].key);
        free(c->entries[i].body);
    }
    free(c->entries);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static struct entry *find(struct resp_cache *c, const char *key)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->entries[i].key && strcmp(c->entries[i].key, key) == 0)
            return &c->entries[i];
    return NULL;
}

int resp_cache_get(struct resp_cache *c, const char *key, uint64_t generation, char **body,
                   size_t *len)
{
    if (!c)
        return 0;
    int hit = 0;
    pthread_mutex_lock(&c->lock);
    struct entry *e = find(c, key);
    if (e && e->generation == generation && (*body = malloc(e->len ? e->len : 1))) {
        memcpy(*body, e->body, e->len);
        *len = e->len;
        hit = 1;
    }
    pthread_mutex_unlock(&c->lock);
    return hit;
}

void resp_cache_put(struct resp_cache *c, const char *key, uint64_t generation, const char *body,
                    size_t len)
{
    if (!c)
        return;
    char *k = strdup(key), *b = malloc(len ? len : 1);
    if (!k || !b) {
        free(k);
        free(b);
        return;
    }
    memcpy(b, body, len);
    pthread_mutex_lock(&c->lock);
    struct entry *e = find(c, key);
    if (!e) {
        e = &c->entries[c->next];
        c->next = (c->next + 1) % c->n;
    }
    if (e->generation > generation && e->key && strcmp(e->key, key) == 0) {
        /* a newer answer is already here: keep it */
        pthread_mutex_unlock(&c->lock);
        free(k);
        free(b);
        return;
    }
    free(e->key);
    free(e->body);
    *e = (struct entry){k, generation, b, len};
    pthread_mutex_unlock(&c->lock);
}
