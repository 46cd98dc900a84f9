/*
 * PTX for the latency probe: one latency module and one throughput module
 * per catalog entry, generated from the entry's one-step template
 * (see latency.h for the kernels' shape).
 *
 * Inputs come from a buffer the host fills (latency.c), never from
 * constants, so the compiler cannot fold a chain away; every chain's final
 * value is stored, so none is dead.
 *
 * Warpgroup (wgmma) entries use the same kernels with these differences:
 * a .target sm_90a header; WG_SMEM_BYTES of shared memory zero-filled
 * (zeros: no NaN or denormal can change the timing), made visible to the
 * tensor cores' async proxy (fence.proxy.async) before the first wgmma; A
 * at its start and B 2048 bytes on, both K-major without swizzle (core
 * matrices of 8 rows x 16 bytes: 128 bytes apart along K, the leading
 * byte offset, 256 along M or N, the stride byte offset); wgmma.fence
 * before each pass or loop (the accumulator was last written by ordinary
 * instructions); the latency step followed by commit_group + wait_group 0;
 * the throughput loop one accumulator, WG_TPUT_UNROLL wgmmas a commit
 * group, wait_group 1 (two groups in flight), wait_group 0 after it; every
 * accumulator register folded into the stored one, so none is dead.
 */
#include <stdio.h>
#include <string.h>

#include "probes/latency.h"

/* One 32-bit word per thread and chain: 8 KiB for a 256-thread block, so
 * shared memory never limits how many blocks fit on an SM. */
#define SHARED_WORDS (TPUT_THREADS * TPUT_CHAINS)

static const char *reg_type(enum lat_type t)
{
    static const char *const names[] = {".f32", ".b32", ".f64", ".u32", ".u64", ".s32"};
    return names[t];
}

int lat_is_warpgroup(const struct lat_entry *e)
{
    return e->mma && e->mma->warpgroup;
}

int lat_block_threads(const struct lat_entry *e, int tput)
{
    return lat_is_warpgroup(e) ? WG_THREADS : tput ? TPUT_THREADS : 32;
}

int lat_tput_steps(const struct lat_entry *e)
{
    return lat_is_warpgroup(e) ? WG_TPUT_UNROLL : TPUT_CHAINS * TPUT_UNROLL;
}

int lat_region_expect(const struct lat_entry *e, int region)
{
    static const int steps[LAT_REGIONS] = {0, 1, 2, LAT_N1, LAT_N2};
    static const int wg_steps[LAT_REGIONS] = {0, 1, 2, WG_N1, WG_N2};
    return (lat_is_warpgroup(e) ? wg_steps : steps)[region] * e->per_step;
}

int lat_chain_span(const struct lat_entry *e)
{
    return lat_is_warpgroup(e) ? WG_N2 - WG_N1 : LAT_N2 - LAT_N1;
}

void lat_fill_inputs(const struct lat_entry *e, unsigned char in[LAT_INPUT_BYTES])
{
    memset(in, 0, LAT_INPUT_BYTES);
    unsigned u = 3;
    memcpy(in + 24, &u, 4);
    for (int k = -2; k < TPUT_CHAINS; k++) { /* k = -2, -1: the y and z operands */
        unsigned char *slot = k < 0 ? in + 8 * (k + 3) : in + 32 + 8 * k;
        double d = k < 0 ? (k == -2 ? 1.0 : 0.5) : 1.0 + k;
        float f = (float)d;
        unsigned h = k == -2 ? 0x3C003C00u : k == -1 ? 0x38003800u : 0x3C003C00u + (unsigned)k;
        unsigned long long n = k == -2 ? 3 : k == -1 ? 0x3210 : (unsigned long long)(1 + k);
        switch (e->xt) {
        case LT_F32: memcpy(slot, &f, 4); break;
        case LT_F16X2: memcpy(slot, &h, 4); break;
        case LT_F64: memcpy(slot, &d, 8); break;
        case LT_U32:
        case LT_S32: { unsigned v = (unsigned)n; memcpy(slot, &v, 4); break; }
        case LT_U64: memcpy(slot, &n, 8); break;
        }
    }
}

