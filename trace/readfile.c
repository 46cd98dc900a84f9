/*
 * Reading a trace file of any input format (see readfile.h).
 *
 * DESIGN
 * CSV files are read through a descriptor in bounded chunks
 * (trace_csv_read_fd), so memory does not grow with the file; NVBit and
 * Accel-Sim files are mapped (MAP_PRIVATE, read-only, advised sequential)
 * and handed whole to their reader; binary files are opened with trace_bin_open,
 * which maps and checks them itself. Detection is a cheap look at the first
 * bytes and at the starts of the lines of the first 64 KiB; the first line
 * that carries a format's marker decides.
 */
#include "trace/readfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/accelsim.h"
#include "trace/binfmt.h"
#include "trace/csv.h"

const char *const trace_format_names[] = {"auto", "csv", "bin", "nvbit", "accelsim", NULL};

const char *trace_format_name(enum trace_format f)
{
    return (unsigned)f <= TRACE_FMT_ACCELSIM ? trace_format_names[f] : "?";
}

int trace_format_parse(const char *name)
{
    for (int i = 0; name && trace_format_names[i]; i++)
        if (strcmp(trace_format_names[i], name) == 0)
            return i;
    return -1;
}

/* ---- detection ------------------------------------------------------------ */

/* 1 if the line starting at p (ending at end or '\n') begins with s. */
static int line_starts(const char *p, const char *end, const char *s)
{
    size_t n = strlen(s);
    return (size_t)(end - p) >= n && memcmp(p, s, n) == 0;
}

/* 1 if buf is exactly the line s, then a line end or the end of the file. */
static int first_line_is(const char *buf, size_t len, const char *s)
{
    size_t n = strlen(s);
    if (len < n || memcmp(buf, s, n) != 0)
        return 0;
    return len == n || buf[n] == '\n' || (buf[n] == '\r' && len > n + 1 && buf[n + 1] == '\n');
}

static const char *const accelsim_markers[] = {
    "-kernel name", "-grid dim", "-block dim", "-accelsim tracer version", "#BEGIN_TB", NULL,
};

/* The text format whose marker starts the line at p, or TRACE_FMT_AUTO. */
static enum trace_format line_format(const char *p, const char *end)
{
    if (line_starts(p, end, "MEMTRACE: "))
        return TRACE_FMT_NVBIT;
    for (const char *const *m = accelsim_markers; *m; m++)
        if (line_starts(p, end, *m))
            return TRACE_FMT_ACCELSIM;
    return TRACE_FMT_AUTO;
}

enum trace_format trace_format_detect(const char *buf, size_t len)
{
    if (len >= 8 && memcmp(buf, TRACE_BIN_MAGIC, 8) == 0)
        return TRACE_FMT_BIN;
    if (first_line_is(buf, len, TRACE_CSV_IN_HEADER) || first_line_is(buf, len, TRACE_CSV_IN_HEADER_NO_OP))
        return TRACE_FMT_CSV;
    const char *end = buf + (len < TRACE_DETECT_WINDOW ? len : TRACE_DETECT_WINDOW);
    for (const char *p = buf; p < end;) {
        enum trace_format f = line_format(p, end);
        if (f != TRACE_FMT_AUTO)
            return f;
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    return TRACE_FMT_AUTO;
}

/* Why no reader takes buf: a sorted trace's CSV (what a sort writes by
 * default, so the likeliest wrong input) is named as such; anything else
 * lists the formats and asks for the format to be named. */
static void unknown_format(const char *buf, size_t len, struct trace_err *err)
{
    if (first_line_is(buf, len, TRACE_CSV_OUT_HEADER) || first_line_is(buf, len, TRACE_CSV_OUT_HEADER_NO_OP)) {
        trace_err_set(err, 1, 0,
                      "this is a sorted trace (a sort's CSV output), not one of requests: it is not "
                      "sorted again, convert reads sorted traces in the binary format only (sort with "
                      "--out-format bin), and trace cache reads it as it is");
        return;
    }
    trace_err_set(err, 1, 0,
                  "cannot tell the format (not a binary trace, CSV with the header \"%s\" or \"%s\", "
                  "NVBit mem_trace or Accel-Sim output): name the format (--in-format on the command "
                  "line, in_format over HTTP)",
                  TRACE_CSV_IN_HEADER, TRACE_CSV_IN_HEADER_NO_OP);
}

/* ---- mapping --------------------------------------------------------------- */

int trace_map_file(const char *path, struct trace_mapped *m, struct trace_err *err)
{
    memset(m, 0, sizeof *m);
    m->data = "";
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        trace_err_set(err, 0, 0, "%s", strerror(errno)); /* (every caller names the file) */
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (S_ISDIR(st.st_mode)) { /* (a FIFO maps as empty: its readers stream it from the descriptor) */
        trace_err_set(err, 0, 0, "is a folder, not a trace");
        close(fd);
        return -1;
    }
    if (st.st_size > 0) {
        m->map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m->map == MAP_FAILED) {
            trace_err_set(err, 0, 0, "mmap: %s", strerror(errno));
            m->map = NULL;
            close(fd);
            return -1;
        }
        madvise(m->map, (size_t)st.st_size, MADV_SEQUENTIAL);
        m->data = m->map;
        m->len = (size_t)st.st_size;
    }
    close(fd); /* the mapping stays valid */
    return 0;
}

void trace_unmap_file(struct trace_mapped *m)
{
    if (m->map)
        munmap(m->map, m->len);
    m->map = NULL;
    m->data = "";
    m->len = 0;
}

/* ---- reading ---------------------------------------------------------------- */

