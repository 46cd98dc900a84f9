/*
 * The model-validation run's host side (see validation.h): buffers, the
 * bandwidth measurements, and each kernel built, checked, timed.
 *
 * DESIGN
 * Buffers (validation_data.h's val_buffer): one 2 GiB input (the strided
 * and bandwidth kernels' footprint; the first bytes of it serve other
 * kernels' inputs), one 512 MiB output, three 2048 x 2048 matrices, every
 * word 1.0f; and four 64 MiB patterns made on the host (validation_data.c)
 * and copied over once. A kernel is measured only after its warm-up launch
 * produced its known answer: the words of its output that
 * val_check_words names are zeroed before that launch and read back after
 * it. Its per-launch time is the median of `repeats` intervals, each over
 * `launches` back-to-back launches closed by cuCtxSynchronize, on the
 * host's monotonic clock. The document carries each kernel's PTX, launch
 * shape, parameters and the registers and shared memory the driver
 * reports for it, so its description and occupancy can be derived.
 * The L2 kernel's grid and footprint come from the device's L2 size (a
 * quarter of it, in 16-byte vectors), so they are set here, not in the
 * kernel table.
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
#include "probes/validation_data.h"
#include "util/clock.h"

#define DEFAULT_REPEATS 5
#define ONE_F 0x3F800000u
#define PATTERN_BYTES ((size_t)VAL_INPUT_WORDS * 4)
#define LINK_BYTES (256ull << 20)
#define LINK_REPEATS 3
#define ERR_LEN 320
#define L2_SHARE 4          /* the L2 kernel re-reads a quarter of the L2 */
#define VEC_BYTES 16        /* the bandwidth kernels' loads */

