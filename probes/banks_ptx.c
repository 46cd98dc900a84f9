/*
 * PTX for the register-bank probe and the reading of its machine code
 * (see banks.h for the method).
 *
 * The kernel: BANKS_VALUES f32 values loaded from the input buffer stay
 * live through the loop (every one is a source of some timed FFMA), and
 * BANKS_ACCS accumulators take the FFMA results, so the register demand
 * is just over what .maxnreg 255 allows without spilling and ptxas
 * allocates all 255 registers. Thread 0 of each block stamps clock64 and
 * %globaltimer around the loop (after a bar.sync) into its block's four
 * words of out; the accumulators' sum is stored per thread to sink, so
 * nothing is dead. Only the timed loop holds FFMAs.
 *
 * The same generator and reader serve the dual-issue probe
 * (probes/dual_issue.h), whose kernel differs only in its numbers (a
 * struct banks_shape: more threads, fewer values, no register demand), so
 * the stamps, the loop and the checks of the compiled code are written
 * once; banks_probe_shape is the bank probe's own.
 */
#include <stdio.h>
#include <string.h>

#include "probes/banks.h"
#include "probes/gpu/cubin.h"
#include "probes/gpu/ptx.h"

static void stamp(struct ptx *p, int end)
{
    ptx_add(p, "\tbar.sync 0;\n\tsetp.ne.u32 %%p, %%me, 0;\n\t@%%p bra $L_stamp%d;\n"
               "\tmov.u64 %%c0, %%clock64;\n\tmov.u64 %%g0, %%globaltimer;\n"
               "\tmov.u32 %%w, %%ctaid.x;\n\tmul.wide.u32 %%wide, %%w, 32;\n"
               "\tadd.u64 %%wide, %%out, %%wide;\n"
               "\tst.global.u64 [%%wide+%d], %%c0;\n\tst.global.u64 [%%wide+%d], %%g0;\n"
               "$L_stamp%d:\n",
            end, end ? 16 : 0, end ? 24 : 8, end);
}

const struct banks_shape banks_probe_shape = {
    BANKS_KERNEL, BANKS_THREADS, 255, BANKS_VALUES, BANKS_ACCS, BANKS_TIMED, 255, 0, 0,
};

char *banks_ptx(int cc_major, int cc_minor)
{
    return banks_ptx_shape(&banks_probe_shape, cc_major, cc_minor);
}

/* Every value is loaded once from the input buffer, four at a time. */
static void load_values(struct ptx *p, int values)
{
    for (int k = 0; k + 3 < values; k += 4)
        ptx_add(p, "\tld.global.v4.f32 {%%v%d, %%v%d, %%v%d, %%v%d}, [%%in+%d];\n", k, k + 1,
                k + 2, k + 3, 4 * k);
    for (int k = values - values % 4; k < values; k++)
        ptx_add(p, "\tld.global.f32 %%v%d, [%%in+%d];\n", k, 4 * k);
}

/* The timed loop. With s->pinned the counter, the compare and a select
 * on the compare come first, and the first FFMA of every accumulator reads
 * the select: every FFMA then depends on the loop control, so ptxas must
 * issue the control before them and the FFMAs stay one unbroken run
 * (left free, it spreads the counter and compare among the FFMAs). */
static void loop(struct ptx *p, const struct banks_shape *s)
{
    static const char control[] = "\tadd.u32 %iter, %iter, 1;\n"
                                  "\tsetp.lt.u32 %p, %iter, %n;\n";
    ptx_add(p, "$L_loop:\n");
    if (s->pinned)
        ptx_add(p, "%s\tselp.f32 %%s, %%v0, %%v1, %%p;\n", control);
    for (int i = 0; i < s->timed; i++) {
        char a[16];
        if (s->pinned && i < s->accs)
            snprintf(a, sizeof a, "%%s");
        else
            snprintf(a, sizeof a, "%%v%d", (2 * i) % s->values);
        ptx_add(p, "\tfma.rn.f32 %%a%d, %s, %%v%d, %%a%d;\n", i % s->accs, a,
                (2 * i + 1) % s->values, i % s->accs);
    }
    ptx_add(p, "%s\t@%%p bra $L_loop;\n", s->pinned ? "" : control);
}

