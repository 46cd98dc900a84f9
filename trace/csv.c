/*
 * The CSV trace format: strict streaming reader and fast writers.
 *
 * DESIGN
 * See csv.h for the contract and docs/trace-formats.md for the rules. The
 * reader walks the buffer once: a line is parsed field by field with the
 * scanners of scan.h, checked whole, its dep replaced by the user's per-PC flag
 * if there is one, checked against the flag its PC had before, and only then
 * handed to the sink. Nothing but the PC map is allocated.
 * The writers reserve room for a whole line first (flushing if needed), then
 * fill it with hand-rolled integer formatting.
 */
#include "trace/csv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/fmtnum.h"
#include "trace/scan.h"

/* ---- reader ------------------------------------------------------------ */

#define RECENT 64 /* PCs whose flag was checked lately (a power of two) */

struct csv_reader {
    struct trace_text t; /* the line being read */
    const struct trace_csv_opts *o;
    struct trace_pcflags seen; /* pc -> dep and the line that first had it */
    /* A direct-mapped cache of PCs already in `seen`, with their flag + 1
     * (0: empty): a record whose PC and flag are found here passes the
     * one-flag-per-PC check without a lookup in the map. */
    uint64_t recent_pc[RECENT];
    uint32_t recent_dep1[RECENT];
};

static const char *const field_names[] = {"tid", "pc", "addr", "width", "dep"};

static int read_header(struct csv_reader *r)
{
    struct trace_cur c;
    size_t n = strlen(TRACE_CSV_IN_HEADER);
    if (!trace_text_line(&r->t, &c) || (size_t)(c.e - c.p) != n ||
        memcmp(c.p, TRACE_CSV_IN_HEADER, n) != 0) {
        /* line 1, offset 0 also when the buffer is empty (it has no line) */
        trace_err_set(r->t.err, 1, 0, "the first line must be exactly \"%s\"", TRACE_CSV_IN_HEADER);
        return TRACE_EINPUT;
    }
    return 0;
}

/* Scans field i (a number) at *q; on success *q is past it. */
static int scan_field(const struct csv_reader *r, const char *ce, const char **q, int i,
                      uint64_t *v)
{
    const char *at = *q;
    int s = trace_scan_u64(at, ce, i == 1 || i == 2, v, q);
    if (s == TRACE_SCAN_OK)
        return 0;
    if (s == TRACE_SCAN_OVERFLOW)
        return trace_text_bad(&r->t, at, "field %s does not fit 64 bits", field_names[i]);
    if (s == TRACE_SCAN_NOHEX)
        return trace_text_bad(&r->t, at, "field %s: \"0x\" without hex digits", field_names[i]);
    if (i == 1 || i == 2)
        return trace_text_bad(&r->t, at, "field %s: expected a decimal or 0x-hex number",
                              field_names[i]);
    return trace_text_bad(&r->t, at, "field %s: expected a decimal number", field_names[i]);
}

/* Checks that field i ended where a separator (or the line end) must be. */
static int expect_sep(const struct csv_reader *r, const char *q, const char *ce, int i)
{
    if (i < 4) {
        if (q < ce && *q == ',')
            return 0;
        if (q == ce)
            return trace_text_bad(&r->t, q, "line ends after field %s: 5 fields expected",
                                  field_names[i]);
        return trace_text_bad(&r->t, q, "field %s: unexpected character", field_names[i]);
    }
    if (q == ce)
        return 0;
    if (*q == ',')
        return trace_text_bad(&r->t, q, "more than 5 fields (after %s)", field_names[i]);
    return trace_text_bad(&r->t, q, "field %s: unexpected character", field_names[i]);
}

