/*
 * PTX for the memory probe (see memory.h for what each kernel measures).
 *
 * DESIGN
 * Every kernel is one module generated here, in the style of the latency
 * probe: text assembled with ptx_add, registers named for what they hold.
 * The shapes that make the timings honest:
 *   - each timed loop is inside a pass loop run twice, and both loops carry
 *     .pragma "nounroll", so the second pass runs the very code the first
 *     one ran (no unrolled copy with a cold instruction cache);
 *   - a chase step is one load whose address is the previous load's value,
 *     nothing else: no address arithmetic in the dependent chain;
 *   - departure loads write distinct registers, their sums are taken only
 *     after the closing clock read, and each region reads its own addresses
 *     so the compiler has nothing to share between regions;
 *   - every result is stored, so nothing is dead code.
 * The loop counters of the chase are independent of the loads and issue in
 * the shadow of the load latency.
 * mem_sass_check reads what the compiler made of a kernel (probes/gpu/cubin.h,
 * probes/gpu/sass.h): each timed region, found between consecutive clock reads,
 * must hold exactly its loads and no other load instruction, and every one
 * of those loads the ordering its cache operator compiles to (sass.h's
 * SASS_MEM_SEM: .STRONG.SM for .ca, .STRONG.GPU for .cg), so a .ca kernel
 * that compiled to .cg loads, or the reverse, is not timed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/gpu/cubin.h"
#include "probes/memory.h"
#include "probes/gpu/ptx.h"
#include "probes/gpu/sass.h"

/* The SASS each load compiles to was read with cuobjdump from the CUDA 13
 * fixtures (tests/fixtures/cubins/memory.sass): ld.global.ca is
 * LDG.E.STRONG.SM (the L1 is coherent at SM scope), ld.global.cg is
 * LDG.E.STRONG.GPU; .64 for the 8-byte loads. */
const struct mem_kernel mem_kernels[MK_COUNT] = {
    [MK_CHASE_CA] = {"chase_ca", "chase", "ld.global.ca.u64", "LDG", "LDG.E.64.STRONG.SM", 1,
                     {MEM_UNROLL, 0, 0}},
    [MK_CHASE_CG] = {"chase_cg", "chase", "ld.global.cg.u64", "LDG", "LDG.E.64.STRONG.GPU", 1,
                     {MEM_UNROLL, 0, 0}},
    [MK_CHASE_SHARED] = {"chase_shared", "chase", "ld.shared.u32", "LDS", "LDS", 1,
                         {MEM_UNROLL, 0, 0}},
    [MK_DEP_COAL_CG] = {"depart_coal_cg", "depart", "ld.global.cg.u32", "LDG",
                        "LDG.E.STRONG.GPU", 3, {0, MEM_DEP_M1, MEM_DEP_M2}},
    [MK_DEP_UNCOAL_CG] = {"depart_uncoal_cg", "depart", "ld.global.cg.u32", "LDG",
                          "LDG.E.STRONG.GPU", 3, {0, MEM_DEP_M1, MEM_DEP_M2}},
    [MK_DEP_COAL_CA] = {"depart_coal_ca", "depart", "ld.global.ca.u32", "LDG",
                        "LDG.E.STRONG.SM", 3, {0, MEM_DEP_M1, MEM_DEP_M2}},
    [MK_DEP_UNCOAL_CA] = {"depart_uncoal_ca", "depart", "ld.global.ca.u32", "LDG",
                          "LDG.E.STRONG.SM", 3, {0, MEM_DEP_M1, MEM_DEP_M2}},
    [MK_SUPPORT] = {"support", NULL, NULL, NULL, NULL, 0, {0, 0, 0}},
};

unsigned mem_chase_steps(size_t elements)
{
    size_t k = (elements + MEM_UNROLL - 1) / MEM_UNROLL * MEM_UNROLL;
    if (k < MEM_K_MIN)
        k = MEM_K_MIN;
    if (k > MEM_K_MAX)
        k = MEM_K_MAX;
    return (unsigned)k;
}

int mem_chase_covered(size_t elements) { return elements <= MEM_K_MAX; }

/* Opens the two-pass loop; %pass counts passes. */
static void pass_open(struct ptx *p)
{
    ptx_add(p, "\tmov.u32 %%pass, 0;\n$L_pass:\n\t.pragma \"nounroll\";\n");
}

