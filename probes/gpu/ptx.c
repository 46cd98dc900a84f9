/*
 * PTX text building (see ptx.h).
 *
 * DESIGN
 * One growing buffer, doubled as needed; the first failure (no memory, a
 * text vsnprintf cannot format) sets oom, every later append is skipped,
 * and ptx_take answers NULL, so a generator checks once, at the end, and
 * never hands the JIT a module with a piece missing. Every entry point
 * asserts the struct's invariant (see valid()), which catches a builder
 * used before ptx_init or after ptx_free's memory was reused.
 */
#include "probes/gpu/ptx.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A builder is empty (nothing allocated) or holds len bytes and a NUL in
 * a buffer of cap. */
static int valid(const struct ptx *p)
{
    return p != NULL && (p->buf ? p->len < p->cap : p->len == 0 && p->cap == 0);
}

void ptx_init(struct ptx *p)
{
    assert(p != NULL);
    memset(p, 0, sizeof *p);
}

static int reserve(struct ptx *p, size_t more)
{
    if (p->oom)
        return -1;
    if (p->len + more + 1 <= p->cap)
        return 0;
    size_t cap = p->cap ? p->cap : 4096;
    while (cap < p->len + more + 1)
        cap *= 2;
    char *b = realloc(p->buf, cap);
    if (!b) {
        p->oom = 1;
        return -1;
    }
    p->buf = b;
    p->cap = cap;
    return 0;
}

static void append(struct ptx *p, const char *s, size_t n)
{
    if (reserve(p, n) < 0)
        return;
    memcpy(p->buf + p->len, s, n);
    p->len += n;
    p->buf[p->len] = '\0';
}

void ptx_add(struct ptx *p, const char *fmt, ...)
{
    assert(valid(p) && fmt != NULL);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        p->oom = 1;
    if (n < 0 || reserve(p, (size_t)n) < 0)
        return;
    va_start(ap, fmt);
    vsnprintf(p->buf + p->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    p->len += (size_t)n;
}

static const char *lookup(const char *key, size_t klen, const char *const *keys,
                          const char *const *vals, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        assert(keys[i] != NULL);
        if (strlen(keys[i]) == klen && memcmp(keys[i], key, klen) == 0)
            return vals[i];
    }
    return NULL;
}

void ptx_expand(struct ptx *p, const char *tmpl, const char *const *keys,
                const char *const *vals, size_t n)
{
    assert(valid(p) && tmpl != NULL);
    assert((keys != NULL && vals != NULL) || n == 0);
    const char *s = tmpl;
    while (*s) {
        const char *open = strchr(s, '{');
        const char *close = open ? strchr(open, '}') : NULL;
        if (!open || !close) {
            append(p, s, strlen(s));
            return;
        }
        append(p, s, (size_t)(open - s));
        const char *v = lookup(open + 1, (size_t)(close - open - 1), keys, vals, n);
        if (v)
            append(p, v, strlen(v));
        else
            append(p, open, (size_t)(close - open + 1));
        s = close + 1;
    }
}

char *ptx_take(struct ptx *p)
{
    assert(valid(p));
    append(p, "", 0);                /* nothing appended yet: "", not the NULL of a failure */
    char *b = p->oom ? NULL : p->buf;
    if (p->oom)
        free(p->buf);
    memset(p, 0, sizeof *p);
    return b;
}

void ptx_free(struct ptx *p)
{
    assert(p != NULL);
    free(p->buf);
    memset(p, 0, sizeof *p);
}

void ptx_header(struct ptx *p, int cc_major, int cc_minor)
{
    /* PTX ISA 8.0 is the oldest that targets sm_90 and is read by every
     * driver of the CUDA 12 and 13 series. */
    ptx_header_version(p, cc_major, cc_minor, NULL);
}

void ptx_header_version(struct ptx *p, int cc_major, int cc_minor, const char *version)
{
    ptx_header_arch(p, cc_major, cc_minor, version, 0);
}

void ptx_header_arch(struct ptx *p, int cc_major, int cc_minor, const char *version,
                     int arch_specific)
{
    assert(valid(p));
    ptx_add(p, ".version %s\n.target sm_%d%d%s\n.address_size 64\n\n", version ? version : "8.0",
            cc_major, cc_minor, arch_specific ? "a" : "");
}
