/*
 * Unit tests of the SASS reader (probes/sass.c) against two disassemblies
 * of the fixtures: cuobjdump's (tests/fixtures/cubins/NAME.sass) and
 * nvdisasm's (NAME.nvdisasm); every check runs against each.
 *
 * DESIGN
 * A small parser (tests/unit/support/sass_oracle.c) reads the oracle: per
 * "Function : NAME" (cuobjdump) or ".text.NAME:" (nvdisasm), each
 * instruction line gives its offset, its text and the first 64-bit word;
 * the next line gives the second. For every instruction of every kernel of every fixture
 * the reader must reproduce the two words and offset, and its mnemonic must
 * equal the oracle's first word with the guard (@P0) and the modifiers
 * (after '.') stripped. Fields the text shows are checked too: the guard
 * predicate, the destination register, the first source for ALU ops, the
 * other sources where the operand form is all-register, the single source
 * of one-input ops, memory address and store data registers, the .reuse
 * marks, and the special register of S2R/CS2R/S2UR. The control fields are
 * printed by neither tool; they are checked for consistency instead:
 * fixed-latency ALU ops never set a scoreboard, variable-latency ones
 * always do, and on sm_90 every scoreboard set is waited on later. The
 * opcode table is committed data in sass.c; here it is only compared with
 * the oracle, never built from it. Writing is checked on the same
 * instructions: decode -> encode reproduces every byte, every field set to
 * several values reads back with no other bit changed, out-of-range values
 * are refused, and the bit positions of writes are compared with values
 * worked out by hand from docs/sass.md. The codec's contracts (a field
 * index in range, no NULL instruction or text) are proven by making the
 * call that breaks one in a child and watching it abort; a value too wide
 * for its field is a refusal, and must not abort.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/support/death.h"
#include "tests/unit/support/sass_oracle.h"
#include "tests/unit/support/tmpfile.h"
#include "probes/gpu/cubin.h"
#include "probes/gpu/sass.h"

#define FIXDIR "tests/fixtures/cubins/"
#define MAX_OPS 12

static const char *const fixtures[] = {
    "fp32", "half_double", "integer", "cvt_mufu", "memory", "vector", "arch_sm80", "arch_sm75", "tensor",
};
#define N_FIXTURES (sizeof fixtures / sizeof fixtures[0])

/* Whole kernels (the model-validation and cache-study ones, model/README.md):
 * the opcode table's entries may be seen there too. Their instructions are
 * checked against cuobjdump by tests/unit/test_sass_cfg.c. */
static const char *const model_fixtures[] = {
    "model/capture-validation_copy", "model/capture-validation_strided",
    "model/capture-validation_ffma", "model/capture-validation_mixed",
    "model/capture-validation_reduce", "model/capture-validation_matmul_naive",
    "model/capture-validation_matmul_tiled", "model/capture-validation_matmul_abt",
    "model/capture-matmul_naive", "model/capture-matmul_tiled", "model/capture-vecadd",
    "model/synth-matmul-naive", "model/synth-matmul-naive-bt", "model/synth-matmul-tiled",
    "model/synth-matmul-tiled-bt", "model/synth-reduce", "model/synth-stencil7",
    "model/synth-stream", "model/synth-strided", "model/synth-transpose-naive",
    "model/synth-transpose-tiled", "model/capture-validation_transpose_naive",
    "model/capture-validation_transpose_tiled", "model/capture-validation_stencil7",
    "model/capture-validation_gather", "model/capture-validation_histogram",
    "model/capture-validation_matmul_tiled32", "model/capture-validation_saxpy_sfu",
    "model/capture-validation_sgemv",
};
#define N_MODEL_FIXTURES (sizeof model_fixtures / sizeof model_fixtures[0])

/* Cubins made by ptxas on a machine without cuobjdump, in which a table
 * entry was first read from the code alone; their cuobjdump listings,
 * made later on a GPU machine, are beside them (NAME.sass) and
 * test_table_fixtures_match_cuobjdump compares them. The distributed-shared-memory
 * kernels (tests/fixtures/ptx/README.md), whose only loads other than
 * ld.param are ld.shared::cluster, compiled by ptxas to the generic LD
 * (0x180): 8 in dsm_lat's chase, 8 in dsm_bw's stream, as
 * tests/unit/test_dsmem.c counts. The wgmma kernels of the latency probe
 * (ptxas 13.0, sm_90a), where WARPGROUP, HGMMA, IGMMA and QGMMA are seen:
 * the names come from compiling PTX that differs only in the operand type
 * (f16/bf16/tf32, s8, e4m3/e5m2), see tests/fixtures/cubins/README.md.
 * The asynchronous-copy kernels (async/README.md) show LDGSTS, LDGDEPBAR,
 * UBLKCP, UTMALDG and SYNCS. */
static const char *const table_fixtures[] = {
    "../ptx/dsmem_4.sm_90",
    "async/bulk1024_lat", "async/bulk4096_bw", "async/ca16_bw", "async/ca16_lat",
    "async/cg16_lat", "async/ld16_lat", "async/tensor2048_lat", "async/tensor4096_bw",
    "latency/mma_e4m3_lat", "latency/mma_e4m3_tput", "latency/mma_e5m2_lat",
    "latency/mma_e5m2_tput", "latency/wgmma_bf16_ss_n128_lat", "latency/wgmma_bf16_ss_n128_tput",
    "latency/wgmma_e4m3_ss_n128_lat", "latency/wgmma_e4m3_ss_n128_tput",
    "latency/wgmma_e5m2_ss_n128_lat", "latency/wgmma_e5m2_ss_n128_tput",
    "latency/wgmma_f16_f16_ss_n128_lat", "latency/wgmma_f16_f16_ss_n128_tput",
    "latency/wgmma_f16_rs_n128_lat", "latency/wgmma_f16_rs_n128_tput",
    "latency/wgmma_f16_rs_n256_lat", "latency/wgmma_f16_rs_n256_tput",
    "latency/wgmma_f16_rs_n64_lat", "latency/wgmma_f16_rs_n64_tput",
    "latency/wgmma_f16_ss_n128_lat", "latency/wgmma_f16_ss_n128_tput",
    "latency/wgmma_f16_ss_n256_lat", "latency/wgmma_f16_ss_n256_tput",
    "latency/wgmma_f16_ss_n64_lat", "latency/wgmma_f16_ss_n64_tput",
    "latency/wgmma_s8_ss_n128_lat", "latency/wgmma_s8_ss_n128_tput",
    "latency/wgmma_tf32_ss_n128_lat", "latency/wgmma_tf32_ss_n128_tput",
};
#define N_TABLE_FIXTURES (sizeof table_fixtures / sizeof table_fixtures[0])

