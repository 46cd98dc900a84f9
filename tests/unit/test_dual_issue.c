/*
 * The dual-issue probe without a GPU (probes/dual_issue_*.c):
 * - the generated PTX equals tests/fixtures/cubins/dual/dual.ptx
 *   (GPUPROBE_UPDATE_GOLDEN=1 rewrites it), so the committed cubin is what
 *   the generator's PTX compiles to;
 * - on that sm_90 cubin the layout reader finds 252 consecutive FFMAs, the
 *   loop control pinned before them, and refuses a copy where another
 *   instruction sits among them or a loop instruction writes a register the
 *   FFMAs write; code run once before the loop may reuse one;
 * - the NOP is the one ptxas writes (cuobjdump's words in the fixtures);
 * - every pattern becomes the intended slots (hand-written tables) and
 *   cycles; malformed patterns are refused;
 * - operands follow the bank classes and never name a destination;
 * - the rewrite of every pattern with both operand choices is checked by
 *   decoding each instruction again, independently of dual_verify, which
 *   accepts it and refuses tampered copies; patch_rewrite is all or
 *   nothing;
 * - rates, nominal rates, peak and verdict arithmetic;
 * - where ptxas is installed: the fresh PTX compiles to a kernel the
 *   layout reader accepts, and without the pinned loop control it does not.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probes/dual_issue.h"
#include "tests/unit/support/tmpfile.h"

#define FIX "tests/fixtures/cubins/dual/"
#define PTXAS "/usr/local/cuda/bin/ptxas"

static char *fixture(size_t *size)
{
    return must_read_file(FIX "dual.cubin", size);
}

static void load_layout(const char *cub, size_t size, struct dual_layout *L)
{
    char err[256];
    if (dual_layout(cub, size, L, err, sizeof err) != 0)
        fail_msg("%s", err);
}

/* ---- the kernel ------------------------------------------------------------ */

static void test_golden_ptx(void **state)
{
    (void)state;
    char *got = banks_ptx_shape(&dual_shape, 9, 0);
    assert_non_null(got);
    if (getenv("GPUPROBE_UPDATE_GOLDEN"))
        write_file(FIX "dual.ptx", got);
    char *want = must_read_file(FIX "dual.ptx", NULL);
    assert_string_equal(got, want);
    assert_non_null(strstr(got, ".maxntid 512, 1, 1\n.maxnreg 128\n"));
    assert_non_null(strstr(got, "$L_loop:\n\tadd.u32 %iter, %iter, 1;\n"
                                "\tsetp.lt.u32 %p, %iter, %n;\n\tselp.f32 %s, %v0, %v1, %p;\n"));
    size_t fmas = 0, reads_s = 0;
    for (const char *p = got; (p = strstr(p, "fma.rn.f32")); p++) {
        fmas++;
        reads_s += strncmp(strchr(p, ',') + 2, "%s,", 3) == 0;
    }
    assert_int_equal(fmas, DUAL_TIMED);
    assert_int_equal(reads_s, DUAL_ACCS);     /* the first FFMA of every accumulator */
    free(got);
    free(want);
}

static void test_layout(void **state)
{
    (void)state;
    size_t size;
    char *cub = fixture(&size);
    struct dual_layout L;
    load_layout(cub, size, &L);
    /* the fixture's facts (README) */
    assert_int_equal(L.b.regs, 56);
    assert_int_equal(L.b.nffma, DUAL_TIMED);
    assert_int_equal(L.b.ffma[DUAL_TIMED - 1] - L.b.ffma[0] + 1, DUAL_TIMED);
    assert_int_equal(L.b.ndest, 16);
    assert_int_equal(L.b.max_reg, 53);
    assert_int_equal(L.stall_sum, DUAL_TIMED);        /* every compiled FFMA stall 1 */
    char mn[SASS_MNEMONIC_MAX];
    struct sass_insn in = {0, 0, 0};
    static const char *const head[DUAL_HEAD] = {"UIADD3", "ISETP", "FSEL"};
    for (int i = 0; i < DUAL_HEAD; i++) {
        sass_set_field(&in, SASS_OPCODE, L.head_op[i]);
        assert_string_equal(sass_mnemonic(&in, mn), head[i]);
    }
    sass_set_field(&in, SASS_OPCODE, L.next_op);
    assert_string_equal(sass_mnemonic(&in, mn), "BRA");
    free(cub);
}

