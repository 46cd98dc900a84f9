/*
 * Unit tests of the SASS control-flow reader: branch targets
 * (probes/gpu/sass_branch.c), the instruction classes
 * (probes/gpu/sass_class.c), and blocks, loops, skips and groups
 * (probes/gpu/sass_cfg.c, sass_cfg_json.c).
 *
 * DESIGN
 * cuobjdump prints every branch's target as an address, so its text of the
 * fixtures (tests/fixtures/cubins/ and its model/ folder, read by
 * tests/unit/support/sass_oracle.c) is the oracle for the target decoder:
 * each BRA and CALL must decode to the printed address, and may fall
 * through exactly when the text shows a guard. The same text gives the
 * loops independently of the reader (the distinct targets of branches that
 * go backwards, a branch to itself after EXIT aside) and, for the model's
 * mixed kernel, the blocks, loop, skips and groups written out by hand
 * below. Small hand-assembled programs pin what no fixture shows: nested
 * loops, nested skips, calls, guarded exits, an out-of-line block that
 * branches back without making a loop, and every refusal
 * (irreducible loops, a branch out of the text or between instructions, a
 * text that is not whole instructions, an architecture without a known
 * branch layout). The hand assembler encodes targets by
 * the layout docs/sass.md states, so decoding its output checks the
 * layout's far bits, which the fixtures' short branches do not reach.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/gpu/cubin.h"
#include "probes/gpu/sass.h"
#include "probes/gpu/sass_branch.h"
#include "probes/gpu/sass_cfg.h"
#include "probes/gpu/sass_class.h"
#include "tests/unit/support/death.h"
#include "tests/unit/support/sass_oracle.h"
#include "tests/unit/support/tmpfile.h"

#define MODEL "tests/fixtures/cubins/model/"

static char err[512];

/* ---- fixtures ------------------------------------------------------------------ */

struct fixture {
    char path[256];                  /* without the extension */
    uint8_t *buf;
    size_t size;
    struct cubin c;
    struct oracle o;
};

static void fixture_open(struct fixture *f, const char *sass_path)
{
    char path[300];
    snprintf(f->path, sizeof f->path, "%.*s", (int)(strlen(sass_path) - 5), sass_path);
    snprintf(path, sizeof path, "%s.cubin", f->path);
    f->buf = (uint8_t *)must_read_file(path, &f->size);
    if (cubin_parse(&f->c, f->buf, f->size, err, sizeof err) != 0)
        fail_msg("%s: %s", path, err);
    sass_oracle_load(sass_path, &f->o);
}

static void fixture_close(struct fixture *f)
{
    cubin_free(&f->c);
    sass_oracle_free(&f->o);
    free(f->buf);
}

/* Every fixture with a cuobjdump listing: NAME.sass beside NAME.cubin. */
static void fixtures_glob(glob_t *g)
{
    assert_int_equal(glob("tests/fixtures/cubins/*.sass", 0, NULL, g), 0);
    assert_int_equal(glob(MODEL "*.sass", GLOB_APPEND, NULL, g), 0);
    assert_true(g->gl_pathc >= 29);
}

/* The section text a listed function's offsets are in (a callee is listed
 * inside its caller's function, at offsets past the caller's own code). */
static const struct cubin_section *text_of(const struct fixture *f, const char *fn)
{
    const struct cubin_kernel *k = cubin_kernel_find(&f->c, fn);
    if (!k)
        fail_msg("%s: no function %s in the cubin", f->path, fn);
    return &f->c.sections[k->section];
}

/* The text's mnemonic (no guard, no modifiers) and guard. */
static void text_op(const char *text, char *mnemonic, size_t len, int *guarded)
{
    const char *p = text;
    *guarded = p[0] == '@' && strncmp(p, "@PT ", 4) != 0;
    if (p[0] == '@')
        p = strchr(p, ' ') + 1;
    size_t n = strcspn(p, ". ;");
    snprintf(mnemonic, len, "%.*s", (int)n, p);
}

/* The address a BRA or CALL prints ("BRA 0x190", "CALL.REL.NOINC 0x2a0"); -1 if none. */
static long long text_target(const char *text)
{
    const char *b = strstr(text, "BRA ");
    if (!b)
        b = strstr(text, "CALL.");
    const char *x = b ? strstr(b, "0x") : NULL;
    return x ? strtoll(x, NULL, 16) : -1;
}

/* ---- branch targets against cuobjdump ------------------------------------------ */

