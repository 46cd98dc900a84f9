/*
 * The distributed-shared-memory probe on a GPU (dsmem.h): per cluster size,
 * builds and checks the module, reads the driver's cluster attributes,
 * asks whether a cluster fits, and times the chase and the stream.
 *
 * DESIGN
 * Nothing here has run on a GPU before it was written, so every Driver API
 * call is checked and a failure ends only its own size, with the reason in
 * that size's entry ("launched": false); a size never stops the others,
 * except that a failure that leaves the context unusable shows as the same
 * error in every later size. cuLaunchKernelEx and
 * cuOccupancyMaxActiveClusters are optional entry points (probes/gpu/cuda.h):
 * without the first the launch is a plain cuLaunchKernel (the cluster size
 * is in the PTX) and the entry says so; a driver that refuses the cluster
 * attribute beside the PTX's own size gets the launch once more without
 * it, and every later entry says so too; without the second, or when the
 * driver refuses the query, the entry has no "max_active_clusters" (a
 * refusal is noted) and the launch alone says whether the size runs. A
 * launched entry's "error" is such a note. Each size's two kernels are checked in the cubin
 * the JIT made (mem_sass_check_kernel: the timed region between the clock
 * reads holds exactly the generic LDs the PTX asks for and no other load)
 * before a launch; a kernel that is not what the probe times is not run.
 */
#include "probes/dsmem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/gpu/gpu.h"
#include "probes/gpu/stats.h"
#include "probes/memory.h"
#include "util/clock.h"

#define ERR_LEN 320
#define LAT_THREADS 32
#define PORTABLE_CLUSTER 8
#define OUT_WORDS (DSM_BW_WORDS > DSM_LAT_WORDS ? DSM_BW_WORDS : DSM_LAT_WORDS) /* u64 */

struct dsm_gpu {
    struct gpu *g;
    struct gpu_module mod;
    CUfunction lat, bw;
    CUdeviceptr out;
    unsigned pad;            /* dynamic shared bytes a block: one block an SM */
    int repeats;
    int no_attr;             /* launch without the cluster attribute (see launch_ex) */
    char attr_refusal[160];  /* what the driver said to it */
    json_t *sass;            /* {"<size>": {"dsm_lat": check, "dsm_bw": check}} */
};

/* One size's measurements as they are taken. */
struct dsm_size {
    struct dsm_raw raw;
    uint64_t lat[DSM_TARGETS * PROBE_MAX_REPEATS];
    uint64_t bw[DSM_DISTS * PROBE_MAX_REPEATS * DSM_MAX_CLUSTER];
    int ranks_mixed;
    unsigned char sm_seen[1024];
    char err[ERR_LEN];
    char note[ERR_LEN / 2 + 32]; /* what did not stop the launch (fits) */
};

/* Dynamic shared memory that makes a block take more than half an SM's:
 * two blocks never share an SM. 0 when the device did not say. */
static unsigned one_block_pad(const struct gpu_device *d)
{
    long per_sm = d->shared_memory_per_sm, optin = d->shared_memory_per_block_optin;
    long want = per_sm / 2 + 1024 - DSM_RING_WORDS * 4;
    if (per_sm <= 0 || want <= 0)
        return 0;
    if (optin > 0 && want > optin - DSM_RING_WORDS * 4)
        want = optin - DSM_RING_WORDS * 4;
    return (unsigned)(want > 0 ? want : 0);
}

static CUresult launch_ex(struct dsm_gpu *x, CUfunction fn, unsigned cluster, unsigned threads,
                          void **params)
{
    const struct cuda_api *cu = x->g->cu;
    if (!cu->cuLaunchKernelEx)
        return cu->cuLaunchKernel(fn, cluster, 1, 1, threads, 1, 1, x->pad, NULL, params, NULL);
    CUlaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.cluster_dim.x = cluster;
    attr.value.cluster_dim.y = 1;
    attr.value.cluster_dim.z = 1;
    CUlaunchConfig cfg = {cluster, 1, 1, threads, 1, 1, x->pad, NULL, &attr, x->no_attr ? 0 : 1};
    CUresult rc = cu->cuLaunchKernelEx(&cfg, fn, params, NULL);
    if (rc != CUDA_SUCCESS && !x->no_attr) {
        /* a driver that will not take the attribute beside the PTX's
         * .reqnctapercluster: the PTX alone sets the size; said in the entry */
        cfg.numAttrs = 0;
        if (cu->cuLaunchKernelEx(&cfg, fn, params, NULL) == CUDA_SUCCESS) {
            x->no_attr = 1;
            cuda_error_text(cu, rc, x->attr_refusal, sizeof x->attr_refusal);
            return CUDA_SUCCESS;
        }
    }
    return rc;
}

