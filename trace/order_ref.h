/*
 * Step 1d, the literal loop: steps 6a-6f of Nugteren et al.'s method (HPCA
 * 2014) as written (a blocked flag per warp, an in-flight set whose every
 * delay is decremented at every 6c, 6d repeating 6c while the set is full),
 * over one SM's blocks collected in memory beforehand. It is the reference
 * the event-driven loop (order.h) is tested against, byte for byte, and the
 * baseline of bench/trace; it is not meant for long traces (memory grows
 * with the SM's requests, time with in-flight requests times ticks).
 *
 * DESIGN
 * Shares nothing with order.c but the coalescer that produced its input and
 * the random generator: residency, readiness, blocking, the policies and
 * the clockless decrement-all in-flight set are written again, as plainly
 * as possible, from the rules in docs/trace-sort.md ("Step 1d").
 */
#ifndef GPUPROBE_TRACE_ORDER_REF_H
#define GPUPROBE_TRACE_ORDER_REF_H

#include <stddef.h>
#include <stdint.h>

#include "trace/coalesce.h"
#include "trace/order.h"
#include "trace/params.h"

/* One warp's instructions, coalesced. */
struct trace_ref_warp {
    size_t ngroups;
    struct trace_group *groups;
};

/* One block: warps_per_block warps (some may have no instructions). */
struct trace_ref_block {
    uint64_t id;
    uint64_t records;
    struct trace_ref_warp *warps;
};

/* Pulls every block of src (in order) and coalesces all their instructions
 * into *blocks (*n of them); free with trace_ref_blocks_free. 0, a negative
 * error of src->next, or -2 when out of memory. */
int trace_ref_collect(const struct trace_params *p, const struct trace_block_src *src,
                      struct trace_ref_block **blocks, size_t *n);
void trace_ref_blocks_free(const struct trace_params *p, struct trace_ref_block *blocks, size_t n);

/* The literal loop over collected blocks; same contract and same output as
 * trace_order_sm. */
int trace_order_ref_sm(const struct trace_params *p, uint32_t sm, const struct trace_ref_block *blocks,
                       size_t nblocks, const struct trace_emit *emit, struct trace_sm_stats *st);

/* The same consulting l1 (order_l1.h), as trace_order_sm_l1 does; l1 NULL
 * is trace_order_ref_sm. */
int trace_order_ref_sm_l1(const struct trace_params *p, uint32_t sm, const struct trace_ref_block *blocks,
                          size_t nblocks, const struct trace_emit *emit, const struct trace_l1_ops *l1,
                          struct trace_sm_stats *st);

#endif
