/*
 * The dual-issue probe's machine code (see dual_issue.h): the kernel's
 * shape, the reading of its compiled loop, the patterns as group slots,
 * the rewrite of the timed FFMAs and its verification.
 *
 * DESIGN
 * dual_edits turns (pattern, operands) into masked NOP writes and field
 * edits for patch_rewrite; dual_verify does not replay those lists: it
 * recomputes each timed instruction from the original and the pattern
 * through the codec, compares all 128 bits, and then checks the result's
 * safety on the patched code itself (no edited FFMA reads a register an
 * edited FFMA writes), so a wrong edit list cannot verify itself.
 */
#include <stdio.h>
#include <string.h>

#include "probes/gpu/cubin.h"
#include "probes/dual_issue.h"

const struct banks_shape dual_shape = {
    DUAL_KERNEL, DUAL_THREADS, DUAL_MAXNREG, DUAL_VALUES, DUAL_ACCS, DUAL_TIMED, 0, 1, 1,
};

const char *const dual_patterns[DUAL_PATTERNS] = {
    "1-1-2-2", "1-2-1-2", "1-2-2-1", "2-1-1-2", "2-1-2-1", "2-2-1-1", DUAL_REFERENCE,
};

/* ---- the compiled kernel -------------------------------------------------- */

/* Loop facts around the FFMA run: the instructions just before and after. */
static void loop_facts(const uint8_t *text, size_t n, struct dual_layout *L)
{
    size_t first = L->b.ffma[0], last = L->b.ffma[L->b.nffma - 1];
    for (size_t i = 0; i < DUAL_HEAD; i++) {
        struct sass_insn in = sass_decode(text, (first - DUAL_HEAD + i) * SASS_INSN_BYTES);
        L->head_op[i] = sass_field(&in, SASS_OPCODE);
        L->head_stall[i] = sass_field(&in, SASS_STALL);
    }
    if (last + 1 < n) {
        struct sass_insn in = sass_decode(text, (last + 1) * SASS_INSN_BYTES);
        L->next_op = sass_field(&in, SASS_OPCODE);
        L->next_stall = sass_field(&in, SASS_STALL);
    }
    for (size_t i = 0; i < L->b.nffma; i++) {
        struct sass_insn in = sass_decode(text, L->b.ffma[i] * SASS_INSN_BYTES);
        L->stall_sum += sass_field(&in, SASS_STALL);
    }
}

int dual_layout(const void *cubin, size_t size, struct dual_layout *L, char *err,
                size_t errlen)
{
    memset(L, 0, sizeof *L);
    if (banks_layout_shape(cubin, size, &dual_shape, &L->b, err, errlen) < 0)
        return -1;
    size_t first = L->b.ffma[0], last = L->b.ffma[L->b.nffma - 1];
    if (last - first + 1 != L->b.nffma) {
        snprintf(err, errlen, "the %zu timed FFMAs are not consecutive (0x%zx..0x%zx holds %zu "
                 "other instructions): a group would straddle them", L->b.nffma,
                 first * SASS_INSN_BYTES, last * SASS_INSN_BYTES, last - first + 1 - L->b.nffma);
        return -1;
    }
    if (first < DUAL_HEAD) {
        snprintf(err, errlen, "no loop control before the timed FFMAs");
        return -1;
    }
    size_t off, tsize;
    if (patch_find_text(cubin, size, DUAL_KERNEL, &off, &tsize, err, errlen) < 0)
        return -1;
    loop_facts((const uint8_t *)cubin + off, sass_count(tsize, NULL), L);
    return 0;
}

/* ---- patterns --------------------------------------------------------------- */

/* The pattern's cycles (1 or 2 FFMAs each): how many, or -1. */
static int parse_cycles(const char *pattern, int cyc[DUAL_GROUP_FFMA])
{
    int n = 0, ffma = 0;
    for (const char *p = pattern;;) {
        if ((*p != '1' && *p != '2') || n == DUAL_GROUP_FFMA)
            return -1;
        cyc[n] = *p++ - '0';
        ffma += cyc[n++];
        if (*p == '\0')
            break;
        if (*p++ != '-')
            return -1;
    }
    return ffma == DUAL_GROUP_FFMA ? n : -1;
}

