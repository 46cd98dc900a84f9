/*
 * The dual-issue probe's arithmetic (see dual_issue.h): rates, nominal
 * rates, the FP32 peak, and the verdict read back from the result rows.
 *
 * DESIGN
 * Everything here is plain arithmetic over numbers the run measured or
 * stored, so it is tested without a GPU and a stored document can be
 * re-judged. Whether the machine dual-issues is decided from the rates
 * alone, against the bound one instruction per scheduler per clock puts
 * on any single-issue machine (32 lanes x 4 schedulers = 128 FFMA per SM
 * per clock), never from the peak table: a table entry cannot make a
 * measurement say more than it does.
 */
#include <stdio.h>
#include <string.h>

#include "probes/dual_issue.h"

double dual_rate(unsigned warps_per_block, unsigned ffma_per_iter, unsigned iters,
                 double cycles)
{
    return cycles > 0 ? (double)DUAL_LANES * warps_per_block * ffma_per_iter * iters / cycles
                      : 0;
}

double dual_nominal(unsigned ffma, unsigned cycles)
{
    return cycles ? (double)DUAL_LANES * DUAL_SCHEDULERS * ffma / cycles : 0;
}

/* FP32 lanes per SM, NVIDIA's published figures per compute capability. */
static const struct {
    int major, minor, lanes;
} peaks[] = {
    {7, 0, 64},  {7, 2, 64},  {7, 5, 64},  {8, 0, 64},   {8, 6, 128},
    {8, 7, 128}, {8, 9, 128}, {9, 0, 128}, {10, 0, 128}, {12, 0, 128},
};

int dual_peak_lanes(int major, int minor)
{
    for (size_t i = 0; i < sizeof peaks / sizeof peaks[0]; i++)
        if (peaks[i].major == major && peaks[i].minor == minor)
            return peaks[i].lanes;
    return 0;
}

json_t *dual_ratio_json(double value, double ref)
{
    return ref > 0 ? json_real(value / ref) : json_null();
}

/* ---- the verdict ------------------------------------------------------------ */

/* The median rate of a row; -1 when absent. */
static double median(const json_t *row)
{
    json_t *m = json_object_get(json_object_get(row, "ffma_per_sm_clock"), "median");
    return json_is_number(m) ? json_number_value(m) : -1;
}

static int is(const json_t *row, const char *member, const char *value)
{
    const char *s = json_string_value(json_object_get(row, member));
    return s && strcmp(s, value) == 0;
}

/* At one warp per scheduler: the fastest edited pattern row (the
 * reference excluded), and the rows of the reference and the compiled
 * kernel with conflict-free (or, compiled, its own) operands. */
struct one_warp {
    const json_t *best, *reference, *compiled;
};

static struct one_warp one_warp_rows(const json_t *results)
{
    struct one_warp w = {NULL, NULL, NULL};
    size_t i;
    json_t *row;
    json_array_foreach(results, i, row) {
        if (json_integer_value(json_object_get(row, "warps_per_scheduler")) != 1)
            continue;
        if (is(row, "pattern", "compiled"))
            w.compiled = row;
        else if (is(row, "pattern", DUAL_REFERENCE)) {
            if (is(row, "operands", "conflict_free"))
                w.reference = row;
        } else if (!w.best || median(row) > median(w.best))
            w.best = row;
    }
    return w;
}

static const char *operands_words(const json_t *row)
{
    return is(row, "operands", "naive") ? "naive" : "conflict-free";
}

int dual_verdict(const json_t *results, char *text, size_t len)
{
    const double bound = (double)DUAL_LANES * DUAL_SCHEDULERS;
    struct one_warp w = one_warp_rows(results);
    if (!w.best) {
        snprintf(text, len, "No pattern was measured at one warp per scheduler.");
        return 0;
    }
    const char *pat = json_string_value(json_object_get(w.best, "pattern"));
    double best = median(w.best), ref = w.reference ? median(w.reference) : -1,
           comp = w.compiled ? median(w.compiled) : -1;
    int seen = best > bound * DUAL_THRESHOLD;
    int n = seen ? snprintf(text, len, "Dual issue observed: at one warp per scheduler pattern "
                            "%s (%s operands) ran %.1f FFMA per SM per clock, above the %.0f "
                            "that one instruction per scheduler per clock allows",
                            pat, operands_words(w.best), best, bound)
                 : snprintf(text, len, "No dual issue: at one warp per scheduler no pattern ran "
                            "above the %.0f FFMA per SM per clock that one instruction per "
                            "scheduler per clock allows (best: %s with %s operands, %.1f)",
                            bound, pat, operands_words(w.best), best);
    if (n < 0 || (size_t)n >= len)
        return seen;
    if (ref > 0)
        n += snprintf(text + n, len - (size_t)n, "; the single-issue reference ran %.1f (best "
                      "pattern / reference = %.3f)", ref, best / ref);
    if (comp > 0 && n > 0 && (size_t)n < len)
        snprintf(text + n, len - (size_t)n, "; the compiled kernel ran %.1f.", comp);
    else if (n > 0 && (size_t)n < len)
        snprintf(text + n, len - (size_t)n, ".");
    return seen;
}
