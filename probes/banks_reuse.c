/*
 * The reuse-cache patterns, the cache simulator and the analysis (see
 * banks_reuse.h for the method). Pure: no GPU; banks_run.c measures the
 * patterns.
 *
 * DESIGN
 * A pattern is REUSE_PERIOD steps, every one a filler (RZ, c, f -> d: two
 * never-flagged registers of bank A, a conflict whatever the cache does,
 * nothing read in slot a) but the few the question places: step 0 primes
 * the cache (a in slot a, flag set, with c), the question's middle steps,
 * and the probe (a with c). Every step reads c, so no step leaves bank A
 * idle (the spare cycle that absorbed the first round's lone conflicts).
 * The questions are one table (what they ask, which read is the probe,
 * what each outcome means, which earlier question they rest on), so the
 * patterns, the JSON and the rules cannot disagree. The designs are a
 * second table, and the simulator is the only place that knows what a
 * design does with a pattern: the analysis compares the measured
 * conflicts with the simulator's, never with hand-counted numbers.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "probes/banks_reuse.h"

#define RZ SASS_RZ
#define FLAG_A 1u                    /* the reuse bit of slot a (Ra) */

struct question {
    const char *name, *asks;
    size_t probe;                    /* the step whose read of a is the question */
    int probe_slot;                  /* the slot it reads a in */
    enum reuse_question premise;     /* the question this one rests on (itself: none) */
    const char *if_hit, *if_miss;
};

static const struct question questions[REUSE_QUESTIONS] = {
    [REUSE_Q_NEXT] = {"next",
                      "does a reuse-flagged operand serve the next FFMA's read of it in the "
                      "same slot?",
                      1, 0, REUSE_Q_NEXT,
                      "a reuse-flagged operand serves the next instruction's read of the same "
                      "register in the same slot without a bank read",
                      "the reuse flag did not hide the next instruction's conflict: no cache "
                      "effect seen"},
    [REUSE_Q_DISTANCE] = {"distance",
                          "is it still cached 7 FFMAs later, after 6 that read nothing in "
                          "its slot?",
                          7, 0, REUSE_Q_NEXT,
                          "a cached operand survives 6 instructions that read nothing in its "
                          "slot",
                          "a cached operand is lost within 6 instructions even when they read "
                          "nothing in its slot"},
    [REUSE_Q_OTHER_SLOT] = {"other_slot",
                            "does a value cached from slot a serve a read of it in slot b?", 1,
                            1, REUSE_Q_NEXT,
                            "the cache is not per operand slot: a value cached from slot a "
                            "serves a read of the same register in slot b",
                            "the cache is per operand slot: a value cached from slot a does "
                            "not serve a read of it in slot b"},
    [REUSE_Q_SECOND_SAME_BANK] = {"second_same_bank",
                                  "does a second reuse-flagged register of the same bank in "
                                  "slot a evict the first?",
                                  2, 0, REUSE_Q_DISTANCE,
                                  "slot a holds two or more entries of one bank: a second "
                                  "reuse-flagged register of the same bank does not evict the "
                                  "first",
                                  "slot a holds one entry per bank: a second reuse-flagged "
                                  "register of the same bank evicts the first"},
    [REUSE_Q_SECOND_OTHER_BANK] = {"second_other_bank",
                                   "does a reuse-flagged register of the other bank in slot a "
                                   "evict the first?",
                                   2, 0, REUSE_Q_DISTANCE,
                                   "entries are per bank within a slot: a reuse-flagged "
                                   "register of another bank does not evict",
                                   "slot a holds one entry whatever the bank: a reuse-flagged "
                                   "register of another bank evicts the first"},
    [REUSE_Q_UNFLAGGED_OTHER] = {"unflagged_other",
                                 "does a read of another register of the bank in slot a, "
                                 "without the flag, evict it?",
                                 2, 0, REUSE_Q_DISTANCE,
                                 "a read in the slot without the flag (another register of "
                                 "the bank) leaves the cached one in place",
                                 "a read in the slot without the flag (another register of "
                                 "the bank) evicts the cached one"},
    [REUSE_Q_UNFLAGGED_SAME] = {"unflagged_same",
                                "does reading the cached register again without the flag "
                                "keep it cached?",
                                2, 0, REUSE_Q_DISTANCE,
                                "reading the cached register again without the flag keeps it "
                                "cached",
                                "reading the cached register without the flag releases it: "
                                "only a flagged read keeps a value for the next"},
    [REUSE_Q_WRITE] = {"write",
                       "does a write to the cached register (6 FFMAs before the read) "
                       "invalidate it?",
                       7, 0, REUSE_Q_DISTANCE,
                       "a write to the cached register does not bring the conflict back (the "
                       "entry is kept or updated)",
                       "a write to the cached register invalidates its entry"},
};

