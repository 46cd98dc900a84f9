/*
 * The reuse-cache patterns, the simulator and the analysis
 * (probes/banks_reuse.h), no GPU:
 * - every pattern is what the method needs: in the test and cleared
 *   variants every step reads c once and at most one other register of
 *   bank A (no spare bank cycle, and cycles = FFMAs + unserved reads
 *   under both a per-instruction and a bandwidth cost model), in the free
 *   variant no step reads two registers of one bank; cleared sets no
 *   flag; no step writes one of its sources;
 * - the simulator against counts worked out by hand for a few designs;
 * - the analysis recovers every candidate design, alone, from rates the
 *   simulator makes (with noise and a conflict cost other than one
 *   cycle), answers each question as that design serves its probe read,
 *   and says "not determined" for rates no design gives, for controls
 *   without contrast, and when the spread makes every design fit;
 * - the register picker: a, a2, c, f in one bank, o in another, a and d
 *   destinations, all distinct; it refuses a one-bank map;
 * - the edits and the verifier of a sequence on the committed sm_90
 *   cubin: FFMA i carries step i % 8, a tampered destination is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/support/tmpfile.h"
#include "probes/banks_reuse.h"

#define RZ SASS_RZ
static const struct reuse_regs regs = {10, 12, 14, 16, 11, 20};

static int bank(unsigned r)
{
    return (int)(r % 2);
}

static void test_patterns(void **state)
{
    (void)state;
    for (int q = 0; q < REUSE_QUESTIONS; q++) {
        assert_non_null(reuse_question_name((enum reuse_question)q));
        assert_non_null(reuse_question_text((enum reuse_question)q));
        for (int v = 0; v < REUSE_VARIANTS; v++) {
            struct banks_step seq[REUSE_PERIOD];
            assert_int_equal(reuse_pattern(&regs, (enum reuse_question)q, (enum reuse_variant)v,
                                           seq), 0);
            int flags = 0, two = 0;
            for (int i = 0; i < REUSE_PERIOD; i++) {
                int per[2] = {0, 0}, c = 0;
                for (int s = 0; s < 3; s++) {
                    unsigned r = seq[i].t.src[s];
                    if (r == RZ)
                        continue;
                    per[bank(r)]++;
                    c += r == regs.c;
                    assert_int_not_equal(r, seq[i].rd);    /* independent FFMAs */
                }
                assert_true(per[1] <= 1);
                if (v == REUSE_FREE) {
                    assert_true(per[0] <= 1);
                } else {
                    assert_int_equal(c, 1);
                    assert_true(per[0] >= 1 && per[0] <= 2);
                }
                two += per[0] == 2;
                flags += seq[i].t.reuse != 0;
                assert_true(seq[i].rd == regs.d || (q == REUSE_Q_WRITE && i == 1 &&
                                                    seq[i].rd == regs.a));
            }
            if (v == REUSE_CLEARED) {
                assert_int_equal(flags, 0);
                assert_int_equal(two, q == REUSE_Q_SECOND_OTHER_BANK ? 7 : 8);
            } else {
                assert_int_equal(seq[0].t.reuse, 1);
                assert_int_equal(seq[0].t.src[0], regs.a);
            }
            if (v == REUSE_FREE)
                assert_int_equal(two, 0);
        }
    }
    struct banks_step seq[REUSE_PERIOD];
    assert_int_equal(reuse_pattern(&regs, REUSE_QUESTIONS, REUSE_TEST, seq), -1);
    assert_int_equal(reuse_pattern(&regs, REUSE_Q_NEXT, REUSE_VARIANTS, seq), -1);
    assert_null(reuse_question_name(REUSE_QUESTIONS));
    assert_int_equal(reuse_pattern(&regs, REUSE_Q_NEXT, REUSE_TEST, seq), 0);
    json_t *j = reuse_pattern_json(seq);
    assert_string_equal(json_string_value(json_array_get(j, 0)), "R10 R14 RZ -> R20 reuse 1");
    assert_string_equal(json_string_value(json_array_get(j, 7)), "R10 R14 RZ -> R20 reuse 1");
    json_decref(j);
    assert_int_equal(reuse_pattern(&regs, REUSE_Q_OTHER_SLOT, REUSE_TEST, seq), 0);
    j = reuse_pattern_json(seq);
    assert_string_equal(json_string_value(json_array_get(j, 1)), "R14 R10 RZ -> R20 reuse 0");
    assert_string_equal(json_string_value(json_array_get(j, 2)), "RZ R14 R16 -> R20 reuse 0");
    json_decref(j);
}

