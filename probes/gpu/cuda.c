/*
 * Run-time loading of the CUDA Driver API (see cuda.h for the contract).
 *
 * DESIGN
 * One static table of {symbol name, offset of the slot in struct cuda_api,
 * required?} drives the loading: cuda_load() dlopens the library once
 * (pthread_once) and fills every slot with dlsym. Where the ABI versions an
 * entry point (cuda.h #defines cuDeviceTotalMem to cuDeviceTotalMem_v2 and so
 * on) the table names the versioned symbol, since that is what a program built
 * against the toolkit would call. A missing library or a missing required
 * symbol leaves the table unpublished and stores the reason; every later call
 * returns the same NULL and the same reason. The library handle is never
 * closed: the table points into it for the life of the process.
 *
 * The error-text functions are optional: cuda_error_text() falls back to
 * "CUDA error N" without them, and also when no table is given.
 */
#include "probes/gpu/cuda.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_LIBCUDA "libcuda.so.1"

struct cuda_symbol {
    const char *name;   /* exported name, versioned where the ABI is */
    size_t offset;      /* slot in struct cuda_api */
    int required;
};

static const struct cuda_symbol symbols[] = {
    { "cuInit", offsetof(struct cuda_api, cuInit), 1 },
    { "cuDriverGetVersion", offsetof(struct cuda_api, cuDriverGetVersion), 1 },
    { "cuDeviceGetCount", offsetof(struct cuda_api, cuDeviceGetCount), 1 },
    { "cuDeviceGet", offsetof(struct cuda_api, cuDeviceGet), 1 },
    { "cuDeviceGetName", offsetof(struct cuda_api, cuDeviceGetName), 1 },
    { "cuDeviceGetUuid_v2", offsetof(struct cuda_api, cuDeviceGetUuid), 1 },
    { "cuDeviceTotalMem_v2", offsetof(struct cuda_api, cuDeviceTotalMem), 1 },
    { "cuDeviceGetAttribute", offsetof(struct cuda_api, cuDeviceGetAttribute), 1 },
    { "cuGetErrorName", offsetof(struct cuda_api, cuGetErrorName), 0 },
    { "cuGetErrorString", offsetof(struct cuda_api, cuGetErrorString), 0 },
    { "cuDevicePrimaryCtxRetain", offsetof(struct cuda_api, cuDevicePrimaryCtxRetain), 1 },
    { "cuDevicePrimaryCtxRelease_v2", offsetof(struct cuda_api, cuDevicePrimaryCtxRelease), 1 },
    { "cuCtxSetCurrent", offsetof(struct cuda_api, cuCtxSetCurrent), 1 },
    { "cuCtxSynchronize", offsetof(struct cuda_api, cuCtxSynchronize), 1 },
    { "cuCtxGetLimit", offsetof(struct cuda_api, cuCtxGetLimit), 0 },
    { "cuLinkCreate_v2", offsetof(struct cuda_api, cuLinkCreate), 1 },
    { "cuLinkAddData_v2", offsetof(struct cuda_api, cuLinkAddData), 1 },
    { "cuLinkComplete", offsetof(struct cuda_api, cuLinkComplete), 1 },
    { "cuLinkDestroy", offsetof(struct cuda_api, cuLinkDestroy), 1 },
    { "cuModuleLoadData", offsetof(struct cuda_api, cuModuleLoadData), 1 },
    { "cuModuleUnload", offsetof(struct cuda_api, cuModuleUnload), 1 },
    { "cuModuleGetFunction", offsetof(struct cuda_api, cuModuleGetFunction), 1 },
    { "cuFuncGetAttribute", offsetof(struct cuda_api, cuFuncGetAttribute), 1 },
    { "cuFuncSetAttribute", offsetof(struct cuda_api, cuFuncSetAttribute), 1 },
    { "cuLaunchKernel", offsetof(struct cuda_api, cuLaunchKernel), 1 },
    { "cuMemAlloc_v2", offsetof(struct cuda_api, cuMemAlloc), 1 },
    { "cuMemFree_v2", offsetof(struct cuda_api, cuMemFree), 1 },
    { "cuMemcpyHtoD_v2", offsetof(struct cuda_api, cuMemcpyHtoD), 1 },
    { "cuMemcpyDtoH_v2", offsetof(struct cuda_api, cuMemcpyDtoH), 1 },
    { "cuMemsetD32_v2", offsetof(struct cuda_api, cuMemsetD32), 1 },
    { "cuOccupancyMaxActiveBlocksPerMultiprocessor",
      offsetof(struct cuda_api, cuOccupancyMaxActiveBlocksPerMultiprocessor), 1 },
    { "cuLaunchKernelEx", offsetof(struct cuda_api, cuLaunchKernelEx), 0 },
    { "cuOccupancyMaxActiveClusters", offsetof(struct cuda_api, cuOccupancyMaxActiveClusters), 0 },
    { "cuTensorMapEncodeTiled", offsetof(struct cuda_api, cuTensorMapEncodeTiled), 0 },
};

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static struct cuda_api table;
static const struct cuda_api *loaded;      /* &table once complete, else NULL */
static char load_reason[512];

