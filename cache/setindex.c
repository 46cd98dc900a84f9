/*
 * Set-index functions as text, and applying one to a geometry
 * (setindex.h).
 */
#include "cache/setindex.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MASK_PREFIX "mask:"

/* One mask of a comma-separated list at *p, which moves past it. */
static int parse_mask(const char **p, uint64_t *m)
{
    char *end;
    errno = 0;
    int hex = (*p)[0] == '0' && ((*p)[1] == 'x' || (*p)[1] == 'X');
    if (**p < '0' || **p > '9')
        return -1;
    unsigned long long v = strtoull(*p, &end, hex ? 16 : 10);
    if (end == *p || errno || v == 0 || (*end != ',' && *end != '\0'))
        return -1;
    *m = v;
    *p = *end ? end + 1 : end;
    return 0;
}

/* m with every bit that masks earlier in the basis can clear cleared
 * (basis[b]: a combination of them whose highest bit is b, or 0): 0 when m
 * is the XOR of some of them. */
static uint64_t reduce(const uint64_t basis[64], uint64_t m)
{
    for (int b = 63; b >= 0; b--)
        if ((m >> b & 1) && basis[b])
            m ^= basis[b];
    return m;
}

static int parse_masks(const char *list, struct cache_set_spec *s, char *msg, size_t msglen)
{
    const char *p = list;
    uint64_t basis[64] = {0}; /* the masks so far, in echelon form over GF(2) */
    s->nmasks = 0;
    if (strcmp(list, "none") == 0)
        return 0;
    while (*p) {
        uint64_t m;
        if (s->nmasks == CACHE_MAX_INDEX_MASKS) {
            snprintf(msg, msglen, "at most %d masks", CACHE_MAX_INDEX_MASKS);
            return -1;
        }
        if (parse_mask(&p, &m) < 0 || (*p == '\0' && p[-1] == ',')) {
            snprintf(msg, msglen, "'%s': give non-zero masks separated by commas "
                                  "(mask:0x80,0x100), or mask:none", list);
            return -1;
        }
        for (uint32_t j = 0; j < s->nmasks; j++)
            if (s->masks[j] == m) {
                snprintf(msg, msglen, "mask 0x%llx appears twice", (unsigned long long)m);
                return -1;
            }
        /* each mask is one bit of the set number: one that is the XOR of
         * others repeats theirs, and half the sets would never be used */
        uint64_t r = reduce(basis, m);
        if (!r) {
            snprintf(msg, msglen, "mask 0x%llx is the XOR of masks before it: its set bit would repeat "
                                  "theirs and half the sets would never be used",
                     (unsigned long long)m);
            return -1;
        }
        basis[63 - __builtin_clzll(r)] = r;
        s->masks[s->nmasks++] = m;
    }
    if (s->nmasks == 0) {
        snprintf(msg, msglen, "no masks after '" MASK_PREFIX "' (mask:none for one set)");
        return -1;
    }
    return 0;
}

int cache_set_spec_parse(const char *text, struct cache_set_spec *s, char *msg, size_t msglen)
{
    memset(s, 0, sizeof *s);
    int f = cache_set_index_parse(text);
    if (f >= 0) {
        s->index = (enum cache_set_index)f;
        return 0;
    }
    if (strncmp(text, MASK_PREFIX, strlen(MASK_PREFIX)) != 0) {
        snprintf(msg, msglen, "'%s' is not modulo, xor or " MASK_PREFIX "M0,M1,...", text);
        return -1;
    }
    s->index = CACHE_SET_MASKS;
    return parse_masks(text + strlen(MASK_PREFIX), s, msg, msglen);
}

int cache_geom_set_index(struct cache_geom *g, const struct cache_set_spec *s, char *msg,
                         size_t msglen)
{
    struct cache_geom n = *g;
    n.index = s->index;
    n.nmasks = 0;
    if (s->index != CACHE_SET_MASKS) {
        if (cache_geom_check(&n, msg, msglen) < 0)
            return -1;
        *g = n;
        return 0;
    }
    for (uint32_t j = 0; j < s->nmasks; j++) {
        if (s->masks[j] & (g->line - 1)) {
            snprintf(msg, msglen, "mask 0x%llx has bits inside the %u-byte line",
                     (unsigned long long)s->masks[j], g->line);
            return -1;
        }
        n.masks[j] = s->masks[j] >> g->line_shift;
    }
    n.nmasks = s->nmasks;
    uint64_t way = ((uint64_t)1 << s->nmasks) * g->line;
    if (g->size % way) {
        snprintf(msg, msglen, "%llu bytes are not whole ways of %llu sets of %u-byte lines",
                 (unsigned long long)g->size, 1ull << s->nmasks, g->line);
        return -1;
    }
    n.assoc = (uint32_t)(g->size / way);
    if (cache_geom_check(&n, msg, msglen) < 0)
        return -1;
    *g = n;
    return 0;
}

const char *cache_set_index_text(const struct cache_geom *g, char *buf, size_t len)
{
    if (g->index != CACHE_SET_MASKS) {
        snprintf(buf, len, "%s", cache_set_index_name(g->index));
        return buf;
    }
    size_t n = (size_t)snprintf(buf, len, MASK_PREFIX "%s", g->nmasks ? "" : "none");
    for (uint32_t j = 0; j < g->nmasks && n < len; j++)
        n += (size_t)snprintf(buf + n, len - n, "%s0x%llx", j ? "," : "",
                              (unsigned long long)(g->masks[j] << g->line_shift));
    return buf;
}
