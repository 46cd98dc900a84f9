/*
 * The register-bank probe ("banks"): which physical registers share a
 * read port, found by timing FFMAs whose source registers are chosen by
 * editing the machine code (PTX cannot name physical registers).
 *
 * DESIGN
 * One throughput kernel (banks_ptx.c) is compiled once: one block of
 * BANKS_THREADS threads per SM, a loop of BANKS_TIMED independent FFMAs
 * between two clock64 stamps, and enough live values under .maxnreg 255
 * that ptxas allocates all 255 registers, so any of R0..R254 is legal to
 * name. For each test the harness copies the cubin and rewrites every
 * timed FFMA (banks_edits): Ra/Rb/Rc become the registers under test (RZ
 * for an unused slot), Rd a register the compiler used only as an FFMA
 * accumulator and that is not under test (so the stream stays independent
 * and no address or counter is clobbered), and the reuse flags are cleared
 * or set. The runner (banks_run.c) compares each test's FFMA rate with the
 * conflict-free rate of single-source FFMAs (Ra = r, Rb = Rc = RZ: one
 * register read cannot conflict) by the rule of the Kepler microbenchmark
 * method: >= 99.5% no conflict.
 * ptxas rotates the PTX's accumulators through more physical registers
 * than there are accumulators; all of them are candidate destinations.
 */
#ifndef GPUPROBE_PROBES_BANKS_H
#define GPUPROBE_PROBES_BANKS_H

#include <jansson.h>
#include <stddef.h>

#include "probes/gpu/patch.h"

#define BANKS_TIMED 256          /* FFMAs in the loop body */
#define BANKS_THREADS 256        /* one block per SM: 8 warps at 255 registers */
#define BANKS_VALUES 236         /* live f32 values read by the loop */
#define BANKS_ACCS 8             /* FFMA accumulators in the PTX */
#define BANKS_DEST_MAX 16        /* registers ptxas may rotate them through */
#define BANKS_MAX_REG 254        /* the highest register an instruction can name */
#define BANKS_KERNEL "banks"

/* The module for a device of cc major.minor (caller frees). */
char *banks_ptx(int cc_major, int cc_minor);

/* The numbers of a stamped FFMA-throughput kernel (the bank probe's own is
 * banks_probe_shape; the dual-issue probe has another): one PTX generator
 * and one layout reader for both. */
struct banks_shape {
    const char *kernel;          /* the entry's name */
    int threads;                 /* .maxntid */
    int maxnreg;                 /* .maxnreg */
    int values;                  /* live f32 values the FFMAs read */
    int accs;                    /* FFMA accumulators */
    int timed;                   /* FFMAs in the loop body, 1..BANKS_TIMED */
    int regs;                    /* registers the compiled kernel must have; 0 = any */
    int pinned;                  /* loop control pinned before the FFMAs (banks_ptx.c) */
    int loop_span;               /* check other writes over the loop only, not the region */
};
extern const struct banks_shape banks_probe_shape;

/* The module of shape s (caller frees); banks_ptx is this for
 * banks_probe_shape. */
char *banks_ptx_shape(const struct banks_shape *s, int cc_major, int cc_minor);

/* What the harness needs to know about the compiled kernel. */
struct banks_layout {
    size_t ffma[BANKS_TIMED];    /* instruction indices of the timed FFMAs */
    size_t nffma;
    unsigned dest[BANKS_DEST_MAX]; /* registers written by timed FFMAs (distinct) */
    size_t ndest;
    int regs;                    /* registers per thread, from the cubin */
    unsigned max_reg;            /* highest register the compiled FFMAs name */
    unsigned form;               /* the timed FFMAs' operand form */
};

/* Reads the cubin: the timed region between the first two clock reads must
 * hold exactly BANKS_TIMED FFMAs, all register-form with three register
 * sources, writing at most BANKS_DEST_MAX distinct registers that no other
 * instruction of the region names as its destination, and the kernel must
 * have 255 registers. 0, or -1
 * with the reason. */
int banks_layout(const void *cubin, size_t size, struct banks_layout *L, char *err,
                 size_t errlen);
/* The same for a kernel of shape s: s->timed FFMAs, s->regs registers
 * when s->regs is not 0, and with s->loop_span the "no other instruction
 * writes a destination" rule over the loop body (from the start stamp's
 * last store to the loop's branch) instead of the whole region: code that
 * runs once before or after the loop may use those registers. */
int banks_layout_shape(const void *cubin, size_t size, const struct banks_shape *s,
                       struct banks_layout *L, char *err, size_t errlen);

/* What the probe tests is bounded by the compiler, not by the register
 * count: the JIT hands out R0..R252 to a 255-register kernel (banks_run.c,
 * compiler_ceiling), and R253/R254 are refused as register numbers on
 * sm_90: an H100 (driver 580.159.04) raised CUDA_ERROR_ILLEGAL_INSTRUCTION
 * whenever an FFMA or IADD3 named either, source or destination, even in a
 * kernel declared with 255 registers, where R252 ran
 * (tests/gpu/results/2026-11-24-h100-regs-limit). */
