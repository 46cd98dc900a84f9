/*
 * Step 1c, coalescing: turning the per-thread requests of one warp into the
 * warp's memory instructions, each a short list of merged requests
 * ("transactions") that reach the L1 one after another.
 *
 * DESIGN (docs/trace-sort.md, "Step 1c")
 * Forming instructions. Each lane of a warp has its own ordered records. The
 * next instruction of the warp is the smallest PC among the lanes' next
 * records (the "min-PC" reconvergence rule): every lane whose next record has
 * that PC takes part, and only those lanes advance. Without divergence every
 * lane's k-th record forms instruction k; with divergence lanes that took
 * another path wait, and each lane's own order is never changed.
 * Merging (steps 4a-4d of Nugteren et al.'s method, HPCA 2014). Participants
 * are taken in lane order (the method's pending set). Policy line128: the
 * instruction's width w (the widest participant) decides the lane groups that
 * may merge: 32 lanes for w <= 4, 16 for 8, 8 for 16 (128 bytes of data per
 * group); inside a group requests with the same line (addr / line_bytes)
 * merge. Policy sector32 (Volta and later): the whole warp is one group and
 * requests with the same 32-byte sector (addr / 32) merge. A merge keeps the
 * PC, the smaller thread id and that thread's address, ORs the dependency
 * flags (equal anyway when the flag is a property of the PC) and widens the
 * width to the smallest power of two covering every merged byte (max end -
 * min start). A load and a store never merge, even at one PC and line (a
 * malformed trace could put both at one PC): the cache model treats them
 * differently. Transactions come out group by group, each group in order of
 * first appearance.
 */
#ifndef GPUPROBE_TRACE_COALESCE_H
#define GPUPROBE_TRACE_COALESCE_H

#include <stddef.h>
#include <stdint.h>

#include "trace/params.h"
#include "trace/record.h"
#include "trace/schedule.h"

/* One warp: for each lane the records it has still to issue, [cur, end).
 * When a lane's records come in pieces (read through a buffer), its bit in
 * `more` is set and refill is called when the piece is used up: it points
 * cur/end at the next piece and returns 1, or returns 0 when there is none
 * (clearing the bit). */
struct trace_warp {
    const struct trace_rec *cur[TRACE_WARP_SIZE];
    const struct trace_rec *end[TRACE_WARP_SIZE];
    uint32_t live; /* bit per lane with records left */
    uint32_t more; /* bit per lane whose records continue past end */
    int (*refill)(void *ctx, struct trace_warp *w, unsigned lane);
    void *refill_ctx;
};

/* One memory instruction of a warp after coalescing. A transaction is a
 * trace_rec whose width may exceed 16 (up to the line or sector). */
struct trace_group {
    uint32_t n;       /* transactions */
    uint32_t dep;     /* 1: the warp needs the data before its next request */
    uint32_t records; /* thread requests merged into them */
    struct trace_rec txn[TRACE_WARP_SIZE];
};

/* Coalescing rule in a form cheap to apply. */
struct trace_coalescer {
    enum trace_coalesce policy;
    unsigned key_shift; /* log2(line) for line128, 5 for sector32 */
};

/* p->line_bytes must be a power of two of at least 32 (validated parameters). */
void trace_coalescer_init(struct trace_coalescer *c, const struct trace_params *p);

/* The method's merge of one instruction's requests, given in lane order:
 * req[i] is the request of lane lane[i], lane[] increasing, n <= 32 (none gives no
 * transaction), each of a valid width (trace_width_valid: a lone request's
 * transaction keeps it as it is). Writes the transactions to g and returns
 * their number. */
uint32_t trace_coalesce(const struct trace_coalescer *c, const struct trace_rec *const *req,
                        const uint8_t *lane, uint32_t n, struct trace_group *g);

/* Forms the warp's next instruction and coalesces it into g; 0 when the warp
 * has nothing left (g untouched), else 1. */
int trace_warp_next(struct trace_warp *w, const struct trace_coalescer *c, struct trace_group *g);

/* Smallest power of two >= x (x >= 1). */
static inline uint64_t trace_pow2_ceil(uint64_t x)
{
    return x <= 1 ? 1 : (uint64_t)1 << (64 - __builtin_clzll(x - 1));
}

#endif
