/*
 * What the control-code sweeps mean (see control_codes.h).
 *
 * DESIGN
 * Every conclusion is a function of the recorded points, never of the
 * run that produced them, and every sentence of a meaning's "text" is
 * chosen by a measured figure and carries it, so a stored document can be
 * re-derived and a reader can see why the probe says what it says. The
 * thresholds are stated where they are used: a point "fits" a unit-slope
 * line within half a cycle (clock64 reads are whole cycles and the loop
 * adds a fraction per instruction), and a stream faster than 0.95 cycles
 * per instruction from one warp is two instructions in one cycle.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "probes/control_codes.h"
#include "probes/issue_order.h"

#define LINEAR_SLOPE_TOL 0.05
#define LINEAR_RESIDUAL 0.5
#define STALL_BOUND_TOL 0.5
#define DUAL_ISSUE_BELOW 0.95

struct point {
    int stall, yield;
    double chain, stream;        /* median cycles per instruction; NAN = not measured */
    int chain_ok, stream_ok;
};

static double median_of(const json_t *fig)
{
    const json_t *m = json_object_get(fig, "median");
    return json_is_number(m) ? json_number_value(m) : NAN;
}

/* The sweep's points; how many (at most max). */
static size_t read_points(const json_t *entry, struct point *p, size_t max)
{
    const json_t *sweep = json_object_get(entry, "sweep"), *v;
    size_t i, n = 0;
    json_array_foreach(sweep, i, v) {
        if (n == max)
            break;
        p[n].stall = (int)json_integer_value(json_object_get(v, "stall"));
        p[n].yield = (int)json_integer_value(json_object_get(v, "yield"));
        p[n].chain = median_of(json_object_get(v, "chain_cycles"));
        p[n].stream = median_of(json_object_get(v, "stream_cycles"));
        p[n].chain_ok = json_is_true(json_object_get(v, "chain_correct"));
        p[n].stream_ok = json_is_true(json_object_get(v, "stream_correct"));
        n++;
    }
    return n;
}

/* Scanning down from stall 15 at one yield value: the last stall before
 * the first wrong (or unmeasured) chain. */
static int min_safe_stall(const struct point *p, size_t n, int yield)
{
    int safe = -1;
    for (int s = CC_STALLS - 1; s >= 0; s--) {
        int seen = 0, ok = 1;
        for (size_t i = 0; i < n; i++)
            if (p[i].stall == s && p[i].yield == yield && !isnan(p[i].chain)) {
                seen = 1;
                ok = ok && p[i].chain_ok;
            }
        if (!seen || !ok)
            break;
        safe = s;
    }
    return safe;
}

static double value_of(const struct point *q, int stream)
{
    return stream ? q->stream : q->chain;
}

static int usable(const struct point *q, int yield, int from, int stream)
{
    return q->yield == yield && q->stall >= from && !isnan(value_of(q, stream)) &&
           (stream ? q->stream_ok : q->chain_ok);
}

/* Least squares of cycles against stall; NULL when fewer than 3 points. */
static json_t *fit_line(const struct point *p, size_t n, int yield, int from, int stream)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int k = 0, lo = CC_STALLS, hi = -1;
    for (size_t i = 0; i < n; i++) {
        if (!usable(&p[i], yield, from, stream))
            continue;
        double x = p[i].stall, y = value_of(&p[i], stream);
        sx += x, sy += y, sxx += x * x, sxy += x * y;
        k++;
        lo = p[i].stall < lo ? p[i].stall : lo;
        hi = p[i].stall > hi ? p[i].stall : hi;
    }
    double den = k * sxx - sx * sx;
    if (k < 3 || den == 0)
        return json_null();
    double slope = (k * sxy - sx * sy) / den, icept = (sy - slope * sx) / k, worst = 0;
    for (size_t i = 0; i < n; i++)
        if (usable(&p[i], yield, from, stream))
            worst = fmax(worst, fabs(value_of(&p[i], stream) - (slope * p[i].stall + icept)));
    return json_pack("{s:f, s:f, s:f, s:i, s:i, s:i}", "slope", slope, "intercept", icept,
                     "max_residual", worst, "from_stall", lo, "to_stall", hi, "yield", yield);
}

