/*
 * The same-answer check of one buffer (see capture.h, capture_compare).
 *
 * DESIGN
 * Byte for byte first: almost every buffer is equal, and then nothing
 * else is read. Only when bytes differ are the recording pass's records
 * walked once, to learn per 4-byte word of the buffer how many float
 * atomic adds (the sites whose float_add the analyser set: atom/red
 * .add.f32 or .f64, vector forms too) reached it, of
 * which element width, and whether any other write did. A differing
 * element is let through only when float adds alone wrote it: the atomics
 * of a run land in an order the hardware picks, each order rounds
 * differently, and an element reached by m adds (the starting value a
 * term too) carries at most (m - 1) u sum|x| of rounding in any order
 * (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., §4.2),
 * so two orders differ by at most 2 (m - 1) u sum|x|, u the unit
 * roundoff (2^-24, 2^-53). The terms are not known here; the larger of the
 * two results stands in for sum|x|, which is never larger, so the check is
 * at least as strict as the bound.
 */
#include "probes/capture.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Per 4-byte word of the buffer: float adds that reached it, their element
 * width (4 or 8), and whether anything else wrote it. */
struct word {
    uint32_t adds;
    uint8_t width;
    uint8_t other;
};

/* The words of a buffer of `bytes` at device address base, as the records
 * say they were written; NULL when memory runs out. */
static struct word *words_of(uint64_t bytes, uint64_t base, const struct ptxi_kernel *k,
                             const unsigned char *recs, uint64_t nrecs)
{
    uint64_t nw = (bytes + 3) / 4;
    struct word *w = calloc(nw ? nw : 1, sizeof *w);
    if (!w)
        return NULL;
    for (uint64_t i = 0; i < nrecs; i++) {
        struct ptxi_record rec = ptxi_record_at(recs, i);
        if (rec.pc >= k->nsites || !k->sites[rec.pc].is_store || rec.addr < base ||
            rec.addr - base >= bytes)
            continue;
        const struct ptxi_site *s = &k->sites[rec.pc];
        unsigned fw = s->float_add;
        uint64_t from = rec.addr - base;
        for (uint64_t at = from; at < from + s->width && at < bytes; at += 4) {
            struct word *x = &w[at / 4];
            if (fw && (x->width == 0 || x->width == fw)) {
                x->width = (uint8_t)fw;
                x->adds += (fw == 8 && (base + at) % 8) ? 0 : 1; /* an f64 counted on its first word */
            } else {
                x->other = 1;
            }
        }
    }
    return w;
}

/* |a - b| over the allowance of an element of width fw at x and y reached
 * by m float adds: <= 1 is within it; INFINITY when it cannot be let through. */
static double over_allowance(const unsigned char *x, const unsigned char *y, unsigned fw,
                             uint32_t m)
{
    double a, b, u;
    if (fw == 4) {
        float fa, fb;
        memcpy(&fa, x, 4);
        memcpy(&fb, y, 4);
        a = fa, b = fb, u = ldexp(1.0, -24);
    } else {
        memcpy(&a, x, 8);
        memcpy(&b, y, 8);
        u = ldexp(1.0, -53);
    }
    if (isnan(a) || isnan(b) || isinf(a) || isinf(b) || m < 2)
        return INFINITY;
    double allowed = 2.0 * (double)(m - 1) * u * fmax(fabs(a), fabs(b));
    return allowed > 0 ? fabs(a - b) / allowed : INFINITY;
}

int capture_compare(const unsigned char *x, const unsigned char *y, uint64_t bytes, uint64_t base,
                    const struct ptxi_kernel *k, const unsigned char *recs, uint64_t nrecs,
                    struct capture_diff *d)
{
    memset(d, 0, sizeof *d);
    d->first = bytes;
    uint64_t at = 0;
    while (at < bytes && x[at] == y[at])
        at++;
    if (at == bytes)
        return 0;
    struct word *w = words_of(bytes, base, k, recs, nrecs);
    if (!w)
        return -1;
    while (at < bytes) {
        const struct word *e = &w[at / 4];
        unsigned fw = e->width;
        uint64_t start = fw ? at - (base + at) % fw : at;
        uint32_t m = fw == 8 ? w[start / 4].adds : e->adds;
        int whole = fw && start + fw <= bytes && !w[start / 4].other &&
                    !(fw == 8 && w[start / 4 + 1].other);
        double r = whole ? over_allowance(x + start, y + start, fw, m) : INFINITY;
        if (r > 1.0) {
            d->first = at;
            break;
        }
        d->rounded++;
        if (r > d->worst)
            d->worst = r;
        at = start + fw;
        while (at < bytes && x[at] == y[at])
            at++;
    }
    free(w);
    return 0;
}