static void test_branch_targets_match_cuobjdump(void **state)
{
    (void)state;
    glob_t g;
    size_t branches = 0, sm90 = 0, others = 0;
    fixtures_glob(&g);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        struct fixture f;
        fixture_open(&f, g.gl_pathv[i]);
        for (size_t fn = 0; fn < f.o.n; fn++) {
            const struct cubin_section *sec = text_of(&f, f.o.funcs[fn].name);
            for (size_t k = 0; k < f.o.funcs[fn].n; k++) {
                const struct oinsn *o = &f.o.funcs[fn].insns[k];
                struct sass_insn in = sass_decode(sec->data, o->offset);
                int64_t t;
                char m[32];
                int guarded;
                assert_true(in.lo == o->lo && in.hi == o->hi);
                text_op(o->text, m, sizeof m, &guarded);
                if (strcmp(m, "BRA") && strcmp(m, "CALL")) {
                    assert_int_equal(sass_branch_target(&in, f.c.sm, &t), -1);
                    others++;
                    continue;
                }
                assert_int_equal(sass_branch_target(&in, f.c.sm, &t), 0);
                if (t != text_target(o->text))
                    fail_msg("%s/%s /*%04x*/ %s: decoded 0x%llx", f.path, f.o.funcs[fn].name,
                             o->offset, o->text, (long long)t);
                assert_int_equal(sass_branch_conditional(&in), guarded);
                branches++;
                sm90 += f.c.sm == 90;
            }
        }
        fixture_close(&f);
    }
    globfree(&g);
    print_message("sass_cfg: %zu branch and call targets match cuobjdump (%zu sm_90), %zu other "
                  "instructions decode as no branch\n", branches, sm90, others);
    assert_true(branches >= 200 && sm90 >= 130 && branches - sm90 >= 60);
}

/* ---- the hand assembler -------------------------------------------------------- */

#define EXIT_LO 0x000000000000794dull
#define CTRL_HI 0x000fea0003800000ull    /* stall, UPT: as ptxas writes BRA and EXIT */
#define BRA_LO 0x0000000000007947ull
#define CALL_LO 0x0000000000007944ull
#define FFMA_LO 0x0000000404047c23ull    /* FFMA R4, R4, UR4, R2 (capture-validation_mixed) */
#define FFMA_HI 0x101fe20008000002ull

/* An sm_90 BRA or CALL (lo_base) at `at` to `target`, by docs/sass.md's
 * layout: 4-byte units from the next instruction, low 8 bits in [23:16],
 * the rest, signed, in [81:34]. */
static struct sass_insn branch90(uint64_t lo_base, uint32_t at, int64_t target)
{
    int64_t units = (target - (int64_t)at - SASS_INSN_BYTES) / 4;
    uint64_t rest = (uint64_t)(units >> 8);          /* arithmetic: the sign spreads */
    struct sass_insn in = {lo_base, CTRL_HI, at};
    in.lo |= ((uint64_t)units & 0xff) << 16 | rest << 34;
    in.hi = (in.hi & ~0x3ffffull) | (rest >> 30 & 0x3ffff);
    return in;
}

/* An sm_80 BRA: bytes from the next instruction, signed, in [81:32]. */
static struct sass_insn branch80(uint32_t at, int64_t target)
{
    uint64_t delta = (uint64_t)(target - (int64_t)at - SASS_INSN_BYTES);
    struct sass_insn in = {BRA_LO | delta << 32, (CTRL_HI & ~0x3ffffull) | (delta >> 32 & 0x3ffff),
                           at};
    return in;
}

static void guard(struct sass_insn *in, unsigned pred, unsigned neg)
{
    assert_int_equal(sass_set_field(in, SASS_PRED, pred), 0);
    assert_int_equal(sass_set_field(in, SASS_PRED_NEG, neg), 0);
}

/* A program: instructions written one after another. */
struct prog {
    uint8_t text[64 * SASS_INSN_BYTES];
    size_t n;
};

static void put(struct prog *p, struct sass_insn in)
{
    assert_true(p->n < 64);
    sass_encode(&in, p->text, p->n++ * SASS_INSN_BYTES);
}

static uint32_t here(const struct prog *p) { return (uint32_t)(p->n * SASS_INSN_BYTES); }

static void nop(struct prog *p)
{
    struct sass_insn in = {0, 0, here(p)};
    sass_make_nop(&in);
    put(p, in);
}

static void ffma(struct prog *p, int pred, unsigned neg)
{
    struct sass_insn in = {FFMA_LO, FFMA_HI, here(p)};
    if (pred >= 0)
        guard(&in, (unsigned)pred, neg);
    put(p, in);
}

static void bra(struct prog *p, uint32_t target, int pred)
{
    struct sass_insn in = branch90(BRA_LO, here(p), target);
    if (pred >= 0)
        guard(&in, (unsigned)pred, 0);
    put(p, in);
}

static void bra_exit(struct prog *p, int pred)
{
    struct sass_insn in = {EXIT_LO, CTRL_HI, here(p)};
    if (pred >= 0)
        guard(&in, (unsigned)pred, 0);
    put(p, in);
}

