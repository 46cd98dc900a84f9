// The experiments' one way to stop on a CUDA runtime error: the call that
// failed and the runtime's text, exit status 1.
#ifndef GPUPROBE_TESTS_GPU_KERNELS_CHECK_CUH
#define GPUPROBE_TESTS_GPU_KERNELS_CHECK_CUH

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

static void check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

#endif
