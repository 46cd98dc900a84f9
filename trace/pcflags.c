/*
 * The per-PC dependency flag table and the helpers the text trace readers
 * share (hash map, number scanners, error setter).
 *
 * DESIGN
 * See pcflags.h. The map hashes keys with a 64-bit finaliser (splitmix64's),
 * probes linearly and doubles when it would become more than half full, so a
 * lookup touches a short run of slots. Nothing is ever removed: the readers
 * only add (PCs, warps), and keeping no tombstones keeps probing simple.
 * The table parser is a line loop over the buffer; each line is checked
 * completely before its entry is added.
 */
#include "trace/pcflags.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- map --------------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

void trace_map_init(struct trace_map *m, size_t limit)
{
    memset(m, 0, sizeof *m);
    m->limit = limit;
}

void trace_map_free(struct trace_map *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    size_t limit = m->limit;
    trace_map_init(m, limit);
}

/* The slot holding key, or the empty slot where it would go. cap > 0. */
static size_t map_slot(const struct trace_map *m, uint64_t key)
{
    size_t mask = m->cap - 1;
    size_t i = (size_t)mix64(key) & mask;
    while (m->used[i] && m->keys[i] != key)
        i = (i + 1) & mask;
    return i;
}

int trace_map_get(const struct trace_map *m, uint64_t key, uint64_t *val)
{
    if (m->cap == 0)
        return 0;
    size_t i = map_slot(m, key);
    if (!m->used[i])
        return 0;
    *val = m->vals[i];
    return 1;
}

static int map_grow(struct trace_map *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 16;
    struct trace_map n = {0};
    n.keys = malloc(ncap * sizeof *n.keys);
    n.vals = malloc(ncap * sizeof *n.vals);
    n.used = calloc(ncap, 1);
    if (!n.keys || !n.vals || !n.used) {
        free(n.keys);
        free(n.vals);
        free(n.used);
        return TRACE_ENOMEM;
    }
    n.cap = ncap;
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i])
            continue;
        size_t j = map_slot(&n, m->keys[i]);
        n.used[j] = 1;
        n.keys[j] = m->keys[i];
        n.vals[j] = m->vals[i];
    }
    n.count = m->count;
    n.limit = m->limit;
    free(m->keys);
    free(m->vals);
    free(m->used);
    *m = n;
    return 0;
}

int trace_map_put(struct trace_map *m, uint64_t key, uint64_t val)
{
    if (m->cap) {
        size_t i = map_slot(m, key);
        if (m->used[i]) {
            m->vals[i] = val;
            return 0;
        }
    }
    if (m->limit && m->count >= m->limit)
        return 1;
    if ((m->count + 1) * 2 > m->cap && map_grow(m) != 0)
        return TRACE_ENOMEM;
    size_t i = map_slot(m, key);
    m->used[i] = 1;
    m->keys[i] = key;
    m->vals[i] = val;
    m->count++;
    return 0;
}