/* ---- the simulator ---------------------------------------------------------- */

static const struct reuse_design *design(const char *name)
{
    for (int k = 0; k < REUSE_DESIGNS; k++)
        if (strcmp(reuse_designs[k].name, name) == 0)
            return &reuse_designs[k];
    fail_msg("no design %s", name);
    return NULL;
}

static int predict(const char *name, enum reuse_question q, int *served)
{
    return reuse_predict(design(name), q, REUSE_TEST, served);
}

static void test_simulator(void **state)
{
    (void)state;
    int served;
    /* next: every FFMA is (a^, c): all served, or all conflict */
    assert_int_equal(predict("per_slot_per_bank", REUSE_Q_NEXT, &served), 0);
    assert_true(served);
    assert_int_equal(predict("no_cache", REUSE_Q_NEXT, &served), 8);
    assert_false(served);
    /* distance: 6 fillers conflict; a kept from one period to the next
     * serves step 0 and the probe; a one-step cache serves neither; a
     * strict cache released a at the unflagged probe, so step 0 misses */
    assert_int_equal(predict("per_slot_per_bank", REUSE_Q_DISTANCE, &served), 6);
    assert_true(served);
    assert_int_equal(predict("next_only", REUSE_Q_DISTANCE, &served), 8);
    assert_false(served);
    assert_int_equal(predict("per_slot_one_entry_strict", REUSE_Q_DISTANCE, &served), 7);
    assert_true(served);
    /* other slot: the probe reads a in slot b */
    assert_int_equal(predict("shared_two_per_bank", REUSE_Q_OTHER_SLOT, &served), 6);
    assert_true(served);
    assert_int_equal(predict("per_slot_per_bank", REUSE_Q_OTHER_SLOT, &served), 7);
    assert_false(served);
    /* a2^ after a^: with one entry per bank a and a2 evict each other
     * every period (steps 0, 1, 2 and 5 fillers conflict) */
    assert_int_equal(predict("per_slot_per_bank", REUSE_Q_SECOND_SAME_BANK, &served), 8);
    assert_false(served);
    assert_int_equal(predict("per_slot_two_per_bank", REUSE_Q_SECOND_SAME_BANK, &served), 5);
    assert_true(served);
    /* o^ (bank B) between: step 1 reads c and o, never a conflict */
    assert_int_equal(predict("per_slot_per_bank", REUSE_Q_SECOND_OTHER_BANK, &served), 5);
    assert_int_equal(predict("per_slot_one_entry", REUSE_Q_SECOND_OTHER_BANK, &served), 7);
    assert_false(served);
    /* the write 6 FFMAs before the probe */
    assert_int_equal(predict("per_slot_per_bank", REUSE_Q_WRITE, &served), 6);
    assert_int_equal(predict("per_slot_per_bank_write_invalidates", REUSE_Q_WRITE, &served), 8);
    assert_false(served);
    /* the controls do not depend on the design */
    for (int k = 0; k < REUSE_DESIGNS; k++)
        for (int q = 0; q < REUSE_QUESTIONS; q++) {
            assert_int_equal(reuse_predict(&reuse_designs[k], (enum reuse_question)q,
                                           REUSE_FREE, NULL), 0);
            assert_int_equal(reuse_predict(&reuse_designs[k], (enum reuse_question)q,
                                           REUSE_CLEARED, NULL),
                             q == REUSE_Q_SECOND_OTHER_BANK ? 7 : 8);
        }
    /* every design is told apart from every other by some question */
    for (int k = 0; k < REUSE_DESIGNS; k++)
        for (int l = k + 1; l < REUSE_DESIGNS; l++) {
            int differ = 0;
            for (int q = 0; q < REUSE_QUESTIONS; q++)
                differ |= reuse_predict(&reuse_designs[k], (enum reuse_question)q, REUSE_TEST,
                                        NULL) !=
                          reuse_predict(&reuse_designs[l], (enum reuse_question)q, REUSE_TEST,
                                        NULL);
            assert_true(differ);
        }
}

/* ---- the analysis --------------------------------------------------------------- */

static uint64_t rng = 0x2545f4914f6cdd1dULL;

/* Uniform in [-1, 1). */
static double noise(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / (double)(1ULL << 52) - 1.0;
}

/* The ratio of a pattern with n conflicts when one conflict costs cost
 * cycles and the conflict-free FFMA runs at base of the reference. */
static double rate(int n, double cost, double base, double jitter)
{
    return base * REUSE_PERIOD / (REUSE_PERIOD + n * cost) * (1 + jitter * noise());
}

