/*
 * The register-limit experiment (see regs_limit.h for the hypotheses and
 * the variants).
 *
 * DESIGN
 * The variant list is generated from four small tables (kernel, operation,
 * field, place), so the names the script passes and the edits cannot
 * drift apart. The edit is pure (regs_limit_patch: one cubin parse, every
 * check before the first byte is written); the GPU half compiles, edits,
 * loads and launches once, and turns the outcome into a document: a
 * refused load or a fault is a result of the experiment, not an error.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/banks.h"
#include "probes/gpu/cubin.h"
#include "probes/gpu/gpu.h"
#include "probes/gpu/patch.h"
#include "probes/gpu/ptx.h"
#include "probes/regs_limit.h"

static const char *const kernel_names[] = {"wide", "small", "small-c255", "small-c+8"};
static const char *const where_names[] = {"none",    "count-3", "count-2", "count-1",
                                          "count",   "alloc-1", "alloc"};

static const char *field_name(enum sass_field f)
{
    return f == SASS_RA ? "ra" : f == SASS_RB ? "rb" : f == SASS_RC ? "rc" : "rd";
}

/* One row of the plan: a kernel, the operations and fields edited in it,
 * and the places (a range of enum regs_where). */
struct family {
    enum regs_kernel kernel;
    const char *insns[2];
    enum sass_field fields[4];
    enum regs_where from, to;
};

static const struct family families[] = {
    {REGS_WIDE, {"FFMA", NULL}, {SASS_RA, SASS_RB, SASS_RC, SASS_RD}, REGS_COUNT_3, REGS_COUNT_1},
    {REGS_SMALL, {"FFMA", "IADD3"}, {SASS_RA, SASS_RD, 0, 0}, REGS_COUNT_3, REGS_ALLOC},
    {REGS_SMALL_C255, {"FFMA", "IADD3"}, {SASS_RA, SASS_RD, 0, 0}, REGS_COUNT_3, REGS_COUNT_1},
    {REGS_SMALL_PLUS8, {"FFMA", NULL}, {SASS_RA, 0, 0, 0}, REGS_COUNT_3, REGS_ALLOC},
};

static void add(struct regs_variant *v, size_t *n, enum regs_kernel k, const char *insn,
                enum sass_field f, enum regs_where w)
{
    if (*n == REGS_VARIANTS_MAX)
        return;
    struct regs_variant *x = &v[(*n)++];
    x->kernel = k;
    x->insn = insn;
    x->field = f;
    x->where = w;
    if (w == REGS_NONE)
        snprintf(x->name, sizeof x->name, "%s.none", kernel_names[k]);
    else {
        char lower[8];
        size_t i = 0;
        for (; insn[i] && i + 1 < sizeof lower; i++)
            lower[i] = (char)tolower((unsigned char)insn[i]);
        lower[i] = '\0';
        snprintf(x->name, sizeof x->name, "%s.%s.%s.%s", kernel_names[k], lower, field_name(f),
                 where_names[w]);
    }
}

size_t regs_limit_variants(struct regs_variant v[REGS_VARIANTS_MAX])
{
    size_t n = 0;
    add(v, &n, REGS_WIDE, "FFMA", SASS_RA, REGS_NONE);
    add(v, &n, REGS_SMALL, "FFMA", SASS_RA, REGS_NONE);
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
        const struct family *F = &families[i];
        for (int o = 0; o < 2 && F->insns[o]; o++)
            for (int f = 0; f < 4 && (f == 0 || F->fields[f] != 0); f++)
                for (enum regs_where w = F->from; w <= F->to; w++)
                    add(v, &n, F->kernel, F->insns[o], F->fields[f], w);
    }
    return n;
}

int regs_limit_find(const char *name, struct regs_variant *v)
{
    struct regs_variant all[REGS_VARIANTS_MAX];
    size_t n = regs_limit_variants(all);
    for (size_t i = 0; i < n; i++)
        if (strcmp(all[i].name, name) == 0) {
            *v = all[i];
            return 0;
        }
    return -1;
}

char *regs_limit_small_ptx(int cc_major, int cc_minor)
{
    struct ptx p;
    ptx_init(&p);
    ptx_header(&p, cc_major, cc_minor);
    ptx_add(&p, ".visible .entry " REGS_SMALL_KERNEL "(.param .u64 p_out, .param .u64 p_in)\n"
                ".maxntid 32, 1, 1\n{\n"
                "\t.reg .u64 %%in, %%out;\n\t.reg .u32 %%a, %%b, %%c;\n"
                "\t.reg .f32 %%x, %%y, %%z;\n"
                "\tld.param.u64 %%in, [p_in];\n\tcvta.to.global.u64 %%in, %%in;\n"
                "\tld.param.u64 %%out, [p_out];\n\tcvta.to.global.u64 %%out, %%out;\n"
                "\tld.global.f32 %%x, [%%in];\n\tld.global.f32 %%y, [%%in+4];\n"
                "\tld.global.u32 %%a, [%%in+8];\n\tld.global.u32 %%b, [%%in+12];\n"
                "\tfma.rn.f32 %%z, %%x, %%y, %%x;\n\tadd.u32 %%c, %%a, %%b;\n"
                "\tst.global.f32 [%%out], %%z;\n\tst.global.u32 [%%out+4], %%c;\n"
                "\tret;\n}\n");
    return ptx_take(&p);
}

