/*
 * Direct branch targets in 128-bit SASS: where a BRA (or a relative CALL)
 * goes, and whether it may fall through, for the control-flow reader
 * (probes/gpu/sass_cfg.h).
 *
 * DESIGN
 * The target is a signed offset from the next instruction. Its bits are
 * not where sass.c's one-field table could hold them, and they moved
 * between architectures, so this is its own small codec, worked out from
 * and checked against the fixtures' cuobjdump text, which prints every
 * target as an address (tests/unit/test_sass_cfg.c: 138 sm_90 branches
 * and calls, 65 sm_80/sm_75 ones):
 *   sm_90        the offset in 4-byte units, split: bits [23:16] are its
 *                low 8 bits, bits [81:34] the rest, signed (bits [33:24]
 *                are not part of it);
 *   sm_75-sm_89  the offset in bytes, signed, in bits [81:32] (checked on
 *                sm_75 and sm_80; sm_86/89 assumed to share Ampere's).
 * Other architectures are refused rather than guessed.
 * A branch may fall through when its guard is not PT, or when its uniform
 * predicate (bits [89:87], 7 = UPT, as every fixture's BRA has it) is not
 * UPT; the second is read so that a BRA.U on a uniform predicate is not
 * taken for an unconditional jump, though no fixture shows one.
 */
#ifndef GPUPROBE_PROBES_GPU_SASS_BRANCH_H
#define GPUPROBE_PROBES_GPU_SASS_BRANCH_H

#include <stdint.h>

#include "probes/gpu/sass.h"

/* 1 for a BRA or CALL instruction (by the opcode table). */
int sass_is_direct_branch(const struct sass_insn *in);

/* The byte offset in the kernel's text that the BRA or CALL at in->offset
 * jumps to, for code of SM architecture sm (e.g. 90). 0 with *target set,
 * or -1 when in is not a BRA/CALL or sm's layout is not known. The target
 * may lie outside the text: the caller checks it. */
int sass_branch_target(const struct sass_insn *in, unsigned sm, int64_t *target);

/* 1 when the branch may fall through (a guard other than PT, or a uniform
 * predicate other than UPT), 0 when it always jumps. */
int sass_branch_conditional(const struct sass_insn *in);

#endif