/* ---- oracle ------------------------------------------------------------ */

/* Reads FIXDIR/NAME.EXT: ext "sass" (cuobjdump -sass) or "nvdisasm" (nvdisasm -hex). */
static void load_oracle(const char *name, const char *ext, struct oracle *o)
{
    char path[256];
    snprintf(path, sizeof path, FIXDIR "%s.%s", name, ext);
    sass_oracle_load(path, o);
}

/* ---- oracle text: mnemonic, guard, operands ----------------------------- */

struct parsed {
    char mnemonic[32];               /* base: no guard, no modifiers */
    int guarded, guard_neg;
    unsigned guard;                  /* 7 for PT */
    char ops[MAX_OPS][64];
    size_t nops;
};

static void split_operands(const char *s, struct parsed *p)
{
    int depth = 0;
    size_t len = 0;
    p->nops = 0;
    for (;; s++) {
        if (*s == '[' || *s == '{')
            depth++;
        if (*s == ']' || *s == '}')
            depth--;
        if ((*s == ',' && depth == 0) || *s == '\0') {
            while (len && p->ops[p->nops][len - 1] == ' ')
                len--;
            p->ops[p->nops][len] = '\0';
            if (len)
                p->nops++;
            len = 0;
            if (*s == '\0' || p->nops == MAX_OPS)
                return;
            continue;
        }
        if ((len || *s != ' ') && len + 1 < sizeof p->ops[0])
            p->ops[p->nops][len++] = *s;
    }
}

static void parse_text(const char *text, struct parsed *p)
{
    memset(p, 0, sizeof *p);
    p->guard = 7;
    if (text[0] == '@') {
        const char *g = text + 1;
        p->guarded = 1;
        p->guard_neg = *g == '!';
        g += p->guard_neg;
        p->guard = strncmp(g, "PT", 2) == 0 ? 7 : (unsigned)(g[1] - '0');
        text = strchr(text, ' ') + 1;
    }
    size_t n = strcspn(text, ". ");
    assert_true(n < sizeof p->mnemonic);
    memcpy(p->mnemonic, text, n);
    const char *rest = text + strcspn(text, " ");
    split_operands(*rest ? rest + 1 : rest, p);
}

/* Register number of an operand like "-R4.reuse", "|R2|", "~RZ"; -1 if the
 * operand is not a plain R register. */
static int reg_of(const char *op)
{
    while (*op == '-' || *op == '~' || *op == '!' || *op == '|')
        op++;
    if (op[0] != 'R')
        return -1;
    const char *end = op + 1;
    int r = SASS_RZ;
    if (*end == 'Z') {
        end++;
    } else {
        if (!isdigit((unsigned char)*end))
            return -1;
        char *after;
        r = (int)strtol(end, &after, 10);
        end = after;
    }
    return *end == '\0' || *end == '.' || *end == '|' ? r : -1;
}

static int is_pred(const char *op)
{
    if (*op == '!')
        op++;
    if (*op == 'U')
        op++;
    return op[0] == 'P' && (op[1] == 'T' || isdigit((unsigned char)op[1])) && op[2] == '\0';
}

static int in_set(const char *m, const char *const *set)
{
    for (; *set; set++)
        if (strcmp(m, *set) == 0)
            return 1;
    return 0;
}

static const char *const alu_ops[] = {"FADD", "FMUL", "FFMA", "FMNMX", "IADD3", "LOP3", "PRMT", "SHF", "IMAD",
                                      "LEA", "DADD", "DFMA", "HADD2", "HFMA2", "SEL", "VIADD", "FSETP",
                                      "ISETP", "SHFL", "F2FP", NULL};
static const char *const three_src_ops[] = {"FFMA", "IMAD", "IADD3", "LOP3", "PRMT", "SHF", "DFMA",
                                            "HFMA2", NULL};
static const char *const one_src_ops[] = {"MOV", "I2FP", "I2F", "FLO", "BREV", "F2I", "MUFU", "POPC",
                                          "F2F", NULL};
static const char *const no_dest_ops[] = {"FSETP", "ISETP", "STG", "STS", "STL", "BRA", "RET", "CALL",
                                          "EXIT", "BSSY", "BSYNC", "BAR", NULL};
static const char *const memory_ops[] = {"LDG", "LDS", "LDL", "STG", "STS", "STL", "ATOMS", "ATOMG", NULL};
static const char *const data_ops[] = {"STG", "STS", "STL", "ATOMS", "ATOMG", NULL};
static const char *const fixed_latency_ops[] = {"FADD", "FMUL", "FFMA", "FMNMX", "IADD3", "LOP3", "PRMT",
                                                "SHF", "IMAD", "LEA", "HADD2", "SEL", "VIADD", "ISETP",
                                                "MOV", "UIADD3", "ULEA", "UMOV", "UFLO", "UPOPC", NULL};
