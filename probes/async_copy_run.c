/*
 * The asynchronous-copy probe on a GPU (async_copy.h): builds each kernel,
 * checks its machine code, makes the tensor maps, times the latency points
 * and the bandwidth points.
 *
 * DESIGN
 * Written never having run on a GPU, so every CUDA call is checked and a
 * failure lands in the point it spoils ({"method","bytes","error"}), never
 * in the whole memory document: a driver without cuTensorMapEncodeTiled,
 * a device below 9.0 (no bulk copies) or a kernel whose timed region is not
 * the copy it names each leave their own rows with the reason. Sizes:
 *   latency    ld 4/8/16, ca 4/8/16, cg 16 B per thread (a warp: 32 x,
 *              so 128..512 B a copy); bulk 16 B..16 KiB, with 128 and 512
 *              B beside the warp's plain loads of the same bytes; tensor
 *              1..128 rows of 128 B;
 *   bandwidth  ld 4/16, ca 4/8/16, cg 16 B per thread; bulk 64 B..16 KiB;
 *              tensor 128 B..16 KiB (R x 128 B boxes).
 * The latency buffer (ACP_LAT_ITERS copies, each at least
 * ACP_LAT_STRIDE_MIN bytes from the last) is read by the memory probe's
 * "warm" kernel (every 32-byte sector, from every SM) before each point, so
 * copies hit in the L2 ("l2"; whichever partition holds the line).
 * Bandwidth: "dram" streams 4 x the L2 once (what the L2 keeps of the
 * previous point's pass is its last quarter at most, and the pass starts at
 * the buffer's start); "l2" reads a quarter of the L2 ACP_L2_PASSES times
 * after a warm read. Time: a few dozen launches of well under a
 * millisecond each, plus the JIT of ~25 small modules.
 */
#include "probes/async_copy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/gpu/gpu.h"
#include "probes/memory.h"
#include "util/clock.h"

#define ERR_LEN 320
#define WARM_STRIDE 32           /* bytes between the warm kernel's reads: every sector */

struct acp_gpu {
    struct gpu *g;
    struct gpu_module support;
    CUfunction warm;
    CUdeviceptr lat_buf, dram_buf, l2_buf, out, warm_out;
    size_t lat_bytes, dram_bytes, l2_bytes;
    unsigned nblocks;
    double clock_mhz;
    json_t *sass;
};

struct point {
    enum acp_method m;
    unsigned size;               /* per thread (ld/ca/cg) or per copy */
};

static const struct point lat_points[] = {
    {ACP_LD, 4},       {ACP_LD, 8},      {ACP_LD, 16},     {ACP_CA, 4},        {ACP_CA, 8},
    {ACP_CA, 16},      {ACP_CG, 16},     {ACP_BULK, 16},   {ACP_BULK, 128},    {ACP_BULK, 512},
    {ACP_BULK, 1024},  {ACP_BULK, 4096}, {ACP_BULK, 16384}, {ACP_TENSOR, 128}, {ACP_TENSOR, 512},
    {ACP_TENSOR, 2048}, {ACP_TENSOR, 8192}, {ACP_TENSOR, 16384},
};

static const struct point bw_points[] = {
    {ACP_LD, 4},        {ACP_LD, 16},       {ACP_CA, 4},        {ACP_CA, 8},
    {ACP_CA, 16},       {ACP_CG, 16},       {ACP_BULK, 64},     {ACP_BULK, 256},
    {ACP_BULK, 1024},   {ACP_BULK, 4096},   {ACP_BULK, 16384},  {ACP_TENSOR, 128},
    {ACP_TENSOR, 1024}, {ACP_TENSOR, 4096}, {ACP_TENSOR, 16384},
};

#define N_LAT (sizeof lat_points / sizeof lat_points[0])
#define N_BW (sizeof bw_points / sizeof bw_points[0])

/* Bytes one timed latency region moves. */
static unsigned region_bytes(const struct point *p)
{
    return acp_per_thread(p->m) ? 32 * p->size : p->size;
}

static json_t *point_error(const struct point *p, const char *level, const char *why)
{
    return json_pack("{s:s,s:i,s:s,s:s}", "method", acp_method_name(p->m), "bytes", (int)p->size,
                     "level", level, "error", why);
}

/* ---- setup -------------------------------------------------------------- */