/* The candidates. Each differs from the first in one property where it
 * can, so that every question has designs on both sides. */
const struct reuse_design reuse_designs[REUSE_DESIGNS] = {
    {"per_slot_per_bank",
     "one entry per bank in each operand slot; only flagged reads replace it; writes leave it",
     0, 1, 1, 1000, 0, 0, 0, 0},
    {"per_slot_per_bank_write_invalidates",
     "one entry per bank in each operand slot; only flagged reads replace it; a write drops it",
     0, 1, 1, 1000, 0, 0, 1, 0},
    {"per_slot_one_entry",
     "one entry in each operand slot whatever the bank; only flagged reads replace it; a write "
     "drops it",
     0, 0, 1, 1000, 0, 0, 1, 0},
    {"per_slot_one_entry_strict",
     "one entry in each operand slot; any read of the slot's bank evicts it, an unflagged "
     "re-read releases it, a write drops it",
     0, 0, 1, 1000, 1, 1, 1, 0},
    {"per_slot_two_per_bank",
     "two entries per bank in each operand slot (oldest evicted); writes leave them", 0, 1, 2,
     1000, 0, 0, 0, 0},
    {"shared_two_per_bank",
     "one cache for all operand slots, two entries per bank; writes leave them", 1, 1, 2, 1000,
     0, 0, 0, 0},
    {"next_only",
     "one entry per bank in each slot, serving only the next instruction", 0, 1, 1, 1, 0, 0, 0,
     0},
    {"no_cache", "the reuse flags hide no bank read", 0, 1, 1, 1000, 0, 0, 0, 1},
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
        seq[i] = step(RZ, r->c, r->f, 0, r->d);
    seq[0] = step(r->a, r->c, RZ, FLAG_A, r->d);
    switch (q) {
    case REUSE_Q_NEXT:
        for (size_t i = 1; i < REUSE_PERIOD; i++)
            seq[i] = seq[0];
        break;
    case REUSE_Q_SECOND_SAME_BANK:
        seq[1] = step(r->a2, r->c, RZ, FLAG_A, r->d);
        break;
    case REUSE_Q_SECOND_OTHER_BANK:
        seq[1] = step(r->o, r->c, RZ, FLAG_A, r->d);
        break;
    case REUSE_Q_UNFLAGGED_OTHER:
        seq[1] = step(r->a2, r->c, RZ, 0, r->d);
        break;
    case REUSE_Q_UNFLAGGED_SAME:
        seq[1] = step(r->a, r->c, RZ, 0, r->d);
        break;
    case REUSE_Q_WRITE:
        seq[1] = step(RZ, r->c, r->f, 0, r->a);
        break;
    default:
        break;
    }
    /* the probe: a with c, unflagged (next: every step is probe and primer) */
    size_t p = questions[q].probe;
    if (q == REUSE_Q_OTHER_SLOT)
        seq[p] = step(r->c, r->a, RZ, 0, r->d);
    else if (q != REUSE_Q_NEXT)
        seq[p] = step(r->a, r->c, RZ, 0, r->d);
    for (size_t i = 0; i < REUSE_PERIOD; i++) {
        if (v == REUSE_CLEARED)
            seq[i].t.reuse = 0;
        for (int s = 0; v == REUSE_FREE && s < 3; s++)
            if (seq[i].t.src[s] == r->c)
                seq[i].t.src[s] = RZ;
    }
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
        unsigned a = dest[i], used[5] = {a};
        if (a > top || bank[a] < 0)
            continue;
        int b = bank[a];
        if (find_reg(bank, top, dest, ndest, b, -1, used, 1, &used[1]) < 0 ||
            find_reg(bank, top, dest, ndest, b, -1, used, 2, &used[2]) < 0 ||
            find_reg(bank, top, dest, ndest, b, -1, used, 3, &used[3]) < 0 ||
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

/* ---- the simulator --------------------------------------------------------- */

#define SIM_ENTRIES 32
#define SIM_BANKS 8
#define SIM_ROUNDS 4                 /* periods run; the last is counted */

struct entry {
    unsigned reg;
    int slot, bank;                  /* slot: where it was set (ignored when shared) */
    long set;                        /* the step that set it */
};

struct cache {
    struct entry e[SIM_ENTRIES];
    int n;
};

static void drop(struct cache *c, int k)
{
    c->e[k] = c->e[--c->n];
}

static int in_scope(const struct reuse_design *d, const struct entry *e, int slot)
{
    return d->shared || e->slot == slot;
}

int reuse_role_bank(const struct reuse_regs *r, unsigned reg)
{
    return reg == r->o ? 1 : 0;
}

/* A flagged read of reg in slot s: it replaces its own entry, and the
 * oldest entry of its capacity group when the group is full. */
static void insert(const struct reuse_design *d, struct cache *c, unsigned reg, int s, int bank,
                   long now)
{
    for (int k = 0; k < c->n; k++)
        if (in_scope(d, &c->e[k], s) && c->e[k].reg == reg)
            drop(c, k--);
    for (;;) {
        int count = 0, oldest = -1;
        for (int k = 0; k < c->n; k++)
            if (in_scope(d, &c->e[k], s) && (!d->per_bank || c->e[k].bank == bank)) {
                count++;
                if (oldest < 0 || c->e[k].set < c->e[oldest].set)
                    oldest = k;
            }
        if (count < d->entries || oldest < 0)
            break;
        drop(c, oldest);
    }
    if (c->n < SIM_ENTRIES)
        c->e[c->n++] = (struct entry){reg, s, bank, now};
}

/* An unflagged read of reg in slot s. */
static void unflagged(const struct reuse_design *d, struct cache *c, unsigned reg, int s,
                      int bank)
{
    for (int k = 0; k < c->n; k++) {
        const struct entry *e = &c->e[k];
        if (!in_scope(d, e, s))
            continue;
        if (e->reg == reg ? d->unflagged_releases : d->unflagged_evicts && e->bank == bank)
            drop(c, k--);
    }
}

void reuse_simulate(const struct reuse_design *d, const struct banks_step seq[REUSE_PERIOD],
                    int (*bank_of)(const struct reuse_regs *r, unsigned reg),
                    const struct reuse_regs *regs, struct reuse_sim *out)
{
    struct cache c = {.n = 0};
    long now = 0;
    memset(out, 0, sizeof *out);
    for (int round = 0; round < SIM_ROUNDS; round++) {
        int last = round == SIM_ROUNDS - 1;
        for (size_t i = 0; i < REUSE_PERIOD; i++, now++) {
            const struct banks_step *st = &seq[i];
            int reads[SIM_BANKS] = {0}, cost = 1;
            unsigned served = 0;
            for (int k = 0; k < c.n; k++)       /* lifetimes first */
                if (now - c.e[k].set > d->life)
                    drop(&c, k--);
            for (int s = 0; s < 3; s++) {
                unsigned r = st->t.src[s];
                if (r == RZ)
                    continue;
                int hit = 0;
                for (int k = 0; k < c.n && !d->no_effect; k++)
                    hit |= c.e[k].reg == r && in_scope(d, &c.e[k], s);
                int b = bank_of(regs, r);
                if (hit)
                    served |= 1u << s;
                else if (b >= 0 && b < SIM_BANKS && ++reads[b] > cost)
                    cost = reads[b];
            }
            if (last) {
                out->conflicts += cost - 1;
                out->served[i] = served;
            }
            for (int s = 0; s < 3 && !d->no_effect; s++) {
                unsigned r = st->t.src[s];
                if (r == RZ)
                    continue;
                if ((st->t.reuse >> s) & 1)
                    insert(d, &c, r, s, bank_of(regs, r), now);
                else
                    unflagged(d, &c, r, s, bank_of(regs, r));
            }
            for (int k = 0; k < c.n && d->write_invalidates; k++)
                if (c.e[k].reg == st->rd)
                    drop(&c, k--);
        }
    }
}

/* The registers by role: the predictions depend on nothing else. */
static const struct reuse_regs roles = {1, 2, 3, 4, 5, 6};

int reuse_predict(const struct reuse_design *d, enum reuse_question q, enum reuse_variant v,
                  int *probe_served)
{
    struct banks_step seq[REUSE_PERIOD];
    struct reuse_sim sim;
    if (reuse_pattern(&roles, q, v, seq) < 0)
        return -1;
    reuse_simulate(d, seq, reuse_role_bank, &roles, &sim);
    if (probe_served)
        *probe_served = (sim.served[questions[q].probe] >> questions[q].probe_slot) & 1;
    return sim.conflicts;
}

/* ---- the analysis ----------------------------------------------------------- */

const char *reuse_rule(enum reuse_question q, enum reuse_outcome o)
{
    if ((unsigned)q >= REUSE_QUESTIONS || o == REUSE_UNDETERMINED)
        return NULL;
    return o == REUSE_HIT ? questions[q].if_hit : questions[q].if_miss;
}

double reuse_conflicts(double test, double free_, double cleared, int n_cleared,
                       double *per_conflict)
{
    *per_conflict = 0;
    if (!(test > 0) || !(free_ > 0) || !(cleared > 0) || !isfinite(test) || !isfinite(free_) ||
        !isfinite(cleared) || n_cleared <= 0)
        return NAN;
    double ct = REUSE_PERIOD / test, cf = REUSE_PERIOD / free_, cc = REUSE_PERIOD / cleared;
    if ((cc - cf) / cf < REUSE_MIN_CONTRAST)
        return NAN;
    *per_conflict = (cc - cf) / n_cleared;
    return (ct - cf) / *per_conflict;
}

/* The controls' spread in conflicts: a ratio's range over the repeats as
 * cycles per period (d(P/r) = P dr / r^2), over one conflict's cost. */
static double spread_conflicts(double ratio, double range, double per_conflict)
{
    if (!(ratio > 0) || !(per_conflict > 0) || !isfinite(range))
        return 0;
    return REUSE_PERIOD * fabs(range) / (ratio * ratio) / per_conflict;
}

struct measured {
    double conflicts[REUSE_QUESTIONS];   /* NAN: no contrast (may be a little below 0) */
    double tol;
};

static void measure_all(const double ratio[REUSE_QUESTIONS][REUSE_VARIANTS],
                        const double range[REUSE_QUESTIONS][REUSE_VARIANTS], struct measured *m)
{
    double spread = 0;
    for (int q = 0; q < REUSE_QUESTIONS; q++) {
        const double *v = ratio[q];
        double per;
        int ncl = reuse_predict(&reuse_designs[0], (enum reuse_question)q, REUSE_CLEARED, NULL);
        m->conflicts[q] = reuse_conflicts(v[REUSE_TEST], v[REUSE_FREE], v[REUSE_CLEARED], ncl,
                                          &per);
        if (isnan(m->conflicts[q]) || !range)
            continue;
        for (int k = 0; k < REUSE_VARIANTS; k++)
            spread = fmax(spread, spread_conflicts(v[k], range[q][k], per));
    }
    m->tol = fmax(REUSE_TOL_MIN, REUSE_TOL_SPREADS * spread);
}

/* Whether design d fits every question (one without contrast fits none). */
static int fits(const struct reuse_design *d, const struct measured *m)
{
    for (int q = 0; q < REUSE_QUESTIONS; q++) {
        int p = reuse_predict(d, (enum reuse_question)q, REUSE_TEST, NULL);
        if (isnan(m->conflicts[q]) || fabs(m->conflicts[q] - p) > m->tol)
            return 0;
    }
    return 1;
}

/* Question q's outcome from its own measurement: the designs whose
 * prediction it matches, split by whether they serve the probe read. */
static enum reuse_outcome classify(enum reuse_question q, const struct measured *m,
                                   const char **why)
{
    int hit = 0, miss = 0;
    if (isnan(m->conflicts[q])) {
        *why = "the controls (free, cleared) are too close to tell a hit from a miss";
        return REUSE_UNDETERMINED;
    }
    for (int k = 0; k < REUSE_DESIGNS; k++) {
        int served, p = reuse_predict(&reuse_designs[k], q, REUSE_TEST, &served);
        if (fabs(m->conflicts[q] - p) <= m->tol)
            *(served ? &hit : &miss) = 1;
    }
    if (hit != miss)
        return hit ? REUSE_HIT : REUSE_MISS;
    *why = hit ? "the conflicts match designs that serve the probe read and designs that do not"
               : "the conflicts match no candidate design's prediction";
    return REUSE_UNDETERMINED;
}

static json_t *question_json(enum reuse_question q, const double v[REUSE_VARIANTS],
                             double conflicts)
{
    const struct question *Q = &questions[q];
    double pos = v[REUSE_FREE] != v[REUSE_CLEARED]
                     ? (v[REUSE_TEST] - v[REUSE_CLEARED]) / (v[REUSE_FREE] - v[REUSE_CLEARED])
                     : 0;
    json_t *pred = json_object();
    for (int k = 0; k < REUSE_DESIGNS; k++)
        json_object_set_new(pred, reuse_designs[k].name,
                            json_integer(reuse_predict(&reuse_designs[k], q, REUSE_TEST, NULL)));
    return json_pack("{s:s, s:s, s:{s:f, s:f, s:f}, s:f, s:o, s:i, s:o}", "question", Q->name,
                     "asks", Q->asks, "ratios", "test", v[REUSE_TEST], "free", v[REUSE_FREE],
                     "cleared", v[REUSE_CLEARED], "position", isfinite(pos) ? pos : 0.0,
                     "conflicts", isnan(conflicts) ? json_null() : json_real(conflicts),
                     "cleared_conflicts",
                     reuse_predict(&reuse_designs[0], q, REUSE_CLEARED, NULL), "predicted", pred);
}

json_t *reuse_analyse(const double ratio[REUSE_QUESTIONS][REUSE_VARIANTS],
                      const double range[REUSE_QUESTIONS][REUSE_VARIANTS])
{
    struct measured m;
    enum reuse_outcome out[REUSE_QUESTIONS];
    json_t *list = json_array(), *rules = json_array(), *designs = json_array(),
           *fit = json_array();
    int determined = 0, nfit = 0;
    static const char *const names[] = {"not determined", "hit", "miss"};
    measure_all(ratio, range, &m);
    /* the table lists every premise before the questions resting on it */
    for (int q = 0; q < REUSE_QUESTIONS; q++) {
        const struct question *Q = &questions[q];
        const char *why = NULL;
        char because[160];
        out[q] = classify((enum reuse_question)q, &m, &why);
        if (out[q] != REUSE_UNDETERMINED && Q->premise != (enum reuse_question)q &&
            out[Q->premise] != REUSE_HIT) {
            snprintf(because, sizeof because, "rests on question \"%s\", which was not a hit",
                     questions[Q->premise].name);
            why = because;
            out[q] = REUSE_UNDETERMINED;
        }
        json_t *j = question_json((enum reuse_question)q, ratio[q], m.conflicts[q]);
        json_object_set_new(j, "outcome", json_string(names[out[q]]));
        const char *rule = reuse_rule((enum reuse_question)q, out[q]);
        if (rule) {
            determined++;
            json_object_set_new(j, "rule", json_string(rule));
            json_array_append_new(rules, json_string(rule));
        } else {
            json_object_set_new(j, "why", json_string(why));
        }
        json_array_append_new(list, j);
    }
    for (int k = 0; k < REUSE_DESIGNS; k++) {
        int ok = fits(&reuse_designs[k], &m);
        nfit += ok;
        if (ok)
            json_array_append_new(fit, json_string(reuse_designs[k].name));
        json_array_append_new(designs, json_pack("{s:s, s:s, s:b}", "name", reuse_designs[k].name,
                                                 "text", reuse_designs[k].text, "fits", ok));
    }
    char answer[512];
    if (nfit == 0 || nfit == REUSE_DESIGNS)
        snprintf(answer, sizeof answer, "not determined: %s candidate design fits every question",
                 nfit ? "every" : "no");
    else {
        size_t used = (size_t)snprintf(answer, sizeof answer, "%s",
                                       nfit == 1 ? "the design that fits: "
                                                 : "the designs that fit: ");
        for (size_t i = 0; i < json_array_size(fit) && used < sizeof answer; i++)
            used += (size_t)snprintf(answer + used, sizeof answer - used, "%s%s", i ? ", " : "",
                                     json_string_value(json_array_get(fit, i)));
    }
    return json_pack("{s:o, s:o, s:i, s:o, s:o, s:s, s:f, s:f, s:f}", "questions", list, "rules",
                     rules, "determined", determined, "designs", designs, "consistent_designs",
                     fit, "answer", answer, "tolerance_conflicts", m.tol, "min_tolerance",
                     REUSE_TOL_MIN, "min_contrast", REUSE_MIN_CONTRAST);
}
