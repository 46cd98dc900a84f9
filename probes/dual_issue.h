/*
 * The dual-issue probe ("dual-issue"): the six single/dual FFMA orderings of
 * the Kepler (GK110) microbenchmark method, encoded in the control codes of
 * compiled FFMA streams with operands chosen from the register banks (see
 * dual_issue_run.c).
 *
 * DESIGN
 * Kepler grouped 7 instructions under one scheduling word; sm_70 and later
 * have no groups, so a group here is 7 consecutive FFMA slots of the
 * compiled loop: one free slot, rewritten into a NOP, and six FFMAs. A
 * pattern is 4 issue cycles: "1" one FFMA with stall 1, "2" two FFMAs,
 * the first with stall 0 (issue the next one in the same cycle) and the
 * second with stall 1. The NOP sits just before the pattern's first
 * single FFMA with stall 0, so it asks to pair with that FFMA: every
 * pattern then asks 4 cycles for 7 instructions, and no cycle asks for
 * three. Nominal rate = 6 FFMA per 4 cycles per scheduler = 1.5 * 32 lanes
 * * 4 schedulers = 192 FFMA per SM per clock.
 *
 * The single-issue reference "1-1-1-1-1-1" is the same stream with no
 * pairing request at all: all seven slots stall 1, the NOP in its own
 * cycle, 6 FFMA per 7 cycles (109.7 per SM per clock). It is what a
 * machine that issues one instruction per cycle should reach on these
 * streams, so a pattern at the reference's rate gained nothing from its
 * stall-0 requests. "compiled" is the kernel as ptxas wrote it (252 FFMAs,
 * nominal from their own stall counts).
 *
 * Yield and the scoreboard fields stay as the compiler wrote them, on the
 * NOP too. Sources are never a destination and destinations rotate over
 * the registers ptxas used as accumulators, so no edited FFMA reads what
 * another writes and any stall is safe. The kernel comes from the bank
 * probe's generator (probes/banks.h, struct banks_shape) with the loop
 * control pinned before the FFMAs, so the 252 FFMAs are one unbroken run.
 */
#ifndef GPUPROBE_PROBES_DUAL_ISSUE_H
#define GPUPROBE_PROBES_DUAL_ISSUE_H

#include <jansson.h>
#include <stddef.h>

#include "probes/banks.h"
#include "probes/gpu/patch.h"

#define DUAL_KERNEL "dual"
#define DUAL_SCHEDULERS 4            /* warp schedulers per SM (sm_70 and later) */
#define DUAL_LANES 32                /* threads of a warp */
#define DUAL_MAX_WARPS 4             /* warps per scheduler tried: 1..4 */
#define DUAL_THREADS (DUAL_SCHEDULERS * DUAL_MAX_WARPS * DUAL_LANES)
#define DUAL_MAXNREG 128             /* so DUAL_THREADS fit one SM */
#define DUAL_VALUES 32
#define DUAL_ACCS 8
#define DUAL_GROUP 7                 /* slots of a group: one free, six FFMA */
#define DUAL_GROUP_FFMA 6
#define DUAL_GROUPS 36
#define DUAL_TIMED (DUAL_GROUP * DUAL_GROUPS)       /* FFMAs compiled: 252 */
#define DUAL_FFMA (DUAL_GROUP_FFMA * DUAL_GROUPS)   /* FFMAs after the edit: 216 */
#define DUAL_PATTERNS 7              /* the six orderings and the reference */
#define DUAL_REFERENCE "1-1-1-1-1-1"
#define DUAL_THRESHOLD 1.005         /* "above one warp-FFMA per scheduler per clock" */

/* The kernel's numbers (banks_ptx_shape makes it, banks_layout_shape reads it). */
extern const struct banks_shape dual_shape;
/* The six orderings of the Kepler microbenchmark method, then DUAL_REFERENCE. */
extern const char *const dual_patterns[DUAL_PATTERNS];

/* ---- the compiled kernel (dual_issue_kernel.c) ---------------------------- */

#define DUAL_HEAD 3                  /* loop control before the FFMAs: add, setp, selp */

/* banks_layout's facts, and what the probe reports of the loop. */
struct dual_layout {
    struct banks_layout b;
    unsigned stall_sum;              /* of the timed FFMAs as compiled */
    unsigned head_stall[DUAL_HEAD];  /* the instructions just before the first FFMA */
    unsigned head_op[DUAL_HEAD];     /* their 12-bit opcodes */
    unsigned next_op, next_stall;    /* the instruction after the last FFMA */
};

/* Reads the compiled kernel: banks_layout_shape(dual_shape), and the
 * DUAL_TIMED FFMAs must be consecutive instructions (a group must not
 * straddle another instruction) with at least DUAL_HEAD instructions
 * before them. 0, or -1 with the reason. */
int dual_layout(const void *cubin, size_t size, struct dual_layout *L, char *err,
                size_t errlen);

/* One slot of a group. */
struct dual_slot {
    int nop;                         /* 1: the free slot, a NOP */
    unsigned stall;
};

