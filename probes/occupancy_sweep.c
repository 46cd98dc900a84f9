/*
 * The occupancy capture (see occupancy_sweep.h).
 *
 * DESIGN
 * The configurations are tables: the kernels (register target, live
 * values, static shared memory, barrier) and, per pass, the block sizes,
 * dynamic shared sizes and carve-outs to ask about. Passes:
 *   default   the kernel's dynamic-shared maximum left as the driver set it
 *             (before any cuFuncSetAttribute), a few sizes around 48 KiB;
 *   main      maximum raised to opt-in minus static: blocks x sizes;
 *   carveout  as main, for a few kernels, with the preferred carve-out set
 *             to each of several percentages (reset to the default after).
 * The block sizes include sizes that are not multiples of 32 and the
 * shared sizes include sizes that are not multiples of the allocation
 * unit, so the rounding rules are exercised, and sizes past each limit, so
 * the refusals are too.
 */
#include "probes/occupancy_sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probes/gpu/gpu.h"
#include "probes/gpu/ptx.h"
#include "util/clock.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define PASS_DEFAULT 1
#define PASS_MAIN 2
#define PASS_CARVEOUT 4
#define CARVEOUT_UNSET (-1)

struct sweep_kernel {
    const char *name;
    int maxnreg, live, static_smem, barrier, passes;
};

static const struct sweep_kernel kernels[] = {
    {"r12", 255, 1, 0, -1, PASS_DEFAULT | PASS_MAIN},
    {"r16", 255, 4, 0, -1, PASS_DEFAULT | PASS_MAIN},
    {"r24", 24, 24, 0, -1, PASS_DEFAULT | PASS_MAIN},
    {"r32", 32, 32, 0, -1, PASS_DEFAULT | PASS_MAIN | PASS_CARVEOUT},
    {"r33", 33, 33, 0, -1, PASS_DEFAULT | PASS_MAIN},
    {"r40", 40, 40, 0, -1, PASS_DEFAULT | PASS_MAIN},
    {"r48", 48, 48, 0, -1, PASS_DEFAULT | PASS_MAIN},
    {"r56", 56, 56, 0, -1, PASS_DEFAULT | PASS_MAIN},
    {"r64", 64, 64, 0, -1, PASS_DEFAULT | PASS_MAIN | PASS_CARVEOUT},
    {"r72", 72, 72, 0, -1, PASS_DEFAULT | PASS_MAIN},
    {"r80", 80, 80, 0, -1, PASS_DEFAULT | PASS_MAIN},
    {"r96", 96, 96, 0, -1, PASS_DEFAULT | PASS_MAIN},
    {"r128", 128, 128, 0, -1, PASS_DEFAULT | PASS_MAIN | PASS_CARVEOUT},
    {"r168", 168, 168, 0, -1, PASS_DEFAULT | PASS_MAIN},
    {"r200", 200, 200, 0, -1, PASS_DEFAULT | PASS_MAIN},
    {"r255", 255, 255, 0, -1, PASS_DEFAULT | PASS_MAIN},
    {"s4k", 32, 32, 4096, -1, PASS_DEFAULT | PASS_MAIN},
    {"s40k", 32, 32, 40960, -1, PASS_DEFAULT | PASS_MAIN | PASS_CARVEOUT},
    {"bar8", 32, 32, 0, 7, PASS_MAIN},
    {"bar16", 32, 32, 0, 15, PASS_MAIN},
};

static const int main_blocks[] = {32, 33, 64, 100, 128, 192, 256, 320, 512, 640, 768, 1000, 1024};
static const int main_smem[] = {0,     1,     2000,   8192,   20000,  32768,
                                49152, 50000, 80000, 116736, 200000, 232448};
static const int default_blocks[] = {64, 256, 1024};
static const int default_smem[] = {0, 4096, 48000, 49152, 50000};
static const int carve_blocks[] = {32, 128, 256, 1024};
static const int carve_smem[] = {0, 1, 4096, 9000, 20000, 40000, 70000, 100000};
static const int carve_pct[] = {0, 10, 25, 50, 75, 100};

/* ---- the kernels ------------------------------------------------------------ */

static void body_loads(struct ptx *p, int live)
{
    for (int i = 0; i < live; i++)
        ptx_add(p, "\tld.global.f32 %%f%d, [%%a+%d];\n", i, 4096 * i);
}

