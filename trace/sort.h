/*
 * The trace sorter: requests in, each SM's L1 arrival order out
 * (docs/trace-sort.md). Runs step 1b (schedule.h), 1c (coalesce.h) and 1d
 * (order.h, or order_ref.h on request) SM by SM, and keeps a summary.
 *
 * DESIGN
 * Input is thread-major requests: sorted by thread id, each thread's
 * records in their order — a binary requests file (mapped, read in place),
 * or an array. A binary file that is not thread-major is first spooled
 * (spool.h) into a temporary one; text formats are read by their readers
 * into a spool, or into a binary file, by the caller.
 * One sequential pass first checks every record and builds a block index
 * (for each thread block present: its id and first record, 24 bytes per
 * block), so every error is reported, with its byte offset, before any
 * output; it drops the pages it has read as it goes (with two threads, each
 * checks one half of the trace, and the first error in the file is the one
 * reported). Then each SM in turn is
 * ordered: its blocks are taken from the index as the loop makes room. A
 * small block (up to 256 KiB of records, from a file) is copied whole into
 * its slot's buffer (pread): the mapping would drop pages in 2 MiB windows
 * (below), and a window holds many small blocks of other SMs, each mapped
 * and dropped again once per SM, so the kernel's page-table work, not the
 * copy, dominated a trace of small blocks. A block of up to 1 MiB is read
 * in place from the mapping and its
 * pages are dropped when it finishes; a larger block (threads with thousands
 * of requests) is read through a buffer per thread (pread; 16 KiB while an
 * SM's such buffers stay within 8 MiB, else 4 KiB; the block split into
 * threads from 64 KiB reads, a long thread's end found by a few
 * one-record reads), because a
 * page fault maps a whole large folio (up to 2 MiB) and the consumed pages of
 * threads spread over a big block could not be dropped one by one. Resident
 * memory is thus the resident threads of one SM (their warps, buffers and
 * copies),
 * the index, and a few MiB of mapped trace — not the trace's length.
 * Output: trace_out records, SM 0's whole stream first, through a
 * trace_out_sink in batches (binary writer, CSV writer, HTTP stream...);
 * or, for a binary output, the same records encoded by the ordering loop
 * straight into memory the output hands out (trace_sort_opts.bin), so a
 * record's bytes are written once before write(2) takes them.
 */
#ifndef GPUPROBE_TRACE_SORT_H
#define GPUPROBE_TRACE_SORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "trace/binfmt.h"
#include "trace/order.h"
#include "trace/params.h"
#include "trace/record.h"

/* Return values besides 0 and a sink's own non-zero value (the same values
 * as record.h's TRACE_EINPUT and TRACE_ENOMEM). */
#define TRACE_SORT_EINPUT (-1) /* bad input or parameters: err says which, and where */
#define TRACE_SORT_ESYS (-2)   /* out of memory, I/O: err says what */

/* Blocks with more bytes of records than this are read through per-thread
 * buffers instead of in place (see the DESIGN above). */
#define TRACE_SORT_STREAM_ABOVE ((size_t)1 << 20)
#define TRACE_SORT_COPY_UPTO ((size_t)256 << 10)

struct trace_sort_opts {
    int reference;         /* order with the literal 6a-6f loop (tests, bench) */
    const char *tmpdir;    /* for spooling an input that is not thread-major */
    size_t spool_mem;      /* memory for spooling; 0: TRACE_SPOOL_DEFAULT_MEM */
    size_t stream_above;   /* 0: TRACE_SORT_STREAM_ABOVE; tests set 1 to buffer every block */
    size_t copy_upto;      /* 0: TRACE_SORT_COPY_UPTO; tests set 1 to copy no block */
    int threads;           /* SMs ordered at once: 0 or 1 one (this thread), 2 two (see below) */
    size_t reorder_bytes;  /* with 2 threads, output held for a later SM; 0: TRACE_SORT_REORDER_BYTES */
    size_t split_above;    /* with 2 threads, a trace of more records is checked in two halves at
                              once; 0: TRACE_SORT_SPLIT_ABOVE; tests set 1 to split every one */
    const struct trace_l1_ops *l1; /* the L1 each SM's ordering consults (cache feedback,
                                      order_l1.h), or NULL: every transaction a fetch */
    const struct trace_bin_room *bin; /* set: the sorted records go there, encoded as the
                                         binary format's (binfmt.h), each written once, into
                                         the output's memory; the sink is not called (may be
                                         NULL). The same records in the same order. */
    const struct trace_blocks *blocks; /* the input's blocks as its writer noted them, or
                                          NULL: see struct trace_blocks */
};

/* The blocks of a requests file, noted by the one who writes its records
 * (a CSV input's copy: trace/pipeline.c) so that the sort needs no
 * checking pass over them. Only for records a reader has already checked
 * (a width of 1..16 bytes that is a power of two, flags 0 or 1, no byte
 * past 2^64): a sort given these blocks (trace_sort_opts.blocks) checks
 * the records no more, and uses them only when they are of all its records
 * and of its threads per block; otherwise it runs its checking pass.
 * Records that are not thread-major make them unusable (failed): such a
 * file is spooled, and its order is another. */