static const char *const variable_latency_ops[] = {"LDG", "LDS", "LDL", "S2R", "S2UR", "ATOMS", "ATOMG",
                                                   "F2I", "F2F", "I2F", "BREV", NULL};

struct tally {
    size_t insns, rd, ra, rb, rc, mem, reuse, pred, sreg, sb_fixed, sb_var, waits;
};

static void expect_reg(unsigned got, int want, const char *field, const struct oinsn *o, size_t *count)
{
    if (want < 0)
        return;
    if (got != (unsigned)want)
        fail_msg("/*%04x*/ %s: %s is %u, the text says %d", o->offset, o->text, field, got, want);
    (*count)++;
}

/* Register fields against the operand text; see the file comment. */
static void check_registers(const struct sass_insn *in, const struct parsed *p, const struct oinsn *o,
                            struct tally *t)
{
    const char *src[MAX_OPS];
    size_t n = 0, first = 0;
    for (size_t i = 0; i < p->nops; i++)
        if (!is_pred(p->ops[i]))
            src[n++] = p->ops[i];
    if (!in_set(p->mnemonic, no_dest_ops) && n && reg_of(src[0]) >= 0) {
        expect_reg(sass_field(in, SASS_RD), reg_of(src[0]), "Rd", o, &t->rd);
        first = 1;
    }
    const char **s = src + first;
    size_t ns = n - first;
    if (in_set(p->mnemonic, alu_ops) && ns)
        expect_reg(sass_field(in, SASS_RA), reg_of(s[0]), "Ra", o, &t->ra);
    if (in_set(p->mnemonic, alu_ops) && sass_field(in, SASS_FORM) == 1 && ns > 1 &&
        strcmp(p->mnemonic, "DADD") != 0 && strcmp(p->mnemonic, "SHFL") != 0)
        expect_reg(sass_field(in, SASS_RB), reg_of(s[1]), "Rb", o, &t->rb);
    if (in_set(p->mnemonic, three_src_ops)) {
        int last = -1, regs = 0;
        for (size_t i = 0; i < ns; i++)
            if (reg_of(s[i]) >= 0)
                last = reg_of(s[i]), regs++;
        if (regs >= 2)
            expect_reg(sass_field(in, SASS_RC), last, "Rc", o, &t->rc);
    }
    if (in_set(p->mnemonic, one_src_ops) && ns)
        expect_reg(sass_field(in, SASS_RB), reg_of(s[0]), "Rb (single source)", o, &t->rb);
    if (in_set(p->mnemonic, memory_ops)) {
        for (size_t i = 0; i < p->nops; i++) {
            const char *br = strchr(p->ops[i], '[');
            if (br)
                expect_reg(sass_field(in, SASS_RA), reg_of(br + 1), "Ra (address)", o, &t->mem);
        }
        if (in_set(p->mnemonic, data_ops) && p->nops)
            expect_reg(sass_field(in, SASS_RB), reg_of(p->ops[p->nops - 1]), "Rb (data)", o, &t->mem);
    }
    /* .reuse: bit i marks the i-th source operand in text order; a single
     * source sits in the B slot, so its bit is 1 (MOV R5, R4.reuse in the
     * tensor fixture) */
    unsigned want = 0;
    int single = in_set(p->mnemonic, one_src_ops);
    for (size_t i = 0; i < ns; i++)
        if (strstr(s[i], ".reuse"))
            want |= 1u << (single ? 1 : i);
    if (sass_field(in, SASS_REUSE) != want)
        fail_msg("/*%04x*/ %s: reuse 0x%x, the text says 0x%x", o->offset, o->text, sass_field(in, SASS_REUSE),
                 want);
    t->reuse++;
}

static void check_guard_and_sreg(const struct sass_insn *in, const struct parsed *p, const struct oinsn *o,
                                 struct tally *t)
{
    if (sass_field(in, SASS_PRED) != p->guard || sass_field(in, SASS_PRED_NEG) != (unsigned)p->guard_neg)
        fail_msg("/*%04x*/ %s: guard %s%u", o->offset, o->text, sass_field(in, SASS_PRED_NEG) ? "!" : "",
                 sass_field(in, SASS_PRED));
    t->pred++;
    const char *sr = strstr(o->text, "SR_");
    if (!sr)
        return;
    const char *name = sass_sreg_name(sass_field(in, SASS_SREG));
    if (!name || strcmp(name, sr) != 0)
        fail_msg("/*%04x*/ %s: special register 0x%x read as %s", o->offset, o->text, sass_field(in, SASS_SREG),
                 name ? name : "(unknown)");
    t->sreg++;
    int clock = strcmp(sr, "SR_CLOCKLO") == 0;
    assert_int_equal(sass_is_clock_read(in), clock);
}

static void check_scoreboards(const struct sass_insn *in, const struct parsed *p, const struct oinsn *o,
                              struct tally *t)
{
    unsigned w = sass_field(in, SASS_WBAR), r = sass_field(in, SASS_RBAR);
    if (in_set(p->mnemonic, fixed_latency_ops)) {
        if (w != SASS_SCOREBOARD_NONE || r != SASS_SCOREBOARD_NONE)
            fail_msg("/*%04x*/ %s: fixed-latency op sets scoreboard w%u r%u", o->offset, o->text, w, r);
        t->sb_fixed++;
    }
    if (in_set(p->mnemonic, variable_latency_ops)) {
        if (w == SASS_SCOREBOARD_NONE)
            fail_msg("/*%04x*/ %s: variable-latency op sets no write scoreboard", o->offset, o->text);
        t->sb_var++;
    }
}

