/*
 * The L1 set search, measuring half (see l1_sets.h for the method): the
 * references, the fill unit, the lines that fit per stride, the floor and
 * its controls, and the role of every address bit. l1_sets_index.c takes
 * it from the index bits on.
 *
 * DESIGN
 * Every timing is one call of ops->chase on s->list, so this file decides
 * only which lists to time and what a timing means:
 *   - against the references, a timing is the share of loads that missed:
 *     (t - hit) / (miss - hit); a list "fits" below one half;
 *   - against the controls (the A and A + 1 lines of one set), a bit test
 *     is (t - neg) / (pos - neg): at least 0.65 collides, at most 0.35
 *     does not, between is measured again with twice the runs and, still
 *     between, unclear.
 * The lines that fit at a stride are bracketed from the previous stride's
 * count (doubling up, halving down) and bisected to 1/64 of the count;
 * at the collision stride to the line. A search step costs one chase, a
 * reported figure `repeats`; L1S_MAX_CHASES bounds the whole.
 */
#include "probes/l1_sets_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/gpu/stats.h"
#include "probes/memory.h"

#define REF_LINES 32             /* the reference list: 32 lines, 4 KiB */
#define REF_STRIDE 128
#define FILL_MIN 8               /* the fill walk's strides, bytes */
#define FILL_MAX 256
#define FILL_FULL 0.75           /* a stride at or past the fill unit misses on every load */
#define MISS_AT 0.5              /* a list whose loads miss this often does not fit */
#define CLEAR_LOW 0.35           /* bit tests: at most this far towards the miss control... */
#define CLEAR_HIGH 0.65          /* ...or at least this far, else unclear */
#define FLOOR_TOL 0.02           /* counts within 2 % of the floor are on it */
#define FIRST_HINT 1024          /* where the first stride's bracket starts */
#define GAP_MIN_CYCLES 10.0      /* the controls must be this far apart... */
#define GAP_MIN_SHARE 0.25       /* ...and this share of miss - hit */

_Static_assert(L1S_MAX_LIST >= 2 * MEM_K_MAX + MEM_UNROLL, "the fill walk must not wrap");

/* ---- measuring ------------------------------------------------------------------ */

