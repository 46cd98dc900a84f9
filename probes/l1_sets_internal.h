/*
 * State shared by the two halves of the L1 set search (l1_sets.h):
 * l1_sets_search.c measures (references, fill, strides, controls, bit
 * roles), l1_sets_index.c reasons over what was measured (the XOR basis of
 * the index bits, the confirmation, the checks, the verdict). Nothing
 * outside those two files includes this header.
 */
#ifndef GPUPROBE_PROBES_L1_SETS_INTERNAL_H
#define GPUPROBE_PROBES_L1_SETS_INTERNAL_H

#include <jansson.h>
#include <stdint.h>

#include "probes/l1_sets.h"

#define L1S_BITS 64
#define L1S_MIN_STRIDE_BIT 5    /* 32 bytes: the first stride of the curve */
#define L1S_MAX_STRIDE_BIT 19   /* 512 KiB: the last */
#define L1S_CURVE_SPAN_BITS 24  /* a stride's lists span at most 16 MiB (l1_sets_search.c) */
#define L1S_MAX_CHASES 8000     /* the search's budget: a bound, not the need (a few hundred) */

/* A timed list: its runs and their median. */
struct l1s_fig {
    double median, min, max;
    double runs[L1S_MAX_RUNS];
    int n;
};

/* What a bit test concluded about a list holding one address more than a
 * set can hold. */
enum l1s_verdict { L1S_APART = 0, L1S_COLLIDES = 1, L1S_UNCLEAR = -1 };

enum l1s_role { L1S_UNTESTED = 0, L1S_OFFSET, L1S_INDEX, L1S_TAG, L1S_AMBIGUOUS };

/* The lines that fit at one stride: lo fits, hi does not (hi = 0: no K up
 * to the list's limit missed, so lo is a lower bound). */
struct l1s_fit {
    uint32_t lo, hi;
    int probes;
    int measured;
};

struct l1s {
    const struct l1s_ops *ops;
    int repeats;
    long chases;
    char fail[256];            /* a chase could not run: the search stops */
    char why[640];             /* the first reason for "not determined" */
    uint64_t *list;            /* L1S_MAX_LIST offsets: the list being timed */
    double hit, miss;          /* the reference medians, cycles per load */
    double neg, pos;           /* the controls' medians */
    uint32_t fill_bytes;       /* 0 until found */
    struct l1s_fit fit[L1S_MAX_STRIDE_BIT + 1];
    uint64_t stride;           /* the collision stride S*; 0 until found */
    uint32_t ways;             /* A, the lines that fit at S* */
    enum l1s_role role[L1S_BITS];
    int line_shift;            /* log2 of the line; -1 until found */
    int basis[L1S_MAX_INDEX_BITS];   /* address bits that are set-index bits */
    int nbasis;
    uint32_t rel[L1S_BITS];    /* per index bit: the basis positions its image is the XOR of */
    json_t *doc;
};

/* Sets the reason for "not determined" unless one is set; returns -1. */
int l1s_undetermined(struct l1s *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Whether the search must stop: a chase failed, or the reason is set. */
int l1s_stopped(const struct l1s *s);

/* Times s->list[0..n) `runs` times (cached: ca, else cg) into f. -1 when
 * a chase failed or the budget ran out (s->fail says which). */
int l1s_measure(struct l1s *s, size_t n, int cached, int runs, struct l1s_fig *f);

/* Whether the line at offset d is in the set of line 0: times the conflict
 * set (the ways lines at the collision stride after line 0) with d added,
 * again with twice the runs if the timing lies between the controls.
 * *test gets {"cycles":FIG,"fraction"}. -1 on a failed chase. */
int l1s_same_set(struct l1s *s, uint64_t d, enum l1s_verdict *v, json_t **test);

/* {"median","min","max","runs"} of f. */
json_t *l1s_fig_json(const struct l1s_fig *f);

/* The index half (l1_sets_index.c), run after the bit roles: the basis and
 * relations, the confirmation, the checks and the set_index member.
 * -1 on a failed chase; "not determined" is a reason in s, not a failure. */
int l1s_index_find(struct l1s *s);
int l1s_confirm(struct l1s *s);
void l1s_checks(struct l1s *s);
void l1s_verdict(struct l1s *s);

#endif