static int alloc_buffers(struct acp_gpu *x, char *err, size_t errlen)
{
    const struct cuda_api *cu = x->g->cu;
    size_t l2 = x->g->info.l2_bytes > 0 ? (size_t)x->g->info.l2_bytes : (size_t)50 << 20;
    x->lat_bytes = (size_t)ACP_LAT_ITERS * ACP_BULK_MAX + 4096;
    x->dram_bytes = (4 * l2 + ACP_CHUNK - 1) / ACP_CHUNK * ACP_CHUNK;
    x->l2_bytes = (l2 / 4 + ACP_CHUNK - 1) / ACP_CHUNK * ACP_CHUNK;
    x->nblocks = (unsigned)(x->g->info.sm_count > 0 ? x->g->info.sm_count : 1);
    CUdeviceptr *bufs[] = {&x->lat_buf, &x->dram_buf, &x->l2_buf};
    size_t sizes[] = {x->lat_bytes, x->dram_bytes, x->l2_bytes};
    for (size_t i = 0; i < 3; i++)
        if (gpu_check(x->g, cu->cuMemAlloc(bufs[i], sizes[i]), "cuMemAlloc(buffer)", err, errlen) < 0 ||
            gpu_check(x->g, cu->cuMemsetD32(*bufs[i], 0, sizes[i] / 4), "cuMemsetD32", err, errlen) < 0)
            return -1;
    size_t out = (size_t)x->nblocks * 16 > ACP_LAT_ITERS * 4 ? (size_t)x->nblocks * 16 : ACP_LAT_ITERS * 4;
    return gpu_check(x->g, cu->cuMemAlloc(&x->out, out), "cuMemAlloc(out)", err, errlen) < 0 ||
                   gpu_check(x->g, cu->cuMemAlloc(&x->warm_out, 64 * 8), "cuMemAlloc(out)", err,
                             errlen) < 0
               ? -1
               : 0;
}

static void release(struct acp_gpu *x)
{
    CUdeviceptr *bufs[] = {&x->lat_buf, &x->dram_buf, &x->l2_buf, &x->out, &x->warm_out};
    gpu_free_buffers(x->g, bufs, sizeof bufs / sizeof bufs[0]);
    gpu_module_free(x->g, &x->support);
}

/* Reads bytes of buf from every SM (L2 fill). */
static int warm(struct acp_gpu *x, CUdeviceptr buf, size_t bytes, char *err, size_t errlen)
{
    unsigned n = (unsigned)(bytes / WARM_STRIDE), stride = WARM_STRIDE;
    void *params[] = {&x->warm_out, &buf, &n, &stride};
    return gpu_launch(x->g, x->warm, x->nblocks * 4, 256, 0, params, err, errlen);
}

/* The tensor map of buf (bytes) as rows of ACP_ROW bytes, boxes of `box`
 * bytes (a whole number of rows, at most 256). */
