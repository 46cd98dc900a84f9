/*
 * Per-warp counts from the SASS (see sass_counts.h for the four rules).
 *
 * DESIGN
 * sc_count runs the rules in order over the checked object
 * (model/sass_input.h): pair_loops (rule 1, 2), find_copies and
 * choose_copies (rule 3), then count_groups, which asks skip_state
 * (rule 4, memoised per skip) and region_mult (trips of the enclosing
 * loops) for every group. Per-loop, per-group and per-skip facts live in
 * struct ctx's arrays, indexed like the object's.
 */
#include "model/sass_counts.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/sass_input.h"
#include "util/errf.h"

enum skip_state { SK_UNSEEN, SK_RUNS, SK_NOT_REACHED, SK_UNKNOWN };

struct ctx {
    const struct si_sass *s;
    const struct pd_loop *pl;
    int npl;
    struct sc_desc *out;
    int main_of[SC_MAX_LOOPS], rem_of[SC_MAX_LOOPS];   /* SASS loop per PTX loop, -1 */
    int *copy_of, *copy_k, *chosen;                      /* per group */
    int *state;                                          /* per skip: enum skip_state */
    double upper, guarded_run, unchosen_run;             /* instructions behind each assumption */
    char *err;
    size_t errlen;
};

/* The unroll factor's markers, in the order they are tried: the classes
 * ptxas keeps one to one first (a global access, a barrier, a MUFU for each
 * approximate function), shared next (it may merge loads into LDS.128),
 * fp32 last: ptxas expands approximate functions into FP32 helpers
 * (sin.approx takes an FMUL.RZ, ex2.approx an FSETP, FSEL and two FMULs) and
 * contracts a mul and an add into one FFMA, so its ratio can be a whole
 * number that is not the unroll (saxpy_sfu: 8 where the MUFUs say 4). */
static const int markers[] = {MC_GLOBAL, SC_SYNC, MC_SFU, MC_SHARED, MC_CONV, MC_FP64, MC_FP32};
#define N_MARKERS (sizeof markers / sizeof markers[0])

static const char *const extra_names[] = {"sync", "uniform", "tensor", "other"};

const char *sc_class_name(int c)
{
    if (c >= 0 && c < MC_COUNT)
        return mwp_class_name((enum mwp_class)c);
    return c >= MC_COUNT && c < SC_NCLASS ? extra_names[c - MC_COUNT] : NULL;
}

static void note(struct sc_desc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct sc_desc *d, const char *fmt, ...)
{
    va_list ap;
    if (d->nnotes >= SC_MAX_NOTES)
        return;
    va_start(ap, fmt);
    vsnprintf(d->notes[d->nnotes++], SC_NOTE_LEN, fmt, ap);
    va_end(ap);
}

static double ptx_count(const struct pd_loop *q, int c)
{
    return c == SC_SYNC ? q->sync : c < MC_COUNT ? q->body[c] : 0;
}

/* s / p when it is a whole number >= 1, else 0. */
static int whole_ratio(double s, double p)
{
    if (p <= 0 || s < p)
        return 0;
    double r = s / p;
    return fabs(r - round(r)) < 1e-9 ? (int)round(r) : 0;
}

/* The unroll factor of SASS body n against PTX loop q, and its marker; 0 when none fits. */
static int unroll_of(const double n[SC_NCLASS], const struct pd_loop *q, int *marker)
{
    for (size_t i = 0; i < N_MARKERS; i++) {
        int k = whole_ratio(n[markers[i]], ptx_count(q, markers[i]));
        if (k >= 1) {
            *marker = markers[i];
            return k;
        }
    }
    return 0;
}

/* ---- rule 1, 2: pairing loops ------------------------------------------------------- */

