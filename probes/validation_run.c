/*
 * The model-validation run's host side (see validation.h): buffers, the
 * bandwidth measurements, and each kernel built, checked, timed.
 *
 * DESIGN
 * Buffers: one 2 GiB input (the strided and bandwidth kernels' footprint;
 * the first bytes of it serve the other kernels' inputs), one 512 MiB
 * output, three 2048 x 2048 matrices; every word is set to 1.0f so each
 * kernel's answer is known. A kernel is measured only after its warm-up
 * launch produced that answer (read back from the first output words); its
 * per-launch time is the median of `repeats` intervals, each over
 * `launches` back-to-back launches closed by cuCtxSynchronize, on the
 * host's monotonic clock. The document carries each kernel's PTX, launch
 * shape, parameters and the registers and shared memory the driver
 * reports for it, so its description and occupancy can be derived.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probes/gpu/clock.h"
#include "probes/gpu/gpu.h"
#include "probes/gpu/stats.h"
#include "probes/validation.h"
#include "util/clock.h"

#define DEFAULT_REPEATS 5
#define ONE_F 0x3F800000u
#define OUT_BYTES (512ull << 20)
#define MAT_BYTES ((size_t)VAL_MM_N * VAL_MM_N * 4)
#define LINK_BYTES (256ull << 20)
#define LINK_REPEATS 3
#define ERR_LEN 320

struct vrun {
    struct gpu g;
    int repeats;
    CUdeviceptr big, out, ma, mb, mc;
};


static json_t *error_json(const char *why)
{
    return json_pack("{s:s}", "error", why);
}

static int fill_ones(struct vrun *r, CUdeviceptr p, size_t bytes, char *err, size_t errlen)
{
    return gpu_check(&r->g, r->g.cu->cuMemsetD32(p, ONE_F, bytes / 4), "cuMemsetD32", err,
                     errlen);
}

static int alloc_one(struct vrun *r, CUdeviceptr *p, size_t bytes, char *err, size_t errlen)
{
    return gpu_check(&r->g, r->g.cu->cuMemAlloc(p, bytes), "cuMemAlloc", err, errlen) < 0
               ? -1
               : fill_ones(r, *p, bytes, err, errlen);
}

static int alloc_all(struct vrun *r, char *err, size_t errlen)
{
    return alloc_one(r, &r->big, VAL_BIG_BYTES, err, errlen) < 0 ||
                   alloc_one(r, &r->out, OUT_BYTES, err, errlen) < 0 ||
                   alloc_one(r, &r->ma, MAT_BYTES, err, errlen) < 0 ||
                   alloc_one(r, &r->mb, MAT_BYTES, err, errlen) < 0 ||
                   alloc_one(r, &r->mc, MAT_BYTES, err, errlen) < 0
               ? -1
               : 0;
}

static void free_all(struct vrun *r)
{
    CUdeviceptr *ps[] = {&r->big, &r->out, &r->ma, &r->mb, &r->mc};
    gpu_free_buffers(&r->g, ps, sizeof ps / sizeof ps[0]);
}

/* ---- one kernel ----------------------------------------------------------------- */

struct launch {
    const struct val_kernel *k;
    CUfunction fn;
    CUdeviceptr ptrs[3];
    unsigned ints[VAL_MAX_PARAMS];
    void *params[3 + VAL_MAX_PARAMS];
};

/* Pointers (output first) and integer parameters of kernel id. */
static void bind(struct vrun *r, enum val_kernel_id id, struct launch *l)
{
    const struct val_kernel *k = &val_kernels[id];
    int is_mm = id == VK_MM_NAIVE || id == VK_MM_TILED || id == VK_MM_ABT;
    l->k = k;
    l->ptrs[0] = is_mm ? r->mc : r->out;
    l->ptrs[1] = is_mm ? r->ma : r->big;
    l->ptrs[2] = r->mb;
    int n = 0;
    for (int i = 0; i < k->pointers; i++)
        l->params[n++] = &l->ptrs[i];
    for (int i = 0; i < k->nints; i++) {
        l->ints[i] = k->ints[i];
        l->params[n++] = &l->ints[i];
    }
}

static int launch(struct vrun *r, const struct launch *l, int times, char *err, size_t errlen)
{
    const struct val_kernel *k = l->k;
    for (int i = 0; i < times; i++)
        if (gpu_check(&r->g, r->g.cu->cuLaunchKernel(l->fn, k->grid[0], k->grid[1], k->grid[2],
                                                     k->block[0], k->block[1], k->block[2], 0,
                                                     NULL, (void **)l->params, NULL),
                      "cuLaunchKernel", err, errlen) < 0)
            return -1;
    return gpu_check(&r->g, r->g.cu->cuCtxSynchronize(), "kernel execution", err, errlen);
}

