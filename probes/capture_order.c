/*
 * The order in which a capture's records are written (see capture.h): by
 * thread, each thread's records in increasing slot order.
 *
 * DESIGN
 * The records come off the device in slot order, so a STABLE sort by
 * thread id alone gives (thread, slot) order. An LSD radix sort over the
 * 32-bit thread id, two passes of 16 bits, each a counting sort of the
 * slot indexes (stable by construction): O(n + 2^16) per pass and 12 bytes
 * a record of scratch, instead of qsort's O(n log n) comparisons. Slots are
 * 32-bit, which capture_run guarantees (at most 2^32-1 records).
 */
#include "probes/capture.h"

#include <stdlib.h>
#include <string.h>

#define DIGIT_BITS 16
#define DIGITS (1u << DIGIT_BITS)

static uint32_t tid_of(const unsigned char *recs, uint32_t slot)
{
    return ptxi_record_at(recs, slot).tid;
}

int capture_order(const unsigned char *recs, uint64_t n, uint32_t *order)
{
    uint32_t *tmp = malloc((n ? n : 1) * sizeof *tmp);
    uint32_t *tids = malloc((n ? n : 1) * sizeof *tids);
    uint64_t *count = calloc(DIGITS, sizeof *count);
    if (!tmp || !tids || !count || n > UINT32_MAX) {
        free(tmp);
        free(tids);
        free(count);
        return -1;
    }
    for (uint64_t s = 0; s < n; s++) {
        tmp[s] = (uint32_t)s;
        tids[s] = tid_of(recs, (uint32_t)s);
    }
    uint32_t *src = tmp, *dst = order;
    for (unsigned shift = 0; shift < 32; shift += DIGIT_BITS) {
        memset(count, 0, DIGITS * sizeof *count);
        for (uint64_t i = 0; i < n; i++)
            count[(tids[src[i]] >> shift) & (DIGITS - 1)]++;
        uint64_t at = 0;
        for (uint32_t d = 0; d < DIGITS; d++) {
            uint64_t c = count[d];
            count[d] = at;
            at += c;
        }
        for (uint64_t i = 0; i < n; i++)
            dst[count[(tids[src[i]] >> shift) & (DIGITS - 1)]++] = src[i];
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    /* two passes: the result is back in tmp (src); hand it over */
    if (src != order)
        memcpy(order, src, n * sizeof *order);
    free(tmp);
    free(tids);
    free(count);
    return 0;
}