/* Notes the markers that disagree with the one u was taken on. */
static void check_markers(struct ctx *c, const struct sc_loop *l)
{
    const struct pd_loop *q = &c->pl[l->ptx];
    const struct si_loop *sl = &c->s->loops[l - c->out->loops];
    for (size_t i = 0; i < N_MARKERS; i++) {
        int m = markers[i];
        double p = ptx_count(q, m);
        if (m == l->marker || p <= 0 || sl->n[m] == p * l->unroll)
            continue;
        note(c->out, "loop %s: %s %g per SASS trip, not %d x %g: ptxas merged or split them "
             "(u = %d from %s)", q->label, sc_class_name(m), sl->n[m], l->unroll, p, l->unroll,
             sc_class_name(l->marker));
    }
}

/* Pairs SASS loop i with a PTX loop of the same nesting; -1 when none fits. */
static int pair_one(struct ctx *c, int i)
{
    const struct si_loop *sl = &c->s->loops[i];
    struct sc_loop *l = &c->out->loops[i];
    int parent_ptx = sl->parent >= 0 ? c->out->loops[sl->parent].ptx : -1;
    for (int q = 0; q < c->npl; q++) {
        int marker, k = c->pl[q].parent == parent_ptx ? unroll_of(sl->n, &c->pl[q], &marker) : 0;
        if (k < 1)
            continue;
        long long t = c->pl[q].trips;
        *l = (struct sc_loop){.head = sl->head, .ptx = q, .unroll = k, .marker = marker};
        if (c->main_of[q] < 0) {
            c->main_of[q] = i;
            l->trips = (double)(t / k);
        } else if (c->out->loops[c->main_of[q]].unroll > 1 && k == 1 && c->rem_of[q] < 0) {
            c->rem_of[q] = i;
            l->remainder = 1;
            l->trips = (double)(t % c->out->loops[c->main_of[q]].unroll);
        } else {
            continue;
        }
        check_markers(c, l);
        return 0;
    }
    return errf(c->err, c->errlen, "SASS loop at 0x%x (depth %d) matches no PTX loop of the same "
                "nesting by its marker counts", sl->head, sl->depth);
}

static int pair_loops(struct ctx *c)
{
    if (c->s->nloops > SC_MAX_LOOPS || c->npl > SC_MAX_LOOPS)
        return errf(c->err, c->errlen, "%d SASS and %d PTX loops: more than %d and %d",
                    c->s->nloops, c->npl, SC_MAX_LOOPS, SC_MAX_LOOPS);
    for (int q = 0; q < c->npl; q++)
        c->main_of[q] = c->rem_of[q] = -1;
    c->out->nloops = c->s->nloops;
    for (int i = 0; i < c->s->nloops; i++)
        if (pair_one(c, i) < 0)
            return -1;
    for (int q = 0; q < c->npl; q++)
        if (c->main_of[q] < 0)
            note(c->out, "PTX loop %s has no loop in the SASS: taken as unrolled in full, its "
                 "code counted as it stands", c->pl[q].label);
    return 0;
}

/* ---- rule 3: copies ---------------------------------------------------------------- */

/* How far group g lies from SASS loop m's code. */
static uint32_t distance(const struct si_group *g, const struct si_loop *m)
{
    return g->at < m->head ? m->head - g->at : g->at >= m->end ? g->at - m->end : 0;
}

/* A conditional group holding k bodies of a PTX loop whose main loop is in its region. */
static void find_copies(struct ctx *c)
{
    for (int gi = 0; gi < c->s->ngroups; gi++) {
        const struct si_group *g = &c->s->groups[gi];
        c->copy_of[gi] = -1;
        if (!g->guarded && g->skip < 0)
            continue;                 /* runs whenever its region does: no copy */
        for (int q = 0; q < c->npl; q++) {
            int m = c->main_of[q];
            if (m < 0 || c->s->loops[m].parent != g->loop)
                continue;
            const struct sc_loop *l = &c->out->loops[m];
            int k = whole_ratio(g->n[l->marker], ptx_count(&c->pl[q], l->marker));
            if (k < 1 || k > l->unroll)
                continue;
            int best = c->copy_of[gi];
            if (best < 0 ||
                distance(g, &c->s->loops[m]) < distance(g, &c->s->loops[c->main_of[best]])) {
                c->copy_of[gi] = q;
                c->copy_k[gi] = k;
            }
        }
        c->out->copies += c->copy_of[gi] >= 0;
    }
}

