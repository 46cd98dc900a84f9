/*
 * libFuzzer target for the CSV trace reader and writer (trace/csv.c).
 *
 * DESIGN
 * Any input is read with the default options. Checked on every input:
 * the reader returns 0 or TRACE_EINPUT (never crashes, never reads past the
 * buffer: the input is libFuzzer's exact-size copy); an error names a line
 * start (offset 0 or just after a '\n') whose line number matches the
 * offset; every record has a valid width, a 0/1 flag, and one flag per PC.
 * When the read succeeds, the records are written back as CSV and read
 * again: the second read must succeed and give the same records.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/csv.h"

#define CAP 65536 /* records kept for the round trip; larger inputs skip it */

struct recs {
    struct trace_rec r[CAP];
    size_t n;
    int over;
    struct trace_pcflags seen;
};

static struct recs first, second;

static int keep(void *ctx, const struct trace_rec *r)
{
    struct recs *k = ctx;
    if (!trace_width_valid(r->width) || r->dep > 1)
        abort();
    if (trace_pcflags_set(&k->seen, r->pc, r->dep, 0, NULL) == 1)
        abort(); /* two flags for one PC got through */
    if (k->n < CAP)
        k->r[k->n++] = *r;
    else
        k->over = 1;
    return 0;
}

static void check_error(const uint8_t *d, size_t n, const struct trace_err *e)
{
    if (e->offset > n || (e->offset > 0 && d[e->offset - 1] != '\n'))
        abort();
    uint64_t line = 1;
    for (size_t i = 0; i < e->offset; i++)
        line += d[i] == '\n';
    if (line != e->line || e->msg[0] == '\0')
        abort();
}

struct mem {
    char *p;
    size_t n, cap;
};

static int mem_flush(void *ctx, const char *data, size_t n)
{
    struct mem *m = ctx;
    if (m->n + n > m->cap) {
        m->cap = (m->n + n) * 2;
        m->p = realloc(m->p, m->cap);
        if (!m->p)
            abort();
    }
    memcpy(m->p + m->n, data, n);
    m->n += n;
    return 0;
}

static void round_trip(void)
{
    char buf[4096];
    struct mem m = {0};
    struct trace_wbuf w;
    struct trace_err e;
    trace_wbuf_init(&w, buf, sizeof buf, mem_flush, &m);
    if (trace_csv_write_in_header(&w) != 0)
        abort();
    for (size_t i = 0; i < first.n; i++)
        if (trace_csv_write_in(&w, &first.r[i]) != 0)
            abort();
    if (trace_wbuf_flush(&w) != 0)
        abort();
    second.n = 0;
    trace_pcflags_init(&second.seen, 0);
    if (trace_csv_read(m.p, m.n, NULL, keep, &second, &e) != 0 || second.n != first.n ||
        memcmp(second.r, first.r, first.n * sizeof first.r[0]) != 0)
        abort();
    trace_pcflags_free(&second.seen);
    free(m.p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct trace_err e = {0};
    first.n = 0;
    first.over = 0;
    trace_pcflags_init(&first.seen, 0);
    int r = trace_csv_read((const char *)data, size, NULL, keep, &first, &e);
    trace_pcflags_free(&first.seen);
    if (r == TRACE_EINPUT)
        check_error(data, size, &e);
    else if (r != 0)
        abort();
    else if (!first.over)
        round_trip();
    return 0;
}
