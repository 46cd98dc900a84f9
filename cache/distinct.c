/*
 * The distinct lines of a trace, estimated (distinct.h).
 */
#include "cache/distinct.h"

#include <math.h>
#include <string.h>

void cache_hll_init(struct cache_hll *h)
{
    memset(h->reg, 0, sizeof h->reg);
}

double cache_hll_estimate(const struct cache_hll *h)
{
    const double m = CACHE_HLL_REGS;
    double sum = 0;
    uint32_t zeros = 0;
    for (uint32_t i = 0; i < CACHE_HLL_REGS; i++) {
        sum += ldexp(1.0, -(int)h->reg[i]);
        zeros += h->reg[i] == 0;
    }
    double alpha = 0.7213 / (1.0 + 1.079 / m);
    double e = alpha * m * m / sum;
    /* few keys: most registers still empty, where linear counting is the
     * better estimate (the sketch's small-range correction) */
    if (e <= 2.5 * m && zeros)
        e = m * log(m / zeros);
    return e;
}

double cache_distinct_lines(const struct cache_input *in, unsigned line_shift)
{
    struct cache_hll h;
    cache_hll_init(&h);
    for (uint32_t s = 0; s < in->sms; s++) {
        for (uint64_t i = 0; i < in->len[s]; i++) {
            uint64_t seq, addr;
            uint32_t width;
            int store;
            cache_input_req(in, s, i, &seq, &addr, &width, &store);
            cache_hll_add(&h, addr >> line_shift);
            if ((i & 0xffff) == 0xffff)
                cache_input_release(in, s, i);
        }
        cache_input_release(in, s, in->len[s]);
    }
    return cache_hll_estimate(&h);
}
