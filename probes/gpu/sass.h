/*
 * SASS reader for the 128-bit instructions of sm_70..sm_90 (Volta to
 * Hopper): enough to let a probe confirm that the timed region of its own
 * cubin holds the instructions it means to time, with no CUDA toolkit.
 *
 * DESIGN
 * An instruction is 16 bytes: two little-endian 64-bit words, lo (bits
 * 0..63) and hi (bits 64..127). Every field is named in enum sass_field and
 * located by one table in sass.c (bit position and width), so the layout
 * lives in one place: sass_field() reads through it and sass_set_field()
 * writes through it, and sass_encode() stores the two words back. The
 * opcode is bits [11:0]: the low 9 bits name the operation, the top 3 the
 * operand form (register, immediate, constant, uniform register...). The
 * mnemonic comes from the 9-bit part through a committed table derived from
 * cuobjdump's disassembly of the fixtures (tests/fixtures/cubins/) and
 * checked against it by tests/unit/test_sass.c; an operation missing from
 * the table reads as "?0xNNN" (the 12-bit opcode), never as an error. Only
 * the base mnemonic is given (FFMA, IMAD, MUFU, ...): modifiers such as
 * .WIDE or .RCP are not decoded. See docs/sass.md.
 *
 * Register fields hold the register number as encoded (255 is RZ); which
 * field a textual operand lands in depends on the operand form (e.g. with a
 * uniform register in the B field the second register source is in C).
 *
 * Contracts (assert()s, kept in every build): every enum sass_field
 * argument is a field (below SASS_FIELD_COUNT), and instruction, text and
 * buffer pointers are not NULL. Breaking one is a bug in the caller, never
 * bad input: fields are named in code, and a cubin's bytes are checked by
 * probes/gpu/cubin.h before they reach here.
 */
#ifndef GPUPROBE_PROBES_GPU_SASS_H
#define GPUPROBE_PROBES_GPU_SASS_H

#include <stddef.h>
#include <stdint.h>

#define SASS_INSN_BYTES 16
#define SASS_MNEMONIC_MAX 16         /* room for any mnemonic, "?0xNNN" included */
#define SASS_RZ 255
#define SASS_PT 7
#define SASS_SCOREBOARD_NONE 7       /* wbar/rbar value meaning "no scoreboard" */
#define SASS_SR_CLOCKLO 0x50         /* special register read by clock64 */
#define SASS_SR_GLOBALTIMERLO 0x52
/* SASS_MEM_SEM of an LDG, as every LDG of the fixtures has it (read against
 * cuobjdump's text; tests/unit/test_sass.c): a weak load (LDG.E, plain
 * ld.global), .STRONG.SM (ld.global.ca) and .STRONG.GPU (ld.global.cg).
 * Other values (.SYS, .CONSTANT ...) were not seen and are not named. */
#define SASS_SEM_WEAK 0
#define SASS_SEM_STRONG_SM 5
#define SASS_SEM_STRONG_GPU 7

struct sass_insn {
    uint64_t lo, hi;
    uint32_t offset;                 /* byte offset in the kernel's text */
};

enum sass_field {
    SASS_OPCODE,                     /* [11:0]   operation + operand form */
    SASS_OPCODE_BASE,                /* [8:0]    the operation */
    SASS_FORM,                       /* [11:9]   operand form */
    SASS_PRED,                       /* [14:12]  guard predicate; 7 = PT */
    SASS_PRED_NEG,                   /* [15]     guard negated (@!P0) */
    SASS_RD,                         /* [23:16] */
    SASS_RA,                         /* [31:24] */
    SASS_RB,                         /* [39:32] */
    SASS_RC,                         /* [71:64] */
    SASS_SREG,                       /* [79:72]  special register of S2R/CS2R/S2UR */
    SASS_MEM_SEM,                    /* [79:77]  LDG's ordering and scope (SASS_SEM_*) */
    SASS_STALL,                      /* [108:105] */
    SASS_YIELD,                      /* [109] */
    SASS_WBAR,                       /* [112:110] write scoreboard; 7 = none */
    SASS_RBAR,                       /* [115:113] read scoreboard; 7 = none */
    SASS_WAIT,                       /* [121:116] scoreboard wait mask */
    SASS_REUSE,                      /* [125:122] operand reuse: bit 0 = 1st source... */
    SASS_FIELD_COUNT
};

