/*
 * The block placement probe's kernel (placement.h): each block's SM and
 * its start and end on the global timer, a spin apart.
 *
 * DESIGN
 * Only thread 0 of a block works; the block stays resident until it ends,
 * and with it the block's slot. The end is written after the spin, so a
 * block that ends before another starts is seen (the launch was not one
 * wave).
 */
#include "probes/placement.h"

#include "probes/gpu/ptx.h"

char *pl_ptx(int cc_major, int cc_minor)
{
    struct ptx p;
    ptx_init(&p);
    ptx_header(&p, cc_major, cc_minor);
    ptx_add(&p,
            ".visible .entry pl_place(.param .u64 p_out, .param .u64 p_spin)\n{\n"
            "\t.reg .pred %%p;\n"
            "\t.reg .u32 %%t, %%sm, %%b;\n"
            "\t.reg .u64 %%out, %%spin, %%t0, %%t1, %%d, %%o, %%s;\n"
            "\tmov.u32 %%t, %%tid.x;\n\tsetp.ne.u32 %%p, %%t, 0;\n\t@%%p bra $L_end;\n"
            "\tmov.u64 %%t0, %%globaltimer;\n\tmov.u32 %%sm, %%smid;\n"
            "\tld.param.u64 %%spin, [p_spin];\n"
            "$L_spin:\n"
            "\tmov.u64 %%t1, %%globaltimer;\n\tsub.u64 %%d, %%t1, %%t0;\n"
            "\tsetp.lt.u64 %%p, %%d, %%spin;\n\t@%%p bra $L_spin;\n"
            "\tld.param.u64 %%out, [p_out];\n\tcvta.to.global.u64 %%out, %%out;\n"
            "\tmov.u32 %%b, %%ctaid.x;\n\tmul.wide.u32 %%o, %%b, %d;\n\tadd.u64 %%o, %%out, %%o;\n"
            "\tcvt.u64.u32 %%s, %%sm;\n"
            "\tst.global.u64 [%%o], %%s;\n\tst.global.u64 [%%o+8], %%t0;\n"
            "\tst.global.u64 [%%o+16], %%t1;\n"
            "$L_end:\n\tret;\n}\n",
            PL_REC * 8);
    return ptx_take(&p);
}
