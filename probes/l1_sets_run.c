/*
 * The L1 set search on a GPU (l1_sets.h): the chase operation the search
 * runs on, built from the memory probe's harness.
 *
 * DESIGN
 * The timed kernels are the memory probe's own chase_ca and chase_cg
 * (mem_ptx), compiled again here so that the carve-out asked for them
 * (L1S_CARVEOUT_PERCENT: shared memory as small as the driver allows, the
 * L1 as large) does not touch the memory probe's curves, and their
 * machine code is checked by the memory probe's check (mem_sass_check)
 * before anything is timed. One thread chases; mem_chase_steps(n) loads
 * warm the L1 and as many more are timed, as in the memory probe. A list
 * becomes a pointer ring in one 2^L1S_REGION_BITS region, aligned to its
 * size inside an allocation twice as large, so offset bits are address
 * bits; the "link" kernel (l1_sets_ptx.c) writes the ring, once per new
 * list (the search times one list several times in a row, ca and cg).
 * Every chase's last pointer is compared with where the ring says it
 * ends: a chase that did not follow the list fails the search.
 */
#include "probes/l1_sets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/gpu/gpu.h"
#include "probes/memory.h"
#include "util/clock.h"

#define LINK_THREADS 256
#define LINK_MAX_BLOCKS 1024
#define ERR_LEN 320

enum { M_CG, M_CA, M_LINK, M_COUNT };   /* M_CA == 1: chase[cached] */

static const enum mem_kernel_id chase_ids[2] = {MK_CHASE_CG, MK_CHASE_CA};

struct l1s_gpu {
    struct gpu *g;
    struct gpu_module mod[M_COUNT];
    CUfunction fn[M_COUNT];
    CUdeviceptr alloc, region, offs, out;
    uint64_t *linked;            /* the list the ring holds now */
    size_t linked_n;
    json_t *sass;                /* {"chase_ca": check, "chase_cg": check} */
};

/* ---- set-up ----------------------------------------------------------------- */

/* Builds chase kernel m (M_CG or M_CA), checks its machine code and asks
 * for the carve-out. */
static int build_chase(struct l1s_gpu *x, int m, char *err, size_t errlen)
{
    enum mem_kernel_id id = chase_ids[m];
    const struct gpu_device *d = &x->g->info;
    char name[64];
    snprintf(name, sizeof name, "l1sets_%s", mem_kernels[id].name);
    if (gpu_module_build_generated(x->g, mem_ptx(id, d->cc_major, d->cc_minor), name, &x->mod[m],
                                   err, errlen) < 0)
        return -1;
    json_t *check = mem_sass_check(id, x->mod[m].cubin, x->mod[m].cubin_size);
    int ok = json_is_true(json_object_get(check, "verified"));
    json_object_set_new(x->sass, mem_kernels[id].name, check);
    if (!ok) {
        snprintf(err, errlen, "the compiled %s is not what the search times; see sass.%s",
                 mem_kernels[id].name, mem_kernels[id].name);
        return -1;
    }
    if (gpu_module_function(x->g, &x->mod[m], mem_kernels[id].entry, &x->fn[m], err, errlen) < 0)
        return -1;
    return gpu_check(x->g, x->g->cu->cuFuncSetAttribute(
                               x->fn[m], CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                               L1S_CARVEOUT_PERCENT),
                     "cuFuncSetAttribute(carve-out)", err, errlen);
}

static int build_link(struct l1s_gpu *x, char *err, size_t errlen)
{
    const struct gpu_device *d = &x->g->info;
    if (gpu_module_build_generated(x->g, l1s_link_ptx(d->cc_major, d->cc_minor), "l1sets_link",
                                   &x->mod[M_LINK], err, errlen) < 0)
        return -1;
    return gpu_module_function(x->g, &x->mod[M_LINK], "link", &x->fn[M_LINK], err, errlen);
}