static int parse_line(const struct csv_reader *r, const struct trace_cur *c, struct trace_rec *rec)
{
    uint64_t v[5];
    const char *q = c->p;
    if (c->p == c->e)
        return trace_text_bad(&r->t, c->p, "blank line");
    for (int i = 0; i < 5; i++) {
        const char *at = q;
        if (scan_field(r, c->e, &q, i, &v[i]) != 0)
            return TRACE_EINPUT;
        if (expect_sep(r, q, c->e, i) != 0)
            return TRACE_EINPUT;
        if (i == 3 && (v[3] > 16 || !trace_width_valid((uint32_t)v[3])))
            return trace_text_bad(&r->t, at, "width must be 1, 2, 4, 8 or 16");
        if (i == 4 && (q - at != 1 || v[4] > 1))
            return trace_text_bad(&r->t, at, "dep must be 0 or 1");
        q++;
    }
    rec->tid = v[0];
    rec->pc = v[1];
    rec->addr = v[2];
    rec->width = (uint32_t)v[3];
    rec->dep = (uint32_t)v[4];
    return 0;
}

/* Applies the user's flag, then the one-flag-per-PC rule. */
static int check_flag(struct csv_reader *r, struct trace_rec *rec)
{
    uint32_t dep;
    if (trace_pcflags_get(r->o ? r->o->flags : NULL, rec->pc, &dep, NULL)) {
        rec->dep = dep;
        return 0;
    }
    unsigned slot = (unsigned)((rec->pc * 0x9e3779b97f4a7c15ull) >> 58) & (RECENT - 1);
    if (r->recent_pc[slot] == rec->pc && r->recent_dep1[slot] == rec->dep + 1)
        return 0;
    uint64_t first = 0;
    int s = trace_pcflags_set(&r->seen, rec->pc, rec->dep, r->t.line, &first);
    if (s == 0) {
        r->recent_pc[slot] = rec->pc;
        r->recent_dep1[slot] = rec->dep + 1;
    }
    if (s == 1)
        return trace_text_fail(&r->t, TRACE_EINPUT,
                               "pc 0x%llx has dep %u here but dep %u on line %llu: all records of "
                               "one PC must carry the same flag",
                               (unsigned long long)rec->pc, (unsigned)rec->dep, (unsigned)!rec->dep,
                               (unsigned long long)first);
    if (s == 2)
        return trace_text_fail(&r->t, TRACE_EINPUT, "more than %zu distinct PCs",
                               r->seen.map.limit);
    if (s == TRACE_ENOMEM)
        return trace_text_fail(&r->t, TRACE_ENOMEM, "out of memory");
    return s;
}

static int read_records(struct csv_reader *r, trace_sink sink, void *ctx)
{
    struct trace_cur c;
    while (trace_text_line(&r->t, &c)) {
        struct trace_rec rec;
        int s = parse_line(r, &c, &rec);
        if (s == 0)
            s = check_flag(r, &rec);
        if (s == 0)
            s = sink(ctx, &rec);
        if (s != 0)
            return s;
    }
    return 0;
}

int trace_csv_read(const char *buf, size_t len, const struct trace_csv_opts *o, trace_sink sink,
                   void *ctx, struct trace_err *err)
{
    struct csv_reader r = {.o = o};
    trace_text_init(&r.t, buf, len, err);
    trace_pcflags_init(&r.seen, o ? o->max_pcs : 0);
    int s = read_header(&r);
    if (s == 0)
        s = read_records(&r, sink, ctx);
    trace_pcflags_free(&r.seen);
    return s;
}

/* ---- the chunked reader ------------------------------------------------ */

struct chunks {
    int fd, eof;
    char *buf;
    size_t cap, have; /* buf[0..have) read, starting at a line start */
    uint64_t base;    /* file offset of buf[0] */
};

