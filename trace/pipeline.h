/*
 * Trace files in, trace files out: sorting a trace file into a file, and
 * rewriting a trace in another format. Everything `gpuprobe trace sort`,
 * `gpuprobe trace convert` and the daemon's trace-sort job do with files.
 *
 * DESIGN
 * A sort runs four steps: open the input (a thread-major binary requests
 * file is mapped in place; a binary file in another order is spooled by
 * trace_input_open; CSV is read in bounded chunks (on two threads when a
 * core is free: trace_csv_read_fd_batch) into a private temporary
 * binary file that trace_input_open then takes as it is when thread-major,
 * or spools; NVBit, Accel-Sim, or binary with a per-PC flag table, is read
 * by trace_read_path into a spool and written thread-major to a private
 * temporary file), resolve and check the parameters against it, sort into
 * a CSV or binary writer on OUTPUT.part that runs on a writer thread
 * (outq.h: the sorting thread only queues records, a binary file's already
 * encoded; the bytes are those of a direct writer), and commit (swap with an existing OUTPUT and remove the
 * old one, else rename to OUTPUT). A
 * conversion reads requests of any format (or a sorted binary file) and
 * writes them in input order through the same writers, part file and
 * rename. OUTPUT "-" is standard output (no part file); an OUTPUT that
 * exists and is neither a regular file nor a folder (/dev/null, a FIFO) is
 * written in place, never replaced. A failure leaves no
 * OUTPUT and no part file behind and is described once, in a struct
 * trace_failure: whether the input or the settings were at fault, where in
 * the input (line of a text format, byte offset), and why.
 * Guarantees: OUTPUT appears complete or not at all; memory is bounded as
 * the sorter's and the spool's are, whatever the trace's length.
 * Not done here: naming files (callers resolve paths; the daemon keeps its
 * own names in upload_dir).
 */
#ifndef GPUPROBE_TRACE_PIPELINE_H
#define GPUPROBE_TRACE_PIPELINE_H

#include <jansson.h>

#include "trace/params.h"
#include "trace/sort.h"

struct trace_files {
    const char *input;       /* a path */
    const char *output;      /* a path, or "-" for standard output (a device: written into) */
    const char *pc_flags;    /* a per-PC flag table (pc,dep lines), or NULL */
    const char *tmpdir;      /* for spools and copies; NULL: $TMPDIR, else /tmp */
    const struct trace_l1_ops *l1; /* sorts: the L1 the ordering consults (cache feedback,
                                      order_l1.h; cache/feedback.h fills one), or NULL */
};

enum trace_fault {
    TRACE_FAULT_OTHER,       /* memory, files, I/O */
    TRACE_FAULT_INPUT,       /* the trace (or the flag table) is wrong */
    TRACE_FAULT_PARAMS,      /* the settings do not fit this trace */
    TRACE_FAULT_SPACE,       /* a file could not be written: no space left, or over quota */
};

struct trace_failure {
    enum trace_fault fault;
    const char *file;        /* INPUT: the file at fault (the input or the flag table) */
    long long line;          /* 1-based line of a text input; -1 if none */
    long long offset;        /* byte offset of the bad record; -1 if none */
    char msg[1024];          /* "line 3 (byte offset 39): width must be ..." */
};

/* What a finished run reports besides the sort's summary (sort_threads is
 * newer than the rest: TRACE_OUTCOME_SORT_THREADS says it is there). */
#define TRACE_OUTCOME_SORT_THREADS 1
struct trace_outcome {
    enum trace_format in_format;     /* as read: detected when AUTO was asked */
    long long output_bytes;          /* -1 when written to standard output or a device */
    int sort_threads;                /* threads that ordered SMs (sorts; see pipeline.c) */
};

/* GPUPROBE_TRACE_THREADS, the sorting threads a user may force: unset,
 * empty or 0 (the sorter chooses), 1 or 2 give 0; any other value gives
 * -1 with the reason in why. A setting that means nothing is refused, not
 * ignored (the user who wrote 3 expects three threads), and once, when a
 * command that sorts starts: a daemon that took it would otherwise start
 * and then fail every sort it is sent. */
int trace_threads_env_check(char *why, size_t len);

/* Sorts f->input into f->output with p (formats included; p is resolved
 * with the input's threads_per_block on a copy). On success returns 0 and
 * fills sum (free it with trace_summary_free) and out; else -1 with fail
 * filled and sum empty. */
int trace_pipeline_sort(const struct trace_files *f, const struct trace_params *p,
                        struct trace_summary *sum, struct trace_outcome *out,
                        struct trace_failure *fail);

/* Rewrites f->input in p->out_format, in input order: requests of any
 * format (p->in_format, AUTO told from the content) as CSV
 * (tid,pc,addr,width,dep,op) or binary requests, or a sorted binary file as
 * CSV (sm,seq,...) or binary. 0, or -1 with fail filled. */
int trace_pipeline_convert(const struct trace_files *f, const struct trace_params *p,
                           struct trace_outcome *out, struct trace_failure *fail);

/* A sort's result document: trace_summary_to_json's members plus
 * "input_format", "output_format" and "output_bytes" (null for standard
 * output). NULL when out of memory. */
json_t *trace_pipeline_result(const struct trace_summary *sum, const struct trace_params *p,
                              const struct trace_outcome *out);

#endif