/* What the first output word must be after one launch (all inputs 1.0f). */
static float expected(enum val_kernel_id id)
{
    switch (id) {
    case VK_COPY: return 1.0f;
    case VK_STRIDED: return (float)VAL_STRIDED_ITERS;
    case VK_FFMA: return 8.0f;
    case VK_MIXED: return 4.0f;
    case VK_REDUCE: return 1024.0f;
    case VK_MM_NAIVE:
    case VK_MM_TILED:
    case VK_MM_ABT: return (float)VAL_MM_N;
    default: return 0.0f;
    }
}

static int check_answer(struct vrun *r, enum val_kernel_id id, const struct launch *l,
                        char *err, size_t errlen)
{
    float got[2] = {0, 0};
    if (gpu_check(&r->g, r->g.cu->cuMemcpyDtoH(got, l->ptrs[0], sizeof got), "cuMemcpyDtoH", err,
                  errlen) < 0)
        return -1;
    if (got[0] != expected(id) || got[1] != expected(id)) {
        snprintf(err, errlen, "wrong answer: out[0..1] = %g, %g, expected %g", got[0], got[1],
                 expected(id));
        return -1;
    }
    return 0;
}

/* Seconds per launch, `repeats` times. */
static json_t *time_kernel(struct vrun *r, const struct launch *l, char *err, size_t errlen)
{
    double *runs = calloc((size_t)r->repeats, sizeof *runs);
    if (!runs)
        return error_json("out of memory");
    for (int i = 0; i < r->repeats; i++) {
        double t0 = mono_s();
        if (launch(r, l, l->k->launches, err, errlen) < 0) {
            free(runs);
            return error_json(err);
        }
        runs[i] = (mono_s() - t0) / l->k->launches;
    }
    json_t *j = spread_json(runs, (size_t)r->repeats);
    free(runs);
    return j;
}

static json_t *shape_json(const unsigned *d)
{
    return json_pack("[i,i,i]", (int)d[0], (int)d[1], (int)d[2]);
}

static json_t *params_json(const struct val_kernel *k)
{
    json_t *o = json_object();
    for (int i = 0; i < k->nints; i++)
        json_object_set_new(o, k->int_names[i], json_integer(k->ints[i]));
    return o;
}

/* Registers and shared memory as the driver reports them for the function. */
static void attrs_json(struct vrun *r, CUfunction fn, json_t *o)
{
    static const struct {
        const char *key;
        int attr;
    } attrs[] = {{"regs", CU_FUNC_ATTRIBUTE_NUM_REGS},
                 {"static_smem", CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES},
                 {"local_bytes", CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES}};
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        int v = 0;
        if (r->g.cu->cuFuncGetAttribute(&v, attrs[i].attr, fn) == CUDA_SUCCESS)
            json_object_set_new(o, attrs[i].key, json_integer(v));
    }
}

/* Builds, checks and times one kernel; its entry of "kernels". */
static json_t *run_kernel(struct vrun *r, enum val_kernel_id id)
{
    const struct val_kernel *k = &val_kernels[id];
    char err[ERR_LEN] = "", name[64];
    struct gpu_module m;
    struct launch l;
    memset(&l, 0, sizeof l);
    char *ptx = val_ptx(id, r->g.info.cc_major, r->g.info.cc_minor);
    json_t *o = json_pack("{s:s, s:s, s:s, s:o, s:o, s:i, s:i, s:o}", "name", k->name, "character",
                          k->character, "entry", k->entry, "grid", shape_json(k->grid), "block",
                          shape_json(k->block), "smem", 0, "launches", k->launches, "params",
                          params_json(k));
    if (!ptx) {
        json_object_set_new(o, "measured_s", error_json("out of memory"));
        return o;
    }
    json_object_set_new(o, "ptx", json_string(ptx));
    snprintf(name, sizeof name, "validation_%s", k->name);
    json_t *measured = NULL;
    if (gpu_module_build(&r->g, ptx, name, &m, err, sizeof err) == 0) {
        bind(r, id, &l);
        if (gpu_module_function(&r->g, &m, k->entry, &l.fn, err, sizeof err) == 0) {
            attrs_json(r, l.fn, o);
            if (gpu_check(&r->g, r->g.cu->cuMemsetD32(l.ptrs[0], 0, 2), "cuMemsetD32", err,
                          sizeof err) == 0 &&
                launch(r, &l, 1, err, sizeof err) == 0 &&
                (id == VK_BW_READ || check_answer(r, id, &l, err, sizeof err) == 0))
                measured = time_kernel(r, &l, err, sizeof err);
        }
        gpu_module_free(&r->g, &m);
    }
    free(ptx);
    json_object_set_new(o, "measured_s", measured ? measured : error_json(err));
    return o;
}