/* Scanning down from stall 15: the last stall before the first at which
 * the stream's pace is not the stall's (within STALL_BOUND_TOL, after the
 * loop's own share); CC_STALLS when none. Below it the pipe, a bank
 * conflict or an irregular encoding sets the pace. */
static int stall_bound_from(const struct point *p, size_t n, int yield)
{
    int from = CC_STALLS;
    double overhead = NAN;
    for (size_t i = 0; i < n; i++)
        if (p[i].stall == CC_STALLS - 1 && p[i].yield == yield)
            overhead = p[i].stream - p[i].stall;
    for (int s = CC_STALLS - 1; s >= 0 && !isnan(overhead); s--) {
        int ok = 0;
        for (size_t i = 0; i < n; i++)
            if (p[i].stall == s && p[i].yield == yield && !isnan(p[i].stream))
                ok = p[i].stream_ok && fabs(p[i].stream - s - overhead) <= STALL_BOUND_TOL;
        if (!ok)
            break;
        from = s;
    }
    return from;
}

void cc_infer_instruction(json_t *entry)
{
    struct point p[2 * CC_STALLS];
    size_t n = read_points(entry, p, 2 * CC_STALLS);
    if (!n)
        return;
    int yield = (int)json_integer_value(json_object_get(entry, "compiler_yield"));
    int safe = min_safe_stall(p, n, yield);
    json_object_set_new(entry, "min_safe_stall", safe < 0 ? json_null() : json_integer(safe));
    json_object_set_new(entry, "fit",
                        json_pack("{s:o, s:o}", "chain",
                                  safe < 0 ? json_null() : fit_line(p, n, yield, safe, 0),
                                  "stream", fit_line(p, n, yield, stall_bound_from(p, n, yield), 1)));
}

/* ---- meanings ----------------------------------------------------------------- */

