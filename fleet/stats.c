/*
 * Robust distributions and the outlier rule (see stats.h).
 */
#include "fleet/stats.h"

#include <math.h>
#include <string.h>

static void swap(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

static double median3(double a, double b, double c)
{
    if (a > b)
        swap(&a, &b);
    if (b > c)
        swap(&b, &c);
    return a > b ? a : b;
}

/* Leaves the k-th smallest of v[0..n) at v[k], every smaller one before it.
 * The partition is three-way: a MAD's deviations are often mostly equal
 * (many zeros), which would make a two-way partition quadratic. */
static double select_kth(double *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n; /* the window [lo, hi) holds the k-th */
    while (hi - lo > 1) {
        double p = median3(v[lo], v[lo + (hi - lo) / 2], v[hi - 1]);
        size_t lt = lo, i = lo, gt = hi; /* [lo,lt) < p, [lt,i) == p, [gt,hi) > p */
        while (i < gt) {
            if (v[i] < p)
                swap(&v[lt++], &v[i++]);
            else if (v[i] > p)
                swap(&v[i], &v[--gt]);
            else
                i++;
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return p;
    }
    return v[k];
}

/* The median of v[0..n), n > 0 (v reordered). */
static double median(double *v, size_t n)
{
    double upper = select_kth(v, n, n / 2);
    if (n % 2)
        return upper;
    /* the lower middle is the largest of the half below */
    double lower = v[0];
    for (size_t i = 1; i < n / 2; i++)
        if (v[i] > lower)
            lower = v[i];
    return (lower + upper) / 2;
}

void fleet_dist_of(double *values, size_t n, double *scratch, struct fleet_dist *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0)
        return;
    out->n = n;
    out->min = out->max = values[0];
    for (size_t i = 1; i < n; i++) {
        if (values[i] < out->min)
            out->min = values[i];
        if (values[i] > out->max)
            out->max = values[i];
    }
    out->median = median(values, n);
    for (size_t i = 0; i < n; i++)
        scratch[i] = fabs(values[i] - out->median);
    out->mad = median(scratch, n);
}

double fleet_outlier_half_width(const struct fleet_rule *r, const struct fleet_dist *d)
{
    double a = r->k * (FLEET_MAD_SCALE * d->mad);
    double b = r->min_relative * fabs(d->median);
    return d->n >= r->min_devices ? (a > b ? a : b) : -1;
}

int fleet_is_outlier(const struct fleet_rule *r, const struct fleet_dist *d, double x,
                     double *mads)
{
    double diff = fabs(x - d->median);
    double sigma = FLEET_MAD_SCALE * d->mad;
    if (mads)
        *mads = sigma > 0 ? diff / sigma : (diff > 0 ? INFINITY : 0);
    double half = fleet_outlier_half_width(r, d);
    return half >= 0 && diff > half;
}

int fleet_outlier_bounds(const struct fleet_rule *r, const struct fleet_dist *d, double *low,
                         double *high)
{
    double half = fleet_outlier_half_width(r, d);
    if (half < 0)
        return -1;
    *low = d->median - half;
    *high = d->median + half;
    return 0;
}
