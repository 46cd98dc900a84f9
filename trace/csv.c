/*
 * The CSV trace format: strict streaming reader and fast writers.
 *
 * DESIGN
 * See csv.h for the contract and docs/trace-formats.md for the rules. The
 * reader walks the buffer once: a line is parsed in one pass when it is
 * well formed with short numbers (parse_line_fast: the lines of every real
 * trace), else field by field with the scanners of scan.h, which say
 * exactly what is wrong; it is checked whole, its dep replaced by the user's per-PC flag
 * if there is one, checked against the flag its PC had before, and only then
 * handed to the sink. Nothing but the PC map is allocated. These steps
 * (csv_reader.h) are also what the reader on several threads
 * (csv_threads.c) runs, the checks apart from the parsing.
 * The writers reserve room for a whole line first (flushing if needed), then
 * fill it with hand-rolled integer formatting.
 */
#include "trace/csv.h"
#include "trace/csv_reader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/binfmt.h"
#include "trace/fmtnum.h"
#include "trace/scan.h"

/* ---- reader ------------------------------------------------------------ */

static const char *const field_names[] = {"tid", "pc", "addr", "width", "dep", "op"};

/* The same text as the whole line [c->p, c->e)? */
static int line_is(const struct trace_cur *c, const char *s)
{
    size_t n = strlen(s);
    return (size_t)(c->e - c->p) == n && memcmp(c->p, s, n) == 0;
}

