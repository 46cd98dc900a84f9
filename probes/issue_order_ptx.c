/*
 * The issue-order experiment's kernel and the reading of its machine code
 * (see issue_order.h).
 *
 * DESIGN
 * The stream is straight-line PTX: IO_SEGS times a clock read, IO_FFMA
 * FFMAs cycling over IO_ACCS accumulators and a clock read, the clocks
 * kept in registers and stored only after the last segment, so no store
 * sits between the reads. A barrier before the stream releases the block's
 * warps together (the analysis counts a warp that has not started as
 * ready). The multiplier and addend come from the thread index, so ptxas
 * cannot fold an FFMA away; every accumulator is stored, so none is dead.
 * .maxntid tells the JIT the block may have IO_MAX_THREADS threads, so it
 * keeps to the registers that allows (the run launches up to that many).
 * ptxas might still move FFMAs across a clock read: io_layout refuses a
 * cubin unless each segment holds exactly its IO_FFMA FFMAs and nothing
 * else, and io_edits only ever names instructions io_layout found.
 */
#include <stdio.h>
#include <string.h>

#include "probes/gpu/cubin.h"
#include "probes/gpu/patch.h"
#include "probes/gpu/ptx.h"
#include "probes/issue_order.h"

/* Field values read off the control-code probe's sweep on sm_90
 * (docs/sass.md): yield field 1 lets a one-warp FFMA stream issue at 1.25
 * cycles per instruction at stall 1, field 0 adds a cycle; stalls 12-15
 * with field 1 do not wait, so the stall experiment uses 11. */
const struct io_experiment io_experiments[] = {
    {"compiled", "the compiler's control codes", -1, -1, -1, -1, 0, 0},
    {"quiet", "FFMAs and clock reads stall 1 (reads as compiled), yield field 1: no event",
     1, 1, -1, 1, 0, 0},
    {"stall_ends", "as quiet, end reads stall 11", 1, 1, 11, 1, 1, 11},
    {"yield0_ends", "as quiet, end reads yield field 0", 1, 1, -1, 0, 1, 1},
    {"yield1_ends", "FFMAs and start reads yield field 0, end reads yield field 1", 1, 0, -1,
     1, 1, 1},
};
const size_t io_nexperiments = sizeof io_experiments / sizeof io_experiments[0];

char *io_ptx(int cc_major, int cc_minor)
{
    struct ptx p;
    ptx_init(&p);
    ptx_header(&p, cc_major, cc_minor);
    ptx_add(&p,
            ".visible .entry " IO_KERNEL "(.param .u64 p_rec, .param .u64 p_acc)\n"
            ".maxntid %d, 1, 1\n{\n"
            "\t.reg .pred %%lead;\n"
            "\t.reg .u32 %%t, %%wid, %%sm, %%idx, %%lane;\n\t.reg .u64 %%c<%d>;\n"
            "\t.reg .f32 %%f<%d>, %%m, %%k;\n"
            "\t.reg .u64 %%rec, %%acc, %%o;\n"
            "\tmov.u32 %%t, %%tid.x;\n\tmov.u32 %%wid, %%warpid;\n\tmov.u32 %%sm, %%smid;\n"
            "\tshr.u32 %%idx, %%t, 5;\n\tand.b32 %%lane, %%t, 31;\n"
            "\tcvt.rn.f32.u32 %%m, %%t;\n\tfma.rn.f32 %%k, %%m, 0f3A800000, 0f3F000000;\n"
            "\tfma.rn.f32 %%m, %%m, 0f33800000, 0f3F800000;\n",
            IO_MAX_THREADS, 2 * IO_SEGS, IO_ACCS);
    for (int a = 0; a < IO_ACCS; a++)
        ptx_add(&p, "\tadd.f32 %%f%d, %%k, 0f%08X;\n", a, 0x3f800000u + (unsigned)a * 0x100000u);
    ptx_add(&p, "\tbar.sync 0;\n");
    for (int s = 0; s < IO_SEGS; s++) {
        ptx_add(&p, "\tmov.u64 %%c%d, %%clock64;\n", 2 * s);
        for (int i = 0; i < IO_FFMA; i++)
            ptx_add(&p, "\tfma.rn.f32 %%f%d, %%f%d, %%m, %%k;\n", i % IO_ACCS, i % IO_ACCS);
        ptx_add(&p, "\tmov.u64 %%c%d, %%clock64;\n", 2 * s + 1);
    }
    ptx_add(&p,
            "\tld.param.u64 %%rec, [p_rec];\n\tcvta.to.global.u64 %%rec, %%rec;\n"
            "\tld.param.u64 %%acc, [p_acc];\n\tcvta.to.global.u64 %%acc, %%acc;\n"
            "\tmul.wide.u32 %%o, %%t, %d;\n\tadd.u64 %%o, %%acc, %%o;\n",
            IO_ACCS * 4);
    for (int a = 0; a < IO_ACCS; a++)
        ptx_add(&p, "\tst.global.f32 [%%o+%d], %%f%d;\n", a * 4, a);
    ptx_add(&p,
            "\tsetp.ne.u32 %%lead, %%lane, 0;\n\t@%%lead bra $L_done;\n"
            "\tmul.wide.u32 %%o, %%idx, %d;\n\tadd.u64 %%o, %%rec, %%o;\n"
            "\tst.global.u32 [%%o], %%wid;\n\tst.global.u32 [%%o+4], %%sm;\n"
            "\tst.global.u32 [%%o+8], %%idx;\n\tst.global.u32 [%%o+12], %u;\n",
            IO_REC_WORDS * 4, IO_MARK);
    for (int c = 0; c < 2 * IO_SEGS; c++)
        ptx_add(&p, "\tst.global.u64 [%%o+%d], %%c%d;\n", 16 + 8 * c, c);
    ptx_add(&p, "$L_done:\n\tret;\n}\n");
    return ptx_take(&p);
}