static int tensor_map(struct acp_gpu *x, CUtensorMap *map, CUdeviceptr buf, size_t bytes,
                      unsigned box, char *err, size_t errlen)
{
    const struct cuda_api *cu = x->g->cu;
    if (!cu->cuTensorMapEncodeTiled) {
        snprintf(err, errlen, "the driver has no cuTensorMapEncodeTiled");
        return -1;
    }
    unsigned long long dims[2] = {ACP_ROW / 4, bytes / ACP_ROW}, strides[1] = {ACP_ROW};
    unsigned boxdim[2] = {ACP_ROW / 4, box / ACP_ROW}, estr[2] = {1, 1};
    memset(map, 0, sizeof *map);
    return gpu_check(x->g,
                     cu->cuTensorMapEncodeTiled(map, CU_TENSOR_MAP_DATA_TYPE_UINT32, 2, (void *)buf,
                                                dims, strides, boxdim, estr,
                                                CU_TENSOR_MAP_INTERLEAVE_NONE,
                                                CU_TENSOR_MAP_SWIZZLE_NONE,
                                                CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                     "cuTensorMapEncodeTiled", err, errlen);
}

/* Builds one kernel; its SASS check goes to x->sass under key. 0, or -1
 * with the reason (the machine code's, or the JIT's). */
static int build(struct acp_gpu *x, const struct point *p, int lat, struct gpu_module *mod,
                 CUfunction *fn, char *err, size_t errlen)
{
    const struct gpu_device *d = &x->g->info;
    char name[48];
    snprintf(name, sizeof name, "async_%s%u_%s", acp_method_name(p->m), p->size, lat ? "lat" : "bw");
    if (gpu_module_build_generated(x->g,
                                   acp_ptx(p->m, p->size, lat, d->cc_major, d->cc_minor),
                                   name, mod, err, errlen) < 0)
        return -1;
    json_t *chk = acp_sass_check(p->m, lat, mod->cubin, mod->cubin_size);
    int ok = json_is_true(json_object_get(chk, "verified"));
    json_object_set_new(x->sass, name + 6, chk);
    if (!ok) {
        snprintf(err, errlen, "the compiled kernel is not what the probe times; see sass.%s", name + 6);
        gpu_module_free(x->g, mod);
        return -1;
    }
    if (gpu_module_function(x->g, mod, "acp", fn, err, errlen) < 0) {
        gpu_module_free(x->g, mod);
        return -1;
    }
    return 0;
}

/* Why the device cannot run method m, or NULL. */
static const char *unsupported(const struct acp_gpu *x, enum acp_method m)
{
    int cc = x->g->info.cc_major * 10 + x->g->info.cc_minor;
    if (cc < 80)
        return "cp.async needs compute capability 8.0";
    if (!acp_per_thread(m) && cc < 90)
        return "bulk copies need compute capability 9.0";
    return NULL;
}

/* ---- latency -------------------------------------------------------------- */

/* Whether a copy's wait gave up (its timing ACP_LATE), with the reason. */
static int gave_up(const uint32_t *cycles, size_t n, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++)
        if (cycles[i] == ACP_LATE) {
            snprintf(err, errlen, "copy %zu: the mbarrier wait gave up after %u tries", i, ACP_SPIN_MAX);
            return 1;
        }
    return 0;
}

static json_t *latency_point(struct acp_gpu *x, const struct point *p)
{
    char err[ERR_LEN] = "";
    const char *why = unsupported(x, p->m);
    if (why)
        return point_error(p, "l2", why);
    struct gpu_module mod = {0};
    CUfunction fn;
    CUtensorMap map;
    unsigned iters = ACP_LAT_ITERS, bytes = region_bytes(p);
    unsigned stride = bytes > ACP_LAT_STRIDE_MIN ? bytes : ACP_LAT_STRIDE_MIN;
    uint32_t cycles[ACP_LAT_ITERS];
    void *params[] = {&x->out, &x->lat_buf, &iters, &stride, &bytes, &map};
    json_t *res = NULL;
    if ((p->m == ACP_TENSOR &&
         tensor_map(x, &map, x->lat_buf, x->lat_bytes / ACP_ROW * ACP_ROW, p->size, err, sizeof err) < 0) ||
        build(x, p, 1, &mod, &fn, err, sizeof err) < 0)
        return point_error(p, "l2", err);
    if (warm(x, x->lat_buf, x->lat_bytes, err, sizeof err) == 0 &&
        gpu_check(x->g, x->g->cu->cuMemsetD32(x->out, 0, ACP_LAT_ITERS), "cuMemsetD32", err,
                  sizeof err) == 0 &&
        gpu_launch(x->g, fn, 1, acp_per_thread(p->m) ? 32 : 1, 0, params, err, sizeof err) == 0 &&
        gpu_check(x->g, x->g->cu->cuMemcpyDtoH(cycles, x->out, sizeof cycles), "cuMemcpyDtoH", err,
                  sizeof err) == 0 &&
        !gave_up(cycles, ACP_LAT_ITERS, err, sizeof err)) {
        json_t *c = acp_latency_json(cycles, ACP_LAT_ITERS);
        res = c ? json_pack("{s:s,s:i,s:i,s:s,s:o}", "method", acp_method_name(p->m), "bytes",
                            (int)p->size, "bytes_per_copy", (int)bytes, "level", "l2", "cycles", c)
                : point_error(p, "l2", "out of memory");
    } else {
        res = point_error(p, "l2", err);
    }
    gpu_module_free(x->g, &mod);
    return res;
}

/* ---- bandwidth ------------------------------------------------------------ */

