/*
 * PTX of the asynchronous-copy probe's kernels (async_copy.h): one module
 * per method, size and measurement, entry "acp".
 *
 * DESIGN
 * Latency kernels time one copy and its wait between two clock64 reads; the
 * only memory instruction in that region is the copy (plus, for the bulk
 * forms, the mbarrier's expect_tx and its try_wait loop, which the SASS
 * check expects as SYNCS), so the loads that make copies dependent (the
 * word the copy wrote, added to the next address) and the stores of the
 * timings come after the closing read. Loops carry .pragma "nounroll" so
 * the timed code is one piece of machine code.
 * Bandwidth kernels are written for the copy engines' sake, not for the
 * clock: a block keeps one chunk in flight while it waits for the previous
 * one (cp.async groups: commit + wait_group 1; bulk: one mbarrier per half,
 * its phase bit flipped on each completion). Per-thread copies are
 * coalesced (thread t's k-th copy at byte (k * blockDim + t) * size); bulk
 * copies of a chunk are issued by the warp's lanes in turn after lane 0
 * announced the chunk's bytes on the half's mbarrier (expect_tx before any
 * complete_tx can reach it: bar.warp.sync between).
 * Forms checked with ptxas 13.0 for sm_90 (tests/fixtures/cubins/async):
 * the tensor map is a 64-byte aligned .param of 128 bytes whose generic
 * address (cvta.param) the tensor copy takes.
 */
#include "probes/async_copy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/gpu/cubin.h"
#include "probes/gpu/ptx.h"
#include "probes/gpu/sass.h"

static const char *const method_names[ACP_METHODS] = {"ld", "ca", "cg", "bulk", "tensor"};

const char *acp_method_name(enum acp_method m)
{
    return (unsigned)m < ACP_METHODS ? method_names[m] : NULL;
}

int acp_per_thread(enum acp_method m)
{
    return m == ACP_LD || m == ACP_CA || m == ACP_CG;
}

const char *acp_sass_op(enum acp_method m)
{
    switch (m) {
    case ACP_LD:
        return "LDG";
    case ACP_CA:
    case ACP_CG:
        return "LDGSTS";
    case ACP_BULK:
        return "UBLKCP";
    case ACP_TENSOR:
        return "UTMALDG";
    default:
        return NULL;
    }
}

int acp_size_ok(enum acp_method m, unsigned size, int lat)
{
    switch (m) {
    case ACP_LD:
    case ACP_CA:
        return size == 4 || size == 8 || size == 16;
    case ACP_CG:
        return size == 16;
    case ACP_BULK:
    case ACP_TENSOR: {
        unsigned unit = m == ACP_BULK ? 16 : ACP_ROW;
        return size >= unit && size % unit == 0 && size <= ACP_BULK_MAX && (lat || ACP_CHUNK % size == 0);
    }
    default:
        return 0;
    }
}

/* ".u32", ".v2.u32", ".v4.u32" and the register list for size bytes. */
static const char *vec_type(unsigned size)
{
    return size == 4 ? ".u32" : size == 8 ? ".v2.u32" : ".v4.u32";
}

static void vec_regs(char *buf, size_t len, unsigned size, unsigned k)
{
    if (size == 4)
        snprintf(buf, len, "%%w%u_0", k);
    else if (size == 8)
        snprintf(buf, len, "{%%w%u_0, %%w%u_1}", k, k);
    else
        snprintf(buf, len, "{%%w%u_0, %%w%u_1, %%w%u_2, %%w%u_3}", k, k, k, k);
}

static void declare_words(struct ptx *p, unsigned n, unsigned size)
{
    for (unsigned k = 0; k < n; k++)
        for (unsigned w = 0; w < size / 4; w++)
            ptx_add(p, "\t.reg .u32 %%w%u_%u;\n", k, w);
}

/* The per-thread copy of size bytes from [%a + delta] to [%sa + delta]. */
static void thread_copy(struct ptx *p, enum acp_method m, unsigned size, unsigned delta, unsigned k)
{
    char regs[96];
    if (m == ACP_LD) {
        vec_regs(regs, sizeof regs, size, k);
        ptx_add(p, "\tld.global%s %s, [%%a+%u];\n", vec_type(size), regs, delta);
    } else {
        ptx_add(p, "\tcp.async.%s.shared.global [%%sa+%u], [%%a+%u], %u;\n", m == ACP_CA ? "ca" : "cg",
                delta, delta, size);
    }
}

static void thread_store(struct ptx *p, unsigned size, unsigned delta, unsigned k)
{
    char regs[96];
    vec_regs(regs, sizeof regs, size, k);
    ptx_add(p, "\tst.shared%s [%%sa+%u], %s;\n", vec_type(size), delta, regs);
}

