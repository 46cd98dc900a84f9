/*
 * Synthetic traces (trace/synth.h): the pattern registry, option checking,
 * array placement and the walk over the grid that every pattern shares.
 *
 * DESIGN
 * The patterns (trace/synth_*.c) only describe a kernel; this file turns
 * the user's options into a resolved struct synth_kernel once, then calls
 * the pattern's thread function for every thread of every block in
 * thread-id order. The thread id is CUDA's linear one:
 * (blockIdx.y * gridDim.x + blockIdx.x) * threads_per_block +
 * threadIdx.y * blockDim.x + threadIdx.x, which is what the sorter's
 * `block = tid / threads_per_block` takes apart again.
 */
#include "trace/synth.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/synth_patterns.h"
#include "trace/tiles.h"

#define SYNTH_MAX_DIM (1ull << 40)

static const struct synth_pattern *const patterns[] = {
    &synth_matmul_naive, &synth_matmul_naive_bt, &synth_matmul_tiled, &synth_matmul_tiled_bt,
    &synth_transpose_naive, &synth_transpose_tiled, &synth_stencil7, &synth_reduce,
    &synth_stream, &synth_strided,
};
#define NPATTERNS (sizeof patterns / sizeof patterns[0])

size_t synth_pattern_count(void)
{
    return NPATTERNS;
}

const struct synth_pattern *synth_pattern_at(size_t i)
{
    return i < NPATTERNS ? patterns[i] : NULL;
}

const struct synth_pattern *synth_pattern_find(const char *name)
{
    for (size_t i = 0; i < NPATTERNS; i++)
        if (strcmp(patterns[i]->name, name) == 0)
            return patterns[i];
    return NULL;
}

/* ---- options ------------------------------------------------------------ */

