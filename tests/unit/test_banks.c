/*
 * The register-bank probe's machine-code side, without a GPU
 * (probes/banks_ptx.c):
 * - the generated PTX equals tests/fixtures/cubins/banks/banks.ptx
 *   (GPUPROBE_UPDATE_GOLDEN=1 rewrites it);
 * - on the committed sm_90 cubin ptxas made from it: the layout reader
 *   finds 255 registers, exactly 256 timed FFMAs and their destinations;
 * - a rewrite for a pair, a triple and a reuse test changes exactly Ra,
 *   Rb, Rc, Rd and the reuse bits of exactly the timed FFMAs: checked here
 *   by decoding every instruction again, independently of banks_verify,
 *   and banks_verify itself accepts that and refuses a tampered copy;
 * - refusals: illegal registers, no free destination, a cubin whose
 *   register count is too low or whose timed region lost an FFMA;
 * - where ptxas is installed, the freshly generated PTX compiles to a
 *   kernel the layout reader accepts;
 * - the untested registers and their reasons (banks_untested.c): R253 and
 *   R254 named as refused register numbers with the H100 experiment's
 *   evidence directory, a register below R253 above a lower ceiling with
 *   the compiler's reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/support/tmpfile.h"
#include "probes/banks.h"
#include "probes/gpu/cubin.h"
#include "probes/gpu/patch.h"

#define FIX "tests/fixtures/cubins/banks/"


static void test_golden_ptx(void **state)
{
    (void)state;
    char *got = banks_ptx(9, 0);
    assert_non_null(got);
    if (getenv("GPUPROBE_UPDATE_GOLDEN")) {
        FILE *f = fopen(FIX "banks.ptx", "w");
        assert_non_null(f);
        fputs(got, f);
        fclose(f);
    }
    size_t len;
    char *want = read_file(FIX "banks.ptx", &len);
    assert_non_null(want);
    assert_string_equal(got, want);
    /* the shape the method relies on */
    assert_non_null(strstr(got, ".maxnreg 255"));
    size_t fmas = 0;
    for (const char *p = got; (p = strstr(p, "fma.rn.f32")); p++)
        fmas++;
    assert_int_equal(fmas, BANKS_TIMED);
    free(got);
    free(want);
}

static void test_layout(void **state)
{
    (void)state;
    size_t size;
    char *cub = read_file(FIX "banks.cubin", &size), err[256];
    assert_non_null(cub);
    struct banks_layout L;
    assert_int_equal(banks_layout(cub, size, &L, err, sizeof err), 0);
    assert_int_equal(L.regs, 255);
    assert_int_equal(L.nffma, BANKS_TIMED);
    /* the fixture's facts (README): 11 rotating accumulator registers */
    assert_int_equal(L.ndest, 11);
    unsigned want[] = {2, 3, 4, 5, 6, 7, 245, 247, 249, 250, 251};
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        int found = 0;
        for (size_t d = 0; d < L.ndest; d++)
            found |= L.dest[d] == want[w];
        assert_true(found);
    }
    /* one unrolled run: between the first and the last FFMA only the
     * loop's LDC (bound), UIADD3 (counter) and ISETP (README) */
    assert_int_equal(L.ffma[L.nffma - 1] - L.ffma[0] + 1, BANKS_TIMED + 3);
    /* the highest register the timed FFMAs name: the probe's upper limit */
    assert_int_equal(L.max_reg, 251);
    free(cub);
}

/* Applies t to a copy and checks every instruction of the kernel by
 * decoding it again: the timed FFMAs carry exactly t, all else is as it was. */
