/*
 * The CUDA Driver API, loaded at run time.
 *
 * DESIGN
 * gpuprobe never links libcuda: a machine without an NVIDIA driver must still
 * run the daemon, the trace service and the model. cuda_load() dlopens
 * libcuda.so.1 once and resolves every entry point gpuprobe uses into one
 * table; a missing library or symbol is reported as a reason string, never a
 * crash. Types and constants are declared here from the Driver API's published
 * ABI (cuda.h), so building gpuprobe needs no CUDA toolkit either.
 *
 * The table is filled once and read-only afterwards; cuda_load() is
 * thread-safe. The daemon itself never calls it: only worker processes and the
 * local command line touch the GPU.
 */
#ifndef GPUPROBE_PROBES_GPU_CUDA_H
#define GPUPROBE_PROBES_GPU_CUDA_H

#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct { unsigned char bytes[16]; } CUuuid;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUlinkState_st *CUlinkState;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr;

/* CUjit_option values used by the JIT linker (probes/jit.c). */
enum {
    CU_JIT_WALL_TIME = 2,
    CU_JIT_INFO_LOG_BUFFER = 3,
    CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    CU_JIT_ERROR_LOG_BUFFER = 5,
    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
    CU_JIT_OPTIMIZATION_LEVEL = 7,
    CU_JIT_LOG_VERBOSE = 12,
};
/* CUjitInputType */
enum { CU_JIT_INPUT_CUBIN = 0, CU_JIT_INPUT_PTX = 1 };
/* CUfunction_attribute */
enum {
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
    CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
};

/* More CUfunction_attribute values (the occupancy capture sets and reads them). */
enum {
    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
    CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9,
};

/* Thread-block clusters (cuda.h's CUfunction_attribute and CUlaunchAttributeID
 * values; the distributed-shared-memory probe, probes/dsmem.h). */
enum {
    CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH = 11,
    CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT = 12,
    CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH = 13,
    CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14,
};
#define CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION 4

/* cuda.h's CUlaunchAttribute: the id, padding to 8 bytes, and a 64-byte
 * value union of which gpuprobe uses the cluster dimension. */
typedef struct {
    int id;
    char pad[4];
    union {
        char pad[64];
        unsigned long long align;   /* the real union holds pointers and size_t */
        struct { unsigned x, y, z; } cluster_dim;
    } value;
} CUlaunchAttribute;

/* cuda.h's CUlaunchConfig (cuLaunchKernelEx, cuOccupancyMaxActiveClusters). */
typedef struct {
    unsigned gridDimX, gridDimY, gridDimZ;
    unsigned blockDimX, blockDimY, blockDimZ;
    unsigned sharedMemBytes;
    CUstream hStream;
    CUlaunchAttribute *attrs;
    unsigned numAttrs;
} CUlaunchConfig;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1      /* e.g. an attribute this driver does not know */
#define CUDA_ERROR_NO_DEVICE 100

/* Device attributes used by discovery (values of CUdevice_attribute). */
enum {
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
    CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK = 12,
    CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_ECC_ENABLED = 32,
    CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
    CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
    CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
    CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
    CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
    CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
    CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR = 82,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR = 106,
    CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK = 111,
};

/* A TMA tensor map (cuda.h's CUtensorMap: 16 opaque 64-bit words, 64-byte
 * aligned at least; the kernel takes it by value as a 128-byte .param) and
 * the cuTensorMapEncodeTiled enum values the async-copy probe uses. */
typedef struct {
    _Alignas(128) unsigned long long opaque[16];
} CUtensorMap;
#define CU_TENSOR_MAP_DATA_TYPE_UINT32 2
#define CU_TENSOR_MAP_INTERLEAVE_NONE 0
#define CU_TENSOR_MAP_SWIZZLE_NONE 0
#define CU_TENSOR_MAP_L2_PROMOTION_NONE 0
#define CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE 0

/* One entry per Driver API function gpuprobe calls. Later probes add theirs. */
/* cuCtxGetLimit's limit: the L2's fetch granularity, bytes (cuda.h's CUlimit) */
#define CU_LIMIT_MAX_L2_FETCH_GRANULARITY 0x05

