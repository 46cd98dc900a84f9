/*
 * The distributed-shared-memory figures from its timings (dsmem.h's
 * dsm_analyze): plain C over numbers, so it is tested on made timings
 * (tests/unit/test_dsmem.c) without a GPU.
 *
 * DESIGN
 * Latency: a timed pass is DSM_CHASE_LOADS dependent loads, so cycles a
 * load = pass cycles / DSM_CHASE_LOADS, one figure per repeat, reported as
 * the spread over repeats. Bandwidth: a repeat's figure is the cluster's
 * bytes over its slowest block's cycles (the blocks start together after a
 * barrier; the cluster has moved everything only when the last is done),
 * shared among the SMs the blocks ran on: bytes x blocks / (max cycles x
 * distinct SMs). GB/s is that median at the measured SM clock, per SM.
 * The size's agreement is the driver's width, the blocks' rank count and
 * the size asked all equal; an entry that did not launch keeps the reason.
 */
#include "probes/dsmem.h"

#include <stdlib.h>

#include "probes/gpu/stats.h"

static const char *const target_names[DSM_TARGETS] = {"local", "neighbour", "farthest"};
static const char *const dist_names[DSM_DISTS] = {"local", "remote"};

/* The spread of one latency target over its repeats. */
static json_t *latency_json(const struct dsm_raw *r, int t, double *v)
{
    for (int k = 0; k < r->repeats; k++)
        v[k] = (double)r->lat[(size_t)t * (size_t)r->repeats + (size_t)k] / DSM_CHASE_LOADS;
    return spread_json(v, (size_t)r->repeats);
}

/* Bytes a clock an SM, one figure per repeat of distance d; the median
 * into *median. */
static json_t *bandwidth_json(const struct dsm_raw *r, int d, double *v, double *median)
{
    unsigned sms = r->distinct_sms ? r->distinct_sms : r->asked;
    for (int k = 0; k < r->repeats; k++) {
        const uint64_t *blocks = r->bw + ((size_t)d * (size_t)r->repeats + (size_t)k) * r->asked;
        uint64_t slowest = 0;
        for (unsigned b = 0; b < r->asked; b++)
            slowest = blocks[b] > slowest ? blocks[b] : slowest;
        v[k] = slowest ? DSM_BW_BLOCK_BYTES * r->asked / ((double)slowest * sms) : 0;
    }
    json_t *s = spread_json(v, (size_t)r->repeats);
    *median = json_real_value(json_object_get(s, "median"));
    return s;
}

static json_t *figures(const struct dsm_raw *r, json_t *e, double clock_mhz)
{
    double *v = malloc((size_t)r->repeats * sizeof *v);
    if (!v)
        return NULL;
    json_t *lat = json_object(), *bw = json_object(), *gbs = json_object();
    for (int t = 0; t < DSM_TARGETS; t++)
        json_object_set_new(lat, target_names[t], latency_json(r, t, v));
    for (int d = 0; d < DSM_DISTS; d++) {
        double median = 0;
        json_object_set_new(bw, dist_names[d], bandwidth_json(r, d, v, &median));
        json_object_set_new(gbs, dist_names[d], json_real(median * clock_mhz / 1000.0));
    }
    free(v);
    json_object_set_new(e, "latency_cycles", lat);
    json_object_set_new(e, "bytes_per_clk_sm", bw);
    if (clock_mhz > 0)
        json_object_set_new(e, "gb_s_sm", gbs);
    else
        json_decref(gbs);
    return e;
}

json_t *dsm_analyze(const struct dsm_raw *r, double clock_mhz)
{
    int agrees = r->driver_width == (int)r->asked && r->ranks_seen == r->asked;
    json_t *e = json_pack("{s:i,s:o,s:i,s:b,s:b}", "asked", (int)r->asked, "driver_width",
                          r->driver_width >= 0 ? json_integer(r->driver_width) : json_null(),
                          "ranks_seen", (int)r->ranks_seen, "agrees", agrees, "launched",
                          r->launched && r->repeats > 0);
    if (!e)
        return NULL;
    if (r->max_clusters >= 0)
        json_object_set_new(e, "max_active_clusters", json_integer(r->max_clusters));
    if (r->distinct_sms)
        json_object_set_new(e, "distinct_sms", json_integer(r->distinct_sms));
    if (r->error)
        json_object_set_new(e, "error", json_string(r->error));
    if (!r->launched || r->repeats < 1 || !r->lat || !r->bw || r->asked < 1)
        return e;
    if (!figures(r, e, clock_mhz)) {
        json_decref(e);
        return NULL;
    }
    return e;
}
