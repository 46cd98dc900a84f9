/*
 * The register-file reuse cache behind the reuse flags, probed on the bank
 * probe's kernel (probes/banks.h): the FFMA patterns and the plain-C
 * analysis that turns their rates into rules (or "not determined").
 *
 * DESIGN
 * Huerta et al. ("Analyzing Modern NVIDIA GPU cores", 2025) describe, on
 * Turing/Ampere, a small cache in front of the register banks that an
 * operand enters when its instruction sets the operand's reuse flag. Here
 * each question is one pattern of REUSE_PERIOD FFMAs repeated through the
 * timed loop (banks_edits_seq): FFMA 0 reads register a in slot a with the
 * flag set, later FFMAs do what the question asks (read another register
 * in slot a, with or without the flag; write a; ...), and the last FFMA of
 * interest (the "probe") reads a together with c, a register of a's bank.
 * If a is still cached the probe reads only c from the bank and costs one
 * issue cycle; if not, a and c conflict and it costs two. All the other
 * FFMAs read at most one register of each bank and never conflict, so the
 * pattern runs at 8/8 of the conflict-free rate on a hit, 8/9 on a miss.
 *
 * Each test is measured beside two controls built from it, so the answer
 * needs no assumed cost: "free" (the probe's c replaced by x, a register
 * of the other bank: no conflict whatever the cache does, the hit rate)
 * and "cleared" (every reuse flag cleared: nothing is cached, the miss
 * rate). The test's position between them, (test - cleared) / (free -
 * cleared), above REUSE_HIT_AT says hit, below REUSE_MISS_AT miss,
 * between them (or with controls closer than REUSE_MIN_CONTRAST) "not
 * determined", and the rule follows from the question. The first question
 * (the flag helps the very next FFMA) is the premise of all the others:
 * when it is not a hit, none is determined.
 */
#ifndef GPUPROBE_PROBES_BANKS_REUSE_H
#define GPUPROBE_PROBES_BANKS_REUSE_H

#include <jansson.h>
#include <stddef.h>

#include "probes/banks.h"

#define REUSE_PERIOD 8               /* FFMAs per pattern; divides BANKS_TIMED */
#define REUSE_HIT_AT 0.75            /* position at or above: the probe hit */
#define REUSE_MISS_AT 0.25           /* position at or below: it missed */
#define REUSE_MIN_CONTRAST 0.03      /* (free - cleared) / free below this: no contrast */

/* The registers the patterns name. a, a2 and c share a bank; x and o are
 * in another; a and d are timed-FFMA destinations (safe to write: the
 * write question writes a, every other FFMA writes d). All distinct. */
struct reuse_regs {
    unsigned a, a2, c, x, o, d;
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
    REUSE_FREE,                      /* the probe reads x instead of c: the hit control */
    REUSE_CLEARED,                   /* every reuse flag cleared: the miss control */
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
 * dest, a2 and c in a's bank, x and o in another, all distinct, none
 * above top. 0, or -1 when the map or the destinations do not allow it
 * (fewer than two banks, no destination with two bank-mates). */
int reuse_pick_regs(const int *bank, unsigned top, const unsigned *dest, size_t ndest,
                    struct reuse_regs *r);

enum reuse_outcome { REUSE_UNDETERMINED, REUSE_HIT, REUSE_MISS };

/* One question's verdict from its three ratios (to the conflict-free
 * rate); *position gets (test - cleared) / (free - cleared), 0 when the
 * controls have no contrast. premise_hit: whether REUSE_Q_NEXT hit (pass
 * 1 for REUSE_Q_NEXT itself). */
enum reuse_outcome reuse_classify(double test, double free_, double cleared, int premise_hit,
                                  double *position);

/* The rule a determined outcome of question q supports (a sentence), or
 * NULL for REUSE_UNDETERMINED. */
const char *reuse_rule(enum reuse_question q, enum reuse_outcome o);

/* The whole analysis: ratio[q][v] for every question and variant (medians
 * over repeats) -> {"questions": [{"question", "asks", "ratios": {"test",
 * "free", "cleared"}, "position", "outcome": "hit"|"miss"|"not
 * determined", "rule"}], "rules": [sentences of the determined ones],
 * "determined": n}. */
json_t *reuse_analyse(const double ratio[REUSE_QUESTIONS][REUSE_VARIANTS]);

#endif