static void pass_close(struct ptx *p)
{
    ptx_add(p, "\tadd.u32 %%pass, %%pass, 1;\n\tsetp.lt.u32 %%p, %%pass, 2;\n"
               "\t@%%p bra $L_pass;\n");
}

/* Stores %c1 - %c0 at out word (slots * pass + slot); %out is global. */
static void store_delta(struct ptx *p, int slots, int slot, const char *guard)
{
    ptx_add(p, "\tsub.s64 %%d, %%c1, %%c0;\n\tmad.lo.u32 %%w, %%pass, %d, %d;\n"
               "\tmul.wide.u32 %%off, %%w, 8;\n\tadd.u64 %%a, %%out, %%off;\n"
               "\t%sst.global.u64 [%%a], %%d;\n",
            slots, slot, guard);
}

/* The timed chase: iters x MEM_UNROLL dependent loads of `load` through %x.
 * The loop counts down from %n (iters >= 1), so the loop needs the kernel
 * parameter only before the clock starts: counting up to it, ptxas reloads
 * the bound from the constant bank inside the timed loop. */
static void chase_body(struct ptx *p, const char *load)
{
    pass_open(p);
    ptx_add(p, "\tmov.u32 %%i, %%n;\n\tmov.u64 %%c0, %%clock64;\n$L_chase:\n"
               "\t.pragma \"nounroll\";\n");
    for (int k = 0; k < MEM_UNROLL; k++)
        ptx_add(p, "\t%s %%x, [%%x];\n", load);
    ptx_add(p, "\tsub.u32 %%i, %%i, 1;\n\tsetp.ne.u32 %%p, %%i, 0;\n\t@%%p bra $L_chase;\n"
               "\tmov.u64 %%c1, %%clock64;\n");
    store_delta(p, 1, 0, "");
    pass_close(p);
}

static void chase_global(struct ptx *p, const char *load)
{
    ptx_add(p, ".visible .entry chase(.param .u64 p_out, .param .u64 p_start,"
               " .param .u32 p_iters)\n{\n"
               "\t.reg .pred %%p;\n\t.reg .u32 %%pass, %%i, %%n, %%w;\n"
               "\t.reg .u64 %%out, %%x, %%c0, %%c1, %%d, %%off, %%a;\n"
               "\tld.param.u64 %%out, [p_out];\n\tcvta.to.global.u64 %%out, %%out;\n"
               "\tld.param.u64 %%x, [p_start];\n\tcvta.to.global.u64 %%x, %%x;\n"
               "\tld.param.u32 %%n, [p_iters];\n");
    chase_body(p, load);
    ptx_add(p, "\tst.global.u64 [%%out+16], %%x;\n\tret;\n}\n");
}

/* One thread writes the ring: word i holds the shared address of word
 * next[i]; then the chase starts at word 0. */
static void chase_shared(struct ptx *p)
{
    ptx_add(p, ".visible .entry chase(.param .u64 p_out, .param .u64 p_next,"
               " .param .u32 p_iters)\n{\n"
               "\t.reg .pred %%p;\n\t.reg .u32 %%pass, %%i, %%n, %%w, %%x, %%ring, %%v, %%s;\n"
               "\t.reg .u64 %%out, %%next, %%c0, %%c1, %%d, %%off, %%a, %%xw;\n"
               "\t.shared .align 4 .b32 ring[%d];\n"
               "\tld.param.u64 %%out, [p_out];\n\tcvta.to.global.u64 %%out, %%out;\n"
               "\tld.param.u64 %%next, [p_next];\n\tcvta.to.global.u64 %%next, %%next;\n"
               "\tld.param.u32 %%n, [p_iters];\n\tmov.u32 %%ring, ring;\n"
               "\tmov.u32 %%i, 0;\n$L_fill:\n"
               "\tmul.wide.u32 %%off, %%i, 4;\n\tadd.u64 %%a, %%next, %%off;\n"
               "\tld.global.u32 %%v, [%%a];\n\tshl.b32 %%v, %%v, 2;\n"
               "\tadd.u32 %%v, %%v, %%ring;\n\tshl.b32 %%s, %%i, 2;\n\tadd.u32 %%s, %%s, %%ring;\n"
               "\tst.shared.u32 [%%s], %%v;\n\tadd.u32 %%i, %%i, 1;\n"
               "\tsetp.lt.u32 %%p, %%i, %d;\n\t@%%p bra $L_fill;\n"
               "\tbar.sync 0;\n\tmov.u32 %%x, %%ring;\n",
            MEM_SHARED_WORDS, MEM_SHARED_WORDS);
    chase_body(p, "ld.shared.u32");
    ptx_add(p, "\tcvt.u64.u32 %%xw, %%x;\n\tst.global.u64 [%%out+16], %%xw;\n"
               "\tcvt.u64.u32 %%xw, %%ring;\n\tst.global.u64 [%%out+24], %%xw;\n\tret;\n}\n");
}