struct cuda_api {
    CUresult (*cuInit)(unsigned int flags);
    CUresult (*cuDriverGetVersion)(int *version);
    CUresult (*cuDeviceGetCount)(int *count);
    CUresult (*cuDeviceGet)(CUdevice *dev, int ordinal);
    CUresult (*cuDeviceGetName)(char *name, int len, CUdevice dev);
    CUresult (*cuDeviceGetUuid)(CUuuid *uuid, CUdevice dev);          /* _v2 */
    CUresult (*cuDeviceTotalMem)(size_t *bytes, CUdevice dev);        /* _v2 */
    CUresult (*cuDeviceGetAttribute)(int *value, int attrib, CUdevice dev);
    CUresult (*cuGetErrorName)(CUresult err, const char **name);
    CUresult (*cuGetErrorString)(CUresult err, const char **str);
    /* contexts */
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
    CUresult (*cuDevicePrimaryCtxRelease)(CUdevice dev);                 /* _v2 */
    CUresult (*cuCtxSetCurrent)(CUcontext ctx);
    CUresult (*cuCtxSynchronize)(void);
    CUresult (*cuCtxGetLimit)(size_t *value, int limit);   /* optional: NULL if absent */
    /* compiling PTX in process, and loading the result */
    CUresult (*cuLinkCreate)(unsigned n, int *opts, void **vals, CUlinkState *st);  /* _v2 */
    CUresult (*cuLinkAddData)(CUlinkState st, int type, void *data, size_t size,
                              const char *name, unsigned n, int *opts, void **vals); /* _v2 */
    CUresult (*cuLinkComplete)(CUlinkState st, void **cubin, size_t *size);
    CUresult (*cuLinkDestroy)(CUlinkState st);
    CUresult (*cuModuleLoadData)(CUmodule *mod, const void *image);
    CUresult (*cuModuleUnload)(CUmodule mod);
    CUresult (*cuModuleGetFunction)(CUfunction *fn, CUmodule mod, const char *name);
    CUresult (*cuFuncGetAttribute)(int *value, int attrib, CUfunction fn);
    CUresult (*cuFuncSetAttribute)(CUfunction fn, int attrib, int value);
    CUresult (*cuLaunchKernel)(CUfunction fn, unsigned gx, unsigned gy, unsigned gz,
                               unsigned bx, unsigned by, unsigned bz, unsigned smem,
                               CUstream stream, void **params, void **extra);
    /* memory */
    CUresult (*cuMemAlloc)(CUdeviceptr *ptr, size_t bytes);                 /* _v2 */
    CUresult (*cuMemFree)(CUdeviceptr ptr);                                 /* _v2 */
    CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes); /* _v2 */
    CUresult (*cuMemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);     /* _v2 */
    CUresult (*cuMemsetD32)(CUdeviceptr dst, unsigned value, size_t count);  /* _v2 */
    /* occupancy (model/occupancy.h is checked against it) */
    CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *blocks, CUfunction fn,
                                                            int block_size, size_t dyn_smem);
    /* clusters (CUDA 12.0 and later; optional: NULL if absent, and the
     * distributed-shared-memory probe says so) */
    CUresult (*cuLaunchKernelEx)(const CUlaunchConfig *config, CUfunction fn, void **params,
                                 void **extra);
    CUresult (*cuOccupancyMaxActiveClusters)(int *clusters, CUfunction fn,
                                             const CUlaunchConfig *config);

    /* TMA descriptors (CUDA 12.0+; optional: NULL if absent, and the
     * async-copy probe's tensor rows say so) */
    CUresult (*cuTensorMapEncodeTiled)(CUtensorMap *map, int dtype, unsigned rank, void *addr,
                                       const unsigned long long *dims,
                                       const unsigned long long *strides, const unsigned *box,
                                       const unsigned *elem_strides, int interleave, int swizzle,
                                       int l2promotion, int oobfill);
};

/* Loads the driver (once) and returns its table, or NULL with the reason in
 * why (e.g. "libcuda.so.1 not found: ..."). The library path can be
 * overridden with the environment variable GPUPROBE_LIBCUDA (for tests). */
const struct cuda_api *cuda_load(char *why, size_t whylen);

/* "CUDA_ERROR_X: description" for a result code, using the table if loaded. */
void cuda_error_text(const struct cuda_api *api, CUresult rc, char *buf, size_t len);

#endif