static void check_rewrite(const char *cub, size_t size, const struct banks_layout *L,
                          const struct banks_test *t)
{
    char err[256];
    struct patch_edit *ed = malloc(sizeof *ed * BANKS_EDITS_PER_FFMA * BANKS_TIMED);
    assert_non_null(ed);
    size_t n = banks_edits(L, t, ed);
    assert_int_equal(n, BANKS_EDITS_PER_FFMA * BANKS_TIMED);
    char *copy = malloc(size);
    assert_non_null(copy);
    memcpy(copy, cub, size);
    assert_int_equal(patch_apply(copy, size, BANKS_KERNEL, ed, n, err, sizeof err), 0);
    size_t off, tsize;
    assert_int_equal(patch_find_text(cub, size, BANKS_KERNEL, &off, &tsize, err, sizeof err), 0);
    assert_memory_equal(copy, cub, off);
    assert_memory_equal(copy + off + tsize, cub + off + tsize, size - off - tsize);
    size_t next = 0, timed = 0;
    unsigned rd = SASS_RZ;
    for (size_t i = 0; i < tsize / SASS_INSN_BYTES; i++) {
        struct sass_insn a = sass_decode((const uint8_t *)cub + off, i * SASS_INSN_BYTES);
        struct sass_insn b = sass_decode((const uint8_t *)copy + off, i * SASS_INSN_BYTES);
        if (next < L->nffma && L->ffma[next] == i) {
            next++;
            timed++;
            char mn[SASS_MNEMONIC_MAX];
            assert_string_equal(sass_mnemonic(&b, mn), "FFMA");
            assert_int_equal(sass_field(&b, SASS_RA), t->src[0]);
            assert_int_equal(sass_field(&b, SASS_RB), t->src[1]);
            assert_int_equal(sass_field(&b, SASS_RC), t->src[2]);
            assert_int_equal(sass_field(&b, SASS_REUSE), t->reuse);
            if (rd == SASS_RZ)
                rd = sass_field(&b, SASS_RD);
            assert_int_equal(sass_field(&b, SASS_RD), rd);
            for (int s = 0; s < 3; s++)
                assert_int_not_equal(rd, t->src[s]);
            /* everything outside the five fields unchanged */
            static const enum sass_field keep[] = {SASS_OPCODE, SASS_PRED, SASS_PRED_NEG,
                                                   SASS_STALL, SASS_YIELD, SASS_WBAR,
                                                   SASS_RBAR, SASS_WAIT};
            for (size_t k = 0; k < sizeof keep / sizeof keep[0]; k++)
                assert_int_equal(sass_field(&a, keep[k]), sass_field(&b, keep[k]));
            uint64_t lo_mask = ~(0xffffffULL << 16);            /* bits 16..39 */
            uint64_t hi_mask = ~(0xffULL | 0xfULL << (122 - 64));/* Rc, reuse */
            assert_true((a.lo & lo_mask) == (b.lo & lo_mask));
            assert_true((a.hi & hi_mask) == (b.hi & hi_mask));
        } else {
            assert_true(a.lo == b.lo && a.hi == b.hi);
        }
    }
    assert_int_equal(timed, BANKS_TIMED);
    assert_int_equal(banks_verify(cub, copy, size, L, t, err, sizeof err), 0);
    /* banks_verify refuses: another reuse value, a changed stall elsewhere,
     * a byte changed outside the text */
    struct banks_test other = *t;
    other.reuse = (t->reuse + 1) & 7;
    assert_int_equal(banks_verify(cub, copy, size, L, &other, err, sizeof err), -1);
    struct sass_insn x = sass_decode((const uint8_t *)copy + off, L->ffma[7] * SASS_INSN_BYTES);
    unsigned st = sass_field(&x, SASS_STALL);
    assert_int_equal(sass_set_field(&x, SASS_STALL, st ^ 1), 0);
    sass_encode(&x, (uint8_t *)copy + off, L->ffma[7] * SASS_INSN_BYTES);
    assert_int_equal(banks_verify(cub, copy, size, L, t, err, sizeof err), -1);
    assert_non_null(strstr(err, "changed beyond"));
    assert_int_equal(sass_set_field(&x, SASS_STALL, st), 0);
    sass_encode(&x, (uint8_t *)copy + off, L->ffma[7] * SASS_INSN_BYTES);
    assert_int_equal(banks_verify(cub, copy, size, L, t, err, sizeof err), 0);
    copy[0] ^= 1;
    assert_int_equal(banks_verify(cub, copy, size, L, t, err, sizeof err), -1);
    free(copy);
    free(ed);
}

static void test_rewrite(void **state)
{
    (void)state;
    size_t size;
    char *cub = read_file(FIX "banks.cubin", &size), err[256];
    assert_non_null(cub);
    struct banks_layout L;
    assert_int_equal(banks_layout(cub, size, &L, err, sizeof err), 0);
    struct banks_test tests[] = {
        {{0, 1, SASS_RZ}, 0},          /* a pair */
        {{2, 3, 4}, 0},                /* sources on the first destinations */
        {{245, 247, 249}, 7},          /* more of them, every reuse flag */
        {{254, 253, SASS_RZ}, 3},
        {{100, SASS_RZ, SASS_RZ}, 0},  /* the single-source reference */
    };
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++)
        check_rewrite(cub, size, &L, &tests[i]);
    free(cub);
}