/* Reads until the buffer is full or the file ends. 0 or -1 (errno). */
static int chunk_fill(struct chunks *k)
{
    while (!k->eof && k->have < k->cap) {
        ssize_t n = read(k->fd, k->buf + k->have, k->cap - k->have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        k->eof = n == 0;
        k->have += (size_t)n;
    }
    return 0;
}

/* How many bytes of the buffer to parse now: through its last LF, all of it
 * at the end of the file, or 0 when no line ends in it yet (then the buffer
 * grows, up to a line of TRACE_CSV_MAX_LINE bytes: -1). */
static long long chunk_cut(struct chunks *k)
{
    if (k->eof)
        return (long long)k->have;
    const char *nl = memrchr(k->buf, '\n', k->have);
    if (nl)
        return nl - k->buf + 1;
    if (k->have >= TRACE_CSV_MAX_LINE)
        return -1;
    char *nb = realloc(k->buf, k->cap * 2);
    if (!nb)
        return -2;
    k->buf = nb;
    k->cap *= 2;
    return 0;
}

int trace_csv_read_fd(int fd, const struct trace_csv_opts *o, trace_sink sink, void *ctx,
                      struct trace_err *err)
{
    struct chunks k = {.fd = fd, .cap = o && o->chunk_bytes ? o->chunk_bytes : TRACE_CSV_CHUNK};
    struct csv_reader r = {.o = o};
    k.buf = malloc(k.cap);
    trace_text_init(&r.t, "", 0, err); /* each chunk is set below */
    trace_pcflags_init(&r.seen, o ? o->max_pcs : 0);
    int s = k.buf ? 0 : trace_text_fail(&r.t, TRACE_ENOMEM, "out of memory");
    for (int header = 1; s == 0;) {
        if (chunk_fill(&k)) {
            trace_err_set(err, 0, k.base + k.have, "reading the trace: %s", strerror(errno));
            s = TRACE_ENOMEM;
            break;
        }
        long long cut = chunk_cut(&k);
        if (cut < 0) {
            if (cut == -1)
                trace_err_set(err, r.t.line + 1, k.base, "line longer than %zu bytes", TRACE_CSV_MAX_LINE);
            else
                trace_err_set(err, r.t.line + 1, k.base, "out of memory for a line of %zu bytes", k.have);
            s = cut == -1 ? TRACE_EINPUT : TRACE_ENOMEM;
            break;
        }
        if (cut == 0 && !k.eof)
            continue;
        trace_text_next_chunk(&r.t, k.buf, (size_t)cut, k.base);
        if (header)
            s = read_header(&r);
        header = 0;
        if (s == 0)
            s = read_records(&r, sink, ctx);
        if (k.eof)
            break;
        memmove(k.buf, k.buf + cut, k.have - (size_t)cut);
        k.have -= (size_t)cut;
        k.base += (uint64_t)cut;
    }
    trace_pcflags_free(&r.seen);
    free(k.buf);
    return s;
}

/* ---- writers ----------------------------------------------------------- */

/* 7 fields of at most 20 characters, 6 commas, '\n', and the bytes a put
 * may store past its digits (fmtnum.h) */
#define LINE_MAX_BYTES 160
_Static_assert(LINE_MAX_BYTES >= 7 * 20 + 6 + 1 + TRACE_FMT_SLACK, "a line and its slack fit");

void trace_wbuf_init(struct trace_wbuf *w, char *buf, size_t cap,
                     int (*flush)(void *ctx, const char *data, size_t n), void *ctx)
{
    w->buf = buf;
    w->cap = cap;
    w->len = 0;
    w->flush = flush;
    w->ctx = ctx;
    w->failed = cap < TRACE_WBUF_MIN;
}

static int file_flush(void *f, const char *data, size_t n)
{
    return fwrite(data, 1, n, f) == n ? 0 : -1;
}

void trace_wbuf_init_file(struct trace_wbuf *w, char *buf, size_t cap, FILE *f)
{
    trace_wbuf_init(w, buf, cap, file_flush, f);
}

int trace_wbuf_flush(struct trace_wbuf *w)
{
    if (!w->failed && w->len && w->flush(w->ctx, w->buf, w->len) != 0)
        w->failed = 1;
    w->len = 0;
    return w->failed ? -1 : 0;
}

/* Room for one line, or NULL once writing has failed. */
static char *reserve(struct trace_wbuf *w)
{
    if (w->cap - w->len < LINE_MAX_BYTES)
        trace_wbuf_flush(w);
    return w->failed ? NULL : w->buf + w->len;
}

static int put_text(struct trace_wbuf *w, const char *s)
{
    char *p = reserve(w);
    if (!p)
        return -1;
    size_t n = strlen(s);
    memcpy(p, s, n);
    p[n] = '\n';
    w->len += n + 1;
    return 0;
}

int trace_csv_write_in_header(struct trace_wbuf *w)
{
    return put_text(w, TRACE_CSV_IN_HEADER);
}

int trace_csv_write_out_header(struct trace_wbuf *w)
{
    return put_text(w, TRACE_CSV_OUT_HEADER);
}

/* tid,pc,addr,width,dep\n — the tail the two record kinds share. */
static char *put_rec_tail(char *p, uint64_t tid, uint64_t pc, uint64_t addr, uint32_t width,
                          uint32_t dep)
{
    p = trace_put_dec(p, tid);
    *p++ = ',';
    p = trace_put_hex(p, pc);
    *p++ = ',';
    p = trace_put_hex(p, addr);
    *p++ = ',';
    p = trace_put_dec(p, width);
    *p++ = ',';
    p = trace_put_dec(p, dep);
    *p++ = '\n';
    return p;
}

int trace_csv_write_in(struct trace_wbuf *w, const struct trace_rec *r)
{
    char *p = reserve(w);
    if (!p)
        return -1;
    char *e = put_rec_tail(p, r->tid, r->pc, r->addr, r->width, r->dep);
    w->len += (size_t)(e - p);
    return 0;
}

int trace_csv_write_out(struct trace_wbuf *w, const struct trace_out *o)
{
    char *p = reserve(w);
    if (!p)
        return -1;
    char *e = trace_put_dec(p, o->sm);
    *e++ = ',';
    e = trace_put_dec(e, o->seq);
    *e++ = ',';
    e = put_rec_tail(e, o->tid, o->pc, o->addr, o->width, o->dep);
    w->len += (size_t)(e - p);
    return 0;
}

int trace_csv_sink(void *wbuf, const struct trace_rec *r)
{
    return trace_csv_write_in(wbuf, r) == 0 ? 0 : 1;
}

/* The "sm,seq," that starts an output line, kept from one line to the next
 * of a batch: inside an SM seq counts up by one, so the next line's head is
 * this text plus one, and the divisions of a decimal conversion are saved
 * on the field that has the most digits. */
struct out_head {
    char text[32]; /* sm (10 digits at most), seq (20), two commas */
    size_t len;
    uint32_t sm;
    uint64_t seq;
};

static void head_format(struct out_head *h, const struct trace_out *o)
{
    char *e = trace_put_dec(h->text, o->sm);
    *e++ = ',';
    e = trace_put_dec(e, o->seq);
    *e++ = ',';
    h->len = (size_t)(e - h->text);
    h->sm = o->sm;
    h->seq = o->seq;
}

/* Writes o's head at p (a fixed 32-byte copy: inside the reserved line)
 * and returns its length. When o follows the previous line in its SM, the
 * copy is the previous head and one is added to its seq in place, in p and
 * in h alike: the 32 bytes are read from h before this line's byte stores
 * to it (a wide load right after them would wait for them). */
static size_t head_put(struct out_head *h, const struct trace_out *o, char *p)
{
    if (h->len && o->sm == h->sm && o->seq == h->seq + 1) {
        memcpy(p, h->text, sizeof h->text);
        size_t i = h->len - 2; /* seq's last digit */
        while (p[i] == '9')
            p[i] = h->text[i] = '0', i--;
        if (p[i] != ',') { /* else every digit was 9: seq gains one */
            p[i]++;
            h->text[i]++;
            h->seq++;
            return h->len;
        }
    }
    head_format(h, o);
    memcpy(p, h->text, sizeof h->text);
    return h->len;
}

int trace_csv_out_sink(void *wbuf, const struct trace_out *o, size_t n)
{
    struct trace_wbuf *w = wbuf;
    struct out_head h = {.len = 0};
    for (size_t i = 0; i < n; i++) {
        char *p = reserve(w);
        if (!p)
            return 1;
        char *e = put_rec_tail(p + head_put(&h, &o[i], p), o[i].tid, o[i].pc, o[i].addr, o[i].width, o[i].dep);
        w->len += (size_t)(e - p);
    }
    return 0;
}
