/*
 * The block placement probe on a GPU (placement.h): the launches of
 * one-warp blocks that give the order, and the check launch.
 *
 * DESIGN
 * An untimed launch first (the module's first launch pays for its
 * loading), then PL_LAUNCHES launches whose records are kept; when the
 * first of them was not one wave, all are run again with a spin 4x longer.
 * The check launch keeps the spin that gave one wave.
 */
#include "probes/placement.h"

#include <stdio.h>
#include <stdlib.h>

#include "probes/gpu/gpu.h"
#include "util/clock.h"

#define ERR_LEN 320

struct pl_gpu {
    struct gpu *g;
    struct gpu_module mod;
    CUfunction fn;
    CUdeviceptr out;
};

/* One launch of blocks x threads into rec (blocks x PL_REC). */
static int launch(struct pl_gpu *x, uint32_t blocks, uint32_t threads, uint64_t spin, uint64_t *rec,
                  char *err, size_t errlen)
{
    const struct cuda_api *cu = x->g->cu;
    void *params[] = {&x->out, &spin};
    if (gpu_launch(x->g, x->fn, blocks, threads, 0, params, err, errlen) < 0)
        return -1;
    return rec ? gpu_check(x->g, cu->cuMemcpyDtoH(rec, x->out, (size_t)blocks * PL_REC * 8),
                           "cuMemcpyDtoH", err, errlen)
               : 0;
}

/* The order's launches, the spin made longer until the first is one wave. */
static int order_launches(struct pl_gpu *x, struct pl_input *in, uint64_t *rec, char *err, size_t errlen)
{
    uint64_t spin = PL_SPIN_NS;
    for (int t = 0; t < PL_TRIES; t++, spin *= 4) {
        in->spin_ns = spin;
        if (launch(x, in->blocks, in->threads, spin, NULL, err, errlen) < 0)
            return -1;
        for (uint32_t l = 0; l < in->launches; l++)
            if (launch(x, in->blocks, in->threads, spin, rec + (size_t)l * in->blocks * PL_REC, err,
                       errlen) < 0)
                return -1;
        uint64_t deal_ns;
        if (pl_one_wave(rec, in->blocks, &deal_ns))
            break;
    }
    return 0;
}

static json_t *measure(struct pl_gpu *x, char *err, size_t errlen)
{
    const struct gpu_device *d = &x->g->info;
    uint32_t per_sm = (uint32_t)(d->max_blocks_per_sm < d->max_warps_per_sm ? d->max_blocks_per_sm
                                                                             : d->max_warps_per_sm);
    uint32_t check_per_sm = (uint32_t)d->max_threads_per_sm / PL_CHECK_THREADS;
    struct pl_input in = {.sms = (uint32_t)d->sm_count, .threads = 32, .launches = PL_LAUNCHES,
                          .check_threads = PL_CHECK_THREADS, .check_per_sm = check_per_sm};
    in.blocks = in.sms * per_sm;
    in.check_blocks = in.sms * check_per_sm;
    if (!in.blocks) {
        snprintf(err, errlen, "the device reports no SMs or no resident blocks per SM");
        return NULL;
    }
    size_t most = in.blocks > in.check_blocks ? in.blocks : in.check_blocks;
    uint64_t *rec = malloc((size_t)in.blocks * in.launches * PL_REC * 8);
    uint64_t *check = in.check_blocks ? malloc((size_t)in.check_blocks * PL_REC * 8) : NULL;
    json_t *doc = NULL;
    if (!rec || (in.check_blocks && !check))
        snprintf(err, errlen, "out of memory");
    else if (gpu_check(x->g, x->g->cu->cuMemAlloc(&x->out, most * PL_REC * 8), "cuMemAlloc(out)", err,
                       errlen) == 0 &&
             order_launches(x, &in, rec, err, errlen) == 0) {
        in.rec = rec;
        /* the check as the order: an untimed launch, then the one kept */
        if (check && (launch(x, in.check_blocks, in.check_threads, in.spin_ns, NULL, err, errlen) < 0 ||
                      launch(x, in.check_blocks, in.check_threads, in.spin_ns, check, err, errlen) < 0))
            check = (free(check), NULL);
        in.check = check;
        doc = pl_analyze(&in);
        if (doc && !check && check_per_sm)
            json_object_set_new(doc, "check", json_pack("{s:s}", "error", err));
    }
    free(rec);
    free(check);
    return doc;
}

json_t *pl_probe(struct gpu *g)
{
    double t0 = mono_s();
    struct pl_gpu x = {.g = g};
    char err[ERR_LEN] = "";
    json_t *doc = NULL;
    const struct gpu_device *d = &g->info;
    if (gpu_module_build_generated(g, pl_ptx(d->cc_major, d->cc_minor), "placement", &x.mod, err,
                                   sizeof err) == 0 &&
        gpu_module_function(g, &x.mod, "pl_place", &x.fn, err, sizeof err) == 0)
        doc = measure(&x, err, sizeof err);
    if (!doc)
        doc = json_pack("{s:s}", "error", err[0] ? err : "out of memory");
    json_object_set_new(doc, "wall_s", json_real(mono_s() - t0));
    CUdeviceptr *bufs[] = {&x.out};
    gpu_free_buffers(g, bufs, 1);
    gpu_module_free(g, &x.mod);
    return doc;
}
