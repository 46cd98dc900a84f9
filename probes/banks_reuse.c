/*
 * The reuse-cache patterns and their analysis (see banks_reuse.h for the
 * method). Pure: no GPU; banks_run.c measures the patterns.
 *
 * DESIGN
 * A pattern is REUSE_PERIOD steps, every one a filler (RZ, x, RZ -> d: one
 * register read, in slot b, never a conflict, nothing read in slot a) but
 * the few the question places: step 0 primes the cache (a in slot a, flag
 * set, with x beside it), the question's middle steps, and the probe (a
 * with c). The questions are one table (what they ask, where the probe
 * sits, what each outcome means, which earlier question they rest on), so
 * the patterns, the JSON and the rules cannot disagree.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "probes/banks_reuse.h"

#define RZ SASS_RZ
#define FLAG_A 1u                    /* the reuse bit of slot a (Ra) */

struct question {
    const char *name, *asks;
    size_t probe;                    /* the step that reads a with c */
    enum reuse_question premise;     /* the question this one rests on (itself: none) */
    const char *if_hit, *if_miss;
};

static const struct question questions[REUSE_QUESTIONS] = {
    [REUSE_Q_NEXT] = {"next",
                      "does a reuse-flagged operand serve the next FFMA's read of it in the "
                      "same slot?",
                      1, REUSE_Q_NEXT,
                      "a reuse-flagged operand serves the next instruction's read of the same "
                      "register in the same slot without a bank read",
                      "the reuse flag did not hide the next instruction's conflict: no cache "
                      "effect seen"},
    [REUSE_Q_DISTANCE] = {"distance",
                          "is it still cached 7 FFMAs later, after 6 that read nothing in "
                          "its slot?",
                          7, REUSE_Q_NEXT,
                          "a cached operand survives 6 instructions that read nothing in its "
                          "slot",
                          "a cached operand is lost within 6 instructions even when they read "
                          "nothing in its slot"},
    [REUSE_Q_OTHER_SLOT] = {"other_slot",
                            "does a value cached from slot a serve a read of it in slot b?", 1,
                            REUSE_Q_NEXT,
                            "the cache is not per operand slot: a value cached from slot a "
                            "serves a read of the same register in slot b",
                            "the cache is per operand slot: a value cached from slot a does "
                            "not serve a read of it in slot b"},
    [REUSE_Q_SECOND_SAME_BANK] = {"second_same_bank",
                                  "does a second reuse-flagged register of the same bank in "
                                  "slot a evict the first?",
                                  2, REUSE_Q_DISTANCE,
                                  "slot a holds two or more entries of one bank: a second "
                                  "reuse-flagged register of the same bank does not evict the "
                                  "first",
                                  "slot a holds one entry per bank: a second reuse-flagged "
                                  "register of the same bank evicts the first"},
    [REUSE_Q_SECOND_OTHER_BANK] = {"second_other_bank",
                                   "does a reuse-flagged register of the other bank in slot a "
                                   "evict the first?",
                                   2, REUSE_Q_DISTANCE,
                                   "entries are per bank within a slot: a reuse-flagged "
                                   "register of another bank does not evict",
                                   "slot a holds one entry whatever the bank: a reuse-flagged "
                                   "register of another bank evicts the first"},
    [REUSE_Q_UNFLAGGED_OTHER] = {"unflagged_other",
                                 "does a read of another register of the bank in slot a, "
                                 "without the flag, evict it?",
                                 2, REUSE_Q_DISTANCE,
                                 "a read in the slot without the flag (another register of "
                                 "the bank) leaves the cached one in place",
                                 "a read in the slot without the flag (another register of "
                                 "the bank) evicts the cached one"},
    [REUSE_Q_UNFLAGGED_SAME] = {"unflagged_same",
                                "does reading the cached register again without the flag "
                                "keep it cached?",
                                2, REUSE_Q_DISTANCE,
                                "reading the cached register again without the flag keeps it "
                                "cached",
                                "reading the cached register without the flag releases it: "
                                "only a flagged read keeps a value for the next"},
    [REUSE_Q_WRITE] = {"write",
                       "does a write to the cached register (6 FFMAs before the read) "
                       "invalidate it?",
                       7, REUSE_Q_DISTANCE,
                       "a write to the cached register does not bring the conflict back (the "
                       "entry is kept or updated)",
                       "a write to the cached register invalidates its entry"},
};

