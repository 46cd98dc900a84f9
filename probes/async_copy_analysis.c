/*
 * The asynchronous-copy probe's figures from its raw timings (async_copy.h):
 * latency spreads, bandwidth per block and over the GPU, and the summary
 * that sets each method's best against plain loads.
 *
 * DESIGN
 * Plain C over arrays, no GPU: tests/unit/test_async_copy.c feeds made
 * timings. A latency point is the spread of its copies (probes/gpu/stats.h)
 * with the bytes one timed region moved. A bandwidth point's per-SM figure
 * is the median block's bytes per clock (one block per SM, so a straggler
 * SM does not set it); its GB/s is what the GPU moved in the time the
 * slowest block took (the kernel is over only when that one is), converted
 * with the SM clock measured by the memory probe around its run — the
 * blocks' clock64 counts SM cycles.
 */
#include "probes/async_copy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/gpu/stats.h"

json_t *acp_latency_json(const uint32_t *cycles, size_t n)
{
    if (!cycles || n == 0)
        return NULL;
    double *v = malloc(n * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < n; i++)
        v[i] = cycles[i];
    json_t *o = spread_json(v, n);
    free(v);
    return o;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

json_t *acp_bandwidth_json(const uint64_t *t, const uint64_t *block_bytes, size_t nblocks,
                           double clock_mhz)
{
    if (!t || !block_bytes || nblocks == 0)
        return json_pack("{s:s}", "error", "no blocks");
    double *rate = malloc(nblocks * sizeof *rate);
    if (!rate)
        return json_pack("{s:s}", "error", "out of memory");
    uint64_t slowest = 0, total = 0;
    for (size_t b = 0; b < nblocks; b++) {
        if (t[2 * b + 1] <= t[2 * b]) {
            free(rate);
            json_t *o = json_object();
            json_object_set_new(o, "error",
                                t[2 * b + 1] == 0
                                    ? json_sprintf("block %zu gave up waiting for its copies (mbarrier)", b)
                                    : json_sprintf("block %zu's clock did not advance (%llu to %llu)", b,
                                                   (unsigned long long)t[2 * b],
                                                   (unsigned long long)t[2 * b + 1]));
            return o;
        }
        uint64_t c = t[2 * b + 1] - t[2 * b];
        rate[b] = (double)block_bytes[b] / (double)c;
        slowest = c > slowest ? c : slowest;
        total += block_bytes[b];
    }
    qsort(rate, nblocks, sizeof *rate, cmp_double);
    double median = nblocks % 2 ? rate[nblocks / 2] : (rate[nblocks / 2 - 1] + rate[nblocks / 2]) / 2;
    free(rate);
    json_t *gbs = clock_mhz > 0 ? json_real((double)total / ((double)slowest / (clock_mhz * 1e6)) / 1e9)
                                : json_null();
    return json_pack("{s:f,s:o,s:I,s:I,s:I}", "bytes_per_clk_per_sm", median, "gb_s", gbs, "slowest_cycles",
                     (json_int_t)slowest, "blocks", (json_int_t)nblocks, "total_bytes",
                     (json_int_t)total);
}

/* The best point of method in level: {"best","at_bytes"}, or NULL. */
static json_t *best_of(const json_t *points, const char *method, const char *level)
{
    size_t i;
    json_t *p, *best = NULL;
    double top = -1;
    json_array_foreach(points, i, p)
    {
        const char *m = json_string_value(json_object_get(p, "method"));
        const char *l = json_string_value(json_object_get(p, "level"));
        json_t *r = json_object_get(p, "bytes_per_clk_per_sm");
        if (!m || !l || strcmp(m, method) != 0 || strcmp(l, level) != 0 || !json_is_number(r))
            continue;
        if (json_number_value(r) > top) {
            top = json_number_value(r);
            best = p;
        }
    }
    if (!best)
        return NULL;
    return json_pack("{s:f,s:O}", "best", top, "at_bytes", json_object_get(best, "bytes"));
}

json_t *acp_bandwidth_summary(const json_t *points)
{
    static const char *const levels[] = {"l2", "dram"};
    json_t *sum = json_object();
    if (!sum || !json_is_array(points))
        return sum;
    for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++) {
        json_t *lv = json_object();
        json_t *ld = best_of(points, "ld", levels[l]);
        double base = ld ? json_real_value(json_object_get(ld, "best")) : 0;
        json_decref(ld);
        for (int m = 0; m < ACP_METHODS; m++) {
            json_t *b = best_of(points, acp_method_name(m), levels[l]);
            if (!b)
                continue;
            double v = json_real_value(json_object_get(b, "best"));
            json_object_set_new(b, "vs_ld", base > 0 ? json_real(v / base) : json_null());
            json_object_set_new(lv, acp_method_name(m), b);
        }
        if (json_object_size(lv))
            json_object_set_new(sum, levels[l], lv);
        else
            json_decref(lv);
    }
    return sum;
}

json_t *acp_latency_by_bytes(const json_t *points)
{
    json_t *all = json_object(), *out = json_object(), *p, *v;
    size_t i;
    const char *k;
    char key[24];
    json_array_foreach(points, i, p)
    {
        const char *m = json_string_value(json_object_get(p, "method"));
        json_t *per = json_object_get(p, "bytes_per_copy");
        json_t *med = json_object_get(json_object_get(p, "cycles"), "median");
        if (!m || !json_is_integer(per) || !json_is_number(med))
            continue;
        snprintf(key, sizeof key, "%lld", (long long)json_integer_value(per));
        json_t *group = json_object_get(all, key);
        if (!group)
            json_object_set_new(all, key, group = json_object());
        json_object_set_new(group, m, json_real(json_number_value(med)));
    }
    json_object_foreach(all, k, v)
    {
        if (json_object_size(v) >= 2)
            json_object_set(out, k, v);
    }
    json_decref(all);
    return out;
}

json_t *acp_document(json_t *latency, json_t *bandwidth, const char *tensor_map, json_t *sass,
                     size_t dram_bytes, size_t l2_bytes)
{
    json_t *doc = json_pack("{s:o,s:o,s:s,s:o,s:i,s:I,s:I,s:i}", "latency", latency, "bandwidth",
                            bandwidth, "tensor_map", tensor_map, "sass", sass, "chunk_bytes", ACP_CHUNK,
                            "dram_buffer_bytes", (json_int_t)dram_bytes, "l2_buffer_bytes",
                            (json_int_t)l2_bytes, "l2_passes", ACP_L2_PASSES);
    json_t *sum = doc ? acp_bandwidth_summary(bandwidth) : NULL;
    if (sum) {
        json_object_set_new(sum, "latency_by_bytes", acp_latency_by_bytes(latency));
        json_object_set_new(doc, "summary", sum);
    }
    return doc;
}
