/*
 * The CSV trace format: a strict streaming reader of input records
 * (tid,pc,addr,width,dep[,op]) and fast writers of input and output records
 * (tid,pc,addr,width,dep,op and sm,seq,tid,pc,addr,width,dep,op).
 *
 * DESIGN
 * The reader works on one memory buffer (a request body), or reads a file
 * descriptor in bounded chunks (trace_csv_read_fd: a chunk is cut after its
 * last complete line, the rest moves to the front of the next one, so
 * memory is one chunk whatever the file's size), and hands each record to
 * the sink as soon as its line is checked, so it keeps no records: its memory is one hash map of the PCs seen
 * (to enforce "all records of one PC carry the same flag"), bounded by the
 * number of distinct PCs and capped by max_pcs. Every error names the 1-based
 * line and the byte offset of the start of that line; a record is handed on
 * only when its whole line is valid. The exact rules are in
 * docs/trace-formats.md.
 *
 * The writers format integers by hand (digit pairs for decimal, nibbles for
 * hex) into a caller-owned buffer that is flushed through a callback (or to
 * a FILE*), never one printf per field.
 */
#ifndef GPUPROBE_TRACE_CSV_H
#define GPUPROBE_TRACE_CSV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/pcflags.h"
#include "trace/record.h"

/* The headers the writers write: the last column, op, is "ld" for a load
 * and "st" for a store, atomic or reduction (trace_rec.store). */
#define TRACE_CSV_IN_HEADER "tid,pc,addr,width,dep,op"
#define TRACE_CSV_OUT_HEADER "sm,seq,tid,pc,addr,width,dep,op"
/* The same without op, as files written before the column was added have
 * them: read too, every record a load. */
#define TRACE_CSV_IN_HEADER_NO_OP "tid,pc,addr,width,dep"
#define TRACE_CSV_OUT_HEADER_NO_OP "sm,seq,tid,pc,addr,width,dep"

struct trace_csv_opts {
    const struct trace_pcflags *flags; /* per-PC flags that replace the file's; may be NULL */
    size_t max_pcs;                    /* distinct PCs allowed; 0: TRACE_PCFLAGS_MAX_DEFAULT */
    size_t chunk_bytes;                /* trace_csv_read_fd's reads; 0: TRACE_CSV_CHUNK */
    int threads;                       /* trace_csv_read_fd_batch's parsing threads (the caller's
                                          among them); 0: 1; at most 8 are used */
};

#define TRACE_CSV_CHUNK ((size_t)1 << 20)
/* trace_csv_read_fd refuses a line that has not ended within this many
 * bytes (no valid record comes near it; a last line without '\n' is read
 * whole); its buffer grows to hold the longest line up to it. */
#define TRACE_CSV_MAX_LINE ((size_t)1 << 20)

/* Reads the CSV input format from buf[0..len) (no NUL needed) and hands each
 * record to sink(ctx, rec) in file order. o may be NULL (defaults).
 * Returns 0 when all was read, TRACE_EINPUT or TRACE_ENOMEM with err filled
 * (line, byte offset of the bad line, message), or the sink's non-zero value. */
int trace_csv_read(const char *buf, size_t len, const struct trace_csv_opts *o, trace_sink sink,
                   void *ctx, struct trace_err *err);

/* The same as trace_csv_read over the bytes read from fd (from its current
 * offset to its end), read in chunks of o->chunk_bytes: lines, byte offsets
 * and messages are those trace_csv_read gives on the whole file. A line
 * whose LF is not within TRACE_CSV_MAX_LINE bytes of its start is refused
 * (TRACE_EINPUT, its line and offset); a read error gives TRACE_ENOMEM
 * with the reason. */
int trace_csv_read_fd(int fd, const struct trace_csv_opts *o, trace_sink sink, void *ctx,
                      struct trace_err *err);

/* Receives records in input order, n at a time (recs may be changed). A
 * non-zero return stops the reader, which then returns that value. */
typedef int (*trace_rec_batch_sink)(void *ctx, struct trace_rec *recs, size_t n);

/* The same as trace_csv_read_fd (the same records in the same order, the
 * same result, and for a bad line the same line, offset and message),
 * parsed on o->threads threads: the chunks of the file are read in turn,
 * each is parsed by the thread that read it into its own records, and each
 * thread hands its chunk's records to sink when every earlier chunk has
 * been handed on (the one-flag-per-PC checks run then, in file order). So
 * sink is called by one thread at a time, never two at once, in file
 * order. Memory: per thread, one chunk of text and its records (a line
 * has at least 10 bytes, so up to chunk / 10 of them, in an array grown by
 * doubling: up to 4 MiB for 1 MiB of text). A thread that cannot be
 * started leaves the work to the others. */
int trace_csv_read_fd_batch(int fd, const struct trace_csv_opts *o, trace_rec_batch_sink sink, void *ctx,
                            struct trace_err *err);
/* Says that the above exists (bench/trace/bench.c is also built against
 * trees from before it, for its baselines). */
#define TRACE_CSV_READ_FD_BATCH 1

/* ---- writing ----------------------------------------------------------- */

/* A caller-owned output buffer; flush is called with full buffers and at
 * trace_wbuf_flush. Fields are private after init. */
struct trace_wbuf {
    char *buf;
    size_t cap, len;
    int (*flush)(void *ctx, const char *data, size_t n); /* 0: written */
    void *ctx;
    int failed; /* a flush failed: later writes are dropped, results non-zero */
};

#define TRACE_WBUF_MIN 256 /* smallest buffer: one line of any record fits */

/* cap must be at least TRACE_WBUF_MIN. */
void trace_wbuf_init(struct trace_wbuf *w, char *buf, size_t cap,
                     int (*flush)(void *ctx, const char *data, size_t n), void *ctx);
/* Flushes with fwrite to f (the caller still fflushes/closes f). */
void trace_wbuf_init_file(struct trace_wbuf *w, char *buf, size_t cap, FILE *f);
/* Hands what is buffered to flush. 0, or -1 if this or an earlier flush failed. */
int trace_wbuf_flush(struct trace_wbuf *w);

/* Each writes one line ending in '\n'. pc and addr are written as 0x-hex,
 * the other fields in decimal. 0, or -1 once a flush has failed. */
int trace_csv_write_in_header(struct trace_wbuf *w);
int trace_csv_write_in(struct trace_wbuf *w, const struct trace_rec *r);
int trace_csv_write_out_header(struct trace_wbuf *w);
int trace_csv_write_out(struct trace_wbuf *w, const struct trace_out *o);

/* A trace_sink that writes each record with trace_csv_write_in to the
 * trace_wbuf ctx (returns 1 if writing failed), so any reader converts to CSV. */
int trace_csv_sink(void *wbuf, const struct trace_rec *r);
/* The same for sorted records (a trace_out_sink): n lines with
 * trace_csv_write_out; 1 if writing failed. */
int trace_csv_out_sink(void *wbuf, const struct trace_out *o, size_t n);
/* The same for n sorted records encoded as in a sorted binary file
 * (TRACE_BIN_OUT_BYTES each): what the sorter puts in its output queue,
 * formatted by the queue's thread. */
int trace_csv_out_sink_encoded(void *wbuf, const uint8_t *bytes, size_t n);

#endif
