/*
 * The distributed-shared-memory kernels (dsmem.h): one module per cluster
 * size, a latency chase and a bandwidth stream through the cluster's
 * shared-memory window.
 *
 * DESIGN
 * Every block fills its ring with cluster-window addresses (its own ring
 * mapped with mapa to its own rank: the address any block of the cluster
 * reads it at), so a chase step is one ld.shared::cluster whose address is
 * the previous load's value, nothing else, as in the memory probe's chases.
 * ptxas turns the 32-bit window address into a generic one (the shared
 * window's high half, SR_SWINHI, read once, and two MOVs a step) and the
 * load into a generic LD (sass.c's opcode 0x180); both the local and the
 * remote chase pay the same MOVs, so their difference is the network's.
 * Both loops keep their shape (nounroll), so the timed region holds
 * DSM_UNROLL loads, what dsmem_run.c checks in the cubin. Both kernels end
 * on the cluster barrier: no block leaves while another may still read its
 * shared memory. Every block reports the %cluster_nctarank and %smid it
 * saw, so the host can tell a cluster the driver made from one it did not,
 * and blocks that shared an SM.
 */
#include "probes/dsmem.h"

#include "probes/gpu/ptx.h"
#include "probes/memory.h"

const unsigned dsm_sizes[DSM_SIZES] = {2, 4, 8, 16};

/* ld.shared::cluster compiles to a generic LD (sass.c's 0x180) on sm_90,
 * as the fixture tests/fixtures/ptx/dsmem_4.sm_90.cubin shows; the
 * modifiers are not decoded, so "LD.E..." is what is expected, unchecked. */
const struct mem_kernel dsm_lat_kernel = {"dsm_lat", "dsm_lat", "ld.shared::cluster.u32", "LD", "LD.E", 1,
                                          {DSM_UNROLL, 0, 0}};
const struct mem_kernel dsm_bw_kernel = {"dsm_bw", "dsm_bw", "ld.volatile.shared::cluster.v4.u32", "LD",
                                         "LD.E.128", 1, {DSM_BW_LOADS, 0, 0}};

unsigned dsm_next(unsigned i)
{
    return ((i * 97u + 1u) % DSM_RING_WORDS) * 4u;
}

/* Every thread of the block fills its share of the ring (word i: the window
 * address of word dsm_next(i) / 4); then the cluster waits until every ring
 * is whole. */
static void fill_ring(struct ptx *p)
{
    ptx_add(p, "\tmov.u32 %%rank, %%cluster_ctarank;\n"
               "\tmapa.shared::cluster.u32 %%own, %%ring, %%rank;\n"
               "\tmov.u32 %%i, %%tid.x;\n\tmov.u32 %%nt, %%ntid.x;\n$L_fill:\n"
               "\tsetp.ge.u32 %%p, %%i, %d;\n\t@%%p bra $L_filled;\n"
               "\tmad.lo.u32 %%v, %%i, 97, 1;\n\tand.b32 %%v, %%v, %d;\n\tshl.b32 %%v, %%v, 2;\n"
               "\tadd.u32 %%v, %%v, %%own;\n"
               "\tshl.b32 %%a, %%i, 2;\n\tadd.u32 %%a, %%a, %%ring;\n\tst.shared.u32 [%%a], %%v;\n"
               "\tadd.u32 %%i, %%i, %%nt;\n\tbra $L_fill;\n$L_filled:\n"
               "\tbarrier.cluster.arrive;\n\tbarrier.cluster.wait;\n",
            DSM_RING_WORDS, DSM_RING_WORDS - 1);
}

static const char regs[] = "\t.reg .pred %p;\n"
                           "\t.reg .u32 %rank, %n, %t, %i, %nt, %v, %a, %base, %x, %trips, %tgt, %ring,"
                           " %pass, %own, %sm;\n"
                           "\t.reg .u32 %w0, %w1, %w2, %w3, %acc;\n"
                           "\t.reg .u64 %out, %c0, %c1, %d, %o;\n";

/* %out: the global output; thread 0 of every block stores its %smid at
 * word slot + rank. */
static void load_out(struct ptx *p)
{
    ptx_add(p, "\tld.param.u64 %%out, [p_out];\n\tcvta.to.global.u64 %%out, %%out;\n");
}