/* "{R, R_1, ..., R_(n-1)}" for a register R (n = 1: "{R}"); "{Pa0, ...}"
 * when the names are P0, P1 ... (R NULL). */
static void vector_text(char *buf, size_t len, const char *r, const char *prefix, int n)
{
    size_t at = (size_t)snprintf(buf, len, "{");
    for (int i = 0; i < n && at < len; i++)
        at += (size_t)(r ? (i ? snprintf(buf + at, len - at, ", %s_%d", r, i) : snprintf(buf + at, len - at, "%s", r))
                         : snprintf(buf + at, len - at, "%s%s%d", i ? ", " : "", prefix, i));
    if (at < len)
        snprintf(buf + at, len - at, "}");
}

static void add_step(struct ptx *p, const struct lat_entry *e, const char *x, const char *t,
                     const char *s, const char *g)
{
    char d[1400] = "", a[96] = "", b[96] = "";
    if (e->mma) {
        vector_text(d, sizeof d, x, NULL, e->mma->d);
        vector_text(a, sizeof a, NULL, "%fa", e->mma->a);
        vector_text(b, sizeof b, NULL, "%fb", e->mma->b);
    }
    if (lat_is_warpgroup(e)) { /* descriptors, or A's registers */
        if (!e->mma->a)
            snprintf(a, sizeof a, "%%da");
        snprintf(b, sizeof b, "%%db");
    }
    const char *keys[] = {"x", "y", "z", "u", "t", "s", "g", "d", "a", "b", "c"};
    const char *vals[] = {x, "%y", "%z", "%u", t, s, g, d, a, b, "%scd"};
    ptx_add(p, "\t");
    ptx_expand(p, e->ptx, keys, vals, 11);
    ptx_add(p, "\n");
}

/* The wgmma operands: zeros in shared memory, each thread storing words
 * ntid x 4 bytes apart, fenced for the async proxy that the tensor cores
 * read through; the descriptors of A (at wg) and B (2048 bytes on); the
 * scale-d predicate a constant true: HGMMA reads a uniform predicate, and
 * one computed from an input cost an instruction before every HGMMA
 * (ptxas 13.0; operation 0x086, VOTEU if the uniform datapath's +0x80
 * convention holds: not yet checked against cuobjdump), in the chain that
 * D = A x B + D does not need. */
static void warpgroup_operands(struct ptx *p)
{
    ptx_add(p, "\tmov.u32 %%zp, wg;\n\tadd.u32 %%ze, %%zp, %d;\n\tshl.b32 %%w, %%me, 2;\n"
               "\tadd.u32 %%zp, %%zp, %%w;\n\tshl.b32 %%w, %%nt, 2;\n$L_zero:\n"
               "\tst.shared.u32 [%%zp], 0;\n\tadd.u32 %%zp, %%zp, %%w;\n"
               "\tsetp.lt.u32 %%p, %%zp, %%ze;\n\t@%%p bra $L_zero;\n"
               "\tfence.proxy.async.shared::cta;\n", WG_SMEM_BYTES);
    /* start address >> 4 in bits 0-13, leading byte offset 128 >> 4 in
     * 16-29, stride byte offset 256 >> 4 in 32-45, no swizzle (62-63) */
    ptx_add(p, "\tmov.u32 %%w, wg;\n\tcvt.u64.u32 %%da, %%w;\n\tshr.u64 %%da, %%da, 4;\n"
               "\tand.b64 %%da, %%da, 0x3fff;\n\tor.b64 %%da, %%da, 0x%016llx;\n"
               "\tadd.u64 %%db, %%da, %d;\n\tsetp.ne.u32 %%scd, 1, 0;\n",
            (256ULL >> 4) << 32 | (128ULL >> 4) << 16, 2048 >> 4);
}