static void rates_of(const struct reuse_design *d, double cost, double base, double jitter,
                     double ratio[REUSE_QUESTIONS][REUSE_VARIANTS],
                     double range[REUSE_QUESTIONS][REUSE_VARIANTS])
{
    for (int q = 0; q < REUSE_QUESTIONS; q++)
        for (int v = 0; v < REUSE_VARIANTS; v++) {
            int n = reuse_predict(d, (enum reuse_question)q, (enum reuse_variant)v, NULL);
            ratio[q][v] = rate(n, cost, base, jitter);
            range[q][v] = 2 * jitter * ratio[q][v];
        }
}

static json_t *question(json_t *res, enum reuse_question q)
{
    json_t *j = json_array_get(json_object_get(res, "questions"), (size_t)q);
    assert_string_equal(json_string_value(json_object_get(j, "question")),
                        reuse_question_name(q));
    return j;
}

static const char *outcome(json_t *res, enum reuse_question q)
{
    return json_string_value(json_object_get(question(res, q), "outcome"));
}

static void test_designs_recovered(void **state)
{
    (void)state;
    static const struct {
        double cost, base, jitter;
    } worlds[] = {{1.0, 1.0, 0}, {1.0, 0.999, 0.002}, {0.8, 0.995, 0.003}, {1.3, 1.0, 0.004}};
    double ratio[REUSE_QUESTIONS][REUSE_VARIANTS], range[REUSE_QUESTIONS][REUSE_VARIANTS];
    for (size_t w = 0; w < sizeof worlds / sizeof worlds[0]; w++)
        for (int k = 0; k < REUSE_DESIGNS; k++) {
            const struct reuse_design *d = &reuse_designs[k];
            rates_of(d, worlds[w].cost, worlds[w].base, worlds[w].jitter, ratio, range);
            json_t *res = reuse_analyse(ratio, range);
            json_t *fit = json_object_get(res, "consistent_designs");
            assert_int_equal(json_array_size(fit), 1);
            assert_string_equal(json_string_value(json_array_get(fit, 0)), d->name);
            assert_non_null(strstr(json_string_value(json_object_get(res, "answer")), d->name));
            /* each question as the design serves its probe read, once its
             * premise held */
            int next_hit = 0, distance_hit = 0, determined = 0;
            for (int q = 0; q < REUSE_QUESTIONS; q++) {
                int served;
                reuse_predict(d, (enum reuse_question)q, REUSE_TEST, &served);
                int premise = q == REUSE_Q_NEXT ? 1 : q <= REUSE_Q_OTHER_SLOT ? next_hit
                                                                              : distance_hit;
                const char *want = !premise ? "not determined" : served ? "hit" : "miss";
                assert_string_equal(outcome(res, (enum reuse_question)q), want);
                determined += premise;
                if (q == REUSE_Q_NEXT)
                    next_hit = served;
                if (q == REUSE_Q_DISTANCE)
                    distance_hit = served && next_hit;
                double m = json_real_value(json_object_get(question(res, (enum reuse_question)q),
                                                           "conflicts"));
                assert_true(fabs(m - reuse_predict(d, (enum reuse_question)q, REUSE_TEST,
                                                   NULL)) < 0.25);
            }
            assert_int_equal(json_integer_value(json_object_get(res, "determined")), determined);
            assert_int_equal(json_array_size(json_object_get(res, "rules")), (size_t)determined);
            json_decref(res);
        }
}

