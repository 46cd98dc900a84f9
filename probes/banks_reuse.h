/*
 * The register-file reuse cache behind the reuse flags, probed on the bank
 * probe's kernel (probes/banks.h): the FFMA patterns, a small cache
 * simulator with candidate designs, and the plain-C analysis that picks
 * the designs (and the per-question rules) the measured rates allow.
 *
 * DESIGN
 * Huerta et al. ("Analyzing Modern NVIDIA GPU cores", 2025) describe, on
 * Turing/Ampere, a small cache in front of the register banks that an
 * operand enters when its instruction sets the operand's reuse flag.
 *
 * The first GPU run (H100, 2026-11-24) showed why one conflicting read in
 * 8 FFMAs tells nothing: the hardware absorbs an isolated conflict when
 * the neighbouring FFMAs leave bank read cycles spare (all ratios within
 * 1e-5 of 1), while FFMAs that all read two registers of one bank run at
 * 0.507. So the patterns leave no spare bank cycle: every FFMA of a test
 * pattern reads c, a register of bank A that is never flagged (always a
 * bank read), and at most one other register of bank A, a "cacheable" one
 * (a, a2: flagged somewhere in the pattern) or f (never flagged); a third
 * source, when there is one, is o of bank B. An FFMA then costs one issue
 * cycle when its second bank-A register is served by the cache and two
 * when it is not, and both a per-instruction cost model and a bank
 * read-bandwidth model (cycles = the busiest bank's reads) give the same
 * cycles per period: FFMAs + the bank-A reads the cache did not serve
 * beyond one per FFMA ("conflicts").
 *
 * Each question is a pattern of REUSE_PERIOD FFMAs repeated through the
 * timed loop (banks_edits_seq), measured beside two controls built from
 * it: "free" (c replaced by RZ: no FFMA reads two registers of a bank, 0
 * conflicts whatever the cache does) and "cleared" (every reuse flag
 * cleared: nothing cached; as many conflicts as FFMAs with two bank-A
 * reads, known from the pattern). The controls calibrate one conflict's
 * cost, so the test's rate becomes conflicts per period:
 *   conflicts = N_cleared * (cycles_test - cycles_free) /
 *               (cycles_cleared - cycles_free),   cycles = PERIOD / ratio.
 *
 * Every candidate design (reuse_designs: per slot or shared, entries per
 * bank or per slot, lifetime, what an unflagged read or a write does)
 * predicts each pattern's conflicts with the simulator (reuse_simulate).
 * A design fits when every question's measured conflicts lie within the
 * tolerance of its prediction; the tolerance is REUSE_TOL_SPREADS times
 * the controls' spread over the repeats (in conflicts), at least
 * REUSE_TOL_MIN. The answer is the fitting designs, or "not determined"
 * when none or all fit. Each question keeps an outcome: "hit" when its
 * measured conflicts match a design under which the question's probe read
 * is served by the cache and no design under which it is not, "miss" the
 * reverse, else "not determined"; and a question whose premise (next,
 * then distance) was not a hit is not determined.
 */
#ifndef GPUPROBE_PROBES_BANKS_REUSE_H
#define GPUPROBE_PROBES_BANKS_REUSE_H

#include <jansson.h>
#include <stddef.h>

#include "probes/banks.h"

#define REUSE_PERIOD 8               /* FFMAs per pattern; divides BANKS_TIMED */
#define REUSE_TOL_MIN 0.25           /* conflicts per period: the least tolerance */
#define REUSE_TOL_SPREADS 3.0        /* tolerance = this many control spreads */
#define REUSE_MIN_CONTRAST 0.2       /* (cycles cleared - free) / free below this: no contrast */

/* The registers the patterns name. a, a2, c and f share a bank (A); o is
 * in another (B); a and d are timed-FFMA destinations (safe to write: the
 * write question writes a, every other FFMA writes d). All distinct. */
struct reuse_regs {
    unsigned a, a2, c, f, o, d;
};

enum reuse_question {
    REUSE_Q_NEXT,                    /* the flag serves the next FFMA's read of a in slot a */
    REUSE_Q_DISTANCE,                /* ... and a read 7 FFMAs later (6 that leave slot a alone) */
    REUSE_Q_OTHER_SLOT,              /* a cached from slot a serves a read of a in slot b */
    REUSE_Q_SECOND_SAME_BANK,        /* a second flagged register of a's bank in slot a */
    REUSE_Q_SECOND_OTHER_BANK,       /* a second flagged register of the other bank in slot a */
    REUSE_Q_UNFLAGGED_OTHER,         /* an unflagged read of a2 (a's bank) in slot a */
    REUSE_Q_UNFLAGGED_SAME,          /* an unflagged read of a itself in slot a */
    REUSE_Q_WRITE,                   /* an FFMA writes a between the flag and the read */
    REUSE_QUESTIONS
};

enum reuse_variant {
    REUSE_TEST,                      /* the pattern as the question asks */
    REUSE_FREE,                      /* c replaced by RZ: no conflict at all */
    REUSE_CLEARED,                   /* every reuse flag cleared: every possible conflict */
    REUSE_VARIANTS
};