int l1s_undetermined(struct l1s *s, const char *fmt, ...)
{
    if (!s->why[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->why, sizeof s->why, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int l1s_stopped(const struct l1s *s) { return s->fail[0] || s->why[0]; }

int l1s_measure(struct l1s *s, size_t n, int cached, int runs, struct l1s_fig *f)
{
    for (int i = 0; i < runs && f->n < L1S_MAX_RUNS; i++) {
        if (s->chases >= L1S_MAX_CHASES)
            return l1s_undetermined(s, "the search used its budget of %d chases before it "
                                       "finished", L1S_MAX_CHASES);
        s->chases++;
        if (s->ops->chase(s->ops->ctx, s->list, n, cached, &f->runs[f->n], s->fail,
                          sizeof s->fail) < 0) {
            if (!s->fail[0])
                snprintf(s->fail, sizeof s->fail, "a chase failed without a reason");
            return -1;
        }
        f->n++;
    }
    double v[L1S_MAX_RUNS];
    memcpy(v, f->runs, (size_t)f->n * sizeof *v);
    struct spread sp = spread_of(v, (size_t)f->n);
    f->median = sp.median, f->min = sp.min, f->max = sp.max;
    return 0;
}

json_t *l1s_fig_json(const struct l1s_fig *f) { return spread_json(f->runs, (size_t)f->n); }

/* The share of loads that missed, by the references. */
static double miss_share(const struct l1s *s, double t) { return (t - s->hit) / (s->miss - s->hit); }

/* Where t lies from the hit control (0) to the miss control (1). */
static double control_share(const struct l1s *s, double t) { return (t - s->neg) / (s->pos - s->neg); }

/* dst[0..k) = k lines `stride` apart from offset `from`. */
static void put_stride(uint64_t *dst, uint64_t from, uint64_t stride, size_t k)
{
    for (size_t i = 0; i < k; i++)
        dst[i] = from + i * stride;
}

/* ---- references and the fill unit ---------------------------------------------- */

static int reference(struct l1s *s)
{
    struct l1s_fig hit = {0}, miss = {0};
    put_stride(s->list, 0, REF_STRIDE, REF_LINES);
    if (l1s_measure(s, REF_LINES, 1, s->repeats, &hit) < 0 ||
        l1s_measure(s, REF_LINES, 0, s->repeats, &miss) < 0)
        return -1;
    s->hit = hit.median, s->miss = miss.median;
    json_object_set_new(s->doc, "reference",
                        json_pack("{s:i,s:i,s:o,s:o}", "lines", REF_LINES, "stride_bytes",
                                  REF_STRIDE, "hit_cycles", l1s_fig_json(&hit), "miss_cycles",
                                  l1s_fig_json(&miss)));
    if (s->miss - s->hit < 20.0 || s->miss < 1.5 * s->hit)
        return l1s_undetermined(s, "ld.global.ca (%.1f cycles a load) is not clearly faster "
                                   "than ld.global.cg (%.1f) over %d lines: the L1 does not "
                                   "hold these loads", s->hit, s->miss, REF_LINES);
    return 0;
}

/* A walk over fresh memory at stride s: each fill unit's first load
 * misses, the others find what it brought, so the share of loads that
 * miss is stride / unit up to the unit and 1 from there. The list is long
 * enough that neither pass comes back to an element. */
static int fill_unit(struct l1s *s)
{
    json_t *a = json_array();
    json_object_set_new(s->doc, "fill", a);
    for (uint64_t st = FILL_MIN; st <= FILL_MAX; st *= 2) {
        struct l1s_fig f = {0};
        put_stride(s->list, 0, st, L1S_MAX_LIST);
        if (l1s_measure(s, L1S_MAX_LIST, 1, s->repeats, &f) < 0)
            return -1;
        double share = miss_share(s, f.median);
        json_array_append_new(a, json_pack("{s:I,s:o,s:f}", "stride_bytes", (json_int_t)st,
                                           "cycles", l1s_fig_json(&f), "miss_fraction", share));
        if (!s->fill_bytes && share >= FILL_FULL)
            s->fill_bytes = (uint32_t)st;
    }
    return 0;
}

/* ---- lines that fit, per stride -------------------------------------------------- */

/* The longest list at stride 2^k: every element visited by the warm pass,
 * and all within 2^L1S_CURVE_SPAN_BITS bytes. The span keeps the pages a
 * list touches few: if an L1 hit needed a translation, a list over
 * hundreds of pages would read as missing for want of TLB entries, not
 * of ways. A count that reaches the limit is a lower bound ("censored")
 * and takes no part in finding the floor. */
static uint32_t fit_limit(int k)
{
    uint64_t room = ((uint64_t)1 << L1S_CURVE_SPAN_BITS) >> k;
    return room < MEM_K_MAX ? (uint32_t)room : MEM_K_MAX;
}

/* Whether k lines 2^bit apart fit: one chase, more when it lies near the
 * middle. */
static int fits(struct l1s *s, int bit, uint32_t k, int *fit)
{
    struct l1s_fig f = {0};
    put_stride(s->list, 0, (uint64_t)1 << bit, k);
    if (l1s_measure(s, k, 1, 1, &f) < 0)
        return -1;
    double share = miss_share(s, f.median);
    if (share > CLEAR_LOW && share < CLEAR_HIGH && l1s_measure(s, k, 1, s->repeats, &f) < 0)
        return -1;
    s->fit[bit].probes++;
    *fit = miss_share(s, f.median) < MISS_AT;
    return 0;
}

/* Bisects fit[bit] until hi - lo is at most lo / 64 (exact: 1). */
static int refine(struct l1s *s, int bit, int exact)
{
    struct l1s_fit *r = &s->fit[bit];
    while (r->hi) {
        uint32_t tol = exact || r->lo < 64 ? 1 : r->lo / 64;
        if (r->hi - r->lo <= tol)
            return 0;
        uint32_t mid = r->lo + (r->hi - r->lo) / 2;
        int ok;
        if (fits(s, bit, mid, &ok) < 0)
            return -1;
        *(ok ? &r->lo : &r->hi) = mid;
    }
    return 0;
}

/* Brackets the count at stride 2^bit starting from hint: doubling while
 * lists fit (up to the limit: censored), halving while they do not. */
static int bracket(struct l1s *s, int bit, uint32_t hint)
{
    struct l1s_fit *r = &s->fit[bit];
    uint32_t limit = fit_limit(bit), k = hint < 2 ? 2 : hint > limit ? limit : hint;
    int ok;
    r->measured = 1, r->lo = 1, r->hi = 0;
    if (fits(s, bit, k, &ok) < 0)
        return -1;
    *(ok ? &r->lo : &r->hi) = k;
    while (ok && r->lo < limit) {
        k = r->lo > limit / 2 ? limit : 2 * r->lo;
        if (fits(s, bit, k, &ok) < 0)
            return -1;
        *(ok ? &r->lo : &r->hi) = k;
    }
    while (!ok && r->hi > 2) {
        k = r->hi / 2;
        if (fits(s, bit, k, &ok) < 0)
            return -1;
        *(ok ? &r->lo : &r->hi) = k;
    }
    return 0;
}

static int stride_curve(struct l1s *s)
{
    json_t *a = json_array();
    uint32_t hint = FIRST_HINT;
    json_object_set_new(s->doc, "strides", a);
    for (int bit = L1S_MIN_STRIDE_BIT; bit <= L1S_MAX_STRIDE_BIT; bit++) {
        const struct l1s_fit *r = &s->fit[bit];
        if (bracket(s, bit, hint) < 0 || refine(s, bit, 0) < 0)
            return -1;
        json_array_append_new(a, json_pack("{s:I,s:i,s:b,s:i}", "stride_bytes",
                                           (json_int_t)1 << bit, "lines_fit", (int)r->lo,
                                           "censored", r->hi == 0, "probes", r->probes));
        hint = r->lo;
    }
    return 0;
}

static int on_floor(const struct l1s_fit *r, uint32_t floor)
{
    return r->measured && r->hi && r->lo <= floor + (uint32_t)(floor * FLOOR_TOL);
}

/* The floor: the fewest lines that fit at any stride, reached at the
 * collision stride and held at the next two. Then the exact count there. */
static int find_floor(struct l1s *s)
{
    uint32_t floor = UINT32_MAX;
    int at = -1;
    for (int b = L1S_MIN_STRIDE_BIT; b <= L1S_MAX_STRIDE_BIT; b++)
        if (s->fit[b].measured && s->fit[b].hi && s->fit[b].lo < floor)
            floor = s->fit[b].lo;
    if (floor == UINT32_MAX)
        return l1s_undetermined(s, "at every stride from 32 B to 512 KiB the longest list "
                                   "tried still fitted: no stride made lines collide");
    for (int b = L1S_MIN_STRIDE_BIT; at < 0 && b <= L1S_MAX_STRIDE_BIT; b++)
        if (on_floor(&s->fit[b], floor))
            at = b;
    for (int b = at + 1; b <= at + 2; b++) {
        if (b > L1S_MAX_STRIDE_BIT || (s->fit[b].measured && !s->fit[b].hi))
            return l1s_undetermined(s, "the fewest lines that fit, %u at a stride of %llu "
                                       "bytes, cannot be confirmed at the next two strides: "
                                       "their lists would span more than %llu bytes (see "
                                       "strides)", floor, 1ull << at,
                                    1ull << L1S_CURVE_SPAN_BITS);
        if (!on_floor(&s->fit[b], floor))
            return l1s_undetermined(s, "the fewest lines that fit, %u at a stride of %llu "
                                       "bytes, do not hold at the next two strides: no floor "
                                       "of one set (see strides)", floor, 1ull << at);
    }
    s->stride = (uint64_t)1 << at;
    if (refine(s, at, 1) < 0)
        return -1;
    s->ways = s->fit[at].lo;
    return 0;
}

/* The first A lines at the collision stride must hit, the first A + 1
 * miss; they are the ends every bit test is read between. */
static int controls(struct l1s *s)
{
    struct l1s_fig neg = {0}, pos = {0};
    put_stride(s->list, 0, s->stride, s->ways + 1);
    if (l1s_measure(s, s->ways, 1, s->repeats, &neg) < 0 ||
        l1s_measure(s, s->ways + 1, 1, s->repeats, &pos) < 0)
        return -1;
    s->neg = neg.median, s->pos = pos.median;
    json_object_set_new(s->doc, "controls",
                        json_pack("{s:i,s:I,s:o,s:o}", "lines", (int)s->ways, "stride_bytes",
                                  (json_int_t)s->stride, "hit_cycles", l1s_fig_json(&neg),
                                  "miss_cycles", l1s_fig_json(&pos)));
    double gap = s->pos - s->neg, need = GAP_MIN_SHARE * (s->miss - s->hit);
    if (gap < GAP_MIN_CYCLES || gap < need)
        return l1s_undetermined(s, "%u lines %llu bytes apart take %.1f cycles a load and %u "
                                   "take %.1f: one line more than the set holds misses too "
                                   "rarely to tell sets apart (not an LRU-like replacement)",
                                s->ways, (unsigned long long)s->stride, s->neg, s->ways + 1,
                                s->pos);
    return 0;
}

/* ---- the bit tests ---------------------------------------------------------------- */

/* Times s->list[0..n) (one line more than a set holds, if they share
 * one) against the controls. */
static int judge(struct l1s *s, size_t n, enum l1s_verdict *v, json_t **test)
{
    struct l1s_fig f = {0};
    if (l1s_measure(s, n, 1, s->repeats, &f) < 0)
        return -1;
    double share = control_share(s, f.median);
    if (share > CLEAR_LOW && share < CLEAR_HIGH) {
        if (l1s_measure(s, n, 1, s->repeats, &f) < 0)
            return -1;
        share = control_share(s, f.median);
    }
    *v = share >= CLEAR_HIGH ? L1S_COLLIDES : share <= CLEAR_LOW ? L1S_APART : L1S_UNCLEAR;
    *test = json_pack("{s:o,s:f}", "cycles", l1s_fig_json(&f), "fraction", share);
    return 0;
}

int l1s_same_set(struct l1s *s, uint64_t d, enum l1s_verdict *v, json_t **test)
{
    s->list[0] = d;
    put_stride(s->list + 1, s->stride, s->stride, s->ways);
    return judge(s, s->ways + 1, v, test);
}

/* Whether d is another line of line 0's set: line 0, d and the conflict
 * set less one line. */
static int same_line(struct l1s *s, uint64_t d, enum l1s_verdict *v, json_t **test)
{
    s->list[0] = 0;
    s->list[1] = d;
    put_stride(s->list + 2, s->stride, s->stride, s->ways - 1);
    return judge(s, s->ways + 1, v, test);
}

static enum l1s_role role_of(enum l1s_verdict set, enum l1s_verdict line)
{
    if (set == L1S_COLLIDES && line == L1S_APART)
        return L1S_OFFSET;
    if (set == L1S_COLLIDES && line == L1S_COLLIDES)
        return L1S_TAG;
    if (set == L1S_APART && line == L1S_APART)
        return L1S_INDEX;
    return L1S_AMBIGUOUS;  /* unclear, or another set yet the same set's line */
}

static const char *const role_names[] = {"untested", "offset", "index", "tag", "ambiguous"};

/* Bits the conflict set varies: flipping one gives another of its lines. */
static int inside_conflict_set(const struct l1s *s, int b)
{
    uint64_t d = (uint64_t)1 << b;
    return d >= s->stride && d <= s->stride * s->ways;
}

static int test_bit(struct l1s *s, int b, json_t *bits)
{
    enum l1s_verdict vs, vl;
    json_t *ts = NULL, *tl = NULL;
    if (inside_conflict_set(s, b)) {
        s->role[b] = L1S_TAG;
        json_array_append_new(bits, json_pack("{s:i,s:s,s:s}", "bit", b, "role", "tag", "note",
                                              "varied inside the conflict set, whose lines "
                                              "share one set"));
        return 0;
    }
    if (l1s_same_set(s, (uint64_t)1 << b, &vs, &ts) < 0)
        return -1;
    if (same_line(s, (uint64_t)1 << b, &vl, &tl) < 0) {
        json_decref(ts);
        return -1;
    }
    s->role[b] = role_of(vs, vl);
    json_array_append_new(bits, json_pack("{s:i,s:s,s:o,s:o}", "bit", b, "role",
                                          role_names[s->role[b]], "same_set", ts, "same_line",
                                          tl));
    return 0;
}

/* The line: offset bits are the low ones, every other bit is not. The
 * line is kept when the first bit past the offsets is clear, even if a
 * bit above it is not (the verdict is then "not determined" all the same). */
static int line_from_roles(struct l1s *s)
{
    int line = L1S_LOW_BIT;
    while (line <= L1S_TOP_BIT && s->role[line] == L1S_OFFSET)
        line++;
    if (line > L1S_TOP_BIT)
        return l1s_undetermined(s, "every bit up to %d acts as an offset: no line boundary",
                                L1S_TOP_BIT);
    if (s->role[line] != L1S_AMBIGUOUS)
        s->line_shift = line;
    for (int b = line; b <= L1S_TOP_BIT; b++) {
        if (s->role[b] == L1S_AMBIGUOUS)
            return l1s_undetermined(s, "bit %d: its timings lie between the controls, or it "
                                       "changes the set yet stays in it (see bits)", b);
        if (s->role[b] == L1S_OFFSET)
            return l1s_undetermined(s, "bit %d acts as an offset inside the line above bit "
                                       "%d, which does not: the offset bits are not the low "
                                       "ones (see bits)", b, line);
    }
    return 0;
}

static int bit_roles(struct l1s *s)
{
    json_t *bits = json_array();
    json_object_set_new(s->doc, "bits", bits);
    for (int b = L1S_LOW_BIT; b <= L1S_TOP_BIT; b++)
        if (test_bit(s, b, bits) < 0)
            return -1;
    return line_from_roles(s);
}

/* ---- the whole search ------------------------------------------------------------- */

typedef int (*phase_fn)(struct l1s *s);

static const phase_fn phases[] = {
    reference, fill_unit, stride_curve, find_floor, controls, bit_roles, l1s_index_find,
    l1s_confirm,
};

static json_t *finish(struct l1s *s)
{
    json_t *doc;
    if (s->fail[0]) {
        doc = json_pack("{s:s,s:I}", "error", s->fail, "chases", (json_int_t)s->chases);
        json_decref(s->doc);
    } else {
        l1s_checks(s);
        l1s_verdict(s);
        json_object_set_new(s->doc, "chases", json_integer(s->chases));
        doc = s->doc;
    }
    free(s->list);
    free(s);
    return doc;
}

json_t *l1s_search(const struct l1s_ops *ops, int repeats)
{
    struct l1s *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->ops = ops;
    s->repeats = repeats < 1 ? 1 : repeats > L1S_MAX_RUNS / 2 ? L1S_MAX_RUNS / 2 : repeats;
    s->line_shift = -1;
    s->list = malloc(L1S_MAX_LIST * sizeof *s->list);
    s->doc = json_object();
    if (!s->list || !s->doc) {
        json_decref(s->doc);
        free(s->list);
        free(s);
        return NULL;
    }
    for (size_t i = 0; i < sizeof phases / sizeof phases[0] && !l1s_stopped(s); i++)
        phases[i](s);
    return finish(s);
}