/* The instruction at byte offset off of text (text not NULL; off + 16 <=
 * size: caller's duty, the iterator below checks it). */
struct sass_insn sass_decode(const uint8_t *text, size_t off);

/* Value, bit position, width and name of field f (a field: asserted). */
unsigned sass_field(const struct sass_insn *in, enum sass_field f);
unsigned sass_field_lo(enum sass_field f);
unsigned sass_field_width(enum sass_field f);
const char *sass_field_name(enum sass_field f);

/* Writing, through the same field table: sets field f of *in to value and
 * leaves every other bit as it was. Returns 0, or -1 (in unchanged) when
 * value does not fit f's width (e.g. 8 for a 3-bit predicate, 16 for the
 * 4-bit stall count): values may come from a computation, so that is a
 * refusal, not an assert; f must be a field. Fields overlap where the
 * table says so: SASS_OPCODE is SASS_OPCODE_BASE plus SASS_FORM. */
int sass_set_field(struct sass_insn *in, enum sass_field f, unsigned value);
/* The bits of field f as an instruction (all others zero): for comparing
 * or writing instructions field by field (patch.h's masked writes). */
struct sass_insn sass_field_mask(enum sass_field f);
/* Turns *in into the NOP ptxas emits on sm_70..sm_90 (opcode 0x918, guard
 * PT, no operands): every bit is replaced, the control fields included
 * (stall 0, yield 0, no scoreboards, no wait, no reuse); in->offset is
 * kept. On sm_90 that is lo 0x0000000000007918, hi 0x000fc00000000000,
 * as in the committed fixtures. A caller that needs control fields sets
 * them afterwards. */
void sass_make_nop(struct sass_insn *in);
/* Writes the instruction's 16 bytes at byte offset off of text (caller's
 * duty: off + 16 <= the text's size), little-endian as sass_decode reads
 * them; in->offset is not used. */
void sass_encode(const struct sass_insn *in, uint8_t *text, size_t off);

/* Base mnemonic, e.g. "FFMA"; for an unknown operation "?0xNNN" written
 * into buf (SASS_MNEMONIC_MAX bytes, not NULL), which is then returned. */
const char *sass_mnemonic(const struct sass_insn *in, char buf[SASS_MNEMONIC_MAX]);
/* 1 when the operation is in the table. */
int sass_opcode_known(const struct sass_insn *in);
/* The table itself, for tests and documentation. */
size_t sass_opcode_table_size(void);
void sass_opcode_table_entry(size_t i, unsigned *base, const char **mnemonic);
/* "SR_CLOCKLO" etc. for the special registers seen in the fixtures; NULL
 * for others. */
const char *sass_sreg_name(unsigned sreg);

/* Iterating a kernel's text: whole instructions only (trailing bytes that
 * do not fill one are left out; sass_count reports them). */
struct sass_iter {
    const uint8_t *text;
    size_t size, pos;
};
void sass_iter_init(struct sass_iter *it, const uint8_t *text, size_t size);
int sass_iter_next(struct sass_iter *it, struct sass_insn *out);   /* 1, or 0 at the end */
size_t sass_count(size_t text_size, size_t *trailing_bytes);

/* A region of instructions: indices [first, end). */
struct sass_region {
    size_t first, end;
};

/* 1 if the instruction reads SR_CLOCKLO (CS2R, CS2R.32, S2R or S2UR). */
int sass_is_clock_read(const struct sass_insn *in);
/* The instructions strictly between the first two clock reads at or after
 * instruction index from. Returns 0, or -1 when fewer than two are found. */
int sass_clock_region(const uint8_t *text, size_t size, size_t from, struct sass_region *r);
/* How many instructions of the region have this base mnemonic. */
size_t sass_count_mnemonic(const uint8_t *text, size_t size, const struct sass_region *r,
                           const char *mnemonic);
/* A readable listing of the region (all text if r is NULL), one line per
 * instruction: offset, mnemonic, the two words as cuobjdump prints them,
 * and the control fields. malloc'd; NULL if memory runs out. */
char *sass_listing(const uint8_t *text, size_t size, const struct sass_region *r);

#endif
