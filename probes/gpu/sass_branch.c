/*
 * Direct branch targets (see sass_branch.h for the layouts and how they
 * were found).
 */
#include "probes/gpu/sass_branch.h"

#include <string.h>

#define UPRED_LO 87                  /* uniform predicate [89:87]; 7 = UPT */
#define UPRED_NEG 90

/* Bits [lo, lo + width) of the 128-bit instruction, 0 < lo < 128, width < 64:
 * wider than sass.c's 32-bit fields, so read here. */
static uint64_t bits(const struct sass_insn *in, unsigned lo, unsigned width)
{
    uint64_t v = lo >= 64 ? in->hi >> (lo - 64) : in->lo >> lo | in->hi << (64 - lo);
    return v & ((1ull << width) - 1);
}

static int64_t sign_extend(uint64_t v, unsigned width)
{
    uint64_t sign = 1ull << (width - 1);
    return (int64_t)((v ^ sign) - sign);
}

int sass_is_direct_branch(const struct sass_insn *in)
{
    char buf[SASS_MNEMONIC_MAX];
    const char *m = sass_mnemonic(in, buf);
    return strcmp(m, "BRA") == 0 || strcmp(m, "CALL") == 0;
}

int sass_branch_target(const struct sass_insn *in, unsigned sm, int64_t *target)
{
    int64_t next = (int64_t)in->offset + SASS_INSN_BYTES, delta;
    if (!sass_is_direct_branch(in))
        return -1;
    if (sm == 90)
        delta = 4 * (sign_extend(bits(in, 34, 48), 48) * 256 + (int64_t)bits(in, 16, 8));
    else if (sm >= 75 && sm < 90)
        delta = sign_extend(bits(in, 32, 50), 50);
    else
        return -1;
    *target = next + delta;
    return 0;
}

int sass_branch_conditional(const struct sass_insn *in)
{
    int guarded = sass_field(in, SASS_PRED) != SASS_PT || sass_field(in, SASS_PRED_NEG);
    int uniform = bits(in, UPRED_LO, 3) != SASS_PT || bits(in, UPRED_NEG, 1);
    return guarded || uniform;
}