/* Swaps two instructions of the kernel's text. */
static void swap_insns(char *cub, size_t size, size_t i, size_t j)
{
    size_t off, tsize;
    char err[256], tmp[SASS_INSN_BYTES];
    assert_int_equal(patch_find_text(cub, size, DUAL_KERNEL, &off, &tsize, err, sizeof err), 0);
    memcpy(tmp, cub + off + i * SASS_INSN_BYTES, SASS_INSN_BYTES);
    memcpy(cub + off + i * SASS_INSN_BYTES, cub + off + j * SASS_INSN_BYTES, SASS_INSN_BYTES);
    memcpy(cub + off + j * SASS_INSN_BYTES, tmp, SASS_INSN_BYTES);
}

static void test_layout_refusals(void **state)
{
    (void)state;
    size_t size;
    char *cub = fixture(&size), err[256];
    struct dual_layout L, L2;
    load_layout(cub, size, &L);
    /* the select moved among the FFMAs: still 252 FFMAs, no longer one run */
    swap_insns(cub, size, L.b.ffma[0] - 1, L.b.ffma[5]);
    assert_int_equal(dual_layout(cub, size, &L2, err, sizeof err), -1);
    assert_non_null(strstr(err, "not consecutive"));
    free(cub);
    /* the loop's select writing a register the FFMAs write */
    cub = fixture(&size);
    struct patch_edit rd = {L.b.ffma[0] - 1, SASS_RD, L.b.dest[0]};
    assert_int_equal(patch_apply(cub, size, DUAL_KERNEL, &rd, 1, err, sizeof err), 0);
    assert_int_equal(dual_layout(cub, size, &L2, err, sizeof err), -1);
    assert_non_null(strstr(err, "a timed FFMA's destination"));
    free(cub);
    /* code that runs once before the loop may reuse a destination register
     * (the stamp's S2R made to write one): accepted over the loop span,
     * refused when the whole region is checked */
    cub = fixture(&size);
    long s2r = patch_find_mnemonic(cub, size, DUAL_KERNEL, "S2R", 1, err, sizeof err);
    assert_true(s2r > 0 && (size_t)s2r < L.b.ffma[0] - DUAL_HEAD);
    rd = (struct patch_edit){(size_t)s2r, SASS_RD, L.b.dest[0]};
    assert_int_equal(patch_apply(cub, size, DUAL_KERNEL, &rd, 1, err, sizeof err), 0);
    load_layout(cub, size, &L2);
    struct banks_shape region = dual_shape;
    region.loop_span = 0;
    assert_int_equal(banks_layout_shape(cub, size, &region, &L2.b, err, sizeof err), -1);
    assert_non_null(strstr(err, "S2R at"));
    free(cub);
    /* another probe's kernel */
    cub = must_read_file("tests/fixtures/cubins/banks/banks.cubin", &size);
    assert_int_equal(dual_layout(cub, size, &L2, err, sizeof err), -1);
    assert_non_null(strstr(err, "no kernel dual"));
    free(cub);
}

/* ---- the codec additions ----------------------------------------------------- */

static void test_nop(void **state)
{
    (void)state;
    char *sass = must_read_file("tests/fixtures/cubins/fp32.sass", NULL);
    const char *p = strstr(sass, "NOP;");
    assert_non_null(p);
    const char *w1 = strstr(p, "/* 0x"), *w2 = strstr(w1 + 5, "/* 0x");
    uint64_t lo = strtoull(w1 + 3, NULL, 16), hi = strtoull(w2 + 3, NULL, 16);
    struct sass_insn in = {0x123456789abcdef0ull, ~0ull, 0x40};
    sass_make_nop(&in);
    assert_true(in.lo == lo && in.hi == hi);
    assert_true(in.lo == 0x7918 && in.hi == 0x000fc00000000000ull);
    assert_int_equal(in.offset, 0x40);
    char mn[SASS_MNEMONIC_MAX];
    assert_string_equal(sass_mnemonic(&in, mn), "NOP");
    assert_int_equal(sass_field(&in, SASS_STALL), 0);
    assert_int_equal(sass_field(&in, SASS_WBAR), SASS_SCOREBOARD_NONE);
    free(sass);
    struct sass_insn m = sass_field_mask(SASS_STALL);
    assert_true(m.lo == 0 && m.hi == 0xfull << (105 - 64));
    m = sass_field_mask(SASS_RB);
    assert_true(m.lo == 0xffull << 32 && m.hi == 0);
}

