/*
 * The instruction catalog of the latency probe: one row per instruction.
 * A step must depend on the previous step through {x}, so a chain of steps
 * is a chain of true dependencies. Conversions reinterpret their result
 * (mov.b32/b64 costs no instruction) so that the chain closes on one type.
 * The expected SASS opcodes are what ptxas emits for sm_90; where a step
 * needs more than one instruction the row says so (per_step), and the
 * runner reports per step.
 */
#include <string.h>

#include "probes/latency.h"

const struct lat_entry lat_catalog[] = {
    {"fadd", "fp32", "add.f32 {x}, {x}, {y};", LT_F32, LT_F32, "FADD", 1, NULL},
    {"fmul", "fp32", "mul.f32 {x}, {x}, {y};", LT_F32, LT_F32, "FMUL", 1, NULL},
    {"ffma", "fp32", "fma.rn.f32 {x}, {x}, {y}, {z};", LT_F32, LT_F32, "FFMA", 1, NULL},
    {"fmin", "fp32", "min.f32 {x}, {x}, {y};", LT_F32, LT_F32, "FMNMX", 1, NULL},
    {"fmax", "fp32", "max.f32 {x}, {x}, {y};", LT_F32, LT_F32, "FMNMX", 1, NULL},
    {"hadd2", "fp16", "add.rn.f16x2 {x}, {x}, {y};", LT_F16X2, LT_F16X2, "HADD2|HFMA2", 1,
     "ptxas issues every other f16x2 add as HFMA2 (x*1+y) to balance the two pipes"},
    {"hfma2", "fp16", "fma.rn.f16x2 {x}, {x}, {y}, {z};", LT_F16X2, LT_F16X2, "HFMA2", 1, NULL},
    {"dadd", "fp64", "add.f64 {x}, {x}, {y};", LT_F64, LT_F64, "DADD", 1, NULL},
    {"dfma", "fp64", "fma.rn.f64 {x}, {x}, {y}, {z};", LT_F64, LT_F64, "DFMA", 1, NULL},
    {"iadd", "int", "add.s32 {x}, {x}, {y};\n\tadd.s32 {x}, {x}, {z};", LT_U32, LT_U32, "IADD3", 1,
     "a step is two PTX adds, which ptxas fuses into one 3-input IADD3 (it would fuse any "
     "two adds of one chain)"},
    {"imad", "int", "mad.lo.s32 {x}, {x}, {y}, {z};", LT_U32, LT_U32, "IMAD", 1, NULL},
    {"imad_wide", "int", "cvt.u32.u64 {t}, {x};\n\tmul.wide.u32 {x}, {t}, {u};", LT_U64,
     LT_U32, "IMAD", 1, "IMAD.WIDE.U32 (mul.wide has a zero addend); the low half of the result is "
     "the next multiplicand"},
    {"lop3", "logic", "lop3.b32 {x}, {x}, {y}, {z}, 0x96;", LT_U32, LT_U32, "LOP3", 1, NULL},
    {"shf", "logic", "shf.l.wrap.b32 {x}, {x}, {y}, {z};", LT_U32, LT_U32, "SHF", 1, NULL},
    {"prmt", "logic", "prmt.b32 {x}, {x}, {y}, {z};", LT_U32, LT_U32, "PRMT", 1, NULL},
    {"popc", "logic", "popc.b32 {x}, {x};", LT_U32, LT_U32, "POPC", 1, NULL},
    {"flo", "logic", "bfind.u32 {x}, {x};", LT_U32, LT_U32, "FLO", 1, NULL},
    {"brev", "logic", "brev.b32 {x}, {x};", LT_U32, LT_U32, "BREV", 1, NULL},
    {"f2i", "conv", "cvt.rni.s32.f32 {t}, {x};\n\tmov.b32 {x}, {t};", LT_F32, LT_U32, "F2I", 1,
     "f32 -> s32, result reinterpreted as the next input"},
    {"i2f", "conv", "cvt.rn.f32.s32 {t}, {x};\n\tmov.b32 {x}, {t};", LT_U32, LT_F32, "I2FP", 1,
     "s32 -> f32, result reinterpreted as the next input"},
    {"f2f", "conv", "cvt.rn.f32.f64 {t}, {x};\n\tcvt.f64.f32 {x}, {t};", LT_F64, LT_F32, "F2F", 2,
     "a pair f64 -> f32 -> f64; the figure is per conversion"},
    {"rcp", "sfu", "abs.ftz.f32 {x}, {x};\n\trcp.approx.ftz.f32 {x}, {x};", LT_F32, LT_F32, "MUFU",
     1, "rcp(|x|), the |x| an FADD: ptxas folds rcp(rcp(x)) away entirely; the figure "
     "includes the FADD"},
    {"rsqrt", "sfu", "rsqrt.approx.ftz.f32 {x}, {x};", LT_F32, LT_F32, "MUFU", 1, NULL},
    {"sqrt", "sfu", "sqrt.approx.ftz.f32 {x}, {x};", LT_F32, LT_F32, "MUFU", 1, NULL},
    {"ex2", "sfu", "ex2.approx.ftz.f32 {x}, {x};", LT_F32, LT_F32, "MUFU", 1, NULL},
    {"lg2", "sfu", "lg2.approx.ftz.f32 {x}, {x};", LT_F32, LT_F32, "MUFU", 1, NULL},
    {"sin", "sfu", "sin.approx.ftz.f32 {x}, {x};", LT_F32, LT_F32, "MUFU", 1,
     "the compiler adds a range-reducing FMUL before the MUFU; the figure includes it"},
    {"cos", "sfu", "cos.approx.ftz.f32 {x}, {x};", LT_F32, LT_F32, "MUFU", 1,
     "the compiler adds a range-reducing FMUL before the MUFU; the figure includes it"},
    {"shfl", "warp", "shfl.sync.bfly.b32 {x}, {x}, 1, 31, -1;", LT_U32, LT_U32, "SHFL", 1, NULL},
    {"lds", "shared", "ld.shared.u32 {x}, [{x}];", LT_U32, LT_U32, "LDS", 1,
     "pointer chase on one shared word that holds its own address"},
    {"sts_lds", "shared", "st.volatile.shared.u32 [{s}], {x};\n\tld.volatile.shared.u32 {x}, [{s}];",
     LT_U32, LT_U32,
     "STS", 1, "a store followed by a load of the same word: store-to-load round trip"},
    {"atoms_add", "atomic", "atom.shared.add.u32 {x}, [{s}], {x};", LT_U32, LT_U32, "ATOMS", 1,
     NULL},
    {"atomg_add", "atomic", "atom.global.add.u32 {x}, [{g}], {x};", LT_U32, LT_U32, "ATOMG", 1,
     "each thread its own word (no contention)"},
};
const size_t lat_catalog_count = sizeof lat_catalog / sizeof lat_catalog[0];

const struct lat_entry *lat_find(const char *name)
{
    for (size_t i = 0; i < lat_catalog_count; i++)
        if (strcmp(lat_catalog[i].name, name) == 0)
            return &lat_catalog[i];
    return NULL;
}
