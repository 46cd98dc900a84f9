/*
 * The local ptxas, for unit tests that compile the PTX a generator writes
 * and check the machine code (tests/unit/test_memory_ptx.c, test_dsmem.c).
 *
 * DESIGN
 * ptxas is optional on a test machine (CI has no CUDA): ptxas_find says
 * where it is ($PTXAS, else /usr/local/cuda/bin/ptxas) or NULL, and the
 * test skips with a message; the committed cubins cover the check there.
 */
#ifndef GPUPROBE_TESTS_UNIT_SUPPORT_PTXAS_H
#define GPUPROBE_TESTS_UNIT_SUPPORT_PTXAS_H

/* The executable ptxas, or NULL when there is none. */
const char *ptxas_find(void);

/* ptxas -arch=sm_90 -O3 in -o out; its exit status, -1 if it did not run. */
int ptxas_run(const char *ptxas, const char *in, const char *out);

#endif