int dual_group(const char *pattern, struct dual_slot g[DUAL_GROUP])
{
    int cyc[DUAL_GROUP_FFMA], n = pattern ? parse_cycles(pattern, cyc) : -1, first1 = -1;
    if (n < 0)
        return -1;
    for (int c = n - 1; c >= 0; c--)
        if (cyc[c] == 1)
            first1 = c;
    if (first1 < 0)
        return -1;                   /* pairs only: the NOP would ask for a third */
    int pairs = n < DUAL_GROUP_FFMA, s = 0;
    if (!pairs)
        g[s++] = (struct dual_slot){1, 1};      /* the reference: NOP in its own cycle */
    for (int c = 0; c < n; c++) {
        if (pairs && c == first1)
            g[s++] = (struct dual_slot){1, 0};  /* pairs with this single FFMA */
        if (cyc[c] == 2)
            g[s++] = (struct dual_slot){0, 0};
        g[s++] = (struct dual_slot){0, 1};
    }
    return 0;
}

unsigned dual_group_cycles(const struct dual_slot g[DUAL_GROUP])
{
    unsigned sum = 0;
    for (int s = 0; s < DUAL_GROUP; s++)
        sum += g[s].stall;
    return sum;
}

/* ---- the rewrite ------------------------------------------------------------ */

static int is_dest(const struct dual_layout *L, unsigned r)
{
    for (size_t d = 0; d < L->b.ndest; d++)
        if (L->b.dest[d] == r)
            return 1;
    return 0;
}

/* Every source a legal register and none a destination. */
static int operands_ok(const struct dual_layout *L, const struct dual_operands *o)
{
    if (L->b.ndest == 0 || o->reuse > 7)
        return 0;
    for (int s = 0; s < 3; s++) {
        if (o->n[s] == 0 || o->n[s] > DUAL_SRC_MAX)
            return 0;
        for (size_t i = 0; i < o->n[s]; i++)
            if (o->src[s][i] == SASS_RZ || o->src[s][i] > L->b.max_reg ||
                is_dest(L, o->src[s][i]))
                return 0;
    }
    return 1;
}

/* The NOP a free slot becomes: all bits but yield and the scoreboards. */
static struct patch_bits nop_write(size_t index, unsigned stall)
{
    struct patch_bits w = {index, {0, 0, 0}, {~0ull, ~0ull, 0}};
    sass_make_nop(&w.value);
    sass_set_field(&w.value, SASS_STALL, stall);
    static const enum sass_field keep[] = {SASS_YIELD, SASS_WBAR, SASS_RBAR, SASS_WAIT};
    for (size_t k = 0; k < sizeof keep / sizeof keep[0]; k++) {
        struct sass_insn m = sass_field_mask(keep[k]);
        w.mask.lo &= ~m.lo;
        w.mask.hi &= ~m.hi;
        w.value.lo &= ~m.lo;
        w.value.hi &= ~m.hi;
    }
    return w;
}

int dual_edits(const struct dual_layout *L, const char *pattern, const struct dual_operands *o,
               struct dual_edits *e)
{
    struct dual_slot g[DUAL_GROUP];
    e->nnop = e->ned = 0;
    if (dual_group(pattern, g) < 0 || !operands_ok(L, o) || L->b.nffma != DUAL_TIMED)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < DUAL_TIMED; i++) {
        const struct dual_slot *sl = &g[i % DUAL_GROUP];
        size_t at = L->b.ffma[i];
        if (sl->nop) {
            e->nop[e->nnop++] = nop_write(at, sl->stall);
            continue;
        }
        static const enum sass_field slot[3] = {SASS_RA, SASS_RB, SASS_RC};
        for (int s = 0; s < 3; s++)
            e->ed[e->ned++] = (struct patch_edit){at, slot[s], o->src[s][k % o->n[s]]};
        e->ed[e->ned++] = (struct patch_edit){at, SASS_RD, L->b.dest[k % L->b.ndest]};
        e->ed[e->ned++] = (struct patch_edit){at, SASS_REUSE, o->reuse};
        e->ed[e->ned++] = (struct patch_edit){at, SASS_STALL, sl->stall};
        k++;
    }
    return 0;
}

/* ---- verification ------------------------------------------------------------ */

