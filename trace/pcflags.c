/*
 * The per-PC dependency flag table, its "pc,dep" parser, and the hash map.
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

static int is_skipped(const struct trace_cur *c)
{
    return c->p == c->e || c->p[0] == '#';
}

static int is_header(const struct trace_cur *c)
{
    return (size_t)(c->e - c->p) == 6 && memcmp(c->p, "pc,dep", 6) == 0;
}

static int parse_entry(struct trace_pcflags *t, const struct trace_text *x,
                       const struct trace_cur *c)
{
    uint64_t pc, dep;
    const char *q;
    int r = trace_scan_u64(c->p, c->e, 1, &pc, &q);
    if (r == TRACE_SCAN_OVERFLOW)
        return trace_text_fail(x, TRACE_EINPUT, "pc does not fit 64 bits");
    if (r != TRACE_SCAN_OK || q == c->e || *q != ',')
        return trace_text_fail(x, TRACE_EINPUT, "expected \"pc,dep\" (pc decimal or 0x-hex)");
    const char *d = q + 1;
    if (c->e - d != 1 || (*d != '0' && *d != '1'))
        return trace_text_fail(x, TRACE_EINPUT, "dep must be 0 or 1");
    dep = (uint64_t)(*d - '0');
    uint64_t first = 0;
    r = trace_pcflags_set(t, pc, (uint32_t)dep, x->line, &first);
    if (r == 1)
        return trace_text_fail(
            x, TRACE_EINPUT, "pc 0x%llx given dep %u here and dep %u on line %llu",
            (unsigned long long)pc, (unsigned)dep, (unsigned)!dep, (unsigned long long)first);
    if (r == 2)
        return trace_text_fail(x, TRACE_EINPUT, "more than %zu PCs", t->map.limit);
    if (r == TRACE_ENOMEM)
        return trace_text_fail(x, TRACE_ENOMEM, "out of memory");
    return r;
}

int trace_pcflags_parse(struct trace_pcflags *t, const char *buf, size_t len, struct trace_err *err)
{
    struct trace_text x;
    struct trace_cur c;
    int seen_record = 0;
    trace_text_init(&x, buf, len, err);
    while (trace_text_line(&x, &c)) {
        size_t n = (size_t)(c.e - c.p);
        if (memchr(c.p, '\r', n) || memchr(c.p, '\0', n))
            return trace_text_fail(&x, TRACE_EINPUT, "stray CR or NUL byte");
        if (is_skipped(&c))
            continue;
        if (!seen_record++ && is_header(&c))
            continue;
        int r = parse_entry(t, &x, &c);
        if (r != 0)
            return r;
    }
    return 0;
}