static void test_refusals(void **state)
{
    (void)state;
    size_t size;
    char *cub = read_file(FIX "banks.cubin", &size), err[256];
    assert_non_null(cub);
    struct banks_layout L;
    assert_int_equal(banks_layout(cub, size, &L, err, sizeof err), 0);
    struct patch_edit *ed = malloc(sizeof *ed * BANKS_EDITS_PER_FFMA * BANKS_TIMED);
    assert_non_null(ed);
    struct banks_test bad[] = {{{256, 1, SASS_RZ}, 0}, {{0, 1, SASS_RZ}, 8}};
    for (size_t i = 0; i < 2; i++)
        assert_int_equal(banks_edits(&L, &bad[i], ed), 0);
    struct banks_layout two = L;
    two.ndest = 2;
    two.dest[0] = 5;
    two.dest[1] = 6;
    struct banks_test busy = {{5, 6, SASS_RZ}, 0}, free1 = {{5, 7, SASS_RZ}, 0};
    assert_int_equal(banks_edits(&two, &busy, ed), 0);
    assert_int_equal(banks_edits(&two, &free1, ed), BANKS_EDITS_PER_FFMA * BANKS_TIMED);
    assert_int_equal(ed[3].field, SASS_RD);
    assert_int_equal(ed[3].value, 6);
    /* one timed FFMA turned into an FMUL-like opcode: 255 FFMAs left */
    char *copy = malloc(size);
    assert_non_null(copy);
    memcpy(copy, cub, size);
    struct patch_edit op = {L.ffma[10], SASS_OPCODE_BASE, 0x020};   /* FMUL's base */
    assert_int_equal(patch_apply(copy, size, BANKS_KERNEL, &op, 1, err, sizeof err), 0);
    struct banks_layout L2;
    assert_int_equal(banks_layout(copy, size, &L2, err, sizeof err), -1);
    assert_non_null(strstr(err, "255 FFMAs"));
    /* a kernel of another fixture: wrong name / too few registers */
    free(copy);
    copy = read_file("tests/fixtures/cubins/fp32.cubin", &size);
    assert_non_null(copy);
    assert_int_equal(banks_layout(copy, size, &L2, err, sizeof err), -1);
    assert_non_null(strstr(err, "no kernel banks"));
    free(copy);
    free(ed);
    free(cub);
}

static void test_ptxas(void **state)
{
    (void)state;
    char *ptx = banks_ptx(9, 0), err[256];
    size_t size;
    char *cub = ptxas_cubin(ptx, "sm_90", &size);
    free(ptx);
    if (!cub) {
        skip();
        return;
    }
    struct banks_layout L;
    assert_int_equal(banks_layout(cub, size, &L, err, sizeof err), 0);
    free(cub);
}

static void test_untested(void **state)
{
    (void)state;
    json_t *l = banks_untested_json(252, 255);
    assert_int_equal(json_array_size(l), 2);
    for (size_t i = 0; i < 2; i++) {
        json_t *e = json_array_get(l, i);
        const char *why = json_string_value(json_object_get(e, "reason"));
        assert_int_equal(json_integer_value(json_object_get(e, "register")), 253 + (int)i);
        assert_non_null(strstr(why, "refused as a register number"));
        assert_non_null(strstr(why, "tests/gpu/results/2026-11-24-h100-regs-limit"));
        assert_non_null(strstr(why, "CUDA_ERROR_ILLEGAL_INSTRUCTION"));
        assert_non_null(strstr(why, "source or as the destination"));
        assert_non_null(strstr(why, "R252 ran"));
    }
    json_decref(l);
    /* a JIT that stops lower: R251, R252 for the compiler's reason */
    l = banks_untested_json(250, 253);
    assert_int_equal(json_array_size(l), 4);
    const char *why = json_string_value(json_object_get(json_array_get(l, 0), "reason"));
    assert_int_equal(json_integer_value(json_object_get(json_array_get(l, 0), "register")), 251);
    assert_non_null(strstr(why, "above R250"));
    assert_non_null(strstr(why, "253 registers"));
    assert_non_null(strstr(why, "R17 ran, R18 faulted"));
    assert_null(strstr(why, "refused"));
    why = json_string_value(json_object_get(json_array_get(l, 2), "reason"));
    assert_non_null(strstr(why, "refused as a register number"));
    json_decref(l);
    l = banks_untested_json(BANKS_MAX_REG, 255);
    assert_int_equal(json_array_size(l), 0);
    json_decref(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_ptx), cmocka_unit_test(test_layout),
        cmocka_unit_test(test_rewrite), cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_ptxas), cmocka_unit_test(test_untested),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
