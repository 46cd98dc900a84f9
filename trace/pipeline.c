/*
 * Trace files in, trace files out (see pipeline.h).
 *
 * DESIGN
 * A run is one struct run: the files and parameters it was given, the
 * opened input, the per-PC flags, the output and the failure. The output
 * side is shared by sorts and conversions: out_open writes OUTPUT.part (or
 * a duplicate of standard output, or a device in place: util/outfile.h)
 * through a CSV buffer or a binary writer (a sort drives it from a writer
 * thread: a trace_outq of encoded records, which the ordering loop encodes
 * straight into the queue's buffers, bin_room, and encoded_items writes or
 * formats),
 * out_close flushes it, commit
 * puts it into place, and outfile_discard removes whatever a failed run
 * wrote. Every failure goes through fail() or
 * fail_at(), which fill the struct trace_failure once. A CSV input is
 * copied into a binary requests file first, by a parser and a writer
 * thread (copy_with_writer) or, with a core free, by two threads that each
 * parse a chunk and write it in its turn (copy_csv_parallel).
 */
#include "trace/pipeline.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/binfmt.h"
#include "trace/csv.h"
#include "trace/deal.h"
#include "util/cores.h"
#include "util/fdio.h"
#include "util/outfile.h"
#include "trace/outq.h"
#include "trace/readfile.h"
#include "trace/spool.h"
#include "trace/tmpfile.h"

#define CSV_BUF_BYTES ((size_t)256 << 10)

struct run {
    const struct trace_files *f;
    struct trace_params p;
    struct trace_failure *fail;
    struct outfile out;           /* OUTPUT, written whole or not at all */
    struct trace_pcflags flags;
    int flags_loaded;
    struct trace_input in;
    int in_open;
    int from_spool;               /* the input was read into a spool: its offsets are not the file's */
    int sort_threads;
    struct trace_blocks blocks;   /* a CSV input's copy: its blocks, noted as it is written */
    int has_blocks;
};

/* ---- failures ------------------------------------------------------------------ */

static int fail(struct run *r, enum trace_fault fault, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(struct run *r, enum trace_fault fault, const char *file, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->fail->msg, sizeof r->fail->msg, fmt, ap);
    va_end(ap);
    /* A full disk is told apart from other I/O failures by the reason's
     * words: the errno behind it was set wherever the write failed (the
     * output's writer thread, a spool, the commit), and what reaches here
     * from every one of them is its strerror text. */
    if (fault == TRACE_FAULT_OTHER &&
        (strstr(r->fail->msg, strerror(ENOSPC)) || strstr(r->fail->msg, strerror(EDQUOT))))
        fault = TRACE_FAULT_SPACE;
    r->fail->fault = fault;
    r->fail->file = file;
    return -1;
}

/* A bad record of file: its line (text formats) and byte offset. */
static int fail_at(struct run *r, const char *file, const struct trace_err *te)
{
    char where[400];
    trace_err_format(te, where, sizeof where);
    fail(r, TRACE_FAULT_INPUT, file, "%s", where);
    r->fail->line = te->line ? (long long)te->line : -1;
    r->fail->offset = (long long)te->offset;
    return -1;
}

/* A reader's result: 0, a bad record (TRACE_EINPUT), or something else. */
static int read_outcome(struct run *r, const char *file, int rc, const struct trace_err *te)
{
    if (rc == TRACE_EINPUT)
        return fail_at(r, file, te);
    return rc ? fail(r, TRACE_FAULT_OTHER, NULL, "%s: %s", file, te->msg) : 0;
}

/* ---- output -------------------------------------------------------------------- */

struct out {
    struct trace_bin_writer *bw; /* binary output */
    struct trace_wbuf wb;        /* CSV output */
    char *buf;
    int fd;                      /* CSV output's descriptor; -1 once closed */
    int write_errno;
};

static int fd_flush(void *ctx, const char *data, size_t n)
{
    struct out *o = ctx;
    if (fd_write_all(o->fd, data, n, FD_CURRENT) == 0)
        return 0;
    o->write_errno = errno ? errno : EIO;
    return -1;
}

/* Opens OUTPUT.part (or standard output) as binary with header h, or as
 * CSV when h is NULL. */
