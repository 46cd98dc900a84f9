/*
 * Interned strings (see strtab.h).
 */
#include "fleet/strtab.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

void strtab_init(struct strtab *t)
{
    memset(t, 0, sizeof *t);
}

void strtab_free(struct strtab *t)
{
    for (uint32_t i = 0; i < t->n; i++)
        free(t->strs[i]);
    free(t->strs);
    free(t->slots);
    strtab_init(t);
}

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    return h;
}

/* The slot holding s, or the empty slot where it would go. */
static size_t slot_of(const struct strtab *t, const char *s)
{
    size_t i = hash(s) & (t->nslots - 1);
    while (t->slots[i] && strcmp(t->strs[t->slots[i] - 1], s) != 0)
        i = (i + 1) & (t->nslots - 1);
    return i;
}

/* Doubles the slots (kept at most half full). */
static int grow_slots(struct strtab *t)
{
    size_t n = t->nslots ? t->nslots * 2 : 64;
    uint32_t *slots = calloc(n, sizeof *slots);
    if (!slots)
        return -1;
    uint32_t *old = t->slots;
    size_t oldn = t->nslots;
    t->slots = slots;
    t->nslots = n;
    for (size_t i = 0; i < oldn; i++)
        if (old[i])
            t->slots[slot_of(t, t->strs[old[i] - 1])] = old[i];
    free(old);
    return 0;
}

uint32_t strtab_find(const struct strtab *t, const char *s)
{
    if (!t->nslots)
        return UINT32_MAX;
    uint32_t v = t->slots[slot_of(t, s)];
    return v ? v - 1 : UINT32_MAX;
}

uint32_t strtab_intern(struct strtab *t, const char *s)
{
    uint32_t id = strtab_find(t, s);
    if (id != UINT32_MAX)
        return id;
    if ((size_t)(t->n + 1) * 2 > t->nslots && grow_slots(t) != 0)
        return UINT32_MAX;
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 64;
        char **strs = realloc(t->strs, cap * sizeof *strs);
        if (!strs)
            return UINT32_MAX;
        t->strs = strs;
        t->cap = cap;
    }
    char *copy = strdup(s);
    if (!copy)
        return UINT32_MAX;
    t->strs[t->n] = copy;
    t->slots[slot_of(t, s)] = t->n + 1;
    return t->n++;
}

const char *strtab_str(const struct strtab *t, uint32_t id)
{
    assert(id < t->n);
    return t->strs[id];
}