/* On sm_90: every scoreboard an instruction sets is waited on later. */
static void check_waits(const struct cubin_kernel *k, struct tally *t)
{
    size_t n = sass_count(k->text_size, NULL);
    for (size_t i = 0; i < n; i++) {
        struct sass_insn in = sass_decode(k->text, i * SASS_INSN_BYTES);
        unsigned sbs[2] = {sass_field(&in, SASS_WBAR), sass_field(&in, SASS_RBAR)};
        for (int s = 0; s < 2; s++) {
            if (sbs[s] == SASS_SCOREBOARD_NONE)
                continue;
            int waited = 0;
            for (size_t j = i + 1; j < n && !waited; j++) {
                struct sass_insn later = sass_decode(k->text, j * SASS_INSN_BYTES);
                waited = (sass_field(&later, SASS_WAIT) >> sbs[s]) & 1;
            }
            if (!waited)
                fail_msg("%s /*%04x*/: scoreboard %u is never waited on", k->name, in.offset, sbs[s]);
            t->waits++;
        }
    }
}

/* One instruction against its oracle line: the same words, and the
 * oracle's base mnemonic (p: its parsed text) where the table names the
 * operation; allow_unnamed lets one the table does not know pass. Returns
 * whether the table named it. */
static int check_words_and_name(const char *kernel, const struct sass_insn *in,
                                const struct oinsn *o, struct parsed *p, int allow_unnamed)
{
    char buf[SASS_MNEMONIC_MAX];
    if (in->offset != o->offset || in->lo != o->lo || in->hi != o->hi)
        fail_msg("%s /*%04x*/ %s: words differ", kernel, o->offset, o->text);
    parse_text(o->text, p);
    if (allow_unnamed && !sass_opcode_known(in))
        return 0;
    const char *m = sass_mnemonic(in, buf);
    if (strcmp(m, p->mnemonic) != 0)
        fail_msg("%s /*%04x*/ %s: opcode 0x%03x reads as %s", kernel, o->offset, o->text,
                 sass_field(in, SASS_OPCODE), m);
    return 1;
}

static void check_kernel(const struct cubin *c, const struct cubin_kernel *k, const struct ofunc *f,
                         struct tally *t)
{
    size_t trailing;
    assert_int_equal(sass_count(k->text_size, &trailing), f->n);
    assert_int_equal(trailing, 0);
    struct sass_iter it;
    struct sass_insn in;
    size_t i = 0;
    sass_iter_init(&it, k->text, k->text_size);
    for (; sass_iter_next(&it, &in); i++) {
        const struct oinsn *o = &f->insns[i];
        struct parsed p;
        check_words_and_name(k->name, &in, o, &p, 0);
        check_guard_and_sreg(&in, &p, o, t);
        check_registers(&in, &p, o, t);
        check_scoreboards(&in, &p, o, t);
        t->insns++;
    }
    assert_int_equal(i, f->n);
    if (c->sm >= 90)
        check_waits(k, t);
}