static void test_branch_encodings(void **state)
{
    (void)state;
    static const int64_t targets[] = {0, 0x10, 0x400, 0x3ff0, 0x40000, 0x1234560, 0xfffff0};
    int64_t t;
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
        for (uint32_t at = 0; at <= 0x800000; at += 0x200000) {
            struct sass_insn in = branch90(BRA_LO, at, targets[i]);
            assert_int_equal(sass_branch_target(&in, 90, &t), 0);
            assert_int_equal(t, targets[i]);
            in = branch90(CALL_LO, at, targets[i]);
            assert_int_equal(sass_branch_target(&in, 90, &t), 0);
            assert_int_equal(t, targets[i]);
            in = branch80(at, targets[i]);
            assert_int_equal(sass_branch_target(&in, 80, &t), 0);
            assert_int_equal(t, targets[i]);
            assert_int_equal(sass_branch_target(&in, 75, &t), 0);
            assert_int_equal(t, targets[i]);
        }
    /* no layout known: refused, not guessed */
    struct sass_insn in = branch90(BRA_LO, 0x100, 0x40);
    assert_int_equal(sass_branch_target(&in, 70, &t), -1);
    assert_int_equal(sass_branch_target(&in, 100, &t), -1);
    /* not a branch */
    struct sass_insn f = {FFMA_LO, FFMA_HI, 0};
    assert_int_equal(sass_branch_target(&f, 90, &t), -1);
    assert_false(sass_is_direct_branch(&f));
    /* falling through: a guard, or a uniform predicate other than UPT, or its negation */
    assert_int_equal(sass_branch_conditional(&in), 0);
    guard(&in, 0, 0);
    assert_int_equal(sass_branch_conditional(&in), 1);
    guard(&in, SASS_PT, 1);
    assert_int_equal(sass_branch_conditional(&in), 1);
    guard(&in, SASS_PT, 0);
    in.hi &= ~(7ull << 23);                          /* UP0 in [89:87] */
    assert_int_equal(sass_branch_conditional(&in), 1);
    in.hi |= 7ull << 23 | 1ull << 26;                /* !UPT */
    assert_int_equal(sass_branch_conditional(&in), 1);
}

/* ---- classes ---------------------------------------------------------------------- */

static void test_classes(void **state)
{
    (void)state;
    /* every operation the opcode table names is classified on purpose */
    for (size_t i = 0; i < sass_opcode_table_size(); i++) {
        unsigned base;
        const char *m;
        sass_opcode_table_entry(i, &base, &m);
        if (!sass_class_known(m))
            fail_msg("opcode table entry %s (0x%03x) has no class", m, base);
    }
    static const struct {
        const char *m;
        enum sass_class c;
    } spot[] = {{"FFMA", SASS_CLASS_FP32},    {"FMNMX", SASS_CLASS_FP32},
                {"HFMA2", SASS_CLASS_FP32},   {"DFMA", SASS_CLASS_FP64},
                {"DADD", SASS_CLASS_FP64},    {"IMAD", SASS_CLASS_INT},
                {"ISETP", SASS_CLASS_INT},    {"BRA", SASS_CLASS_INT},
                {"LDC", SASS_CLASS_INT},      {"MUFU", SASS_CLASS_SFU},
                {"F2I", SASS_CLASS_CONV},     {"I2FP", SASS_CLASS_CONV},
                {"LDS", SASS_CLASS_SHARED},   {"ATOMS", SASS_CLASS_SHARED},
                {"LDG", SASS_CLASS_GLOBAL},   {"STG", SASS_CLASS_GLOBAL},
                {"ATOMG", SASS_CLASS_GLOBAL}, {"STL", SASS_CLASS_GLOBAL},
                {"BAR", SASS_CLASS_SYNC},     {"UIADD3", SASS_CLASS_UNIFORM},
                {"ULDC", SASS_CLASS_UNIFORM}, {"S2UR", SASS_CLASS_UNIFORM},
                {"NOP", SASS_CLASS_OTHER},    {"EXIT", SASS_CLASS_OTHER},
                {"HMMA", SASS_CLASS_TENSOR},  {"IMMA", SASS_CLASS_TENSOR},
                {"DMMA", SASS_CLASS_TENSOR},
                {"?0x1ff", SASS_CLASS_OTHER}, {"", SASS_CLASS_OTHER}};
    for (size_t i = 0; i < sizeof spot / sizeof spot[0]; i++)
        if (sass_class_of(spot[i].m) != spot[i].c)
            fail_msg("%s: class %s", spot[i].m, sass_class_name(sass_class_of(spot[i].m)));
    assert_false(sass_class_known("?0x1ff"));
    static const char *const names[] = {"fp32", "fp64", "int", "sfu", "conv", "shared",
                                        "global", "sync", "uniform", "tensor", "other"};
    for (int c = 0; c < SASS_CLASS_COUNT; c++)
        assert_string_equal(sass_class_name((enum sass_class)c), names[c]);
    assert_null(sass_class_name(SASS_CLASS_COUNT));
}

/* Every instruction of the whole-kernel fixtures against cuobjdump: the two
 * words, the mnemonic and the guard (what the control flow reads), and a
 * class given on purpose to every mnemonic they hold. */
static void test_model_fixture_instructions(void **state)
{
    (void)state;
    glob_t g;
    size_t n = 0;
    assert_int_equal(glob(MODEL "*.sass", 0, NULL, &g), 0);
    assert_int_equal(g.gl_pathc, 29);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        struct fixture f;
        fixture_open(&f, g.gl_pathv[i]);
        for (size_t fn = 0; fn < f.o.n; fn++) {
            const struct cubin_section *sec = text_of(&f, f.o.funcs[fn].name);
            for (size_t k = 0; k < f.o.funcs[fn].n; k++, n++) {
                const struct oinsn *o = &f.o.funcs[fn].insns[k];
                struct sass_insn in = sass_decode(sec->data, o->offset);
                char m[32], buf[SASS_MNEMONIC_MAX];
                int guarded;
                text_op(o->text, m, sizeof m, &guarded);
                if (in.lo != o->lo || in.hi != o->hi || strcmp(sass_mnemonic(&in, buf), m) ||
                    (sass_field(&in, SASS_PRED) != SASS_PT) != guarded || !sass_class_known(m))
                    fail_msg("%s /*%04x*/ %s: read as %s", f.path, o->offset, o->text,
                             sass_mnemonic(&in, buf));
            }
        }
        fixture_close(&f);
    }
    globfree(&g);
    print_message("sass_cfg: %zu instructions of the model/ fixtures match cuobjdump\n", n);
    assert_true(n > 1900);
}

