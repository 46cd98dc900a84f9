/*
 * A probe's hold on one GPU: the device, its primary context, and modules
 * compiled from PTX in this process.
 *
 * DESIGN
 * PTX is compiled through the Driver API's JIT linker (cuLink*), never by a
 * toolkit binary, so a GPU node needs only its driver. The cubin the driver
 * produced is copied out and kept with the module: probes read their own
 * machine code from it before trusting a timing (probes/gpu/sass.h), and it can
 * be saved for inspection. Every CUDA error becomes a one-line reason naming
 * the call. Only worker processes and the local CLI use this.
 */
#ifndef GPUPROBE_PROBES_GPU_GPU_H
#define GPUPROBE_PROBES_GPU_GPU_H

#include <stddef.h>

#include "probes/gpu/cuda.h"
#include "probes/gpu/devices.h"

struct gpu {
    const struct cuda_api *cu;
    CUdevice dev;
    CUcontext ctx;
    struct gpu_device info;
    char driver_version[32];
    int cuda_driver_version;
    char keep_dir[1024];         /* where modules' PTX and cubins are kept; "" = nowhere */
};

struct gpu_module {
    CUmodule mod;
    void *cubin;                 /* malloc'd copy of what the JIT linker produced */
    size_t cubin_size;
    double jit_ms;
    char log[2048];              /* the JIT's info log (register use etc.) */
};

/* Opens the device named by UUID ("GPU-...") or index ("0"). */
int gpu_open(struct gpu *g, const char *device, char *err, size_t errlen);
void gpu_close(struct gpu *g);

/* The device as `gpuprobe devices` describes it: provenance for results. */
json_t *gpu_json(const struct gpu *g);

/* Compiles ptx (NUL-terminated) for this device and loads it. When the
 * environment names a directory in GPUPROBE_CUBIN_DIR (gpuprobe sets it per
 * job), the PTX and the cubin are also written there as NAME.ptx and
 * NAME.cubin, so what was timed can be disassembled afterwards. 0, or -1
 * with the reason and m empty (nothing to free). */
int gpu_module_build(struct gpu *g, const char *ptx, const char *name, struct gpu_module *m,
                     char *err, size_t errlen);
/* gpu_module_build for the text a PTX generator returned, which is freed
 * here; NULL text (the generator ran out of memory) fails with "out of
 * memory" and m empty. */
int gpu_module_build_generated(struct gpu *g, char *ptx, const char *name, struct gpu_module *m,
                               char *err, size_t errlen);
int gpu_module_function(struct gpu *g, struct gpu_module *m, const char *kernel, CUfunction *fn,
                        char *err, size_t errlen);
void gpu_module_free(struct gpu *g, struct gpu_module *m);

/* Turns a failed call into "what: CUDA_ERROR_X: text"; returns -1 if rc is an
 * error, else 0. For `if (gpu_check(...) < 0) return -1;` chains. */
int gpu_check(const struct gpu *g, CUresult rc, const char *what, char *err, size_t errlen);

/* Frees every buffer of bufs[0..n) that is allocated (not 0) and sets it
 * to 0, so a probe's release frees what its setup got to, however far. */
void gpu_free_buffers(struct gpu *g, CUdeviceptr *const bufs[], size_t n);

/* Launches fn on grid x block with params, waits, and checks for errors. */
int gpu_launch(struct gpu *g, CUfunction fn, unsigned grid, unsigned block, unsigned smem,
               void **params, char *err, size_t errlen);

/* Loads a cubin image that did not come from this process's JIT (e.g. one
 * edited by probes/gpu/patch.h): a copy of size bytes is kept in m->cubin, as
 * gpu_module_build keeps its own, and loaded with cuModuleLoadData. 0, or
 * -1 with "cuModuleLoadData (image): CUDA_ERROR_...: text" and m empty. */
int gpu_module_load_image(struct gpu *g, const void *cubin, size_t size, struct gpu_module *m,
                          char *err, size_t errlen);

#endif