static int out_open(struct run *r, struct out *o, const struct trace_bin_header *h)
{
    char why[PATH_MAX + 300];
    int fd = outfile_open(&r->out, r->f->output, why, sizeof why);
    if (fd < 0)
        return fail(r, TRACE_FAULT_OTHER, NULL, "%s", why);
    if (h) {
        struct trace_err te = {0};
        o->bw = trace_bin_writer_fd(fd, 1, h, &te);
        return o->bw ? 0 : fail(r, TRACE_FAULT_OTHER, NULL, "output: %s", te.msg);
    }
    o->fd = fd;
    o->buf = malloc(CSV_BUF_BYTES);
    if (!o->buf)
        return fail(r, TRACE_FAULT_OTHER, NULL, "out of memory for the output buffer");
    trace_wbuf_init(&o->wb, o->buf, CSV_BUF_BYTES, fd_flush, o);
    return 0;
}

/* Sinks for sorted records and for requests, whichever writer is open. */
static int out_sink(void *ctx, const struct trace_out *recs, size_t n)
{
    struct out *o = ctx;
    return o->bw ? trace_bin_write_out(o->bw, recs, n) : trace_csv_out_sink(&o->wb, recs, n);
}

/* A sort's output queue carries encoded records, whatever the output's
 * format: the ordering loop encodes each record straight into the queue's
 * buffer (bin_room, the sorter's trace_sort_opts.bin), and the writer
 * thread writes those bytes as they are, or formats them as CSV lines:
 * handing over sorted records in memory instead was a copy of 56 bytes a
 * request on the sorting thread. */
static int encoded_items(void *ctx, const void *items, size_t n)
{
    struct out *o = ctx;
    return o->bw ? trace_bin_write_encoded(o->bw, items, n) : trace_csv_out_sink_encoded(&o->wb, items, n);
}

static void *bin_room(void *q, size_t *n)
{
    return trace_outq_room(q, n);
}

static int bin_commit(void *q, size_t n)
{
    return trace_outq_commit(q, n);
}

/* A CSV input's copy: the writer of its records and their blocks. */
struct copy {
    struct trace_bin_writer *w;
    struct trace_blocks *blocks;
};

static int copy_items(void *ctx, const void *items, size_t n)
{
    struct copy *c = ctx;
    trace_blocks_note(c->blocks, items, n);
    return trace_bin_write_recs(c->w, items, n);
}

static int rec_sink(void *ctx, const struct trace_rec *rec)
{
    struct out *o = ctx;
    return o->bw ? trace_bin_write_rec(o->bw, rec) : trace_csv_sink(&o->wb, rec);
}

/* Flushes and closes; 0, or -1 with the reason in msg. */
static int out_close(struct out *o, char *msg, size_t len)
{
    int rc = 0;
    if (o->bw) {
        struct trace_err te = {0};
        rc = trace_bin_writer_close(o->bw, &te);
        snprintf(msg, len, "%s", te.msg);
        o->bw = NULL;
    } else if (o->fd >= 0) {
        rc = o->buf ? trace_wbuf_flush(&o->wb) : 0;
        if (close(o->fd) && !rc) {
            o->write_errno = errno;
            rc = -1;
        }
        snprintf(msg, len, "%s", strerror(o->write_errno ? o->write_errno : EIO));
        o->fd = -1;
    }
    free(o->buf);
    o->buf = NULL;
    return rc;
}

/* Puts the output into place. */
static int commit(struct run *r)
{
    char why[PATH_MAX + 300];
    return outfile_commit(&r->out, why, sizeof why) == 0
               ? 0
               : fail(r, TRACE_FAULT_OTHER, NULL, "%s", why);
}

/* ---- input --------------------------------------------------------------------- */

static int sort_threads(uint64_t records);
static uint64_t csv_records_at_most(const char *path);

static int threads_setting(void)
{
    const char *e = getenv("GPUPROBE_TRACE_THREADS");
    if (!e || !*e || strcmp(e, "0") == 0)
        return 0;
    return strcmp(e, "1") == 0 || strcmp(e, "2") == 0 ? e[0] - '0' : -1;
}