/* ---- control flow of the fixtures ------------------------------------------------ */

static void sum_into(unsigned *to, const unsigned *from)
{
    for (int c = 0; c < SASS_CLASS_COUNT; c++)
        to[c] += from[c];
}

static unsigned total(const unsigned *n)
{
    unsigned t = 0;
    for (int c = 0; c < SASS_CLASS_COUNT; c++)
        t += n[c];
    return t;
}

/* The loops the text shows: distinct targets of branches that go back
 * (a branch to itself, the trap after EXIT, aside). */
static size_t text_loops(const struct ofunc *fn)
{
    long long heads[64];
    size_t n = 0;
    for (size_t k = 0; k < fn->n; k++) {
        long long t = strstr(fn->insns[k].text, "BRA ") ? text_target(fn->insns[k].text) : -1;
        int seen = 0;
        if (t < 0 || t >= fn->insns[k].offset)
            continue;
        for (size_t i = 0; i < n; i++)
            seen |= heads[i] == t;
        if (!seen && n < 64)
            heads[n++] = t;
    }
    return n;
}

/* The reader's own consistency on one kernel: the groups, the loops and the
 * straight code each add up to the reachable instructions; a latch and a
 * skip's branch go where they say. */
static void check_consistent(const struct sass_cfg *cfg, const uint8_t *text, const char *what)
{
    unsigned groups[SASS_CLASS_COUNT] = {0}, parts[SASS_CLASS_COUNT] = {0};
    int64_t t;
    for (size_t i = 0; i < cfg->ngroups; i++)
        sum_into(groups, cfg->groups[i].count);
    sum_into(parts, cfg->straight);
    for (size_t l = 0; l < cfg->nloops; l++) {
        sum_into(parts, cfg->loops[l].count);
        struct sass_insn latch = sass_decode(text, cfg->loops[l].latch);
        assert_int_equal(sass_branch_target(&latch, cfg->sm, &t), 0);
        if (t != cfg->loops[l].head)
            fail_msg("%s: loop %zu's latch goes to 0x%llx", what, l, (long long)t);
        assert_true(cfg->loops[l].parent < (int)l);
    }
    for (size_t s = 0; s < cfg->nskips; s++) {
        struct sass_insn br = sass_decode(text, cfg->skips[s].branch);
        assert_int_equal(sass_branch_target(&br, cfg->sm, &t), 0);
        assert_int_equal(t, cfg->skips[s].to);
        assert_int_equal(cfg->skips[s].from, cfg->skips[s].branch + SASS_INSN_BYTES);
    }
    assert_int_equal(total(groups) + cfg->unreachable, cfg->ninsns);
    assert_memory_equal(groups, parts, sizeof groups);
}

/* ---- waits on global loads, against the text's registers ------------------------------ */

/* The registers an instruction's text names ("R7", "R10.64" = R10-R11,
 * "[R4.64+0x8]"; RZ is none) as a bitmask of 256, plus the registers of its
 * first operand that names any (what a load writes: widened by .64 / .128
 * of the mnemonic). */
struct regset {
    uint64_t w[4];
};

static int regs_overlap(const struct regset *a, const struct regset *b)
{
    return (a->w[0] & b->w[0]) | (a->w[1] & b->w[1]) | (a->w[2] & b->w[2]) | (a->w[3] & b->w[3]);
}

static void regs_add(struct regset *r, unsigned reg, unsigned n)
{
    for (unsigned i = 0; i < n && reg + i < 255; i++)
        r->w[(reg + i) / 64] |= 1ull << ((reg + i) % 64);
}

static void text_regs(const char *text, struct regset *all, struct regset *first)
{
    memset(all, 0, sizeof *all);
    memset(first, 0, sizeof *first);
    const char *ops = text[0] == '@' ? strchr(text, ' ') + 1 : text;
    size_t oplen = strcspn(ops, " ");
    unsigned width = strstr(ops, ".128") && (size_t)(strstr(ops, ".128") - ops) < oplen ? 4
                     : strstr(ops, ".64") && (size_t)(strstr(ops, ".64") - ops) < oplen ? 2
                                                                                         : 1;
    ops += oplen;
    int operand = 0, written = -1; /* the first operand naming a register (ATOMG's follows a predicate) */
    for (const char *p = ops; *p && *p != ';'; p++) {
        if (*p == ',')
            operand++;
        int word_start = p == ops || !(p[-1] == 'U' || (p[-1] >= 'A' && p[-1] <= 'Z') ||
                                       (p[-1] >= '0' && p[-1] <= '9') || p[-1] == '_');
        if (*p != 'R' || !word_start || p[1] < '0' || p[1] > '9')
            continue;
        size_t digits = strspn(p + 1, "0123456789");
        unsigned reg = (unsigned)strtoul(p + 1, NULL, 10);
        unsigned n = strncmp(p + 1 + digits, ".64", 3) == 0 ? 2 : 1;
        regs_add(all, reg, n);
        if (written < 0)
            written = operand;
        if (operand == written)
            regs_add(first, reg, width > n ? width : n);
    }
    for (int i = 0; i < 4; i++)
        all->w[i] |= first->w[i];
}

