/*
 * The reuse-cache patterns and analysis (probes/banks_reuse.h), no GPU:
 * - every pattern is what the method needs: in the test and cleared
 *   variants exactly one step (the probe) reads two registers of one bank,
 *   in the free variant none does; the cleared variant sets no flag;
 * - the analysis recovers the rules of synthetic caches: a small simulator
 *   here (its own code, not the probe's) times each pattern as one cycle
 *   per FFMA plus one per extra bank read the cache does not serve, for
 *   several cache designs, and reuse_analyse must answer each question as
 *   that design says and leave it "not determined" when the rates do not
 *   separate or the premise fails;
 * - the register picker: a, a2, c in one bank, x, o in another, a and d
 *   destinations, all distinct; it refuses a one-bank map;
 * - the edits and the verifier of a sequence on the committed sm_90
 *   cubin: FFMA i carries step i % 8, a tampered destination is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "tests/unit/support/tmpfile.h"
#include "probes/banks_reuse.h"

#define RZ SASS_RZ
static const struct reuse_regs regs = {10, 12, 14, 11, 13, 20};

static int bank(unsigned r)
{
    return (int)(r % 2);
}

static void test_patterns(void **state)
{
    (void)state;
    for (int q = 0; q < REUSE_QUESTIONS; q++) {
        assert_non_null(reuse_question_name((enum reuse_question)q));
        for (int v = 0; v < REUSE_VARIANTS; v++) {
            struct banks_step seq[REUSE_PERIOD];
            assert_int_equal(reuse_pattern(&regs, (enum reuse_question)q, (enum reuse_variant)v,
                                           seq), 0);
            int conflicts = 0, flags = 0;
            for (int i = 0; i < REUSE_PERIOD; i++) {
                int per[2] = {0, 0};
                for (int s = 0; s < 3; s++)
                    if (seq[i].t.src[s] != RZ)
                        per[bank(seq[i].t.src[s])]++;
                conflicts += per[0] > 1 || per[1] > 1;
                flags += seq[i].t.reuse != 0;
                assert_true(seq[i].rd == regs.d || (q == REUSE_Q_WRITE && i == 1 &&
                                                    seq[i].rd == regs.a));
            }
            assert_int_equal(conflicts, v == REUSE_FREE ? 0 : 1);
            if (v == REUSE_CLEARED)
                assert_int_equal(flags, 0);
            else
                assert_int_equal(seq[0].t.reuse, 1);
        }
    }
    struct banks_step seq[REUSE_PERIOD];
    assert_int_equal(reuse_pattern(&regs, REUSE_QUESTIONS, REUSE_TEST, seq), -1);
    assert_int_equal(reuse_pattern(&regs, REUSE_Q_NEXT, REUSE_VARIANTS, seq), -1);
    assert_null(reuse_question_name(REUSE_QUESTIONS));
    assert_int_equal(reuse_pattern(&regs, REUSE_Q_NEXT, REUSE_TEST, seq), 0);
    json_t *j = reuse_pattern_json(seq);
    assert_string_equal(json_string_value(json_array_get(j, 0)), "R10 R11 RZ -> R20 reuse 1");
    json_decref(j);
}

/* ---- a synthetic cache ---------------------------------------------------- */

struct design {
    int shared;                  /* one cache for all slots (else per slot) */
    int per_bank;                /* a slot holds one entry per bank (else one in all) */
    int entries;                 /* entries per slot (per bank with per_bank) */
    int ttl;                     /* steps an entry lives unrefreshed */
    int unflagged_evicts;        /* an unflagged read of another register in the slot evicts */
    int unflagged_releases;      /* an unflagged read of the cached register releases it */
    int write_invalidates;
    int no_effect;               /* the flags do nothing */
};

struct entry {
    unsigned reg;
    int slot, age;
};

static double simulate(const struct design *d, const struct banks_step *seq)
{
    struct entry c[16];
    int n = 0, cycles = 0;
    for (int round = 0; round < 4; round++) {     /* warm up, then count the last */
        int count = round == 3;
        for (int i = 0; i < REUSE_PERIOD; i++) {
            const struct banks_step *st = &seq[i];
            int reads[2] = {0, 0};
            for (int s = 0; s < 3; s++) {
                unsigned r = st->t.src[s];
                if (r == RZ)
                    continue;
                int hit = 0;
                for (int k = 0; k < n; k++)
                    hit |= c[k].reg == r && (d->shared || c[k].slot == s);
                if (!hit)
                    reads[bank(r)]++;
            }
            int cost = reads[0] > reads[1] ? reads[0] : reads[1];
            cycles += count * (cost > 1 ? cost : 1);
            /* age, then update */
            for (int k = 0; k < n; k++)
                if (++c[k].age > d->ttl)
                    c[k--] = c[--n];
            for (int s = 0; s < 3; s++) {
                unsigned r = st->t.src[s];
                if (r == RZ || d->no_effect)
                    continue;
                int flagged = (st->t.reuse >> s) & 1;
                for (int k = 0; k < n; k++) {
                    if (!d->shared && c[k].slot != s)
                        continue;
                    int same = c[k].reg == r;
                    int evict = flagged ? same || (d->per_bank ? bank(c[k].reg) == bank(r) : 1)
                                        : same ? d->unflagged_releases
                                               : d->unflagged_evicts && bank(c[k].reg) == bank(r);
                    if (flagged && !same && d->entries > 1)
                        evict = 0;
                    if (evict)
                        c[k--] = c[--n];
                }
                if (flagged && n < 16)
                    c[n++] = (struct entry){r, s, 0};
            }
            if (d->write_invalidates)
                for (int k = 0; k < n; k++)
                    if (c[k].reg == st->rd)
                        c[k--] = c[--n];
        }
    }
    return (double)REUSE_PERIOD / cycles;
}