int trace_threads_env_check(char *why, size_t len)
{
    if (threads_setting() >= 0)
        return 0;
    snprintf(why, len, "GPUPROBE_TRACE_THREADS must be 1 or 2, not '%.40s' (unset it, or set 0, to let the sorter choose)",
             getenv("GPUPROBE_TRACE_THREADS"));
    return -1;
}

static int setup(struct run *r, const struct trace_files *f, const struct trace_params *p,
                 struct trace_failure *failure)
{
    assert(f && f->input && f->output && p && failure);
    memset(r, 0, sizeof *r);
    *failure = (struct trace_failure){.fault = TRACE_FAULT_OTHER, .line = -1, .offset = -1};
    r->f = f;
    r->p = *p;
    r->fail = failure;
    /* the commands that sort refused a bad setting when they started
     * (trace_threads_env_check); a caller that did not is refused here,
     * as a fault of its own, not of the trace or its parameters */
    char why[160];
    if (trace_threads_env_check(why, sizeof why))
        return fail(r, TRACE_FAULT_OTHER, NULL, "%s", why);
    if (!f->pc_flags)
        return 0;
    struct trace_err te = {0};
    r->flags_loaded = 1;
    return read_outcome(r, f->pc_flags, trace_pcflags_load(&r->flags, f->pc_flags, &te), &te);
}

static int detect(struct run *r)
{
    struct trace_err te = {0};
    if (r->p.in_format != TRACE_FMT_AUTO)
        return 0;
    return read_outcome(r, r->f->input, trace_detect_path(r->f->input, &r->p.in_format, &te),
                        &te);
}

/* Text (or flagged binary) input: reader -> spool -> thread-major file. */
static int open_through_spool(struct run *r)
{
    struct trace_err te = {0};
    struct trace_read_stats st = {0};
    struct trace_spool *sp = trace_spool_new(r->f->tmpdir, 0, &te);
    if (!sp)
        return fail(r, TRACE_FAULT_OTHER, NULL, "%s", te.msg);
    r->from_spool = 1;
    int rc = trace_read_path(r->f->input, r->p.in_format, r->flags_loaded ? &r->flags : NULL,
                             trace_spool_add, sp, &st, NULL, &te);
    if (rc < 0) {
        rc = read_outcome(r, r->f->input, rc, &te);
    } else { /* rc > 0 means the spool failed, and finishing says why */
        uint32_t tpb = st.threads_per_block > UINT32_MAX ? UINT32_MAX
                                                         : (uint32_t)st.threads_per_block;
        rc = trace_input_from_spool(&r->in, sp, tpb, r->f->tmpdir, &te);
        r->in_open = rc == 0;
        if (rc)
            rc = fail(r, TRACE_FAULT_OTHER, NULL, "spooling the trace: %s", te.msg);
    }
    trace_spool_free(sp);
    return rc;
}

/* The copy with the parsing on this thread and the writing of the copy on
 * another (an output queue's). rc as trace_read_path's; 1: the writer
 * failed (closing it says why). */
static int copy_with_writer(struct run *r, struct copy *c, struct trace_err *te)
{
    struct trace_read_stats st = {0};
    struct trace_outq *q = trace_outq_new(sizeof(struct trace_rec), copy_items, c);
    if (!q) {
        snprintf(te->msg, sizeof te->msg, "out of memory");
        return TRACE_ENOMEM;
    }
    int rc = trace_read_path(r->f->input, r->p.in_format, r->flags_loaded ? &r->flags : NULL, trace_outq_rec, q,
                             &st, NULL, te);
    if (trace_outq_free(q) && rc == 0)
        rc = 1;
    return rc;
}

static int copy_batch(void *c, struct trace_rec *recs, size_t n)
{
    return copy_items(c, recs, n);
}

/* The copy with the parsing on two threads, each writing the records of
 * its chunks when their turn comes (trace_csv_read_fd_batch): the parse,
 * not the writing, is the longer part. rc as copy_with_writer's. */
static int copy_csv_parallel(struct run *r, struct copy *c, struct trace_err *te)
{
    return trace_read_csv_batch(r->f->input, r->flags_loaded ? &r->flags : NULL, 2, copy_batch, c, te);
}

/* CSV input: reader(s) -> binary requests in a private temporary file. A CSV
 * trace is usually thread-major already (what `trace convert` writes from a
 * binary file): the copy is then the sorter's input as it is, with no spool
 * runs to write, read and merge; otherwise trace_input_open spools it. */