/* Every value is updated from two others each iteration: all stay live. */
static void body_loop(struct ptx *p, int live, int barrier)
{
    ptx_add(p, "\tmov.u32 %%i, 0;\n$L_loop:\n");
    for (int i = 0; i < live; i++)
        ptx_add(p, "\tfma.rn.f32 %%f%d, %%f%d, %%f%d, %%f%d;\n", i, i, (i + 1) % live,
                (i + 3) % live);
    if (barrier >= 0)
        ptx_add(p, "\tbar.sync %d;\n", barrier);
    ptx_add(p, "\tadd.u32 %%i, %%i, 1;\n\tsetp.lt.u32 %%p, %%i, %%n;\n\t@%%p bra $L_loop;\n");
}

static void body_tail(struct ptx *p, int live, int static_smem)
{
    for (int i = 1; i < live; i++)
        ptx_add(p, "\tadd.f32 %%f0, %%f0, %%f%d;\n", i);
    if (static_smem > 0)
        ptx_add(p, "\tst.shared.f32 [sbuf+%d], %%f0;\n\tld.shared.f32 %%f1, [sbuf];\n"
                   "\tadd.f32 %%f0, %%f0, %%f1;\n", static_smem - 4);
    ptx_add(p, "\tst.global.f32 [%%a], %%f0;\n\tret;\n}\n");
}

char *occ_sweep_ptx(int cc_major, int cc_minor, int maxnreg, int live, int static_smem,
                    int barrier)
{
    struct ptx p;
    int nf = live < 2 ? 2 : live;
    ptx_init(&p);
    ptx_header(&p, cc_major, cc_minor);
    if (static_smem > 0)
        ptx_add(&p, ".shared .align 16 .b8 sbuf[%d];\n\n", static_smem);
    ptx_add(&p, ".visible .entry occ(.param .u64 p_a, .param .u32 p_n)\n.maxnreg %d\n{\n"
                "\t.reg .f32 %%f<%d>;\n\t.reg .u64 %%a, %%o;\n\t.reg .u32 %%i, %%n, %%t;\n"
                "\t.reg .pred %%p;\n"
                "\tld.param.u64 %%a, [p_a];\n\tld.param.u32 %%n, [p_n];\n"
                "\tcvta.to.global.u64 %%a, %%a;\n\tmov.u32 %%t, %%tid.x;\n"
                "\tmul.wide.u32 %%o, %%t, 4;\n\tadd.u64 %%a, %%a, %%o;\n",
            maxnreg, nf);
    body_loads(&p, live);
    body_loop(&p, live, barrier);
    body_tail(&p, live, static_smem);
    return ptx_take(&p);
}

/* ---- asking the driver ---------------------------------------------------------- */

struct sweep {
    struct gpu *g;
    json_t *rows;
    char *err;
    size_t errlen;
};

static int func_attr(struct sweep *s, CUfunction fn, int attr, int *v, const char *what)
{
    return gpu_check(s->g, s->g->cu->cuFuncGetAttribute(v, attr, fn), what, s->err, s->errlen);
}

/* One question: a row with the answer or the driver's error name. */
static void ask(struct sweep *s, int k, CUfunction fn, int block, int dyn, int maxdyn,
                int carve)
{
    int blocks = -1;
    CUresult rc =
        s->g->cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, block, (size_t)dyn);
    char text[160] = "";
    if (rc != CUDA_SUCCESS)
        cuda_error_text(s->g->cu, rc, text, sizeof text);
    json_array_append_new(s->rows, json_pack("[i,i,i,i,i,o,o]", k, block, dyn, maxdyn, carve,
                                             rc == CUDA_SUCCESS ? json_integer(blocks)
                                                                : json_null(),
                                             rc == CUDA_SUCCESS ? json_null()
                                                                : json_string(text)));
}

static void grid(struct sweep *s, int k, CUfunction fn, const int *blocks, size_t nb,
                 const int *smem, size_t ns, int maxdyn, int carve)
{
    for (size_t b = 0; b < nb; b++)
        for (size_t m = 0; m < ns; m++)
            ask(s, k, fn, blocks[b], smem[m], maxdyn, carve);
}

static int set_attr(struct sweep *s, CUfunction fn, int attr, int v, const char *what)
{
    return gpu_check(s->g, s->g->cu->cuFuncSetAttribute(fn, attr, v), what, s->err, s->errlen);
}

