/*
 * Scanning text traces: number scanners, the line walk, the cursor and the
 * position-naming errors (see scan.h).
 *
 * DESIGN
 * The scanners accumulate digits into a u64 while noting overflow, so a too
 * long number is consumed whole and reported as one OVERFLOW (its end is
 * still known to the caller). A line's CR is dropped only right before its LF
 * or the end of the buffer, so a CR elsewhere stays in the content for the
 * reader to refuse.
 */
#include "trace/scan.h"

#include "trace/binfmt.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- number scanners ---------------------------------------------------- */

/* 1 + the value of every hex digit byte, 0 for any other byte: the digit
 * loop below runs once per byte of every address of a CSV trace. */
const unsigned char trace_hex1[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

static int scan_hex_digits(const char *p, const char *end, uint64_t *v, const char **next)
{
    const char *s = p;
    uint64_t x = 0;
    int over = 0;
    for (unsigned d; p < end && (d = trace_hex1[(unsigned char)*p]) != 0; p++) {
        if (x >> 60)
            over = 1;
        x = x << 4 | (d - 1);
    }
    *next = p;
    if (p == s)
        return TRACE_SCAN_NONE;
    if (over)
        return TRACE_SCAN_OVERFLOW;
    *v = x;
    return TRACE_SCAN_OK;
}

static int has_hex_prefix(const char *p, const char *end)
{
    return end - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
}

static int scan_dec_digits(const char *p, const char *end, uint64_t *v, const char **next)
{
    const char *s = p;
    uint64_t x = 0;
    int over = 0;
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (x > (UINT64_MAX - d) / 10)
            over = 1;
        x = x * 10 + d;
    }
    *next = p;
    if (p == s)
        return TRACE_SCAN_NONE;
    if (over)
        return TRACE_SCAN_OVERFLOW;
    *v = x;
    return TRACE_SCAN_OK;
}

int trace_scan_hex(const char *p, const char *end, uint64_t *v, const char **next)
{
    if (!has_hex_prefix(p, end))
        return scan_hex_digits(p, end, v, next);
    int r = scan_hex_digits(p + 2, end, v, next);
    if (r != TRACE_SCAN_NONE)
        return r;
    *next = p;
    return TRACE_SCAN_NOHEX;
}

int trace_scan_u64(const char *p, const char *end, int allow_hex, uint64_t *v, const char **next)
{
    if (allow_hex && has_hex_prefix(p, end))
        return trace_scan_hex(p, end, v, next);
    return scan_dec_digits(p, end, v, next);
}

int trace_scan_i64(const char *p, const char *end, int64_t *v, const char **next)
{
    int neg = p < end && *p == '-';
    uint64_t u;
    int r = scan_dec_digits(p + neg, end, &u, next);
    if (r == TRACE_SCAN_NONE) {
        *next = p;
        return r;
    }
    if (r != TRACE_SCAN_OK)
        return r;
    if (neg ? u > (uint64_t)INT64_MAX + 1 : u > (uint64_t)INT64_MAX)
        return TRACE_SCAN_OVERFLOW;
    *v = neg ? (int64_t)(0 - u) : (int64_t)u;
    return TRACE_SCAN_OK;
}

/* ---- lines and errors ----------------------------------------------------- */

void trace_text_init(struct trace_text *t, const char *buf, size_t len, struct trace_err *err)
{
    t->buf = t->next = t->ls = buf;
    t->end = buf + len;
    t->line = 0;
    t->base = 0;
    t->err = err;
}

void trace_text_next_chunk(struct trace_text *t, const char *buf, size_t len, uint64_t base)
{
    t->buf = t->next = t->ls = buf;
    t->end = buf + len;
    t->base = base;
}

int trace_text_line(struct trace_text *t, struct trace_cur *c)
{
    if (t->next >= t->end)
        return 0;
    const char *nl = memchr(t->next, '\n', (size_t)(t->end - t->next));
    c->p = t->ls = t->next;
    c->e = nl ? nl : t->end;
    if (c->e > c->p && c->e[-1] == '\r')
        c->e--;
    t->next = nl ? nl + 1 : t->end;
    t->line++;
    return 1;
}

static uint64_t line_offset(const struct trace_text *t)
{
    return t->base + (uint64_t)(t->ls - t->buf);
}

int trace_text_bad(const struct trace_text *t, const char *at, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    trace_err_set(t->err, t->line, line_offset(t), "%s (column %zu)", what,
                  (size_t)(at - t->ls) + 1);
    return TRACE_EINPUT;
}

int trace_text_rec_check(const struct trace_text *t, const char *at, const struct trace_rec *r)
{
    char m[160];
    return trace_bin_req_check(r, TRACE_BIN_VERSION, m, sizeof m) ? trace_text_bad(t, at, "%s", m) : 0;
}

int trace_text_fail(const struct trace_text *t, int rc, const char *fmt, ...)
{
    char what[sizeof t->err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    trace_err_set(t->err, t->line, line_offset(t), "%s", what);
    return rc;
}

int trace_text_put_result(const struct trace_text *t, int r, const char *what)
{
    if (r == 0)
        return 0;
    if (r == TRACE_ENOMEM)
        return trace_text_fail(t, TRACE_ENOMEM, "out of memory");
    return trace_text_fail(t, TRACE_EINPUT, "more than the allowed number of %s", what);
}

/* ---- the cursor ------------------------------------------------------------ */

int trace_cur_lit(struct trace_cur *c, const char *s)
{
    size_t k = strlen(s);
    if ((size_t)(c->e - c->p) < k || memcmp(c->p, s, k) != 0)
        return 0;
    c->p += k;
    return 1;
}

int trace_cur_u64(struct trace_cur *c, int hex, uint64_t *v)
{
    const char *q;
    if (trace_scan_u64(c->p, c->e, hex, v, &q) != TRACE_SCAN_OK)
        return 0;
    c->p = q;
    return 1;
}

int trace_cur_u32(struct trace_cur *c, uint32_t *v)
{
    uint64_t x;
    const char *s = c->p;
    if (!trace_cur_u64(c, 0, &x) || x > UINT32_MAX) {
        c->p = s;
        return 0;
    }
    *v = (uint32_t)x;
    return 1;
}

int trace_cur_triple(struct trace_cur *c, uint32_t v[3])
{
    return trace_cur_u32(c, &v[0]) && trace_cur_lit(c, ",") && trace_cur_u32(c, &v[1]) &&
           trace_cur_lit(c, ",") && trace_cur_u32(c, &v[2]);
}

static int is_blank(char ch)
{
    return ch == ' ' || ch == '\t';
}

void trace_cur_skip_blanks(struct trace_cur *c)
{
    while (c->p < c->e && is_blank(*c->p))
        c->p++;
}

struct trace_tok trace_cur_word(struct trace_cur *c)
{
    struct trace_tok t = {c->p, 0};
    while (c->p < c->e && !is_blank(*c->p))
        c->p++;
    t.n = (size_t)(c->p - t.s);
    return t;
}