static int open_through_copy(struct run *r)
{
    struct trace_err te = {0};
    char path[300];
    int named;
    r->from_spool = 1;
    int fd = trace_tmp_open(r->f->tmpdir, "requests", path, sizeof path, &named);
    int wfd = fd < 0 ? -1 : dup(fd); /* the writer closes its own; fd keeps path valid */
    if (wfd < 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return fail(r, TRACE_FAULT_OTHER, NULL, "temporary file in %s: %s",
                    trace_tmpdir(r->f->tmpdir), strerror(e));
    }
    struct trace_bin_header h;
    trace_bin_header_init(&h, TRACE_BIN_REQUESTS, NULL);
    struct trace_bin_writer *w = trace_bin_writer_fd(wfd, 1, &h, &te);
    /* the copy's header gives no threads per block: the sort takes the
     * parameters' (sort_run), known now */
    trace_blocks_init(&r->blocks, r->p.threads_per_block);
    r->has_blocks = 1;
    struct copy c = {.w = w, .blocks = &r->blocks};
    int rc = !w ? TRACE_ENOMEM
             : sort_threads(csv_records_at_most(r->f->input)) > 1 ? copy_csv_parallel(r, &c, &te)
                                  : copy_with_writer(r, &c, &te);
    if (rc < 0) {
        rc = read_outcome(r, r->f->input, rc, &te);
        if (w)
            trace_bin_writer_close(w, NULL);
    } else if (trace_bin_writer_close(w, &te)) { /* also when rc > 0: the writer says why */
        rc = fail(r, TRACE_FAULT_OTHER, NULL, "copying the trace: %s", te.msg);
    } else {
        struct trace_sort_opts o = {.tmpdir = r->f->tmpdir};
        rc = trace_input_open(&r->in, path, &o, &te);
        r->in_open = rc == 0;
        if (rc)
            rc = fail(r, TRACE_FAULT_OTHER, NULL, "opening the copy of the trace: %s", te.msg);
    }
    if (named)
        unlink(path);
    close(fd); /* the mapping keeps the file */
    return rc;
}

static int open_input(struct run *r)
{
    if (detect(r))
        return -1;
    if (r->p.in_format == TRACE_FMT_CSV)
        return open_through_copy(r);
    if (r->p.in_format != TRACE_FMT_BIN || r->flags_loaded)
        return open_through_spool(r);
    struct trace_err te = {0};
    struct trace_sort_opts o = {.tmpdir = r->f->tmpdir};
    int rc = trace_input_open(&r->in, r->f->input, &o, &te);
    r->in_open = rc == 0;
    if (rc == TRACE_SORT_EINPUT)
        return fail_at(r, r->f->input, &te);
    return rc ? fail(r, TRACE_FAULT_OTHER, NULL, "%s: %s", r->f->input, te.msg) : 0;
}

static void release(struct run *r)
{
    if (r->has_blocks)
        trace_blocks_free(&r->blocks);
    if (r->in_open)
        trace_input_close(&r->in);
    if (r->flags_loaded)
        trace_pcflags_free(&r->flags);
}

/* ---- sorting ------------------------------------------------------------------- */

/* The sort's outcome: 0 when the output is complete, else a failure; rc is
 * trace_sort_input's. */
static int sort_outcome(struct run *r, int rc, const struct trace_err *te, int closed,
                        const char *close_msg)
{
    if (rc == TRACE_SORT_EINPUT && (r->from_spool || r->in.spooled)) /* offsets of a copy */
        return fail(r, TRACE_FAULT_INPUT, r->f->input, "%s", te->msg);
    if (rc == TRACE_SORT_EINPUT)
        return fail_at(r, r->f->input, te);
    if (rc < 0)
        return fail(r, TRACE_FAULT_OTHER, NULL, "sorting: %s", te->msg);
    if (rc > 0 || closed)
        return fail(r, TRACE_FAULT_OTHER, NULL, "writing %s: %s",
                    outfile_name(&r->out), close_msg);
    return commit(r);
}