/* A cubin copy, the text's place, and a masked write that sets one FFMA's stall. */
static void test_patch_rewrite(void **state)
{
    (void)state;
    size_t size;
    char *cub = fixture(&size), err[256];
    char *copy = malloc(size);
    assert_non_null(copy);
    memcpy(copy, cub, size);
    struct dual_layout L;
    load_layout(cub, size, &L);
    struct patch_bits w = {L.b.ffma[0], {0, 0, 0}, sass_field_mask(SASS_STALL)};
    sass_set_field(&w.value, SASS_STALL, 9);
    struct patch_edit good = {L.b.ffma[1], SASS_STALL, 5}, bad = {L.b.ffma[1], SASS_STALL, 16};
    /* refused: a value bit outside the mask, an index past the end, a bad edit */
    struct patch_bits loose = w, far = w;
    loose.value.lo = 1;
    far.index = 100000;
    assert_int_equal(patch_rewrite(copy, size, DUAL_KERNEL, &loose, 1, &good, 1, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "outside its mask"));
    assert_int_equal(patch_rewrite(copy, size, DUAL_KERNEL, &far, 1, &good, 1, err, sizeof err),
                     -1);
    assert_int_equal(patch_rewrite(copy, size, DUAL_KERNEL, &w, 1, &bad, 1, err, sizeof err), -1);
    assert_memory_equal(copy, cub, size);
    /* accepted: exactly the two stalls change */
    assert_int_equal(patch_rewrite(copy, size, DUAL_KERNEL, &w, 1, &good, 1, err, sizeof err), 0);
    size_t off, tsize;
    assert_int_equal(patch_find_text(cub, size, DUAL_KERNEL, &off, &tsize, err, sizeof err), 0);
    for (size_t i = 0; i < tsize / SASS_INSN_BYTES; i++) {
        struct sass_insn a = sass_decode((uint8_t *)cub + off, i * SASS_INSN_BYTES);
        struct sass_insn b = sass_decode((uint8_t *)copy + off, i * SASS_INSN_BYTES);
        if (i == L.b.ffma[0] || i == L.b.ffma[1]) {
            assert_int_equal(sass_field(&b, SASS_STALL), i == L.b.ffma[0] ? 9 : 5);
            sass_set_field(&b, SASS_STALL, sass_field(&a, SASS_STALL));
        }
        assert_true(a.lo == b.lo && a.hi == b.hi);
    }
    free(copy);
    free(cub);
}

/* ---- patterns ------------------------------------------------------------------ */

/* Each pattern's slots, written by hand: N = the NOP, digits = FFMA stalls. */
static const struct {
    const char *pattern, *slots;
    unsigned cycles;
} groups[] = {
    {"1-1-2-2", "N0110101", 4}, {"1-2-1-2", "N0101101", 4}, {"1-2-2-1", "N0101011", 4},
    {"2-1-1-2", "01N01101", 4}, {"2-1-2-1", "01N01011", 4}, {"2-2-1-1", "0101N011", 4},
    {DUAL_REFERENCE, "N1111111", 7},
};

/* "N" then the NOP's stall, or an FFMA's stall. */
static void expect_slots(const struct dual_slot *g, const char *slots)
{
    int s = 0;
    for (const char *p = slots; *p; p++, s++) {
        if (*p == 'N') {
            assert_true(g[s].nop);
            assert_int_equal(g[s].stall, (unsigned)(*++p - '0'));
        } else {
            assert_false(g[s].nop);
            assert_int_equal(g[s].stall, (unsigned)(*p - '0'));
        }
    }
    assert_int_equal(s, DUAL_GROUP);
}