/* The waits of a listed function by register use: after global loads (LDG,
 * LD, ATOMG, LDL), the first instruction naming a register one of them
 * writes waits (a read, or a write over it), and every pending load counts
 * as arrived, the rule sass_cfg.h states for the scoreboards. */
static unsigned text_waits(const struct ofunc *fn)
{
    struct regset pending = {{0}};
    int any = 0;
    unsigned waits = 0;
    for (size_t i = 0; i < fn->n; i++) {
        char m[32];
        int guarded;
        struct regset all, first;
        text_op(fn->insns[i].text, m, sizeof m, &guarded);
        text_regs(fn->insns[i].text, &all, &first);
        if (any && (regs_overlap(&all, &pending) || !strcmp(m, "DEPBAR"))) {
            waits++;
            memset(&pending, 0, sizeof pending);
            any = 0;
        }
        if (!strcmp(m, "LDG") || !strcmp(m, "LD") || !strcmp(m, "ATOMG") || !strcmp(m, "LDL")) {
            for (int w = 0; w < 4; w++)
                pending.w[w] |= first.w[w];
            any = 1;
        }
    }
    return waits;
}

static unsigned cfg_waits(const struct sass_cfg *c)
{
    unsigned n = 0;
    for (size_t g = 0; g < c->ngroups; g++)
        n += c->groups[g].waits;
    return n;
}

static void test_fixture_control_flow(void **state)
{
    (void)state;
    glob_t g;
    size_t kernels = 0, loops = 0, waits = 0;
    fixtures_glob(&g);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        struct fixture f;
        fixture_open(&f, g.gl_pathv[i]);
        for (size_t k = 0; k < f.c.nkernels; k++) {
            const struct cubin_kernel *kn = &f.c.kernels[k];
            struct sass_cfg cfg;
            if (!kn->entry)
                continue;
            if (sass_cfg_build(&cfg, kn->text, kn->text_size, f.c.sm, err, sizeof err) != 0)
                fail_msg("%s/%s: %s", f.path, kn->name, err);
            check_consistent(&cfg, kn->text, kn->name);
            assert_int_equal(cfg.nloops, text_loops(sass_oracle_func(&f.o, kn->name)));
            assert_true(cfg.unreachable >= 1);           /* the trap after the last EXIT */
            /* the waits on loads the scoreboards give are those the registers show */
            unsigned by_text = text_waits(sass_oracle_func(&f.o, kn->name));
            if (cfg_waits(&cfg) != by_text)
                fail_msg("%s/%s: %u waits by scoreboard, %u by register use", f.path, kn->name,
                         cfg_waits(&cfg), by_text);
            waits += by_text;
            loops += cfg.nloops;
            kernels++;
            sass_cfg_free(&cfg);
        }
        fixture_close(&f);
    }
    globfree(&g);
    print_message("sass_cfg: %zu kernels, %zu loops and %zu waits on global loads, as the "
                  "text shows them\n", kernels, loops, waits);
    assert_true(kernels >= 100 && loops >= 10 && waits >= 60);
}

static const struct sass_group *group_at(const struct sass_cfg *c, uint32_t at)
{
    for (size_t i = 0; i < c->ngroups; i++)
        if (c->groups[i].at == at)
            return &c->groups[i];
    fail_msg("no group starts at 0x%x", at);
    return NULL;
}

/*
 * capture-validation_mixed.sass, by hand (offsets in hex):
 *   000-100  prologue: LDG at 090; @P1 BRA 190 at 100 skips 110-190: the trip
 *            peeled for iters == 0 (LDC, PLOP3, ULDC, 4 FFMA, UMOV)
 *   190-1d0  ISETP, IADD3, ISETP, @P1 BRA 340: skips 1d0-340, the unrolled loop
 *   1d0-210  its preheader: LDC, PLOP3, ULDC, IADD3
 *   210-340  the loop: UIADD3, 16 FFMA, ISETP, @!P1 BRA 210 at 330
 *   340-380  ISETP, IADD3, ISETP, @P1 BRA 440: skips 380-440, two trips
 *            (LDC, ULDC, PLOP3, UIADD3, 8 FFMA)
 *   440-520  ISETP, LDC, @P0 LDC x2, IMAD.WIDE, @P0 FFMA x4, FADD x3, STG, EXIT
 *            (the @P0 group is the last single trip)
 *   520-5f0  BRA 520 and 13 NOPs: unreachable
 */
