/*
 * Cache geometry: parsing, checking, set-index names and the architecture
 * presets (geometry.h). The presets' sources are in docs/cache-model.md.
 */
#include "cache/geometry.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *const cache_arch_names[] = {"hopper", "fermi", NULL};

static int pow2(uint64_t v)
{
    return v && (v & (v - 1)) == 0;
}

static uint32_t log2_ceil(uint64_t v)
{
    uint32_t b = 0;
    while (((uint64_t)1 << b) < v)
        b++;
    return b;
}

const char *cache_set_index_name(enum cache_set_index i)
{
    return i == CACHE_SET_XOR ? "xor" : i == CACHE_SET_MASKS ? "masks" : "modulo";
}

const char *cache_write_name(enum cache_write w)
{
    return w == CACHE_WRITE_THROUGH_NO_ALLOCATE ? "through-no-allocate" : "back-allocate";
}

int cache_set_index_parse(const char *name)
{
    if (strcmp(name, "modulo") == 0)
        return CACHE_SET_MODULO;
    if (strcmp(name, "xor") == 0)
        return CACHE_SET_XOR;
    return -1;
}

int cache_geom_check(struct cache_geom *g, char *msg, size_t msglen)
{
    if (!pow2(g->line) || g->line < 4 || !pow2(g->sector) || g->sector > g->line) {
        snprintf(msg, msglen, "line and sector must be powers of two, sector <= line, line >= 4");
        return -1;
    }
    if (g->line / g->sector > CACHE_MAX_SECTORS) {
        snprintf(msg, msglen, "at most %u sectors a line", CACHE_MAX_SECTORS);
        return -1;
    }
    if (g->size == 0 || g->size % g->line) {
        snprintf(msg, msglen, "the size must be a non-zero multiple of the line (%u bytes)", g->line);
        return -1;
    }
    if (g->size / g->line > CACHE_MAX_LINES) {
        snprintf(msg, msglen, "at most %u lines a cache", CACHE_MAX_LINES);
        return -1;
    }
    g->lines = (uint32_t)(g->size / g->line);
    if (g->assoc == 0)
        g->assoc = g->lines;
    if (g->assoc > g->lines || g->lines % g->assoc) {
        snprintf(msg, msglen, "the associativity (%u) must divide the %u lines", g->assoc, g->lines);
        return -1;
    }
    g->sets = g->lines / g->assoc;
    g->sectors_per_line = g->line / g->sector;
    g->set_bits = log2_ceil(g->sets);
    if (g->set_bits == 0)
        g->set_bits = 1;
    g->line_shift = log2_ceil(g->line);
    g->sector_shift = log2_ceil(g->sector);
    if (g->index == CACHE_SET_MASKS &&
        (g->nmasks > CACHE_MAX_INDEX_MASKS || g->sets != 1u << g->nmasks)) {
        snprintf(msg, msglen, "%u set-index masks make %llu sets, not the geometry's %u",
                 g->nmasks, 1ull << g->nmasks, g->sets);
        return -1;
    }
    return 0;
}

/* One unsigned field of a geometry, "" giving *v = 0 only when may_be_full. */
static int field(const char *s, const char *e, int with_suffix, uint64_t *v)
{
    char buf[32];
    size_t n = (size_t)(e - s);
    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (strcasecmp(buf, "full") == 0) {
        *v = 0;
        return 0;
    }
    char *end;
    errno = 0;
    unsigned long long x = strtoull(buf, &end, 10);
    if (end == buf || errno || buf[0] == '-')
        return -1;
    uint64_t mult = 1;
    if (*end && with_suffix) {
        if (strcasecmp(end, "k") == 0 || strcasecmp(end, "kib") == 0 || strcasecmp(end, "kb") == 0)
            mult = 1024;
        else if (strcasecmp(end, "m") == 0 || strcasecmp(end, "mib") == 0 || strcasecmp(end, "mb") == 0)
            mult = 1024 * 1024;
        else
            return -1;
    } else if (*end) {
        return -1;
    }
    if (x > UINT64_MAX / mult)
        return -1;
    *v = x * mult;
    return 0;
}

int cache_geom_parse(const char *text, struct cache_geom *g, char *msg, size_t msglen)
{
    uint64_t v[4];
    const char *p = text;
    for (int i = 0; i < 4; i++) {
        const char *e = strchr(p, ',');
        if (!e)
            e = p + strlen(p);
        if ((i < 3) != (*e == ',') || field(p, e, i == 0, &v[i]) ||
            (i > 0 && v[i] > UINT32_MAX) || (i != 1 && v[i] == 0)) {
            snprintf(msg, msglen,
                     "'%s': give SIZE,ASSOC,LINE,SECTOR (e.g. 224K,4,128,32; ASSOC 'full' for a "
                     "fully associative cache)",
                     text);
            return -1;
        }
        p = e + 1;
    }
    g->size = v[0];
    g->assoc = (uint32_t)v[1];
    g->line = (uint32_t)v[2];
    g->sector = (uint32_t)v[3];
    return cache_geom_check(g, msg, msglen);
}