static void test_patterns(void **state)
{
    (void)state;
    struct dual_slot g[DUAL_GROUP];
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
        assert_string_equal(dual_patterns[i], groups[i].pattern);
        assert_int_equal(dual_group(groups[i].pattern, g), 0);
        expect_slots(g, groups[i].slots);
        assert_int_equal(dual_group_cycles(g), groups[i].cycles);
    }
    /* the NOP pairs with a single FFMA: it is never next to a stall-0 FFMA's partner */
    static const char *const bad[] = {"2-2-2", "1-1-1-1-1", "1-2-2-2", "3-3", "1-1-2-2-",
                                      "",      "1--2-2-1",  "12-2-1", "1-1-1-1-1-1-1", "x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(dual_group(bad[i], g), -1);
    assert_int_equal(dual_group(NULL, g), -1);
}

/* ---- operands ----------------------------------------------------------------- */

/* Classes of registers r % n over R0..R251, as the bank probe reports them. */
static json_t *classes_mod(int n)
{
    json_t *c = json_array();
    for (int k = 0; k < n; k++)
        json_array_append_new(c, json_array());
    for (int r = 0; r < 252; r++)
        json_array_append_new(json_array_get(c, (size_t)(r % n)), json_integer(r));
    return c;
}

static int is_dest(const struct dual_layout *L, unsigned r)
{
    for (size_t d = 0; d < L->b.ndest; d++)
        if (L->b.dest[d] == r)
            return 1;
    return 0;
}

/* Every source legal, in its class, not a destination. */
static void check_sources(const struct dual_layout *L, const struct dual_operands *o,
                          const int *bank, const int want[3])
{
    for (int s = 0; s < 3; s++) {
        assert_true(o->n[s] >= 1 && o->n[s] <= DUAL_SRC_MAX);
        for (size_t i = 0; i < o->n[s]; i++) {
            unsigned r = o->src[s][i];
            assert_true(r <= L->b.max_reg);
            assert_false(is_dest(L, r));
            assert_int_equal(bank[r], want[s]);
        }
    }
}

static void test_operands(void **state)
{
    (void)state;
    size_t size;
    char *cub = fixture(&size), err[256];
    struct dual_layout L;
    load_layout(cub, size, &L);
    int bank[SASS_RZ];
    struct dual_operands o;
    /* two banks (as measured on an H200): Ra even, Rb odd, Rc even and reused */
    json_t *c = classes_mod(2);
    assert_int_equal(dual_bank_map(c, bank), 2);
    assert_int_equal(dual_operands_choose(&L, bank, 2, DUAL_CONFLICT_FREE, &o, err, sizeof err), 0);
    check_sources(&L, &o, bank, (int[]){0, 1, 0});
    assert_int_equal(o.n[0], DUAL_SRC_MAX);
    assert_int_equal(o.n[2], 1);
    assert_int_equal(o.reuse, 4);
    for (size_t i = 0; i < o.n[0]; i++)
        assert_int_not_equal(o.src[0][i], o.src[2][0]);
    json_t *j = dual_operands_json(&o, bank, DUAL_CONFLICT_FREE);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "banks"), "rb")), 1);
    assert_int_equal(json_array_size(json_object_get(j, "ra")), DUAL_SRC_MAX);
    json_decref(j);
    /* naive: three distinct registers of bank 0, no reuse */
    assert_int_equal(dual_operands_choose(&L, bank, 2, DUAL_NAIVE, &o, err, sizeof err), 0);
    check_sources(&L, &o, bank, (int[]){0, 0, 0});
    assert_true(o.src[0][0] != o.src[1][0] && o.src[1][0] != o.src[2][0] &&
                o.src[0][0] != o.src[2][0]);
    assert_int_equal(o.reuse, 0);
    json_decref(c);
    /* three banks: one per source, no reuse */
    c = classes_mod(3);
    assert_int_equal(dual_bank_map(c, bank), 3);
    assert_int_equal(dual_operands_choose(&L, bank, 3, DUAL_CONFLICT_FREE, &o, err, sizeof err), 0);
    check_sources(&L, &o, bank, (int[]){0, 1, 2});
    assert_int_equal(o.reuse, 0);
    json_decref(c);
    /* one bank: no conflict-free choice; naive still */
    c = classes_mod(1);
    assert_int_equal(dual_bank_map(c, bank), 1);
    assert_int_equal(dual_operands_choose(&L, bank, 1, DUAL_CONFLICT_FREE, &o, err, sizeof err),
                     -1);
    assert_int_equal(dual_operands_choose(&L, bank, 1, DUAL_NAIVE, &o, err, sizeof err), 0);
    json_decref(c);
    /* too few registers: every even register a destination */
    struct dual_layout small = L;
    small.b.max_reg = 3;
    small.b.ndest = 2;
    small.b.dest[0] = 0;
    small.b.dest[1] = 2;
    c = classes_mod(2);
    dual_bank_map(c, bank);
    assert_int_equal(dual_operands_choose(&small, bank, 2, DUAL_NAIVE, &o, err, sizeof err), -1);
    assert_int_equal(dual_operands_choose(&small, bank, 2, DUAL_CONFLICT_FREE, &o, err, sizeof err),
                     -1);
    json_decref(c);
    /* malformed classes */
    json_t *dup = json_pack("[[0, 2], [1, 2]]"), *range = json_pack("[[0, 255]]"),
           *flat = json_pack("[0, 1]");
    assert_int_equal(dual_bank_map(dup, bank), -1);
    assert_int_equal(dual_bank_map(range, bank), -1);
    assert_int_equal(dual_bank_map(flat, bank), -1);
    assert_int_equal(dual_bank_map(NULL, bank), -1);
    json_decref(dup);
    json_decref(range);
    json_decref(flat);
    free(cub);
}

