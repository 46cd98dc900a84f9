/*
 * Reading a trace file of any input format (binary requests, CSV, NVBit
 * mem_trace, Accel-Sim) into a trace_sink, with the format named or told
 * from the file's content.
 *
 * DESIGN
 * The readers of nvbit.h and accelsim.h work on one memory buffer: this
 * module maps the file read-only and hands it to them; a CSV file is read
 * through its descriptor in bounded chunks (trace_csv_read_fd), so its
 * memory stays flat whatever its size (trace_read_csv_batch: the same on
 * several threads, trace_csv_read_fd_batch). The CLI and the trace-sort job
 * read files the same way. A binary requests file
 * goes through trace_bin_read. The per-PC flag table, when given, replaces
 * the dependency flags of every format (for binary input through a small
 * sink in front of the caller's). Detection looks at content only, never at
 * the name (the daemon's uploads have none): the binary magic, the CSV
 * header line, a "MEMTRACE: " line, or an Accel-Sim header or block marker
 * within the first 64 KiB (docs/trace-formats.md, "Telling formats apart").
 */
#ifndef GPUPROBE_TRACE_READFILE_H
#define GPUPROBE_TRACE_READFILE_H

#include <stddef.h>
#include <stdint.h>

#include "trace/csv.h"
#include "trace/nvbit.h"
#include "trace/pcflags.h"
#include "trace/record.h"

enum trace_format {
    TRACE_FMT_AUTO = 0, /* tell from the content */
    TRACE_FMT_CSV,
    TRACE_FMT_BIN,
    TRACE_FMT_NVBIT,
    TRACE_FMT_ACCELSIM,
};

/* How far into a file detection looks for the text formats' markers. */
#define TRACE_DETECT_WINDOW ((size_t)64 << 10)

/* "auto", "csv", "bin", "nvbit", "accelsim". */
const char *trace_format_name(enum trace_format f);
/* The format of a name above; -1 for anything else. */
int trace_format_parse(const char *name);
/* The input-format names, NULL-terminated (a schema's choices). */
extern const char *const trace_format_names[];

/* The format of the file that starts with buf[0..len) (len may be the whole
 * file or its first TRACE_DETECT_WINDOW bytes); TRACE_FMT_AUTO if unknown. */
enum trace_format trace_format_detect(const char *buf, size_t len);

/* Tells the format of the file at path from its content. 0 with *fmt set;
 * TRACE_EINPUT when no format fits (err: line 1, offset 0, what to do);
 * TRACE_ENOMEM when the file cannot be read (err says why). */
int trace_detect_path(const char *path, enum trace_format *fmt, struct trace_err *err);

/* A file mapped read-only (len 0: data points at an empty string). */
struct trace_mapped {
    const char *data;
    size_t len;
    void *map;
};
/* 0, or -1 with err (offset 0) naming the path and the reason. */
int trace_map_file(const char *path, struct trace_mapped *m, struct trace_err *err);
void trace_unmap_file(struct trace_mapped *m);

/* Reads path in format fmt (AUTO: detected first; *used, if not NULL, gets
 * the format read) and hands its requests to sink. flags may be NULL.
 * stats (may be NULL) gets the text readers' counters, and for NVBit and
 * Accel-Sim the threads_per_block of their geometry. Returns 0, TRACE_EINPUT
 * (err: line for text, byte offset, message), TRACE_ENOMEM (memory, or the
 * file cannot be opened or mapped: err says which), or the sink's non-zero
 * value. A sorted binary file is refused (it holds no requests). */
int trace_read_path(const char *path, enum trace_format fmt, const struct trace_pcflags *flags,
                    trace_sink sink, void *ctx, struct trace_read_stats *stats,
                    enum trace_format *used, struct trace_err *err);

/* A CSV file read with trace_csv_read_fd_batch on `threads` threads (its
 * records in file order, n at a time, to sink); results and errors as
 * trace_read_path's for a CSV file. */
int trace_read_csv_batch(const char *path, const struct trace_pcflags *flags, int threads,
                         trace_rec_batch_sink sink, void *ctx, struct trace_err *err);

/* err as one line: "line N (byte offset O): msg" when it names a line (text
 * formats), else "byte offset O: msg". */
void trace_err_format(const struct trace_err *err, char *buf, size_t len);

/* Reads a per-PC flag table file into t (initialised here; free it with
 * trace_pcflags_free in every case). 0, TRACE_EINPUT or TRACE_ENOMEM (as
 * above: also when the file cannot be read). */
int trace_pcflags_load(struct trace_pcflags *t, const char *path, struct trace_err *err);

#endif
