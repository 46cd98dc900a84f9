/*
 * The L2 partition probe's timed kernel (l2_parts.h): one thread on a chosen
 * SM times single ld.global.cg loads of the probe's lines, twice over.
 *
 * DESIGN
 * The line offsets are computed in the kernel (l2p_line_offset's two
 * ranges), not read from memory, so the only load between the two clock
 * reads is the timed one — what l2_parts_run.c checks in the cubin before it
 * trusts a number (the memory probe's region check: one LDG per region).
 * The value loaded (always 0) is stored to shared memory before the second
 * clock read, so the load has returned when the clock is read, and added
 * to the next address, so the next load cannot start earlier. The loops
 * keep their shape (nounroll): one timed region in the code.
 */
#include "probes/l2_parts.h"

#include "probes/gpu/ptx.h"

uint64_t l2p_line_offset(unsigned j)
{
    return j < L2P_CONSECUTIVE ? (uint64_t)j * 128
                               : (uint64_t)L2P_CONSECUTIVE * 128 + (uint64_t)(j - L2P_CONSECUTIVE) * L2P_SPREAD;
}

char *l2p_ptx(int cc_major, int cc_minor)
{
    struct ptx p;
    ptx_init(&p);
    ptx_header(&p, cc_major, cc_minor);
    ptx_add(&p,
            ".visible .entry l2p_time(.param .u64 p_out, .param .u64 p_base, .param .u64 p_claim,"
            " .param .u32 p_target, .param .u32 p_n)\n{\n"
            "\t.reg .pred %%p, %%q;\n"
            "\t.reg .u32 %%sm, %%t, %%c, %%n, %%j, %%pass, %%v, %%off, %%x, %%dt, %%idx, %%sink;\n"
            "\t.reg .u64 %%out, %%base, %%claim, %%a, %%c0, %%c1, %%d, %%o;\n"
            "\t.shared .align 4 .b32 sink[1];\n"
            "\tmov.u32 %%t, %%tid.x;\n\tsetp.ne.u32 %%p, %%t, 0;\n\t@%%p bra $L_end;\n"
            "\tmov.u32 %%sm, %%smid;\n\tld.param.u32 %%t, [p_target];\n"
            "\tsetp.ne.u32 %%p, %%sm, %%t;\n\t@%%p bra $L_end;\n"
            "\tld.param.u64 %%claim, [p_claim];\n\tcvta.to.global.u64 %%claim, %%claim;\n"
            "\tatom.global.cas.b32 %%c, [%%claim], 0, 1;\n"
            "\tsetp.ne.u32 %%p, %%c, 0;\n\t@%%p bra $L_end;\n"
            "\tld.param.u64 %%out, [p_out];\n\tcvta.to.global.u64 %%out, %%out;\n"
            "\tld.param.u64 %%base, [p_base];\n\tcvta.to.global.u64 %%base, %%base;\n"
            "\tld.param.u32 %%n, [p_n];\n\tmov.u32 %%sink, sink;\n"
            "\tmov.u32 %%v, 0;\n\tmov.u32 %%pass, 0;\n"
            "$L_pass:\n\t.pragma \"nounroll\";\n\tmov.u32 %%j, 0;\n"
            "$L_line:\n\t.pragma \"nounroll\";\n"
            "\tsetp.lt.u32 %%q, %%j, %d;\n"
            "\tmul.lo.u32 %%off, %%j, 128;\n"
            "\tsub.u32 %%x, %%j, %d;\n\tmul.lo.u32 %%x, %%x, %d;\n\tadd.u32 %%x, %%x, %d;\n"
            "\tselp.u32 %%off, %%off, %%x, %%q;\n\tadd.u32 %%off, %%off, %%v;\n"
            "\tcvt.u64.u32 %%a, %%off;\n\tadd.u64 %%a, %%base, %%a;\n"
            "\tmov.u64 %%c0, %%clock64;\n"
            "\tld.global.cg.u32 %%v, [%%a];\n"
            "\tst.shared.u32 [%%sink], %%v;\n"
            "\tmov.u64 %%c1, %%clock64;\n"
            "\tsub.u64 %%d, %%c1, %%c0;\n\tcvt.u32.u64 %%dt, %%d;\n"
            "\tmad.lo.u32 %%idx, %%pass, %%n, %%j;\n\tmul.wide.u32 %%o, %%idx, 4;\n"
            "\tadd.u64 %%o, %%out, %%o;\n\tst.global.u32 [%%o], %%dt;\n"
            "\tadd.u32 %%j, %%j, 1;\n\tsetp.lt.u32 %%p, %%j, %%n;\n\t@%%p bra $L_line;\n"
            "\tadd.u32 %%pass, %%pass, 1;\n\tsetp.lt.u32 %%p, %%pass, 2;\n\t@%%p bra $L_pass;\n"
            "\tshl.b32 %%idx, %%n, 1;\n\tmul.wide.u32 %%o, %%idx, 4;\n\tadd.u64 %%o, %%out, %%o;\n"
            "\tst.global.u32 [%%o], %%sm;\n"
            "$L_end:\n\tret;\n}\n",
            L2P_CONSECUTIVE, L2P_CONSECUTIVE, L2P_SPREAD, L2P_CONSECUTIVE * 128);
    return ptx_take(&p);
}
