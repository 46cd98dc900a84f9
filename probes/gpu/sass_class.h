/*
 * The model's instruction classes for SASS mnemonics: which issue rate of
 * the kernel-time model (docs/model.md) an instruction of the compiled code
 * is charged at.
 *
 * DESIGN
 * One committed table in sass_class.c maps a base mnemonic (as
 * probes/gpu/sass.h returns it: "FFMA", "IMAD", "?0x1ff" for an operation
 * outside the opcode table) to a class. The first eight classes carry the
 * names of model/mwp_cwp.h's classes plus "sync" (the model counts
 * barriers apart); "uniform" (the uniform datapath: U* instructions and
 * S2UR, which do not take a vector issue slot the way their vector twins
 * do) and "other" (NOP, EXIT, anything unknown) are kept and reported,
 * never dropped, so the counts of a kernel always add up to its
 * instructions. This file knows nothing of model/: the names are the
 * contract (plain data crosses to the model as JSON).
 */
#ifndef GPUPROBE_PROBES_GPU_SASS_CLASS_H
#define GPUPROBE_PROBES_GPU_SASS_CLASS_H

enum sass_class {
    SASS_CLASS_FP32,     /* FFMA, FADD, FMUL, FMNMX, FSETP, HFMA2, HADD2 ... */
    SASS_CLASS_FP64,     /* DFMA, DADD, DMUL, DSETP */
    SASS_CLASS_INT,      /* IMAD, IADD3, LOP3, ISETP, SHF, LEA, MOV, SEL, PRMT, BRA, LDC, S2R ... */
    SASS_CLASS_SFU,      /* MUFU */
    SASS_CLASS_CONV,     /* F2I, I2F, F2F, I2FP, F2FP, FRND */
    SASS_CLASS_SHARED,   /* LDS, STS, ATOMS, LDSM, SHFL */
    SASS_CLASS_GLOBAL,   /* LDG, STG, ATOMG, RED, generic LD/ST/ATOM, local LDL/STL */
    SASS_CLASS_SYNC,     /* BAR */
    SASS_CLASS_UNIFORM,  /* the uniform datapath: U*, S2UR, R2UR */
    SASS_CLASS_TENSOR,   /* the tensor cores: HMMA, IMMA, DMMA, HGMMA */
    SASS_CLASS_OTHER,    /* NOP, EXIT, DEPBAR, MEMBAR ... and unknown operations */
    SASS_CLASS_COUNT
};

/* "fp32", "fp64", "int", "sfu", "conv", "shared", "global", "sync",
 * "uniform", "other"; NULL for a value outside the enum. */
const char *sass_class_name(enum sass_class c);

/* The class of a base mnemonic; SASS_CLASS_OTHER for one the table does
 * not name (an unknown "?0xNNN" included). mnemonic not NULL. */
enum sass_class sass_class_of(const char *mnemonic);

/* 1 when the table names the mnemonic (for tests: every entry of the
 * opcode table must be classified on purpose, not by default). */
int sass_class_known(const char *mnemonic);

#endif