/* Hands r trips to the copies of PTX loop q on one side of its main loop (after: 1),
 * largest first; what is left. */
static long long hand_out(struct ctx *c, int q, int after, long long r)
{
    const struct si_loop *m = &c->s->loops[c->main_of[q]];
    for (int k = c->out->loops[c->main_of[q]].unroll; k >= 1 && r > 0; k--)
        for (int gi = 0; gi < c->s->ngroups && r > 0; gi++) {
            const struct si_group *g = &c->s->groups[gi];
            if (c->copy_of[gi] != q || c->copy_k[gi] != k || c->chosen[gi] ||
                (g->at >= m->head) != after || k > r)
                continue;
            c->chosen[gi] = 1;
            c->out->copies_run++;
            r -= k;
        }
    return r;
}

static void choose_copies(struct ctx *c)
{
    for (int q = 0; q < c->npl; q++) {
        if (c->main_of[q] < 0)
            continue;
        int u = c->out->loops[c->main_of[q]].unroll;
        long long r = c->rem_of[q] >= 0 ? 0 : c->pl[q].trips % u;
        r = hand_out(c, q, 1, r);
        r = hand_out(c, q, 0, r);
        if (r > 0)
            note(c->out, "loop %s: %lld remainder trip(s) found no copy in the SASS: not counted",
                 c->pl[q].label, r);
    }
}

/* ---- rule 4: what runs ------------------------------------------------------------- */

/* 1 if skip x is s or lies inside it. */
static int within(const struct si_sass *s, int x, int sk)
{
    for (; x >= 0; x = s->skips[x].parent)
        if (x == sk)
            return 1;
    return 0;
}

static enum skip_state skip_state(struct ctx *c, int sk)
{
    if (c->state[sk] != SK_UNSEEN)
        return (enum skip_state)c->state[sk];
    const struct si_sass *s = c->s;
    int parent = s->skips[sk].parent, has = 0, runs = 0;
    if (parent >= 0 && skip_state(c, parent) == SK_NOT_REACHED)
        return (enum skip_state)(c->state[sk] = SK_NOT_REACHED);
    for (int gi = 0; gi < s->ngroups; gi++)
        if (c->copy_of[gi] >= 0 && within(s, s->groups[gi].skip, sk)) {
            has = 1;
            runs |= c->chosen[gi];
        }
    for (int l = 0; l < s->nloops; l++)
        if (within(s, s->loops[l].skip, sk)) {
            has = 1;
            runs |= c->out->loops[l].trips > 0;
        }
    c->state[sk] = runs ? SK_RUNS : has ? SK_NOT_REACHED : SK_UNKNOWN;
    return (enum skip_state)c->state[sk];
}

/* How many times region `loop` runs a warp (1 outside every loop). */
static double region_mult(struct ctx *c, int loop)
{
    if (loop < 0)
        return 1;
    const struct si_loop *l = &c->s->loops[loop];
    if (l->skip >= 0 && skip_state(c, l->skip) == SK_NOT_REACHED)
        return 0;
    return c->out->loops[loop].trips * region_mult(c, l->parent);
}

static void add(double *to, const double n[SC_NCLASS], double m)
{
    for (int k = 0; k < SC_NCLASS; k++)
        to[k] += n[k] * m;
}

static double total(const double n[SC_NCLASS])
{
    double t = 0;
    for (int k = 0; k < SC_NCLASS; k++)
        t += n[k];
    return t;
}

