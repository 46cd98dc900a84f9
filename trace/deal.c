/*
 * Dealing blocks to SMs in a measured order (see deal.h).
 */
#include "trace/deal.h"

#include <stdlib.h>
#include <string.h>

#include "util/errf.h"

int trace_deal_check(const struct trace_deal *d, uint32_t sms, char *why, size_t whylen)
{
    unsigned char *seen = calloc(sms, 1);
    if (!seen)
        return errf(why, whylen, "out of memory");
    uint32_t distinct = 0;
    for (uint32_t i = 0; i < d->n; i++) {
        if (d->sm[i] >= sms) {
            free(seen);
            return errf(why, whylen, "the dealing order names SM %u, and the sort has %u SMs (sms)",
                        d->sm[i], sms);
        }
        distinct += !seen[d->sm[i]];
        seen[d->sm[i]] = 1;
    }
    uint32_t missing = 0;
    while (missing < sms && seen[missing])
        missing++;
    free(seen);
    if (distinct < sms)
        return errf(why, whylen, "the dealing order deals to %u of the sort's %u SMs (sms); SM %u is "
                    "not in it", distinct, sms, missing);
    return 0;
}

int trace_deal_wave(const struct trace_deal *d, uint32_t sms, uint32_t bps, uint32_t *wave,
                    char *why, size_t whylen)
{
    if (!d || !d->n)
        return errf(why, whylen, "no dealing order");
    if (trace_deal_check(d, sms, why, whylen))
        return -1;
    uint32_t *held = calloc(sms, sizeof *held);
    if (!held)
        return errf(why, whylen, "out of memory");
    /* every SM is in the order, so each pass over it places at least one
     * block until all are full: the loop ends */
    uint64_t wave_n = (uint64_t)sms * bps, placed = 0;
    for (uint64_t i = 0; placed < wave_n; i++) {
        uint16_t s = d->sm[i % d->n];
        if (held[s] < bps) {
            held[s]++;
            wave[placed++] = s;
        }
    }
    free(held);
    return 0;
}

int trace_deal_from_json(const json_t *list, struct trace_deal *d, char *why, size_t whylen)
{
    memset(d, 0, sizeof *d);
    size_t n = json_array_size(list);
    if (!json_is_array(list) || n == 0 || n > (size_t)TRACE_DEAL_MAX_SMS * 64)
        return errf(why, whylen, "the dealing order must be a list of 1 to %u SM ids",
                    TRACE_DEAL_MAX_SMS * 64);
    d->sm = malloc(n * sizeof *d->sm);
    if (!d->sm)
        return errf(why, whylen, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(list, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
            json_integer_value(v) >= TRACE_DEAL_MAX_SMS) {
            trace_deal_free(d);
            return errf(why, whylen, "the dealing order's entry %zu is not an SM id from 0 to %u", i,
                        TRACE_DEAL_MAX_SMS - 1);
        }
        d->sm[i] = (uint16_t)json_integer_value(v);
    }
    d->n = (uint32_t)n;
    return 0;
}

void trace_deal_free(struct trace_deal *d)
{
    free(d->sm);
    d->sm = NULL;
    d->n = 0;
}

int trace_deal_placement(const struct trace_params *p, uint32_t **wave, char *why, size_t whylen)
{
    *wave = NULL;
    if (p->placement != TRACE_PLACEMENT_DEALT)
        return 0;
    if (!p->deal)
        return errf(why, whylen, "placement: dealt needs the device's measured dealing order "
                    "(gpuprobe trace sort --device UUID --db PATH, from its memory result)");
    uint32_t *w = malloc((size_t)p->sms * p->blocks_per_sm * sizeof *w);
    if (!w)
        return errf(why, whylen, "out of memory");
    if (trace_deal_wave(p->deal, p->sms, p->blocks_per_sm, w, why, whylen)) {
        free(w);
        return -1;
    }
    *wave = w;
    return 0;
}