/* ---- scanners ---------------------------------------------------------- */

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int scan_hex_digits(const char *p, const char *end, uint64_t *v, const char **next)
{
    const char *s = p;
    uint64_t x = 0;
    int over = 0;
    for (; p < end && hexval(*p) >= 0; p++) {
        if (x >> 60)
            over = 1;
        x = x << 4 | (uint64_t)hexval(*p);
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

int trace_scan_u64(const char *p, const char *end, int allow_hex, uint64_t *v, const char **next)
{
    if (allow_hex && has_hex_prefix(p, end)) {
        int r = scan_hex_digits(p + 2, end, v, next);
        if (r == TRACE_SCAN_NONE) {
            *next = p;
            return TRACE_SCAN_NOHEX;
        }
        return r;
    }
    return scan_dec_digits(p, end, v, next);
}

int trace_scan_hex(const char *p, const char *end, uint64_t *v, const char **next)
{
    if (has_hex_prefix(p, end)) {
        int r = scan_hex_digits(p + 2, end, v, next);
        if (r == TRACE_SCAN_NONE) {
            *next = p;
            return TRACE_SCAN_NOHEX;
        }
        return r;
    }
    return scan_hex_digits(p, end, v, next);
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

/* ---- table ------------------------------------------------------------- */

void trace_pcflags_init(struct trace_pcflags *t, size_t max_pcs)
{
    trace_map_init(&t->map, max_pcs ? max_pcs : TRACE_PCFLAGS_MAX_DEFAULT);
}

void trace_pcflags_free(struct trace_pcflags *t)
{
    trace_map_free(&t->map);
}

int trace_pcflags_get(const struct trace_pcflags *t, uint64_t pc, uint32_t *dep, uint64_t *line)
{
    uint64_t v;
    if (!t || !trace_map_get(&t->map, pc, &v))
        return 0;
    *dep = (uint32_t)(v & 1);
    if (line)
        *line = v >> 1;
    return 1;
}

static int put_result(int r)
{
    return r == 1 ? 2 : r;
}

int trace_pcflags_set(struct trace_pcflags *t, uint64_t pc, uint32_t dep, uint64_t line,
                      uint64_t *first_line)
{
    uint32_t old;
    uint64_t old_line;
    if (trace_pcflags_get(t, pc, &old, &old_line)) {
        if (old == dep)
            return 0;
        if (first_line)
            *first_line = old_line;
        return 1;
    }
    return put_result(trace_map_put(&t->map, pc, line << 1 | (dep & 1)));
}

int trace_pcflags_force(struct trace_pcflags *t, uint64_t pc, uint32_t dep, uint64_t line)
{
    return put_result(trace_map_put(&t->map, pc, line << 1 | (dep & 1)));
}

size_t trace_pcflags_count(const struct trace_pcflags *t)
{
    return t ? t->map.count : 0;
}

/* ---- table parser ------------------------------------------------------ */

struct tline {
    const char *p, *end; /* the line without its LF / CRLF */
    uint64_t no, off;
};

static int is_skipped(const struct tline *l)
{
    return l->p == l->end || l->p[0] == '#';
}

static int is_header(const struct tline *l)
{
    return (size_t)(l->end - l->p) == 6 && memcmp(l->p, "pc,dep", 6) == 0;
}

static int parse_entry(struct trace_pcflags *t, const struct tline *l, struct trace_err *err)
{
    const char *q;
    uint64_t pc, dep;
    int r = trace_scan_u64(l->p, l->end, 1, &pc, &q);
    if (r == TRACE_SCAN_OVERFLOW)
        goto bad_pc_big;
    if (r != TRACE_SCAN_OK || q == l->end || *q != ',')
        goto bad_pc;
    const char *d = q + 1;
    if (l->end - d != 1 || (*d != '0' && *d != '1')) {
        trace_err_set(err, l->no, l->off, "dep must be 0 or 1");
        return TRACE_EINPUT;
    }
    dep = (uint64_t)(*d - '0');
    uint64_t first = 0;
    r = trace_pcflags_set(t, pc, (uint32_t)dep, l->no, &first);
    if (r == 1) {
        trace_err_set(err, l->no, l->off, "pc 0x%llx given dep %u here and dep %u on line %llu",
                      (unsigned long long)pc, (unsigned)dep, (unsigned)!dep,
                      (unsigned long long)first);
        return TRACE_EINPUT;
    }
    if (r == 2) {
        trace_err_set(err, l->no, l->off, "more than %zu PCs", t->map.limit);
        return TRACE_EINPUT;
    }
    if (r == TRACE_ENOMEM)
        trace_err_set(err, l->no, l->off, "out of memory");
    return r;
bad_pc_big:
    trace_err_set(err, l->no, l->off, "pc does not fit 64 bits");
    return TRACE_EINPUT;
bad_pc:
    trace_err_set(err, l->no, l->off, "expected \"pc,dep\" (pc decimal or 0x-hex)");
    return TRACE_EINPUT;
}

int trace_pcflags_parse(struct trace_pcflags *t, const char *buf, size_t len, struct trace_err *err)
{
    const char *p = buf, *end = buf + len;
    int seen_record = 0;
    for (uint64_t no = 1; p < end; no++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        struct tline l = {p, nl ? nl : end, no, (uint64_t)(p - buf)};
        if (l.end > l.p && l.end[-1] == '\r')
            l.end--;
        p = nl ? nl + 1 : end;
        if (memchr(l.p, '\r', (size_t)(l.end - l.p)) || memchr(l.p, '\0', (size_t)(l.end - l.p))) {
            trace_err_set(err, l.no, l.off, "stray CR or NUL byte");
            return TRACE_EINPUT;
        }
        if (is_skipped(&l))
            continue;
        if (!seen_record++ && is_header(&l))
            continue;
        int r = parse_entry(t, &l, err);
        if (r != 0)
            return r;
    }
    return 0;
}