struct vrun {
    struct gpu g;
    int repeats;
    CUdeviceptr buf[VB_COUNT];
    unsigned l2_nvec, l2_blocks;   /* the L2 kernel's footprint (vectors) and grid */
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

/* The patterns, made in one host buffer and copied to their device buffers. */
static int fill_patterns(struct vrun *r, char *err, size_t errlen)
{
    uint32_t *host = malloc(PATTERN_BYTES);
    int rc = 0;
    if (!host) {
        snprintf(err, errlen, "out of memory for the input patterns");
        return -1;
    }
    for (int in = 0; in < VI_COUNT && rc == 0; in++) {
        val_input_fill((enum val_input)in, host);
        rc = gpu_check(&r->g, r->g.cu->cuMemcpyHtoD(r->buf[val_input_buffer((enum val_input)in)],
                                                    host, PATTERN_BYTES),
                       "cuMemcpyHtoD", err, errlen);
    }
    free(host);
    return rc;
}

static int alloc_all(struct vrun *r, char *err, size_t errlen)
{
    for (int b = 0; b < VB_COUNT; b++) {
        if (gpu_check(&r->g, r->g.cu->cuMemAlloc(&r->buf[b], val_buffer_bytes((enum val_buffer)b)), "cuMemAlloc", err,
                      errlen) < 0)
            return -1;
        if (b < VB_SEQ && fill_ones(r, r->buf[b], val_buffer_bytes((enum val_buffer)b), err, errlen) < 0)
            return -1;
    }
    return fill_patterns(r, err, errlen);
}

static void free_all(struct vrun *r)
{
    CUdeviceptr *ps[VB_COUNT];
    for (int b = 0; b < VB_COUNT; b++)
        ps[b] = &r->buf[b];
    gpu_free_buffers(&r->g, ps, VB_COUNT);
}

/* ---- one kernel ----------------------------------------------------------------- */

struct launch {
    const struct val_kernel *k;
    CUfunction fn;
    unsigned grid[3];
    CUdeviceptr ptrs[3];
    unsigned ints[VAL_MAX_PARAMS];
    void *params[3 + VAL_MAX_PARAMS];
};

/* Pointers (output first, as val_bindings binds them), grid and integer
 * parameters of kernel id. */
static void bind(struct vrun *r, enum val_kernel_id id, struct launch *l)
{
    const struct val_kernel *k = &val_kernels[id];
    l->k = k;
    memcpy(l->grid, k->grid, sizeof l->grid);
    for (int i = 0; i < k->pointers; i++)
        l->ptrs[i] = r->buf[val_bindings[id][i]];
    for (int i = 0; i < k->nints; i++)
        l->ints[i] = k->ints[i];
    if (id == VK_L2_READ) {
        l->grid[0] = r->l2_blocks;
        l->ints[1] = r->l2_nvec;
    }
    int n = 0;
    for (int i = 0; i < k->pointers; i++)
        l->params[n++] = &l->ptrs[i];
    for (int i = 0; i < k->nints; i++)
        l->params[n++] = &l->ints[i];
}

static int launch(struct vrun *r, const struct launch *l, int times, char *err, size_t errlen)
{
    const struct val_kernel *k = l->k;
    for (int i = 0; i < times; i++)
        if (gpu_check(&r->g, r->g.cu->cuLaunchKernel(l->fn, l->grid[0], l->grid[1], l->grid[2],
                                                     k->block[0], k->block[1], k->block[2], 0,
                                                     NULL, (void **)l->params, NULL),
                      "cuLaunchKernel", err, errlen) < 0)
            return -1;
    return gpu_check(&r->g, r->g.cu->cuCtxSynchronize(), "kernel execution", err, errlen);
}

/* The checked words of the output zeroed, one launch, the words read back
 * and compared with the answer (validation_data.h). */
static int checked_launch(struct vrun *r, enum val_kernel_id id, const struct launch *l,
                          char *err, size_t errlen)
{
    size_t n = val_check_words(id);
    if (n == 0)
        return launch(r, l, 1, err, errlen);
    uint32_t *got = malloc(n * sizeof *got);
    if (!got) {
        snprintf(err, errlen, "out of memory for the answer's %zu words", n);
        return -1;
    }
    int rc = gpu_check(&r->g, r->g.cu->cuMemsetD32(l->ptrs[0], 0, n), "cuMemsetD32", err,
                       errlen) < 0 ||
                     launch(r, l, 1, err, errlen) < 0 ||
                     gpu_check(&r->g, r->g.cu->cuMemcpyDtoH(got, l->ptrs[0], n * sizeof *got),
                               "cuMemcpyDtoH", err, errlen) < 0 ||
                     val_output_check(id, got, err, errlen) < 0
                 ? -1
                 : 0;
    free(got);
    return rc;
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

/* The integer parameters as launched (the L2 kernel's are the device's). */
static json_t *params_json(const struct val_kernel *k, const struct launch *l)
{
    json_t *o = json_object();
    for (int i = 0; i < k->nints; i++)
        json_object_set_new(o, k->int_names[i], json_integer(l->ints[i]));
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
    bind(r, id, &l);
    char *ptx = val_ptx(id, r->g.info.cc_major, r->g.info.cc_minor);
    json_t *o = json_pack("{s:s, s:s, s:s, s:o, s:o, s:i, s:i, s:o}", "name", k->name, "character",
                          k->character, "entry", k->entry, "grid", shape_json(l.grid), "block",
                          shape_json(k->block), "smem", 0, "launches", k->launches, "params",
                          params_json(k, &l));
    if (!ptx) {
        json_object_set_new(o, "measured_s", error_json("out of memory"));
        return o;
    }
    json_object_set_new(o, "ptx", json_string(ptx));
    snprintf(name, sizeof name, "validation_%s", k->name);
    json_t *measured = NULL;
    if (gpu_module_build(&r->g, ptx, name, &m, err, sizeof err) == 0) {
        if (gpu_module_function(&r->g, &m, k->entry, &l.fn, err, sizeof err) == 0) {
            attrs_json(r, l.fn, o);
            if (checked_launch(r, id, &l, err, sizeof err) == 0)
                measured = time_kernel(r, &l, err, sizeof err);
        }
        gpu_module_free(&r->g, &m);
    }
    free(ptx);
    json_object_set_new(o, "measured_s", measured ? measured : error_json(err));
    return o;
}

/* ---- bandwidth --------------------------------------------------------------------- */

/* Bytes/s of read-only kernel id, `bytes` a launch, from its timed runs;
 * the kernel's error when it failed. */
static json_t *read_bandwidth(struct vrun *r, enum val_kernel_id id, double bytes,
                              const char *method)
{
    json_t *t = run_kernel(r, id);
    const json_t *s = json_object_get(t, "measured_s");
    json_t *out;
    if (json_object_get(s, "error")) {
        out = json_incref((json_t *)s);
    } else {
        size_t i, n = json_array_size(json_object_get(s, "runs"));
        double *bw = calloc(n ? n : 1, sizeof *bw);
        json_t *v;
        if (bw)
            json_array_foreach(json_object_get(s, "runs"), i, v)
                bw[i] = bytes / json_real_value(v);
        out = bw ? spread_json(bw, n) : error_json("out of memory");
        free(bw);
        json_object_set_new(out, "bytes", json_real(bytes));
        json_object_set_new(out, "method", json_string(method));
    }
    json_decref(t);
    return out;
}

static json_t *dram_bandwidth(struct vrun *r)
{
    const struct val_kernel *k = &val_kernels[VK_BW_READ];
    return read_bandwidth(r, VK_BW_READ,
                          (double)k->grid[0] * k->block[0] * VAL_BW_ITERS * VEC_BYTES,
                          k->character);
}

/* The L2 kernel's footprint (a quarter of the L2, in 16-byte vectors) and
 * grid (at most one thread a vector, so its index wraps with one
 * subtraction); 0 when the L2 is too small for a block. */
static void l2_geometry(struct vrun *r)
{
    const unsigned block = val_kernels[VK_L2_READ].block[0];
    r->l2_nvec = r->g.info.l2_bytes > 0 ? (unsigned)r->g.info.l2_bytes / L2_SHARE / VEC_BYTES : 0;
    r->l2_blocks = r->l2_nvec / block < VAL_L2_BLOCKS ? r->l2_nvec / block : VAL_L2_BLOCKS;
}

static json_t *l2_bandwidth(struct vrun *r)
{
    char method[320];
    const unsigned block = val_kernels[VK_L2_READ].block[0];
    double threads = (double)r->l2_blocks * block, footprint = (double)r->l2_nvec * VEC_BYTES;
    if (r->l2_blocks == 0)
        return error_json("the device reports no L2 size, or one too small to measure");
    double bytes = threads * VAL_L2_ITERS * VEC_BYTES;
    snprintf(method, sizeof method,
             "read-only: 16-byte coalesced L2-only loads (ld.global.cg) by %.0f threads "
             "re-reading %.0f bytes (a quarter of the %d-byte L2) %.0f times a launch, after a "
             "warm-up launch",
             threads, footprint, r->g.info.l2_bytes, bytes / footprint);
    json_t *j = read_bandwidth(r, VK_L2_READ, bytes, method);
    if (!json_object_get(j, "error"))
        json_object_set_new(j, "footprint_bytes", json_real(footprint));
    return j;
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
        ok = gpu_check(&r->g, r->g.cu->cuMemcpyHtoD(r->buf[VB_OUT], host, LINK_BYTES),
                       "cuMemcpyHtoD", err, sizeof err) == 0 &&
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
    l2_geometry(r);
    json_t *bw = json_pack("{s:o}", "dram_bytes_per_s", dram_bandwidth(r));
    json_object_set_new(bw, "l2_bytes_per_s", l2_bandwidth(r));
    json_object_set_new(bw, "link_bytes_per_s", link_bandwidth(r));
    size_t fetch = 0; /* the least a device-memory access moves, as the driver says */
    if (r->g.cu->cuCtxGetLimit &&
        r->g.cu->cuCtxGetLimit(&fetch, CU_LIMIT_MAX_L2_FETCH_GRANULARITY) == CUDA_SUCCESS &&
        fetch > 0 && fetch <= 4096)
        json_object_set_new(bw, "l2_fetch_bytes", json_integer((json_int_t)fetch));
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
