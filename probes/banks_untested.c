/*
 * The registers the bank probe does not time, and why (banks.h,
 * banks_untested_json). Pure: no GPU, so the reasons can be tested.
 *
 * DESIGN
 * Two reasons, from two pieces of evidence. R253 and R254 are refused as
 * register numbers on sm_90: the register-limit experiment on an H100
 * (tests/gpu/results/2026-11-24-h100-regs-limit) faulted whenever an
 * instruction named them, whatever the slot, the operation or the
 * declared count, while R252 ran. Registers between the compiler's
 * ceiling and R252 (none on the GPUs seen so far: the JIT hands out
 * R0..R252 to a 255-register kernel) are left out because the same
 * experiment showed the declared count honoured only in part (count 12
 * -> 20: R17 ran, R18 faulted), so a register the compiler never hands
 * out may fault. A fault ends the process's CUDA context and logs an Xid
 * on the node: a routine probe must not provoke one.
 */
#include <stdio.h>

#include "probes/banks.h"

#define EVIDENCE "tests/gpu/results/2026-11-24-h100-regs-limit"

static const char refused[] =
    "refused as a register number on sm_90: on an H100 (driver 580.159.04) naming R253 or "
    "R254 raised CUDA_ERROR_ILLEGAL_INSTRUCTION whenever an instruction named it, as a source "
    "or as the destination, in FFMA and in IADD3, even in a kernel declared with 255 registers, "
    "where R252 ran (" EVIDENCE ", tests/gpu/regs_limit.sh; R253 as an FFMA source faulted on "
    "an H200 too, tests/gpu/results/2026-11-21-h200-banks); a routine probe must not fault the "
    "GPU";

void banks_untested_reason(unsigned reg, unsigned top, int regs, char *buf, size_t n)
{
    if (reg >= BANKS_REFUSED_REG)
        snprintf(buf, n, "%s", refused);
    else
        snprintf(buf, n,
                 "above R%u, the highest register this driver's compiler hands out to a kernel "
                 "of %d registers; a declared count is honoured only in part (count 12 -> 20: "
                 "R17 ran, R18 faulted, " EVIDENCE "), so a register the compiler does not hand "
                 "out may fault: a routine probe must not fault the GPU",
                 top, regs);
}

json_t *banks_untested_json(unsigned top, int regs)
{
    json_t *list = json_array();
    char why[768];
    for (unsigned r = top + 1; r <= BANKS_MAX_REG; r++) {
        banks_untested_reason(r, top, regs, why, sizeof why);
        json_array_append_new(list, json_pack("{s:i, s:s}", "register", r, "reason", why));
    }
    return list;
}