/* What timed slot i should hold: the original, rewritten per the pattern. */
static struct sass_insn expected(struct sass_insn x, const struct dual_layout *L,
                                 const struct dual_slot *sl, const struct dual_operands *o,
                                 size_t k)
{
    if (sl->nop) {
        struct sass_insn n = x;
        sass_make_nop(&n);
        static const enum sass_field keep[] = {SASS_YIELD, SASS_WBAR, SASS_RBAR, SASS_WAIT};
        for (size_t f = 0; f < sizeof keep / sizeof keep[0]; f++)
            sass_set_field(&n, keep[f], sass_field(&x, keep[f]));
        sass_set_field(&n, SASS_STALL, sl->stall);
        return n;
    }
    sass_set_field(&x, SASS_RA, o->src[0][k % o->n[0]]);
    sass_set_field(&x, SASS_RB, o->src[1][k % o->n[1]]);
    sass_set_field(&x, SASS_RC, o->src[2][k % o->n[2]]);
    sass_set_field(&x, SASS_RD, L->b.dest[k % L->b.ndest]);
    sass_set_field(&x, SASS_REUSE, o->reuse);
    sass_set_field(&x, SASS_STALL, sl->stall);
    return x;
}

/* On the patched code: no edited FFMA reads a register an edited FFMA writes. */
static int no_reads_of_writes(const uint8_t *text, const struct dual_layout *L, char *err,
                              size_t errlen)
{
    unsigned char written[256] = {0};
    char mn[SASS_MNEMONIC_MAX];
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < L->b.nffma; i++) {
            struct sass_insn y = sass_decode(text, L->b.ffma[i] * SASS_INSN_BYTES);
            if (strcmp(sass_mnemonic(&y, mn), "FFMA") != 0)
                continue;
            if (pass == 0) {
                written[sass_field(&y, SASS_RD)] = 1;
                continue;
            }
            unsigned src[3] = {sass_field(&y, SASS_RA), sass_field(&y, SASS_RB),
                               sass_field(&y, SASS_RC)};
            for (int s = 0; s < 3; s++)
                if (written[src[s]] || src[s] == SASS_RZ) {
                    snprintf(err, errlen, "FFMA at 0x%zx reads R%u, which %s",
                             L->b.ffma[i] * SASS_INSN_BYTES, src[s],
                             src[s] == SASS_RZ ? "is RZ" : "an edited FFMA writes");
                    return -1;
                }
        }
    return 0;
}

/* Bytes outside the kernel's text identical; the text's place and size too. */
static int same_outside(const uint8_t *a, const uint8_t *b, size_t size, size_t *off,
                        size_t *tsize, char *err, size_t errlen)
{
    size_t off2, tsize2;
    if (patch_find_text(a, size, DUAL_KERNEL, off, tsize, err, errlen) < 0 ||
        patch_find_text(b, size, DUAL_KERNEL, &off2, &tsize2, err, errlen) < 0)
        return -1;
    if (*off != off2 || *tsize != tsize2 || memcmp(a, b, *off) != 0 ||
        memcmp(a + *off + *tsize, b + *off + *tsize, size - *off - *tsize) != 0) {
        snprintf(err, errlen, "the patch changed bytes outside the kernel's text");
        return -1;
    }
    return 0;
}

int dual_verify(const void *orig, const void *patched, size_t size, const struct dual_layout *L,
                const char *pattern, const struct dual_operands *o, char *err, size_t errlen)
{
    struct dual_slot g[DUAL_GROUP];
    if (dual_group(pattern, g) < 0 || !operands_ok(L, o) || L->b.nffma != DUAL_TIMED) {
        snprintf(err, errlen, "pattern '%.40s' or its operands cannot be verified",
                 pattern ? pattern : "");
        return -1;
    }
    const uint8_t *a = orig, *b = patched;
    size_t off, tsize, next = 0, k = 0;
    if (same_outside(a, b, size, &off, &tsize, err, errlen) < 0)
        return -1;
    for (size_t i = 0; i < sass_count(tsize, NULL); i++) {
        struct sass_insn x = sass_decode(a + off, i * SASS_INSN_BYTES);
        struct sass_insn y = sass_decode(b + off, i * SASS_INSN_BYTES);
        if (next < L->b.nffma && L->b.ffma[next] == i) {
            const struct dual_slot *sl = &g[next++ % DUAL_GROUP];
            x = expected(x, L, sl, o, k);
            k += !sl->nop;
        }
        if (x.lo != y.lo || x.hi != y.hi) {
            snprintf(err, errlen, "instruction at 0x%zx is not what pattern %.40s asks "
                     "(0x%016llx 0x%016llx, expected 0x%016llx 0x%016llx)", i * SASS_INSN_BYTES,
                     pattern, (unsigned long long)y.lo, (unsigned long long)y.hi,
                     (unsigned long long)x.lo, (unsigned long long)x.hi);
            return -1;
        }
    }
    if (next != L->b.nffma) {
        snprintf(err, errlen, "the layout's FFMAs are not in the kernel");
        return -1;
    }
    return no_reads_of_writes(b + off, L, err, errlen);
}
