/*
 * The L1 set search's one kernel of its own (l1_sets.h): "link", which
 * turns a list of offsets into the pointer ring the memory probe's chase
 * kernels follow. The timed kernels are the memory probe's chase_ca and
 * chase_cg (memory_ptx.c), built again by l1_sets_run.c.
 *
 * DESIGN
 * The search times arbitrary lists (a conflict set plus one address), not
 * a permutation of evenly spaced elements, so the memory probe's "build"
 * kernel (element i at base + i x stride) does not serve: here thread i of
 * a grid-stride loop writes, at base + offs[i], the global address
 * base + offs[i + 1] (the last element points back to the first). Like
 * "build", the pointers are global-space addresses, what ld.global takes.
 * The kernel is not timed; a chase that does not end where the host
 * expects reports the list as not followed (l1_sets_run.c).
 */
#include "probes/l1_sets.h"

#include "probes/gpu/ptx.h"

char *l1s_link_ptx(int cc_major, int cc_minor)
{
    struct ptx p;
    ptx_init(&p);
    ptx_header(&p, cc_major, cc_minor);
    ptx_add(&p, ".visible .entry link(.param .u64 p_base, .param .u64 p_offs, .param .u32 p_n)\n"
                "{\n"
                "\t.reg .pred %%p;\n"
                "\t.reg .u32 %%i, %%j, %%n, %%w, %%t, %%step;\n"
                "\t.reg .u64 %%gbase, %%offs, %%off, %%a, %%o, %%v;\n"
                "\tld.param.u64 %%gbase, [p_base];\n\tcvta.to.global.u64 %%gbase, %%gbase;\n"
                "\tld.param.u64 %%offs, [p_offs];\n\tcvta.to.global.u64 %%offs, %%offs;\n"
                "\tld.param.u32 %%n, [p_n];\n"
                "\tmov.u32 %%i, %%ctaid.x;\n\tmov.u32 %%w, %%ntid.x;\n\tmov.u32 %%t, %%tid.x;\n"
                "\tmad.lo.u32 %%i, %%i, %%w, %%t;\n\tmov.u32 %%t, %%nctaid.x;\n"
                "\tmul.lo.u32 %%step, %%t, %%w;\n"
                "\tsetp.ge.u32 %%p, %%i, %%n;\n\t@%%p bra $L_end;\n"
                "$L_link:\n"
                "\tadd.u32 %%j, %%i, 1;\n\tsetp.ge.u32 %%p, %%j, %%n;\n"
                "\tselp.u32 %%j, 0, %%j, %%p;\n"
                "\tmul.wide.u32 %%off, %%i, 8;\n\tadd.u64 %%a, %%offs, %%off;\n"
                "\tld.global.u64 %%o, [%%a];\n"
                "\tmul.wide.u32 %%off, %%j, 8;\n\tadd.u64 %%a, %%offs, %%off;\n"
                "\tld.global.u64 %%v, [%%a];\n"
                "\tadd.u64 %%a, %%gbase, %%o;\n\tadd.u64 %%v, %%gbase, %%v;\n"
                "\tst.global.u64 [%%a], %%v;\n"
                "\tadd.u32 %%i, %%i, %%step;\n\tsetp.lt.u32 %%p, %%i, %%n;\n"
                "\t@%%p bra $L_link;\n"
                "$L_end:\n\tret;\n}\n");
    return ptx_take(&p);
}
