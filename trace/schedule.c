/*
 * Step 1b: placement of blocks on SMs (see schedule.h for the rules).
 */
#include "trace/schedule.h"

#include <assert.h>

uint32_t trace_sched_warp_threads(const struct trace_params *p, uint32_t w)
{
    uint32_t first = w * TRACE_WARP_SIZE;
    if (first >= p->threads_per_block)
        return 0;
    uint32_t left = p->threads_per_block - first;
    return left < TRACE_WARP_SIZE ? left : TRACE_WARP_SIZE;
}

uint32_t trace_sched_block_sm(const struct trace_params *p, const uint32_t *wave, uint64_t b)
{
    assert(p->sms >= 1 && p->blocks_per_sm >= 1); /* resolved parameters */
    assert((p->placement == TRACE_PLACEMENT_DEALT) == (wave != NULL));
    uint64_t wave_n = (uint64_t)p->sms * p->blocks_per_sm;
    if (p->placement == TRACE_PLACEMENT_DEALT)
        return wave[b % wave_n];
    if (p->placement == TRACE_PLACEMENT_FILL)
        return (uint32_t)((b % wave_n) / p->blocks_per_sm);
    return (uint32_t)(b % p->sms);
}

uint64_t trace_sched_sm_block(const struct trace_params *p, uint32_t sm, uint64_t k)
{
    assert(sm < p->sms && p->blocks_per_sm >= 1 && p->placement != TRACE_PLACEMENT_DEALT);
    if (p->placement == TRACE_PLACEMENT_FILL) {
        uint64_t wave = (uint64_t)p->sms * p->blocks_per_sm;
        uint64_t w = k / p->blocks_per_sm;
        if (w > (UINT64_MAX - wave) / wave)
            return UINT64_MAX;
        return w * wave + (uint64_t)sm * p->blocks_per_sm + k % p->blocks_per_sm;
    }
    if (k > (UINT64_MAX - sm) / p->sms)
        return UINT64_MAX;
    return k * p->sms + sm;
}
