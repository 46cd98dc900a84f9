/*
 * SASS mnemonic -> the model's instruction class (see sass_class.h).
 *
 * DESIGN
 * classes[] is committed data, sorted by mnemonic for bsearch (the unit
 * test checks the order and that every mnemonic of sass.c's opcode table
 * is in it). Its sources: the instructions the fixtures' disassembly shows
 * (cuobjdump -sass of tests/fixtures/cubins/ and tests/fixtures/cubins/model/,
 * ptxas 13.0, sm_90), and for their grouping NVIDIA's CUDA Binary
 * Utilities, "Instruction Set Reference", Hopper instruction set, whose
 * categories (floating point, integer, conversion, movement, predicate,
 * load/store, uniform datapath, control, miscellaneous) are folded into
 * the model's issue classes as below. Entries beyond the opcode table
 * (DMUL, RED, LDSM, ...) classify an instruction once the opcode table
 * learns it; until then it reads "?0xNNN" and counts as "other".
 *
 * Choices a reader may question, each a decision, not a measurement:
 *   HFMA2, HADD2 (f16x2)  fp32: the FMA pipe; ptxas also uses HFMA2.MMA to
 *                         put a constant in a register
 *   LDC, S2R, CS2R        int: a vector-register move from a constant bank
 *                         or special register (PTX's ld.const and mov from
 *                         %tid count int in model/ptx_desc.c too)
 *   BRA, BSSY, BSYNC,     int: the branch unit, as PTX's bra counts int
 *   CALL, RET
 *   SHFL                  shared: the model's PTX side counts shfl there
 *   LDL, STL              global: local memory is device memory, as PTX's
 *                         local accesses count global
 *   LDGSTS                global: the copy reads device memory
 *   UBLKCP, UTMALDG       global: the TMA's copies read device memory
 *   SYNCS                 shared: an mbarrier is a word of shared memory
 *   LDGDEPBAR             other: cp.async's commit, bookkeeping as DEPBAR
 *   BAR                   sync only (the model counts barriers apart)
 */
#include "probes/gpu/sass_class.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

struct class_entry {
    const char *mnemonic;
    enum sass_class cls;
};

#define F32 SASS_CLASS_FP32
#define F64 SASS_CLASS_FP64
#define INT SASS_CLASS_INT
#define SFU SASS_CLASS_SFU
#define CNV SASS_CLASS_CONV
#define SHR SASS_CLASS_SHARED
#define GLB SASS_CLASS_GLOBAL
#define SYN SASS_CLASS_SYNC
#define UNI SASS_CLASS_UNIFORM
#define OTH SASS_CLASS_OTHER
#define TNS SASS_CLASS_TENSOR

