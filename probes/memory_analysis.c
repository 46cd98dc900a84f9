/*
 * Plateaus and steps of a latency curve (see memory.h), and the JSON forms
 * the memory probe writes and reads.
 *
 * DESIGN
 * A curve is a list of (footprint, median cycles) in increasing footprint.
 * A plateau starts where min_points consecutive points all lie within the
 * tolerance (max(rel_tol x value, abs_tol)) of their own median. It then
 * takes every following point within the tolerance of the median of the
 * points it holds so far: a median of many points on the level, so one end
 * of a level that drifts a little does not decide alone where the level
 * stops (the ca and cg curves of one L2 then agree on its capacity). A lone
 * point off the level whose two successors (or one, at the curve's end) are
 * back on it is a glitch and is skipped, not a step; anything else ends the
 * plateau. A run whose least-squares trend (cycles against log2 of the
 * footprint, relative to its level) exceeds max_slope per octave is a ramp,
 * not a plateau, and the search moves on one point. Past a cache's capacity
 * a random chase still hits in it with a probability that falls as
 * capacity / footprint, so the curve climbs gradually; every window of a
 * few points along that climb lies within the tolerance of its median, and
 * only the trend tells it from a level (on a real H200 the climb past the
 * L2 runs at 8 % per octave at its flattest, past 128 MiB, the L2 level
 * itself at under 1 %).
 * Points between two plateaus are the transition and belong to
 * neither. A level's capacity lies between the largest footprint on it
 * (up_to_bytes) and the next footprint measured (next_bytes): the probe
 * refines the sweep inside that interval. If the curve ends still rising
 * past the last plateau (at least two points, both above its tolerance),
 * that end is reported as a last level with plateau = 0 whose cycles, the
 * largest footprint's latency, are a lower bound.
 * Nothing here knows any architecture: levels are numbered by order.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/memory.h"
#include "probes/gpu/stats.h"

/* 8 %: the L2 level of a real H200 (median 279 cycles) drifts by about
 * that much either way from 1 KiB to its capacity (260 to 299 cycles),
 * while every step between levels is several times larger. 2 cycles: a
 * floor for small latencies, where one cycle is already a few percent.
 * 3 points: 3/4 of an octave at the probe's quarter-octave sweep. 3 % per
 * octave: between the L2 level's drift (under 1 %) and the climb past it
 * (8 % at its flattest). */
void mem_analysis_defaults(struct mem_analysis_opts *o)
{
    o->rel_tol = 0.08;
    o->abs_tol = 2.0;
    o->min_points = 3;
    o->max_slope = 0.03;
}

static double tolerance(const struct mem_analysis_opts *o, double ref)
{
    double t = o->rel_tol * ref;
    return t > o->abs_tol ? t : o->abs_tol;
}

static int near(const struct mem_analysis_opts *o, double v, double ref)
{
    return fabs(v - ref) <= tolerance(o, ref);
}

/* Median of the cycles of pts[from .. from+n-1]; n <= 64 per call site. */
static double median_cycles(const struct mem_point *pts, size_t from, size_t n)
{
    double v[64];
    if (n > 64)
        n = 64;
    for (size_t i = 0; i < n; i++)
        v[i] = pts[from + i].cycles;
    return spread_of(v, n).median;
}

/* The first index >= i where a plateau can start, or n if none. */
static size_t plateau_start(const struct mem_point *pts, size_t n, size_t i,
                            const struct mem_analysis_opts *o, double *anchor)
{
    size_t m = (size_t)o->min_points;
    for (size_t j = i; j + m <= n; j++) {
        double med = median_cycles(pts, j, m);
        size_t k = 0;
        while (k < m && near(o, pts[j + k].cycles, med))
            k++;
        if (k == m) {
            *anchor = med;
            return j;
        }
    }
    return n;
}

/* Whether pts[k] (off the level) is a lone glitch: the next two points,
 * or the only one left, are back on it. */
static int glitch(const struct mem_point *pts, size_t n, size_t k,
                  const struct mem_analysis_opts *o, double ref)
{
    if (k + 1 >= n)
        return 0;
    if (!near(o, pts[k + 1].cycles, ref))
        return 0;
    return k + 2 >= n || near(o, pts[k + 2].cycles, ref);
}

/* Scratch for one plateau: its members' indices and a copy of their
 * cycles (sorted by spread_of), n entries each. */
struct members {
    size_t *idx;
    double *val;
    size_t n;
};

static double members_median(const struct mem_point *pts, struct members *m)
{
    for (size_t i = 0; i < m->n; i++)
        m->val[i] = pts[m->idx[i]].cycles;
    return spread_of(m->val, m->n).median;
}

/* Least-squares slope of cycles against log2(bytes) over the members,
 * relative to level: the change per octave. */
static double trend(const struct mem_point *pts, const struct members *m, double level)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0, k = (double)m->n;
    for (size_t i = 0; i < m->n; i++) {
        double x = log2(pts[m->idx[i]].bytes), y = pts[m->idx[i]].cycles;
        sx += x, sy += y, sxx += x * x, sxy += x * y;
    }
    double den = k * sxx - sx * sx;
    if (m->n < 2 || den <= 0)
        return 0;
    return (k * sxy - sx * sy) / den / level;
}

/* Extends the plateau that starts at j with the anchor of its first
 * min_points; each later point is compared with the median of the members
 * so far. Fills lv and m; returns the plateau's last index. */