/* The passes of one kernel, in the order the attributes allow. */
static int sweep_kernel(struct sweep *s, int k, CUfunction fn)
{
    const struct sweep_kernel *sk = &kernels[k];
    int maxdyn;
    if (func_attr(s, fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, &maxdyn,
                  "reading the dynamic shared maximum") < 0)
        return -1;
    if (sk->passes & PASS_DEFAULT)
        grid(s, k, fn, default_blocks, ARRAY_LEN(default_blocks), default_smem,
             ARRAY_LEN(default_smem), maxdyn, CARVEOUT_UNSET);
    maxdyn = s->g->info.shared_memory_per_block_optin - sk->static_smem;
    if (set_attr(s, fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, maxdyn,
                 "raising the dynamic shared maximum") < 0 ||
        func_attr(s, fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, &maxdyn,
                  "reading the dynamic shared maximum") < 0)
        return -1;
    if (sk->passes & PASS_MAIN)
        grid(s, k, fn, main_blocks, ARRAY_LEN(main_blocks), main_smem, ARRAY_LEN(main_smem),
             maxdyn, CARVEOUT_UNSET);
    for (size_t c = 0; (sk->passes & PASS_CARVEOUT) && c < ARRAY_LEN(carve_pct); c++) {
        if (set_attr(s, fn, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, carve_pct[c],
                     "setting the carve-out") < 0)
            return -1;
        grid(s, k, fn, carve_blocks, ARRAY_LEN(carve_blocks), carve_smem,
             ARRAY_LEN(carve_smem), maxdyn, carve_pct[c]);
    }
    if (sk->passes & PASS_CARVEOUT)
        return set_attr(s, fn, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                        CARVEOUT_UNSET, "resetting the carve-out");
    return 0;
}

/* What the driver says the compiled kernel is. */
static json_t *kernel_json(struct sweep *s, int k, CUfunction fn)
{
    const struct sweep_kernel *sk = &kernels[k];
    int regs, smem, local, maxthr;
    if (func_attr(s, fn, CU_FUNC_ATTRIBUTE_NUM_REGS, &regs, "reading NUM_REGS") < 0 ||
        func_attr(s, fn, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &smem, "reading SHARED_SIZE") < 0 ||
        func_attr(s, fn, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &local, "reading LOCAL_SIZE") < 0 ||
        func_attr(s, fn, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &maxthr,
                  "reading MAX_THREADS_PER_BLOCK") < 0)
        return NULL;
    return json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:i}", "name", sk->name, "target_regs",
                     sk->maxnreg, "num_regs", regs, "static_smem", smem, "barriers",
                     sk->barrier >= 0 ? sk->barrier + 1 : 0, "local_bytes", local,
                     "max_threads_per_block", maxthr);
}

static int run_kernel(struct sweep *s, int k, json_t *list)
{
    const struct sweep_kernel *sk = &kernels[k];
    struct gpu_module m;
    CUfunction fn;
    char *ptx = occ_sweep_ptx(s->g->info.cc_major, s->g->info.cc_minor, sk->maxnreg, sk->live,
                              sk->static_smem, sk->barrier);
    char name[48];
    int rc = -1;
    snprintf(name, sizeof name, "occupancy_%s", sk->name);
    if (gpu_module_build_generated(s->g, ptx, name, &m, s->err, s->errlen) == 0) {
        json_t *kj = NULL;
        if (gpu_module_function(s->g, &m, "occ", &fn, s->err, s->errlen) == 0 &&
            (kj = kernel_json(s, k, fn)) != NULL)
            rc = sweep_kernel(s, k, fn);
        if (kj)
            json_array_append_new(list, kj);
        gpu_module_free(s->g, &m);
    }
    return rc;
}


json_t *occupancy_sweep_run(const char *device, char *err, size_t errlen)
{
    struct gpu g;
    double t0 = mono_s();
    if (gpu_open(&g, device, err, errlen) < 0) {
        gpu_close(&g);
        return NULL;
    }
    struct sweep s = {.g = &g, .rows = json_array(), .err = err, .errlen = errlen};
    json_t *list = json_array();
    int rc = 0;
    for (size_t k = 0; k < ARRAY_LEN(kernels) && rc == 0; k++)
        rc = run_kernel(&s, (int)k, list);
    json_t *doc = NULL;
    if (rc == 0)
        doc = json_pack("{s:s, s:o, s:s, s:o, s:[s,s,s,s,s,s,s], s:o, s:f}", "capture",
                        "occupancy", "device", gpu_json(&g), "driver_version", g.driver_version,
                        "kernels", list, "columns", "kernel", "block", "dynamic_smem",
                        "max_dynamic_smem", "carveout", "blocks", "error", "rows", s.rows,
                        "wall_s", mono_s() - t0);
    else {
        json_decref(list);
        json_decref(s.rows);
    }
    gpu_close(&g);
    return doc;
}