static uint8_t *load_cubin(const char *name, size_t *size, struct cubin *c)
{
    char path[256];
    snprintf(path, sizeof path, FIXDIR "%s.cubin", name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    assert_true(n > 0);
    uint8_t *buf = malloc((size_t)n);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    char err[256];
    if (cubin_parse(c, buf, *size, err, sizeof err) != 0)
        fail_msg("%s: %s", name, err);
    return buf;
}

/* ---- tests --------------------------------------------------------------- */

/* Every instruction of every entry kernel of every fixture against one
 * oracle listing (ext "sass" or "nvdisasm"). */
static void check_against(const char *ext, const char *tool)
{
    struct tally t = {0};
    size_t kernels = 0;
    for (size_t i = 0; i < N_FIXTURES; i++) {
        struct oracle o;
        struct cubin c;
        size_t size;
        load_oracle(fixtures[i], ext, &o);
        uint8_t *buf = load_cubin(fixtures[i], &size, &c);
        size_t entries = 0;
        for (size_t k = 0; k < c.nkernels; k++) {
            /* A non-entry function shares its caller's text section and
             * appears inside that kernel's listing. */
            if (!c.kernels[k].entry)
                continue;
            entries++;
            const struct ofunc *f = sass_oracle_func(&o, c.kernels[k].name);
            if (!f)
                fail_msg("%s.%s: kernel %s is not in the oracle", fixtures[i], ext,
                         c.kernels[k].name);
            check_kernel(&c, &c.kernels[k], f, &t);
            kernels++;
        }
        assert_int_equal(o.n, entries);
        cubin_free(&c);
        free(buf);
        sass_oracle_free(&o);
    }
    print_message("sass: %zu instructions of %zu kernels match %s: mnemonic+words %zu, guard %zu, "
                  "Rd %zu, Ra %zu, Rb %zu, Rc %zu, memory regs %zu, reuse %zu, sreg %zu, scoreboards %zu+%zu, "
                  "waits %zu; table %zu entries\n",
                  t.insns, kernels, tool, t.insns, t.pred, t.rd, t.ra, t.rb, t.rc, t.mem, t.reuse, t.sreg,
                  t.sb_fixed, t.sb_var, t.waits, sass_opcode_table_size());
    assert_true(t.insns >= 4000);
    assert_true(t.rd > 1000 && t.ra > 1000 && t.rb > 100 && t.rc > 500);
}

static void test_every_instruction_matches_cuobjdump(void **state)
{
    (void)state;
    check_against("sass", "cuobjdump -sass");
}

static void test_every_instruction_matches_nvdisasm(void **state)
{
    (void)state;
    check_against("nvdisasm", "nvdisasm -hex");
}

/* The kernels whose table entries were first read without cuobjdump (the
 * generic LD, the asynchronous copies, wgmma) against the cuobjdump -sass
 * listing made later on a GPU machine (tests/fixtures/cubins/README.md):
 * every instruction's words, and its mnemonic wherever the table names one.
 * Some of their operations are not in the table, and two of those share a
 * 9-bit base between two mnemonics (ERRBAR and CGAERRBAR, UCGABAR_ARV and
 * UCGABAR_WAIT), so an unnamed one is allowed; a wrong name is not. */
static void test_table_fixtures_match_cuobjdump(void **state)
{
    (void)state;
    size_t insns = 0, named = 0;
    for (size_t i = 0; i < N_TABLE_FIXTURES; i++) {
        struct oracle o;
        struct cubin c;
        size_t size;
        load_oracle(table_fixtures[i], "sass", &o);
        uint8_t *buf = load_cubin(table_fixtures[i], &size, &c);
        for (size_t k = 0; k < c.nkernels; k++) {
            const struct cubin_kernel *kn = &c.kernels[k];
            const struct ofunc *f = kn->entry ? sass_oracle_func(&o, kn->name) : NULL;
            if (!f)
                continue;
            struct sass_iter it;
            struct sass_insn in;
            size_t n = 0;
            sass_iter_init(&it, kn->text, kn->text_size);
            for (; sass_iter_next(&it, &in); n++) {
                struct parsed p;
                named += (size_t)check_words_and_name(kn->name, &in, &f->insns[n], &p, 1);
                insns++;
            }
            assert_int_equal(n, f->n);
        }
        cubin_free(&c);
        free(buf);
        sass_oracle_free(&o);
    }
    print_message("sass: %zu instructions of the table fixtures, %zu named as cuobjdump names them\n",
                  insns, named);
    assert_true(insns > 2000 && named * 100 >= insns * 95);
}

/* Every table entry is sorted, unique, and seen in some fixture (model/,
 * the wgmma kernels and async/ included). */
static void test_table_entries_all_seen(void **state)
{
    (void)state;
    size_t n = sass_opcode_table_size();
    int *seen = calloc(n, sizeof *seen);
    assert_non_null(seen);
    for (size_t i = 0; i < N_FIXTURES + N_MODEL_FIXTURES + N_TABLE_FIXTURES; i++) {
        struct cubin c;
        size_t size;
        const char *name = i < N_FIXTURES                      ? fixtures[i]
                           : i < N_FIXTURES + N_MODEL_FIXTURES ? model_fixtures[i - N_FIXTURES]
                                                               : table_fixtures[i - N_FIXTURES - N_MODEL_FIXTURES];
        uint8_t *buf = load_cubin(name, &size, &c);
        for (size_t k = 0; k < c.nkernels; k++) {
            struct sass_iter it;
            struct sass_insn in;
            sass_iter_init(&it, c.kernels[k].text, c.kernels[k].text_size);
            while (sass_iter_next(&it, &in))
                for (size_t e = 0; e < n; e++) {
                    unsigned base;
                    const char *m;
                    sass_opcode_table_entry(e, &base, &m);
                    seen[e] |= base == sass_field(&in, SASS_OPCODE_BASE);
                }
        }
        cubin_free(&c);
        free(buf);
    }
    for (size_t e = 0; e < n; e++) {
        unsigned base, prev = 0;
        const char *m, *pm;
        sass_opcode_table_entry(e, &base, &m);
        if (e)
            sass_opcode_table_entry(e - 1, &prev, &pm);
        assert_true(e == 0 || base > prev);
        if (!seen[e])
            fail_msg("table entry 0x%03x %s is in no fixture", base, m);
    }
    free(seen);
}

static void test_unknown_opcode(void **state)
{
    (void)state;
    struct sass_insn in = {.lo = 0xbff | 0x7000, .hi = 0};
    char buf[SASS_MNEMONIC_MAX];
    assert_false(sass_opcode_known(&in));
    assert_string_equal(sass_mnemonic(&in, buf), "?0xbff");
    in.lo = 0x7221;                                  /* FADD R, R, R */
    assert_true(sass_opcode_known(&in));
    assert_string_equal(sass_mnemonic(&in, buf), "FADD");
    in.lo = 0xe221;                                  /* a form bit set: still FADD */
    assert_string_equal(sass_mnemonic(&in, buf), "FADD");
    unsigned base;
    const char *m;
    sass_opcode_table_entry(sass_opcode_table_size(), &base, &m);
    assert_null(m);
}

/* Each field reads exactly its bits: all-ones gives the maximum, and a
 * value built from one field's bits leaves the fields beside it 0. */
static void test_field_layout(void **state)
{
    (void)state;
    struct sass_insn ones = {.lo = UINT64_MAX, .hi = UINT64_MAX};
    for (int f = 0; f < SASS_FIELD_COUNT; f++) {
        unsigned lo = sass_field_lo(f), w = sass_field_width(f);
        assert_int_equal(sass_field(&ones, f), (1u << w) - 1);
        struct sass_insn one = {0};
        for (unsigned b = lo; b < lo + w; b++) {
            if (b < 64)
                one.lo |= 1ull << b;
            else
                one.hi |= 1ull << (b - 64);
        }
        for (int g = 0; g < SASS_FIELD_COUNT; g++) {
            unsigned glo = sass_field_lo(g), gw = sass_field_width(g);
            int overlap = glo < lo + w && lo < glo + gw;
            if (!overlap)
                assert_int_equal(sass_field(&one, g), 0);
            else if (glo >= lo && glo + gw <= lo + w)
                assert_int_equal(sass_field(&one, g), (1u << gw) - 1);
        }
        assert_non_null(sass_field_name(f));
    }
    assert_int_equal(sass_field_lo(SASS_STALL), 105);
    assert_int_equal(sass_field_lo(SASS_REUSE), 122);
}

/* The oracle's region: instructions strictly between the first two lines
 * that read SR_CLOCKLO. */
static int oracle_region(const struct ofunc *f, struct sass_region *r)
{
    size_t first = SIZE_MAX;
    for (size_t i = 0; i < f->n; i++) {
        if (!strstr(f->insns[i].text, "SR_CLOCKLO"))
            continue;
        if (first != SIZE_MAX) {
            *r = (struct sass_region){first + 1, i};
            return 0;
        }
        first = i;
    }
    return -1;
}

static void check_region_counts(const struct cubin_kernel *k, const struct ofunc *f, const struct sass_region *r)
{
    for (size_t i = r->first; i < r->end; i++) {
        struct parsed p;
        parse_text(f->insns[i].text, &p);
        size_t want = 0;
        for (size_t j = r->first; j < r->end; j++) {
            struct parsed q;
            parse_text(f->insns[j].text, &q);
            want += strcmp(p.mnemonic, q.mnemonic) == 0;
        }
        assert_int_equal(sass_count_mnemonic(k->text, k->text_size, r, p.mnemonic), want);
    }
}

static void test_clock_regions(void **state)
{
    (void)state;
    size_t regions = 0;
    for (size_t i = 0; i < N_FIXTURES; i++) {
        struct oracle o;
        struct cubin c;
        size_t size;
        load_oracle(fixtures[i], "sass", &o);
        uint8_t *buf = load_cubin(fixtures[i], &size, &c);
        for (size_t k = 0; k < c.nkernels; k++) {
            const struct cubin_kernel *kn = &c.kernels[k];
            if (!kn->entry)
                continue;
            const struct ofunc *f = sass_oracle_func(&o, kn->name);
            assert_non_null(f);
            struct sass_region want, got;
            int rc = oracle_region(f, &want);
            assert_int_equal(sass_clock_region(kn->text, kn->text_size, 0, &got), rc);
            if (rc)
                continue;
            assert_int_equal(got.first, want.first);
            assert_int_equal(got.end, want.end);
            check_region_counts(kn, f, &got);
            regions++;
        }
        cubin_free(&c);
        free(buf);
        sass_oracle_free(&o);
    }
    assert_true(regions >= 60);
}

/* What ptxas made of some chains: facts a probe author must know. */
static void test_region_facts(void **state)
{
    (void)state;
    struct cubin c;
    size_t size;
    uint8_t *buf = load_cubin("fp32", &size, &c);
    const struct cubin_kernel *k = cubin_kernel_find(&c, "lat_fadd");
    struct sass_region r;
    assert_int_equal(sass_clock_region(k->text, k->text_size, 0, &r), 0);
    assert_int_equal(sass_count_mnemonic(k->text, k->text_size, &r, "FADD"), 8);
    assert_int_equal(sass_count_mnemonic(k->text, k->text_size, &r, "LDC"), 1);  /* a load moved inside */
    /* A dependent FADD waits 4 cycles before its consumer may issue. */
    struct sass_insn in = sass_decode(k->text, (r.first + 1) * SASS_INSN_BYTES);
    assert_int_equal(sass_field(&in, SASS_STALL), 4);
    char *listing = sass_listing(k->text, k->text_size, &r);
    assert_non_null(listing);
    size_t lines = 0;
    for (const char *p = listing; (p = strchr(p, '\n')) != NULL; p++)
        lines++;
    assert_int_equal(lines, r.end - r.first);
    assert_non_null(strstr(listing, "FADD"));
    char word[40];
    in = sass_decode(k->text, r.first * SASS_INSN_BYTES);
    snprintf(word, sizeof word, "0x%016llx", (unsigned long long)in.lo);
    assert_non_null(strstr(listing, word));
    free(listing);
    cubin_free(&c);
    free(buf);

    buf = load_cubin("integer", &size, &c);
    k = cubin_kernel_find(&c, "lat_xor");                /* 8 XORs fused into 4 LOP3 */
    assert_int_equal(sass_clock_region(k->text, k->text_size, 0, &r), 0);
    assert_int_equal(sass_count_mnemonic(k->text, k->text_size, &r, "LOP3"), 4);
    k = cubin_kernel_find(&c, "lat_iadd");               /* adds of one value become IMAD/LEA */
    assert_int_equal(sass_clock_region(k->text, k->text_size, 0, &r), 0);
    assert_int_equal(sass_count_mnemonic(k->text, k->text_size, &r, "IADD3"), 0);
    cubin_free(&c);
    free(buf);

    buf = load_cubin("cvt_mufu", &size, &c);
    k = cubin_kernel_find(&c, "lat_mufu_rcp");           /* rcp(rcp(x)) folded away */
    assert_int_equal(sass_clock_region(k->text, k->text_size, 0, &r), 0);
    assert_int_equal(r.end - r.first, 0);
    cubin_free(&c);
    free(buf);

    buf = load_cubin("memory", &size, &c);               /* four clock reads: two regions */
    k = cubin_kernel_find(&c, "lat_clock");
    assert_int_equal(sass_clock_region(k->text, k->text_size, 0, &r), 0);
    assert_int_equal(r.end - r.first, 0);
    struct sass_region r2;
    assert_int_equal(sass_clock_region(k->text, k->text_size, r.end + 1, &r2), 0);
    assert_true(r2.first > r.end);
    assert_int_equal(sass_clock_region(k->text, k->text_size, r2.end + 1, &r2), -1);
    cubin_free(&c);
    free(buf);
}

static void test_iteration_edges(void **state)
{
    (void)state;
    uint8_t text[40] = {0x21, 0x72};                 /* FADD, then an unknown op, then 8 spare bytes */
    text[16] = 0xff;
    text[17] = 0x7b;
    size_t trailing;
    assert_int_equal(sass_count(sizeof text, &trailing), 2);
    assert_int_equal(trailing, 8);
    struct sass_iter it;
    struct sass_insn in;
    sass_iter_init(&it, text, sizeof text);
    assert_true(sass_iter_next(&it, &in));
    assert_int_equal(in.offset, 0);
    assert_true(sass_iter_next(&it, &in));
    assert_int_equal(in.offset, 16);
    assert_false(sass_iter_next(&it, &in));
    sass_iter_init(&it, NULL, 100);
    assert_false(sass_iter_next(&it, &in));
    struct sass_region whole = {0, 100}, r;
    assert_int_equal(sass_count_mnemonic(text, sizeof text, &whole, "FADD"), 1);
    assert_int_equal(sass_count_mnemonic(text, sizeof text, NULL, "?0xbff"), 1);
    assert_int_equal(sass_count_mnemonic(NULL, 0, NULL, "FADD"), 0);
    assert_int_equal(sass_clock_region(text, sizeof text, 0, &r), -1);
    char *l = sass_listing(text, sizeof text, NULL);
    assert_non_null(l);
    assert_non_null(strstr(l, "?0xbff"));
    free(l);
    l = sass_listing(NULL, 0, NULL);
    assert_non_null(l);
    assert_string_equal(l, "");
    free(l);
}

/* ---- writing ------------------------------------------------------------- */

/* The bits of field f, as a 128-bit mask. */
static void field_mask(enum sass_field f, uint64_t *lo, uint64_t *hi)
{
    *lo = *hi = 0;
    for (unsigned b = sass_field_lo(f); b < sass_field_lo(f) + sass_field_width(f); b++) {
        if (b < 64)
            *lo |= 1ull << b;
        else
            *hi |= 1ull << (b - 64);
    }
}

/* Sets f to v in a copy of in; v must come back, and no bit outside the
 * field may change. */
static void check_set(const struct sass_insn *in, enum sass_field f, unsigned v)
{
    struct sass_insn w = *in;
    uint64_t mlo, mhi;
    field_mask(f, &mlo, &mhi);
    if (sass_set_field(&w, f, v) != 0)
        fail_msg("%s = %u refused (width %u)", sass_field_name(f), v, sass_field_width(f));
    assert_int_equal(sass_field(&w, f), v);
    if (((w.lo ^ in->lo) & ~mlo) != 0 || ((w.hi ^ in->hi) & ~mhi) != 0)
        fail_msg("setting %s = %u at /*%04x*/ changed other bits: %016llx %016llx -> %016llx %016llx",
                 sass_field_name(f), v, in->offset, (unsigned long long)in->hi, (unsigned long long)in->lo,
                 (unsigned long long)w.hi, (unsigned long long)w.lo);
    assert_int_equal(w.offset, in->offset);
    /* Putting the old value back restores the instruction exactly. */
    assert_int_equal(sass_set_field(&w, f, sass_field(in, f)), 0);
    assert_true(w.lo == in->lo && w.hi == in->hi);
}

/* For every instruction of every fixture: decode -> encode gives the same
 * 16 bytes (written into a zeroed copy of the text, so a byte the encoder
 * skipped shows), and every field takes 0, 1, its maximum, max - 1, the old
 * value with its low bit flipped and a value from a fixed pseudo-random
 * sequence, leaving the other bits alone. */
static void test_encode_roundtrip_and_set(void **state)
{
    (void)state;
    size_t insns = 0, sets = 0;
    uint32_t rnd = 12345;
    for (size_t i = 0; i < N_FIXTURES; i++) {
        struct cubin c;
        size_t size;
        uint8_t *buf = load_cubin(fixtures[i], &size, &c);
        for (size_t k = 0; k < c.nkernels; k++) {
            const struct cubin_kernel *kn = &c.kernels[k];
            uint8_t *copy = calloc(1, kn->text_size + 1);
            assert_non_null(copy);
            struct sass_iter it;
            struct sass_insn in;
            sass_iter_init(&it, kn->text, kn->text_size);
            while (sass_iter_next(&it, &in)) {
                sass_encode(&in, copy, in.offset);
                if (memcmp(copy + in.offset, kn->text + in.offset, SASS_INSN_BYTES) != 0)
                    fail_msg("%s/%s /*%04x*/: encode(decode(x)) != x", fixtures[i], kn->name, in.offset);
                for (int f = 0; f < SASS_FIELD_COUNT; f++) {
                    unsigned max = (1u << sass_field_width(f)) - 1, old = sass_field(&in, f);
                    rnd = rnd * 1103515245u + 12345u;
                    unsigned vals[] = {0, 1, max, max - 1, old ^ 1u, (rnd >> 8) & max};
                    for (size_t v = 0; v < sizeof vals / sizeof vals[0]; v++, sets++)
                        check_set(&in, f, vals[v]);
                }
                insns++;
            }
            /* The whole text came back, and nothing was written past it. */
            assert_memory_equal(copy, kn->text, kn->text_size - kn->text_size % SASS_INSN_BYTES);
            assert_int_equal(copy[kn->text_size], 0);
            free(copy);
        }
        cubin_free(&c);
        free(buf);
    }
    print_message("sass: %zu instructions re-encode to their bytes; %zu field writes read back\n", insns,
                  sets);
    assert_true(insns >= 4000);
}

/* Values that do not fit are refused and leave the instruction as it was
 * (a field that does not exist is a broken contract: test_contracts). */
static void test_set_refusals(void **state)
{
    (void)state;
    const struct sass_insn orig = {.lo = 0x000fe20000000f00ull ^ 0x0123456789abcdefull,
                                   .hi = 0x0c8fe2000000000full, .offset = 0x40};
    for (int f = 0; f < SASS_FIELD_COUNT; f++) {
        unsigned w = sass_field_width(f);
        unsigned bad[] = {1u << w, (1u << w) + 1, 1u << 31, UINT32_MAX};
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
            struct sass_insn in = orig;
            if (sass_set_field(&in, f, bad[b]) != -1)
                fail_msg("%s = %u accepted (width %u)", sass_field_name(f), bad[b], w);
            assert_true(in.lo == orig.lo && in.hi == orig.hi && in.offset == orig.offset);
        }
    }
    struct sass_insn in = orig;
    assert_int_equal(sass_set_field(&in, SASS_PRED, 8), -1);      /* 3 bits */
    assert_int_equal(sass_set_field(&in, SASS_STALL, 16), -1);     /* 4 bits */
    assert_int_equal(sass_set_field(&in, SASS_WAIT, 64), -1);      /* 6 bits */
    assert_int_equal(sass_set_field(&in, SASS_RD, 256), -1);       /* 8 bits */
    assert_int_equal(sass_set_field(&in, SASS_OPCODE, 0x1000), -1); /* 12 bits */
    assert_true(in.lo == orig.lo && in.hi == orig.hi);
}