/* ---- bandwidth --------------------------------------------------------------------- */

static json_t *dram_bandwidth(struct vrun *r)
{
    json_t *t = run_kernel(r, VK_BW_READ);
    const json_t *s = json_object_get(t, "measured_s");
    const struct val_kernel *k = &val_kernels[VK_BW_READ];
    double bytes = (double)k->grid[0] * k->block[0] * VAL_BW_ITERS * 16.0;
    json_t *out;
    if (json_object_get(s, "error")) {
        out = json_incref((json_t *)s);
    } else {
        size_t i, n = json_array_size(json_object_get(s, "runs"));
        double *bw = calloc(n ? n : 1, sizeof *bw);
        json_t *v;
        json_array_foreach(json_object_get(s, "runs"), i, v)
            bw[i] = bytes / json_real_value(v);
        out = bw ? spread_json(bw, n) : error_json("out of memory");
        free(bw);
        json_object_set_new(out, "bytes", json_real(bytes));
        json_object_set_new(out, "method", json_string(k->character));
    }
    json_decref(t);
    return out;
}

static json_t *link_bandwidth(struct vrun *r)
{
    char err[ERR_LEN] = "";
    double bw[LINK_REPEATS];
    void *host = malloc(LINK_BYTES);
    if (!host)
        return error_json("out of memory for the host buffer");
    memset(host, 0, LINK_BYTES);
    int ok = 1;
    for (int i = 0; i < LINK_REPEATS && ok; i++) {
        double t0 = mono_s();
        ok = gpu_check(&r->g, r->g.cu->cuMemcpyHtoD(r->out, host, LINK_BYTES), "cuMemcpyHtoD",
                       err, sizeof err) == 0 &&
             gpu_check(&r->g, r->g.cu->cuCtxSynchronize(), "cuCtxSynchronize", err,
                       sizeof err) == 0;
        bw[i] = (double)LINK_BYTES / (mono_s() - t0);
    }
    free(host);
    if (!ok)
        return error_json(err);
    json_t *j = spread_json(bw, LINK_REPEATS);
    json_object_set_new(j, "bytes", json_real((double)LINK_BYTES));
    json_object_set_new(j, "method", json_string("cuMemcpyHtoD from pageable host memory"));
    return j;
}

/* ---- the run ---------------------------------------------------------------------------- */

static json_t *run_open(struct vrun *r, double t0, char *err, size_t errlen)
{
    double before = 0, after = 0;
    if (gpu_clock_mhz(&r->g, &before, err, errlen) < 0 || /* also lifts an idle clock */
        gpu_clock_mhz(&r->g, &before, err, errlen) < 0 || alloc_all(r, err, errlen) < 0)
        return NULL;
    json_t *res = json_pack("{s:s, s:o, s:s, s:i, s:s}", "probe", "model-validation", "device",
                            gpu_json(&r->g), "driver_version", r->g.driver_version, "repeats",
                            r->repeats, "timing",
                            "host CLOCK_MONOTONIC around back-to-back launches closed by "
                            "cuCtxSynchronize, after one checked warm-up launch; per launch");
    json_t *bw = json_pack("{s:o}", "dram_bytes_per_s", dram_bandwidth(r));
    json_object_set_new(bw, "link_bytes_per_s", link_bandwidth(r));
    json_object_set_new(res, "bandwidth", bw);
    json_t *list = json_array();
    for (int id = 0; id < VK_COUNT; id++)
        json_array_append_new(list, run_kernel(r, (enum val_kernel_id)id));
    json_object_set_new(res, "kernels", list);
    if (gpu_clock_mhz(&r->g, &after, err, errlen) < 0) {
        json_decref(res);
        return NULL;
    }
    json_object_set_new(res, "clock_mhz", json_pack("{s:f,s:f}", "before", before, "after", after));
    json_object_set_new(res, "wall_s", json_real(mono_s() - t0));
    return res;
}

json_t *validation_run(const char *device, int repeats, char *err, size_t errlen)
{
    double t0 = mono_s();
    struct vrun r;
    memset(&r, 0, sizeof r);
    if (repeats > PROBE_MAX_REPEATS) {
        snprintf(err, errlen, "repeats must be from 1 to %d", PROBE_MAX_REPEATS);
        return NULL;
    }
    r.repeats = repeats < 1 ? DEFAULT_REPEATS : repeats;
    json_t *res = NULL;
    if (gpu_open(&r.g, device, err, errlen) == 0)
        res = run_open(&r, t0, err, errlen);
    if (r.g.cu)
        free_all(&r);
    gpu_close(&r.g);
    return res;
}
