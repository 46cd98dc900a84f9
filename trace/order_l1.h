/*
 * The L1 as the ordering loop (order.h, order_ref.h) consults it when the
 * sorter models cache feedback: what became of each transaction at the
 * moment step 6e issues it (docs/trace-sort.md, "Cache feedback").
 *
 * DESIGN
 * Without it, every transaction the loop issues is a fetch: it holds an
 * MSHR for its drawn delay, and a dependent one holds its warp as long.
 * With it, the loop asks the SM's L1 about each transaction, at the clock
 * it issues at, and gets one of:
 *   FETCH   it goes below: holds an MSHR, back after its drawn delay;
 *   HIT     its data is in the L1: back after hit_latency, no MSHR — so a
 *           warp whose loads hit runs ahead of one whose loads miss;
 *   MERGED  it joins the fetch in flight for its line (one MSHR entry,
 *           no new fetch): back when that fetch is, no MSHR of its own;
 *   STALL   it would fetch, and the loop said no MSHR is free: nothing
 *           was changed; the loop waits for a fetch to return and asks
 *           again (step 6d, which then holds only misses back).
 * trace/ knows nothing of how a cache works: cache/ sits above trace/ (it
 * reads the sorter's output through trace/'s readers), so the caller hands
 * the loop this table of functions, filled by cache/feedback.h from the
 * cache model's engines. NULL means today's loop, byte for byte.
 * Contracts the loop relies on (asserted there): an answer depends only on
 * the L1's state and the clock, and the state changes only by an access
 * that did not STALL; a MERGED request's `done` lies after its clock and no
 * later than the fetch it joins (which the loop issued, so within the
 * longest delay).
 */
#ifndef GPUPROBE_TRACE_ORDER_L1_H
#define GPUPROBE_TRACE_ORDER_L1_H

#include <stdint.h>

enum trace_l1_verdict { TRACE_L1_FETCH, TRACE_L1_HIT, TRACE_L1_MERGED, TRACE_L1_STALL };

struct trace_l1_answer {
    enum trace_l1_verdict verdict;
    uint64_t done;      /* MERGED: the clock at which the fetch it joined returns */
};

struct trace_l1_ops {
    /* A fresh, empty L1 for SM sm (an SM's loop opens one and closes it
     * when done; two sorting threads hold one each). NULL: out of memory. */
    void *(*open)(void *ctx, uint32_t sm);
    /* The transaction [addr, addr + width) issued at clock t, whose fetch,
     * if it makes one, returns at t + delay; mshr_free: whether the loop
     * has an MSHR for a fetch. 0 with *a filled, or -1 (out of memory, an
     * internal inconsistency: the loop fails the SM). */
    int (*access)(void *l1, uint64_t addr, uint32_t width, uint64_t t, uint32_t delay, int mshr_free,
                  struct trace_l1_answer *a);
    void (*close)(void *l1);
    /* Optional (NULL: none): asks the processor for what an access to addr
     * will look at; the loop calls it for every transaction of an
     * instruction before the first is issued. Changes nothing. */
    void (*prefetch)(void *l1, uint64_t addr);
    void *ctx;
    uint32_t hit_latency; /* ticks a hit is in flight; 0: a hit never holds its warp */
};

#endif