uint32_t cache_arch_merge(const char *arch)
{
    return arch && strcmp(arch, "hopper") == 0 ? 64 : 8;
}

int cache_arch_geometry(const char *arch, struct cache_geom *l1, struct cache_geom *l2, char *msg,
                        size_t msglen)
{
    if (strcmp(arch, "hopper") == 0) {
        /* L1: 224 KiB (the memory probe's L1 plateau on H100 and H200 ends
         * between 215 and 225 KiB), 128-byte lines of four 32-byte sectors;
         * 4 sets as Accel-Sim models Volta-and-later L1s. L2: 50 MiB
         * (CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE of both), 16 ways (a modelling
         * choice). docs/cache-model.md, "Geometry". */
        *l1 = (struct cache_geom){.size = 224u << 10, .assoc = 448, .line = 128, .sector = 32,
                                  .index = CACHE_SET_MODULO,
                                  .write = CACHE_WRITE_THROUGH_NO_ALLOCATE};
        *l2 = (struct cache_geom){.size = 50u << 20, .assoc = 16, .line = 128, .sector = 32,
                                  .index = CACHE_SET_MODULO,
                                  .write = CACHE_WRITE_BACK_ALLOCATE};
    } else if (strcmp(arch, "fermi") == 0) {
        /* The configuration of the method's paper (GTX 470, 16 KiB L1,
         * 4-way, 128-byte lines, no sectors); L2 768 KiB, 16 ways. */
        /* Fermi's L1 too writes global stores through and discards the
         * line (the PTX ISA's st.wb text is written for sm_20). */
        *l1 = (struct cache_geom){.size = 16u << 10, .assoc = 4, .line = 128, .sector = 128,
                                  .index = CACHE_SET_MODULO,
                                  .write = CACHE_WRITE_THROUGH_NO_ALLOCATE};
        *l2 = (struct cache_geom){.size = 768u << 10, .assoc = 16, .line = 128, .sector = 128,
                                  .index = CACHE_SET_MODULO,
                                  .write = CACHE_WRITE_BACK_ALLOCATE};
    } else {
        snprintf(msg, msglen, "unknown architecture '%s' (hopper or fermi)", arch);
        return -1;
    }
    if (cache_geom_check(l1, msg, msglen) || cache_geom_check(l2, msg, msglen))
        return -1;
    return 0;
}

/* The preset (of trace_arch_names) whose fields p has, or NULL. */
static const char *preset_of(const struct trace_params *p)
{
    for (const char *const *a = trace_arch_names; *a; a++) {
        struct trace_params q;
        trace_params_default(&q);
        if (trace_params_preset(&q, *a, NULL, 0) == 0 && q.sms == p->sms &&
            q.line_bytes == p->line_bytes && q.coalesce == p->coalesce && q.mshr == p->mshr &&
            q.lat_min == p->lat_min)
            return *a;
    }
    return NULL;
}

int cache_arch_fits_sort(const char *arch, const struct cache_geom *l1,
                         const struct trace_params *sort, char *sorted_as, size_t len, char *msg,
                         size_t msglen)
{
    struct trace_params want;
    const char *as = preset_of(sort);
    char named[64] = "";
    snprintf(sorted_as, len, "%s", as ? as : "");
    trace_params_default(&want);
    if (trace_params_preset(&want, arch, NULL, 0) != 0)
        want.sms = sort->sms; /* a geometry with no sort preset: its SMs are not known */
    if (want.sms == sort->sms && sort->line_bytes == l1->line)
        return 0;
    if (as)
        snprintf(named, sizeof named, " (trace sort's %s preset)", as);
    snprintf(msg, msglen, "sorted for %u SMs, %u-byte lines%s; the %s geometry is for %u SMs, "
             "%u-byte lines", sort->sms, sort->line_bytes, named, arch, want.sms, l1->line);
    return -1;
}

int cache_geom_resize(struct cache_geom *g, uint64_t bytes, char *msg, size_t msglen)
{
    uint64_t way = (uint64_t)g->sets * g->line, ways = way ? bytes / way : 0;
    if (ways == 0) {
        snprintf(msg, msglen, "%llu bytes hold no way of %u sets of %u-byte lines",
                 (unsigned long long)bytes, g->sets, g->line);
        return -1;
    }
    g->size = ways * way;
    g->assoc = (uint32_t)ways;
    return cache_geom_check(g, msg, msglen);
}