/* ---- the rewrite ---------------------------------------------------------------- */

static const uint64_t NOP_LO = 0x7918;

/* Applies pattern p with operands o to a copy and checks every instruction
 * by decoding it again; returns the copy. */
static char *check_rewrite(const char *cub, size_t size, const struct dual_layout *L,
                           const char *p, const struct dual_operands *o, struct dual_edits *e)
{
    char err[256];
    assert_int_equal(dual_edits(L, p, o, e), 0);
    assert_int_equal(e->nnop, DUAL_GROUPS);
    assert_int_equal(e->ned, DUAL_FFMA * DUAL_EDITS_PER_FFMA);
    char *copy = malloc(size);
    assert_non_null(copy);
    memcpy(copy, cub, size);
    assert_int_equal(patch_rewrite(copy, size, DUAL_KERNEL, e->nop, e->nnop, e->ed, e->ned, err,
                                   sizeof err), 0);
    size_t off, tsize;
    assert_int_equal(patch_find_text(cub, size, DUAL_KERNEL, &off, &tsize, err, sizeof err), 0);
    assert_memory_equal(copy, cub, off);
    assert_memory_equal(copy + off + tsize, cub + off + tsize, size - off - tsize);
    size_t slot = 0, k = 0;
    unsigned cycles = 0, nops = 0;
    char mn[SASS_MNEMONIC_MAX];
    for (size_t i = 0; i < tsize / SASS_INSN_BYTES; i++) {
        struct sass_insn a = sass_decode((uint8_t *)cub + off, i * SASS_INSN_BYTES);
        struct sass_insn b = sass_decode((uint8_t *)copy + off, i * SASS_INSN_BYTES);
        if (i < L->b.ffma[0] || i > L->b.ffma[DUAL_TIMED - 1]) {
            assert_true(a.lo == b.lo && a.hi == b.hi);
            continue;
        }
        cycles += sass_field(&b, SASS_STALL);
        /* yield and scoreboards as compiled, on the NOP too */
        static const enum sass_field keep[] = {SASS_YIELD, SASS_WBAR, SASS_RBAR, SASS_WAIT};
        for (size_t f = 0; f < sizeof keep / sizeof keep[0]; f++)
            assert_int_equal(sass_field(&a, keep[f]), sass_field(&b, keep[f]));
        const char *m = sass_mnemonic(&b, mn);
        if (strcmp(m, "NOP") == 0) {
            nops++;
            assert_true(b.lo == NOP_LO);
            assert_int_equal(sass_field(&b, SASS_REUSE), 0);
        } else {
            assert_string_equal(m, "FFMA");
            assert_int_equal(sass_field(&b, SASS_RA), o->src[0][k % o->n[0]]);
            assert_int_equal(sass_field(&b, SASS_RB), o->src[1][k % o->n[1]]);
            assert_int_equal(sass_field(&b, SASS_RC), o->src[2][k % o->n[2]]);
            assert_int_equal(sass_field(&b, SASS_REUSE), o->reuse);
            assert_true(is_dest(L, sass_field(&b, SASS_RD)));
            /* only operands, reuse and stall changed */
            uint64_t lo_mask = ~(0xffffffull << 16), hi_mask = ~(0xffull | 0xfull << 58 |
                                                               0xfull << 41);
            assert_true((a.lo & lo_mask) == (b.lo & lo_mask));
            assert_true((a.hi & hi_mask) == (b.hi & hi_mask));
            k++;
        }
        if (++slot % DUAL_GROUP == 0) {        /* a group ends: one NOP, its cycles */
            struct dual_slot g[DUAL_GROUP];
            dual_group(p, g);
            assert_int_equal(nops, 1);
            assert_int_equal(cycles, dual_group_cycles(g));
            nops = cycles = 0;
        }
    }
    assert_int_equal(k, DUAL_FFMA);
    assert_int_equal(dual_verify(cub, copy, size, L, p, o, err, sizeof err), 0);
    return copy;
}