static json_t *analyse(const struct design *d)
{
    double ratio[REUSE_QUESTIONS][REUSE_VARIANTS];
    for (int q = 0; q < REUSE_QUESTIONS; q++)
        for (int v = 0; v < REUSE_VARIANTS; v++) {
            struct banks_step seq[REUSE_PERIOD];
            assert_int_equal(reuse_pattern(&regs, (enum reuse_question)q, (enum reuse_variant)v,
                                           seq), 0);
            ratio[q][v] = simulate(d, seq);
        }
    return reuse_analyse(ratio);
}

static const char *outcome(json_t *res, enum reuse_question q)
{
    json_t *j = json_array_get(json_object_get(res, "questions"), (size_t)q);
    assert_string_equal(json_string_value(json_object_get(j, "question")),
                        reuse_question_name(q));
    return json_string_value(json_object_get(j, "outcome"));
}

static void expect(const struct design *d, const char *const want[REUSE_QUESTIONS])
{
    json_t *res = analyse(d);
    int determined = 0;
    for (int q = 0; q < REUSE_QUESTIONS; q++) {
        assert_string_equal(outcome(res, (enum reuse_question)q), want[q]);
        determined += strcmp(want[q], "not determined") != 0;
    }
    assert_int_equal(json_integer_value(json_object_get(res, "determined")), determined);
    assert_int_equal(json_array_size(json_object_get(res, "rules")), (size_t)determined);
    json_decref(res);
}

static void test_designs(void **state)
{
    (void)state;
    /* questions: next, distance, other_slot, second_same_bank,
     * second_other_bank, unflagged_other, unflagged_same, write */
    const struct design huerta_like = {0, 1, 1, 100, 0, 0, 0, 0};
    const char *const w1[] = {"hit", "hit", "miss", "miss", "hit", "hit", "hit", "hit"};
    expect(&huerta_like, w1);
    const struct design small = {0, 0, 1, 100, 1, 1, 1, 0};
    const char *const w2[] = {"hit", "hit", "miss", "miss", "miss", "miss", "miss", "miss"};
    expect(&small, w2);
    const struct design shared = {1, 1, 2, 100, 0, 0, 0, 0};
    const char *const w3[] = {"hit", "hit", "hit", "hit", "hit", "hit", "hit", "hit"};
    expect(&shared, w3);
    /* entries live one step: the distance questions cannot be answered */
    const struct design short_lived = {0, 1, 1, 1, 0, 0, 0, 0};
    const char *const w4[] = {"hit",           "miss",          "miss",
                              "not determined", "not determined", "not determined",
                              "not determined", "not determined"};
    expect(&short_lived, w4);
    /* no effect at all: nothing rests on a premise that failed */
    const struct design none = {0, 1, 1, 100, 0, 0, 0, 1};
    const char *const w5[] = {"miss",           "not determined", "not determined",
                              "not determined", "not determined", "not determined",
                              "not determined", "not determined"};
    expect(&none, w5);
}

static void test_classify(void **state)
{
    (void)state;
    double pos;
    assert_int_equal(reuse_classify(1.0, 1.0, 8.0 / 9, 1, &pos), REUSE_HIT);
    assert_true(pos > 0.99 && pos < 1.01);
    assert_int_equal(reuse_classify(0.89, 1.0, 8.0 / 9, 1, &pos), REUSE_MISS);
    assert_int_equal(reuse_classify(0.944, 1.0, 8.0 / 9, 1, &pos), REUSE_UNDETERMINED);
    assert_int_equal(reuse_classify(1.0, 1.0, 0.99, 1, &pos), REUSE_UNDETERMINED);  /* no contrast */
    assert_int_equal(reuse_classify(1.0, 0.0, 0.0, 1, &pos), REUSE_UNDETERMINED);
    assert_int_equal(reuse_classify(1.0, 1.0, 8.0 / 9, 0, &pos), REUSE_UNDETERMINED);
    assert_null(reuse_rule(REUSE_Q_NEXT, REUSE_UNDETERMINED));
    assert_non_null(reuse_rule(REUSE_Q_WRITE, REUSE_MISS));
    /* a "why" comes with every undetermined answer */
    double r[REUSE_QUESTIONS][REUSE_VARIANTS];
    for (int q = 0; q < REUSE_QUESTIONS; q++)
        r[q][0] = r[q][1] = r[q][2] = 1.0;
    json_t *res = reuse_analyse(r);
    json_t *q0 = json_array_get(json_object_get(res, "questions"), 0);
    assert_non_null(strstr(json_string_value(json_object_get(q0, "why")), "too close"));
    json_decref(res);
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
    unsigned all[] = {r.a, r.a2, r.c, r.x, r.o, r.d};
    for (int i = 0; i < 6; i++)
        for (int k = i + 1; k < 6; k++)
            assert_int_not_equal(all[i], all[k]);
    assert_int_equal(map[r.a], map[r.a2]);
    assert_int_equal(map[r.a], map[r.c]);
    assert_int_not_equal(map[r.a], map[r.x]);
    assert_int_equal(map[r.x], map[r.o]);
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
    assert_int_equal(sass_field(&in, SASS_RB), r.x);
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
        cmocka_unit_test(test_patterns), cmocka_unit_test(test_designs),
        cmocka_unit_test(test_classify), cmocka_unit_test(test_pick),
        cmocka_unit_test(test_seq_edits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