/* One grid of one cluster, waited for. The output is zeroed first: a block
 * that wrote nothing shows as a rank count of 0 (a disagreement), never as
 * the last launch's numbers. */
static int launch(struct dsm_gpu *x, CUfunction fn, unsigned cluster, unsigned threads,
                  void **params, char *err, size_t errlen)
{
    const char *what = x->g->cu->cuLaunchKernelEx ? "cuLaunchKernelEx" : "cuLaunchKernel";
    if (gpu_check(x->g, x->g->cu->cuMemsetD32(x->out, 0, OUT_WORDS * 2), "cuMemsetD32(out)", err, errlen) < 0)
        return -1;
    if (gpu_check(x->g, launch_ex(x, fn, cluster, threads, params), what, err, errlen) < 0)
        return -1;
    return gpu_check(x->g, x->g->cu->cuCtxSynchronize(), "kernel execution", err, errlen);
}

/* The module of one size, its kernels checked in the cubin. */
static int build(struct dsm_gpu *x, unsigned size, char *err, size_t errlen)
{
    const struct gpu_device *d = &x->g->info;
    char name[32], key[16];
    snprintf(name, sizeof name, "dsmem_%u", size);
    snprintf(key, sizeof key, "%u", size);
    if (gpu_module_build_generated(x->g, dsm_ptx(d->cc_major, d->cc_minor, size), name, &x->mod,
                                   err, errlen) < 0)
        return -1;
    json_t *lat = mem_sass_check_kernel(&dsm_lat_kernel, x->mod.cubin, x->mod.cubin_size);
    json_t *bw = mem_sass_check_kernel(&dsm_bw_kernel, x->mod.cubin, x->mod.cubin_size);
    int ok = json_is_true(json_object_get(lat, "verified")) && json_is_true(json_object_get(bw, "verified"));
    json_object_set_new(x->sass, key, json_pack("{s:o,s:o}", "dsm_lat", lat, "dsm_bw", bw));
    if (!ok) {
        snprintf(err, errlen, "the compiled dsm_lat or dsm_bw is not what the probe times; see sass");
        return -1;
    }
    if (gpu_module_function(x->g, &x->mod, "dsm_lat", &x->lat, err, errlen) < 0)
        return -1;
    return gpu_module_function(x->g, &x->mod, "dsm_bw", &x->bw, err, errlen);
}