/* Replaces each record's flag with the table's before handing it on. */
struct flagged {
    const struct trace_pcflags *flags;
    trace_sink sink;
    void *ctx;
};

static int flagged_add(void *c, const struct trace_rec *r)
{
    const struct flagged *f = c;
    struct trace_rec copy = *r;
    uint32_t dep;
    if (trace_pcflags_get(f->flags, r->pc, &dep, NULL))
        copy.dep = dep;
    return f->sink(f->ctx, &copy);
}

static int read_bin(const char *path, const struct trace_pcflags *flags, trace_sink sink,
                    void *ctx, struct trace_err *err)
{
    struct trace_bin b;
    if (trace_bin_open(path, &b, err))
        return TRACE_EINPUT;
    int rc;
    if (b.h.kind != TRACE_BIN_REQUESTS) {
        trace_err_set(err, 0, 10, "a sorted trace holds no requests: give the requests file");
        rc = TRACE_EINPUT;
    } else if (flags) {
        struct flagged f = {flags, sink, ctx};
        rc = trace_bin_read(&b, flagged_add, &f, err);
    } else {
        rc = trace_bin_read(&b, sink, ctx, err);
    }
    trace_bin_close(&b);
    return rc < 0 ? TRACE_EINPUT : rc;
}

/* A CSV file opened for reading from start to end, or -1 with err. */
static int open_csv(const char *path, struct trace_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        trace_err_set(err, 0, 0, "%.160s: %s", path, strerror(errno));
    else
        posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    return fd;
}

/* CSV is read in bounded chunks, not mapped: a mapping read to its end
 * keeps the whole file resident while it is parsed. */
static int read_csv(const char *path, const struct trace_pcflags *flags, trace_sink sink,
                    void *ctx, struct trace_err *err)
{
    int fd = open_csv(path, err);
    if (fd < 0)
        return TRACE_ENOMEM;
    struct trace_csv_opts o = {.flags = flags};
    int rc = trace_csv_read_fd(fd, &o, sink, ctx, err);
    close(fd);
    return rc;
}

int trace_read_csv_batch(const char *path, const struct trace_pcflags *flags, int threads,
                         trace_rec_batch_sink sink, void *ctx, struct trace_err *err)
{
    int fd = open_csv(path, err);
    if (fd < 0)
        return TRACE_ENOMEM;
    struct trace_csv_opts o = {.flags = flags, .threads = threads};
    int rc = trace_csv_read_fd_batch(fd, &o, sink, ctx, err);
    close(fd);
    return rc;
}

/* NVBit and Accel-Sim: the mapped file. */
static int read_text(const struct trace_mapped *m, enum trace_format fmt,
                     const struct trace_pcflags *flags, trace_sink sink, void *ctx,
                     struct trace_read_stats *stats, struct trace_err *err)
{
    if (fmt == TRACE_FMT_NVBIT) {
        struct trace_nvbit_opts o;
        trace_nvbit_opts_init(&o);
        o.flags = flags;
        o.stats = stats;
        return trace_nvbit_read(m->data, m->len, &o, sink, ctx, err);
    }
    struct trace_accelsim_opts o;
    trace_accelsim_opts_init(&o);
    o.flags = flags;
    o.stats = stats;
    return trace_accelsim_read(m->data, m->len, &o, sink, ctx, err);
}

int trace_read_path(const char *path, enum trace_format fmt, const struct trace_pcflags *flags,
                    trace_sink sink, void *ctx, struct trace_read_stats *stats,
                    enum trace_format *used, struct trace_err *err)
{
    struct trace_mapped m;
    if (stats)
        memset(stats, 0, sizeof *stats);
    if (trace_map_file(path, &m, err)) /* for binary files too: I/O errors are told apart */
        return TRACE_ENOMEM;
    if (fmt == TRACE_FMT_AUTO)
        fmt = trace_format_detect(m.data, m.len);
    int rc;
    if (fmt == TRACE_FMT_AUTO) {
        unknown_format(m.data, m.len, err);
        rc = TRACE_EINPUT;
    } else if (fmt == TRACE_FMT_BIN) {
        rc = read_bin(path, flags, sink, ctx, err);
    } else if (fmt == TRACE_FMT_CSV) {
        trace_unmap_file(&m); /* only detection looked at it */
        rc = read_csv(path, flags, sink, ctx, err);
    } else {
        rc = read_text(&m, fmt, flags, sink, ctx, stats, err);
    }
    if (used)
        *used = fmt;
    trace_unmap_file(&m);
    return rc;
}

int trace_detect_path(const char *path, enum trace_format *fmt, struct trace_err *err)
{
    struct trace_mapped m;
    if (trace_map_file(path, &m, err))
        return TRACE_ENOMEM;
    *fmt = trace_format_detect(m.data, m.len);
    if (*fmt == TRACE_FMT_AUTO)
        unknown_format(m.data, m.len, err);
    trace_unmap_file(&m);
    return *fmt == TRACE_FMT_AUTO ? TRACE_EINPUT : 0;
}

int trace_pcflags_load(struct trace_pcflags *t, const char *path, struct trace_err *err)
{
    struct trace_mapped m;
    trace_pcflags_init(t, 0);
    if (trace_map_file(path, &m, err))
        return TRACE_ENOMEM;
    int rc = trace_pcflags_parse(t, m.data, m.len, err);
    trace_unmap_file(&m);
    return rc;
}

void trace_err_format(const struct trace_err *err, char *buf, size_t len)
{
    if (err->line)
        snprintf(buf, len, "line %" PRIu64 " (byte offset %" PRIu64 "): %s", err->line,
                 err->offset, err->msg);
    else
        snprintf(buf, len, "byte offset %" PRIu64 ": %s", err->offset, err->msg);
}
