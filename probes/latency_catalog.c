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

/* fp8 mma.sync on sm_90 (see the rows' comment) */
#define FP8_NOTE                                                                                   \
    "m16n8k32 fp8 is no sm_90 tensor instruction: ptxas 13.0 converts A and B to f16 (F2FP), "    \
    "runs two f16 HMMA m16n8k16 and adds the accumulator with FADDs; A's first register is the "  \
    "chain's value, so the conversion stays in the chain; figures are per HMMA (half an "        \
    "mma.sync: latency x 2 for one mma.sync), TFLOP/s are fp8 operations"
#define WG_NOTE(operands)                                                                         \
    operands "; latency: wgmma + commit_group + wait_group 0 (issue to result readable); "        \
             "throughput: one warpgroup's wgmmas a step"
/* A wgmma row: name, the instruction's shape and types, its operands after
 * {d}, the accumulator's type, the opcode, accumulator and A registers a
 * thread (A 0: from shared memory), operations a step. */
#define WGMMA(name, shape, operands, xt, sass, d, a, flops)                                       \
    {name, "tensor", "wgmma.mma_async.sync.aligned." shape " {d}, " operands ";", xt, xt, sass, 1, \
     (a) ? WG_NOTE("A from registers, B from shared memory")                                     \
         : WG_NOTE("A and B from shared memory"),                                                \
     &(const struct lat_mma){d, a, 0, LT_F16X2, flops, 1}, NULL}