/* Addresses every kernel sets up: this thread's shared word(s), which hold
 * their own address (so a load chain through them is a fixed point), and its
 * global word(s). */
static void common_prologue(struct ptx *p, const struct lat_entry *e, int chains)
{
    ptx_add(p, "\tld.param.u64 %%in, [p_in];\n\tcvta.to.global.u64 %%in, %%in;\n"
               "\tld.param.u64 %%out, [p_out];\n\tcvta.to.global.u64 %%out, %%out;\n"
               "\tld.param.u64 %%gbase, [p_glob];\n\tcvta.to.global.u64 %%gbase, %%gbase;\n"
               "\tmov.u32 %%me, %%tid.x;\n\tmov.u32 %%sbase, sm;\n");
    /* Chain k of thread t uses shared word k*threads + t (consecutive lanes,
     * consecutive banks: no conflicts) and global slot k*all_threads + gtid. */
    ptx_add(p, "\tmov.u32 %%nt, %%ntid.x;\n\tmov.u32 %%w, %%ctaid.x;\n"
               "\tmad.lo.u32 %%gtid, %%w, %%nt, %%me;\n\tmov.u32 %%w, %%nctaid.x;\n"
               "\tmul.lo.u32 %%all, %%w, %%nt;\n");
    for (int k = 0; k < chains; k++) {
        ptx_add(p, "\tmad.lo.u32 %%w, %%nt, %d, %%me;\n\tshl.b32 %%w, %%w, 2;\n", k);
        ptx_add(p, "\tadd.u32 %%s%d, %%sbase, %%w;\n\tst.shared.u32 [%%s%d], %%s%d;\n", k, k, k);
        ptx_add(p, "\tmad.lo.u32 %%w, %%all, %d, %%gtid;\n\tmul.wide.u32 %%wide, %%w, 8;\n"
                   "\tadd.u64 %%g%d, %%gbase, %%wide;\n", k, k);
    }
    /* The host stores 0 at in+28. Adding (thread id AND that zero) to the
     * input address changes nothing at run time but makes every operand a
     * per-thread value to the compiler, which would otherwise move uniform
     * operands onto the uniform datapath (UIADD3, UPOPC, ...) or fold them. */
    ptx_add(p, "\tld.global.u32 %%w, [%%in+28];\n\tand.b32 %%w, %%w, %%me;\n"
               "\tmul.wide.u32 %%wide, %%w, 8;\n\tadd.u64 %%in, %%in, %%wide;\n");
    if (lat_is_warpgroup(e))
        warpgroup_operands(p);
    ptx_add(p, "\tbar.sync 0;\n\tld.global%s %%y, [%%in+8];\n\tld.global%s %%z, [%%in+16];\n"
               "\tld.global.u32 %%u, [%%in+24];\n", reg_type(e->xt), reg_type(e->xt));
    /* the A and B operands: {y}'s bits (its low half for narrower registers) */
    for (int i = 0; e->mma && i < e->mma->a + e->mma->b; i++) { /* {y} is as wide as they are */
        int is_a = i < e->mma->a;
        ptx_add(p, "\tmov.b%d %%f%c%d, %%y;\n", e->mma->t == LT_F64 ? 64 : 32, is_a ? 'a' : 'b',
                is_a ? i : i - e->mma->a);
    }
}