const char *reuse_question_name(enum reuse_question q)
{
    return (unsigned)q < REUSE_QUESTIONS ? questions[q].name : NULL;
}

const char *reuse_question_text(enum reuse_question q)
{
    return (unsigned)q < REUSE_QUESTIONS ? questions[q].asks : NULL;
}

static struct banks_step step(unsigned ra, unsigned rb, unsigned rc, unsigned reuse, unsigned rd)
{
    return (struct banks_step){{{ra, rb, rc}, reuse}, rd};
}

int reuse_pattern(const struct reuse_regs *r, enum reuse_question q, enum reuse_variant v,
                  struct banks_step seq[REUSE_PERIOD])
{
    if ((unsigned)q >= REUSE_QUESTIONS || (unsigned)v >= REUSE_VARIANTS)
        return -1;
    for (size_t i = 0; i < REUSE_PERIOD; i++)
        seq[i] = step(RZ, r->x, RZ, 0, r->d);
    seq[0] = step(r->a, r->x, RZ, FLAG_A, r->d);
    switch (q) {
    case REUSE_Q_SECOND_SAME_BANK:
        seq[1] = step(r->a2, r->x, RZ, FLAG_A, r->d);
        break;
    case REUSE_Q_SECOND_OTHER_BANK:
        seq[1] = step(r->o, RZ, RZ, FLAG_A, r->d);
        break;
    case REUSE_Q_UNFLAGGED_OTHER:
        seq[1] = step(r->a2, r->x, RZ, 0, r->d);
        break;
    case REUSE_Q_UNFLAGGED_SAME:
        seq[1] = step(r->a, r->x, RZ, 0, r->d);
        break;
    case REUSE_Q_WRITE:
        seq[1] = step(RZ, r->x, RZ, 0, r->a);
        break;
    default:
        break;
    }
    /* the probe: a with c (free: with x, another bank) */
    unsigned other = v == REUSE_FREE ? r->x : r->c;
    size_t p = questions[q].probe;
    seq[p] = q == REUSE_Q_OTHER_SLOT ? step(other, r->a, RZ, 0, r->d)
                                     : step(r->a, other, RZ, 0, r->d);
    if (v == REUSE_CLEARED)
        for (size_t i = 0; i < REUSE_PERIOD; i++)
            seq[i].t.reuse = 0;
    return 0;
}

json_t *reuse_pattern_json(const struct banks_step seq[REUSE_PERIOD])
{
    json_t *a = json_array();
    for (size_t i = 0; i < REUSE_PERIOD; i++) {
        char s[64], src[3][8];
        for (int k = 0; k < 3; k++) {
            if (seq[i].t.src[k] == RZ)
                snprintf(src[k], sizeof src[k], "RZ");
            else
                snprintf(src[k], sizeof src[k], "R%u", seq[i].t.src[k]);
        }
        snprintf(s, sizeof s, "%s %s %s -> R%u reuse %u", src[0], src[1], src[2], seq[i].rd,
                 seq[i].t.reuse);
        json_array_append_new(a, json_string(s));
    }
    return a;
}

static int in_list(const unsigned *l, size_t n, unsigned r)
{
    for (size_t i = 0; i < n; i++)
        if (l[i] == r)
            return 1;
    return 0;
}

/* The first register up to top in bank b (or, with b < 0, in a mapped bank
 * other than not_b) that is neither a destination nor in used. */
static int find_reg(const int *bank, unsigned top, const unsigned *dest, size_t ndest, int b,
                    int not_b, const unsigned *used, size_t nused, unsigned *out)
{
    for (unsigned r = 0; r <= top; r++) {
        int ok = b >= 0 ? bank[r] == b : bank[r] >= 0 && bank[r] != not_b;
        if (ok && !in_list(dest, ndest, r) && !in_list(used, nused, r)) {
            *out = r;
            return 0;
        }
    }
    return -1;
}