/* ---- the compiled code --------------------------------------------------------- */

static int is_ffma(const struct sass_insn *in)
{
    char mn[SASS_MNEMONIC_MAX];
    return strcmp(sass_mnemonic(in, mn), "FFMA") == 0;
}

/* Walks the text once: clock reads in turn open and close segments. */
static int read_text(const uint8_t *text, size_t n, struct io_layout *L, char *err,
                     size_t errlen)
{
    size_t reads = 0, nffma = 0, in_seg = 0;
    for (size_t i = 0; i < n; i++) {
        struct sass_insn in = sass_decode(text, i * SASS_INSN_BYTES);
        char mn[SASS_MNEMONIC_MAX];
        if (sass_is_clock_read(&in)) {
            L->other_reads += strcmp(sass_mnemonic(&in, mn), "CS2R") != 0;
            if (reads == 2 * IO_SEGS) {
                snprintf(err, errlen, "more than %d clock reads (another at 0x%zx)",
                         2 * IO_SEGS, i * SASS_INSN_BYTES);
                return -1;
            }
            size_t s = reads / 2;
            if (reads % 2 == 0) {
                L->start[s] = i;
                in_seg = 0;
            } else {
                L->end[s] = i;
                if (in_seg != IO_FFMA) {
                    snprintf(err, errlen, "segment %zu holds %zu FFMAs, not %d", s, in_seg,
                             IO_FFMA);
                    return -1;
                }
            }
            reads++;
            continue;
        }
        int inside = reads % 2 == 1;
        if (inside && !is_ffma(&in)) {
            snprintf(err, errlen, "segment %zu holds a %s at 0x%zx: only FFMAs may sit between "
                     "its clock reads", reads / 2, sass_mnemonic(&in, mn), i * SASS_INSN_BYTES);
            return -1;
        }
        if (!inside && is_ffma(&in) && reads > 0 && reads < 2 * IO_SEGS) {
            snprintf(err, errlen, "an FFMA at 0x%zx between segments", i * SASS_INSN_BYTES);
            return -1;
        }
        if (inside) {
            L->ffma[nffma++] = i;
            in_seg++;
        }
    }
    if (reads != 2 * IO_SEGS) {
        snprintf(err, errlen, "%zu clock reads in the kernel, not %d", reads, 2 * IO_SEGS);
        return -1;
    }
    return 0;
}

int io_layout(const void *cubin, size_t size, struct io_layout *L, char *err, size_t errlen)
{
    size_t off, tsize;
    memset(L, 0, sizeof *L);
    if (patch_find_text(cubin, size, IO_KERNEL, &off, &tsize, err, errlen) < 0)
        return -1;
    const uint8_t *text = (const uint8_t *)cubin + off;
    if (read_text(text, sass_count(tsize, NULL), L, err, errlen) < 0)
        return -1;
    struct sass_insn end = sass_decode(text, L->end[0] * SASS_INSN_BYTES);
    L->compiled_stall_end = sass_field(&end, SASS_STALL);
    L->compiled_yield_end = sass_field(&end, SASS_YIELD);
    for (size_t k = 0; k < IO_SEGS * IO_FFMA; k++) {
        struct sass_insn in = sass_decode(text, L->ffma[k] * SASS_INSN_BYTES);
        unsigned s = sass_field(&in, SASS_STALL);
        L->compiled_stall_ffma = s > L->compiled_stall_ffma ? s : L->compiled_stall_ffma;
    }
    return 0;
}

