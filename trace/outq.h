/*
 * A writer thread behind an output descriptor: the sorter hands its
 * formatted output over in memory and goes on sorting while the kernel
 * copies the previous buffers into the page cache on the other core.
 *
 * DESIGN
 * A ring of TRACE_OUTQ_BUFS buffers of cap bytes each. The producer copies
 * bytes into the buffer it is filling and submits it when it is full (or at
 * drain); the thread writes submitted buffers in order with fd_write_all on
 * the descriptor's own offset, so the file receives exactly the bytes in
 * the order they were given, as a synchronous write(2) loop would. The
 * producer blocks only when every buffer is waiting to be written (memory
 * is bounded: TRACE_OUTQ_BUFS * cap). A failed write is remembered (its
 * errno) and later buffers are dropped, so the producer never waits on a
 * dead writer; every call after that returns -1. No fsync anywhere.
 * Without a thread (pthread_create failed) the same calls write
 * synchronously. trace_outq_write and trace_outq_drain have the shape of
 * trace_bin_writer_set_output's hooks.
 */
#ifndef GPUPROBE_TRACE_OUTQ_H
#define GPUPROBE_TRACE_OUTQ_H

#include <stddef.h>

#define TRACE_OUTQ_BUFS 4
#define TRACE_OUTQ_CAP ((size_t)1 << 20)

struct trace_outq;

/* A queue writing to fd (not closed by it) through buffers of cap bytes (0:
 * TRACE_OUTQ_CAP). NULL when out of memory. */
struct trace_outq *trace_outq_new(int fd, size_t cap);
/* Queues p[0..n). 0, or -1 with errno once a write has failed. */
int trace_outq_write(void *q, const void *p, size_t n);
/* Returns once every byte queued so far is written. 0, or -1 with errno. */
int trace_outq_drain(void *q);
/* Drains, stops the thread and frees q. 0, or -1 with errno when a write
 * failed. NULL is accepted (0). */
int trace_outq_free(struct trace_outq *q);

#endif