/* One decimal number 1 .. max at *p, ending at one of `ends`; advances *p. */
static int number(const char **p, const char *ends, uint64_t max, uint64_t *v)
{
    if (**p < '0' || **p > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long x = strtoull(*p, &end, 10);
    if (errno || x < 1 || x > max || !strchr(ends, *end))
        return -1;
    *v = x;
    *p = end;
    return 0;
}

int synth_parse_size(const char *text, struct synth_opts *o, char *why, size_t len)
{
    const char *p = text;
    int n = 0;
    for (;;) {
        if (n == 3 || number(&p, ",", SYNTH_MAX_DIM, &o->size[n]) < 0) {
            snprintf(why, len, "--size takes N, N,M or N,M,K (each 1 to 2^40), not '%s'", text);
            return -1;
        }
        n++;
        if (*p == '\0')
            break;
        p++;
    }
    o->nsize = n;
    return 0;
}

int synth_parse_block(const char *text, struct synth_opts *o, char *why, size_t len)
{
    const char *p = text;
    o->block[1] = 0;
    if (number(&p, "x", SYNTH_MAX_THREADS_PER_BLOCK, &o->block[0]) < 0 ||
        (*p == 'x' && (p++, number(&p, "", SYNTH_MAX_THREADS_PER_BLOCK, &o->block[1]) < 0))) {
        snprintf(why, len, "--block takes BX or BXxBY (each 1 to 1024), not '%s'", text);
        return -1;
    }
    return 0;
}

int synth_mul(uint64_t a, uint64_t b, uint64_t *out, char *why, size_t len)
{
    if (__builtin_mul_overflow(a, b, out)) {
        snprintf(why, len, "the sizes are too large: %" PRIu64 " x %" PRIu64 " passes 2^64", a, b);
        return -1;
    }
    return 0;
}

void synth_array(struct synth_kernel *k, int i, const char *name, uint64_t elems)
{
    assert(i < SYNTH_MAX_ARRAYS);
    k->array_name[i] = name;
    k->array_elems[i] = elems;
    if (i >= k->narrays)
        k->narrays = i + 1;
}

static int take_sizes(const struct synth_pattern *p, const struct synth_opts *o,
                      struct synth_kernel *k, char *why, size_t len)
{
    if (o->nsize == 0) {
        snprintf(why, len, "%s needs --size %s", p->name, p->sizes);
        return -1;
    }
    if (o->nsize != 1 && o->nsize != p->max_sizes) {
        snprintf(why, len, "%s takes --size %s", p->name, p->sizes);
        return -1;
    }
    for (int d = 0; d < 3; d++)
        k->dim[d] = d < p->max_sizes ? o->size[o->nsize == 1 ? 0 : d] : 0;
    return 0;
}

static int take_block(const struct synth_pattern *p, const struct synth_opts *o,
                      struct synth_kernel *k, char *why, size_t len)
{
    uint64_t bx = p->default_block[0], by = p->default_block[1];
    if (p->default_tile) {
        k->tile = o->tile ? o->tile : p->default_tile;
        bx = by = k->tile;
        if (k->tile * k->tile > SYNTH_MAX_THREADS_PER_BLOCK) {
            snprintf(why, len, "--tile %" PRIu64 " makes blocks of more than 1024 threads", k->tile);
            return -1;
        }
        if (o->block[0] && (o->block[0] != bx || (o->block[1] ? o->block[1] : 1) != by)) {
            snprintf(why, len, "%s runs one thread per tile element: its block is TxT (%" PRIu64
                     "x%" PRIu64 "); leave --block out", p->name, bx, by);
            return -1;
        }
    } else if (o->tile) {
        snprintf(why, len, "%s is not tiled: it takes no --tile", p->name);
        return -1;
    } else if (o->block[0]) {
        bx = o->block[0];
        by = o->block[1] ? o->block[1] : 1;
        if (p->default_block[1] == 1 && by != 1) {
            snprintf(why, len, "%s has 1-D blocks: --block BX", p->name);
            return -1;
        }
    }
    if (bx * by > SYNTH_MAX_THREADS_PER_BLOCK) {
        snprintf(why, len, "a block holds at most 1024 threads, not %" PRIu64 "x%" PRIu64, bx, by);
        return -1;
    }
    k->block[0] = (uint32_t)bx;
    k->block[1] = (uint32_t)by;
    k->threads_per_block = (uint32_t)(bx * by);
    return 0;
}

/* Places the arrays one after another, each on an SYNTH_ALIGN boundary. */
static int place_arrays(struct synth_kernel *k, char *why, size_t len)
{
    uint64_t next = SYNTH_BASE;
    for (int i = 0; i < k->narrays; i++) {
        uint64_t bytes, end;
        if (synth_mul(k->array_elems[i], k->elem, &bytes, why, len) < 0 ||
            __builtin_add_overflow(next, bytes, &end) ||
            __builtin_add_overflow(end, SYNTH_ALIGN - 1, &end)) {
            snprintf(why, len, "the arrays do not fit below 2^64 bytes");
            return -1;
        }
        k->base[i] = next;
        next = end & ~(SYNTH_ALIGN - 1);
    }
    return 0;
}

int synth_resolve(const struct synth_pattern *p, const struct synth_opts *o, struct synth_kernel *k,
                  char *why, size_t len)
{
    memset(k, 0, sizeof *k);
    k->pat = p;
    k->elem = o->elem ? o->elem : 4;
    if (!trace_width_valid(k->elem)) {
        snprintf(why, len, "--elem-size takes 1, 2, 4, 8 or 16, not %u", k->elem);
        return -1;
    }
    if (o->stride && !p->takes_stride) {
        snprintf(why, len, "%s takes no --stride", p->name);
        return -1;
    }
    k->stride = p->takes_stride ? (o->stride ? o->stride : 32) : 0;
    if (take_sizes(p, o, k, why, len) < 0 || take_block(p, o, k, why, len) < 0 ||
        p->setup(k, why, len) < 0)
        return -1;
    uint64_t blocks, threads;
    if (synth_mul(k->grid[0], k->grid[1], &blocks, why, len) < 0 ||
        synth_mul(blocks, k->threads_per_block, &threads, why, len) < 0)
        return -1;
    return place_arrays(k, why, len);
}

/* ---- generating ------------------------------------------------------------ */

void synth_emit_req(struct synth_emit *e, int insn, uint64_t index)
{
    if (e->rc)
        return;
    const struct synth_kernel *k = e->k;
    assert(insn >= 0 && insn < k->pat->ninsns);
    const struct synth_insn *in = &k->pat->insns[insn];
    assert(index < k->array_elems[in->array]); /* a pattern reading past its array is a bug */
    struct trace_rec r = {.tid = e->tid,
                          .pc = (uint64_t)insn * SYNTH_PC_STEP,
                          .addr = k->base[in->array] + index * k->elem,
                          .width = k->elem,
                          .dep = (uint8_t)in->dep,
                          .store = in->store};
    e->rc = e->sink(e->ctx, &r);
    if (!e->rc)
        e->records++;
}

/* Every thread of block (bx, by), in threadIdx order (x fastest). */
static void run_block(const struct synth_kernel *k, struct synth_emit *e, uint64_t bx, uint64_t by)
{
    uint64_t first = (by * k->grid[0] + bx) * k->threads_per_block;
    for (uint32_t ty = 0; ty < k->block[1] && !e->rc; ty++)
        for (uint32_t tx = 0; tx < k->block[0] && !e->rc; tx++) {
            e->tid = first + (uint64_t)ty * k->block[0] + tx;
            k->pat->thread(k, e, bx, by, tx, ty);
        }
}

int synth_run(const struct synth_kernel *k, trace_sink sink, void *ctx, uint64_t *records)
{
    struct synth_emit e = {.k = k, .sink = sink, .ctx = ctx};
    for (uint64_t by = 0; by < k->grid[1] && !e.rc; by++)
        for (uint64_t bx = 0; bx < k->grid[0] && !e.rc; bx++)
            run_block(k, &e, bx, by);
    if (records)
        *records = e.records;
    return e.rc;
}

/* synth_count's sink: counts, and stops once past *ctx (the most wanted). */
static int count_rec(void *ctx, const struct trace_rec *r)
{
    (void)r;
    return --*(uint64_t *)ctx == 0; /* started at the most plus one */
}

int synth_count(const struct synth_kernel *k, uint64_t limit, uint64_t *records)
{
    /* In each dimension a block is the first, one between (all alike:
     * synth.h) or the last: kind 0, 1, 2, at index at[kind], many[kind]
     * blocks of it; a grid of one or two blocks has no block between, a
     * grid of one no last apart from its first. One block of each kind is
     * run and its count taken as many times as its kind has blocks; the
     * blocks between first, so that a large grid passes a small limit after
     * one thread (a thread's requests are made to its end, sink or not). */
    static const int order[3] = {1, 0, 2};
    const uint64_t *g = k->grid;
    const uint64_t at[2][3] = {{0, 1, g[0] - 1}, {0, 1, g[1] - 1}};
    const uint64_t many[2][3] = {{1, g[0] > 2 ? g[0] - 2 : 0, g[0] > 1},
                                 {1, g[1] > 2 ? g[1] - 2 : 0, g[1] > 1}};
    uint64_t total = 0;
    for (int oy = 0; oy < 3; oy++)
        for (int ox = 0; ox < 3; ox++) {
            int kx = order[ox], ky = order[oy];
            uint64_t blocks = many[0][kx] * many[1][ky]; /* <= grid[0] * grid[1], checked */
            if (blocks == 0)
                continue;
            /* more than most in one block is more than limit in all */
            uint64_t most = (limit - total) / blocks;
            uint64_t left = most == UINT64_MAX ? most : most + 1;
            struct synth_emit e = {.k = k, .sink = count_rec, .ctx = &left};
            run_block(k, &e, at[0][kx], at[1][ky]);
            if (e.rc) {
                *records = limit;
                return 1;
            }
            total += e.records * blocks;
        }
    *records = total;
    return 0;
}

void synth_describe(const struct synth_kernel *k, char *buf, size_t len)
{
    const struct synth_pattern *p = k->pat;
    size_t n = (size_t)snprintf(buf, len, "%s", p->name);
    for (int d = 0; d < p->max_sizes && n < len; d++)
        n += (size_t)snprintf(buf + n, len - n, " %s=%" PRIu64, p->dim_name[d], k->dim[d]);
    if (k->tile && n < len)
        n += (size_t)snprintf(buf + n, len - n, " T=%" PRIu64, k->tile);
    if (k->stride && n < len)
        n += (size_t)snprintf(buf + n, len - n, " stride=%" PRIu64, k->stride);
    if (n < len)
        n += (size_t)snprintf(buf + n, len - n,
                              " elem=%u grid %" PRIu64 "x%" PRIu64 " block %ux%u (%u threads)",
                              k->elem, k->grid[0], k->grid[1], k->block[0], k->block[1],
                              k->threads_per_block);
    for (int i = 0; i < k->narrays && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, "%s %s@0x%" PRIx64, i ? "," : ";", k->array_name[i],
                              k->base[i]);
}