#define BANKS_REFUSED_REG 253        /* the first register number sm_90 refuses */

/* The registers the probe does not time, R(top+1)..R254, each with its
 * reason (banks_untested.c): [{"register", "reason"}]. regs: the kernel's
 * register count. banks_untested_reason writes one reason into buf. */
json_t *banks_untested_json(unsigned top, int regs);
void banks_untested_reason(unsigned reg, unsigned top, int regs, char *buf, size_t n);

/* 1 if the instruction certainly writes the general register in its Rd
 * field (a short list of operations on purpose: S2R, MOV, IMAD, IADD3,
 * FFMA, FADD, FMUL, LOP3, LEA, SHF, LDG, LDS, with Rd not RZ), so a caller
 * that takes the highest destination never takes a field that is not one. */
int banks_writes_gpr(const struct sass_insn *in);

/* One test: up to three source registers (SASS_RZ for an unused slot) and
 * the reuse flags to write (bits 0..2 = Ra, Rb, Rc). */
struct banks_test {
    unsigned src[3];
    unsigned reuse;
};

#define BANKS_EDITS_PER_FFMA 5
/* Fills edits (room for BANKS_EDITS_PER_FFMA * L->nffma) for test t and
 * returns how many, or 0 when no destination outside the sources exists
 * or a source is not a legal register. */
size_t banks_edits(const struct banks_layout *L, const struct banks_test *t,
                   struct patch_edit *edits);

/* The first candidate destination (L->dest) that is not one of t's
 * sources: 0 with it in *rd, or -1 when every candidate is a source. */
int banks_pick_dest(const struct banks_layout *L, const struct banks_test *t, unsigned *rd);

/* A sequence of different FFMAs (the reuse-cache patterns, banks_reuse.h):
 * step k's sources, reuse flags and destination. */
struct banks_step {
    struct banks_test t;
    unsigned rd;                 /* must be one of L->dest (written only by timed FFMAs) */
};
#define BANKS_SEQ_MAX 8
/* Fills edits (room for BANKS_EDITS_PER_FFMA * L->nffma) so that timed FFMA
 * i becomes step i % n; returns how many, or 0 when n is 0, above
 * BANKS_SEQ_MAX or does not divide L->nffma, or a step is not legal (a
 * source not a register or RZ, reuse above 7, a destination not in
 * L->dest). banks_edits is this with one step and banks_pick_dest's
 * destination. */
size_t banks_edits_seq(const struct banks_layout *L, const struct banks_step *seq, size_t n,
                       struct patch_edit *edits);
/* banks_verify for a sequence: timed FFMA i carries exactly step i % n
 * (sources, reuse, destination), nothing else differs from orig. */
int banks_verify_seq(const void *orig, const void *patched, size_t size,
                     const struct banks_layout *L, const struct banks_step *seq, size_t n,
                     char *err, size_t errlen);

/* Re-reads a patched cubin: every timed FFMA carries exactly t's operands
 * and reuse flags and a destination outside them, and nothing else in the
 * kernel differs from orig. 0, or -1 with the reason. */
int banks_verify(const void *orig, const void *patched, size_t size,
                 const struct banks_layout *L, const struct banks_test *t, char *err,
                 size_t errlen);

/* A probe's patch-and-run session on a kernel of one shape (banks_session.c):
 * the bank probe and the dual-issue probe both time patched copies of one
 * compiled kernel, one block per SM, with these buffers. */
struct banks_session {
    struct gpu g;
    struct gpu_module base;      /* the kernel as compiled: the original cubin */
    void *copy;                  /* base.cubin_size bytes, for the copy a test patches */
    unsigned blocks;             /* one per SM */
    CUdeviceptr out;             /* the stamps: PATCH_STAMP_BYTES a block */
    CUdeviceptr in;              /* the shape's values, value k = 1 + k/1024 */
    CUdeviceptr sink;            /* the accumulators' sum, 4 bytes a thread */
};

/* Opens device (UUID or index), compiles the kernel of shape s (module
 * s->kernel, kept under GPUPROBE_CUBIN_DIR like any module) and allocates
 * the copy and the buffers. S is zeroed first. 0, or -1 with the reason;
 * banks_session_close must follow either way. */
int banks_session_open(struct banks_session *S, const char *device, const struct banks_shape *s,
                       char *err, size_t errlen);
/* Releases what banks_session_open acquired and zeroes S; also safe on a
 * zeroed session that was never opened. */
void banks_session_close(struct banks_session *S);

/* Runs the probe on a device (UUID or index): the whole result document,
 * or NULL with the reason. sample: random pairs for the confirmation;
 * repeats: measurements of the reference and of each cost (spread). */
json_t *banks_probe_run(const char *device, int sample, int repeats, char *err, size_t errlen);

/* One measurement (t NULL: the kernel as compiled, unedited), for
 * diagnosis: the rate and the kernel's layout, or NULL with the reason. */
json_t *banks_probe_one(const char *device, const struct banks_test *t, char *err,
                        size_t errlen);

#endif