#define FLIP 0xffffffffu             /* tamper: flip the field's lowest bit */

/* dual_verify refuses a copy changed in one more place (field f set to v). */
static void tamper_refused(const char *cub, char *copy, size_t size, const struct dual_layout *L,
                           const char *p, const struct dual_operands *o, size_t at,
                           enum sass_field f, unsigned v)
{
    char err[256];
    size_t off, tsize;
    assert_int_equal(patch_find_text(copy, size, DUAL_KERNEL, &off, &tsize, err, sizeof err), 0);
    struct sass_insn x = sass_decode((uint8_t *)copy + off, at * SASS_INSN_BYTES), keep = x;
    if (v == FLIP)
        v = sass_field(&x, f) ^ 1;
    assert_int_not_equal(sass_field(&x, f), v);
    assert_int_equal(sass_set_field(&x, f, v), 0);
    sass_encode(&x, (uint8_t *)copy + off, at * SASS_INSN_BYTES);
    assert_int_equal(dual_verify(cub, copy, size, L, p, o, err, sizeof err), -1);
    sass_encode(&keep, (uint8_t *)copy + off, at * SASS_INSN_BYTES);
    assert_int_equal(dual_verify(cub, copy, size, L, p, o, err, sizeof err), 0);
}

static void test_rewrite(void **state)
{
    (void)state;
    size_t size;
    char *cub = fixture(&size), err[256];
    struct dual_layout L;
    load_layout(cub, size, &L);
    int bank[SASS_RZ];
    json_t *c = classes_mod(2);
    dual_bank_map(c, bank);
    json_decref(c);
    struct dual_operands ops[2];
    assert_int_equal(dual_operands_choose(&L, bank, 2, DUAL_CONFLICT_FREE, &ops[0], err,
                                          sizeof err), 0);
    assert_int_equal(dual_operands_choose(&L, bank, 2, DUAL_NAIVE, &ops[1], err, sizeof err), 0);
    struct dual_edits *e = malloc(sizeof *e);
    assert_non_null(e);
    for (int k = 0; k < 2; k++)
        for (int p = 0; p < DUAL_PATTERNS; p++) {
            char *copy = check_rewrite(cub, size, &L, dual_patterns[p], &ops[k], e);
            const char *other = dual_patterns[(p + 1) % DUAL_PATTERNS];
            if (strcmp(groups[p].slots, groups[(p + 1) % DUAL_PATTERNS].slots) != 0)
                assert_int_equal(dual_verify(cub, copy, size, &L, other, &ops[k], err,
                                             sizeof err), -1);
            size_t ffma = L.b.ffma[DUAL_GROUP + 3], nop = e->nop[2].index;
            tamper_refused(cub, copy, size, &L, dual_patterns[p], &ops[k], ffma, SASS_STALL, 3);
            tamper_refused(cub, copy, size, &L, dual_patterns[p], &ops[k], ffma, SASS_YIELD, FLIP);
            tamper_refused(cub, copy, size, &L, dual_patterns[p], &ops[k], nop, SASS_STALL, 2);
            tamper_refused(cub, copy, size, &L, dual_patterns[p], &ops[k], nop, SASS_YIELD, FLIP);
            tamper_refused(cub, copy, size, &L, dual_patterns[p], &ops[k], nop, SASS_WAIT, FLIP);
            tamper_refused(cub, copy, size, &L, dual_patterns[p], &ops[k], ffma, SASS_REUSE, FLIP);
            tamper_refused(cub, copy, size, &L, dual_patterns[p], &ops[k], ffma, SASS_RD,
                           ops[k].src[0][0]);
            tamper_refused(cub, copy, size, &L, dual_patterns[p], &ops[k], ffma, SASS_RA,
                           L.b.dest[0]);
            copy[1] ^= 1;
            assert_int_equal(dual_verify(cub, copy, size, &L, dual_patterns[p], &ops[k], err,
                                         sizeof err), -1);
            free(copy);
        }
    free(e);
    free(cub);
}