/* The 7 slots of a group for a pattern: issue cycles of 1 or 2 FFMAs
 * joined by '-', six FFMAs in all, with at least one single cycle where
 * any cycle is a pair (the NOP pairs with the first single); six singles
 * are the reference. 0, or -1 for anything else. */
int dual_group(const char *pattern, struct dual_slot g[DUAL_GROUP]);
/* Cycles a group asks for: its stall sum. */
unsigned dual_group_cycles(const struct dual_slot g[DUAL_GROUP]);

/* The registers the edited FFMAs read: the k-th edited FFMA (in program
 * order) reads src[s][k % n[s]] in slot s (0 Ra, 1 Rb, 2 Rc) and carries
 * the reuse flags `reuse` (bit s = slot s). */
#define DUAL_SRC_MAX 8
struct dual_operands {
    unsigned src[3][DUAL_SRC_MAX];
    size_t n[3];
    unsigned reuse;
};

/* The k-th edited FFMA writes L->dest[k % L->ndest]. */
#define DUAL_EDITS_PER_FFMA 6        /* Ra, Rb, Rc, Rd, reuse, stall */
struct dual_edits {
    struct patch_bits nop[DUAL_GROUPS];
    size_t nnop;
    struct patch_edit ed[DUAL_FFMA * DUAL_EDITS_PER_FFMA];
    size_t ned;
};

/* The rewrite of the timed FFMAs for a pattern and operands, for
 * patch_rewrite. 0, or -1 (unknown pattern, or a source that is a
 * destination, RZ, or above L->b.max_reg). */
int dual_edits(const struct dual_layout *L, const char *pattern, const struct dual_operands *o,
               struct dual_edits *e);

/* Re-reads a patched cubin: every group holds the pattern's NOP and six
 * FFMAs with exactly the pattern's stalls and o's operands, the NOP keeps
 * the replaced FFMA's yield and scoreboard fields, no edited FFMA reads a
 * register any edited FFMA writes, and no other bit of the cubin differs
 * from orig. 0, or -1 with the reason. */
int dual_verify(const void *orig, const void *patched, size_t size, const struct dual_layout *L,
                const char *pattern, const struct dual_operands *o, char *err, size_t errlen);

/* ---- operands from the bank classes (dual_issue_operands.c) --------------- */

enum dual_choice { DUAL_CONFLICT_FREE, DUAL_NAIVE };

/* bank[r] = the class of register r in the bank probe's "classes" (an
 * array of arrays of register numbers), -1 where r is in none; r < 255.
 * The number of classes, or -1 when classes is not that shape or names a
 * register twice or out of range. */
int dual_bank_map(const json_t *classes, int bank[SASS_RZ]);

/* Chooses operands among the registers a source may be (at most
 * L->b.max_reg, not RZ, not a destination, in a class):
 * conflict-free, two banks: Ra from class 0, Rb from class 1 (up to
 * DUAL_SRC_MAX of each, rotated), Rc one more register with its reuse flag
 * set on every FFMA (three sources in two banks cannot all differ, so the
 * reuse cache supplies one); three banks or more: Ra, Rb, Rc from classes
 * 0, 1, 2, no reuse; naive: three registers of class 0, no reuse.
 * 0, or -1 with the reason (too few registers, one bank only...). */
int dual_operands_choose(const struct dual_layout *L, const int bank[SASS_RZ], int nbanks,
                         enum dual_choice c, struct dual_operands *o, char *err, size_t errlen);

/* {"ra":[..],"rb":[..],"rc":[..],"reuse":n,"banks":{"ra":k,..},"rule":".."} */
json_t *dual_operands_json(const struct dual_operands *o, const int bank[SASS_RZ],
                           enum dual_choice c);

/* ---- figures (dual_issue_figures.c) --------------------------------------- */

/* FFMA per SM per clock of a block of warps_per_block warps each running
 * ffma_per_iter FFMAs iters times in cycles SM cycles. */
double dual_rate(unsigned warps_per_block, unsigned ffma_per_iter, unsigned iters,
                 double cycles);
/* FFMA per SM per clock when every scheduler issues ffma FFMAs in cycles. */
double dual_nominal(unsigned ffma, unsigned cycles);
/* FP32 lanes per SM (FFMA per SM per clock) of compute capability
 * major.minor from NVIDIA's published figures; 0 when not in the table. */
int dual_peak_lanes(int major, int minor);
/* value / ref, or JSON null when ref is not positive. */
json_t *dual_ratio_json(double value, double ref);

/* Reads the result rows ({"pattern","operands","warps_per_scheduler",
 * "ffma_per_sm_clock":{"median"}}): 1 when an edited pattern at one warp
 * per scheduler ran above DUAL_THRESHOLD warp-FFMA per scheduler per
 * clock, else 0; the sentence that says what was seen, with the numbers,
 * goes to text. */
int dual_verdict(const json_t *results, char *text, size_t len);

/* ---- the run (dual_issue_run.c) -------------------------------------------- */

/* Runs the probe on a device (UUID or index), each configuration measured
 * repeats times: the whole result document, or NULL with the reason. */
json_t *dual_issue_probe_run(const char *device, int repeats, char *err, size_t errlen);

#endif
