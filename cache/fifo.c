/*
 * The fully associative LRU shadow as a ring of last uses (fifo.h).
 */
#include "cache/fifo.h"

#include "cache/bigalloc.h"

#include <stdlib.h>
#include <string.h>

int cache_fa_init(struct cache_fa *f, uint32_t lines)
{
    memset(f, 0, sizeof *f);
    f->lines = lines;
    f->cap = lines > CACHE_NONE / 2 ? CACHE_NONE - 1 : 2 * lines + 64;
    if (!(f->owner = cache_big_alloc(f->cap, sizeof *f->owner, 0)))
        return -1;
    return 0;
}

void cache_fa_free(struct cache_fa *f)
{
    free(f->owner);
    memset(f, 0, sizeof *f);
}

void cache_fa_reset(struct cache_fa *f)
{
    f->next = f->low = f->live = 0;
}

/* How many ring positions ahead pack() asks for the states it renumbers. */
#define PACK_AHEAD 16u

/* Packs the marks to the front, in order (at most lines of cap > lines). */
static void pack(struct cache_fa *f, struct cache_line *lines)
{
    uint32_t k = 0;
    for (uint32_t p = f->low; p < f->next; p++) {
        uint32_t id = f->owner[p];
        /* the states written are anywhere in the line map: asked for ahead */
        if (p + PACK_AHEAD < f->next && f->owner[p + PACK_AHEAD] != CACHE_NONE)
            __builtin_prefetch(&lines[f->owner[p + PACK_AHEAD]], 1);
        if (id == CACHE_NONE)
            continue;
        f->owner[k] = id;
        lines[id].shadow = k++;
    }
    f->next = k;
    f->low = 0;
    f->gen++;
}

int cache_fa_use(struct cache_fa *f, struct cache_line *lines, uint32_t id, uint32_t *evicted)
{
    struct cache_line *l = lines + id;
    int hit = l->shadow != CACHE_NONE;
    *evicted = CACHE_NONE;
    if (hit) {
        f->owner[l->shadow] = CACHE_NONE;
    } else if (f->live == f->lines) {
        while (f->owner[f->low] == CACHE_NONE)
            f->low++;
        uint32_t ev = f->owner[f->low];
        f->owner[f->low++] = CACHE_NONE;
        lines[ev].shadow = CACHE_NONE;
        *evicted = ev;
    } else {
        f->live++;
    }
    if (f->next == f->cap)
        pack(f, lines);
    f->owner[f->next] = id;
    l->shadow = f->next++;
    return hit;
}
