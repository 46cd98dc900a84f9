/*
 * The L2 partition probe's analysis (l2_parts.h): from the load times to
 * the SMs' partitions, the lines' homes and the verdict.
 *
 * DESIGN
 * Near and far are told apart by the times themselves: the first-read times
 * of every SM are split in two by one-dimensional 2-means (Lloyd's method
 * from the smallest and the largest time), the threshold halfway between
 * the two centres. An SM is in the other partition when it found more than
 * L2P_FAR_SM of the lines far, in the warmer's when it found fewer than
 * L2P_NEAR_SM; anything between makes the grouping not determined. A line
 * is homed in the warmer's partition when most SMs of the other partition
 * found it far; lines where those SMs disagree by more than L2P_AGREE are
 * counted as ambiguous. The home granule is the largest power of two (from
 * one line) over which the consecutive lines never change home; the home
 * function is then fitted as one parity of address bits from the granule's
 * to the page's, plus one constant per page (Gaussian elimination over
 * GF(2), as the L1 set search does for its index bits).
 */
#include "probes/l2_parts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define L2P_FAR_SM 0.25      /* an SM far from more than this share of lines is in the other partition */
#define L2P_NEAR_SM 0.05     /* ... near to all but this share: the warmer's */
#define L2P_AGREE 0.9        /* share of the other partition's SMs that must agree on a line */
#define L2P_MIN_SPLIT 1.15   /* far centre over near centre below this: no second level */
#define MAX_PAGES 64

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Median of n values (copied; 0 for none). */
static double median_u32(const uint32_t *v, size_t n)
{
    if (!n)
        return 0;
    uint32_t *c = malloc(n * sizeof *c);
    if (!c)
        return 0;
    memcpy(c, v, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp_u32);
    double m = n % 2 ? c[n / 2] : 0.5 * ((double)c[n / 2 - 1] + c[n / 2]);
    free(c);
    return m;
}

static const uint32_t *pass_of(const struct l2p_input *in, int s, int pass)
{
    return in->t + ((size_t)s * L2P_PASSES + (size_t)pass) * (size_t)in->n;
}