static size_t put(struct patch_edit *e, size_t n, size_t index, enum sass_field f, int value)
{
    if (value < 0)
        return n;
    e[n] = (struct patch_edit){index, f, (unsigned)value};
    return n + 1;
}

size_t io_edits(const struct io_layout *L, const struct io_experiment *x, struct patch_edit *e)
{
    size_t n = 0;
    for (size_t k = 0; k < IO_SEGS * IO_FFMA; k++) {
        n = put(e, n, L->ffma[k], SASS_STALL, x->ffma_stall);
        n = put(e, n, L->ffma[k], SASS_YIELD, x->ffma_yield);
    }
    for (size_t s = 0; s < IO_SEGS; s++) {
        n = put(e, n, L->start[s], SASS_YIELD, x->ffma_yield);
        n = put(e, n, L->end[s], SASS_STALL, x->end_stall);
        n = put(e, n, L->end[s], SASS_YIELD, x->end_yield);
    }
    return n;
}

/* ---- the records ------------------------------------------------------------------ */

uint64_t io_record_clock(const uint32_t *rec, size_t c)
{
    uint64_t v;
    memcpy(&v, rec + 4 + 2 * c, sizeof v);   /* 8-aligned in the kernel, not here */
    return v;
}

/* Overlaps between every two segments of different warps of the block. */
static void overlaps(const uint32_t *words, unsigned nwarps, struct io_overlaps *ov)
{
    for (unsigned a = 0; a < nwarps; a++)
        for (unsigned b = a + 1; b < nwarps; b++) {
            const uint32_t *x = words + (size_t)a * IO_REC_WORDS,
                           *y = words + (size_t)b * IO_REC_WORDS;
            int same = x[0] % IO_GROUPS == y[0] % IO_GROUPS;
            for (size_t i = 0; i < IO_SEGS; i++)
                for (size_t j = 0; j < IO_SEGS; j++) {
                    size_t o = io_record_clock(x, 2 * i) < io_record_clock(y, 2 * j + 1) &&
                               io_record_clock(y, 2 * j) < io_record_clock(x, 2 * i + 1);
                    *(same ? &ov->same_pairs : &ov->cross_pairs) += 1;
                    *(same ? &ov->same_overlapping : &ov->cross_overlapping) += o;
                }
        }
}

int io_records(const uint32_t *words, unsigned nwarps, const struct io_experiment *x,
               struct io_trace *groups, struct io_overlaps *ov, char *err, size_t errlen)
{
    memset(groups, 0, IO_GROUPS * sizeof *groups);
    for (unsigned i = 0; i < nwarps; i++) {
        const uint32_t *r = words + (size_t)i * IO_REC_WORDS;
        if (r[3] != IO_MARK || r[2] != i || r[1] != words[1]) {
            snprintf(err, errlen, "warp %u's record is not what the kernel writes (mark 0x%x, "
                     "index %u, SM %u, warp 0 on SM %u)", i, r[3], r[2], r[1], words[1]);
            return -1;
        }
        struct io_trace *g = &groups[r[0] % IO_GROUPS];
        if (g->nwarps == IO_MAX_WARPS) {
            snprintf(err, errlen, "more than %d warps with %%warpid %u mod %d", IO_MAX_WARPS,
                     r[0] % IO_GROUPS, IO_GROUPS);
            return -1;
        }
        struct io_warp *w = &g->w[g->nwarps++];
        w->warpid = r[0];
        w->index = i;
        for (size_t s = 0; s < IO_SEGS; s++) {
            w->start[s] = (uint32_t)io_record_clock(r, 2 * s);
            w->end[s] = (uint32_t)io_record_clock(r, 2 * s + 1);
        }
    }
    for (unsigned k = 0; k < IO_GROUPS; k++) {
        groups[k].nseg = IO_SEGS;
        groups[k].blocked = x->blocked;
        groups[k].event_at_end = x->event;
    }
    overlaps(words, nwarps, ov);
    return 0;
}