static int alloc_buffers(struct l1s_gpu *x, char *err, size_t errlen)
{
    const struct cuda_api *cu = x->g->cu;
    const uint64_t region = (uint64_t)1 << L1S_REGION_BITS;
    if (!(x->linked = malloc(L1S_MAX_LIST * sizeof *x->linked))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (gpu_check(x->g, cu->cuMemAlloc(&x->alloc, 2 * region), "cuMemAlloc(region)", err,
                  errlen) < 0 ||
        gpu_check(x->g, cu->cuMemAlloc(&x->offs, L1S_MAX_LIST * sizeof(uint64_t)),
                  "cuMemAlloc(offsets)", err, errlen) < 0 ||
        gpu_check(x->g, cu->cuMemAlloc(&x->out, MEM_OUT_WORDS * 8), "cuMemAlloc(out)", err,
                  errlen) < 0)
        return -1;
    x->region = (x->alloc + region - 1) & ~(CUdeviceptr)(region - 1);
    return 0;
}

static void release(struct l1s_gpu *x)
{
    CUdeviceptr *bufs[] = {&x->alloc, &x->offs, &x->out};
    gpu_free_buffers(x->g, bufs, sizeof bufs / sizeof bufs[0]);
    for (int m = 0; m < M_COUNT; m++)
        gpu_module_free(x->g, &x->mod[m]);
    free(x->linked);
    json_decref(x->sass);
}

/* ---- the chase ---------------------------------------------------------------- */

/* Makes the region's ring the list offs[0..n), unless it is already. */
static int link_list(struct l1s_gpu *x, const uint64_t *offs, size_t n, char *err, size_t errlen)
{
    unsigned count = (unsigned)n;
    unsigned blocks = (count + LINK_THREADS - 1) / LINK_THREADS;
    void *params[] = {&x->region, &x->offs, &count};
    if (n == x->linked_n && memcmp(offs, x->linked, n * sizeof *offs) == 0)
        return 0;
    x->linked_n = 0;
    if (blocks > LINK_MAX_BLOCKS)
        blocks = LINK_MAX_BLOCKS;
    if (gpu_check(x->g, x->g->cu->cuMemcpyHtoD(x->offs, offs, n * sizeof *offs),
                  "cuMemcpyHtoD(offsets)", err, errlen) < 0 ||
        gpu_launch(x->g, x->fn[M_LINK], blocks, LINK_THREADS, 0, params, err, errlen) < 0)
        return -1;
    memcpy(x->linked, offs, n * sizeof *offs);
    x->linked_n = n;
    return 0;
}

static int gpu_chase(void *ctx, const uint64_t *offs, size_t n, int cached, double *cycles,
                     char *err, size_t errlen)
{
    struct l1s_gpu *x = ctx;
    unsigned steps = mem_chase_steps(n), iters = steps / MEM_UNROLL;
    CUdeviceptr start = x->region + offs[0];
    void *params[] = {&x->out, &start, &iters};
    uint64_t w[3];
    if (n < 1 || n > L1S_MAX_LIST) {
        snprintf(err, errlen, "a list of %zu elements (1 to %d)", n, L1S_MAX_LIST);
        return -1;
    }
    if (link_list(x, offs, n, err, errlen) < 0 ||
        gpu_launch(x->g, x->fn[cached ? M_CA : M_CG], 1, 1, 0, params, err, errlen) < 0 ||
        gpu_check(x->g, x->g->cu->cuMemcpyDtoH(w, x->out, sizeof w), "cuMemcpyDtoH", err,
                  errlen) < 0)
        return -1;
    uint64_t want = x->region + offs[(2 * (size_t)steps) % n];
    if (w[2] != want) {
        snprintf(err, errlen, "a chase of %zu elements ended at 0x%llx, not at 0x%llx: it did "
                              "not follow the list", n, (unsigned long long)w[2],
                 (unsigned long long)want);
        return -1;
    }
    *cycles = (double)w[1] / steps;
    return 0;
}

/* ---- the probe ---------------------------------------------------------------- */

json_t *l1s_probe(struct gpu *g, int repeats)
{
    double t0 = mono_s();
    struct l1s_gpu x = {.g = g, .sass = json_object()};
    struct l1s_ops ops = {gpu_chase, &x};
    char err[ERR_LEN] = "";
    json_t *doc = NULL;
    if (build_chase(&x, M_CA, err, sizeof err) == 0 && build_chase(&x, M_CG, err, sizeof err) == 0 &&
        build_link(&x, err, sizeof err) == 0 && alloc_buffers(&x, err, sizeof err) == 0)
        doc = l1s_search(&ops, repeats);
    if (!doc)
        doc = json_pack("{s:s}", "error", err[0] ? err : "out of memory");
    json_object_set_new(doc, "carveout_percent", json_integer(L1S_CARVEOUT_PERCENT));
    json_object_set_new(doc, "wall_s", json_real(mono_s() - t0));
    json_object_set(doc, "sass", x.sass);
    release(&x);
    return doc;
}
