/*
 * Spooling requests into thread-major order: buffer, radix-sort, spill
 * runs, merge (see spool.h).
 *
 * DESIGN
 * Runs hold records in this host's in-memory layout: the temporary file is
 * private, unlinked at creation and never outlives the process. The radix
 * sort uses 11-bit digits and only as many passes as the largest thread id
 * of the buffer needs (two for up to 4 M threads).
 */
#include "trace/spool.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fdio.h"
#include "trace/tmpfile.h"

#define DIGIT_BITS 11
#define BUCKETS (1u << DIGIT_BITS)
#define MIN_MEM ((size_t)64 << 10)

struct run {
    off_t off;
    uint64_t n;
};

struct trace_spool {
    char tmpdir[256];
    int fd;
    off_t end;
    size_t mem, cap, n;
    struct trace_rec *buf, *tmp;
    struct run *runs;
    size_t nruns, runcap;
    uint64_t total;
    int failed;
    char msg[200];
    size_t count[BUCKETS];
};

static void spool_fail(struct trace_spool *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void spool_fail(struct trace_spool *s, const char *fmt, ...)
{
    if (s->failed)
        return;
    s->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->msg, sizeof s->msg, fmt, ap);
    va_end(ap);
}

struct trace_spool *trace_spool_new(const char *tmpdir, size_t mem_bytes, struct trace_err *err)
{
    struct trace_spool *s = calloc(1, sizeof *s);
    if (s) {
        snprintf(s->tmpdir, sizeof s->tmpdir, "%s", trace_tmpdir(tmpdir));
        s->fd = -1;
        s->mem = mem_bytes ? mem_bytes : TRACE_SPOOL_DEFAULT_MEM;
        if (s->mem < MIN_MEM)
            s->mem = MIN_MEM;
        s->cap = s->mem / (2 * sizeof(struct trace_rec));
        s->buf = malloc(s->cap * sizeof *s->buf);
        s->tmp = malloc(s->cap * sizeof *s->tmp);
    }
    if (!s || !s->buf || !s->tmp) {
        if (err) {
            err->line = err->offset = 0;
            snprintf(err->msg, sizeof err->msg, "out of memory for the spool");
        }
        trace_spool_free(s);
        return NULL;
    }
    return s;
}

void trace_spool_free(struct trace_spool *s)
{
    if (!s)
        return;
    if (s->fd >= 0)
        close(s->fd);
    free(s->buf);
    free(s->tmp);
    free(s->runs);
    free(s);
}

uint64_t trace_spool_count(const struct trace_spool *s)
{
    return s->total;
}

/* Stable LSD radix sort of s->buf[0..n) by tid; result in s->buf. */
static void radix_sort(struct trace_spool *s)
{
    uint64_t max = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->buf[i].tid > max)
            max = s->buf[i].tid;
    size_t *count = s->count;
    struct trace_rec *src = s->buf, *dst = s->tmp;
    for (unsigned shift = 0; shift < 64 && (max >> shift); shift += DIGIT_BITS) {
        memset(count, 0, BUCKETS * sizeof *count);
        for (size_t i = 0; i < s->n; i++)
            count[(src[i].tid >> shift) & (BUCKETS - 1)]++;
        size_t sum = 0;
        for (size_t b = 0; b < BUCKETS; b++) {
            size_t c = count[b];
            count[b] = sum;
            sum += c;
        }
        for (size_t i = 0; i < s->n; i++)
            dst[count[(src[i].tid >> shift) & (BUCKETS - 1)]++] = src[i];
        struct trace_rec *t = src;
        src = dst;
        dst = t;
    }
    if (src != s->buf) {
        s->tmp = s->buf;
        s->buf = src;
    }
}

static int open_tmp(struct trace_spool *s)
{
    char path[300];
    int named;
    s->fd = trace_tmp_open(s->tmpdir, "spool", path, sizeof path, &named);
    if (s->fd < 0) {
        spool_fail(s, "spool file in %s: %s", s->tmpdir, strerror(errno));
        return -1;
    }
    if (named)
        unlink(path); /* runs are read back through the descriptor only */
    return 0;
}

/* Sorts the buffer and appends it to the spool file as one run. */
static int spill(struct trace_spool *s)
{
    if (s->fd < 0 && open_tmp(s))
        return -1;
    if (s->nruns == s->runcap) {
        size_t nc = s->runcap ? s->runcap * 2 : 16;
        struct run *nr = realloc(s->runs, nc * sizeof *nr);
        if (!nr) {
            spool_fail(s, "out of memory");
            return -1;
        }
        s->runs = nr;
        s->runcap = nc;
    }
    radix_sort(s);
    size_t bytes = s->n * sizeof *s->buf;
    if (fd_write_all(s->fd, s->buf, bytes, s->end)) {
        spool_fail(s, "writing the spool file: %s", strerror(errno ? errno : ENOSPC));
        return -1;
    }
    s->runs[s->nruns].off = s->end;
    s->runs[s->nruns].n = s->n;
    s->nruns++;
    s->end += (off_t)bytes;
    s->n = 0;
    return 0;
}

