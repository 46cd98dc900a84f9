/*
 * The register-limit experiment: why naming R253 or R254 faulted in a
 * kernel the cubin reports with 255 registers, decided by one GPU run of
 * many single-variant processes (tests/gpu/regs_limit.sh). A developer
 * experiment, not a probe: a variant may fault, which ends the CUDA
 * context, so each runs in its own process (`gpuprobe regs-limit --variant
 * NAME`) and the script collects one JSON line per variant.
 *
 * DESIGN
 * A variant edits ONE field of ONE instruction of a freshly compiled
 * kernel to name register R(k), k placed relative to the kernel's
 * register count n ("count-2" = R(n-2), "alloc" = the first register past
 * n rounded up to the allocation granule of 8), and may also edit the
 * count the cubin declares (EIATTR_REGCOUNT in .nv.info, the one place a
 * CUDA 13 cubin carries it: probes/gpu/cubin.h). The kernels:
 *   wide    the bank probe's own (banks_ptx.c), 255 registers; its first
 *           timed FFMA is edited (Ra/Rb/Rc/Rd = R252..R254);
 *   small   a few loads, one FFMA and one IADD3 whose results are only
 *           stored (no address is computed: every load and store uses a
 *           parameter's address plus an immediate, so an edited register
 *           changes a stored value, never an address);
 *   small-c255  small with its declared count edited to 255;
 *   small-c+8   small with its declared count raised by 8.
 * The hypotheses each variant helps separate:
 *   (a) the hardware gives a kernel fewer registers than the count ptxas
 *       reports (every cubin of tests/fixtures has count = highest
 *       destination + 3, or + 2 above a 64-bit destination: two registers
 *       more than the code names): then small count-2 and count-1 fault;
 *   (b) R253/R254 are reserved encodings on sm_90: they fault in wide and
 *       in small-c255 while small's count-2/count-1 run;
 *   (c) destination and source differ: rd against ra at the same place;
 *   (d) the operation matters: IADD3 against FFMA at the same place;
 *   and whether the driver allocates by the declared count at all
 *   (small-c+8 past small's allocation).
 * "none" variants load and run the kernel unedited: the control that the
 * machinery itself runs.
 */
#ifndef GPUPROBE_PROBES_REGS_LIMIT_H
#define GPUPROBE_PROBES_REGS_LIMIT_H

#include <jansson.h>
#include <stddef.h>

#include "probes/gpu/sass.h"

#define REGS_SMALL_KERNEL "regs_small"
#define REGS_VARIANTS_MAX 64
#define REGS_GRANULE 8               /* registers per thread are allocated in 8s */

enum regs_kernel { REGS_WIDE, REGS_SMALL, REGS_SMALL_C255, REGS_SMALL_PLUS8 };
enum regs_where {
    REGS_NONE,                       /* no edit: the control */
    REGS_COUNT_3, REGS_COUNT_2, REGS_COUNT_1, REGS_COUNT, REGS_ALLOC_1, REGS_ALLOC
};

struct regs_variant {
    char name[48];                   /* "small.iadd3.rd.count-2" */
    enum regs_kernel kernel;
    const char *insn;                /* "FFMA" or "IADD3" */
    enum sass_field field;           /* SASS_RA, SASS_RB, SASS_RC or SASS_RD */
    enum regs_where where;
};

/* Every variant, in the order the script runs them; returns how many
 * (at most REGS_VARIANTS_MAX). */
size_t regs_limit_variants(struct regs_variant v[REGS_VARIANTS_MAX]);
/* The variant of that name: 0, or -1 when there is none. */
int regs_limit_find(const char *name, struct regs_variant *v);

/* The small kernel's module for a device of cc major.minor (caller frees):
 * .entry regs_small(.param .u64 out, .param .u64 in). */
char *regs_limit_small_ptx(int cc_major, int cc_minor);

/* What an edit did: the kernel's count as compiled and as declared after
 * the edit, the register named, which instruction, and the highest
 * destination the compiled code names (banks_writes_gpr's operations). */
struct regs_plan {
    int compiled_count, declared_count;
    unsigned reg;
    size_t index;                    /* instruction index in the kernel */
    unsigned highest_destination;
    unsigned other_uses;             /* other instructions whose register fields hold reg */
};

/* Applies variant v to the kernel's cubin in place (size bytes): the
 * declared count first where the variant edits it, then the field. The
 * edited instruction must be the kernel's only one of its mnemonic (small:
 * so a JIT that adds another cannot make the edit hit an address) or its
 * first FFMA (wide: all its FFMAs are timed FFMAs). 0, or -1 with the
 * reason and nothing written (no such kernel or instruction, no
 * EIATTR_REGCOUNT to edit, a register above R254). Pure: no GPU. */
int regs_limit_patch(void *cubin, size_t size, const char *kernel, const struct regs_variant *v,
                     struct regs_plan *p, char *err, size_t errlen);

/* Runs one variant on a device (UUID or index): compile, edit, load,
 * launch, wait. The result document {"variant", "kernel", "instruction",
 * "field", "register", "compiled_count", "declared_count",
 * "highest_destination", "other_instructions_naming_register", "outcome":
 * "ok" | "fault" | "load_refused", "error", "cuda_error", "device"}, or NULL with the reason when the experiment
 * itself could not run (no GPU, the compile failed, the edit was refused). */
json_t *regs_limit_run(const char *device, const char *variant, char *err, size_t errlen);

#endif