/* Appends printf-style text to a fixed buffer. */
static void say(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

static const char *name_of(const json_t *entry)
{
    const char *n = json_string_value(json_object_get(entry, "name"));
    return n ? n : "?";
}

/* Encodings (stall, yield) that behave against the linear reading on every
 * instruction that measured them: a wrong chain at or above that
 * instruction's smallest safe stall, a correct stream faster than the
 * stall asks (by more than STALL_BOUND_TOL), or a chain slower than the
 * same instruction's chain at stall 15 (no stall count is that long). */
static json_t *irregular(const json_t *instructions)
{
    json_t *out = json_array();
    for (int s = 0; s < CC_STALLS; s++)
        for (int y = 0; y <= 1; y++) {
            int seen = 0, wrong = 0, fast = 0, slow = 0;
            size_t i;
            const json_t *e;
            json_array_foreach(instructions, i, e) {
                struct point p[2 * CC_STALLS];
                size_t n = read_points(e, p, 2 * CC_STALLS);
                const json_t *ms = json_object_get(e, "min_safe_stall");
                double longest = NAN;
                for (size_t k = 0; k < n; k++)
                    if (p[k].stall == CC_STALLS - 1 && p[k].chain_ok)
                        longest = isnan(longest) ? p[k].chain : fmax(longest, p[k].chain);
                for (size_t k = 0; k < n; k++) {
                    if (p[k].stall != s || p[k].yield != y || isnan(p[k].chain))
                        continue;
                    seen++;
                    wrong += json_is_integer(ms) && s >= json_integer_value(ms) && !p[k].chain_ok;
                    fast += p[k].stream_ok && !isnan(p[k].stream) && p[k].stream < s - STALL_BOUND_TOL;
                    slow += p[k].chain > longest + STALL_BOUND_TOL;
                }
            }
            const char *what = !seen ? NULL
                               : wrong == seen ? "chain wrong above the safe stall"
                               : fast == seen  ? "stream faster than the stall"
                               : slow == seen  ? "chain slower than at stall 15"
                                               : NULL;
            if (what)
                json_array_append_new(out, json_pack("{s:i, s:i, s:s, s:i}", "stall", s, "yield",
                                                     y, "what", what, "instructions", seen));
        }
    return out;
}

static json_t *stall_meaning(const json_t *instructions)
{
    double lo = INFINITY, hi = -INFINITY, worst = 0;
    int fitted = 0, linear = 1, wrong = 0, runs = 0;
    size_t i;
    const json_t *e;
    char text[1024] = "";
    json_array_foreach(instructions, i, e) {
        const json_t *f = json_object_get(json_object_get(e, "fit"), "chain");
        const json_t *sweep = json_object_get(e, "sweep"), *v;
        size_t j;
        json_array_foreach(sweep, j, v) {
            runs++;
            wrong += json_is_false(json_object_get(v, "chain_correct"));
        }
        if (!json_is_object(f))
            continue;
        double s = json_number_value(json_object_get(f, "slope"));
        double r = json_number_value(json_object_get(f, "max_residual"));
        fitted++;
        lo = fmin(lo, s), hi = fmax(hi, s), worst = fmax(worst, r);
        linear = linear && fabs(s - 1.0) <= LINEAR_SLOPE_TOL && r <= LINEAR_RESIDUAL;
    }
    linear = linear && fitted > 0;
    if (fitted)
        say(text, sizeof text,
            "%s: fitted on the dependent chains of %d instructions from each one's smallest "
            "safe stall to 15, every stall count adds %.3f to %.3f cycles (largest residual "
            "%.2f cycles). ",
            linear ? "Stall is a linear delay of one cycle per count" : "Stall is not a plain "
            "one-cycle-per-count delay", fitted, lo, hi, worst);
    else
        say(text, sizeof text, "No chain could be fitted, so the stall's meaning is not known. ");
    if (wrong)
        say(text, sizeof text,
            "%d of %d chain runs computed a different answer than the unedited code: the "
            "hardware does not hold a fixed-latency instruction's reader back, the stall count "
            "alone guards the result. ", wrong, runs);
    else
        say(text, sizeof text, "Every chain run computed the unedited answer. ");
    json_t *odd = irregular(instructions);
    if (json_array_size(odd)) {
        say(text, sizeof text, "Encodings that break this reading, on every instruction "
                               "listed in \"irregular\":");
        size_t k;
        const json_t *v;
        json_array_foreach(odd, k, v)
            say(text, sizeof text, "%s stall %lld yield %lld (%s)", k ? ";" : "",
                (long long)json_integer_value(json_object_get(v, "stall")),
                (long long)json_integer_value(json_object_get(v, "yield")),
                json_string_value(json_object_get(v, "what")));
        say(text, sizeof text, ".");
    }
    return json_pack("{s:s, s:b, s:i, s:o, s:o, s:f, s:i, s:i, s:o}", "text", text, "linear",
                     linear, "instructions_fitted", fitted, "slope_min",
                     fitted ? json_real(lo) : json_null(), "slope_max",
                     fitted ? json_real(hi) : json_null(), "max_residual", worst,
                     "wrong_answers", wrong, "chain_runs", runs, "irregular", odd);
}

/* Per stall, the mean over instructions of (yield 1 - yield 0) cycles of
 * the chain or of the stream, counting only stalls at which that kernel
 * computed the right answer at both yields; NAN where none did. */
static void yield_deltas(const json_t *instructions, int stream, double d[CC_STALLS])
{
    int cnt[CC_STALLS] = {0};
    size_t i;
    const json_t *e;
    for (int s = 0; s < CC_STALLS; s++)
        d[s] = 0;
    json_array_foreach(instructions, i, e) {
        struct point p[2 * CC_STALLS];
        size_t n = read_points(e, p, 2 * CC_STALLS);
        for (size_t a = 0; a < n; a++)
            for (size_t b = 0; b < n; b++)
                if (p[a].stall == p[b].stall && p[a].yield == 1 && p[b].yield == 0 &&
                    usable(&p[a], 1, 0, stream) && usable(&p[b], 0, 0, stream)) {
                    d[p[a].stall] += value_of(&p[a], stream) - value_of(&p[b], stream);
                    cnt[p[a].stall]++;
                }
    }
    for (int s = 0; s < CC_STALLS; s++)
        d[s] = cnt[s] ? d[s] / cnt[s] : NAN;
}

static json_t *num_or_null(double v)
{
    return isnan(v) ? json_null() : json_real(v);
}

static json_t *deltas_json(const double d[CC_STALLS])
{
    json_t *a = json_array();
    for (int s = 0; s < CC_STALLS; s++)
        json_array_append_new(a, num_or_null(d[s]));
    return a;
}

/* Two warps on one scheduler: [{stall, yield, cycles_per_warp_instruction}]
 * into per-stall (yield 1 - yield 0), where both ran right. */
static void two_warp_deltas(const json_t *two, double d[CC_STALLS])
{
    double c[CC_STALLS][2];
    for (int s = 0; s < CC_STALLS; s++)
        c[s][0] = c[s][1] = NAN;
    size_t i;
    const json_t *a;
    json_array_foreach(two, i, a) {
        json_int_t s = json_integer_value(json_object_get(a, "stall"));
        json_int_t y = json_integer_value(json_object_get(a, "yield"));
        if (s >= 0 && s < CC_STALLS && (y == 0 || y == 1) &&
            json_is_true(json_object_get(a, "correct")))
            c[s][y] = median_of(json_object_get(a, "cycles_per_warp_instruction"));
    }
    for (int s = 0; s < CC_STALLS; s++)
        d[s] = c[s][1] - c[s][0];
}

/* " at stall 1: -1.00" for every stall whose delta exceeds half a cycle. */
static int say_deltas(char *text, size_t len, const double d[CC_STALLS], const char *what)
{
    int any = 0;
    for (int s = 0; s < CC_STALLS; s++)
        if (!isnan(d[s]) && fabs(d[s]) > STALL_BOUND_TOL) {
            say(text, len, "%s stall %d %+.2f", any ? "," : what, s, d[s]);
            any = 1;
        }
    return any;
}

static json_t *yield_meaning(const json_t *instructions, const json_t *two)
{
    double dc[CC_STALLS], ds[CC_STALLS], d2[CC_STALLS];
    yield_deltas(instructions, 0, dc);
    yield_deltas(instructions, 1, ds);
    two_warp_deltas(two, d2);
    char text[1024] = "Yield bit 1 instead of 0, in cycles per instruction, where both computed "
                      "the right answer and the difference exceeds half a cycle:";
    int any = say_deltas(text, sizeof text, dc, " one warp's dependent chain at");
    any |= say_deltas(text, sizeof text, ds, any ? "; its independent stream at"
                                                  : " one warp's independent stream at");
    any |= say_deltas(text, sizeof text, d2, any ? "; two warps on one scheduler at"
                                                  : " two warps on one scheduler at");
    say(text, sizeof text, any ? ". Elsewhere the bit changed nothing measurable."
                               : " none; the bit changed nothing measurable.");
    return json_pack("{s:s, s:o, s:o, s:o}", "text", text, "chain_delta_by_stall",
                     deltas_json(dc), "stream_delta_by_stall", deltas_json(ds),
                     "two_warps_delta_by_stall", deltas_json(d2));
}

static json_t *dual_meaning(const json_t *instructions)
{
    double best = INFINITY;
    const char *at = NULL;
    int at_stall = 0, at_yield = 0;
    size_t i;
    const json_t *e;
    json_array_foreach(instructions, i, e) {
        struct point p[2 * CC_STALLS];
        size_t n = read_points(e, p, 2 * CC_STALLS);
        for (size_t k = 0; k < n; k++)
            if (!isnan(p[k].stream) && p[k].stream_ok && p[k].stream < best) {
                best = p[k].stream;
                at = name_of(e);
                at_stall = p[k].stall;
                at_yield = p[k].yield;
            }
    }
    char text[512];
    int observed = at && best < DUAL_ISSUE_BELOW;
    if (!at)
        snprintf(text, sizeof text, "No independent stream was measured.");
    else
        snprintf(text, sizeof text,
                 "%s: the fastest correct independent stream of one warp, %s at stall %d yield "
                 "%d, took %.3f cycles per instruction (two in one cycle would be below %.2f).",
                 observed ? "Two instructions of one warp issued in one cycle"
                          : "No encoding issued two instructions of one warp in one cycle",
                 at, at_stall, at_yield, best, DUAL_ISSUE_BELOW);
    return json_pack("{s:s, s:b, s:o, s:o, s:i, s:i}", "text", text, "observed", observed,
                     "fastest_cycles_per_instruction", at ? json_real(best) : json_null(), "at",
                     at ? json_string(at) : json_null(), "stall", at_stall, "yield", at_yield);
}

static json_t *wait_meaning(const json_t *tests)
{
    char text[1024] = "";
    size_t i;
    const json_t *t;
    json_array_foreach(tests, i, t) {
        const char *err = json_string_value(json_object_get(t, "error"));
        if (err) {
            say(text, sizeof text, "%s: not measured (%s). ", name_of(t), err);
            continue;
        }
        double cleared = median_of(json_object_get(t, "cycles_cleared"));
        char took[160];
        if (isnan(cleared))
            snprintf(took, sizeof took, "its time is unknown (see timing_note)");
        else
            snprintf(took, sizeof took, "it took %.1f", cleared);
        say(text, sizeof text,
            "%s (%s): as compiled the chain took %.1f cycles per step and was right; with the "
            "wait masks of %lld instructions cleared %s and %s. ",
            name_of(t), json_string_value(json_object_get(t, "sass")),
            median_of(json_object_get(t, "cycles_with_wait")),
            (long long)json_integer_value(json_object_get(t, "instructions_cleared")), took,
            json_is_true(json_object_get(t, "correct_cleared"))
                ? "still computed the right answer"
                : "computed a different answer: the reader no longer waited for the result");
    }
    if (!text[0])
        say(text, sizeof text, "Not measured.");
    return json_pack("{s:s, s:O}", "text", text, "tests", tests ? (json_t *)tests : json_null());
}

static json_t *reuse_meaning(const json_t *r)
{
    char text[768] = "";
    const json_t *chain = json_object_get(r, "chain_reuse_all"),
                 *compiled = json_object_get(r, "stream_compiled"),
                 *none = json_object_get(r, "stream_no_reuse");
    if (!json_is_object(r)) {
        say(text, sizeof text, "Not measured.");
        return json_pack("{s:s}", "text", text);
    }
    if (json_is_object(chain))
        say(text, sizeof text,
            "Reuse flags set on all three sources of the FFMA chain, whose first source is the "
            "previous result: %s (%.2f cycles per step). ",
            json_is_true(json_object_get(chain, "correct"))
                ? "the chain still computed the right answer, so the reuse cache did not serve "
                  "a value older than the register's last write"
                : "the chain computed a different answer, so the cached operand is served even "
                  "after the register is rewritten",
            median_of(json_object_get(chain, "cycles")));
    if (json_is_object(compiled) && json_is_object(none))
        say(text, sizeof text,
            "The FFMA stream as compiled took %.3f cycles per instruction and %.3f with every "
            "reuse flag cleared. ",
            median_of(compiled), median_of(none));
    say(text, sizeof text, "What reuse does to bank conflicts is measured by the banks probe "
                           "(its reuse_* costs).");
    json_t *o = json_deep_copy(r);
    json_object_set_new(o, "text", json_string(text));
    return o;
}

json_t *cc_meanings(const json_t *instructions, const json_t *experiments)
{
    json_t *m = json_pack("{s:o, s:o, s:o, s:o, s:o}", "stall", stall_meaning(instructions),
                          "yield",
                          yield_meaning(instructions,
                                        json_object_get(experiments, "yield_two_warps")),
                          "dual_issue", dual_meaning(instructions), "wait_mask",
                          wait_meaning(json_object_get(experiments, "wait_mask")), "reuse",
                          reuse_meaning(json_object_get(experiments, "reuse")));
    json_t *sched = io_meaning(json_object_get(experiments, "scheduler"));
    if (sched)
        json_object_set_new(m, "scheduler", sched);
    return m;
}