static void test_not_determined(void **state)
{
    (void)state;
    double ratio[REUSE_QUESTIONS][REUSE_VARIANTS], range[REUSE_QUESTIONS][REUSE_VARIANTS];
    /* 3.5 conflicts in every pattern: between every pair of predictions */
    for (int q = 0; q < REUSE_QUESTIONS; q++) {
        int ncl = q == REUSE_Q_SECOND_OTHER_BANK ? 7 : 8;
        ratio[q][REUSE_TEST] = 8.0 / 11.5;
        ratio[q][REUSE_FREE] = 1.0;
        ratio[q][REUSE_CLEARED] = 8.0 / (8 + ncl);
        for (int v = 0; v < REUSE_VARIANTS; v++)
            range[q][v] = 0.001;
    }
    json_t *res = reuse_analyse(ratio, range);
    assert_int_equal(json_array_size(json_object_get(res, "consistent_designs")), 0);
    assert_non_null(strstr(json_string_value(json_object_get(res, "answer")), "not determined"));
    assert_int_equal(json_integer_value(json_object_get(res, "determined")), 0);
    assert_non_null(strstr(json_string_value(json_object_get(question(res, REUSE_Q_NEXT), "why")),
                           "no candidate"));
    json_decref(res);
    /* one design's rates but one question off by half a conflict: nothing
     * fits, though the other questions keep their outcomes */
    rates_of(design("per_slot_per_bank"), 1.0, 1.0, 0, ratio, range);
    ratio[REUSE_Q_WRITE][REUSE_TEST] = 8.0 / 14.5;
    res = reuse_analyse(ratio, range);
    assert_int_equal(json_array_size(json_object_get(res, "consistent_designs")), 0);
    assert_string_equal(outcome(res, REUSE_Q_NEXT), "hit");
    assert_string_equal(outcome(res, REUSE_Q_WRITE), "not determined");
    json_decref(res);
    /* controls without contrast (the first round's H100 figures) */
    for (int q = 0; q < REUSE_QUESTIONS; q++) {
        ratio[q][REUSE_TEST] = 1.0000005;
        ratio[q][REUSE_FREE] = 1.0000048;
        ratio[q][REUSE_CLEARED] = 0.9999976;
    }
    res = reuse_analyse(ratio, NULL);
    assert_int_equal(json_array_size(json_object_get(res, "consistent_designs")), 0);
    assert_non_null(strstr(json_string_value(json_object_get(question(res, REUSE_Q_NEXT), "why")),
                           "too close"));
    assert_true(json_is_null(json_object_get(question(res, REUSE_Q_NEXT), "conflicts")));
    json_decref(res);
    /* a spread of several conflicts: every design fits, nothing is told */
    rates_of(design("per_slot_per_bank"), 1.0, 1.0, 0, ratio, range);
    for (int q = 0; q < REUSE_QUESTIONS; q++)
        range[q][REUSE_FREE] = 0.5;
    res = reuse_analyse(ratio, range);
    assert_int_equal(json_array_size(json_object_get(res, "consistent_designs")), REUSE_DESIGNS);
    assert_non_null(strstr(json_string_value(json_object_get(res, "answer")), "not determined"));
    assert_string_equal(outcome(res, REUSE_Q_WRITE), "not determined");
    assert_true(json_real_value(json_object_get(res, "tolerance_conflicts")) > 8);
    json_decref(res);
}

static void test_conflicts(void **state)
{
    (void)state;
    double per;
    /* free 8 cycles, cleared 16 (8 conflicts), test 10 -> 2 conflicts */
    assert_true(fabs(reuse_conflicts(0.8, 1.0, 0.5, 8, &per) - 2) < 1e-9);
    assert_true(fabs(per - 1) < 1e-9);
    /* the test a little faster than free: a little below 0, still a number */
    assert_true(reuse_conflicts(1.001, 1.0, 0.5, 8, &per) < 0);
    /* a conflict of 0.5 cycles: cleared 12 cycles, test 9 -> 2 */
    assert_true(fabs(reuse_conflicts(8.0 / 9, 1.0, 8.0 / 12, 8, &per) - 2) < 1e-9);
    assert_true(isnan(reuse_conflicts(1.0, 1.0, 0.99, 8, &per)));     /* no contrast */
    assert_true(isnan(reuse_conflicts(1.0, 0.0, 0.5, 8, &per)));
    assert_true(isnan(reuse_conflicts(1.0, 1.0, 0.5, 0, &per)));
    assert_true(isnan(reuse_conflicts(NAN, 1.0, 0.5, 8, &per)));
    assert_null(reuse_rule(REUSE_Q_NEXT, REUSE_UNDETERMINED));
    assert_non_null(reuse_rule(REUSE_Q_WRITE, REUSE_MISS));
}

static void test_pick(void **state)
{
    (void)state;
    int map[256];
    for (int r = 0; r < 256; r++)
        map[r] = r % 2;
    unsigned dest[] = {3, 4, 6};
    struct reuse_regs r;
    assert_int_equal(reuse_pick_regs(map, 252, dest, 3, &r), 0);
    unsigned all[] = {r.a, r.a2, r.c, r.f, r.o, r.d};
    for (int i = 0; i < 6; i++)
        for (int k = i + 1; k < 6; k++)
            assert_int_not_equal(all[i], all[k]);
    assert_int_equal(map[r.a], map[r.a2]);
    assert_int_equal(map[r.a], map[r.c]);
    assert_int_equal(map[r.a], map[r.f]);
    assert_int_not_equal(map[r.a], map[r.o]);
    /* a bank of a with only two other registers up to the top: refused */
    assert_int_equal(reuse_pick_regs(map, 6, dest, 3, &r), -1);
    assert_int_equal(r.a, 3);
    assert_true(r.d == 4 || r.d == 6);
    for (int k = 0; k < 256; k++)
        map[k] = 0;
    assert_int_equal(reuse_pick_regs(map, 252, dest, 3, &r), -1);
    assert_int_equal(reuse_pick_regs(map, 252, dest, 0, &r), -1);
}