static size_t plateau_extend(const struct mem_point *pts, size_t n, size_t j, double anchor,
                             const struct mem_analysis_opts *o, struct mem_level *lv,
                             struct members *m)
{
    size_t last = j;
    double ref = anchor;
    m->n = 0;
    for (size_t k = j; k < n; k++) {
        if (near(o, pts[k].cycles, ref)) {
            m->idx[m->n++] = k;
            last = k;
            if (m->n >= (size_t)o->min_points)
                ref = members_median(pts, m);
        } else if (!glitch(pts, n, k, o, ref)) {
            break;
        }
    }
    lv->cycles = members_median(pts, m);
    lv->from_bytes = pts[j].bytes;
    lv->up_to_bytes = pts[last].bytes;
    lv->next_bytes = last + 1 < n ? pts[last + 1].bytes : 0;
    lv->points = (int)m->n;
    lv->plateau = 1;
    return last;
}

/* The rising end after the last plateau (which ended at index last), if
 * there is one: returns 1 and fills lv. */
static int rising_end(const struct mem_point *pts, size_t n, size_t last, const struct mem_level *prev,
                      const struct mem_analysis_opts *o, struct mem_level *lv)
{
    if (last + 2 >= n)
        return 0;
    double lim = prev->cycles + tolerance(o, prev->cycles);
    if (pts[n - 1].cycles <= lim || pts[n - 2].cycles <= lim)
        return 0;
    memset(lv, 0, sizeof *lv);
    lv->level = prev->level + 1;
    lv->cycles = pts[n - 1].cycles;
    lv->from_bytes = pts[last + 1].bytes;
    lv->up_to_bytes = pts[n - 1].bytes;
    lv->points = (int)(n - 1 - last);
    lv->plateau = 0;
    return 1;
}

static int valid_curve(const struct mem_point *pts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(pts[i].cycles) || !isfinite(pts[i].bytes) || pts[i].cycles <= 0 ||
            pts[i].bytes <= 0)
            return 0;
        if (i > 0 && pts[i].bytes <= pts[i - 1].bytes)
            return 0;
    }
    return 1;
}

int mem_find_levels(const struct mem_point *pts, size_t n, const struct mem_analysis_opts *o,
                    struct mem_level *out, size_t max)
{
    if (!valid_curve(pts, n) || o->min_points < 1 || o->min_points > 64 || o->max_slope <= 0)
        return -1;
    struct members m = {malloc((n ? n : 1) * sizeof *m.idx), malloc((n ? n : 1) * sizeof *m.val),
                        0};
    size_t count = 0, i = 0, last = 0;
    while (m.idx && m.val && i < n && count < max) {
        double anchor = 0;
        size_t j = plateau_start(pts, n, i, o, &anchor);
        if (j >= n)
            break;
        struct mem_level *lv = &out[count];
        memset(lv, 0, sizeof *lv);
        lv->level = (int)count + 1;
        size_t end = plateau_extend(pts, n, j, anchor, o, lv, &m);
        if (fabs(trend(pts, &m, lv->cycles)) > o->max_slope) {
            i = j + 1; /* a ramp: look for a level further on */
            continue;
        }
        last = end;
        count++;
        i = last + 1;
    }
    int oom = !m.idx || !m.val;
    free(m.idx);
    free(m.val);
    if (oom)
        return -1;
    if (count > 0 && count < max && rising_end(pts, n, last, &out[count - 1], o, &out[count]))
        count++;
    return (int)count;
}

static json_t *size_or_null(double b, int known)
{
    return known && b > 0 ? json_integer((json_int_t)llround(b)) : json_null();
}

static json_t *level_json(const struct mem_level *l, double l2_bytes)
{
    int steps = l->plateau && l->next_bytes > 0;
    json_t *frac = steps && l2_bytes > 0 ? json_real(l->up_to_bytes / l2_bytes) : json_null();
    return json_pack("{s:i,s:f,s:b,s:o,s:o,s:o,s:o,s:i,s:o}", "level", l->level, "cycles",
                     l->cycles, "plateau", l->plateau, "from_bytes",
                     size_or_null(l->from_bytes, 1), "up_to_bytes",
                     size_or_null(l->up_to_bytes, steps), "next_bytes",
                     size_or_null(l->next_bytes, steps), "last_bytes",
                     size_or_null(l->up_to_bytes, !steps), "points", l->points, "l2_fraction",
                     frac);
}

json_t *mem_levels_json(const struct mem_level *lv, int n, double l2_bytes)
{
    json_t *arr = json_array();
    for (int i = 0; arr && i < n; i++) {
        json_t *o = level_json(&lv[i], l2_bytes);
        if (!o || json_array_append_new(arr, o) < 0) {
            json_decref(arr);
            return NULL;
        }
    }
    return arr;
}

static int point_from_json(const json_t *p, struct mem_point *pt, size_t i, char *err,
                           size_t errlen)
{
    const json_t *b = json_object_get(p, "bytes");
    const json_t *c = json_object_get(p, "cycles");
    const json_t *m = json_is_object(c) ? json_object_get(c, "median") : NULL;
    if (!json_is_number(b) || !json_is_number(m)) {
        snprintf(err, errlen, "point %zu: needs numbers bytes and cycles.median", i);
        return -1;
    }
    pt->bytes = json_number_value(b);
    pt->cycles = json_number_value(m);
    return 0;
}

int mem_curve_from_json(const json_t *curve, struct mem_point **pts, size_t *n, char *err,
                        size_t errlen)
{
    *pts = NULL;
    *n = 0;
    if (!json_is_array(curve) || json_array_size(curve) == 0) {
        snprintf(err, errlen, "a curve is a non-empty array");
        return -1;
    }
    size_t len = json_array_size(curve);
    struct mem_point *p = calloc(len, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < len; i++)
        if (point_from_json(json_array_get(curve, i), &p[i], i, err, errlen) < 0) {
            free(p);
            return -1;
        }
    *pts = p;
    *n = len;
    return 0;
}