int trace_spool_add(void *ctx, const struct trace_rec *r)
{
    struct trace_spool *s = ctx;
    assert(s && r);
    if (s->failed)
        return 1;
    if (s->n == s->cap && spill(s))
        return 1;
    s->buf[s->n++] = *r;
    s->total++;
    return 0;
}

/* ---- merging -------------------------------------------------------------- */

struct reader {
    struct trace_rec *buf;
    size_t have, at;
    uint64_t left;      /* records of the run not yet read into buf */
    off_t next;         /* file offset of the next unread record */
};

struct merge {
    struct trace_spool *s;
    struct reader *rd;
    size_t bufrecs;
    uint32_t *heap; /* run numbers */
    size_t hn;
};

static int refill(struct merge *m, struct reader *r)
{
    size_t want = r->left < m->bufrecs ? (size_t)r->left : m->bufrecs;
    size_t bytes = want * sizeof *r->buf;
    int rc = fd_read_all(m->s->fd, r->buf, bytes, r->next);
    if (rc != 0) {
        spool_fail(m->s, "reading the spool file: %s", rc < 0 ? strerror(errno) : "short read");
        return -1;
    }
    r->next += (off_t)bytes;
    r->left -= want;
    r->have = want;
    r->at = 0;
    return 0;
}

/* (tid, run) ordering of two heap entries. */
static int before(const struct merge *m, uint32_t a, uint32_t b)
{
    uint64_t ta = m->rd[a].buf[m->rd[a].at].tid, tb = m->rd[b].buf[m->rd[b].at].tid;
    return ta < tb || (ta == tb && a < b);
}

static void sift_down(struct merge *m, size_t i)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= m->hn)
            return;
        if (c + 1 < m->hn && before(m, m->heap[c + 1], m->heap[c]))
            c++;
        if (!before(m, m->heap[c], m->heap[i]))
            return;
        uint32_t t = m->heap[c];
        m->heap[c] = m->heap[i];
        m->heap[i] = t;
        i = c;
    }
}

static int merge_runs(struct trace_spool *s, struct trace_bin_writer *w)
{
    struct merge m = {.s = s};
    size_t total_recs = s->mem / sizeof(struct trace_rec);
    m.bufrecs = total_recs / s->nruns;
    if (m.bufrecs < 256)
        m.bufrecs = 256;
    m.rd = calloc(s->nruns, sizeof *m.rd);
    m.heap = calloc(s->nruns, sizeof *m.heap);
    struct trace_rec *pool = malloc(s->nruns * m.bufrecs * sizeof *pool);
    int rc = -1;
    if (!m.rd || !m.heap || !pool) {
        spool_fail(s, "out of memory merging %zu runs", s->nruns);
        goto out;
    }
    for (size_t i = 0; i < s->nruns; i++) {
        m.rd[i].buf = pool + i * m.bufrecs;
        m.rd[i].left = s->runs[i].n;
        m.rd[i].next = s->runs[i].off;
        if (refill(&m, &m.rd[i]))
            goto out;
        if (m.rd[i].have)
            m.heap[m.hn++] = (uint32_t)i;
    }
    for (size_t i = m.hn; i-- > 0;)
        sift_down(&m, i);
    while (m.hn) {
        struct reader *r = &m.rd[m.heap[0]];
        if (trace_bin_write_rec(w, &r->buf[r->at])) {
            spool_fail(s, "writing the thread-major trace failed");
            goto out;
        }
        if (++r->at == r->have) {
            if (r->left && refill(&m, r))
                goto out;
            if (r->at == r->have) /* run exhausted */
                m.heap[0] = m.heap[--m.hn];
        }
        sift_down(&m, 0);
    }
    rc = 0;
out:
    free(pool);
    free(m.rd);
    free(m.heap);
    return rc;
}

int trace_spool_finish(struct trace_spool *s, struct trace_bin_writer *w, struct trace_err *err)
{
    int rc = s->failed ? -1 : 0;
    if (rc == 0 && s->nruns == 0) {
        radix_sort(s);
        for (size_t i = 0; i < s->n && rc == 0; i++)
            if (trace_bin_write_rec(w, &s->buf[i])) {
                spool_fail(s, "writing the thread-major trace failed");
                rc = -1;
            }
    } else if (rc == 0) {
        if (s->n && spill(s))
            rc = -1;
        free(s->buf); /* the merge's buffers take their place */
        free(s->tmp);
        s->buf = s->tmp = NULL;
        s->cap = s->n = 0;
        if (rc == 0 && merge_runs(s, w))
            rc = -1;
    }
    spool_fail(s, "the spool was already finished"); /* refuses later adds */
    if (rc && err) {
        err->line = err->offset = 0;
        snprintf(err->msg, sizeof err->msg, "%s", s->msg);
    }
    return rc;
}
