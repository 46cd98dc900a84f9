/*
 * A probe's patch-and-run session on a stamped FFMA kernel (see banks.h):
 * what the bank probe and the dual-issue probe both hold while they time
 * patched copies of one compiled kernel.
 *
 * DESIGN
 * Both probes compile one kernel of a struct banks_shape, then, for every
 * test, patch a copy of its cubin, load the copy and launch it on one
 * block per SM with the same three buffers (stamps, inputs, results).
 * That common part opens and closes here, once; what differs (the layout
 * each reads from the cubin, its edit lists, its per-test figures) stays
 * in each probe's run. Open zeroes the session before anything can fail,
 * and close releases only what was acquired, so close is the one way out
 * after a failed open, a successful one, or none at all on a zeroed
 * session.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/banks.h"

/* The inputs the kernel loads: value k is 1 + k/1024 (no FFMA overflows). */
static int fill_inputs(struct banks_session *S, int values, char *err, size_t errlen)
{
    size_t bytes = sizeof(float) * (size_t)values;
    float *vals = malloc(bytes);
    if (!vals) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int k = 0; k < values; k++)
        vals[k] = 1.0f + (float)k / 1024.0f;
    int rc = gpu_check(&S->g, S->g.cu->cuMemAlloc(&S->in, bytes), "cuMemAlloc", err, errlen) < 0 ||
                     gpu_check(&S->g, S->g.cu->cuMemcpyHtoD(S->in, vals, bytes), "cuMemcpyHtoD",
                               err, errlen) < 0
                 ? -1
                 : 0;
    free(vals);
    return rc;
}

int banks_session_open(struct banks_session *S, const char *device, const struct banks_shape *s,
                       char *err, size_t errlen)
{
    assert(S != NULL && device != NULL && s != NULL);
    memset(S, 0, sizeof *S);
    if (gpu_open(&S->g, device, err, errlen) < 0 ||
        gpu_module_build_generated(&S->g,
                                   banks_ptx_shape(s, S->g.info.cc_major, S->g.info.cc_minor),
                                   s->kernel, &S->base, err, errlen) < 0)
        return -1;
    S->blocks = (unsigned)S->g.info.sm_count;
    if (!(S->copy = malloc(S->base.cubin_size))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t sink = (size_t)S->blocks * (size_t)s->threads * 4;
    const struct cuda_api *cu = S->g.cu;
    return fill_inputs(S, s->values, err, errlen) < 0 ||
                   gpu_check(&S->g, cu->cuMemAlloc(&S->out, (size_t)S->blocks * PATCH_STAMP_BYTES),
                             "cuMemAlloc", err, errlen) < 0 ||
                   gpu_check(&S->g, cu->cuMemAlloc(&S->sink, sink), "cuMemAlloc", err, errlen) < 0
               ? -1
               : 0;
}

void banks_session_close(struct banks_session *S)
{
    CUdeviceptr *bufs[] = {&S->in, &S->out, &S->sink};
    gpu_free_buffers(&S->g, bufs, sizeof bufs / sizeof bufs[0]);
    gpu_module_free(&S->g, &S->base);
    free(S->copy);
    gpu_close(&S->g);
    memset(S, 0, sizeof *S);
}