/* Instructions other than the edited one whose Rd/Ra/Rb/Rc field holds
 * reg (a field that is not a register may match too: an over-count). A
 * destination edit onto a register that an address or the loop counter
 * lives in would fault for that reason, not for the register's number;
 * the summary reads this before it trusts a fault. */
static unsigned other_uses(const struct cubin_kernel *k, size_t edited, unsigned reg)
{
    static const enum sass_field f[] = {SASS_RD, SASS_RA, SASS_RB, SASS_RC};
    unsigned n = 0;
    for (size_t i = 0; i < k->text_size / SASS_INSN_BYTES; i++) {
        struct sass_insn in = sass_decode(k->text, i * SASS_INSN_BYTES);
        int hit = 0;
        for (size_t j = 0; j < sizeof f / sizeof f[0]; j++)
            hit |= sass_field(&in, f[j]) == reg;
        n += i != edited && hit;
    }
    return n;
}

static unsigned highest_destination(const struct cubin_kernel *k)
{
    unsigned top = 0;
    for (size_t i = 0; i < k->text_size / SASS_INSN_BYTES; i++) {
        struct sass_insn in = sass_decode(k->text, i * SASS_INSN_BYTES);
        if (banks_writes_gpr(&in) && sass_field(&in, SASS_RD) > top)
            top = sass_field(&in, SASS_RD);
    }
    return top;
}

/* The instruction to edit: the first of its mnemonic, which for the small
 * kernel must be the only one. */
static int pick_insn(const struct cubin_kernel *k, const struct regs_variant *v, size_t *index,
                     char *err, size_t errlen)
{
    size_t count = 0;
    char mn[SASS_MNEMONIC_MAX];
    for (size_t i = 0; i < k->text_size / SASS_INSN_BYTES; i++) {
        struct sass_insn in = sass_decode(k->text, i * SASS_INSN_BYTES);
        if (strcmp(sass_mnemonic(&in, mn), v->insn) == 0 && count++ == 0)
            *index = i;
    }
    if (count == 0 || (v->kernel != REGS_WIDE && count != 1)) {
        snprintf(err, errlen, "the kernel has %zu %s instructions, the experiment needs %s",
                 count, v->insn, v->kernel == REGS_WIDE ? "one or more" : "exactly one");
        return -1;
    }
    return 0;
}

static unsigned place(int declared, enum regs_where w)
{
    int alloc = (declared + REGS_GRANULE - 1) / REGS_GRANULE * REGS_GRANULE;
    switch (w) {
    case REGS_COUNT_3: return (unsigned)(declared - 3);
    case REGS_COUNT_2: return (unsigned)(declared - 2);
    case REGS_COUNT_1: return (unsigned)(declared - 1);
    case REGS_COUNT: return (unsigned)declared;
    case REGS_ALLOC_1: return (unsigned)(alloc - 1);
    case REGS_ALLOC: return (unsigned)alloc;
    default: return SASS_RZ;
    }
}

int regs_limit_patch(void *cubin, size_t size, const char *kernel, const struct regs_variant *v,
                     struct regs_plan *p, char *err, size_t errlen)
{
    struct cubin c;
    memset(p, 0, sizeof *p);
    if (cubin_parse(&c, cubin, size, err, errlen) < 0) {
        cubin_free(&c);
        return -1;
    }
    int rc = -1;
    const struct cubin_kernel *k = cubin_kernel_find(&c, kernel);
    if (!k || k->regs < 3)
        snprintf(err, errlen, "no kernel %s with a register count in the cubin", kernel);
    else {
        p->compiled_count = p->declared_count = k->regs;
        p->highest_destination = highest_destination(k);
        if (v->kernel == REGS_SMALL_C255)
            p->declared_count = 255;
        else if (v->kernel == REGS_SMALL_PLUS8)
            p->declared_count = k->regs + REGS_GRANULE > 255 ? 255 : k->regs + REGS_GRANULE;
        p->reg = place(p->declared_count, v->where);
        if (p->declared_count != k->regs && (k->regs_offset == 0 || k->regs_offset + 4 > size))
            snprintf(err, errlen, "the cubin has no EIATTR_REGCOUNT for %s to edit", kernel);
        else if (v->where != REGS_NONE && p->reg > BANKS_MAX_REG)
            snprintf(err, errlen, "R%u is not a register an instruction can name", p->reg);
        else if (v->where == REGS_NONE || pick_insn(k, v, &p->index, err, errlen) == 0)
            rc = 0;
        if (rc == 0 && v->where != REGS_NONE) {
            p->other_uses = other_uses(k, p->index, p->reg);
            struct patch_edit e = {p->index, v->field, p->reg};
            rc = patch_apply(cubin, size, kernel, &e, 1, err, errlen);
        }
        if (rc == 0 && p->declared_count != k->regs) {
            uint8_t *at = (uint8_t *)cubin + k->regs_offset;
            for (int b = 0; b < 4; b++)
                at[b] = (uint8_t)((unsigned)p->declared_count >> (8 * b));
        }
    }
    cubin_free(&c);
    return rc;
}

