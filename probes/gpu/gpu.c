/*
 * Device, context and PTX modules (see gpu.h).
 */
#include "probes/gpu/gpu.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

int gpu_check(const struct gpu *g, CUresult rc, const char *what, char *err, size_t errlen)
{
    if (rc == CUDA_SUCCESS)
        return 0;
    char text[256];
    cuda_error_text(g->cu, rc, text, sizeof text);
    snprintf(err, errlen, "%s: %s", what, text);
    return -1;
}

/* Finds the inventory entry for a UUID or an index. */
static int pick_device(const struct gpu_inventory *inv, const char *device, char *err,
                       size_t errlen)
{
    char *end;
    long idx = strtol(device, &end, 10);
    for (size_t i = 0; i < inv->count; i++)
        if (strcmp(inv->devices[i].uuid, device) == 0 || (*end == '\0' && end != device &&
                                                          inv->devices[i].index == idx))
            return (int)i;
    if (inv->count == 0)
        snprintf(err, errlen, "no GPU: %s", inv->reason);
    else
        snprintf(err, errlen, "no attached GPU is '%s' (%zu attached)", device, inv->count);
    return -1;
}

int gpu_open(struct gpu *g, const char *device, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    struct gpu_inventory inv;
    if (gpu_discover(&inv) < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int i = pick_device(&inv, device, err, errlen);
    if (i >= 0) {
        g->info = inv.devices[i];
        snprintf(g->driver_version, sizeof g->driver_version, "%s", inv.driver_version);
        g->cuda_driver_version = inv.cuda_driver_version;
    }
    gpu_inventory_free(&inv);
    if (i < 0)
        return -1;
    char why[256];
    g->cu = cuda_load(why, sizeof why); /* loaded and initialised by discovery */
    if (!g->cu) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    const char *keep = getenv("GPUPROBE_CUBIN_DIR");
    snprintf(g->keep_dir, sizeof g->keep_dir, "%s", keep ? keep : "");
    if (gpu_check(g, g->cu->cuDeviceGet(&g->dev, g->info.index), "cuDeviceGet", err, errlen) < 0 ||
        gpu_check(g, g->cu->cuDevicePrimaryCtxRetain(&g->ctx, g->dev), "cuDevicePrimaryCtxRetain",
                  err, errlen) < 0)
        return -1;
    return gpu_check(g, g->cu->cuCtxSetCurrent(g->ctx), "cuCtxSetCurrent", err, errlen);
}

json_t *gpu_json(const struct gpu *g)
{
    struct gpu_inventory inv = {.cuda_driver_version = g->cuda_driver_version, .count = 0};
    snprintf(inv.driver_version, sizeof inv.driver_version, "%s", g->driver_version);
    return gpu_device_to_json(&g->info, &inv);
}

void gpu_close(struct gpu *g)
{
    if (g->cu && g->ctx) {
        g->cu->cuCtxSetCurrent(NULL);
        g->cu->cuDevicePrimaryCtxRelease(g->dev);
    }
    g->ctx = NULL;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Runs the JIT linker over one PTX input; on success *cubin is a malloc'd copy. */
static int jit_link(struct gpu *g, const char *ptx, struct gpu_module *m, char *err,
                    size_t errlen)
{
    char errlog[2048] = "";
    int opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                  CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                  CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_LOG_VERBOSE};
    void *vals[] = {m->log, (void *)(size_t)sizeof m->log, errlog, (void *)(size_t)sizeof errlog,
                    (void *)(size_t)4, (void *)(size_t)1};
    CUlinkState st = NULL;
    void *out = NULL;
    size_t size = 0;
    double t0 = now_ms();
    int rc = gpu_check(g, g->cu->cuLinkCreate(6, opts, vals, &st), "cuLinkCreate", err, errlen);
    if (rc == 0)
        rc = gpu_check(g, g->cu->cuLinkAddData(st, CU_JIT_INPUT_PTX, (void *)ptx, strlen(ptx) + 1,
                                               "probe.ptx", 0, NULL, NULL),
                       "compiling PTX", err, errlen);
    if (rc == 0)
        rc = gpu_check(g, g->cu->cuLinkComplete(st, &out, &size), "cuLinkComplete", err, errlen);
    if (rc == 0 && !(m->cubin = malloc(size)))
        rc = -1, snprintf(err, errlen, "out of memory");
    if (rc == 0) {
        memcpy(m->cubin, out, size); /* the linker owns `out` until cuLinkDestroy */
        m->cubin_size = size;
    } else if (errlog[0]) {
        size_t n = strlen(err);
        snprintf(err + n, errlen - n, " (%.300s)", errlog);
    }
    if (st)
        g->cu->cuLinkDestroy(st);
    m->jit_ms = now_ms() - t0;
    return rc;
}

/* Creates dir and its parents, like mkdir -p. */
static int make_dirs(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s", dir);
    for (char *p = path + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(path, 0750) < 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(path, 0750) < 0 && errno != EEXIST ? -1 : 0;
}

static int write_file(const char *dir, const char *name, const char *ext, const void *data,
                      size_t len, char *err, size_t errlen)
{
    char path[1400];
    snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext);
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(data, 1, len, f) == len;
    if (f && fclose(f) != 0)
        ok = 0;
    if (!ok)
        snprintf(err, errlen, "cannot keep %.1000s: %s", path, strerror(errno));
    return ok ? 0 : -1;
}

/* Keeps the module's PTX and cubin for inspection, if asked to. */
static int keep_module(const struct gpu *g, const char *name, const char *ptx,
                       const struct gpu_module *m, char *err, size_t errlen)
{
    if (!g->keep_dir[0])
        return 0;
    if (make_dirs(g->keep_dir) < 0) {
        snprintf(err, errlen, "cannot create %.900s: %s", g->keep_dir, strerror(errno));
        return -1;
    }
    if (write_file(g->keep_dir, name, "ptx", ptx, strlen(ptx), err, errlen) < 0)
        return -1;
    return write_file(g->keep_dir, name, "cubin", m->cubin, m->cubin_size, err, errlen);
}

int gpu_module_build(struct gpu *g, const char *ptx, const char *name, struct gpu_module *m,
                     char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (jit_link(g, ptx, m, err, errlen) < 0 || keep_module(g, name, ptx, m, err, errlen) < 0 ||
        gpu_check(g, g->cu->cuModuleLoadData(&m->mod, m->cubin), "cuModuleLoadData", err,
                  errlen) < 0) {
        gpu_module_free(g, m);
        return -1;
    }
    return 0;
}

int gpu_module_build_generated(struct gpu *g, char *ptx, const char *name, struct gpu_module *m,
                               char *err, size_t errlen)
{
    if (!ptx) {
        memset(m, 0, sizeof *m);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = gpu_module_build(g, ptx, name, m, err, errlen);
    free(ptx);
    return rc;
}

int gpu_module_function(struct gpu *g, struct gpu_module *m, const char *kernel, CUfunction *fn,
                        char *err, size_t errlen)
{
    char what[160];
    snprintf(what, sizeof what, "cuModuleGetFunction(%.100s)", kernel);
    return gpu_check(g, g->cu->cuModuleGetFunction(fn, m->mod, kernel), what, err, errlen);
}

void gpu_module_free(struct gpu *g, struct gpu_module *m)
{
    if (m->mod)
        g->cu->cuModuleUnload(m->mod);
    free(m->cubin);
    memset(m, 0, sizeof *m);
}

void gpu_free_buffers(struct gpu *g, CUdeviceptr *const bufs[], size_t n)
{
    assert(g != NULL && (bufs != NULL || n == 0));
    for (size_t i = 0; i < n; i++)
        if (*bufs[i]) {
            g->cu->cuMemFree(*bufs[i]);
            *bufs[i] = 0;
        }
}

int gpu_launch(struct gpu *g, CUfunction fn, unsigned grid, unsigned block, unsigned smem,
               void **params, char *err, size_t errlen)
{
    if (gpu_check(g, g->cu->cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, smem, NULL, params, NULL),
                  "cuLaunchKernel", err, errlen) < 0)
        return -1;
    return gpu_check(g, g->cu->cuCtxSynchronize(), "kernel execution", err, errlen);
}

int gpu_module_load_image(struct gpu *g, const void *cubin, size_t size, struct gpu_module *m,
                          char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (!(m->cubin = malloc(size ? size : 1))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(m->cubin, cubin, size);
    m->cubin_size = size;
    if (gpu_check(g, g->cu->cuModuleLoadData(&m->mod, m->cubin), "cuModuleLoadData (image)", err,
                  errlen) < 0) {
        free(m->cubin);
        memset(m, 0, sizeof *m);
        return -1;
    }
    return 0;
}