static void test_seq_edits(void **state)
{
    (void)state;
    size_t size;
    char *cub = read_file("tests/fixtures/cubins/banks/banks.cubin", &size), err[256];
    assert_non_null(cub);
    struct banks_layout L;
    assert_int_equal(banks_layout(cub, size, &L, err, sizeof err), 0);
    int map[256];
    for (int r = 0; r < 256; r++)
        map[r] = r % 2;
    struct reuse_regs r;
    assert_int_equal(reuse_pick_regs(map, 252, L.dest, L.ndest, &r), 0);
    struct banks_step seq[REUSE_PERIOD];
    assert_int_equal(reuse_pattern(&r, REUSE_Q_WRITE, REUSE_TEST, seq), 0);
    struct patch_edit *ed = malloc(sizeof *ed * BANKS_EDITS_PER_FFMA * BANKS_TIMED);
    char *copy = malloc(size);
    assert_non_null(ed);
    assert_non_null(copy);
    size_t n = banks_edits_seq(&L, seq, REUSE_PERIOD, ed);
    assert_int_equal(n, BANKS_EDITS_PER_FFMA * L.nffma);
    memcpy(copy, cub, size);
    assert_int_equal(patch_apply(copy, size, BANKS_KERNEL, ed, n, err, sizeof err), 0);
    assert_int_equal(banks_verify_seq(cub, copy, size, &L, seq, REUSE_PERIOD, err, sizeof err),
                     0);
    /* the copy read back independently: FFMA 9 is step 1, writing a */
    size_t off, tsize;
    assert_int_equal(patch_find_text(copy, size, BANKS_KERNEL, &off, &tsize, err, sizeof err), 0);
    struct sass_insn in = sass_decode((const uint8_t *)copy + off, L.ffma[9] * SASS_INSN_BYTES);
    assert_int_equal(sass_field(&in, SASS_RD), r.a);
    assert_int_equal(sass_field(&in, SASS_RB), r.c);
    assert_int_equal(sass_field(&in, SASS_RC), r.f);
    /* every question's every variant edits and verifies on this cubin */
    for (int q = 0; q < REUSE_QUESTIONS; q++)
        for (int v = 0; v < REUSE_VARIANTS; v++) {
            struct banks_step all[REUSE_PERIOD];
            assert_int_equal(reuse_pattern(&r, (enum reuse_question)q, (enum reuse_variant)v,
                                           all), 0);
            size_t k = banks_edits_seq(&L, all, REUSE_PERIOD, ed);
            assert_int_equal(k, BANKS_EDITS_PER_FFMA * L.nffma);
            memcpy(copy, cub, size);
            assert_int_equal(patch_apply(copy, size, BANKS_KERNEL, ed, k, err, sizeof err), 0);
            assert_int_equal(banks_verify_seq(cub, copy, size, &L, all, REUSE_PERIOD, err,
                                              sizeof err), 0);
        }
    /* back to the write question's test pattern */
    assert_int_equal(banks_edits_seq(&L, seq, REUSE_PERIOD, ed), n);
    memcpy(copy, cub, size);
    assert_int_equal(patch_apply(copy, size, BANKS_KERNEL, ed, n, err, sizeof err), 0);
    /* verify refuses another sequence; edits refuse an unsafe destination */
    struct banks_step other[REUSE_PERIOD];
    assert_int_equal(reuse_pattern(&r, REUSE_Q_WRITE, REUSE_CLEARED, other), 0);
    assert_int_equal(banks_verify_seq(cub, copy, size, &L, other, REUSE_PERIOD, err, sizeof err),
                     -1);
    other[3].rd = r.c;                    /* not a timed FFMA's destination */
    assert_int_equal(banks_edits_seq(&L, other, REUSE_PERIOD, ed), 0);
    assert_int_equal(banks_edits_seq(&L, seq, 3, ed), 0);    /* 3 does not divide 256 */
    free(copy);
    free(ed);
    free(cub);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_patterns),         cmocka_unit_test(test_simulator),
        cmocka_unit_test(test_designs_recovered), cmocka_unit_test(test_not_determined),
        cmocka_unit_test(test_conflicts),         cmocka_unit_test(test_pick),
        cmocka_unit_test(test_seq_edits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