char *banks_ptx_shape(const struct banks_shape *s, int cc_major, int cc_minor)
{
    struct ptx p;
    ptx_init(&p);
    ptx_header(&p, cc_major, cc_minor);
    ptx_add(&p, ".visible .entry %s(.param .u64 p_out, .param .u64 p_in,"
                " .param .u64 p_sink, .param .u32 p_iters)\n"
                ".maxntid %d, 1, 1\n.maxnreg %d\n{\n", s->kernel, s->threads, s->maxnreg);
    ptx_add(&p, "\t.reg .pred %%p;\n\t.reg .u32 %%me, %%n, %%iter, %%w;\n"
                "\t.reg .u64 %%in, %%out, %%sink, %%c0, %%g0, %%wide;\n"
                "\t.reg .f32 %%v<%d>;\n\t.reg .f32 %%a<%d>;\n%s", s->values, s->accs,
                s->pinned ? "\t.reg .f32 %s;\n" : "");
    ptx_add(&p, "\tld.param.u64 %%in, [p_in];\n\tcvta.to.global.u64 %%in, %%in;\n"
                "\tld.param.u64 %%out, [p_out];\n\tcvta.to.global.u64 %%out, %%out;\n"
                "\tld.param.u64 %%sink, [p_sink];\n\tcvta.to.global.u64 %%sink, %%sink;\n"
                "\tld.param.u32 %%n, [p_iters];\n\tmov.u32 %%me, %%tid.x;\n");
    load_values(&p, s->values);
    for (int k = 0; k < s->accs; k++)
        ptx_add(&p, "\tmov.f32 %%a%d, %%v%d;\n", k, k);
    ptx_add(&p, "\tmov.u32 %%iter, 0;\n");
    stamp(&p, 0);
    loop(&p, s);
    stamp(&p, 1);
    for (int k = 1; k < s->accs; k++)
        ptx_add(&p, "\tadd.f32 %%a0, %%a0, %%a%d;\n", k);
    ptx_add(&p, "\tmov.u32 %%w, %%ctaid.x;\n\tmov.u32 %%iter, %%ntid.x;\n"
                "\tmad.lo.u32 %%w, %%w, %%iter, %%me;\n\tmul.wide.u32 %%wide, %%w, 4;\n"
                "\tadd.u64 %%wide, %%sink, %%wide;\n\tst.global.f32 [%%wide], %%a0;\n"
                "\tret;\n}\n");
    return ptx_take(&p);
}

/* ---- the compiled kernel ------------------------------------------------- */

/* Operations whose [23:16] field is not a register they write (stores,
 * control, compares into predicates). */