static void declare(struct ptx *p, const struct lat_entry *e, int chains)
{
    ptx_add(p, "\t.reg .pred %%p;\n\t.reg .u32 %%pass, %%me, %%sbase, %%w, %%u, %%iter, %%n, %%nt, %%gtid, %%all;\n"
               "\t.reg .u64 %%in, %%out, %%gbase, %%wide, %%c0, %%c1, %%d, %%gt0, %%gt1;\n"
               "\t.reg %s %%y, %%z;\n", reg_type(e->xt));
    for (int k = 0; k < chains; k++) {
        ptx_add(p, "\t.reg %s %%x%d;\n\t.reg %s %%t%d;\n\t.reg .u32 %%s%d;\n\t.reg .u64 %%g%d;\n",
                reg_type(e->xt), k, reg_type(e->tt), k, k, k);
        for (int i = 1; e->mma && i < e->mma->d; i++)
            ptx_add(p, "\t.reg %s %%x%d_%d;\n", reg_type(e->xt), k, i);
    }
    for (int i = 0; e->mma && i < e->mma->a; i++)
        ptx_add(p, "\t.reg %s %%fa%d;\n", reg_type(e->mma->t), i);
    for (int i = 0; e->mma && i < e->mma->b; i++)
        ptx_add(p, "\t.reg %s %%fb%d;\n", reg_type(e->mma->t), i);
    ptx_add(p, "\t.shared .align 8 .b32 sm[%d];\n", SHARED_WORDS);
    if (lat_is_warpgroup(e))
        ptx_add(p, "\t.reg .pred %%scd;\n\t.reg .u32 %%zp, %%ze;\n\t.reg .u64 %%da, %%db;\n"
                   "\t.shared .align 128 .b8 wg[%d];\n", WG_SMEM_BYTES);
}

/* A warpgroup entry folds every accumulator register of chain k into the
 * first, which is stored, so no part of a wgmma's result is dead. */
static void fold_accumulator(struct ptx *p, const struct lat_entry *e, int k)
{
    for (int i = 1; lat_is_warpgroup(e) && i < e->mma->d; i++)
        ptx_add(p, "\txor.b32 %%x%d, %%x%d, %%x%d_%d;\n", k, k, k, i);
}

/* Loads chain k's start value, or points it at its own shared word when
 * the step chases through {x}. */
static void init_chain(struct ptx *p, const struct lat_entry *e, int k)
{
    if (strstr(e->ptx, "[{x}]"))
        ptx_add(p, "\tmov.u32 %%x%d, %%s%d;\n", k, k);
    else
        ptx_add(p, "\tld.global%s %%x%d, [%%in+%d];\n", reg_type(e->xt), k, 32 + 8 * k);
    for (int i = 1; e->mma && i < e->mma->d; i++) /* the accumulator's other registers */
        ptx_add(p, "\tmov%s %%x%d_%d, %%x%d;\n", reg_type(e->xt), k, i, k);
}

static void chain_regs(int k, char x[8], char t[8], char s[8], char g[8])
{
    snprintf(x, 8, "%%x%d", k);
    snprintf(t, 8, "%%t%d", k);
    snprintf(s, 8, "%%s%d", k);
    snprintf(g, 8, "%%g%d", k);
}

static void timed_region(struct ptx *p, const struct lat_entry *e, int region)
{
    char x[8], t[8], s[8], g[8];
    chain_regs(0, x, t, s, g);
    ptx_add(p, "\t// region %d\n\tmov.u64 %%c0, %%clock64;\n", region);
    for (int i = 0; i < lat_region_expect(e, region) / e->per_step; i++) {
        add_step(p, e, x, t, s, g);
        if (lat_is_warpgroup(e)) /* the result readable before the next step */
            ptx_add(p, "\twgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 0;\n");
    }
    ptx_add(p, "\tmov.u64 %%c1, %%clock64;\n\tsub.s64 %%d, %%c1, %%c0;\n"
               "\tst.global.u64 [%%out+%d], %%d;\n", 8 * region);
}