/* Where the writes land, computed by hand from docs/sass.md's table rather
 * than from the code's: a field set on an all-zero instruction gives these
 * words, and sass_encode stores them little-endian, low word first. */
static void test_set_positions(void **state)
{
    (void)state;
    static const struct {
        enum sass_field f;
        unsigned v;
        uint64_t lo, hi;
    } cases[] = {
        {SASS_OPCODE, 0xb7a, 0xb7a, 0},
        {SASS_OPCODE_BASE, 0x123, 0x123, 0},
        {SASS_FORM, 5, 0xa00, 0},
        {SASS_PRED, 3, 0x3000, 0},
        {SASS_PRED_NEG, 1, 0x8000, 0},
        {SASS_RD, 0x12, 0x120000, 0},
        {SASS_RA, 0x34, 0x34000000, 0},
        {SASS_RB, 0x56, 0x5600000000ull, 0},
        {SASS_RC, 0x78, 0, 0x78},
        {SASS_SREG, 0x50, 0, 0x5000},
        {SASS_MEM_SEM, 7, 0, 0xe000},
        {SASS_STALL, 15, 0, 15ull << 41},
        {SASS_YIELD, 1, 0, 1ull << 45},
        {SASS_WBAR, 5, 0, 5ull << 46},
        {SASS_RBAR, 2, 0, 2ull << 49},
        {SASS_WAIT, 0x2d, 0, 0x2dull << 52},
        {SASS_REUSE, 9, 0, 9ull << 58},
    };
    assert_int_equal(sizeof cases / sizeof cases[0], SASS_FIELD_COUNT);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct sass_insn in = {0};
        assert_int_equal(sass_set_field(&in, cases[i].f, cases[i].v), 0);
        if (in.lo != cases[i].lo || in.hi != cases[i].hi)
            fail_msg("%s = 0x%x gave %016llx %016llx", sass_field_name(cases[i].f), cases[i].v,
                     (unsigned long long)in.hi, (unsigned long long)in.lo);
    }
    struct sass_insn in = {.lo = 0x0123456789abcdefull, .hi = 0xfedcba9876543210ull};
    uint8_t text[48];
    memset(text, 0xee, sizeof text);
    sass_encode(&in, text, 16);
    static const uint8_t want[16] = {0xef, 0xcd, 0xab, 0x89, 0x67, 0x45, 0x23, 0x01,
                                     0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe};
    assert_memory_equal(text + 16, want, 16);
    assert_int_equal(text[15], 0xee);
    assert_int_equal(text[32], 0xee);
    struct sass_insn back = sass_decode(text, 16);
    assert_true(back.lo == in.lo && back.hi == in.hi && back.offset == 16);
}