/* dual_edits refuses operands that are not safe sources and patterns that
 * are not patterns; dual_verify refuses operands it was not given. */
static void test_rewrite_refusals(void **state)
{
    (void)state;
    size_t size;
    char *cub = fixture(&size), err[256];
    struct dual_layout L;
    load_layout(cub, size, &L);
    struct dual_operands o = {{{4}, {5}, {6}}, {1, 1, 1}, 0};
    struct dual_edits *e = malloc(sizeof *e);
    assert_non_null(e);
    assert_int_equal(dual_edits(&L, "1-2-2-1", &o, e), 0);
    struct dual_operands bad[5];
    for (int i = 0; i < 5; i++)
        bad[i] = o;
    bad[0].src[1][0] = L.b.dest[0];                 /* a destination */
    bad[1].src[2][0] = SASS_RZ;
    bad[2].src[0][0] = L.b.max_reg + 1;             /* not named by the compiled FFMAs */
    bad[3].reuse = 8;
    bad[4].n[1] = 0;
    for (int i = 0; i < 5; i++) {
        assert_int_equal(dual_edits(&L, "1-2-2-1", &bad[i], e), -1);
        assert_int_equal(dual_verify(cub, cub, size, &L, "1-2-2-1", &bad[i], err, sizeof err),
                         -1);
    }
    assert_int_equal(dual_edits(&L, "2-2-2", &o, e), -1);
    assert_int_equal(dual_edits(&L, NULL, &o, e), -1);
    /* the unedited kernel is not any pattern */
    assert_int_equal(dual_verify(cub, cub, size, &L, "1-2-2-1", &o, err, sizeof err), -1);
    free(e);
    free(cub);
}

/* ---- figures -------------------------------------------------------------------- */

static void test_figures(void **state)
{
    (void)state;
    /* one warp-FFMA per scheduler per clock: 128 per SM per clock */
    double cycles = (double)DUAL_FFMA * 2000;
    assert_true(fabs(dual_rate(4, DUAL_FFMA, 2000, cycles) - 128) < 1e-9);
    assert_true(fabs(dual_rate(16, DUAL_FFMA, 2000, 4 * cycles) - 128) < 1e-9);
    assert_true(dual_rate(4, DUAL_FFMA, 2000, 0) == 0);
    assert_true(fabs(dual_nominal(6, 4) - 192) < 1e-9);
    assert_true(fabs(dual_nominal(6, 7) - 768.0 / 7) < 1e-9);
    assert_true(fabs(dual_nominal(DUAL_TIMED, DUAL_TIMED) - 128) < 1e-9);
    assert_true(dual_nominal(6, 0) == 0);
    assert_int_equal(dual_peak_lanes(9, 0), 128);
    assert_int_equal(dual_peak_lanes(8, 0), 64);
    assert_int_equal(dual_peak_lanes(8, 6), 128);
    assert_int_equal(dual_peak_lanes(7, 0), 64);
    assert_int_equal(dual_peak_lanes(6, 1), 0);
    json_t *r = dual_ratio_json(96, 128);
    assert_true(fabs(json_real_value(r) - 0.75) < 1e-12);
    json_decref(r);
    r = dual_ratio_json(96, 0);
    assert_true(json_is_null(r));
    json_decref(r);
}

static json_t *row(const char *pattern, const char *operands, int w, double median)
{
    return json_pack("{s:s, s:s, s:i, s:{s:f}}", "pattern", pattern, "operands", operands,
                     "warps_per_scheduler", w, "ffma_per_sm_clock", "median", median);
}

