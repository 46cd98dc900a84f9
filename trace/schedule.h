/*
 * Step 1b, thread scheduling: thread -> warp -> block -> SM.
 *
 * DESIGN (docs/trace-sort.md, "Step 1b")
 * A thread's block is tid / threads_per_block and its place in the block is
 * tid % threads_per_block; warps are cut inside a block (warp w holds the
 * block's threads 32w .. 32w+31), so a block whose size is not a multiple of
 * 32 ends in a partial warp. With threads_per_block a multiple of 32 this is
 * the warp_id = tid / 32, block_id = warp_id / warps_per_block of Nugteren
 * et al.'s method (HPCA 2014). The method's sm_id = block_id %
 * num_blocks_per_sm cannot be meant literally (it ignores the number of
 * SMs); blocks are placed statically instead:
 *   placement rr   (default): block b runs on SM b % sms — the hardware's
 *                   dealing of blocks to SMs one at a time, in order;
 *   placement fill: SMs are filled blocks_per_sm at a time: in wave
 *                   w = b / (sms * blocks_per_sm), block b goes to SM
 *                   (b % (sms * blocks_per_sm)) / blocks_per_sm;
 *   placement dealt: block b goes to SM wave[b % (sms * blocks_per_sm)],
 *                   the first wave dealt in the order the device's memory
 *                   probe measured (trace/deal.h).
 * The list of an SM's blocks is fixed before ordering (so SMs stay
 * independent, as the method's task groups are); when each of them becomes
 * resident is decided by the ordering loop (order.h): at most blocks_per_sm
 * at a time, the next one taking the slot of one that finished.
 */
#ifndef GPUPROBE_TRACE_SCHEDULE_H
#define GPUPROBE_TRACE_SCHEDULE_H

#include <stdint.h>

#include "trace/params.h"

#define TRACE_WARP_SIZE 32u

/* The block of a thread. */
static inline uint64_t trace_sched_block(const struct trace_params *p, uint64_t tid)
{
    return tid / p->threads_per_block;
}

/* A thread's warp within its block, and its lane within that warp. */
static inline uint32_t trace_sched_warp_in_block(const struct trace_params *p, uint64_t tid)
{
    return (uint32_t)(tid % p->threads_per_block) / TRACE_WARP_SIZE;
}
static inline uint32_t trace_sched_lane(const struct trace_params *p, uint64_t tid)
{
    return (uint32_t)(tid % p->threads_per_block) % TRACE_WARP_SIZE;
}

/* Threads of warp w of a block (32, or fewer for the last warp). */
uint32_t trace_sched_warp_threads(const struct trace_params *p, uint32_t w);

/* The SM of block b; wave is trace_deal_placement's table (NULL unless
 * the placement is dealt). */
uint32_t trace_sched_block_sm(const struct trace_params *p, const uint32_t *wave, uint64_t b);

/* The k-th block (k from 0) placed on SM sm by rr or fill; UINT64_MAX when
 * that overflows. */
uint64_t trace_sched_sm_block(const struct trace_params *p, uint32_t sm, uint64_t k);

#endif