/* ---- on the GPU --------------------------------------------------------------- */

/* "CUDA_ERROR_X" out of a gpu_check reason, or "". */
static void cuda_error_of(const char *reason, char *out, size_t len)
{
    const char *s = strstr(reason, "CUDA_ERROR_");
    size_t n = 0;
    while (s && s[n] && s[n] != ':' && s[n] != ' ' && n + 1 < len)
        n++;
    snprintf(out, len, "%.*s", (int)n, s ? s : "");
}

/* Loads the edited copy and launches it once: the outcome document (a
 * refused load and a fault are outcomes), or NULL with the reason when the
 * buffers could not be had. */
static json_t *launch(struct gpu *g, const struct regs_variant *v, const void *copy, size_t size,
                      const struct regs_plan *p, char *err, size_t errlen)
{
    const char *kernel = v->kernel == REGS_WIDE ? BANKS_KERNEL : REGS_SMALL_KERNEL;
    const size_t bytes = 1 << 16;   /* stamps/out, inputs (1.0f), the wide kernel's sink */
    CUdeviceptr bufs[3] = {0, 0, 0};
    CUdeviceptr *const release[] = {&bufs[0], &bufs[1], &bufs[2]};
    for (int i = 0; i < 3; i++)
        if (gpu_check(g, g->cu->cuMemAlloc(&bufs[i], bytes), "cuMemAlloc", err, errlen) < 0 ||
            gpu_check(g, g->cu->cuMemsetD32(bufs[i], 0x3f800000u, bytes / 4), "cuMemsetD32",
                      err, errlen) < 0) {
            gpu_free_buffers(g, release, 3);
            return NULL;
        }
    char why[512] = "", cerr[64] = "";
    const char *outcome = "ok";
    struct gpu_module m;
    CUfunction fn;
    unsigned iters = 1;
    void *wide[] = {&bufs[0], &bufs[1], &bufs[2], &iters}, *small[] = {&bufs[0], &bufs[1]};
    if (gpu_module_load_image(g, copy, size, &m, why, sizeof why) < 0)
        outcome = "load_refused";
    else {
        if (gpu_module_function(g, &m, kernel, &fn, why, sizeof why) < 0)
            outcome = "load_refused";
        else if (gpu_launch(g, fn, 1, v->kernel == REGS_WIDE ? BANKS_THREADS : 32, 0,
                            v->kernel == REGS_WIDE ? wide : small, why, sizeof why) < 0)
            outcome = "fault";
        gpu_module_free(g, &m);
    }
    gpu_free_buffers(g, release, 3);
    cuda_error_of(why, cerr, sizeof cerr);
    int none = v->where == REGS_NONE;
    json_t *res = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:s, s:s, s:s, s:s}", "variant", v->name,
        "kernel", kernel_names[v->kernel], "instruction", none ? "" : v->insn, "field",
        none ? "" : field_name(v->field), "place", where_names[v->where], "register",
        none ? -1 : (int)p->reg, "compiled_count", p->compiled_count, "declared_count",
        p->declared_count, "highest_destination", (int)p->highest_destination, "outcome",
        outcome, "error", why, "cuda_error", cerr, "driver_version", g->driver_version);
    json_object_set_new(res, "other_instructions_naming_register",
                        json_integer(none ? 0 : (json_int_t)p->other_uses));
    json_object_set_new(res, "device", gpu_json(g));
    return res;
}

json_t *regs_limit_run(const char *device, const char *variant, char *err, size_t errlen)
{
    struct regs_variant v;
    if (regs_limit_find(variant, &v) < 0) {
        snprintf(err, errlen, "no variant %s (gpuprobe regs-limit --list)", variant);
        return NULL;
    }
    struct gpu g;
    struct gpu_module base;
    struct regs_plan p;
    const char *kernel = v.kernel == REGS_WIDE ? BANKS_KERNEL : REGS_SMALL_KERNEL;
    void *copy = NULL;
    json_t *res = NULL;
    memset(&g, 0, sizeof g);
    memset(&base, 0, sizeof base);
    if (gpu_open(&g, device, err, errlen) == 0 &&
        gpu_module_build_generated(
            &g,
            v.kernel == REGS_WIDE ? banks_ptx(g.info.cc_major, g.info.cc_minor)
                                  : regs_limit_small_ptx(g.info.cc_major, g.info.cc_minor),
            v.kernel == REGS_WIDE ? "regs_wide" : "regs_small", &base, err, errlen) == 0) {
        if (!(copy = malloc(base.cubin_size)))
            snprintf(err, errlen, "out of memory");
        else {
            memcpy(copy, base.cubin, base.cubin_size);
            if (regs_limit_patch(copy, base.cubin_size, kernel, &v, &p, err, errlen) == 0)
                res = launch(&g, &v, copy, base.cubin_size, &p, err, errlen);
        }
        gpu_module_free(&g, &base);
    }
    free(copy);
    gpu_close(&g);
    return res;
}
