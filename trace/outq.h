/*
 * A writer thread behind an output: the sorter (or a reader copying a
 * trace) hands its records over in memory and goes on while the other core
 * formats them (CSV or binary) and the kernel copies them into the page
 * cache.
 *
 * DESIGN
 * A ring of TRACE_OUTQ_BUFS buffers of TRACE_OUTQ_ITEMS items of one size
 * (sorted records, or requests). The producer copies items into the buffer
 * it is filling and submits it when full (or at drain); the thread hands
 * submitted buffers, in order, to the real sink (a CSV or binary writer),
 * which therefore sees exactly the items in the order they were given, as
 * if it had been called directly; only the thread calls it until
 * trace_outq_free returns. The producer blocks only when every buffer
 * waits for the thread (memory: TRACE_OUTQ_BUFS * TRACE_OUTQ_ITEMS items,
 * about 1.5 MB of sorted records). The real sink's first non-zero return
 * is kept; later buffers are dropped (the producer never waits on a dead
 * writer) and every later call returns it. Without a thread
 * (pthread_create failed) the items are handed on synchronously.
 */
#ifndef GPUPROBE_TRACE_OUTQ_H
#define GPUPROBE_TRACE_OUTQ_H

#include <stddef.h>

#include "trace/record.h"

#define TRACE_OUTQ_BUFS 4
#define TRACE_OUTQ_ITEMS 8192

struct trace_outq;

/* Receives n items in order; non-zero stops (kept, returned later). */
typedef int (*trace_outq_fn)(void *ctx, const void *items, size_t n);

/* A queue of items of item_size bytes in front of sink(ctx, ...). NULL
 * when out of memory. */
struct trace_outq *trace_outq_new(size_t item_size, trace_outq_fn sink, void *ctx);
/* Queues items[0..n). 0, or the real sink's non-zero return once it has
 * failed. */
int trace_outq_put(struct trace_outq *q, const void *items, size_t n);
/* A trace_out_sink (q: a queue of struct trace_out) and a trace_sink (q: a
 * queue of struct trace_rec) over trace_outq_put. */
int trace_outq_sink(void *q, const struct trace_out *o, size_t n);
int trace_outq_rec(void *q, const struct trace_rec *r);
/* Room for items built in place: returns where the buffer being filled
 * has free items and lowers *n (>= 1 on entry) to how many fit there (at
 * least 1). Only trace_outq_commit may follow before the next room. */
void *trace_outq_room(struct trace_outq *q, size_t *n);
/* Queues the first n items written at the last room (n <= what it
 * granted). 0, or the real sink's non-zero return once it has failed. */
int trace_outq_commit(struct trace_outq *q, size_t n);
/* Returns once every item queued so far went through the real sink: 0 or
 * its non-zero return. */
int trace_outq_drain(struct trace_outq *q);
/* Drains, stops the thread and frees q; returns what trace_outq_drain
 * returns. NULL is accepted (0). */
int trace_outq_free(struct trace_outq *q);

#endif