struct trace_blocks {
    uint32_t threads_per_block;
    uint64_t *id;        /* block ids, increasing */
    size_t *start;       /* first record of each */
    size_t n, cap;
    uint64_t records;    /* noted so far */
    uint64_t block_end;  /* the first thread past the current block (0 before any) */
    uint64_t last_tid;
    int failed;          /* out of memory, not thread-major, or no threads per block */
};

void trace_blocks_init(struct trace_blocks *b, uint32_t threads_per_block);
/* Notes the next n records of the file, in order. */
void trace_blocks_note(struct trace_blocks *b, const struct trace_rec *r, size_t n);
void trace_blocks_free(struct trace_blocks *b);

/* Two threads (trace_sort_opts.threads = 2) order two SMs at once: SMs are
 * independent once blocks are placed (each has its own blocks and its own
 * random stream). The sink still receives SM 0's whole stream first, in the
 * same batches as with one thread (with trace_sort_opts.bin, the same
 * bytes, in rooms of other sizes), always from one thread at a time: the
 * thread on the lowest unfinished SM hands its records on directly, the
 * other keeps up to reorder_bytes of its SM's records (TRACE_SORT_REORDER_BYTES
 * by default) and waits when that is full, until its SM comes next. The
 * output is byte for byte the one thread's (with trace_sort_opts.bin, the
 * thread on the lowest unfinished SM encodes into the output's room, the
 * other into its held batches); two SMs run fully in parallel
 * while an SM's output fits in the reorder memory. The sink is never
 * called with the threads' lock held (a sink that blocks, a full output
 * queue, holds up only the thread calling it), and a thread whose SM
 * comes next hands on what it held before it writes anything directly. */
#define TRACE_SORT_REORDER_BYTES ((size_t)32 << 20)
/* With two threads the checking pass, too, runs on both: the second thread
 * checks the second half of the records and builds its part of the block
 * index while the first checks the first half (a trace of more than
 * TRACE_SORT_SPLIT_ABOVE records; below, a thread costs more than it saves). */
#define TRACE_SORT_SPLIT_ABOVE ((size_t)1 << 20)

struct trace_summary {
    struct trace_params params; /* as resolved for the run */
    uint64_t records_in, requests_out, instructions, blocks, warps;
    uint64_t ticks, mshr_stall_ticks, idle_ticks, dep_blocks, max_in_flight;
    int l1;                     /* the ordering consulted an L1: the two below mean something */
    uint64_t l1_hits, l1_merged;
    uint32_t nsms;
    struct trace_sm_stats *sm; /* nsms entries */
};

/* An opened input: a mapped thread-major requests file. */
struct trace_input {
    struct trace_bin bin;
    int spooled;           /* 1: bin is a temporary thread-major copy */
};

struct trace_spool;

/* Writes a filled spool (spool.h), thread-major, to a private temporary
 * file in tmpdir (tmpfile.h) and opens it as the input (in->spooled = 1);
 * threads_per_block goes into its header. 0, or TRACE_SORT_ESYS with err. */
int trace_input_from_spool(struct trace_input *in, struct trace_spool *sp,
                           uint32_t threads_per_block, const char *tmpdir, struct trace_err *err);

/* Opens a binary requests file; spools it when it is not thread-major. */
int trace_input_open(struct trace_input *in, const char *path, const struct trace_sort_opts *o,
                     struct trace_err *err);
void trace_input_close(struct trace_input *in);

/* Sorts an opened input. p: trace_params_resolve(p, in->bin.h.threads_per_block)
 * and trace_params_validate first (the caller may need the resolved values
 * for an output header); they are checked again here. */
int trace_sort_input(struct trace_input *in, const struct trace_params *p, const struct trace_sort_opts *o,
                     trace_out_sink sink, void *ctx, struct trace_summary *sum, struct trace_err *err);

/* Open, resolve p (a copy) with the file's threads_per_block, sort, close. */
int trace_sort_file(const char *path, const struct trace_params *p, const struct trace_sort_opts *o,
                    trace_out_sink sink, void *ctx, struct trace_summary *sum, struct trace_err *err);

/* Sorts n thread-major records in memory (offsets in errors are i * 32).
 * p is resolved (with no input threads_per_block) and validated here. */
int trace_sort_records(const struct trace_rec *recs, size_t n, const struct trace_params *p,
                       const struct trace_sort_opts *o, trace_out_sink sink, void *ctx,
                       struct trace_summary *sum, struct trace_err *err);

void trace_summary_free(struct trace_summary *s);
/* {"params", "records_in", "requests_out", "coalescing_ratio", ..., "sms": [...]},
 * and with an L1 "l1": {"hits", "merged", "fetches"} (and the same three
 * per SM, prefixed "l1_"). */
json_t *trace_summary_to_json(const struct trace_summary *s);
/* A few lines for a terminal (the CLI prints them on stderr). */
void trace_summary_print(const struct trace_summary *s, FILE *f);

#endif