/* Byte offset of load j from the thread's base. Coalesced: load j reads
 * line j, each thread its 4-byte word of it. Uncoalesced: each thread has
 * its own 1 KiB block and load j reads word j of it, so every load touches
 * 32 lines, one per thread. */
static int dep_offset(int coalesced, int j) { return coalesced ? 128 * j : 4 * j; }

static void dep_region(struct ptx *p, const struct mem_kernel *k, int coalesced, int r)
{
    int m = k->region_loads[r];
    ptx_add(p, "\t// region %d: %d loads\n\tmov.u64 %%c0, %%clock64;\n", r, m);
    for (int j = 0; j < m; j++)
        ptx_add(p, "\t%s %%v%d, [%%r%d+%d];\n", k->ptx_load, j, r, dep_offset(coalesced, j));
    ptx_add(p, "\tmov.u64 %%c1, %%clock64;\n");
    store_delta(p, 3, r, "@%lane0 ");
    for (int j = 0; j < m; j++)
        ptx_add(p, "\tadd.u32 %%sum, %%sum, %%v%d;\n", j);
}

static void departure(struct ptx *p, const struct mem_kernel *k, int coalesced)
{
    ptx_add(p, ".visible .entry depart(.param .u64 p_out, .param .u64 p_base)\n{\n"
               "\t.reg .pred %%p, %%lane0;\n\t.reg .u32 %%pass, %%w, %%lane, %%sum, %%v<%d>;\n"
               "\t.reg .u64 %%out, %%base, %%c0, %%c1, %%d, %%off, %%a, %%r0, %%r1, %%r2;\n"
               "\tld.param.u64 %%out, [p_out];\n\tcvta.to.global.u64 %%out, %%out;\n"
               "\tld.param.u64 %%base, [p_base];\n\tcvta.to.global.u64 %%base, %%base;\n"
               "\tmov.u32 %%lane, %%tid.x;\n\tsetp.eq.u32 %%lane0, %%lane, 0;\n"
               "\tmul.wide.u32 %%off, %%lane, %d;\n\tadd.u64 %%r0, %%base, %%off;\n"
               "\tadd.u64 %%r1, %%r0, %d;\n\tadd.u64 %%r2, %%r0, %d;\n\tmov.u32 %%sum, 0;\n",
            MEM_DEP_M2, coalesced ? 4 : 1024, MEM_DEP_REGION_BYTES, 2 * MEM_DEP_REGION_BYTES);
    pass_open(p);
    for (int r = 0; r < k->regions; r++)
        dep_region(p, k, coalesced, r);
    pass_close(p);
    ptx_add(p, "\tmul.wide.u32 %%off, %%lane, 4;\n\tadd.u64 %%a, %%out, %%off;\n"
               "\tst.global.u32 [%%a+%d], %%sum;\n\tret;\n}\n",
            8 * 32);
}

/* Grid-stride loop header shared by build and warm: %i from the global
 * thread index to %n by the grid's thread count; %e = base + i * stride. */
static void grid_loop_open(struct ptx *p, const char *label)
{
    ptx_add(p, "\tmov.u32 %%i, %%ctaid.x;\n\tmov.u32 %%w, %%ntid.x;\n\tmov.u32 %%t, %%tid.x;\n"
               "\tmad.lo.u32 %%i, %%i, %%w, %%t;\n\tmov.u32 %%t, %%nctaid.x;\n"
               "\tmul.lo.u32 %%step, %%t, %%w;\n"
               "\tsetp.ge.u32 %%p, %%i, %%n;\n\t@%%p bra %s_end;\n%s:\n"
               "\tmul.wide.u32 %%off, %%i, %%stride;\n\tadd.u64 %%e, %%gbase, %%off;\n",
            label, label);
}

