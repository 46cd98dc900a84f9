/*
 * The statistics of a fleet: the distribution of one figure over the GPUs
 * of one model, and the rule that calls a GPU an outlier.
 *
 * DESIGN
 * Fleets are not Gaussian: a few broken or throttled cards drag a mean and
 * a standard deviation toward themselves and hide. The median and the
 * median absolute deviation (MAD) do not move until half the fleet has
 * moved, so they describe "what this model normally does" even with the
 * outliers in the sample. 1.4826 x MAD estimates the standard deviation of
 * the normal part (it is the factor that makes MAD consistent for a normal
 * distribution). The rule (docs/fleet.md):
 *   outlier  <=>  n >= min_devices
 *                 and |x - median| > k x 1.4826 x MAD
 *                 and |x - median| > min_relative x |median|
 * k = 6 because a fleet view tests every figure of every GPU: at 10,000
 * GPUs x ~200 figures that is 2 million tests, and a normal deviate passes
 * 6 sigma with probability 2e-9, so noise alone flags nothing; a card a few
 * percent off its siblings still stands far beyond 6 robust sigmas of a
 * probe whose repeats agree to a fraction of a percent. min_relative (2 %)
 * keeps a figure whose spread is nil (integer latencies, MAD 0) from calling
 * any difference at all an outlier: a difference smaller than the clock's
 * own wander is not a different GPU. Fewer than min_devices (5) peers are
 * no population to differ from.
 * Categories (a bank map, a verdict) are compared by equality: the most
 * common value is the norm when more than half the GPUs hold it, and a GPU
 * with another value is an outlier.
 * Pure C.
 */
#ifndef GPUPROBE_FLEET_STATS_H
#define GPUPROBE_FLEET_STATS_H

#include <stddef.h>

#define FLEET_MAD_SCALE 1.4826

struct fleet_rule {
    double k;              /* robust standard deviations */
    double min_relative;   /* of |median| */
    size_t min_devices;
};

#define FLEET_RULE_DEFAULT ((struct fleet_rule){6.0, 0.02, 5})

struct fleet_dist {
    size_t n;
    double median, mad, min, max;
};

/* The distribution of values[0..n) (reordered in place; scratch holds n
 * doubles). n == 0 gives an all-zero distribution. */
void fleet_dist_of(double *values, size_t n, double *scratch, struct fleet_dist *out);

/* Whether x is an outlier of d under r; *mads (may be NULL) gets
 * |x - median| in robust standard deviations (infinity when MAD is 0 and x
 * differs, 0 when equal). */
int fleet_is_outlier(const struct fleet_rule *r, const struct fleet_dist *d, double x,
                     double *mads);

/* The half-width of the band around the median inside which a value is no
 * outlier: x is one exactly when |x - median| > the half-width (what
 * fleet_is_outlier decides, without a division per value); a negative
 * half-width when d has too few devices to judge. */
double fleet_outlier_half_width(const struct fleet_rule *r, const struct fleet_dist *d);

/* The bounds outside which a value is an outlier (what a chart draws):
 * low and high, 0; -1 and nothing set when there are too few devices for
 * the rule to apply (no bounds, not a band of width 0 at the median). */
int fleet_outlier_bounds(const struct fleet_rule *r, const struct fleet_dist *d, double *low,
                         double *high);

#endif
