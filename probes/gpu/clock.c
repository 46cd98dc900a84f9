/*
 * SM clock measurement (see clock.h). 20 M cycles is about 10 ms at 2 GHz:
 * long against %globaltimer's update interval (about a microsecond), short
 * against a probe.
 */
#include "probes/gpu/clock.h"

#include <stdlib.h>

#include "probes/gpu/ptx.h"

#define SPIN_CYCLES 20000000ULL

static char *clock_ptx(const struct gpu *g)
{
    struct ptx p;
    ptx_init(&p);
    ptx_header(&p, g->info.cc_major, g->info.cc_minor);
    ptx_add(&p, ".visible .entry clk(.param .u64 p_out, .param .u64 p_cycles)\n{\n"
                "\t.reg .pred %%p;\n\t.reg .u64 %%out, %%n, %%c0, %%c1, %%g0, %%g1, %%d;\n"
                "\tld.param.u64 %%out, [p_out];\n\tcvta.to.global.u64 %%out, %%out;\n"
                "\tld.param.u64 %%n, [p_cycles];\n"
                "\tmov.u64 %%g0, %%globaltimer;\n\tmov.u64 %%c0, %%clock64;\n"
                "$L_spin:\n\tmov.u64 %%c1, %%clock64;\n\tsub.u64 %%d, %%c1, %%c0;\n"
                "\tsetp.lt.u64 %%p, %%d, %%n;\n\t@%%p bra $L_spin;\n"
                "\tmov.u64 %%g1, %%globaltimer;\n"
                "\tsub.u64 %%d, %%c1, %%c0;\n\tst.global.u64 [%%out], %%d;\n"
                "\tsub.u64 %%d, %%g1, %%g0;\n\tst.global.u64 [%%out+8], %%d;\n\tret;\n}\n");
    return ptx_take(&p);
}

int gpu_clock_mhz(struct gpu *g, double *mhz, char *err, size_t errlen)
{
    struct gpu_module m;
    CUfunction fn;
    CUdeviceptr out = 0;
    unsigned long long host[2] = {0, 0}, cycles = SPIN_CYCLES;
    char *ptx = clock_ptx(g);
    int rc = -1;
    if (!ptx)
        return -1;
    if (gpu_module_build(g, ptx, "clock", &m, err, errlen) == 0) {
        void *params[] = {&out, &cycles};
        if (gpu_module_function(g, &m, "clk", &fn, err, errlen) == 0 &&
            gpu_check(g, g->cu->cuMemAlloc(&out, sizeof host), "cuMemAlloc", err, errlen) == 0 &&
            gpu_launch(g, fn, 1, 1, 0, params, err, errlen) == 0 &&
            gpu_check(g, g->cu->cuMemcpyDtoH(host, out, sizeof host), "cuMemcpyDtoH", err,
                      errlen) == 0)
            rc = 0;
        gpu_module_free(g, &m);
    }
    if (out)
        g->cu->cuMemFree(out);
    free(ptx);
    if (rc == 0 && host[1] == 0) {
        snprintf(err, errlen, "%%globaltimer did not advance");
        rc = -1;
    }
    if (rc == 0)
        *mhz = (double)host[0] / (double)host[1] * 1000.0;
    return rc;
}
