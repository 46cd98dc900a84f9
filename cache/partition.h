/*
 * The L2 as two partitions (Hopper's; docs/cache-model.md, "The L2's
 * partitions"): which partition an SM reads through, and which one a line
 * is homed in.
 *
 * DESIGN
 * Both are what the memory probe's partition search measured on a device
 * (probes/l2_parts.h: "l2_partitions"): the SMs' partitions by number, and
 * the home of a line as a parity of address bits below the 2 MiB page.
 * Above the page the physical frame decides, which a trace does not know;
 * the parity of the virtual address's bits there stands in for it (any
 * fixed function of the frame spreads pages over the homes the same way on
 * average). The sorter numbers SMs as the hardware does (%smid); an SM the
 * probe did not measure, or past its count, reads through partition
 * sm mod 2.
 * The model (model.c) gives each partition an L2 of half the size. A
 * request looks up its SM's partition; what misses there, for a line homed
 * in the other partition, is looked up there too (over the fabric) before
 * memory; both lookups fill, so the near partition keeps a copy — what the
 * probe's second reads show the hardware does.
 */
#ifndef GPUPROBE_CACHE_PARTITION_H
#define GPUPROBE_CACHE_PARTITION_H

#include <stddef.h>
#include <stdint.h>

#include "cache/geometry.h"

#define CACHE_PART_MAX_SMS 1024
#define CACHE_PART_PAGE_BITS 21

struct cache_parts {
    int count;                            /* 2, or 0/1: one L2 */
    uint32_t sms;                         /* SMs the probe measured */
    signed char sm_part[CACHE_PART_MAX_SMS]; /* 0 or 1; -1 not measured */
    uint64_t home_mask;                   /* address bits below the page */
};

/* The geometry of one partition of the checked L2 l2: half its size, its
 * ways kept (a fully associative L2 gives fully associative halves), checked.
 * 0, or -1 with the reason in msg when the half is not whole sets. */
int cache_part_geom(const struct cache_geom *l2, struct cache_geom *half, char *msg, size_t msglen);

/* The partition SM sm reads through. */
static inline int cache_part_of_sm(const struct cache_parts *p, uint32_t sm)
{
    int k = sm < p->sms ? p->sm_part[sm] : -1;
    return k >= 0 ? k : (int)(sm & 1);
}

/* The partition the line holding byte address addr is homed in. */
static inline int cache_part_home(const struct cache_parts *p, uint64_t addr)
{
    uint64_t low = addr & (((uint64_t)1 << CACHE_PART_PAGE_BITS) - 1) & p->home_mask;
    return (__builtin_parityll(low) ^ __builtin_parityll(addr >> CACHE_PART_PAGE_BITS)) & 1;
}

#endif