static int writes_no_register(const char *m)
{
    static const char *const none[] = {"STG",   "STS",   "STL",    "BAR",   "BRA",
                                       "EXIT",  "NOP",   "ISETP",  "FSETP", "PLOP3",
                                       "DEPBAR", "BSYNC", "BSSY",  "CALL",  "RET"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        if (strcmp(m, none[i]) == 0)
            return 1;
    return 0;
}

static int ends_prologue(const struct sass_insn *in)
{
    char mn[SASS_MNEMONIC_MAX];
    const char *m = sass_mnemonic(in, mn);
    return sass_is_clock_read(in) || strcmp(m, "STG") == 0 || strcmp(m, "BAR") == 0;
}

/* The instructions that can run between two timed FFMAs, when the loop
 * body holds no store or barrier (the kernels of this file): back from the
 * first FFMA to the start stamp's last store or barrier, forward from the
 * last FFMA to the first branch (the loop's own), inclusive. Without
 * decoding branch targets this is the loop body or more. */
static struct sass_region loop_span(const uint8_t *text, const struct sass_region *r,
                                    const struct banks_layout *L)
{
    struct sass_region span = {L->ffma[0], L->ffma[L->nffma - 1] + 1};
    char mn[SASS_MNEMONIC_MAX];
    while (span.first > r->first) {
        struct sass_insn in = sass_decode(text, (span.first - 1) * SASS_INSN_BYTES);
        if (ends_prologue(&in))
            break;
        span.first--;
    }
    while (span.end < r->end) {
        struct sass_insn in = sass_decode(text, span.end++ * SASS_INSN_BYTES);
        if (strcmp(sass_mnemonic(&in, mn), "BRA") == 0)
            break;
    }
    return span;
}

/* No other instruction of the span may write a destination (its [23:16]
 * field, read whatever the form: a false match only refuses). Operations
 * that write no register there are skipped, and so are uniform-datapath
 * instructions (U..., S2UR), which write uniform registers, a separate
 * file. */
static int no_other_writes(const uint8_t *text, const struct sass_region *span,
                           const struct banks_layout *L, char *err, size_t errlen)
{
    char mn[SASS_MNEMONIC_MAX];
    for (size_t i = span->first; i < span->end; i++) {
        struct sass_insn in = sass_decode(text, i * SASS_INSN_BYTES);
        const char *m = sass_mnemonic(&in, mn);
        if (strcmp(m, "FFMA") == 0 || m[0] == 'U' || strcmp(m, "S2UR") == 0 ||
            writes_no_register(m))
            continue;
        for (size_t d = 0; d < L->ndest; d++)
            if (sass_field(&in, SASS_RD) == L->dest[d]) {
                snprintf(err, errlen, "%s at 0x%zx writes R%u, a timed FFMA's destination", m,
                         i * SASS_INSN_BYTES, L->dest[d]);
                return -1;
            }
    }
    return 0;
}

/* Why writing the chosen destination is safe: the loop's FFMA destinations
 * hold the accumulators (ptxas rotates them through a few registers), which
 * are live through the whole loop, so during it those registers hold
 * nothing else, and no other instruction of the region writes them; the
 * loop's counter, bound, addresses and values sit in other registers. Writing an accumulator
 * register only changes the (unchecked) sum stored at the end. */
int banks_layout(const void *cubin, size_t size, struct banks_layout *L, char *err,
                 size_t errlen)
{
    return banks_layout_shape(cubin, size, &banks_probe_shape, L, err, errlen);
}

int banks_layout_shape(const void *cubin, size_t size, const struct banks_shape *s,
                       struct banks_layout *L, char *err, size_t errlen)
{
    struct cubin c;
    memset(L, 0, sizeof *L);
    if (cubin_parse(&c, cubin, size, err, errlen) < 0) {
        cubin_free(&c);
        return -1;
    }
    int rc = -1;
    const struct cubin_kernel *k = cubin_kernel_find(&c, s->kernel);
    struct sass_region r;
    if (s->timed < 1 || s->timed > BANKS_TIMED)
        snprintf(err, errlen, "%d timed FFMAs: the layout holds 1 to %d", s->timed, BANKS_TIMED);
    else if (!k)
        snprintf(err, errlen, "no kernel %s in the cubin", s->kernel);
    else if (s->regs && k->regs != s->regs)
        snprintf(err, errlen, "the kernel has %d registers, not %d: R%d..R%d are not legal",
                 k->regs, s->regs, k->regs < 0 ? 0 : k->regs, s->regs - 1);
    else if (sass_clock_region(k->text, k->text_size, 0, &r) < 0)
        snprintf(err, errlen, "no timed region (two clock reads) in the kernel");
    else {
        L->regs = k->regs;
        rc = 0;
        char mn[SASS_MNEMONIC_MAX];
        for (size_t i = r.first; rc == 0 && i < r.end; i++) {
            struct sass_insn in = sass_decode(k->text, i * SASS_INSN_BYTES);
            if (strcmp(sass_mnemonic(&in, mn), "FFMA") != 0)
                continue;
            unsigned form = sass_field(&in, SASS_FORM), rd = sass_field(&in, SASS_RD);
            if (L->nffma == (size_t)s->timed) {
                snprintf(err, errlen, "more than %d FFMAs in the timed region", s->timed);
                rc = -1;
            } else if (L->nffma > 0 && form != L->form) {
                snprintf(err, errlen, "FFMA at 0x%zx has operand form %u, the first had %u",
                         i * SASS_INSN_BYTES, form, L->form);
                rc = -1;
            } else if (sass_field(&in, SASS_RA) == SASS_RZ || sass_field(&in, SASS_RB) == SASS_RZ ||
                       sass_field(&in, SASS_RC) == SASS_RZ || rd == SASS_RZ) {
                snprintf(err, errlen, "FFMA at 0x%zx does not read three registers",
                         i * SASS_INSN_BYTES);
                rc = -1;
            } else {
                L->form = form;
                L->ffma[L->nffma++] = i;
                unsigned f4[] = {rd, sass_field(&in, SASS_RA), sass_field(&in, SASS_RB),
                                 sass_field(&in, SASS_RC)};
                for (int q = 0; q < 4; q++)
                    if (f4[q] > L->max_reg)
                        L->max_reg = f4[q];
                size_t d = 0;
                while (d < L->ndest && L->dest[d] != rd)
                    d++;
                if (d == L->ndest && L->ndest == BANKS_DEST_MAX) {
                    snprintf(err, errlen, "the timed FFMAs write more than %d registers",
                             BANKS_DEST_MAX);
                    rc = -1;
                } else if (d == L->ndest)
                    L->dest[L->ndest++] = rd;
            }
        }
        if (rc == 0 && L->nffma != (size_t)s->timed) {
            snprintf(err, errlen, "%zu FFMAs in the timed region, expected %d", L->nffma,
                     s->timed);
            rc = -1;
        }
        if (rc == 0) {
            struct sass_region span = s->loop_span ? loop_span(k->text, &r, L) : r;
            rc = no_other_writes(k->text, &span, L, err, errlen);
        }
    }
    cubin_free(&c);
    return rc;
}

/* 1 if the instruction certainly writes the general register in its Rd
 * field: a short list on purpose, since a misread destination would make
 * the probe name a register that faults the GPU. */
int banks_writes_gpr(const struct sass_insn *in)
{
    static const char *const sure[] = {"S2R",  "MOV", "IMAD", "IADD3", "FFMA", "FADD",
                                       "FMUL", "LOP3", "LEA", "SHF",   "LDG",  "LDS"};
    char mn[SASS_MNEMONIC_MAX];
    const char *m = sass_mnemonic(in, mn);
    for (size_t i = 0; i < sizeof sure / sizeof sure[0]; i++)
        if (strcmp(m, sure[i]) == 0)
            return sass_field(in, SASS_RD) != SASS_RZ;
    return 0;
}

static int is_source(const struct banks_test *t, unsigned reg)
{
    return reg == t->src[0] || reg == t->src[1] || reg == t->src[2];
}

int banks_pick_dest(const struct banks_layout *L, const struct banks_test *t, unsigned *rd)
{
    for (size_t d = 0; d < L->ndest; d++)
        if (!is_source(t, L->dest[d])) {
            *rd = L->dest[d];
            return 0;
        }
    return -1;
}

static int legal_source(unsigned reg)
{
    return reg <= BANKS_MAX_REG || reg == SASS_RZ;
}

static int is_dest(const struct banks_layout *L, unsigned reg)
{
    for (size_t d = 0; d < L->ndest; d++)
        if (L->dest[d] == reg)
            return 1;
    return 0;
}

/* A step is legal: sources are registers or RZ, reuse fits its field, and
 * the destination is one the compiler used only as a timed FFMA's
 * accumulator (anything else may hold an address or the loop counter). */
static int legal_step(const struct banks_layout *L, const struct banks_step *st)
{
    return legal_source(st->t.src[0]) && legal_source(st->t.src[1]) &&
           legal_source(st->t.src[2]) && st->t.reuse <= 7 && is_dest(L, st->rd);
}

size_t banks_edits_seq(const struct banks_layout *L, const struct banks_step *seq, size_t n,
                       struct patch_edit *edits)
{
    if (n == 0 || n > BANKS_SEQ_MAX || L->nffma % n != 0)
        return 0;
    for (size_t k = 0; k < n; k++)
        if (!legal_step(L, &seq[k]))
            return 0;
    static const enum sass_field slot[3] = {SASS_RA, SASS_RB, SASS_RC};
    size_t m = 0;
    for (size_t i = 0; i < L->nffma; i++) {
        const struct banks_step *st = &seq[i % n];
        for (int s = 0; s < 3; s++)
            edits[m++] = (struct patch_edit){L->ffma[i], slot[s], st->t.src[s]};
        edits[m++] = (struct patch_edit){L->ffma[i], SASS_RD, st->rd};
        edits[m++] = (struct patch_edit){L->ffma[i], SASS_REUSE, st->t.reuse};
    }
    return m;
}

size_t banks_edits(const struct banks_layout *L, const struct banks_test *t,
                   struct patch_edit *edits)
{
    struct banks_step st = {*t, 0};
    if (banks_pick_dest(L, t, &st.rd) < 0)
        return 0;
    return banks_edits_seq(L, &st, 1, edits);
}

int banks_verify_seq(const void *orig, const void *patched, size_t size,
                     const struct banks_layout *L, const struct banks_step *seq, size_t n,
                     char *err, size_t errlen)
{
    size_t off, tsize, off2, tsize2;
    if (n == 0 || n > BANKS_SEQ_MAX || L->nffma % n != 0) {
        snprintf(err, errlen, "a sequence of %zu steps does not divide %zu FFMAs", n, L->nffma);
        return -1;
    }
    if (patch_find_text(orig, size, BANKS_KERNEL, &off, &tsize, err, errlen) < 0 ||
        patch_find_text(patched, size, BANKS_KERNEL, &off2, &tsize2, err, errlen) < 0)
        return -1;
    const uint8_t *a = (const uint8_t *)orig, *b = (const uint8_t *)patched;
    /* outside the kernel's text, not one byte may differ */
    if (off != off2 || tsize != tsize2 || memcmp(a, b, off) != 0 ||
        memcmp(a + off + tsize, b + off + tsize, size - off - tsize) != 0) {
        snprintf(err, errlen, "the patch changed bytes outside the kernel's text");
        return -1;
    }
    size_t next = 0;
    for (size_t i = 0; i < tsize / SASS_INSN_BYTES; i++) {
        struct sass_insn x = sass_decode(a + off, i * SASS_INSN_BYTES);
        struct sass_insn y = sass_decode(b + off, i * SASS_INSN_BYTES);
        if (next < L->nffma && L->ffma[next] == i) {
            const struct banks_step *st = &seq[next % n];
            next++;
            unsigned got[3] = {sass_field(&y, SASS_RA), sass_field(&y, SASS_RB),
                               sass_field(&y, SASS_RC)};
            if (memcmp(got, st->t.src, sizeof got) != 0 ||
                sass_field(&y, SASS_REUSE) != st->t.reuse) {
                snprintf(err, errlen, "FFMA at 0x%zx reads R%u, R%u, R%u reuse %u", i * 16,
                         got[0], got[1], got[2], sass_field(&y, SASS_REUSE));
                return -1;
            }
            if (sass_field(&y, SASS_RD) != st->rd || !is_dest(L, st->rd)) {
                snprintf(err, errlen, "FFMA at 0x%zx writes R%u", i * 16, sass_field(&y, SASS_RD));
                return -1;
            }
            /* every other field as the compiler wrote it */
            static const enum sass_field ed[] = {SASS_RA, SASS_RB, SASS_RC, SASS_RD, SASS_REUSE};
            for (size_t e = 0; e < sizeof ed / sizeof ed[0]; e++) {
                sass_set_field(&x, ed[e], sass_field(&y, ed[e]));
            }
        }
        if (x.lo != y.lo || x.hi != y.hi) {
            snprintf(err, errlen, "instruction at 0x%zx changed beyond the tested fields", i * 16);
            return -1;
        }
    }
    if (next != L->nffma) {
        snprintf(err, errlen, "the layout's FFMAs are not in the kernel");
        return -1;
    }
    return 0;
}

/* The single-test form: the destination edits chose, not a source. */
int banks_verify(const void *orig, const void *patched, size_t size,
                 const struct banks_layout *L, const struct banks_test *t, char *err,
                 size_t errlen)
{
    struct banks_step st = {*t, 0};
    if (banks_pick_dest(L, t, &st.rd) < 0) {
        snprintf(err, errlen, "no destination outside the sources");
        return -1;
    }
    return banks_verify_seq(orig, patched, size, L, &st, 1, err, errlen);
}