/* Stores one resolved symbol into its slot. The function pointer is copied
 * bytewise: ISO C has no conversion from void * to a function pointer, and
 * POSIX guarantees the representations agree. */
static void store_symbol(const struct cuda_symbol *s, void *addr)
{
    void (*fn)(void);

    memcpy(&fn, &addr, sizeof fn);
    memcpy((char *)&table + s->offset, &fn, sizeof fn);
}

/* Resolves every entry of symbols[]; 0, or -1 with load_reason set. */
static int resolve_all(void *lib, const char *path)
{
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        dlerror();
        void *addr = dlsym(lib, symbols[i].name);
        if (addr == NULL && symbols[i].required) {
            const char *e = dlerror();
            snprintf(load_reason, sizeof load_reason, "%s lacks %s: %s", path,
                     symbols[i].name, e != NULL ? e : "symbol is NULL");
            return -1;
        }
        if (addr != NULL)
            store_symbol(&symbols[i], addr);
    }
    return 0;
}

static void load(void)
{
    const char *path = getenv("GPUPROBE_LIBCUDA");

    if (path == NULL || path[0] == '\0')
        path = DEFAULT_LIBCUDA;
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *e = dlerror();
        snprintf(load_reason, sizeof load_reason, "%s not found (no NVIDIA driver): %s", path,
                 e != NULL ? e : "dlopen failed");
        return;
    }
    if (resolve_all(lib, path) != 0) {
        memset(&table, 0, sizeof table);
        dlclose(lib);
        return;
    }
    loaded = &table;
}

const struct cuda_api *cuda_load(char *why, size_t whylen)
{
    pthread_once(&load_once, load);
    if (loaded == NULL && why != NULL && whylen > 0)
        snprintf(why, whylen, "%s", load_reason);
    return loaded;
}

void cuda_error_text(const struct cuda_api *api, CUresult rc, char *buf, size_t len)
{
    const char *name = NULL, *text = NULL;

    if (buf == NULL || len == 0)
        return;
    if (api != NULL && api->cuGetErrorName != NULL &&
        api->cuGetErrorName(rc, &name) != CUDA_SUCCESS)
        name = NULL;
    if (api != NULL && api->cuGetErrorString != NULL &&
        api->cuGetErrorString(rc, &text) != CUDA_SUCCESS)
        text = NULL;
    if (name != NULL && text != NULL)
        snprintf(buf, len, "%s: %s", name, text);
    else if (name != NULL)
        snprintf(buf, len, "%s", name);
    else if (text != NULL)
        snprintf(buf, len, "CUDA error %d: %s", rc, text);
    else
        snprintf(buf, len, "CUDA error %d", rc);
}