/* The attributes both kernels need, and the driver's reading of the width. */
static int attributes(struct dsm_gpu *x, struct dsm_size *s, char *err, size_t errlen)
{
    const struct cuda_api *cu = x->g->cu;
    CUfunction fns[2] = {x->lat, x->bw};
    for (int i = 0; i < 2; i++) {
        if (s->raw.asked > PORTABLE_CLUSTER &&
            gpu_check(x->g, cu->cuFuncSetAttribute(fns[i], CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
                      "cuFuncSetAttribute(NON_PORTABLE_CLUSTER_SIZE_ALLOWED)", err, errlen) < 0)
            return -1;
        if (x->pad &&
            gpu_check(x->g, cu->cuFuncSetAttribute(fns[i], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                   (int)x->pad),
                      "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", err, errlen) < 0)
            return -1;
        int width = -1;
        if (gpu_check(x->g, cu->cuFuncGetAttribute(&width, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, fns[i]),
                      "cuFuncGetAttribute(REQUIRED_CLUSTER_WIDTH)", err, errlen) < 0)
            return -1;
        if (i == 0)
            s->raw.driver_width = width;
        else if (width != s->raw.driver_width) {
            snprintf(err, errlen, "the driver reads cluster width %d for dsm_lat, %d for dsm_bw",
                     s->raw.driver_width, width);
            return -1;
        }
    }
    return 0;
}

/* cuOccupancyMaxActiveClusters for the bandwidth launch (the larger): -1
 * only when it says no cluster fits. A query the driver refuses (with the
 * cluster attribute, then without it) stops nothing: the launch says
 * whether the size runs, and the refusal is kept as a note. */
static int fits(struct dsm_gpu *x, struct dsm_size *s, char *err, size_t errlen)
{
    const struct cuda_api *cu = x->g->cu;
    if (!cu->cuOccupancyMaxActiveClusters)
        return 0;
    CUlaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.cluster_dim.x = s->raw.asked;
    attr.value.cluster_dim.y = attr.value.cluster_dim.z = 1;
    CUlaunchConfig cfg = {s->raw.asked, 1, 1, DSM_BW_THREADS, 1, 1, x->pad, NULL, &attr, 1};
    int n = -1;
    CUresult rc = cu->cuOccupancyMaxActiveClusters(&n, x->bw, &cfg);
    if (rc != CUDA_SUCCESS) {
        cfg.numAttrs = 0;
        if (cu->cuOccupancyMaxActiveClusters(&n, x->bw, &cfg) != CUDA_SUCCESS) {
            char why[120];
            cuda_error_text(cu, rc, why, sizeof why);
            snprintf(s->note, sizeof s->note, "cuOccupancyMaxActiveClusters: %s", why);
            return 0;
        }
    }
    s->raw.max_clusters = n > (1 << 20) ? (1 << 20) : n;
    if (n < 1) {
        snprintf(err, errlen, "no cluster of %u blocks fits on this device (cuOccupancyMaxActiveClusters"
                 " says 0, one block an SM)", s->raw.asked);
        return -1;
    }
    return 0;
}

/* A rank count no cluster can have (a block that wrote nothing, say)
 * counts as a disagreement, so the entry stays one the store accepts. */
static void saw_ranks(struct dsm_size *s, uint64_t n)
{
    if (n == 0 || n > 1024) {
        s->ranks_mixed = 1;
        s->raw.ranks_seen = 0;
    } else if (s->raw.ranks_seen == 0 && !s->ranks_mixed)
        s->raw.ranks_seen = (unsigned)n;
    else if (s->raw.ranks_seen != n) {
        s->ranks_mixed = 1;
        s->raw.ranks_seen = 0;
    }
}

static void saw_sm(struct dsm_size *s, uint64_t sm)
{
    if (sm < sizeof s->sm_seen && !s->sm_seen[sm]) {
        s->sm_seen[sm] = 1;
        s->raw.distinct_sms++;
    }
}

/* One repeat: the three chases and the two streams. */
static int repeat(struct dsm_gpu *x, struct dsm_size *s, int k, char *err, size_t errlen)
{
    const struct cuda_api *cu = x->g->cu;
    unsigned n = s->raw.asked, targets[DSM_TARGETS] = {0, 1, n - 1};
    unsigned trips = DSM_CHASE_TRIPS, bw_trips = DSM_BW_TRIPS;
    uint64_t out[OUT_WORDS];
    for (int t = 0; t < DSM_TARGETS; t++) {
        void *params[] = {&x->out, &targets[t], &trips};
        if (launch(x, x->lat, n, LAT_THREADS, params, err, errlen) < 0 ||
            gpu_check(x->g, cu->cuMemcpyDtoH(out, x->out, DSM_LAT_WORDS * 8), "cuMemcpyDtoH", err,
                      errlen) < 0)
            return -1;
        s->lat[t * x->repeats + k] = out[0];
        saw_ranks(s, out[2]);
    }
    for (unsigned d = 0; d < DSM_DISTS; d++) {
        void *params[] = {&x->out, &d, &bw_trips};
        if (launch(x, x->bw, n, DSM_BW_THREADS, params, err, errlen) < 0 ||
            gpu_check(x->g, cu->cuMemcpyDtoH(out, x->out, DSM_BW_WORDS * 8), "cuMemcpyDtoH", err,
                      errlen) < 0)
            return -1;
        for (unsigned b = 0; b < n; b++) {
            s->bw[((size_t)d * (size_t)x->repeats + (size_t)k) * n + b] = out[3 * b];
            saw_ranks(s, out[3 * b + 1]);
            if (k == 0 && d == 0)
                saw_sm(s, out[3 * b + 2]);
        }
    }
    return 0;
}

/* Everything for one size; the entry is made whatever happened. */
static json_t *one_size(struct dsm_gpu *x, unsigned size, double clock_mhz)
{
    struct dsm_size *s = calloc(1, sizeof *s);
    if (!s)
        return json_pack("{s:i,s:b,s:s}", "asked", (int)size, "launched", 0, "error", "out of memory");
    s->raw = (struct dsm_raw){.asked = size, .driver_width = -1, .max_clusters = -1,
                              .repeats = x->repeats, .lat = s->lat, .bw = s->bw};
    int ok = build(x, size, s->err, sizeof s->err) == 0 && attributes(x, s, s->err, sizeof s->err) == 0 &&
             fits(x, s, s->err, sizeof s->err) == 0;
    for (int k = 0; ok && k < x->repeats; k++)
        ok = repeat(x, s, k, s->err, sizeof s->err) == 0;
    s->raw.launched = ok;
    if (ok && !x->g->cu->cuLaunchKernelEx)
        snprintf(s->err, sizeof s->err, "the driver has no cuLaunchKernelEx: launched with "
                 "cuLaunchKernel, the cluster size from the PTX alone");
    else if (ok && x->no_attr)
        snprintf(s->err, sizeof s->err, "cuLaunchKernelEx refused the cluster attribute (%s): "
                 "launched without it, the cluster size from the PTX alone", x->attr_refusal);
    else if (ok && s->note[0])
        snprintf(s->err, sizeof s->err, "%s", s->note);
    s->raw.error = s->err[0] ? s->err : NULL;
    json_t *e = dsm_analyze(&s->raw, clock_mhz);
    gpu_module_free(x->g, &x->mod);
    free(s);
    return e ? e : json_pack("{s:i,s:b,s:s}", "asked", (int)size, "launched", 0, "error", "out of memory");
}

json_t *dsm_probe(struct gpu *g, int repeats, double clock_mhz)
{
    double t0 = mono_s();
    struct dsm_gpu x = {.g = g, .repeats = repeats < 1 ? 1 : repeats, .sass = json_object()};
    char err[ERR_LEN] = "";
    json_t *doc = NULL;
    if (x.repeats > PROBE_MAX_REPEATS)
        x.repeats = PROBE_MAX_REPEATS;
    x.pad = one_block_pad(&g->info);
    if (g->info.cc_major < 9)
        snprintf(err, sizeof err, "thread-block clusters need compute capability 9.0 (this is %d.%d)",
                 g->info.cc_major, g->info.cc_minor);
    else if (gpu_check(g, g->cu->cuMemAlloc(&x.out, OUT_WORDS * 8), "cuMemAlloc(out)", err, sizeof err) == 0) {
        json_t *sizes = json_array();
        for (int i = 0; i < DSM_SIZES; i++)
            json_array_append_new(sizes, one_size(&x, dsm_sizes[i], clock_mhz));
        doc = json_pack("{s:f,s:i,s:f,s:i,s:o}", "clock_mhz", clock_mhz, "chase_loads",
                        (int)DSM_CHASE_LOADS, "bw_block_bytes", DSM_BW_BLOCK_BYTES, "block_pad_bytes",
                        (int)x.pad, "sizes", sizes);
    }
    CUdeviceptr *bufs[] = {&x.out};
    gpu_free_buffers(g, bufs, 1);
    if (!doc) {
        doc = json_pack("{s:s}", "error", err[0] ? err : "out of memory");
        json_decref(x.sass);
    } else {
        json_object_set_new(doc, "sass", x.sass);
    }
    json_object_set_new(doc, "wall_s", json_real(mono_s() - t0));
    return doc;
}