static void params(struct ptx *p, enum acp_method m, unsigned size, int lat)
{
    ptx_add(p, ".visible .entry acp(.param .u64 p_out, .param .u64 p_src, .param .u32 p_n,"
               " .param .u32 p_m, .param .u32 p_bytes%s)\n{\n",
            m == ACP_TENSOR ? ", .param .align 64 .b8 p_tmap[128]" : "");
    ptx_add(p, "\t.reg .pred %%p, %%q;\n"
               "\t.reg .u32 %%t, %%i, %%n, %%m, %%bytes, %%dep, %%off, %%sa, %%sb, %%dt, %%x, %%y;\n"
               "\t.reg .u32 %%c, %%cn, %%h, %%k, %%nk, %%ba, %%bb, %%ph, %%bit, %%grid, %%spin, %%late;\n"
               "\t.reg .u64 %%out, %%src, %%a, %%c0, %%c1, %%d, %%o, %%st, %%tm;\n"
               "\t.shared .align 1024 .b8 sbuf[%u];\n"
               "\t.shared .align 8 .b64 bars[2];\n",
            lat && acp_per_thread(m) ? 32 * 16 : ACP_SMEM);
    ptx_add(p, "\tld.param.u64 %%out, [p_out];\n\tcvta.to.global.u64 %%out, %%out;\n"
               "\tld.param.u64 %%src, [p_src];\n\tcvta.to.global.u64 %%src, %%src;\n"
               "\tld.param.u32 %%n, [p_n];\n\tld.param.u32 %%m, [p_m];\n"
               "\tmov.u32 %%t, %%tid.x;\n\tmov.u32 %%sb, sbuf;\n\tmov.u32 %%ba, bars;\n"
               "\tmov.u32 %%late, 0;\n");
    if (m == ACP_TENSOR)
        ptx_add(p, "\tmov.u64 %%tm, p_tmap;\n\tcvta.param.u64 %%tm, %%tm;\n");
    /* the bulk forms' size is the kernel's constant: read from the
     * parameter it was rematerialized as a constant load inside the timed
     * region (ptxas 13.0, tensor form) */
    if (acp_per_thread(m))
        ptx_add(p, "\tld.param.u32 %%bytes, [p_bytes];\n");
    else
        ptx_add(p, "\tmov.u32 %%bytes, %u;\n", size);
}

/* The bulk copy of %bytes at global %a (tensor: row %y) into shared %sa,
 * completing on mbarrier %bb. */