/* ---- contracts ------------------------------------------------------------ */

static void read_field_past_the_table(void *arg)
{
    const struct sass_insn in = {0, 0, 0};
    (void)arg;
    (void)sass_field(&in, SASS_FIELD_COUNT);
}

static void set_negative_field(void *arg)
{
    struct sass_insn in = {0, 0, 0};
    (void)arg;
    (void)sass_set_field(&in, (enum sass_field)-1, 0);
}

static void name_field_past_the_table(void *arg)
{
    (void)arg;
    (void)sass_field_name(SASS_FIELD_COUNT);
}

static void set_field_of_nothing(void *arg)
{
    (void)arg;
    (void)sass_set_field(NULL, SASS_STALL, 1);
}

static void decode_no_text(void *arg)
{
    (void)arg;
    (void)sass_decode(NULL, 0);
}

static void encode_into_no_text(void *arg)
{
    const struct sass_insn in = {0, 0, 0};
    (void)arg;
    sass_encode(&in, NULL, 0);
}

/* The refusal, in a child too: it must return, not abort. */
static void set_too_wide(void *arg)
{
    struct sass_insn in = {0, 0, 0};
    (void)arg;
    if (sass_set_field(&in, SASS_STALL, 16) != -1)
        abort();
}

static void test_contracts(void **state)
{
    (void)state;
    assert_true(dies_by_assert(read_field_past_the_table, NULL));
    assert_true(dies_by_assert(set_negative_field, NULL));
    assert_true(dies_by_assert(name_field_past_the_table, NULL));
    assert_true(dies_by_assert(set_field_of_nothing, NULL));
    assert_true(dies_by_assert(decode_no_text, NULL));
    assert_true(dies_by_assert(encode_into_no_text, NULL));
    assert_false(dies_by_assert(set_too_wide, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_instruction_matches_cuobjdump),
        cmocka_unit_test(test_every_instruction_matches_nvdisasm),
        cmocka_unit_test(test_table_fixtures_match_cuobjdump),
        cmocka_unit_test(test_table_entries_all_seen),
        cmocka_unit_test(test_unknown_opcode),
        cmocka_unit_test(test_field_layout),
        cmocka_unit_test(test_clock_regions),
        cmocka_unit_test(test_region_facts),
        cmocka_unit_test(test_iteration_edges),
        cmocka_unit_test(test_encode_roundtrip_and_set),
        cmocka_unit_test(test_set_refusals),
        cmocka_unit_test(test_set_positions),
        cmocka_unit_test(test_contracts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
