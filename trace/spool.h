/*
 * Spooling: turns requests in any thread order (text traces interleave
 * threads: NVBit and Accel-Sim print one line per warp instruction) into a
 * thread-major requests file, the order the sorter reads.
 *
 * DESIGN
 * An external merge sort that is stable by thread id, so each thread's
 * records keep their input order (within a thread the input order is the
 * true order). Records collect in a buffer of mem_bytes / 2; a full buffer
 * is sorted (LSD radix sort on the thread id, which is stable) and written
 * as a run to an unlinked temporary file; finishing merges the runs with a
 * heap keyed by (thread id, run number), each run read through its own
 * small buffer. Memory is bounded by mem_bytes whatever the trace's length;
 * disk use is the trace's size, once. A trace that fits in one buffer never
 * touches the disk. trace_spool_add is a trace_sink, so a text reader feeds
 * it directly.
 */
#ifndef GPUPROBE_TRACE_SPOOL_H
#define GPUPROBE_TRACE_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "trace/binfmt.h"
#include "trace/record.h"

#define TRACE_SPOOL_DEFAULT_MEM ((size_t)64 << 20)

struct trace_spool;

/* tmpdir NULL: $TMPDIR, else /tmp. mem_bytes 0: TRACE_SPOOL_DEFAULT_MEM
 * (at least 64 KiB is used). NULL with err when out of memory. */
struct trace_spool *trace_spool_new(const char *tmpdir, size_t mem_bytes, struct trace_err *err);

/* A trace_sink: takes one (already checked) request. Non-zero (1) after a
 * failure, whose message trace_spool_finish reports. */
int trace_spool_add(void *spool, const struct trace_rec *r);

uint64_t trace_spool_count(const struct trace_spool *s);

/* Writes every request, thread-major, to the writer (which then marks its
 * file thread-major on close). 0 or -1 with err; the writer's own failures
 * are reported by trace_bin_writer_close. */
int trace_spool_finish(struct trace_spool *s, struct trace_bin_writer *w, struct trace_err *err);

void trace_spool_free(struct trace_spool *s);

#endif
