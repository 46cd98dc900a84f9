/*
 * Large tables on transparent huge pages (bigalloc.h).
 */
#include "cache/bigalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)

void *cache_big_alloc(size_t n, size_t size, int zero)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    size_t bytes = n * size;
    if (bytes < HUGE_PAGE / 2)
        return zero ? calloc(n ? n : 1, size ? size : 1) : malloc(bytes ? bytes : 1);
    /* whole huge pages: a 1.6 MiB table (the L2's LRU rows) is one page */
    size_t whole = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    void *p;
    if (posix_memalign(&p, HUGE_PAGE, whole))
        return NULL;
    madvise(p, whole, MADV_HUGEPAGE); /* advice: ignored where unsupported */
    if (zero)
        memset(p, 0, bytes);
    return p;
}

void *cache_big_grow(void *old, size_t n_old, size_t n_new, size_t size)
{
    void *p = cache_big_alloc(n_new, size, 0);
    if (!p)
        return NULL;
    memcpy(p, old, (n_old < n_new ? n_old : n_new) * size);
    free(old);
    return p;
}
