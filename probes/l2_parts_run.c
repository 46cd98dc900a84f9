/*
 * The L2 partition probe on a GPU (l2_parts.h): builds and checks the timed
 * kernel, empties the L2 and times the lines from every SM in turn.
 *
 * DESIGN
 * The kernel is compiled by the driver's JIT and its cubin checked with the
 * memory probe's region check (one LDG between the clock reads, no other
 * load) before any time is kept. A block reaches a chosen SM by numbers: a
 * grid of L2P_BLOCKS_PER_SM blocks per SM, every block not on the target
 * leaves at once, the first on it claims the work; a launch in which no
 * block reached the target is repeated (up to L2P_TRIES times), and an SM
 * never reached stays unmeasured. The L2 is emptied before each SM's turn
 * by the memory probe's "warm" kernel over 2 x the L2's size of other data
 * (one load per line: every line of the L2 is replaced). The region is
 * aligned to 2 MiB inside a larger allocation, so the probe's address bits
 * below 21 are the physical address's.
 */
#include "probes/l2_parts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/gpu/gpu.h"
#include "probes/memory.h"
#include "util/clock.h"

#define L2P_BLOCKS_PER_SM 8
#define L2P_TRIES 8
#define ERR_LEN 320

struct l2p_gpu {
    struct gpu *g;
    struct gpu_module mod, support;
    CUfunction time, warm;
    CUdeviceptr alloc, region, flush, claim, out;
    size_t flush_bytes;
    json_t *sass;
};

static const struct mem_kernel time_kernel = {"l2p_time", "l2p_time", "ld.global.cg.u32", "LDG",
                                              "LDG.E.STRONG.GPU", 1, {1, 0, 0}};

static int build(struct l2p_gpu *x, char *err, size_t errlen)
{
    const struct gpu_device *d = &x->g->info;
    if (gpu_module_build_generated(x->g, l2p_ptx(d->cc_major, d->cc_minor), "l2parts_time",
                                   &x->mod, err, errlen) < 0)
        return -1;
    x->sass = mem_sass_check_kernel(&time_kernel, x->mod.cubin, x->mod.cubin_size);
    if (!json_is_true(json_object_get(x->sass, "verified"))) {
        snprintf(err, errlen, "the compiled l2p_time is not what the probe times; see sass");
        return -1;
    }
    if (gpu_module_function(x->g, &x->mod, "l2p_time", &x->time, err, errlen) < 0 ||
        gpu_module_build_generated(x->g, mem_ptx(MK_SUPPORT, d->cc_major, d->cc_minor),
                                   "l2parts_support", &x->support, err, errlen) < 0)
        return -1;
    return gpu_module_function(x->g, &x->support, "warm", &x->warm, err, errlen);
}

static int alloc_buffers(struct l2p_gpu *x, char *err, size_t errlen)
{
    const struct cuda_api *cu = x->g->cu;
    const CUdeviceptr page = (CUdeviceptr)1 << L2P_PAGE_BITS;
    x->flush_bytes = 2 * (size_t)(x->g->info.l2_bytes > 0 ? x->g->info.l2_bytes : 64 << 20);
    if (gpu_check(x->g, cu->cuMemAlloc(&x->alloc, L2P_REGION + page), "cuMemAlloc(region)", err,
                  errlen) < 0 ||
        gpu_check(x->g, cu->cuMemAlloc(&x->flush, x->flush_bytes), "cuMemAlloc(flush)", err,
                  errlen) < 0 ||
        gpu_check(x->g, cu->cuMemAlloc(&x->claim, 4), "cuMemAlloc(claim)", err, errlen) < 0 ||
        gpu_check(x->g, cu->cuMemAlloc(&x->out, (2 * L2P_LINES + 1) * 4), "cuMemAlloc(out)", err,
                  errlen) < 0)
        return -1;
    x->region = (x->alloc + page - 1) & ~(page - 1);
    /* zeros: every load's value is 0, added to the next address */
    if (gpu_check(x->g, cu->cuMemsetD32(x->alloc, 0, (L2P_REGION + page) / 4), "cuMemsetD32", err,
                  errlen) < 0)
        return -1;
    return gpu_check(x->g, cu->cuMemsetD32(x->flush, 0, x->flush_bytes / 4), "cuMemsetD32", err,
                     errlen);
}