char *lat_ptx_latency(const struct lat_entry *e, int cc_major, int cc_minor)
{
    struct ptx p;
    ptx_init(&p);
    ptx_header_arch(&p, cc_major, cc_minor, e->ptx_version, lat_is_warpgroup(e));
    ptx_add(&p, ".visible .entry lat(.param .u64 p_out, .param .u64 p_in, .param .u64 p_glob)\n{\n");
    declare(&p, e, 1);
    common_prologue(&p, e, 1);
    init_chain(&p, e, 0);
    ptx_add(&p, "\tmov.u32 %%pass, 0;\n$L_pass:\n");
    if (lat_is_warpgroup(e))
        ptx_add(&p, "\twgmma.fence.sync.aligned;\n");
    for (int r = 0; r < LAT_REGIONS; r++)
        timed_region(&p, e, r);
    ptx_add(&p, "\tadd.u32 %%pass, %%pass, 1;\n\tsetp.lt.u32 %%p, %%pass, 2;\n\t@%%p bra $L_pass;\n");
    fold_accumulator(&p, e, 0);
    ptx_add(&p, "\tst.global%s [%%out+64], %%x0;\n\tret;\n}\n", reg_type(e->xt));
    return ptx_take(&p);
}

/* Thread 0 of each block records clock64 and %globaltimer at slot 0/1
 * (start) or 2/3 (end) of its block's four words. */
static void stamp(struct ptx *p, int end)
{
    ptx_add(p, "\tbar.sync 0;\n\tsetp.ne.u32 %%p, %%me, 0;\n\t@%%p bra $L_stamp%d;\n"
               "\tmov.u64 %%c0, %%clock64;\n\tmov.u64 %%gt0, %%globaltimer;\n"
               "\tmov.u32 %%w, %%ctaid.x;\n\tmul.wide.u32 %%wide, %%w, 32;\n"
               "\tadd.u64 %%wide, %%out, %%wide;\n"
               "\tst.global.u64 [%%wide+%d], %%c0;\n\tst.global.u64 [%%wide+%d], %%gt0;\n"
               "$L_stamp%d:\n",
            end, end ? 16 : 0, end ? 24 : 8, end);
}

char *lat_ptx_throughput(const struct lat_entry *e, int cc_major, int cc_minor)
{
    struct ptx p;
    char x[8], t[8], s[8], g[8];
    int wg = lat_is_warpgroup(e), chains = wg ? 1 : TPUT_CHAINS, unroll = wg ? WG_TPUT_UNROLL : TPUT_UNROLL;
    ptx_init(&p);
    ptx_header_arch(&p, cc_major, cc_minor, e->ptx_version, wg);
    ptx_add(&p, ".visible .entry tput(.param .u64 p_out, .param .u64 p_in, .param .u64 p_glob,"
                " .param .u32 p_iters)\n{\n");
    declare(&p, e, chains);
    common_prologue(&p, e, chains);
    for (int k = 0; k < chains; k++)
        init_chain(&p, e, k);
    ptx_add(&p, "\tld.param.u32 %%n, [p_iters];\n\tmov.u32 %%iter, 0;\n");
    if (wg)
        ptx_add(&p, "\twgmma.fence.sync.aligned;\n");
    stamp(&p, 0);
    ptx_add(&p, "$L_loop:\n");
    for (int u = 0; u < unroll; u++)
        for (int k = 0; k < chains; k++) {
            chain_regs(k, x, t, s, g);
            add_step(&p, e, x, t, s, g);
        }
    if (wg) /* this group in flight while the next is issued */
        ptx_add(&p, "\twgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 1;\n");
    ptx_add(&p, "\tadd.u32 %%iter, %%iter, 1;\n\tsetp.lt.u32 %%p, %%iter, %%n;\n"
                "\t@%%p bra $L_loop;\n");
    if (wg)
        ptx_add(&p, "\twgmma.wait_group.sync.aligned 0;\n");
    stamp(&p, 1);
    /* every chain's result goes somewhere, so none is dead */
    for (int k = 0; k < chains; k++) {
        fold_accumulator(&p, e, k);
        ptx_add(&p, "\tst.global%s [%%g%d], %%x%d;\n", reg_type(e->xt), k, k);
    }
    ptx_add(&p, "\tret;\n}\n");
    return ptx_take(&p);
}