const struct lat_entry lat_catalog[] = {
    {"fadd", "fp32", "add.f32 {x}, {x}, {y};", LT_F32, LT_F32, "FADD", 1, NULL, NULL, NULL},
    {"fmul", "fp32", "mul.f32 {x}, {x}, {y};", LT_F32, LT_F32, "FMUL", 1, NULL, NULL, NULL},
    {"ffma", "fp32", "fma.rn.f32 {x}, {x}, {y}, {z};", LT_F32, LT_F32, "FFMA", 1, NULL, NULL, NULL},
    {"fmin", "fp32", "min.f32 {x}, {x}, {y};", LT_F32, LT_F32, "FMNMX", 1, NULL, NULL, NULL},
    {"fmax", "fp32", "max.f32 {x}, {x}, {y};", LT_F32, LT_F32, "FMNMX", 1, NULL, NULL, NULL},
    {"hadd2", "fp16", "add.rn.f16x2 {x}, {x}, {y};", LT_F16X2, LT_F16X2, "HADD2|HFMA2", 1,
     "ptxas issues every other f16x2 add as HFMA2 (x*1+y) to balance the two pipes", NULL, NULL},
    {"hfma2", "fp16", "fma.rn.f16x2 {x}, {x}, {y}, {z};", LT_F16X2, LT_F16X2, "HFMA2", 1, NULL, NULL, NULL},
    {"dadd", "fp64", "add.f64 {x}, {x}, {y};", LT_F64, LT_F64, "DADD", 1, NULL, NULL, NULL},
    {"dfma", "fp64", "fma.rn.f64 {x}, {x}, {y}, {z};", LT_F64, LT_F64, "DFMA", 1, NULL, NULL, NULL},
    {"iadd", "int", "add.s32 {x}, {x}, {y};\n\tadd.s32 {x}, {x}, {z};", LT_U32, LT_U32, "IADD3", 1,
     "a step is two PTX adds, which ptxas fuses into one 3-input IADD3 (it would fuse any "
     "two adds of one chain)", NULL, NULL},
    {"imad", "int", "mad.lo.s32 {x}, {x}, {y}, {z};", LT_U32, LT_U32, "IMAD", 1, NULL, NULL, NULL},
    {"imad_wide", "int", "cvt.u32.u64 {t}, {x};\n\tmul.wide.u32 {x}, {t}, {u};", LT_U64,
     LT_U32, "IMAD", 1, "IMAD.WIDE.U32 (mul.wide has a zero addend); the low half of the result is "
     "the next multiplicand", NULL, NULL},
    {"lop3", "logic", "lop3.b32 {x}, {x}, {y}, {z}, 0x96;", LT_U32, LT_U32, "LOP3", 1, NULL, NULL, NULL},
    {"shf", "logic", "shf.l.wrap.b32 {x}, {x}, {y}, {z};", LT_U32, LT_U32, "SHF", 1, NULL, NULL, NULL},
    {"prmt", "logic", "prmt.b32 {x}, {x}, {y}, {z};", LT_U32, LT_U32, "PRMT", 1, NULL, NULL, NULL},
    {"popc", "logic", "popc.b32 {x}, {x};", LT_U32, LT_U32, "POPC", 1, NULL, NULL, NULL},
    {"flo", "logic", "bfind.u32 {x}, {x};", LT_U32, LT_U32, "FLO", 1, NULL, NULL, NULL},
    {"brev", "logic", "brev.b32 {x}, {x};", LT_U32, LT_U32, "BREV", 1, NULL, NULL, NULL},
    {"f2i", "conv", "cvt.rni.s32.f32 {t}, {x};\n\tmov.b32 {x}, {t};", LT_F32, LT_U32, "F2I", 1,
     "f32 -> s32, result reinterpreted as the next input", NULL, NULL},
    {"i2f", "conv", "cvt.rn.f32.s32 {t}, {x};\n\tmov.b32 {x}, {t};", LT_U32, LT_F32, "I2FP", 1,
     "s32 -> f32, result reinterpreted as the next input", NULL, NULL},
    {"f2f", "conv", "cvt.rn.f32.f64 {t}, {x};\n\tcvt.f64.f32 {x}, {t};", LT_F64, LT_F32, "F2F", 2,
     "a pair f64 -> f32 -> f64; the figure is per conversion", NULL, NULL},
    {"rcp", "sfu", "abs.ftz.f32 {x}, {x};\n\trcp.approx.ftz.f32 {x}, {x};", LT_F32, LT_F32, "MUFU",
     1, "rcp(|x|), the |x| an FADD: ptxas folds rcp(rcp(x)) away entirely; the figure "
     "includes the FADD", NULL, NULL},
    {"rsqrt", "sfu", "rsqrt.approx.ftz.f32 {x}, {x};", LT_F32, LT_F32, "MUFU", 1, NULL, NULL, NULL},
    {"sqrt", "sfu", "sqrt.approx.ftz.f32 {x}, {x};", LT_F32, LT_F32, "MUFU", 1, NULL, NULL, NULL},
    {"ex2", "sfu", "ex2.approx.ftz.f32 {x}, {x};", LT_F32, LT_F32, "MUFU", 1, NULL, NULL, NULL},
    {"lg2", "sfu", "lg2.approx.ftz.f32 {x}, {x};", LT_F32, LT_F32, "MUFU", 1, NULL, NULL, NULL},
    {"sin", "sfu", "sin.approx.ftz.f32 {x}, {x};", LT_F32, LT_F32, "MUFU", 1,
     "the compiler adds a range-reducing FMUL before the MUFU; the figure includes it", NULL, NULL},
    {"cos", "sfu", "cos.approx.ftz.f32 {x}, {x};", LT_F32, LT_F32, "MUFU", 1,
     "the compiler adds a range-reducing FMUL before the MUFU; the figure includes it", NULL, NULL},
    {"shfl", "warp", "shfl.sync.bfly.b32 {x}, {x}, 1, 31, -1;", LT_U32, LT_U32, "SHFL", 1, NULL, NULL, NULL},
    {"lds", "shared", "ld.shared.u32 {x}, [{x}];", LT_U32, LT_U32, "LDS", 1,
     "pointer chase on one shared word that holds its own address", NULL, NULL},
    {"sts_lds", "shared", "st.volatile.shared.u32 [{s}], {x};\n\tld.volatile.shared.u32 {x}, [{s}];",
     LT_U32, LT_U32,
     "STS", 1, "a store followed by a load of the same word: store-to-load round trip", NULL, NULL},
    {"atoms_add", "atomic", "atom.shared.add.u32 {x}, [{s}], {x};", LT_U32, LT_U32, "ATOMS", 1,
     NULL, NULL, NULL},
    {"atomg_add", "atomic", "atom.global.add.u32 {x}, [{g}], {x};", LT_U32, LT_U32, "ATOMG", 1,
     "each thread its own word (no contention)", NULL, NULL},
    /* tensor cores, mma.sync: D = A x B + D, the accumulator chaining the steps;
     * fragments per thread from the PTX ISA's mma tables (m16n8k16 f16/bf16: A 4
     * x .b32, B 2, f32 D 4; m16n8k8 tf32: A 4, B 2, D 4; m16n8k32 8-bit: A 4, B 2,
     * D 4; m8n8k4 f64: A 1, B 1, D 2); operations a step: 2 x M x N x K. fp8
     * (e4m3, e5m2) mma.sync is no sm_90 tensor instruction: ptxas 13.0
     * emulates it with F2FP, two HMMAs and FADDs (mma_e4m3, mma_e5m2 below
     * time that); fp8 at the tensor cores' rate is wgmma's (QGMMA, below) */
    {"hmma_f16_f32", "tensor", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {d}, {a}, {b}, {d};",
     LT_F32, LT_F32, "HMMA", 1, "m16n8k16, f16 inputs, f32 accumulators; a step is one warp's mma",
     &(const struct lat_mma){4, 4, 2, LT_F16X2, 4096, 0}, NULL},
    {"hmma_f16_f16", "tensor", "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {d}, {a}, {b}, {d};",
     LT_F16X2, LT_F16X2, "HMMA", 1, "m16n8k16, f16 inputs, f16 accumulators",
     &(const struct lat_mma){2, 4, 2, LT_F16X2, 4096, 0}, NULL},
    {"hmma_bf16", "tensor", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {d}, {a}, {b}, {d};",
     LT_F32, LT_F32, "HMMA", 1, "m16n8k16, bf16 inputs, f32 accumulators",
     &(const struct lat_mma){4, 4, 2, LT_F16X2, 4096, 0}, NULL},
    {"hmma_tf32", "tensor", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {d}, {a}, {b}, {d};",
     LT_F32, LT_F32, "HMMA", 1, "m16n8k8, tf32 inputs, f32 accumulators",
     &(const struct lat_mma){4, 4, 2, LT_F16X2, 2048, 0}, NULL},
    {"imma_s8", "tensor", "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {d}, {a}, {b}, {d};",
     LT_S32, LT_S32, "IMMA", 1, "m16n8k32, s8 inputs, s32 accumulators (integer operations)",
     &(const struct lat_mma){4, 4, 2, LT_F16X2, 8192, 0}, NULL},
    {"dmma", "tensor", "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {d}, {a}, {b}, {d};", LT_F64,
     LT_F64, "DMMA", 1, "m8n8k4, f64 throughout",
     &(const struct lat_mma){2, 1, 1, LT_F64, 512, 0}, NULL},
    {"mma_e4m3", "tensor",
     "mov.b32 %fa0, {x};\n\tmma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {d}, {a}, {b}, {d};",
     LT_F32, LT_F32, "HMMA", 2, FP8_NOTE, &(const struct lat_mma){4, 4, 2, LT_F16X2, 4096, 0}, "8.4"},
    {"mma_e5m2", "tensor",
     "mov.b32 %fa0, {x};\n\tmma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {d}, {a}, {b}, {d};",
     LT_F32, LT_F32, "HMMA", 2, FP8_NOTE, &(const struct lat_mma){4, 4, 2, LT_F16X2, 4096, 0}, "8.4"},
    /* tensor cores, wgmma.mma_async (sm_90a): one warpgroup's m64nNkK, D = A x B
     * + D; B from shared memory (descriptor), A from shared memory (_ss) or
     * registers (_rs, 4 x .b32 a thread); the accumulator N/2 registers a
     * thread (f32, s32) or N/4 (f16x2); operations a step: 2 x 64 x N x K.
     * The SASS opcodes as ptxas 13.0 writes them for sm_90a: HGMMA (f16, bf16,
     * tf32), QGMMA (e4m3, e5m2), IGMMA (s8) */
    WGMMA("wgmma_f16_ss_n64", "m64n64k16.f32.f16.f16", "{a}, {b}, {c}, 1, 1, 0, 0", LT_F32,
          "HGMMA", 32, 0, 131072),
    WGMMA("wgmma_f16_ss_n128", "m64n128k16.f32.f16.f16", "{a}, {b}, {c}, 1, 1, 0, 0", LT_F32,
          "HGMMA", 64, 0, 262144),
    WGMMA("wgmma_f16_ss_n256", "m64n256k16.f32.f16.f16", "{a}, {b}, {c}, 1, 1, 0, 0", LT_F32,
          "HGMMA", 128, 0, 524288),
    WGMMA("wgmma_f16_rs_n64", "m64n64k16.f32.f16.f16", "{a}, {b}, {c}, 1, 1, 0", LT_F32,
          "HGMMA", 32, 4, 131072),
    WGMMA("wgmma_f16_rs_n128", "m64n128k16.f32.f16.f16", "{a}, {b}, {c}, 1, 1, 0", LT_F32,
          "HGMMA", 64, 4, 262144),
    WGMMA("wgmma_f16_rs_n256", "m64n256k16.f32.f16.f16", "{a}, {b}, {c}, 1, 1, 0", LT_F32,
          "HGMMA", 128, 4, 524288),
    WGMMA("wgmma_f16_f16_ss_n128", "m64n128k16.f16.f16.f16", "{a}, {b}, {c}, 1, 1, 0, 0",
          LT_F16X2, "HGMMA", 32, 0, 262144),
    WGMMA("wgmma_bf16_ss_n128", "m64n128k16.f32.bf16.bf16", "{a}, {b}, {c}, 1, 1, 0, 0", LT_F32,
          "HGMMA", 64, 0, 262144),
    WGMMA("wgmma_tf32_ss_n128", "m64n128k8.f32.tf32.tf32", "{a}, {b}, {c}, 1, 1", LT_F32, "HGMMA",
          64, 0, 131072),
    WGMMA("wgmma_e4m3_ss_n128", "m64n128k32.f32.e4m3.e4m3", "{a}, {b}, {c}, 1, 1", LT_F32,
          "QGMMA", 64, 0, 524288),
    WGMMA("wgmma_e5m2_ss_n128", "m64n128k32.f32.e5m2.e5m2", "{a}, {b}, {c}, 1, 1", LT_F32,
          "QGMMA", 64, 0, 524288),
    WGMMA("wgmma_s8_ss_n128", "m64n128k32.s32.s8.s8", "{a}, {b}, {c}", LT_S32, "IGMMA", 64, 0,
          524288),
};
const size_t lat_catalog_count = sizeof lat_catalog / sizeof lat_catalog[0];

const struct lat_entry *lat_find(const char *name)
{
    for (size_t i = 0; i < lat_catalog_count; i++)
        if (strcmp(lat_catalog[i].name, name) == 0)
            return &lat_catalog[i];
    return NULL;
}