static void grid_loop_close(struct ptx *p, const char *label)
{
    ptx_add(p, "\tadd.u32 %%i, %%i, %%step;\n\tsetp.lt.u32 %%p, %%i, %%n;\n\t@%%p bra %s;\n"
               "%s_end:\n",
            label, label);
}

static const char support_regs[] =
    "\t.reg .pred %p;\n\t.reg .u32 %i, %w, %t, %step, %n, %stride, %nx;\n"
    "\t.reg .u64 %base, %gbase, %next, %out, %off, %e, %v, %acc;\n";

static void support(struct ptx *p)
{
    ptx_add(p, ".visible .entry build(.param .u64 p_base, .param .u64 p_next, .param .u32 p_n,"
               " .param .u32 p_stride)\n{\n%s"
               "\tld.param.u64 %%base, [p_base];\n\tcvta.to.global.u64 %%gbase, %%base;\n"
               "\tld.param.u64 %%next, [p_next];\n\tcvta.to.global.u64 %%next, %%next;\n"
               "\tld.param.u32 %%n, [p_n];\n\tld.param.u32 %%stride, [p_stride];\n",
            support_regs);
    grid_loop_open(p, "$L_build");
    ptx_add(p, "\tmul.wide.u32 %%off, %%i, 4;\n\tadd.u64 %%v, %%next, %%off;\n"
               "\tld.global.u32 %%nx, [%%v];\n\tmul.wide.u32 %%off, %%nx, %%stride;\n"
               "\tadd.u64 %%v, %%gbase, %%off;\n\tst.global.u64 [%%e], %%v;\n");
    grid_loop_close(p, "$L_build");
    ptx_add(p, "\tret;\n}\n\n");

    ptx_add(p, ".visible .entry warm(.param .u64 p_out, .param .u64 p_base, .param .u32 p_n,"
               " .param .u32 p_stride)\n{\n%s"
               "\tld.param.u64 %%out, [p_out];\n\tcvta.to.global.u64 %%out, %%out;\n"
               "\tld.param.u64 %%base, [p_base];\n\tcvta.to.global.u64 %%gbase, %%base;\n"
               "\tld.param.u32 %%n, [p_n];\n\tld.param.u32 %%stride, [p_stride];\n"
               "\tmov.u64 %%acc, 0;\n",
            support_regs);
    grid_loop_open(p, "$L_warm");
    ptx_add(p, "\tld.global.cg.u64 %%v, [%%e];\n\txor.b64 %%acc, %%acc, %%v;\n");
    grid_loop_close(p, "$L_warm");
    /* pointers are MEM_STRIDE-aligned, so their xor is never 1: a store the
     * compiler cannot remove and that never happens */
    ptx_add(p, "\tsetp.eq.u64 %%p, %%acc, 1;\n\t@%%p st.global.u64 [%%out], %%acc;\n"
               "\tret;\n}\n");
}

char *mem_ptx(enum mem_kernel_id id, int cc_major, int cc_minor)
{
    struct ptx p;
    ptx_init(&p);
    ptx_header(&p, cc_major, cc_minor);
    const struct mem_kernel *k = &mem_kernels[id];
    switch (id) {
    case MK_CHASE_CA:
    case MK_CHASE_CG:
        chase_global(&p, k->ptx_load);
        break;
    case MK_CHASE_SHARED:
        chase_shared(&p);
        break;
    case MK_DEP_COAL_CG:
    case MK_DEP_COAL_CA:
        departure(&p, k, 1);
        break;
    case MK_DEP_UNCOAL_CG:
    case MK_DEP_UNCOAL_CA:
        departure(&p, k, 0);
        break;
    case MK_SUPPORT:
        support(&p);
        break;
    default:
        ptx_free(&p);
        return NULL;
    }
    return ptx_take(&p);
}

/* ---- checking the machine code ---------------------------------------- */

static const char *const load_ops[] = {"LD", "LDG", "LDS", "LDC", "LDL"};

/* The SASS_MEM_SEM value the loads described by full ("LDG.E.64.STRONG.SM")
 * must have, or -1 when the description names no ordering the reader knows. */
