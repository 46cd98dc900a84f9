/*
 * Memory-trace records: the one in-memory form every trace format is read
 * into and written from, and the form the L1 arrival-order sorter works on.
 *
 * DESIGN
 * A trace is, per thread, the ordered list of its global-memory requests
 * (see docs/trace-sort.md). Readers turn any input format into a stream of
 * trace_rec handed to a sink callback, in the order of the input; writers
 * take trace_rec (input side) or trace_out (sorted side). Errors carry the
 * position of the first bad record (line for text, byte offset for both), so
 * the API can answer "line 17: width must be 1, 2, 4, 8 or 16".
 * A record says whether it reads or writes memory (store): the cache model
 * needs it for the write policies (docs/cache-model.md). Atomics and
 * reductions count as stores: they modify memory, and on NVIDIA GPUs they
 * are performed at the L2 like stores, never in the L1. Every format that
 * predates the flag reads as all loads.
 * This folder knows nothing of CUDA or HTTP.
 */
#ifndef GPUPROBE_TRACE_RECORD_H
#define GPUPROBE_TRACE_RECORD_H

#include <stddef.h>
#include <stdint.h>

/* One request of one thread, as traced. */
struct trace_rec {
    uint64_t tid;      /* global linear thread id */
    uint64_t pc;       /* of the memory instruction */
    uint64_t addr;
    uint32_t width;    /* bytes: 1, 2, 4, 8 or 16 */
    uint8_t dep;       /* 1: the loaded value is used before the thread's next request */
    uint8_t store;     /* 1: the request writes memory (a store, an atomic or a reduction:
                          all three go through the caches' write path); 0: a load */
    uint16_t reserved; /* 0 */
};

/* One request as it reaches an SM's L1, after coalescing and ordering. */
struct trace_out {
    uint32_t sm;
    uint64_t seq;      /* position in that SM's stream, from 0 */
    uint64_t tid;      /* the thread whose address the (merged) request keeps */
    uint64_t pc;
    uint64_t addr;
    uint32_t width;
    uint32_t dep;
    uint32_t store;    /* as trace_rec's; a merged request never mixes loads and stores */
};

/* Where and why reading stopped. */
struct trace_err {
    uint64_t line;     /* 1-based line for text formats; 0 if not applicable */
    uint64_t offset;   /* byte offset of the start of the bad record */
    char msg[256];
};

/* Receives records in input order; a non-zero return stops the reader,
 * which then returns that value. */
typedef int (*trace_sink)(void *ctx, const struct trace_rec *r);

/* Receives sorted records, n at a time, in output order (SM by SM, seq
 * ascending); a non-zero return stops the sorter, which then returns that
 * value (use positive values: the sorter's own errors are negative). */
typedef int (*trace_out_sink)(void *ctx, const struct trace_out *o, size_t n);

/* What a reader returns besides 0 (all read) and a sink's own non-zero
 * value; sinks should stop with positive values to stay distinguishable.
 * Both fill the trace_err. */
enum {
    TRACE_EINPUT = -1, /* malformed input: trace_err names the first bad record */
    TRACE_ENOMEM = -2, /* out of memory */
};

/* Fills err (if not NULL) with a position and a formatted reason. Text
 * readers report through scan.h, which takes the position from their line. */
void trace_err_set(struct trace_err *err, uint64_t line, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Whether width bytes from addr stay below 2^64 (width >= 1): a record
 * whose bytes pass it is refused by every reader. */
static inline int trace_span_fits(uint64_t addr, uint32_t width)
{
    return addr <= UINT64_MAX - (width - 1);
}

/* Valid widths are powers of two from 1 to 16. */
static inline int trace_width_valid(uint32_t w)
{
    return w == 1 || w == 2 || w == 4 || w == 8 || w == 16;
}

#endif