static void test_mixed_by_hand(void **state)
{
    (void)state;
    size_t size;
    char *buf = must_read_file(MODEL "capture-validation_mixed.cubin", &size);
    struct cubin c;
    struct sass_cfg cfg;
    assert_int_equal(cubin_parse(&c, buf, size, err, sizeof err), 0);
    const struct cubin_kernel *k = cubin_kernel_find(&c, "mixed");
    assert_int_equal(sass_cfg_build(&cfg, k->text, k->text_size, c.sm, err, sizeof err), 0);
    assert_int_equal(cfg.ninsns, 0x600 / 16);
    assert_int_equal(cfg.unreachable, 14);
    assert_int_equal(cfg.nloops, 1);
    const struct sass_loop *l = &cfg.loops[0];
    assert_int_equal(l->head, 0x210);
    assert_int_equal(l->latch, 0x330);
    assert_int_equal(l->end, 0x340);
    assert_int_equal(l->depth, 1);
    assert_int_equal(l->parent, -1);
    assert_int_equal(l->count[SASS_CLASS_FP32], 16);
    assert_int_equal(l->count[SASS_CLASS_INT], 2);        /* ISETP, BRA */
    assert_int_equal(l->count[SASS_CLASS_UNIFORM], 1);    /* UIADD3 */
    assert_int_equal(total(l->count), 19);
    static const uint32_t skips[][3] = {{0x100, 0x110, 0x190}, {0x1c0, 0x1d0, 0x340},
                                        {0x370, 0x380, 0x440}};
    assert_int_equal(cfg.nskips, 3);
    for (int s = 0; s < 3; s++) {
        assert_int_equal(cfg.skips[s].branch, skips[s][0]);
        assert_int_equal(cfg.skips[s].from, skips[s][1]);
        assert_int_equal(cfg.skips[s].to, skips[s][2]);
        assert_true(cfg.skips[s].conditional);
        assert_int_equal(cfg.skips[s].parent, -1);
    }
    assert_int_equal(l->skip, 1);
    const struct sass_group *peel = group_at(&cfg, 0x110), *two = group_at(&cfg, 0x380),
                            *one = group_at(&cfg, 0x460), *pre = group_at(&cfg, 0x1d0);
    assert_int_equal(peel->skip, 0);
    assert_int_equal(peel->count[SASS_CLASS_FP32], 4);
    assert_int_equal(two->skip, 2);
    assert_int_equal(two->count[SASS_CLASS_FP32], 8);
    assert_int_equal(two->count[SASS_CLASS_INT], 2);      /* LDC, PLOP3 */
    assert_int_equal(two->count[SASS_CLASS_UNIFORM], 2);  /* ULDC, UIADD3 */
    assert_int_equal(one->guard, 0);
    assert_int_equal(one->guard_neg, 0);
    assert_int_equal(one->skip, -1);
    assert_int_equal(one->count[SASS_CLASS_FP32], 4);
    assert_int_equal(one->count[SASS_CLASS_INT], 2);      /* @P0 LDC x2 */
    assert_int_equal(pre->skip, 1);
    assert_int_equal(pre->loop, -1);
    /* straight code: 82 reachable instructions less the loop's 19 */
    assert_int_equal(total(cfg.straight), 82 - 19);
    assert_int_equal(cfg.straight[SASS_CLASS_FP32], 4 + 8 + 4 + 3);
    assert_int_equal(cfg.straight[SASS_CLASS_GLOBAL], 2);
    /* the plain-data form says the same */
    json_t *j = sass_cfg_json(&cfg);
    assert_non_null(j);
    const json_t *jl = json_array_get(json_object_get(j, "loops"), 0);
    assert_int_equal(json_integer_value(json_object_get(jl, "head")), 0x210);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(jl, "counts"), "fp32")),
                     16);
    assert_null(json_object_get(json_object_get(jl, "counts"), "fp64")); /* zeros left out */
    assert_int_equal(json_array_size(json_object_get(j, "skips")), 3);
    assert_int_equal(json_array_size(json_object_get(j, "groups")), cfg.ngroups);
    assert_int_equal(json_integer_value(json_object_get(j, "unreachable")), 14);
    json_decref(j);
    sass_cfg_free(&cfg);
    cubin_free(&c);
    free(buf);
}

/* ---- hand-assembled programs ------------------------------------------------------- */

static int build(struct sass_cfg *cfg, const struct prog *p)
{
    return sass_cfg_build(cfg, p->text, p->n * SASS_INSN_BYTES, 90, err, sizeof err);
}

static void test_nested_loops(void **state)
{
    (void)state;
    struct prog p = {.n = 0};
    struct sass_cfg cfg;
    nop(&p);                      /* 00 */
    ffma(&p, -1, 0);              /* 10  outer head */
    ffma(&p, -1, 0);              /* 20  inner head */
    ffma(&p, -1, 0);              /* 30 */
    bra(&p, 0x20, 0);             /* 40  @P0 BRA 20: inner latch */
    ffma(&p, 1, 1);               /* 50  @!P1 FFMA */
    bra(&p, 0x10, 1);             /* 60  @P1 BRA 10: outer latch */
    bra_exit(&p, -1);             /* 70 */
    bra(&p, 0x80, -1);            /* 80  the trap */
    assert_int_equal(build(&cfg, &p), 0);
    assert_int_equal(cfg.nloops, 2);
    assert_int_equal(cfg.loops[0].head, 0x10);
    assert_int_equal(cfg.loops[0].depth, 1);
    assert_int_equal(cfg.loops[1].head, 0x20);
    assert_int_equal(cfg.loops[1].latch, 0x40);
    assert_int_equal(cfg.loops[1].parent, 0);
    assert_int_equal(cfg.loops[1].depth, 2);
    /* one trip of each own body: the inner loop's code is not the outer's */
    assert_int_equal(cfg.loops[1].count[SASS_CLASS_FP32], 2);
    assert_int_equal(cfg.loops[1].count[SASS_CLASS_INT], 1);
    assert_int_equal(cfg.loops[0].count[SASS_CLASS_FP32], 2);
    assert_int_equal(cfg.loops[0].count[SASS_CLASS_INT], 1);
    assert_int_equal(cfg.unreachable, 1);
    assert_int_equal(group_at(&cfg, 0x50)->guard, 1);
    assert_int_equal(group_at(&cfg, 0x50)->guard_neg, 1);
    assert_int_equal(group_at(&cfg, 0x50)->loop, 0);
    check_consistent(&cfg, p.text, "nested");
    sass_cfg_free(&cfg);
}