/* 2-means threshold over every measured SM's first-read times. */
static double split_times(const struct l2p_input *in, double *c_near, double *c_far)
{
    double lo = INFINITY, hi = 0;
    for (int s = 0; s < in->nsm; s++)
        for (int j = 0; in->measured[s] && j < in->n; j++) {
            double x = pass_of(in, s, 2)[j];
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
    for (int it = 0; it < 50 && hi > lo; it++) {
        double thr = 0.5 * (lo + hi), s0 = 0, s1 = 0;
        size_t n0 = 0, n1 = 0;
        for (int s = 0; s < in->nsm; s++)
            for (int j = 0; in->measured[s] && j < in->n; j++) {
                double x = pass_of(in, s, 2)[j];
                if (x <= thr)
                    s0 += x, n0++;
                else
                    s1 += x, n1++;
            }
        double nlo = n0 ? s0 / n0 : lo, nhi = n1 ? s1 / n1 : hi;
        if (nlo == lo && nhi == hi)
            break;
        lo = nlo;
        hi = nhi;
    }
    *c_near = lo;
    *c_far = hi;
    return 0.5 * (lo + hi);
}

/* Share of lines SM s found slower than thr on its first read. */
static double far_share(const struct l2p_input *in, int s, double thr)
{
    const uint32_t *f = pass_of(in, s, 2);
    int k = 0;
    for (int j = 0; j < in->n; j++)
        k += f[j] > thr;
    return (double)k / in->n;
}

/* Largest power-of-two granule (bytes, >= 128) over which the consecutive
 * lines at the start of the list keep one home (addr[0] is granule-aligned
 * for every granule tested: the region is page-aligned). */
static uint64_t home_granule(const struct l2p_input *in, const unsigned char *homed)
{
    int consecutive = 1; /* the lines from the first on, one line apart */
    while (consecutive < in->n && in->addr[consecutive] == in->addr[0] + 128 * (uint64_t)consecutive)
        consecutive++;
    uint64_t g = 128;
    while (g * 2 <= (uint64_t)consecutive * 128) {
        uint64_t lines = g * 2 / 128;
        int same = 1;
        for (int j = 0; j < consecutive && same; j++)
            same = homed[j] == homed[j - j % lines];
        if (!same)
            break;
        g *= 2;
    }
    return g;
}

/* Fits homed[j] = parity(addr[j] & mask) ^ c(page of addr[j]) over address
 * bits lo_bit..L2P_PAGE_BITS-1. Returns 0 with the mask (free unknowns
 * taken as 0) and *free_bits the mask bits the lines do not pin down, or -1
 * when no such function fits. */
static int fit_mask(const struct l2p_input *in, const unsigned char *homed, int lo_bit,
                    uint64_t *mask, uint64_t *free_bits)
{
    uint64_t pages[MAX_PAGES], piv_row[64] = {0}, sol = 0;
    unsigned char piv_y[64] = {0}, have[64] = {0};
    int npages = 0, nbits = L2P_PAGE_BITS - lo_bit;
    for (int j = 0; j < in->n; j++) {
        uint64_t page = in->addr[j] >> L2P_PAGE_BITS;
        int pi = 0;
        while (pi < npages && pages[pi] != page)
            pi++;
        if (pi == npages) {
            if (npages == MAX_PAGES || nbits + npages >= 64)
                return -1;
            pages[npages++] = page;
        }
        uint64_t row = ((in->addr[j] & (((uint64_t)1 << L2P_PAGE_BITS) - 1)) >> lo_bit) |
                       ((uint64_t)1 << (nbits + pi));
        unsigned char y = homed[j];
        for (int b = 63; b >= 0 && row; b--) {
            if (!(row >> b & 1))
                continue;
            if (!have[b]) {
                have[b] = 1;
                piv_row[b] = row;
                piv_y[b] = y;
                break;
            }
            row ^= piv_row[b];
            y ^= piv_y[b];
        }
        if (!row && y)
            return -1; /* 0 = 1: the lines contradict every such function */
    }
    for (int b = 0; b < 64; b++) /* a pivot row's other unknowns are all lower */
        if (have[b] && (piv_y[b] ^ (__builtin_popcountll(piv_row[b] & sol & ~((uint64_t)1 << b)) & 1)))
            sol |= (uint64_t)1 << b;
    *mask = *free_bits = 0;
    for (int i = 0; i < nbits; i++) {
        if (sol >> i & 1)
            *mask |= (uint64_t)1 << (lo_bit + i);
        if (!have[i])
            *free_bits |= (uint64_t)1 << (lo_bit + i);
    }
    return 0;
}

static json_t *bits_json(uint64_t m)
{
    json_t *a = json_array();
    for (int b = 0; b < 64; b++)
        if (m >> b & 1)
            json_array_append_new(a, json_integer(b));
    return a;
}

/* Median first-read time over lines j with homed[j] == want, by SMs of
 * group g (part[s] == g), pass p. */
static double median_where(const struct l2p_input *in, const signed char *part, int g, int p,
                           const unsigned char *homed, int want)
{
    size_t cap = (size_t)in->nsm * (size_t)in->n, k = 0;
    uint32_t *v = malloc(cap * sizeof *v);
    if (!v)
        return 0;
    for (int s = 0; s < in->nsm; s++)
        for (int j = 0; part[s] == g && j < in->n; j++)
            if (homed[j] == want)
                v[k++] = pass_of(in, s, p)[j];
    double m = median_u32(v, k);
    free(v);
    return m;
}

static json_t *verdict(json_t *o, const char *v, const char *reason)
{
    json_object_set_new(o, "verdict", json_string(v));
    if (reason)
        json_object_set_new(o, "reason", json_string(reason));
    return o;
}

/* Homes and home function, once the SMs are grouped. */
static void homes_json(const struct l2p_input *in, const signed char *part, unsigned char *homed,
                       json_t *o)
{
    int other = 0, ambiguous = 0, far_lines = 0;
    for (int s = 0; s < in->nsm; s++)
        other += part[s] == 1;
    for (int j = 0; j < in->n; j++) {
        int k = 0;
        for (int s = 0; s < in->nsm; s++)
            k += part[s] == 1 && pass_of(in, s, 2)[j] > json_real_value(json_object_get(o, "threshold_cycles"));
        homed[j] = 2 * k > other; /* 1: homed in the warmer's partition */
        far_lines += homed[j];
        ambiguous += k > (1 - L2P_AGREE) * other && k < L2P_AGREE * other;
    }
    json_object_set_new(o, "far_fraction", json_real((double)far_lines / in->n));
    json_object_set_new(o, "ambiguous_lines", json_integer(ambiguous));
    uint64_t g = home_granule(in, homed), mask = 0, free_bits = 0;
    int lo = __builtin_ctzll(g);
    json_t *home = json_pack("{s:I,s:i}", "granule_bytes", (json_int_t)g, "page_bits", L2P_PAGE_BITS);
    if (fit_mask(in, homed, lo, &mask, &free_bits) == 0) {
        json_object_set_new(home, "mask_bits", bits_json(mask));
        json_object_set_new(home, "unpinned_bits", bits_json(free_bits));
    } else {
        json_object_set_new(home, "mask_bits", json_null());
    }
    json_object_set_new(o, "home", home);
}

json_t *l2p_analyze(const struct l2p_input *in)
{
    json_t *o = json_pack("{s:i,s:i}", "warmer_sm", (int)in->warmer, "lines", in->n);
    signed char *part = malloc((size_t)in->nsm);
    unsigned char *homed = calloc((size_t)in->n, 1);
    json_t *sm_part = json_array();
    int groups[2] = {0, 0}, between = 0, measured = 0;
    double c_near, c_far;
    if (!part || !homed || !sm_part || in->n < 1) {
        free(part);
        free(homed);
        json_decref(sm_part);
        return verdict(o, "not determined", "out of memory or no lines");
    }
    for (int s = 0; s < in->nsm; s++)
        measured += in->measured[s];
    double thr = measured ? split_times(in, &c_near, &c_far) : 0;
    json_object_set_new(o, "threshold_cycles", json_real(thr));
    for (int s = 0; s < in->nsm; s++) {
        part[s] = -1;
        if (in->measured[s]) {
            double f = far_share(in, s, thr);
            part[s] = f > L2P_FAR_SM ? 1 : f < L2P_NEAR_SM ? 0 : -1;
            between += part[s] < 0;
            if (part[s] >= 0)
                groups[part[s]]++;
        }
        json_array_append_new(sm_part, part[s] >= 0 ? json_integer(part[s]) : json_null());
    }
    json_object_set_new(o, "sm_partition", sm_part);
    json_object_set_new(o, "sms_per_partition", json_pack("[i,i]", groups[0], groups[1]));
    const char *why = NULL;
    if (!measured)
        why = "no SM was measured";
    else if (c_far < L2P_MIN_SPLIT * c_near || !groups[1])
        why = "";
    else if (between)
        why = "some SMs found part of the lines far, but too few for the other partition";
    else if (!groups[0])
        why = "no SM shares the warmer's partition";
    if (why && !*why) {
        json_object_set_new(o, "cycles", json_pack("{s:f}", "near", c_near));
        free(part);
        free(homed);
        return verdict(o, "one partition", NULL);
    }
    if (!why) {
        homes_json(in, part, homed, o);
        double far_second = median_where(in, part, 1, 3, homed, 1);
        double near_first = median_where(in, part, 0, 2, homed, 1);
        json_object_set_new(o, "cycles", json_pack("{s:f,s:f,s:f,s:f,s:f}",
            "near", near_first, "far", median_where(in, part, 1, 2, homed, 1),
            "far_second_read", far_second,
            /* the warmer's first read: a miss homed with it, and one homed away */
            "memory_home_near", median_where(in, part, 0, 0, homed, 1),
            "memory_home_far", median_where(in, part, 0, 0, homed, 0)));
        /* a copy was kept if the second read of a far line costs a near one */
        json_object_set_new(o, "copies_kept", json_boolean(far_second < thr));
        double ff = json_real_value(json_object_get(o, "far_fraction"));
        if (ff <= 0 || ff >= 1)
            why = "the other partition's SMs found no line near, or none far";
    }
    free(part);
    free(homed);
    return verdict(o, why ? "not determined" : "two partitions", why);
}