/* Threads ordering SMs (the output is the same either way): two for a
 * trace of more than TRACE_SORT_SPLIT_ABOVE records (below, a thread costs
 * more than it saves, and the idle cores are not even asked) when a core
 * beyond the one this thread runs on and the output's writer thread is
 * idle now (util/cores.h; on a busy machine a second sorting thread only
 * adds hand-over and page-table work), else one; GPUPROBE_TRACE_THREADS=1
 * or 2 decides instead. The same number parses a CSV input
 * (open_through_copy): with one core free, two parsing threads would only
 * take turns on it. */
static int sort_threads(uint64_t records)
{
    int set = threads_setting(); /* a bad one was refused by setup */
    if (set > 0)
        return set;
    if (records <= TRACE_SORT_SPLIT_ABOVE)
        return 1;
    return cores_idle() >= 0.5 ? 2 : 1;
}

/* The most records a CSV file can hold (its shortest line, "0,0,0,1,0",
 * is 10 bytes); unknown (a pipe) as many as can be. */
static uint64_t csv_records_at_most(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return UINT64_MAX;
    return (uint64_t)st.st_size / 10;
}

static int sort_run(struct run *r, struct trace_summary *sum)
{
    char msg[256];
    struct trace_bin_header h;
    if (open_input(r))
        return -1;
    trace_params_resolve(&r->p, r->in.bin.h.threads_per_block);
    uint32_t *wave = NULL; /* only checked here, before the output is made: the sort deals again */
    if (trace_params_validate(&r->p, msg, sizeof msg) || trace_deal_placement(&r->p, &wave, msg, sizeof msg))
        return fail(r, TRACE_FAULT_PARAMS, NULL, "%s", msg);
    free(wave);
    trace_bin_header_init(&h, TRACE_BIN_SORTED, &r->p);
    struct out o = {.fd = -1};
    int rc = out_open(r, &o, r->p.out_format == TRACE_OUT_BIN ? &h : NULL);
    if (rc == 0 && !o.bw)
        trace_csv_write_out_header(&o.wb);
    struct trace_err te = {0};
    r->sort_threads = sort_threads(r->in.bin.count);
    struct trace_sort_opts so = {.tmpdir = r->f->tmpdir, .threads = r->sort_threads, .l1 = r->f->l1,
                                 .blocks = r->has_blocks && !r->in.spooled ? &r->blocks : NULL};
    /* encoded by the sorting thread; written (binary) or formatted and
     * written (CSV) by the queue's */
    struct trace_outq *q = rc != 0 ? NULL : trace_outq_new(TRACE_BIN_OUT_BYTES, encoded_items, &o);
    if (rc == 0 && !q)
        rc = fail(r, TRACE_FAULT_OTHER, NULL, "out of memory for the output queue");
    if (rc == 0) {
        struct trace_bin_room room = {.room = bin_room, .commit = bin_commit, .ctx = q};
        so.bin = &room;
        rc = trace_sort_input(&r->in, &r->p, &so, NULL, q, sum, &te);
        int qrc = trace_outq_free(q);
        if (rc == 0)
            rc = qrc;
    }
    if (o.bw)
        trace_bin_writer_set_input(o.bw, sum->records_in);
    int closed = out_close(&o, msg, sizeof msg);
    return r->fail->msg[0] ? -1 : sort_outcome(r, rc, &te, closed, msg);
}

int trace_pipeline_sort(const struct trace_files *f, const struct trace_params *p,
                        struct trace_summary *sum, struct trace_outcome *out,
                        struct trace_failure *failure)
{
    struct run *r = malloc(sizeof *r);
    memset(sum, 0, sizeof *sum);
    if (!r) {
        *failure = (struct trace_failure){TRACE_FAULT_OTHER, NULL, -1, -1, "out of memory"};
        return -1;
    }
    int rc = setup(r, f, p, failure) || sort_run(r, sum) ? -1 : 0;
    if (rc) {
        outfile_discard(&r->out);
        trace_summary_free(sum);
        memset(sum, 0, sizeof *sum);
    } else {
        *out = (struct trace_outcome){r->p.in_format, outfile_bytes(&r->out), r->sort_threads};
    }
    release(r);
    free(r);
    return rc;
}

/* ---- converting ---------------------------------------------------------------- */

/* Opens a sorted binary input (*sorted = 1), or leaves a requests file for
 * trace_read_path. */