static void bulk_copy(struct ptx *p, enum acp_method m)
{
    if (m == ACP_BULK)
        ptx_add(p, "\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                   " [%%sa], [%%a], %%bytes, [%%bb];\n");
    else
        ptx_add(p, "\tmov.u32 %%x, 0;\n"
                   "\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                   " [%%sa], [%%tm, {%%x, %%y}], [%%bb];\n");
}

/* Waits for the phase of parity `parity` (a register) of mbarrier %bb, at
 * most ACP_SPIN_MAX failed tries: then %late is 1 and the kernel goes on
 * (the caller reports it), so a copy that never completes ends the kernel
 * instead of hanging the job. The counting runs only after a failed try. */
static void bar_wait(struct ptx *p, const char *parity)
{
    ptx_add(p, "\tmov.u32 %%spin, 0;\n"
               "$L_wait:\n\tmbarrier.try_wait.parity.shared::cta.b64 %%q, [%%bb], %s;\n"
               "\t@%%q bra $L_waited;\n"
               "\tadd.u32 %%spin, %%spin, 1;\n\tsetp.lt.u32 %%q, %%spin, %u;\n\t@%%q bra $L_wait;\n"
               "\tmov.u32 %%late, 1;\n"
               "$L_waited:\n",
            parity, ACP_SPIN_MAX);
}

static void lat_per_thread(struct ptx *p, enum acp_method m, unsigned size)
{
    declare_words(p, 1, size);
    ptx_add(p, "\tmad.lo.u32 %%sa, %%t, %u, %%sb;\n\tmov.u32 %%dep, 0;\n\tmov.u32 %%i, 0;\n"
               "$L_copy:\n\t.pragma \"nounroll\";\n"
               "\tmad.lo.u32 %%off, %%i, %%m, %%dep;\n\tmad.lo.u32 %%off, %%t, %u, %%off;\n"
               "\tcvt.u64.u32 %%a, %%off;\n\tadd.u64 %%a, %%src, %%a;\n"
               "\tmov.u64 %%c0, %%clock64;\n",
            size, size);
    thread_copy(p, m, size, 0, 0);
    if (m == ACP_LD)
        thread_store(p, size, 0, 0);
    else
        ptx_add(p, "\tcp.async.wait_all;\n");
    ptx_add(p, "\tbar.warp.sync -1;\n\tmov.u64 %%c1, %%clock64;\n");
}

static void lat_bulk(struct ptx *p, enum acp_method m)
{
    ptx_add(p, "\tsetp.ne.u32 %%p, %%t, 0;\n\t@%%p bra $L_end;\n"
               "\tmov.u32 %%sa, %%sb;\n\tmov.u32 %%bb, %%ba;\n"
               "\tmbarrier.init.shared::cta.b64 [%%bb], 1;\n\tfence.mbarrier_init.release.cluster;\n"
               "\tmov.u32 %%ph, 0;\n\tmov.u32 %%dep, 0;\n\tmov.u32 %%i, 0;\n"
               "$L_copy:\n\t.pragma \"nounroll\";\n"
               "\tmad.lo.u32 %%off, %%i, %%m, %%dep;\n\tshr.u32 %%y, %%off, 7;\n"
               "\tcvt.u64.u32 %%a, %%off;\n\tadd.u64 %%a, %%src, %%a;\n"
               "\tfence.proxy.async.shared::cta;\n"
               "\tmov.u64 %%c0, %%clock64;\n"
               "\tmbarrier.arrive.expect_tx.shared::cta.b64 %%st, [%%bb], %%bytes;\n");
    bulk_copy(p, m);
    bar_wait(p, "%ph");
    ptx_add(p, "\tmov.u64 %%c1, %%clock64;\n\txor.b32 %%ph, %%ph, 1;\n");
}

static void latency(struct ptx *p, enum acp_method m, unsigned size)
{
    if (acp_per_thread(m))
        lat_per_thread(p, m, size);
    else
        lat_bulk(p, m);
    /* after the closing clock: the word the copy wrote makes the next
     * address; lane 0's timing is kept */
    ptx_add(p, "\tld.shared.u32 %%dep, [%%sa];\n"
               "\tsub.u64 %%d, %%c1, %%c0;\n\tcvt.u32.u64 %%dt, %%d;\n"
               "\tsetp.ne.u32 %%p, %%late, 0;\n\t@%%p mov.u32 %%dt, %u;\n"
               "\tmul.wide.u32 %%o, %%i, 4;\n\tadd.u64 %%o, %%out, %%o;\n"
               "\tsetp.eq.u32 %%q, %%t, 0;\n\t@%%q st.global.u32 [%%o], %%dt;\n"
               "\t@%%p bra $L_end;\n"
               "\tadd.u32 %%i, %%i, 1;\n\tsetp.lt.u32 %%p, %%i, %%n;\n\t@%%p bra $L_copy;\n"
               "$L_end:\n\tret;\n}\n",
            ACP_LATE);
}

/* Issues chunk %c into half %h: per-thread copies (all threads). */
static void issue_per_thread(struct ptx *p, enum acp_method m, unsigned size, const char *tag)
{
    unsigned per = ACP_CHUNK / (ACP_BW_THREADS * size), step = ACP_BW_THREADS * size;
    ptx_add(p, "\trem.u32 %%off, %%c, %%m;\n\tmul.lo.u32 %%off, %%off, %u;\n"
               "\tmad.lo.u32 %%off, %%t, %u, %%off;\n"
               "\tcvt.u64.u32 %%a, %%off;\n\tadd.u64 %%a, %%src, %%a;\n"
               "\tmad.lo.u32 %%sa, %%h, %u, %%sb;\n\tmad.lo.u32 %%sa, %%t, %u, %%sa;\n",
            ACP_CHUNK, size, ACP_CHUNK, size);
    for (unsigned k = 0; k < per; k++)
        thread_copy(p, m, size, k * step, k);
    if (m == ACP_LD)
        for (unsigned k = 0; k < per; k++)
            thread_store(p, size, k * step, k);
    (void)tag;
}

/* Issues chunk %c into half %h with bulk copies of %bytes (one warp). */
static void issue_bulk(struct ptx *p, enum acp_method m, unsigned size, const char *tag)
{
    ptx_add(p, "\tmad.lo.u32 %%bb, %%h, 8, %%ba;\n"
               "\tsetp.ne.u32 %%q, %%t, 0;\n"
               "\t@!%%q mbarrier.arrive.expect_tx.shared::cta.b64 %%st, [%%bb], %u;\n"
               "\tbar.warp.sync -1;\n"
               "\tmov.u32 %%nk, %u;\n\tmov.u32 %%k, %%t;\n"
               "\tsetp.ge.u32 %%q, %%k, %%nk;\n\t@%%q bra $L_issued%s;\n"
               "$L_issue%s:\n\t.pragma \"nounroll\";\n"
               "\trem.u32 %%off, %%c, %%m;\n\tmul.lo.u32 %%off, %%off, %u;\n"
               "\tmad.lo.u32 %%off, %%k, %%bytes, %%off;\n\tshr.u32 %%y, %%off, 7;\n"
               "\tcvt.u64.u32 %%a, %%off;\n\tadd.u64 %%a, %%src, %%a;\n"
               "\tmad.lo.u32 %%sa, %%h, %u, %%sb;\n\tmad.lo.u32 %%sa, %%k, %%bytes, %%sa;\n",
            ACP_CHUNK, ACP_CHUNK / size, tag, tag, ACP_CHUNK, ACP_CHUNK);
    bulk_copy(p, m);
    ptx_add(p, "\tadd.u32 %%k, %%k, 32;\n\tsetp.lt.u32 %%q, %%k, %%nk;\n\t@%%q bra $L_issue%s;\n"
               "$L_issued%s:\n",
            tag, tag);
}

static void issue(struct ptx *p, enum acp_method m, unsigned size, const char *tag)
{
    if (acp_per_thread(m))
        issue_per_thread(p, m, size, tag);
    else
        issue_bulk(p, m, size, tag);
}

static void bandwidth(struct ptx *p, enum acp_method m, unsigned size)
{
    int bulk = !acp_per_thread(m);
    if (!bulk)
        declare_words(p, m == ACP_LD ? ACP_CHUNK / (ACP_BW_THREADS * size) : 0, size);
    ptx_add(p, "\tmov.u32 %%c, %%ctaid.x;\n\tmov.u32 %%grid, %%nctaid.x;\n\tmov.u32 %%h, 0;\n"
               "\tmov.u32 %%ph, 0;\n");
    if (bulk)
        ptx_add(p, "\tsetp.ne.u32 %%q, %%t, 0;\n"
                   "\t@!%%q mbarrier.init.shared::cta.b64 [%%ba], 1;\n"
                   "\tadd.u32 %%bb, %%ba, 8;\n\t@!%%q mbarrier.init.shared::cta.b64 [%%bb], 1;\n"
                   "\tfence.mbarrier_init.release.cluster;\n\tbar.warp.sync -1;\n");
    ptx_add(p, "\tbar.sync 0;\n\tmov.u64 %%c0, %%clock64;\n"
               "\tsetp.ge.u32 %%p, %%c, %%n;\n\t@%%p bra $L_done;\n");
    issue(p, m, size, "0");
    if (m != ACP_LD && !bulk)
        ptx_add(p, "\tcp.async.commit_group;\n");
    ptx_add(p, "$L_chunk:\n\t.pragma \"nounroll\";\n"
               "\tsetp.ge.u32 %%p, %%c, %%n;\n\t@%%p bra $L_done;\n"
               "\tadd.u32 %%cn, %%c, %%grid;\n\txor.b32 %%h, %%h, 1;\n"
               "\tsetp.ge.u32 %%p, %%cn, %%n;\n\t@%%p bra $L_skip;\n"
               "\tmov.u32 %%x, %%c;\n\tmov.u32 %%c, %%cn;\n");
    issue(p, m, size, "1");
    ptx_add(p, "\tmov.u32 %%c, %%x;\n$L_skip:\n\txor.b32 %%h, %%h, 1;\n");
    if (bulk) {
        /* wait for half h's phase, then flip the phase bit kept for it */
        ptx_add(p, "\tmad.lo.u32 %%bb, %%h, 8, %%ba;\n\tshr.b32 %%bit, %%ph, %%h;\n"
                   "\tand.b32 %%bit, %%bit, 1;\n");
        bar_wait(p, "%bit");
        ptx_add(p, "\tsetp.ne.u32 %%p, %%late, 0;\n\t@%%p bra $L_done;\n"
                   "\tshl.b32 %%bit, 1, %%h;\n\txor.b32 %%ph, %%ph, %%bit;\n");
    } else if (m != ACP_LD) {
        ptx_add(p, "\tcp.async.commit_group;\n\tcp.async.wait_group 1;\n");
    }
    ptx_add(p, "\tbar.sync 0;\n\txor.b32 %%h, %%h, 1;\n\tmov.u32 %%c, %%cn;\n\tbra $L_chunk;\n"
               "$L_done:\n");
    if (!bulk && m != ACP_LD)
        ptx_add(p, "\tcp.async.wait_all;\n");
    ptx_add(p, "\tbar.sync 0;\n\tmov.u64 %%c1, %%clock64;\n"
               "\tsetp.ne.u32 %%p, %%late, 0;\n\t@%%p mov.u64 %%c1, 0;\n"
               "\tsetp.ne.u32 %%p, %%t, 0;\n\t@%%p bra $L_end;\n"
               "\tmov.u32 %%x, %%ctaid.x;\n\tmul.wide.u32 %%o, %%x, 16;\n\tadd.u64 %%o, %%out, %%o;\n"
               "\tst.global.v2.u64 [%%o], {%%c0, %%c1};\n"
               "$L_end:\n\tret;\n}\n");
}

char *acp_ptx(enum acp_method m, unsigned size, int lat, int cc_major, int cc_minor)
{
    if ((unsigned)m >= ACP_METHODS)
        return NULL;
    if (!acp_size_ok(m, size, lat))
        return NULL;
    struct ptx p;
    ptx_init(&p);
    /* bulk copies and mbarrier tx counts need PTX ISA 8.0 and sm_90 */
    ptx_header(&p, cc_major, cc_minor);
    params(&p, m, size, lat);
    if (lat)
        latency(&p, m, size);
    else
        bandwidth(&p, m, size);
    return ptx_take(&p);
}

/* ---- checking the machine code ---------------------------------------- */

/* Loads in the region other than the copy: LDG (unless op is LDG), LDC,
 * LDL, and LDS whose destination is a register; *lds_rz the LDS RZ. */
static size_t other_loads(const struct cubin_kernel *kn, const struct sass_region *r, const char *op,
                          size_t *lds_rz)
{
    static const char *const loads[] = {"LDG", "LDC", "LDL"};
    size_t n = 0;
    char mn[SASS_MNEMONIC_MAX];
    for (size_t i = 0; i < sizeof loads / sizeof loads[0]; i++)
        if (strcmp(loads[i], op) != 0)
            n += sass_count_mnemonic(kn->text, kn->text_size, r, loads[i]);
    *lds_rz = 0;
    for (size_t i = r->first; i < r->end; i++) {
        struct sass_insn in = sass_decode(kn->text, i * SASS_INSN_BYTES);
        if (strcmp(sass_mnemonic(&in, mn), "LDS") != 0)
            continue;
        if (sass_field(&in, SASS_RD) == SASS_RZ)
            (*lds_rz)++;
        else
            n++;
    }
    return n;
}

static json_t *check_kernel(enum acp_method m, int lat, const struct cubin_kernel *kn)
{
    struct sass_region r;
    const char *op = acp_sass_op(m);
    if (sass_clock_region(kn->text, kn->text_size, 0, &r) < 0)
        return json_pack("{s:b,s:s,s:s}", "verified", 0, "opcode", op, "error",
                         "no timed region between clock reads");
    size_t found = sass_count_mnemonic(kn->text, kn->text_size, &r, op);
    size_t syncs = sass_count_mnemonic(kn->text, kn->text_size, &r, "SYNCS"), lds_rz;
    size_t other = other_loads(kn, &r, op, &lds_rz);
    int ok = (lat ? found == 1 && other == 0 : found >= 1) && (acp_per_thread(m) || syncs >= 1);
    json_t *o = json_pack("{s:b,s:s,s:I,s:I,s:I,s:I}", "verified", ok, "opcode", op, "found",
                          (json_int_t)found, "syncs", (json_int_t)syncs, "lds_rz", (json_int_t)lds_rz,
                          "other_loads", (json_int_t)other);
    if (!ok) {
        char *listing = sass_listing(kn->text, kn->text_size, &r);
        json_object_set_new(o, "listing", listing ? json_string(listing) : json_null());
        free(listing);
    }
    return o;
}

json_t *acp_sass_check(enum acp_method m, int lat, const void *cubin, size_t size)
{
    struct cubin c;
    char err[256];
    json_t *o;
    if (!acp_sass_op(m))
        return json_pack("{s:b,s:s}", "verified", 0, "error", "no such method");
    if (cubin_parse(&c, cubin, size, err, sizeof err) < 0) {
        o = json_pack("{s:b,s:s}", "verified", 0, "error", err);
    } else {
        const struct cubin_kernel *kn = cubin_kernel_find(&c, "acp");
        o = kn ? check_kernel(m, lat, kn)
               : json_pack("{s:b,s:s}", "verified", 0, "error", "the cubin has no kernel acp");
    }
    cubin_free(&c);
    return o;
}
