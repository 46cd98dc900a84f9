/*
 * An estimate of how many distinct lines a trace touches, made before the
 * model runs: what the L1 pass's id table (lineid.h) is sized by.
 *
 * DESIGN
 * The id table doubles as it fills; each doubling rehashes every id and
 * takes a table twice as large, whose fresh pages the kernel must zero
 * (on the development machine, measured: the doublings from 1,024 buckets
 * up cost 0.15-0.35 s of the benchmark's 0.7-1.0 s L1 pass). Every line of
 * the trace reaches the L2 at least once (a first use misses the L1), so
 * the table ends up holding every distinct line: sized for them at once,
 * it never doubles. The count comes from a HyperLogLog sketch (Flajolet et
 * al., 2007) of the lines, built in one sequential pass over the input:
 * 4,096 one-byte registers, a standard error of about 1.6%, with the
 * small-range correction (linear counting) for traces of few lines. An
 * estimate sizes a table and decides nothing else: the ids, and every
 * count, are the same whatever it says (a table sized too small doubles
 * as before).
 */
#ifndef GPUPROBE_CACHE_DISTINCT_H
#define GPUPROBE_CACHE_DISTINCT_H

#include <stdint.h>

#include "cache/input.h"

#define CACHE_HLL_BITS 12u
#define CACHE_HLL_REGS (1u << CACHE_HLL_BITS)

struct cache_hll {
    uint8_t reg[CACHE_HLL_REGS];   /* per register: the most leading zeros + 1 seen */
};

void cache_hll_init(struct cache_hll *h);

/* Adds one key (a line number). */
static inline void cache_hll_add(struct cache_hll *h, uint64_t key)
{
    /* a full 64-bit mix (the finalizer of MurmurHash3): the register index
     * takes the top bits, the rank the rest, which must look random */
    uint64_t x = key;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    uint32_t i = (uint32_t)(x >> (64 - CACHE_HLL_BITS));
    uint64_t rest = (x << CACHE_HLL_BITS) | (1ull << (CACHE_HLL_BITS - 1)); /* rank <= 64 - BITS + 1 */
    uint8_t rank = (uint8_t)(__builtin_clzll(rest) + 1);
    if (rank > h->reg[i])
        h->reg[i] = rank;
}

/* The estimated count of distinct keys added. */
double cache_hll_estimate(const struct cache_hll *h);

/* The estimated count of distinct lines (address >> line_shift) of every
 * request of in: one pass over the records, dropping the pages it has
 * read as the model's passes do. */
double cache_distinct_lines(const struct cache_input *in, unsigned line_shift);

#endif
