/*
 * Memory for the model's large random-access tables (the L2's line map,
 * seen set, shadow and stack), on huge pages where the kernel gives them.
 *
 * DESIGN
 * The L2's lookups land anywhere in tables of tens of megabytes: with 4 KiB
 * pages nearly every one is a TLB miss as well as a cache miss, and the
 * page walk's own loads miss too. Tables of 2 MiB and more are aligned to
 * 2 MiB (tables of 1 MiB and more rounded up to whole huge pages) and
 * marked MADV_HUGEPAGE (transparent huge pages are commonly
 * enabled "madvise" only), so one TLB entry covers 512 times more. Where
 * the kernel has no huge pages the advice is ignored and the memory is
 * ordinary. Freed with free().
 */
#ifndef GPUPROBE_CACHE_BIGALLOC_H
#define GPUPROBE_CACHE_BIGALLOC_H

#include <stddef.h>

/* n * size bytes, zeroed when zero; NULL out of memory (or on overflow). */
void *cache_big_alloc(size_t n, size_t size, int zero);

/* A new table of n_new elements holding the first n_old of old (freed);
 * NULL out of memory, old then kept. */
void *cache_big_grow(void *old, size_t n_old, size_t n_new, size_t size);

#endif