static void release(struct l2p_gpu *x)
{
    CUdeviceptr *bufs[] = {&x->alloc, &x->flush, &x->claim, &x->out};
    gpu_free_buffers(x->g, bufs, sizeof bufs / sizeof bufs[0]);
    gpu_module_free(x->g, &x->mod);
    gpu_module_free(x->g, &x->support);
}

/* Replaces every line of the L2 with lines of the flush buffer. */
static int empty_l2(struct l2p_gpu *x, char *err, size_t errlen)
{
    unsigned n = (unsigned)(x->flush_bytes / MEM_STRIDE), stride = MEM_STRIDE;
    unsigned grid = (unsigned)(x->g->info.sm_count > 0 ? x->g->info.sm_count : 1) * 4;
    void *params[] = {&x->out, &x->flush, &n, &stride};
    return gpu_launch(x->g, x->warm, grid, 256, 0, params, err, errlen);
}

/* Both passes of SM sm into t[0..2n): 1 when it ran, 0 when no block got
 * there, -1 on an error. */
static int time_on(struct l2p_gpu *x, unsigned sm, uint32_t *t, char *err, size_t errlen)
{
    const struct cuda_api *cu = x->g->cu;
    unsigned n = L2P_LINES, grid = (unsigned)x->g->info.sm_count * L2P_BLOCKS_PER_SM;
    void *params[] = {&x->out, &x->region, &x->claim, &sm, &n};
    for (int k = 0; k < L2P_TRIES; k++) {
        uint32_t claimed = 0;
        if (gpu_check(x->g, cu->cuMemsetD32(x->claim, 0, 1), "cuMemsetD32", err, errlen) < 0 ||
            gpu_launch(x->g, x->time, grid, 32, 0, params, err, errlen) < 0 ||
            gpu_check(x->g, cu->cuMemcpyDtoH(&claimed, x->claim, 4), "cuMemcpyDtoH", err, errlen) < 0)
            return -1;
        if (claimed)
            return gpu_check(x->g, cu->cuMemcpyDtoH(t, x->out, 2 * L2P_LINES * 4), "cuMemcpyDtoH",
                             err, errlen) < 0 ? -1 : 1;
    }
    return 0;
}

/* Every SM's turn: empty, the warmer's two passes, the SM's two passes. */
static int measure(struct l2p_gpu *x, uint32_t *t, unsigned char *measured, unsigned warmer,
                   char *err, size_t errlen)
{
    int nsm = x->g->info.sm_count;
    for (int s = 0; s < nsm; s++) {
        uint32_t *ts = t + (size_t)s * L2P_PASSES * L2P_LINES;
        int w, r;
        if (empty_l2(x, err, errlen) < 0 || (w = time_on(x, warmer, ts, err, errlen)) < 0 ||
            (r = w ? time_on(x, (unsigned)s, ts + 2 * L2P_LINES, err, errlen) : 0) < 0)
            return -1;
        if (!w) {
            snprintf(err, errlen, "no block reached the warmer SM %u", warmer);
            return -1;
        }
        measured[s] = (unsigned char)r;
    }
    return 0;
}

json_t *l2p_probe(struct gpu *g)
{
    double t0 = mono_s();
    struct l2p_gpu x = {.g = g};
    char err[ERR_LEN] = "";
    int nsm = g->info.sm_count > 0 ? g->info.sm_count : 0;
    uint32_t *t = calloc((size_t)nsm * L2P_PASSES * L2P_LINES, sizeof *t);
    unsigned char *measured = calloc(nsm ? (size_t)nsm : 1, 1);
    uint64_t *addr = malloc(L2P_LINES * sizeof *addr);
    json_t *doc = NULL;
    if (!t || !measured || !addr)
        snprintf(err, sizeof err, "out of memory");
    else if (build(&x, err, sizeof err) == 0 && alloc_buffers(&x, err, sizeof err) == 0 &&
             measure(&x, t, measured, 0, err, sizeof err) == 0) {
        for (unsigned j = 0; j < L2P_LINES; j++)
            addr[j] = (uint64_t)x.region + l2p_line_offset(j);
        struct l2p_input in = {nsm, L2P_LINES, 0, addr, t, measured};
        doc = l2p_analyze(&in);
    }
    if (!doc)
        doc = json_pack("{s:s}", "error", err[0] ? err : "out of memory");
    json_object_set_new(doc, "wall_s", json_real(mono_s() - t0));
    if (x.sass)
        json_object_set_new(doc, "sass", x.sass);
    release(&x);
    free(t);
    free(measured);
    free(addr);
    return doc;
}