int reuse_pick_regs(const int *bank, unsigned top, const unsigned *dest, size_t ndest,
                    struct reuse_regs *r)
{
    for (size_t i = 0; i < ndest; i++) {
        unsigned a = dest[i], used[6] = {a};
        if (a > top || bank[a] < 0)
            continue;
        int b = bank[a];
        if (find_reg(bank, top, dest, ndest, b, -1, used, 1, &used[1]) < 0 ||
            find_reg(bank, top, dest, ndest, b, -1, used, 2, &used[2]) < 0 ||
            find_reg(bank, top, dest, ndest, -1, b, used, 3, &used[3]) < 0 ||
            find_reg(bank, top, dest, ndest, -1, b, used, 4, &used[4]) < 0)
            continue;
        for (size_t k = 0; k < ndest; k++)
            if (dest[k] != a) {
                *r = (struct reuse_regs){a, used[1], used[2], used[3], used[4], dest[k]};
                return 0;
            }
    }
    return -1;
}

enum reuse_outcome reuse_classify(double test, double free_, double cleared, int premise_hit,
                                  double *position)
{
    *position = 0;
    if (!(free_ > 0) || !isfinite(test) || !isfinite(cleared) ||
        (free_ - cleared) / free_ < REUSE_MIN_CONTRAST)
        return REUSE_UNDETERMINED;
    *position = (test - cleared) / (free_ - cleared);
    if (!premise_hit)
        return REUSE_UNDETERMINED;
    return *position >= REUSE_HIT_AT    ? REUSE_HIT
           : *position <= REUSE_MISS_AT ? REUSE_MISS
                                        : REUSE_UNDETERMINED;
}

const char *reuse_rule(enum reuse_question q, enum reuse_outcome o)
{
    if ((unsigned)q >= REUSE_QUESTIONS || o == REUSE_UNDETERMINED)
        return NULL;
    return o == REUSE_HIT ? questions[q].if_hit : questions[q].if_miss;
}

/* Why a question is not determined, for the JSON. */
static const char *undetermined_why(double free_, double cleared, int premise_hit,
                                    enum reuse_question premise)
{
    static char why[160];
    if (!(free_ > 0) || (free_ - cleared) / free_ < REUSE_MIN_CONTRAST)
        return "the controls (free, cleared) are too close to tell a hit from a miss";
    if (!premise_hit) {
        snprintf(why, sizeof why, "rests on question \"%s\", which was not a hit",
                 questions[premise].name);
        return why;
    }
    return "the test lies between the hit and the miss control";
}

json_t *reuse_analyse(const double ratio[REUSE_QUESTIONS][REUSE_VARIANTS])
{
    enum reuse_outcome out[REUSE_QUESTIONS];
    json_t *list = json_array(), *rules = json_array();
    int determined = 0;
    static const char *const names[] = {"not determined", "hit", "miss"};
    /* the table lists every premise before the questions resting on it */
    for (int q = 0; q < REUSE_QUESTIONS; q++) {
        const struct question *Q = &questions[q];
        int premise = Q->premise == (enum reuse_question)q || out[Q->premise] == REUSE_HIT;
        double pos;
        const double *v = ratio[q];
        out[q] = reuse_classify(v[REUSE_TEST], v[REUSE_FREE], v[REUSE_CLEARED], premise, &pos);
        json_t *j = json_pack("{s:s, s:s, s:{s:f, s:f, s:f}, s:f, s:s}", "question", Q->name,
                              "asks", Q->asks, "ratios", "test", v[REUSE_TEST], "free",
                              v[REUSE_FREE], "cleared", v[REUSE_CLEARED], "position", pos,
                              "outcome", names[out[q]]);
        const char *rule = reuse_rule((enum reuse_question)q, out[q]);
        if (rule) {
            determined++;
            json_object_set_new(j, "rule", json_string(rule));
            json_array_append_new(rules, json_string(rule));
        } else {
            json_object_set_new(j, "why", json_string(undetermined_why(v[REUSE_FREE],
                                                                       v[REUSE_CLEARED],
                                                                       premise, Q->premise)));
        }
        json_array_append_new(list, j);
    }
    return json_pack("{s:o, s:o, s:i, s:f, s:f, s:f}", "questions", list, "rules", rules,
                     "determined", determined, "hit_at", REUSE_HIT_AT, "miss_at", REUSE_MISS_AT,
                     "min_contrast", REUSE_MIN_CONTRAST);
}