int trace_csv_reader_header(struct csv_reader *r)
{
    struct trace_cur c;
    int ok = trace_text_line(&r->t, &c);
    if (ok && line_is(&c, TRACE_CSV_IN_HEADER)) {
        r->ops = 1;
        return 0;
    }
    if (ok && line_is(&c, TRACE_CSV_IN_HEADER_NO_OP))
        return 0;
    /* line 1, offset 0 also when the buffer is empty (it has no line) */
    trace_err_set(r->t.err, 1, 0, "the first line must be exactly \"%s\" or \"%s\"", TRACE_CSV_IN_HEADER,
                  TRACE_CSV_IN_HEADER_NO_OP);
    return TRACE_EINPUT;
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

/* Checks that field i of n ended where a separator (or the line end) must be. */
static int expect_sep(const struct csv_reader *r, const char *q, const char *ce, int i, int n)
{
    if (i < n - 1) {
        if (q < ce && *q == ',')
            return 0;
        if (q == ce)
            return trace_text_bad(&r->t, q, "line ends after field %s: %d fields expected",
                                  field_names[i], n);
        return trace_text_bad(&r->t, q, "field %s: unexpected character", field_names[i]);
    }
    if (q == ce)
        return 0;
    if (*q == ',')
        return trace_text_bad(&r->t, q, "more than %d fields (after %s)", n, field_names[i]);
    return trace_text_bad(&r->t, q, "field %s: unexpected character", field_names[i]);
}

/* The op field at *q: "ld" (0) or "st" (1); on success *q is past it. */
static int scan_op(const struct csv_reader *r, const char *ce, const char **q, uint64_t *v)
{
    const char *at = *q;
    if (ce - at >= 2 && (memcmp(at, "ld", 2) == 0 || memcmp(at, "st", 2) == 0)) {
        *v = at[0] == 's';
        *q = at + 2;
        return 0;
    }
    return trace_text_bad(&r->t, at, "op must be ld or st");
}

/* The field at *q ends at a ',' (moved past) when more follow, else at
 * the line's end. */
static inline int fast_sep(const char **q, const char *ce, int more)
{
    if (!more)
        return *q == ce;
    if (*q == ce || **q != ',')
        return 0;
    (*q)++;
    return 1;
}

/* A well-formed line whose numbers are short (trace_scan_u64_short), read
 * in one pass: 1 with *rec filled, exactly as parse_line fills it; 0 for
 * any other line, which parse_line then reads again and reports. */
static int parse_line_fast(const struct csv_reader *r, const struct trace_cur *c, struct trace_rec *rec)
{
    const char *q = c->p, *ce = c->e;
    uint64_t tid, pc, addr, width, dep;
    if (!trace_scan_u64_short(&q, ce, 0, &tid) || !fast_sep(&q, ce, 1) ||
        !trace_scan_u64_short(&q, ce, 1, &pc) || !fast_sep(&q, ce, 1) ||
        !trace_scan_u64_short(&q, ce, 1, &addr) || !fast_sep(&q, ce, 1) ||
        !trace_scan_u64_short(&q, ce, 0, &width) || width > 16 || !trace_width_valid((uint32_t)width) ||
        !trace_span_fits(addr, (uint32_t)width) || !fast_sep(&q, ce, 1))
        return 0;
    if (q == ce || (*q != '0' && *q != '1')) /* dep: one digit, 0 or 1 */
        return 0;
    dep = (uint64_t)(*q++ - '0');
    if (!fast_sep(&q, ce, r->ops))
        return 0;
    uint8_t store = 0;
    if (r->ops) {
        if (ce - q != 2 || !((q[0] == 'l' && q[1] == 'd') || (q[0] == 's' && q[1] == 't')))
            return 0;
        store = q[0] == 's';
    }
    *rec = (struct trace_rec){.tid = tid, .pc = pc, .addr = addr, .width = (uint32_t)width,
                              .dep = (uint8_t)dep, .store = store};
    return 1;
}

static int parse_line(const struct csv_reader *r, const struct trace_cur *c, struct trace_rec *rec)
{
    if (parse_line_fast(r, c, rec))
        return 0;
    uint64_t v[6] = {0};
    int n = r->ops ? 6 : 5;
    const char *q = c->p;
    if (c->p == c->e)
        return trace_text_bad(&r->t, c->p, "blank line");
    const char *addr_at = q;
    for (int i = 0; i < n; i++) {
        const char *at = q;
        if (i == 2)
            addr_at = at;
        if ((i == 5 ? scan_op(r, c->e, &q, &v[i]) : scan_field(r, c->e, &q, i, &v[i])) != 0)
            return TRACE_EINPUT;
        if (expect_sep(r, q, c->e, i, n) != 0)
            return TRACE_EINPUT;
        if (i == 3 && (v[3] > 16 || !trace_width_valid((uint32_t)v[3])))
            return trace_text_bad(&r->t, at, "width must be 1, 2, 4, 8 or 16");
        if (i == 4 && (q - at != 1 || v[4] > 1))
            return trace_text_bad(&r->t, at, "dep must be 0 or 1");
        q++;
    }
    *rec = (struct trace_rec){.tid = v[0], .pc = v[1], .addr = v[2], .width = (uint32_t)v[3],
                              .dep = (uint8_t)v[4], .store = (uint8_t)v[5]};
    return trace_text_rec_check(&r->t, addr_at, rec);
}

/* The table result s of setting pc's dep (what "dep") or op (what "op",
 * value: the store flag) as an error, or 0. */
static int flag_result(const struct csv_reader *r, int s, const struct trace_rec *rec, int op, uint64_t first,
                       size_t limit)
{
    static const char *const opname[2] = {"ld", "st"};
    if (s == 1 && op)
        return trace_text_fail(&r->t, TRACE_EINPUT,
                               "pc 0x%llx has op %s here but op %s on line %llu: a PC is one instruction, "
                               "a load or a store",
                               (unsigned long long)rec->pc, opname[rec->store], opname[!rec->store],
                               (unsigned long long)first);
    if (s == 1)
        return trace_text_fail(&r->t, TRACE_EINPUT,
                               "pc 0x%llx has dep %u here but dep %u on line %llu: all records of "
                               "one PC must carry the same flag",
                               (unsigned long long)rec->pc, (unsigned)rec->dep, (unsigned)!rec->dep,
                               (unsigned long long)first);
    if (s == 2)
        return trace_text_fail(&r->t, TRACE_EINPUT, "more than %zu distinct PCs", limit);
    if (s == TRACE_ENOMEM)
        return trace_text_fail(&r->t, TRACE_ENOMEM, "out of memory");
    return s;
}

/* Applies the user's flag, then the one-flag-per-PC rule; with the op
 * column, also one kind of access per PC (NVBit's and Accel-Sim's rule). */
int trace_csv_reader_check(struct csv_reader *r, struct trace_rec *rec)
{
    uint32_t dep;
    int user = trace_pcflags_get(r->o ? r->o->flags : NULL, rec->pc, &dep, NULL);
    if (user)
        rec->dep = (uint8_t)dep;
    if (user && !r->ops)
        return 0;
    uint32_t both1 = ((uint32_t)rec->store << 1 | rec->dep) + 1;
    unsigned slot = (unsigned)((rec->pc * 0x9e3779b97f4a7c15ull) >> 58) & (RECENT - 1);
    if (r->recent_pc[slot] == rec->pc && r->recent_dep1[slot] == both1)
        return 0;
    uint64_t first = 0;
    int s = user ? 0 : trace_pcflags_set(&r->seen, rec->pc, rec->dep, r->t.line, &first);
    if (s)
        return flag_result(r, s, rec, 0, first, r->seen.map.limit);
    if (r->ops && (s = trace_pcflags_set(&r->kind, rec->pc, rec->store, r->t.line, &first)) != 0)
        return flag_result(r, s, rec, 1, first, r->kind.map.limit);
    r->recent_pc[slot] = rec->pc;
    r->recent_dep1[slot] = both1;
    return 0;
}

int trace_csv_reader_lines(struct csv_reader *r, int check, trace_sink sink, void *ctx)
{
    struct trace_cur c;
    while (trace_text_line(&r->t, &c)) {
        struct trace_rec rec;
        int s = parse_line(r, &c, &rec);
        if (s == 0 && check)
            s = trace_csv_reader_check(r, &rec);
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
    trace_pcflags_init(&r.kind, o ? o->max_pcs : 0);
    int s = trace_csv_reader_header(&r);
    if (s == 0)
        s = trace_csv_reader_lines(&r, 1, sink, ctx);
    trace_pcflags_free(&r.seen);
    trace_pcflags_free(&r.kind);
    return s;
}

/* ---- the chunked reader ------------------------------------------------ */

int trace_csv_chunk_fill(struct csv_chunks *k)
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

long long trace_csv_chunk_cut(struct csv_chunks *k)
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
    struct csv_chunks k = {.fd = fd, .cap = o && o->chunk_bytes ? o->chunk_bytes : TRACE_CSV_CHUNK};
    struct csv_reader r = {.o = o};
    k.buf = malloc(k.cap);
    trace_text_init(&r.t, "", 0, err); /* each chunk is set below */
    trace_pcflags_init(&r.seen, o ? o->max_pcs : 0);
    trace_pcflags_init(&r.kind, o ? o->max_pcs : 0);
    int s = k.buf ? 0 : trace_text_fail(&r.t, TRACE_ENOMEM, "out of memory");
    for (int header = 1; s == 0;) {
        if (trace_csv_chunk_fill(&k)) {
            trace_err_set(err, 0, k.base + k.have, "reading the trace: %s", strerror(errno));
            s = TRACE_ENOMEM;
            break;
        }
        long long cut = trace_csv_chunk_cut(&k);
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
            s = trace_csv_reader_header(&r);
        header = 0;
        if (s == 0)
            s = trace_csv_reader_lines(&r, 1, sink, ctx);
        if (k.eof)
            break;
        memmove(k.buf, k.buf + cut, k.have - (size_t)cut);
        k.have -= (size_t)cut;
        k.base += (uint64_t)cut;
    }
    trace_pcflags_free(&r.seen);
    trace_pcflags_free(&r.kind);
    free(k.buf);
    return s;
}


/* ---- writers ----------------------------------------------------------- */

/* 7 fields of at most 20 characters, 6 commas, ",st", '\n', and the bytes a
 * put may store past its digits (fmtnum.h) */
#define LINE_MAX_BYTES 170
_Static_assert(LINE_MAX_BYTES >= 7 * 20 + 6 + 3 + 1 + TRACE_FMT_SLACK, "a line and its slack fit");

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

/* tid,pc,addr,width,dep,op\n — the tail the two record kinds share. */
static char *put_rec_tail(char *p, uint64_t tid, uint64_t pc, uint64_t addr, uint32_t width,
                          uint32_t dep, uint32_t store)
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
    memcpy(p, store ? ",st\n" : ",ld\n", 4);
    return p + 4;
}

