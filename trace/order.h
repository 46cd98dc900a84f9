/*
 * Step 1d, ordering one SM's task group (the loop 6a-6f of Nugteren et al.'s
 * method, HPCA 2014), event-driven.
 *
 * DESIGN (docs/trace-sort.md, "Step 1d" states the model both loops follow)
 * The unit the loop schedules is a warp (after coalescing, the method's
 * "thread" of 6b is the warp: its threads issue in lockstep); what 6b takes
 * from it is its next instruction, whose transactions then go through
 * 6c-6e one by one. A warp whose instruction has the dependency flag is
 * blocked after it until every transaction of that instruction returned.
 * Time is a counter `clock` that advances by one per 6c; a request issued at
 * clock c with delay T leaves the in-flight set at clock c + T, which is the
 * tick at which the method's decremented delay reaches 0.
 * This loop never decrements anything: in-flight requests sit in a timing
 * wheel (or, for delay ranges of 65536 ticks and more, a min-heap) by
 * completion time; a busy LSU (6d) or a time with every warp blocked
 * jumps the clock straight to the next completion, counting the skipped
 * ticks as stalls. Ready warps are a bitmap over resident warp slots, so
 * round-robin is a find-next-set-bit. Blocks are asked for one at a time
 * (trace_block_src), so memory is bounded by the resident warps, not by the
 * trace. order_ref.h has the literal loop that tests compare this one with.
 * Cache feedback (order_l1.h, trace_order_sm_l1): the loop can consult the
 * SM's L1 for each transaction it issues; a hit or a request merged into a
 * fetch in flight then takes no MSHR and holds its warp only until its data
 * is back, and only a fetch waits for a free MSHR in 6d.
 * Output (trace_emit): trace_out batches to a sink, or each record encoded
 * in the binary format at 6e straight into memory the output hands out
 * (trace_bin_room): the record's only copy before the output's write.
 */
#ifndef GPUPROBE_TRACE_ORDER_H
#define GPUPROBE_TRACE_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "trace/binfmt.h"
#include "trace/coalesce.h"
#include "trace/order_l1.h"
#include "trace/params.h"
#include "trace/record.h"

/* Where an SM's blocks come from, in the SM's order (schedule.h). */
struct trace_block_src {
    /* Fills the warps (warps_per_block of them, zeroed) of the next block
     * to become resident in `slot`, its id and its number of requests; 1, 0
     * when the SM has no more blocks, or a negative value on error (returned
     * by the loop). */
    int (*next)(void *ctx, uint32_t slot, uint64_t *block, uint64_t *records, struct trace_warp *warps);
    /* Optional: the block in `slot` finished. */
    void (*retire)(void *ctx, uint32_t slot);
    void *ctx;
};

/* Where the ordered stream goes: batches of records, in order, to sink; or,
 * when bin is set, encoded in the binary format's sorted records straight
 * into the memory bin hands out (sink is then not called). The records and
 * their order are the same either way. */
struct trace_emit {
    trace_out_sink sink;
    void *ctx;
    const struct trace_bin_room *bin;
};

/* What happened on one SM. Both loops produce the same figures. */
struct trace_sm_stats {
    uint64_t blocks;            /* blocks that became resident */
    uint64_t warps;             /* warps with at least one request */
    uint64_t records_in;        /* thread requests */
    uint64_t instructions;      /* warp instructions (6b picks) */
    uint64_t requests_out;      /* transactions emitted */
    uint64_t ticks;             /* executions of 6c, including stalls */
    uint64_t mshr_stall_ticks;  /* 6c repeated because the MSHRs were full (6d) */
    uint64_t idle_ticks;        /* 6c run because every resident warp was blocked */
    uint64_t dep_blocks;        /* instructions after which their warp had to wait */
    uint64_t max_in_flight;     /* the most MSHRs in use (fetches in flight) at once */
    uint64_t l1_hits;           /* with an L1 (order_l1.h): transactions that hit */
    uint64_t l1_merged;         /* with an L1: transactions merged into a fetch in flight */
};

/* Orders one SM's blocks; emits trace_out records with this sm and seq from
 * 0. p must be resolved and valid, and sm < p->sms (both asserted). 0, a negative error from src->next, -2
 * for an internal inconsistency or out of memory, or the sink's non-zero
 * return. */
int trace_order_sm(const struct trace_params *p, uint32_t sm, const struct trace_block_src *src,
                   const struct trace_emit *emit, struct trace_sm_stats *st);

/* The same, consulting l1 (order_l1.h) for every transaction it issues:
 * hits and merged requests take no MSHR and hold their warp only until
 * their data is back; only fetches wait for a free MSHR (6d). l1 NULL is
 * trace_order_sm. */
int trace_order_sm_l1(const struct trace_params *p, uint32_t sm, const struct trace_block_src *src,
                      const struct trace_emit *emit, const struct trace_l1_ops *l1, struct trace_sm_stats *st);

#endif