static void test_skips_calls_and_exits(void **state)
{
    (void)state;
    struct prog p = {.n = 0};
    struct sass_cfg cfg;
    bra(&p, 0x60, 0);             /* 00  @P0 BRA 60 */
    ffma(&p, -1, 0);              /* 10 */
    bra(&p, 0x40, 1);             /* 20  @P1 BRA 40 */
    ffma(&p, -1, 0);              /* 30 */
    put(&p, branch90(CALL_LO, here(&p), 0x400));   /* 40  CALL: not followed */
    bra_exit(&p, 2);              /* 50  @P2 EXIT: falls through */
    ffma(&p, -1, 0);              /* 60 */
    bra_exit(&p, -1);             /* 70 */
    assert_int_equal(build(&cfg, &p), 0);
    assert_int_equal(cfg.nskips, 2);
    assert_int_equal(cfg.skips[0].from, 0x10);
    assert_int_equal(cfg.skips[0].to, 0x60);
    assert_int_equal(cfg.skips[0].parent, -1);
    assert_int_equal(cfg.skips[1].from, 0x30);
    assert_int_equal(cfg.skips[1].to, 0x40);
    assert_int_equal(cfg.skips[1].parent, 0);
    assert_int_equal(group_at(&cfg, 0x30)->skip, 1);
    assert_int_equal(group_at(&cfg, 0x40)->skip, 0);
    assert_int_equal(group_at(&cfg, 0x60)->skip, -1);
    assert_int_equal(cfg.calls, 1);
    assert_int_equal(cfg.guarded_exits, 1);
    assert_int_equal(cfg.unreachable, 0);
    assert_int_equal(cfg.nloops, 0);
    /* a guarded EXIT (or branch) issues whatever its guard: it joins the
     * block's unguarded group, here the CALL's */
    assert_int_equal(group_at(&cfg, 0x40)->guard, -1);
    assert_int_equal(total(group_at(&cfg, 0x40)->count), 2);
    check_consistent(&cfg, p.text, "skips");
    sass_cfg_free(&cfg);
}

/* An out-of-line block that branches back to where its caller's code goes
 * on: a branch backwards that closes no loop, and no skip over the join. */
static void test_rejoining_block(void **state)
{
    (void)state;
    struct prog p = {.n = 0};
    struct sass_cfg cfg;
    bra(&p, 0x40, 0);             /* 00  @P0 BRA 40 */
    ffma(&p, -1, 0);              /* 10  the join */
    bra_exit(&p, -1);             /* 20 */
    nop(&p);                      /* 30  unreachable */
    ffma(&p, -1, 0);              /* 40  out of line */
    bra(&p, 0x10, -1);            /* 50  BRA 10 */
    assert_int_equal(build(&cfg, &p), 0);
    assert_int_equal(cfg.nloops, 0);
    assert_int_equal(cfg.nskips, 0);
    assert_int_equal(cfg.unreachable, 1);
    assert_int_equal(group_at(&cfg, 0x10)->skip, -1);
    check_consistent(&cfg, p.text, "rejoin");
    sass_cfg_free(&cfg);
}

static void expect_refused(const struct prog *p, unsigned sm, size_t size, const char *why)
{
    struct sass_cfg cfg;
    err[0] = '\0';
    if (sass_cfg_build(&cfg, p->text, size, sm, err, sizeof err) != -1)
        fail_msg("not refused: %s", why);
    if (!strstr(err, why))
        fail_msg("refused with \"%s\", wanted \"%s\"", err, why);
    assert_int_equal(cfg.nblocks, 0);
    assert_null(cfg.groups);
    sass_cfg_free(&cfg);
}

static void test_refusals(void **state)
{
    (void)state;
    struct prog p = {.n = 0};
    /* a loop entered in its middle */
    bra(&p, 0x20, 0);             /* 00  @P0 BRA 20 */
    ffma(&p, -1, 0);              /* 10  head */
    ffma(&p, -1, 0);              /* 20 */
    bra(&p, 0x10, 1);             /* 30  @P1 BRA 10 */
    bra_exit(&p, -1);
    expect_refused(&p, 90, p.n * 16, "irreducible");
    /* the same, entered from a block after the entry: the walk back from
     * the latch reaches the entry through the jumping block */
    p.n = 0;
    ffma(&p, -1, 0);              /* 00 */
    bra(&p, 0x40, 0);             /* 10  @P0 BRA 40: into the loop below */
    ffma(&p, -1, 0);              /* 20  head */
    ffma(&p, -1, 0);              /* 30 */
    ffma(&p, -1, 0);              /* 40 */
    bra(&p, 0x20, 1);             /* 50  @P1 BRA 20 */
    bra_exit(&p, -1);
    expect_refused(&p, 90, p.n * 16, "irreducible");
    /* branches out of the text, and between instructions */
    p.n = 0;
    bra(&p, 0x100, 0);
    bra_exit(&p, -1);
    expect_refused(&p, 90, p.n * 16, "outside the 32-byte text");
    p.n = 0;
    put(&p, branch90(BRA_LO, 0, 0x14));
    bra_exit(&p, -1);
    expect_refused(&p, 90, p.n * 16, "between instructions");
    p.n = 0;
    put(&p, branch90(BRA_LO, 0, -0x20));
    expect_refused(&p, 90, p.n * 16, "outside");
    /* not whole instructions, none, and an architecture without a branch layout */
    p.n = 0;
    bra_exit(&p, -1);
    expect_refused(&p, 90, 20, "not a whole number");
    expect_refused(&p, 90, 0, "or none");
    expect_refused(&p, 70, 16, "no branch layout");
    expect_refused(&p, 100, 16, "no branch layout");
}