static int expected_sem(const char *full)
{
    if (!full || strncmp(full, "LDG", 3) != 0)
        return -1;
    if (strstr(full, ".STRONG.GPU"))
        return SASS_SEM_STRONG_GPU;
    if (strstr(full, ".STRONG.SM"))
        return SASS_SEM_STRONG_SM;
    return SASS_SEM_WEAK;
}

/* The loads of opcode op in region r whose ordering is not sem. */
static size_t wrong_sem(const struct cubin_kernel *kn, const struct sass_region *r, const char *op, int sem)
{
    char mn[SASS_MNEMONIC_MAX];
    size_t n = 0;
    for (size_t i = r->first; sem >= 0 && i < r->end; i++) {
        struct sass_insn in = sass_decode(kn->text, i * SASS_INSN_BYTES);
        if (strcmp(sass_mnemonic(&in, mn), op) == 0 && (int)sass_field(&in, SASS_MEM_SEM) != sem)
            n++;
    }
    return n;
}

/* Counts of the expected opcode, of those with another ordering than the
 * kernel's cache operator compiles to, and of every other load in region r. */
static json_t *region_json(const struct cubin_kernel *kn, const struct sass_region *r,
                           const struct mem_kernel *k, int expect, int *ok)
{
    const char *op = k->sass_op;
    size_t found = sass_count_mnemonic(kn->text, kn->text_size, r, op), other = 0;
    size_t wrong = wrong_sem(kn, r, op, expected_sem(k->sass_full));
    for (size_t i = 0; i < sizeof load_ops / sizeof load_ops[0]; i++)
        if (strcmp(load_ops[i], op) != 0)
            other += sass_count_mnemonic(kn->text, kn->text_size, r, load_ops[i]);
    if (found != (size_t)expect || other != 0 || wrong != 0)
        *ok = 0;
    return json_pack("{s:i,s:I,s:I,s:I}", "expect", expect, "found", (json_int_t)found,
                     "other_loads", (json_int_t)other, "wrong_ordering", (json_int_t)wrong);
}

/* Walks the timed regions of one pass; returns how many were found. */
static int check_regions(const struct mem_kernel *k, const struct cubin_kernel *kn,
                         json_t *regions, struct sass_region *span, int *ok)
{
    size_t from = 0;
    int i;
    for (i = 0; i < k->regions; i++) {
        struct sass_region r;
        if (sass_clock_region(kn->text, kn->text_size, from, &r) < 0)
            break;
        json_array_append_new(regions, region_json(kn, &r, k, k->region_loads[i], ok));
        if (i == 0)
            span->first = r.first;
        span->end = r.end;
        from = r.end + 1;
    }
    if (i < k->regions)
        *ok = 0;
    return i;
}

static json_t *check_kernel(const struct mem_kernel *k, const struct cubin_kernel *kn)
{
    json_t *regions = json_array();
    struct sass_region span = {0, sass_count(kn->text_size, NULL)};
    int ok = 1, found = check_regions(k, kn, regions, &span, &ok);
    json_t *o = json_pack("{s:b,s:s,s:s,s:o}", "verified", ok, "opcode", k->sass_op, "expected",
                          k->sass_full, "regions", regions);
    if (found < k->regions)
        json_object_set_new(o, "error", json_sprintf("%d of the %d timed regions found between "
                                                     "clock reads", found, k->regions));
    if (!ok) {
        char *listing = sass_listing(kn->text, kn->text_size, found ? &span : NULL);
        json_object_set_new(o, "listing", listing ? json_string(listing) : json_null());
        free(listing);
    }
    return o;
}

json_t *mem_sass_check(enum mem_kernel_id id, const void *cubin, size_t size)
{
    return mem_sass_check_kernel(&mem_kernels[id], cubin, size);
}

json_t *mem_sass_check_kernel(const struct mem_kernel *k, const void *cubin, size_t size)
{
    struct cubin c;
    char err[256];
    json_t *o;
    if (!k->entry)
        return json_pack("{s:b,s:s}", "verified", 0, "error", "not a timed kernel");
    if (cubin_parse(&c, cubin, size, err, sizeof err) < 0) {
        o = json_pack("{s:b,s:s}", "verified", 0, "error", err);
    } else {
        const struct cubin_kernel *kn = cubin_kernel_find(&c, k->entry);
        o = kn ? check_kernel(k, kn)
               : json_pack("{s:b,s:s}", "verified", 0, "error", "the cubin has no such kernel");
    }
    cubin_free(&c);
    return o;
}