static int open_sorted(struct run *r, struct trace_bin *b, int *sorted)
{
    struct trace_err te = {0};
    *sorted = 0;
    if (r->p.in_format != TRACE_FMT_BIN)
        return 0;
    if (trace_bin_open(r->f->input, b, &te))
        return fail_at(r, r->f->input, &te);
    if (b->h.kind != TRACE_BIN_SORTED) {
        trace_bin_close(b);
        return 0;
    }
    *sorted = 1;
    if (!r->flags_loaded)
        return 0;
    trace_bin_close(b);
    return fail(r, TRACE_FAULT_PARAMS, NULL,
                "pc flags apply to request traces, not to a sorted file");
}

/* Writes the records of a sorted file, or the requests of any other input.
 * 0; -1 after fail(); 1 when writing the output failed (the records stop
 * there, and closing the output says why). */
static int convert_into(struct run *r, struct out *o, const struct trace_bin *sorted)
{
    struct trace_err te = {0};
    struct trace_read_stats st = {0};
    int rc;
    if (sorted && !o->bw)
        trace_csv_write_out_header(&o->wb);
    else if (!o->bw)
        trace_csv_write_in_header(&o->wb);
    if (sorted) {
        if (o->bw)
            trace_bin_writer_set_input(o->bw, sorted->h.input_records);
        rc = trace_bin_read_out(sorted, out_sink, o, &te);
    } else {
        rc = trace_read_path(r->f->input, r->p.in_format, r->flags_loaded ? &r->flags : NULL,
                             rec_sink, o, &st, NULL, &te);
        if (o->bw && st.threads_per_block && st.threads_per_block <= UINT32_MAX)
            trace_bin_writer_set_threads_per_block(o->bw, (uint32_t)st.threads_per_block);
    }
    return rc > 0 ? 1 : read_outcome(r, r->f->input, rc, &te); /* > 0: the sink's */
}

static int convert_run(struct run *r)
{
    struct trace_bin b;
    struct trace_bin_header h;
    int sorted = 0;
    char msg[256];
    if (detect(r) || open_sorted(r, &b, &sorted))
        return -1;
    if (sorted)
        h = b.h;
    else
        trace_bin_header_init(&h, TRACE_BIN_REQUESTS, NULL);
    struct out o = {.fd = -1};
    int rc = out_open(r, &o, r->p.out_format == TRACE_OUT_BIN ? &h : NULL);
    if (rc == 0)
        rc = convert_into(r, &o, sorted ? &b : NULL);
    /* as a sort's (sort_outcome): the file, and the writer's reason */
    int closed = out_close(&o, msg, sizeof msg);
    if (rc > 0 || (closed && rc == 0))
        rc = fail(r, TRACE_FAULT_OTHER, NULL, "writing %s: %s", outfile_name(&r->out),
                  closed ? msg : "the writer failed");
    if (sorted)
        trace_bin_close(&b);
    return rc ? -1 : commit(r);
}

int trace_pipeline_convert(const struct trace_files *f, const struct trace_params *p,
                           struct trace_outcome *out, struct trace_failure *failure)
{
    struct run *r = malloc(sizeof *r);
    if (!r) {
        *failure = (struct trace_failure){TRACE_FAULT_OTHER, NULL, -1, -1, "out of memory"};
        return -1;
    }
    int rc = setup(r, f, p, failure) || convert_run(r) ? -1 : 0;
    if (rc)
        outfile_discard(&r->out);
    else
        *out = (struct trace_outcome){r->p.in_format, outfile_bytes(&r->out), 0};
    release(r);
    free(r);
    return rc;
}

/* ---- the result document ------------------------------------------------------- */

json_t *trace_pipeline_result(const struct trace_summary *sum, const struct trace_params *p,
                              const struct trace_outcome *out)
{
    json_t *j = trace_summary_to_json(sum);
    if (!j)
        return NULL;
    json_object_set_new(j, "input_format", json_string(trace_format_name(out->in_format)));
    json_object_set_new(j, "output_format", json_string(trace_out_format_name(p->out_format)));
    json_object_set_new(j, "output_bytes", out->output_bytes >= 0
                                               ? json_integer((json_int_t)out->output_bytes)
                                               : json_null());
    return j;
}