static void chase(struct ptx *p, unsigned cluster)
{
    ptx_add(p, ".visible .entry dsm_lat(.param .u64 p_out, .param .u32 p_target, .param .u32 p_trips)\n"
               ".reqnctapercluster %u, 1, 1\n{\n%s"
               "\t.shared .align 4 .b32 ring[%d];\n"
               "\tmov.u32 %%ring, ring;\n",
            cluster, regs, DSM_RING_WORDS);
    fill_ring(p);
    load_out(p);
    ptx_add(p, "\tmov.u32 %%t, %%tid.x;\n\tsetp.ne.u32 %%p, %%t, 0;\n\t@%%p bra $L_smid;\n"
               "\tmov.u32 %%sm, %%smid;\n\tadd.u32 %%v, %%rank, 3;\n\tmul.wide.u32 %%o, %%v, 8;\n"
               "\tadd.u64 %%o, %%out, %%o;\n\tcvt.u64.u32 %%d, %%sm;\n\tst.global.u64 [%%o], %%d;\n"
               "$L_smid:\n"
               "\tor.b32 %%v, %%rank, %%t;\n\tsetp.ne.u32 %%p, %%v, 0;\n\t@%%p bra $L_done;\n"
               "\tld.param.u32 %%tgt, [p_target];\n\tld.param.u32 %%trips, [p_trips];\n"
               "\tmapa.shared::cluster.u32 %%base, %%ring, %%tgt;\n"
               "\tmov.u32 %%x, %%base;\n\tmov.u32 %%pass, 0;\n$L_pass:\n"
               "\t.pragma \"nounroll\";\n"
               "\tmov.u32 %%i, %%trips;\n\tmov.u64 %%c0, %%clock64;\n$L_chase:\n"
               "\t.pragma \"nounroll\";\n");
    for (int k = 0; k < DSM_UNROLL; k++)
        ptx_add(p, "\tld.shared::cluster.u32 %%x, [%%x];\n");
    ptx_add(p, "\tsub.u32 %%i, %%i, 1;\n\tsetp.ne.u32 %%p, %%i, 0;\n\t@%%p bra $L_chase;\n"
               "\tmov.u64 %%c1, %%clock64;\n"
               "\tadd.u32 %%pass, %%pass, 1;\n\tsetp.lt.u32 %%p, %%pass, 2;\n\t@%%p bra $L_pass;\n"
               "\tsub.u64 %%d, %%c1, %%c0;\n"
               "\tst.global.u64 [%%out], %%d;\n\tcvt.u64.u32 %%o, %%x;\n\tst.global.u64 [%%out+8], %%o;\n"
               "\tmov.u32 %%n, %%cluster_nctarank;\n\tcvt.u64.u32 %%o, %%n;\n\tst.global.u64 [%%out+16], %%o;\n"
               "$L_done:\n\tbarrier.cluster.arrive;\n\tbarrier.cluster.wait;\n\tret;\n}\n\n");
}

static void stream(struct ptx *p, unsigned cluster)
{
    ptx_add(p, ".visible .entry dsm_bw(.param .u64 p_out, .param .u32 p_dist, .param .u32 p_trips)\n"
               ".reqnctapercluster %u, 1, 1\n{\n%s"
               "\t.shared .align 16 .b32 ring[%d];\n"
               "\tmov.u32 %%ring, ring;\n",
            cluster, regs, DSM_RING_WORDS);
    fill_ring(p);
    /* the ring dist ranks on; each thread its own 16-byte word of it */
    ptx_add(p, "\tmov.u32 %%n, %%cluster_nctarank;\n"
               "\tld.param.u32 %%tgt, [p_dist];\n\tadd.u32 %%tgt, %%tgt, %%rank;\n"
               "\trem.u32 %%tgt, %%tgt, %%n;\n"
               "\tmapa.shared::cluster.u32 %%base, %%ring, %%tgt;\n"
               "\tmov.u32 %%t, %%tid.x;\n\tshl.b32 %%a, %%t, 4;\n\tand.b32 %%a, %%a, %d;\n"
               "\tadd.u32 %%a, %%a, %%base;\n\tld.param.u32 %%trips, [p_trips];\n"
               "\tmov.u32 %%acc, 0;\n\tbar.sync 0;\n\tmov.u64 %%c0, %%clock64;\n"
               "\tmov.u32 %%i, %%trips;\n$L_bw:\n\t.pragma \"nounroll\";\n",
            DSM_RING_WORDS * 4 - 1);
    for (int k = 0; k < DSM_BW_LOADS; k++)
        ptx_add(p, "\tld.volatile.shared::cluster.v4.u32 {%%w0, %%w1, %%w2, %%w3}, [%%a];\n"
                   "\txor.b32 %%acc, %%acc, %%w%d;\n", k % 4);
    ptx_add(p, "\tsub.u32 %%i, %%i, 1;\n\tsetp.ne.u32 %%p, %%i, 0;\n\t@%%p bra $L_bw;\n"
               "\tbar.sync 0;\n\tmov.u64 %%c1, %%clock64;\n");
    load_out(p);
    /* never true (window addresses are multiples of 4), so the loads stay */
    ptx_add(p, "\tsetp.eq.u32 %%p, %%acc, 1;\n\t@%%p st.global.u32 [%%out], %%acc;\n"
               "\tsetp.ne.u32 %%p, %%t, 0;\n\t@%%p bra $L_end;\n"
               "\tmul.wide.u32 %%o, %%rank, 24;\n\tadd.u64 %%o, %%out, %%o;\n"
               "\tsub.u64 %%d, %%c1, %%c0;\n\tst.global.u64 [%%o], %%d;\n"
               "\tcvt.u64.u32 %%d, %%n;\n\tst.global.u64 [%%o+8], %%d;\n"
               "\tmov.u32 %%sm, %%smid;\n\tcvt.u64.u32 %%d, %%sm;\n\tst.global.u64 [%%o+16], %%d;\n"
               "$L_end:\n\tbarrier.cluster.arrive;\n\tbarrier.cluster.wait;\n\tret;\n}\n");
}

char *dsm_ptx(int cc_major, int cc_minor, unsigned cluster)
{
    struct ptx p;
    ptx_init(&p);
    /* PTX ISA 7.8 brought clusters (mapa, ld.shared::cluster); 8.0 has them */
    ptx_header(&p, cc_major, cc_minor);
    chase(&p, cluster);
    stream(&p, cluster);
    return ptx_take(&p);
}