static void count_group(struct ctx *c, int gi)
{
    const struct si_group *g = &c->s->groups[gi];
    enum skip_state st = g->skip >= 0 ? skip_state(c, g->skip) : SK_RUNS;
    double m = region_mult(c, g->loop);
    if (st == SK_NOT_REACHED || m == 0)
        return;
    if (c->copy_of[gi] >= 0 && !c->chosen[gi] && g->guarded) {
        add(c->out->off, g->n, m); /* its loads go nowhere: nothing waits on them */
        return;
    }
    add(c->out->run, g->n, m);
    c->out->waits += g->waits * m;
    if (c->copy_of[gi] >= 0 && !c->chosen[gi])
        c->unchosen_run += total(g->n) * m;
    else if (c->copy_of[gi] < 0 && st == SK_UNKNOWN)
        c->upper += total(g->n) * m;
    else if (c->copy_of[gi] < 0 && g->guarded)
        c->guarded_run += total(g->n) * m;
}

static void count_notes(struct ctx *c)
{
    const struct si_sass *s = c->s;
    struct sc_desc *d = c->out;
    if (c->upper > 0)
        note(d, "%g instruction(s) a warp behind forward branches that no trip count decides: "
             "counted as run (an upper bound)", c->upper);
    if (c->guarded_run > 0)
        note(d, "%g guarded instruction(s) a warp counted as run: issued whatever the guard, "
             "their memory accesses counted as made (an upper bound)", c->guarded_run);
    if (c->unchosen_run > 0)
        note(d, "%g instruction(s) a warp of remainder copies no branch skips: counted as run",
             c->unchosen_run);
    if (s->guarded_exits)
        note(d, "%d guarded EXIT(s): the code after them counted for every warp",
             s->guarded_exits);
    if (s->calls)
        note(d, "%d CALL(s): the callee's instructions are not counted", s->calls);
    if (s->unknown_ops)
        note(d, "%d instruction(s) of operations the SASS reader does not know: counted as "
             "'other', and any branch among them is not followed", s->unknown_ops);
    if (d->run[SC_UNIFORM] + d->run[SC_OTHER] > 0)
        note(d, "%g uniform-datapath and %g other (NOP, EXIT ...) instruction(s) a warp: no "
             "model class, not charged", d->run[SC_UNIFORM], d->run[SC_OTHER]);
    if (d->run[SC_TENSOR] > 0)
        note(d, "%g tensor-core instruction(s) a warp: the model has no tensor pipe; each is "
             "charged one integer issue slot", d->run[SC_TENSOR]);
}

int sc_count(const json_t *sass, const struct pd_loop *ptx_loops, int n, struct sc_desc *out,
             char *err, size_t errlen)
{
    struct si_sass s;
    struct ctx c = {.s = &s, .pl = ptx_loops, .npl = n, .out = out, .err = err,
                    .errlen = errlen};
    memset(out, 0, sizeof *out);
    int rc = si_read(sass, &s, err, errlen);
    if (rc == 0) {
        size_t ng = (size_t)s.ngroups + 1;
        c.copy_of = calloc(ng, sizeof *c.copy_of);
        c.copy_k = calloc(ng, sizeof *c.copy_k);
        c.chosen = calloc(ng, sizeof *c.chosen);
        c.state = calloc((size_t)s.nskips + 1, sizeof *c.state);
        if (!c.copy_of || !c.copy_k || !c.chosen || !c.state)
            rc = errf(err, errlen, "out of memory");
    }
    if (rc == 0 && (rc = pair_loops(&c)) == 0) {
        find_copies(&c);
        choose_copies(&c);
        out->has_waits = s.has_waits;
        for (int gi = 0; gi < s.ngroups; gi++)
            count_group(&c, gi);
        count_notes(&c);
    }
    free(c.copy_of);
    free(c.copy_k);
    free(c.chosen);
    free(c.state);
    si_free(&s);
    return rc;
}