int trace_csv_write_in(struct trace_wbuf *w, const struct trace_rec *r)
{
    char *p = reserve(w);
    if (!p)
        return -1;
    char *e = put_rec_tail(p, r->tid, r->pc, r->addr, r->width, r->dep, r->store);
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
    e = put_rec_tail(e, o->tid, o->pc, o->addr, o->width, o->dep, o->store);
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

/* One output line for o, its head kept in h from the line before. 0, or 1
 * once writing has failed. */
static inline int out_line(struct trace_wbuf *w, struct out_head *h, const struct trace_out *o)
{
    char *p = reserve(w);
    if (!p)
        return 1;
    char *e = put_rec_tail(p + head_put(h, o, p), o->tid, o->pc, o->addr, o->width, o->dep, o->store);
    w->len += (size_t)(e - p);
    return 0;
}

int trace_csv_out_sink(void *wbuf, const struct trace_out *o, size_t n)
{
    struct out_head h = {.len = 0};
    for (size_t i = 0; i < n; i++)
        if (out_line(wbuf, &h, &o[i]))
            return 1;
    return 0;
}

int trace_csv_out_sink_encoded(void *wbuf, const uint8_t *bytes, size_t n)
{
    struct out_head h = {.len = 0};
    for (size_t i = 0; i < n; i++) {
        struct trace_out o;
        trace_bin_out_get(bytes + i * TRACE_BIN_OUT_BYTES, &o);
        if (out_line(wbuf, &h, &o))
            return 1;
    }
    return 0;
}