static void build_null_cfg(void *arg)
{
    (void)arg;
    uint8_t text[16] = {0};
    sass_cfg_build(NULL, text, sizeof text, 90, NULL, 0);
}

static void build_null_text(void *arg)
{
    struct sass_cfg *cfg = arg;
    sass_cfg_build(cfg, NULL, 16, 90, NULL, 0);
}

static void test_contracts(void **state)
{
    (void)state;
    struct sass_cfg cfg;
    assert_true(dies_by_assert(build_null_cfg, NULL));
    assert_true(dies_by_assert(build_null_text, &cfg));
    sass_cfg_free(NULL);                               /* a no-op */
}

/* The loops of two kernels read by hand (every fixture's waits are checked
 * against its registers in test_fixture_control_flow). */
static void test_load_waits(void **state)
{
    (void)state;
    /* synth-stencil7.sass, loop 570-790: five LDG at 5a0-610, the FADD at 620
     * waits; two more at 690 and 6a0, the FADD at 6e0 waits; the STG at 770
     * stores a sum */
    struct fixture f;
    struct sass_cfg cfg;
    fixture_open(&f, MODEL "synth-stencil7.sass");
    const struct cubin_kernel *kn = cubin_kernel_find(&f.c, "stencil7");
    assert_int_equal(sass_cfg_build(&cfg, kn->text, kn->text_size, f.c.sm, err, sizeof err), 0);
    assert_int_equal(cfg.nloops, 1);
    assert_int_equal(cfg.loops[0].head, 0x570);
    assert_int_equal(cfg.loops[0].waits, 2);
    assert_int_equal(cfg.loops[0].count[SASS_CLASS_GLOBAL], 8);
    sass_cfg_free(&cfg);
    fixture_close(&f);
    /* capture-validation_strided.sass, loop 1b0-2e0: four LDG at 1f0-250, one wait
     * at the FADD at 280; the prologue's LDG at 0d0 is used at 160 */
    fixture_open(&f, MODEL "capture-validation_strided.sass");
    kn = cubin_kernel_find(&f.c, "strided");
    assert_int_equal(sass_cfg_build(&cfg, kn->text, kn->text_size, f.c.sm, err, sizeof err), 0);
    assert_int_equal(cfg.loops[0].head, 0x1b0);
    assert_int_equal(cfg.loops[0].waits, 1);
    assert_int_equal(cfg.loops[0].count[SASS_CLASS_GLOBAL], 4);
    sass_cfg_free(&cfg);
    fixture_close(&f);
}

/* ---- from a cubin ---------------------------------------------------------------------- */

static void test_describe_cubin(void **state)
{
    (void)state;
    size_t size;
    char *buf = must_read_file(MODEL "capture-validation_matmul_tiled.cubin", &size);
    json_t *j = sass_cfg_describe_cubin(buf, size, "mm_tiled", err, sizeof err);
    if (!j)
        fail_msg("%s", err);
    assert_int_equal(json_integer_value(json_object_get(j, "sm")), 90);
    assert_int_equal(json_array_size(json_object_get(j, "loops")), 1);
    /* the tile loop unrolled by 4: 8 loads, 8 barriers, 64 FFMA a trip */
    const json_t *loop = json_array_get(json_object_get(j, "loops"), 0);
    const json_t *counts = json_object_get(loop, "counts");
    assert_int_equal(json_integer_value(json_object_get(counts, "global")), 8);
    assert_int_equal(json_integer_value(json_object_get(counts, "sync")), 8);
    assert_int_equal(json_integer_value(json_object_get(counts, "fp32")), 64);
    json_decref(j);
    assert_null(sass_cfg_describe_cubin(buf, size, "no_such_kernel", err, sizeof err));
    assert_non_null(strstr(err, "no kernel no_such_kernel"));
    assert_null(sass_cfg_describe_cubin(buf, 100, "mm_tiled", err, sizeof err));
    assert_non_null(strstr(err, "cubin: "));
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_branch_targets_match_cuobjdump),
        cmocka_unit_test(test_branch_encodings),
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_model_fixture_instructions),
        cmocka_unit_test(test_fixture_control_flow),
        cmocka_unit_test(test_mixed_by_hand),
        cmocka_unit_test(test_nested_loops),
        cmocka_unit_test(test_skips_calls_and_exits),
        cmocka_unit_test(test_rejoining_block),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_load_waits),
        cmocka_unit_test(test_contracts),
        cmocka_unit_test(test_describe_cubin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