/* The name of question q ("next", "other_slot", ...) and what it asks;
 * NULL for q outside the enum. */
const char *reuse_question_name(enum reuse_question q);
const char *reuse_question_text(enum reuse_question q);

/* Writes question q's pattern, variant v, into seq (REUSE_PERIOD steps).
 * 0, or -1 for q or v outside their enums. Pure: no GPU. */
int reuse_pattern(const struct reuse_regs *r, enum reuse_question q, enum reuse_variant v,
                  struct banks_step seq[REUSE_PERIOD]);

/* The pattern as JSON: one "Ra Rb Rc -> Rd reuse" string per step. */
json_t *reuse_pattern_json(const struct banks_step seq[REUSE_PERIOD]);

/* Picks the registers from a bank map (bank[r] for r = 0..top, -1 for a
 * register not mapped) and the timed FFMAs' destinations: a and d among
 * dest, a2, c and f in a's bank, o in another, all distinct, none above
 * top. 0, or -1 when the map or the destinations do not allow it (fewer
 * than two banks, no destination with three bank-mates). */
int reuse_pick_regs(const int *bank, unsigned top, const unsigned *dest, size_t ndest,
                    struct reuse_regs *r);

/* ---- the candidate designs and the simulator ------------------------------ */

/* A cache design. A "scope" is where entries live: one per operand slot,
 * or one for all slots (shared); within it, entries per bank (per_bank)
 * or for all banks together; entries beyond the capacity evict the
 * oldest. */
struct reuse_design {
    const char *name, *text;
    int shared;                      /* one scope for all slots (else one per slot) */
    int per_bank;                    /* capacity counted per bank (else per scope) */
    int entries;                     /* capacity */
    int life;                        /* an entry serves reads up to this many FFMAs after it was set */
    int unflagged_evicts;            /* an unflagged read of another register of the bank evicts */
    int unflagged_releases;          /* an unflagged read of a cached register releases it */
    int write_invalidates;           /* writing a cached register drops its entry */
    int no_effect;                   /* the flags do nothing */
};
#define REUSE_DESIGNS 8
extern const struct reuse_design reuse_designs[REUSE_DESIGNS];

/* What the simulator saw in the last of several repeated periods (the
 * first ones warm the cache up, as the timed loop's repetitions do). */
struct reuse_sim {
    int conflicts;                   /* extra cycles per period: cost - 1 summed over FFMAs */
    unsigned served[REUSE_PERIOD];   /* bit s: step's slot-s read served by the cache */
};

/* Runs seq (REUSE_PERIOD steps) on design d; bank_of gives the bank of a
 * register (called only for registers other than RZ). */
void reuse_simulate(const struct reuse_design *d, const struct banks_step seq[REUSE_PERIOD],
                    int (*bank_of)(const struct reuse_regs *r, unsigned reg),
                    const struct reuse_regs *regs, struct reuse_sim *out);

/* The bank of a register of r: o is in bank 1, a, a2, c, f in bank 0. */
int reuse_role_bank(const struct reuse_regs *r, unsigned reg);

/* Conflicts per period design d predicts for question q, variant v
 * (registers by role, reuse_role_bank); *probe_served: whether the
 * question's probe read is served; may be NULL. */
int reuse_predict(const struct reuse_design *d, enum reuse_question q, enum reuse_variant v,
                  int *probe_served);

enum reuse_outcome { REUSE_UNDETERMINED, REUSE_HIT, REUSE_MISS };

/* The rule a determined outcome of question q supports (a sentence), or
 * NULL for REUSE_UNDETERMINED. */
const char *reuse_rule(enum reuse_question q, enum reuse_outcome o);

/* Measured conflicts per period from one question's three ratios (to the
 * conflict-free rate) and the cleared pattern's conflicts n_cleared (a
 * little below 0 when noise puts the test above free); NAN when the
 * controls have no contrast (REUSE_MIN_CONTRAST) or a ratio is not
 * positive. *per_conflict gets one conflict's cost in cycles. */
double reuse_conflicts(double test, double free_, double cleared, int n_cleared,
                       double *per_conflict);

/* The whole analysis: ratio[q][v] for every question and variant (medians
 * over repeats) and range[q][v] (max - min over repeats; NULL: none) ->
 * {"questions": [{"question", "asks", "ratios": {"test", "free",
 * "cleared"}, "position", "conflicts", "predicted": {design: n},
 * "outcome": "hit"|"miss"|"not determined", "rule" | "why"}], "rules":
 * [sentences of the determined ones], "determined": n, "designs": [{"name",
 * "text", "fits"}], "consistent_designs": [names], "answer": sentence,
 * "tolerance_conflicts"}. */
json_t *reuse_analyse(const double ratio[REUSE_QUESTIONS][REUSE_VARIANTS],
                      const double range[REUSE_QUESTIONS][REUSE_VARIANTS]);

#endif