static json_t *bandwidth_run(struct acp_gpu *x, const struct point *p, CUfunction fn, int l2)
{
    char err[ERR_LEN] = "";
    const char *level = l2 ? "l2" : "dram";
    CUdeviceptr buf = l2 ? x->l2_buf : x->dram_buf;
    size_t bytes = l2 ? x->l2_bytes : x->dram_bytes;
    unsigned buf_chunks = (unsigned)(bytes / ACP_CHUNK);
    unsigned chunks = l2 ? buf_chunks * ACP_L2_PASSES : buf_chunks, size = p->size;
    CUtensorMap map;
    void *params[] = {&x->out, &buf, &chunks, &buf_chunks, &size, &map};
    unsigned nb = x->nblocks;
    uint64_t *t = calloc(2 * (size_t)nb, sizeof *t), *bb = calloc(nb, sizeof *bb);
    json_t *res = NULL;
    if (!t || !bb) {
        res = point_error(p, level, "out of memory");
    } else if ((p->m == ACP_TENSOR && tensor_map(x, &map, buf, bytes, p->size, err, sizeof err) < 0) ||
               (l2 && warm(x, buf, bytes, err, sizeof err) < 0) ||
               gpu_launch(x->g, fn, nb, acp_per_thread(p->m) ? ACP_BW_THREADS : 32, 0, params, err,
                          sizeof err) < 0 ||
               gpu_check(x->g, x->g->cu->cuMemcpyDtoH(t, x->out, 2 * (size_t)nb * sizeof *t),
                         "cuMemcpyDtoH", err, sizeof err) < 0) {
        res = point_error(p, level, err);
    } else {
        for (unsigned b = 0; b < nb; b++)
            bb[b] = (uint64_t)(chunks > b ? (chunks - b + nb - 1) / nb : 0) * ACP_CHUNK;
        res = acp_bandwidth_json(t, bb, nb, x->clock_mhz);
        json_t *head = json_pack("{s:s,s:i,s:s}", "method", acp_method_name(p->m), "bytes", (int)p->size,
                                 "level", level);
        json_object_update(head, res);
        json_decref(res);
        res = head;
    }
    free(t);
    free(bb);
    return res;
}

static void bandwidth_point(struct acp_gpu *x, const struct point *p, json_t *out)
{
    char err[ERR_LEN] = "";
    const char *why = unsupported(x, p->m);
    struct gpu_module mod = {0};
    CUfunction fn;
    if (!why && build(x, p, 0, &mod, &fn, err, sizeof err) < 0)
        why = err;
    for (int l2 = 1; l2 >= 0; l2--)
        json_array_append_new(out, why ? point_error(p, l2 ? "l2" : "dram", why)
                                       : bandwidth_run(x, p, fn, l2));
    gpu_module_free(x->g, &mod);
}

/* ---- the probe ------------------------------------------------------------ */

json_t *acp_probe(struct gpu *g, double clock_mhz)
{
    double t0 = mono_s();
    struct acp_gpu x = {.g = g, .clock_mhz = clock_mhz, .sass = json_object()};
    char err[ERR_LEN] = "";
    const struct gpu_device *d = &g->info;
    json_t *doc;
    if (d->cc_major * 10 + d->cc_minor < 80)
        snprintf(err, sizeof err, "cp.async needs compute capability 8.0");
    else if (gpu_module_build_generated(g, mem_ptx(MK_SUPPORT, d->cc_major, d->cc_minor),
                                        "async_support", &x.support, err, sizeof err) == 0 &&
             gpu_module_function(g, &x.support, "warm", &x.warm, err, sizeof err) == 0)
        alloc_buffers(&x, err, sizeof err);
    if (err[0]) {
        doc = json_pack("{s:s}", "error", err);
        json_decref(x.sass);
    } else {
        json_t *lat = json_array(), *bw = json_array();
        for (size_t i = 0; i < N_LAT; i++)
            json_array_append_new(lat, latency_point(&x, &lat_points[i]));
        for (size_t i = 0; i < N_BW; i++)
            bandwidth_point(&x, &bw_points[i], bw);
        doc = acp_document(lat, bw, g->cu->cuTensorMapEncodeTiled ? "ok" : "the driver has no cuTensorMapEncodeTiled",
                           x.sass, x.dram_bytes, x.l2_bytes);
        if (!doc)
            doc = json_pack("{s:s}", "error", "out of memory");
    }
    release(&x);
    json_object_set_new(doc, "wall_s", json_real(mono_s() - t0));
    return doc;
}