static void test_verdict(void **state)
{
    (void)state;
    char text[600];
    json_t *rows = json_array();
    json_array_append_new(rows, row("compiled", "compiled", 1, 120.5));
    json_array_append_new(rows, row(DUAL_REFERENCE, "conflict_free", 1, 109.2));
    json_array_append_new(rows, row("1-2-2-1", "conflict_free", 1, 109.5));
    json_array_append_new(rows, row("2-2-1-1", "naive", 1, 40.0));
    json_array_append_new(rows, row("1-1-2-2", "conflict_free", 2, 200.0)); /* not 1 warp */
    json_array_append_new(rows, row(DUAL_REFERENCE, "naive", 1, 300.0));    /* the reference */
    assert_int_equal(dual_verdict(rows, text, sizeof text), 0);
    assert_non_null(strstr(text, "No dual issue"));
    assert_non_null(strstr(text, "1-2-2-1 with conflict-free operands, 109.5"));
    assert_non_null(strstr(text, "reference ran 109.2"));
    assert_non_null(strstr(text, "compiled kernel ran 120.5"));
    /* just above 128 but within the 0.5% margin: not dual issue */
    json_array_append_new(rows, row("2-1-2-1", "conflict_free", 1, 128.6));
    assert_int_equal(dual_verdict(rows, text, sizeof text), 0);
    json_array_append_new(rows, row("2-1-1-2", "naive", 1, 181.25));
    assert_int_equal(dual_verdict(rows, text, sizeof text), 1);
    assert_non_null(strstr(text, "Dual issue observed"));
    assert_non_null(strstr(text, "2-1-1-2 (naive operands) ran 181.2"));
    json_decref(rows);
    rows = json_array();
    assert_int_equal(dual_verdict(rows, text, sizeof text), 0);
    assert_non_null(strstr(text, "No pattern"));
    json_decref(rows);
    char tiny[8];
    assert_int_equal(dual_verdict(rows, tiny, sizeof tiny), 0);
}

/* ---- ptxas ------------------------------------------------------------------------ */

/* Compiles the shape's PTX with the local ptxas and reads its layout. */
static int compile_layout(const struct banks_shape *s, struct dual_layout *L, char *err,
                          size_t errlen)
{
    char dir[] = "/tmp/gpuprobe-test-dual-XXXXXX", cmd[512], ptxp[128], cubp[128];
    assert_non_null(mkdtemp(dir));
    snprintf(ptxp, sizeof ptxp, "%s/d.ptx", dir);
    snprintf(cubp, sizeof cubp, "%s/d.cubin", dir);
    char *ptx = banks_ptx_shape(s, 9, 0);
    write_file(ptxp, ptx);
    free(ptx);
    snprintf(cmd, sizeof cmd, PTXAS " -arch=sm_90 -o %s %s", cubp, ptxp);
    assert_int_equal(system(cmd), 0);
    size_t size;
    char *cub = must_read_file(cubp, &size);
    int rc = dual_layout(cub, size, L, err, errlen);
    free(cub);
    unlink(ptxp);
    unlink(cubp);
    rmdir(dir);
    return rc;
}

static void test_ptxas(void **state)
{
    (void)state;
    if (access(PTXAS, X_OK) != 0) {
        skip();
        return;
    }
    char err[256];
    struct dual_layout L;
    assert_int_equal(compile_layout(&dual_shape, &L, err, sizeof err), 0);
    /* without the pin ptxas spreads the counter and compare among the FFMAs */
    struct banks_shape loose = dual_shape;
    loose.pinned = 0;
    assert_int_equal(compile_layout(&loose, &L, err, sizeof err), -1);
    assert_non_null(strstr(err, "not consecutive"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_ptx),      cmocka_unit_test(test_layout),
        cmocka_unit_test(test_layout_refusals), cmocka_unit_test(test_nop),
        cmocka_unit_test(test_patch_rewrite),   cmocka_unit_test(test_patterns),
        cmocka_unit_test(test_operands),        cmocka_unit_test(test_rewrite),
        cmocka_unit_test(test_rewrite_refusals), cmocka_unit_test(test_figures),
        cmocka_unit_test(test_verdict),         cmocka_unit_test(test_ptxas),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