/* Sorted by strcmp. */
static const struct class_entry classes[] = {
    {"ATOM", GLB},    {"ATOMG", GLB},   {"ATOMS", SHR},   {"BAR", SYN},     {"BMOV", INT},
    {"BMSK", INT},    {"BPT", OTH},     {"BRA", INT},     {"BREAK", INT},   {"BREV", INT},
    {"BRX", INT},     {"BSSY", INT},    {"BSYNC", INT},   {"CALL", INT},    {"CCTL", OTH},
    {"CS2R", INT},    {"DADD", F64},    {"DEPBAR", OTH},  {"DFMA", F64},    {"DMMA", TNS},    {"DMUL", F64},
    {"DSETP", F64},   {"ELECT", INT},   {"ERRBAR", OTH},  {"EXIT", OTH},    {"F2F", CNV},     {"F2FP", CNV},
    {"F2I", CNV},     {"FADD", F32},    {"FCHK", F32},    {"FENCE", OTH},   {"FFMA", F32},
    {"FLO", INT},     {"FMNMX", F32},   {"FMUL", F32},    {"FRND", CNV},    {"FSEL", F32},
    {"FSET", F32},    {"FSETP", F32},   {"HADD2", F32},   {"HFMA2", F32},   {"HGMMA", TNS},   {"HMMA", TNS},    {"HMNMX2", F32},
    {"HMUL2", F32},   {"HSET2", F32},   {"HSETP2", F32},  {"I2F", CNV},     {"I2FP", CNV},
    {"I2I", CNV},     {"IABS", INT},    {"IADD3", INT},   {"IGMMA", TNS},   {"IMAD", INT},    {"IMMA", TNS},    {"IMNMX", INT},
    {"ISETP", INT},   {"JMP", INT},     {"KILL", OTH},    {"LD", GLB},      {"LDC", INT},
    {"LDG", GLB},     {"LDGDEPBAR", OTH}, {"LDGSTS", GLB},  {"LDL", GLB},     {"LDS", SHR},     {"LDSM", SHR},
    {"LEA", INT},     {"LOP3", INT},    {"MEMBAR", OTH},  {"MOV", INT},     {"MUFU", SFU},
    {"NANOSLEEP", OTH}, {"NOP", OTH},   {"P2R", INT},     {"PLOP3", INT},   {"POPC", INT},
    {"PRMT", INT},    {"QGMMA", TNS},   {"R2P", INT},     {"R2UR", UNI},    {"RED", GLB},     {"REDG", GLB},    {"RET", INT},
    {"S2R", INT},     {"S2UR", UNI},    {"SEL", INT},     {"SGXT", INT},    {"SHF", INT},
    {"SHFL", SHR},    {"ST", GLB},      {"STG", GLB},     {"STL", GLB},     {"STS", SHR},
    {"STSM", SHR},    {"SYNCS", SHR},   {"UBLKCP", GLB},  {"UBMSK", UNI},   {"UBREV", UNI},   {"UFLO", UNI},    {"UIADD3", UNI},
    {"UIMAD", UNI},   {"UISETP", UNI},  {"ULDC", UNI},    {"ULEA", UNI},    {"ULOP3", UNI},
    {"UMOV", UNI},    {"UP2UR", UNI},   {"UPLOP3", UNI},  {"UPOPC", UNI},   {"UPRMT", UNI},
    {"USEL", UNI},    {"USGXT", UNI},   {"USHF", UNI},    {"UTMALDG", GLB}, {"VIADD", INT},
    {"VIMNMX", INT},  {"VOTE", INT},    {"VOTEU", UNI},   {"WARPGROUP", SYN}, {"WARPSYNC", OTH},
    {"YIELD", OTH},
};
#define N_CLASSES (sizeof classes / sizeof classes[0])

static const char *const names[SASS_CLASS_COUNT] = {
    [SASS_CLASS_FP32] = "fp32",       [SASS_CLASS_FP64] = "fp64",
    [SASS_CLASS_INT] = "int",         [SASS_CLASS_SFU] = "sfu",
    [SASS_CLASS_CONV] = "conv",       [SASS_CLASS_SHARED] = "shared",
    [SASS_CLASS_GLOBAL] = "global",   [SASS_CLASS_SYNC] = "sync",
    [SASS_CLASS_UNIFORM] = "uniform", [SASS_CLASS_TENSOR] = "tensor",
    [SASS_CLASS_OTHER] = "other",
};

const char *sass_class_name(enum sass_class c)
{
    return (unsigned)c < SASS_CLASS_COUNT ? names[c] : NULL;
}

static int entry_cmp(const void *key, const void *elem)
{
    return strcmp(key, ((const struct class_entry *)elem)->mnemonic);
}

static const struct class_entry *lookup(const char *mnemonic)
{
    assert(mnemonic != NULL);
    return bsearch(mnemonic, classes, N_CLASSES, sizeof classes[0], entry_cmp);
}

enum sass_class sass_class_of(const char *mnemonic)
{
    const struct class_entry *e = lookup(mnemonic);
    return e ? e->cls : SASS_CLASS_OTHER;
}

int sass_class_known(const char *mnemonic) { return lookup(mnemonic) != NULL; }
