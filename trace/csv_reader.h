/*
 * The CSV reader's state and its steps over the lines of a buffer, shared
 * by the reader of one thread (csv.c) and the reader on several threads
 * (csv_threads.c). Nothing outside these two uses it: the contract of CSV
 * reading is csv.h.
 *
 * DESIGN
 * A struct csv_reader is one pass over text (struct trace_text) plus the
 * one-flag-per-PC tables, so the steps can run apart: a thread of
 * csv_threads.c parses its chunk's lines without the checks
 * (trace_csv_reader_lines with check 0), and the thread whose turn it is
 * runs the checks (trace_csv_reader_check) on those records in file order
 * with the tables of the whole file, as the reader of one thread does line
 * by line.
 */
#ifndef GPUPROBE_TRACE_CSV_READER_H
#define GPUPROBE_TRACE_CSV_READER_H

#include <stdint.h>

#include "trace/csv.h"
#include "trace/pcflags.h"
#include "trace/scan.h"

#define RECENT 64 /* PCs whose flag was checked lately (a power of two) */

struct csv_reader {
    struct trace_text t; /* the line being read */
    const struct trace_csv_opts *o;
    int ops;                   /* the header has the op column */
    struct trace_pcflags seen; /* pc -> dep and the line that first had it */
    struct trace_pcflags kind; /* pc -> store and the line that first had it (with ops) */
    /* A direct-mapped cache of PCs already in `seen` (and `kind`), with
     * (store << 1 | dep) + 1 (0: empty): a record whose PC and flags are
     * found here passes the one-flag-per-PC checks without a lookup. */
    uint64_t recent_pc[RECENT];
    uint32_t recent_dep1[RECENT];
};


/* Reads the header line (the first line of r->t): 0 with r->ops set, or
 * TRACE_EINPUT with the error at line 1, offset 0. */
int trace_csv_reader_header(struct csv_reader *r);

/* Parses the lines left in r->t and hands each record to sink; check: each
 * one first through trace_csv_reader_check (else the caller runs it).
 * 0 at the end of the text, TRACE_EINPUT / TRACE_ENOMEM with r->t.err
 * filled, or the sink's non-zero value. */
int trace_csv_reader_lines(struct csv_reader *r, int check, trace_sink sink, void *ctx);

/* Applies the user's per-PC flag to rec, then the one-flag-per-PC rule
 * (and with the op column one kind of access per PC), rec being on line
 * r->t.line, which starts at r->t.ls (the error's offset). 0, or
 * TRACE_EINPUT / TRACE_ENOMEM with r->t.err filled. */
int trace_csv_reader_check(struct csv_reader *r, struct trace_rec *rec);

/* The file read in chunks that end at a line's end (trace_csv_read_fd's
 * and trace_csv_read_fd_batch's). */
struct csv_chunks {
    int fd, eof;
    char *buf;
    size_t cap, have; /* buf[0..have) read, starting at a line start */
    uint64_t base;    /* file offset of buf[0] */
};

/* Reads until the buffer is full or the file ends. 0 or -1 (errno). */
int trace_csv_chunk_fill(struct csv_chunks *k);

/* How many bytes of the buffer to parse now: through its last LF, all of it
 * at the end of the file, or 0 when no line ends in it yet (then the buffer
 * has grown: read more); -1 when no line has ended within
 * TRACE_CSV_MAX_LINE bytes, -2 out of memory for a longer buffer. */
long long trace_csv_chunk_cut(struct csv_chunks *k);

#endif
