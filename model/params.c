/*
 * Measured parameters -> struct mwp_hw (see params.h for the mapping).
 *
 * DESIGN
 * Each parameter is read by one small function that either fills the
 * value with its provenance or fails with the probe to run; the messages
 * carry the exact job submission (and the command line) that would measure
 * it, so a client can act on them.
 */
#include "model/params.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/errf.h"
#include "model/occupancy_json.h"

#define UNCOAL_LINES 32.0   /* lines one uncoalesced load of the memory probe touches */

struct issue_source {
    enum mwp_class cls;
    const char *entry;
};

static const struct issue_source issue_sources[] = {
    {MC_FP32, "ffma"}, {MC_FP64, "dfma"}, {MC_INT, "iadd"},  {MC_SFU, "rcp"},
    {MC_CONV, "f2i"},  {MC_SHARED, "lds"}, {MC_GLOBAL, "lds"},
};

struct ctx {
    const json_t *in;
    const char *uuid;
    struct mwp_hw *hw;
    int *missing;
    char *err;
    size_t errlen;
};

/* A parameter no stored run gives: rc is the failure (its reason, which
 * names the probe to run, already in c->err); the caller learns that a
 * measurement is missing, not that the inputs are wrong. */
static int missing(struct ctx *c, int rc)
{
    *c->missing = 1;
    return rc;
}

static void set(struct mwp_param *p, double v, const json_t *run, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void set(struct mwp_param *p, double v, const json_t *run, const char *fmt, ...)
{
    va_list ap;
    p->value = v;
    p->job_id = run ? json_integer_value(json_object_get(run, "job_id")) : 0;
    va_start(ap, fmt);
    vsnprintf(p->source, sizeof p->source, fmt, ap);
    va_end(ap);
}

static int need_probe(struct ctx *c, const char *probe, const char *what)
{
    return missing(c, errf(c->err, c->errlen,
                                 "no %s for device %s: run the %s probe: POST /api/v1/jobs "
                                 "{\"kind\":\"%s\",\"device\":\"%s\"} (or gpuprobe probe %s "
                                 "--device %s --db DB)",
                                 what, c->uuid, probe, probe, c->uuid, probe, c->uuid));
}

static int device_attrs(struct ctx *c, const json_t **dev)
{
    *dev = json_object_get(c->in, "device");
    if (!json_is_object(*dev))
        return missing(c, errf(c->err, c->errlen, "device %s is not in this database: no GPU of that UUID was discovered or imported",
                                     c->uuid));
    c->hw->sm_count = (int)json_integer_value(json_object_get(*dev, "sm_count"));
    c->hw->warp_size = (int)json_integer_value(json_object_get(*dev, "warp_size"));
    if (c->hw->sm_count < 1 || c->hw->warp_size < 1)
        return errf(c->err, c->errlen, "device %s has no sm_count or warp_size", c->uuid);
    return 0;
}

static int issue_cycles(struct ctx *c, const json_t *lat)
{
    const json_t *tp = json_object_get(lat, "throughput");
    long long job = json_integer_value(json_object_get(lat, "job_id"));
    for (size_t i = 0; i < sizeof issue_sources / sizeof issue_sources[0]; i++) {
        const char *e = issue_sources[i].entry;
        double t = json_number_value(json_object_get(tp, e));
        if (!(t > 0))
            return missing(c, errf(c->err, c->errlen,
                                         "the latency run of job %lld has no throughput for '%s' "
                                         "(needed for %s issue cycles): run the latency probe on "
                                         "device %s with instructions \"all\" (POST /api/v1/jobs "
                                         "{\"kind\":\"latency\",\"device\":\"%s\"})",
                                         job, e, mwp_class_name(issue_sources[i].cls), c->uuid,
                                         c->uuid));
        set(&c->hw->issue[issue_sources[i].cls], c->hw->warp_size / t, lat,
            "latency probe: %d / throughput of %s (%.4g results/clk/SM)", c->hw->warp_size, e, t);
    }
    /* the dispatch ports issue at least as fast as the fastest instruction runs */
    const char *key, *fastest = NULL;
    const json_t *v;
    double best = 0;
    json_object_foreach((json_t *)tp, key, v)
        if (json_number_value(v) > best) {
            best = json_number_value(v);
            fastest = key;
        }
    set(&c->hw->issue_slot, c->hw->warp_size / best, lat,
        "latency probe: %d / the highest throughput of the catalog (%s, %.4g results/clk/SM)",
        c->hw->warp_size, fastest, best);
    return 0;
}

static int clock_param(struct ctx *c, const json_t *lat, const json_t *mem)
{
    const json_t *runs[] = {lat, mem};
    const char *names[] = {"latency", "memory"};
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < 2; k++) {
            const char *when = k == 0 ? "after" : "before";
            double v = json_number_value(json_object_get(json_object_get(runs[r], "clock_mhz"),
                                                         when));
            if (v > 0) {
                set(&c->hw->clock_mhz, v, runs[r], "%s probe: SM clock measured %s it",
                    names[r], when);
                return 0;
            }
        }
    return need_probe(c, "latency", "measured SM clock");
}

/* The L1's and the L2's load latencies: the first level of the .ca chase (cached
 * in the L1) when it is faster than the first of the .cg chase (which skips the
 * L1: the L2). Unknown (0) when the run found no such levels; a prediction with
 * hit rates then says so. */
static void cache_latencies(struct ctx *c, const json_t *sc, const json_t *mem)
{
    double ca = json_number_value(json_object_get(sc, "level_ca_1"));
    double cg = json_number_value(json_object_get(sc, "level_cg_1"));
    if (cg > 0)
        set(&c->hw->l2_latency, cg, mem, "memory probe: first latency level of the .cg chase");
    else
        set(&c->hw->l2_latency, 0, NULL, "not measured: the memory run found no .cg level");
    if (ca > 0 && (!(cg > 0) || ca < cg))
        set(&c->hw->l1_latency, ca, mem, "memory probe: first latency level of the .ca chase");
    else
        set(&c->hw->l1_latency, 0, NULL, "not measured: the memory run found no L1 level");
}

static int memory(struct ctx *c, const json_t *mem)
{
    const json_t *sc = json_object_get(mem, "scalars");
    double lat = json_number_value(json_object_get(sc, "device_memory_cg"));
    double dc = json_number_value(json_object_get(sc, "departure_coalesced"));
    double du = json_number_value(json_object_get(sc, "departure_uncoalesced"));
    long long job = json_integer_value(json_object_get(mem, "job_id"));
    if (!(lat > 0) || !(dc > 0) || !(du > 0))
        return missing(c, errf(c->err, c->errlen,
                                     "the memory run of job %lld lacks %s: run the memory probe "
                                     "again: POST /api/v1/jobs {\"kind\":\"memory\",\"device\":"
                                     "\"%s\"}",
                                     job, !(lat > 0) ? "device_memory_cycles.cg"
                                                     : "a departure delay",
                                     c->uuid));
    set(&c->hw->mem_latency, lat, mem, "memory probe: device_memory_cycles.cg median");
    set(&c->hw->delay_coal, dc, mem, "memory probe: departure.coalesced_cycles median");
    set(&c->hw->delay_uncoal, du / UNCOAL_LINES, mem,
        "memory probe: departure.uncoalesced_cycles median (%.4g) / %g lines a load", du,
        UNCOAL_LINES);
    cache_latencies(c, sc, mem);
    return 0;
}

static int bandwidths(struct ctx *c, const json_t *dev)
{
    const json_t *val = json_object_get(c->in, "validation");
    double bw = json_number_value(json_object_get(val, "dram_bandwidth"));
    double link = json_number_value(json_object_get(val, "link_bandwidth"));
    if (bw > 0) {
        set(&c->hw->bandwidth, bw, val, "model-validation run: read-only kernel over 2 GiB");
    } else {
        double khz = json_number_value(json_object_get(dev, "memory_clock_khz"));
        double bits = json_number_value(json_object_get(dev, "memory_bus_width_bits"));
        if (!(khz > 0) || !(bits > 0))
            return missing(c, errf(c->err, c->errlen,
                                         "no device-memory bandwidth for device %s: run the "
                                         "validation (it measures it): POST /api/v1/jobs "
                                         "{\"kind\":\"model-validation\",\"device\":\"%s\"}",
                                         c->uuid, c->uuid));
        set(&c->hw->bandwidth, 2.0 * khz * 1e3 * bits / 8.0, NULL,
            "derived, not measured: 2 x memory clock (%.0f kHz) x bus width (%.0f bits) / 8; "
            "run model-validation to measure it", khz, bits);
    }
    if (link > 0)
        set(&c->hw->link_bandwidth, link, val, "model-validation run: cuMemcpyHtoD, pageable");
    else
        set(&c->hw->link_bandwidth, 0, NULL, "not measured: run model-validation");
    return 0;
}

/* The L2's read bandwidth: 0 (unknown) when the newest validation run has
 * none, which runs stored before it was measured do not. */
static void l2_bandwidth(struct ctx *c)
{
    const json_t *val = json_object_get(c->in, "validation");
    double l2 = json_number_value(json_object_get(val, "l2_bandwidth"));
    if (l2 > 0)
        set(&c->hw->l2_bandwidth, l2, val,
            "model-validation run: read-only kernel over a quarter of the L2");
    else
        set(&c->hw->l2_bandwidth, 0, NULL,
            "not measured (0 = unknown): no model-validation run, or one from before the L2 "
            "was measured; run model-validation");
}

/* The bytes one device-memory access fetches at least: the L2's fetch
 * granularity the driver reported to the validation run; 0 (a sector) without. */
static void dram_granule(struct ctx *c)
{
    const json_t *val = json_object_get(c->in, "validation");
    double g = json_number_value(json_object_get(val, "l2_fetch_bytes"));
    if (g > 0)
        set(&c->hw->dram_granule, g, val,
            "model-validation run: the driver's L2 fetch granularity (cuCtxGetLimit)");
    else
        set(&c->hw->dram_granule, 0, NULL,
            "not reported (0 = a sector): no model-validation run, or one from before it was "
            "read");
}

int model_hw_from_inputs(const json_t *inputs, const char *uuid, struct mwp_hw *hw,
                         int *miss, char *err, size_t errlen)
{
    struct ctx c = {inputs, uuid, hw, miss, err, errlen};
    const json_t *dev, *lat = json_object_get(inputs, "latency");
    const json_t *mem = json_object_get(inputs, "memory");
    memset(hw, 0, sizeof *hw);
    *miss = 0;
    if (device_attrs(&c, &dev) < 0)
        return -1;
    if (!json_is_object(lat))
        return need_probe(&c, "latency", "latency probe result (issue cycles, SM clock)");
    if (!json_is_object(mem))
        return need_probe(&c, "memory", "memory probe result (memory latency, departure "
                                        "delays)");
    if (issue_cycles(&c, lat) < 0 || clock_param(&c, lat, mem) < 0 || memory(&c, mem) < 0 ||
        bandwidths(&c, dev) < 0)
        return -1;
    l2_bandwidth(&c);
    dram_granule(&c);
    return 0;
}

static json_t *param_json(const struct mwp_param *p, const char *unit)
{
    return json_pack("{s:f, s:s, s:o, s:s}", "value", p->value, "unit", unit, "job_id",
                     p->job_id ? json_integer(p->job_id) : json_null(), "source", p->source);
}

json_t *model_hw_json(const struct mwp_hw *hw)
{
    json_t *o = json_object();
    char key[48];
    json_object_set_new(o, "sm_count", json_pack("{s:i, s:s}", "value", hw->sm_count, "source",
                                                 "device attribute"));
    json_object_set_new(o, "clock_mhz", param_json(&hw->clock_mhz, "MHz"));
    json_object_set_new(o, "mem_latency", param_json(&hw->mem_latency, "cycles"));
    json_object_set_new(o, "l1_latency", param_json(&hw->l1_latency, "cycles"));
    json_object_set_new(o, "l2_latency", param_json(&hw->l2_latency, "cycles"));
    json_object_set_new(o, "delay_coal", param_json(&hw->delay_coal, "cycles"));
    json_object_set_new(o, "delay_uncoal", param_json(&hw->delay_uncoal, "cycles"));
    json_object_set_new(o, "bandwidth", param_json(&hw->bandwidth, "bytes/s"));
    json_object_set_new(o, "link_bandwidth", param_json(&hw->link_bandwidth, "bytes/s"));
    json_object_set_new(o, "l2_bandwidth", param_json(&hw->l2_bandwidth, "bytes/s"));
    json_object_set_new(o, "dram_granule", param_json(&hw->dram_granule, "bytes"));
    json_object_set_new(o, "issue_slot", param_json(&hw->issue_slot, "cycles/warp instruction"));
    for (int k = 0; k < MC_COUNT; k++) {
        snprintf(key, sizeof key, "issue_%s", mwp_class_name((enum mwp_class)k));
        json_object_set_new(o, key, param_json(&hw->issue[k], "cycles/warp instruction"));
    }
    return o;
}

int model_inputs_cc(const json_t *inputs, int *major, int *minor)
{
    const json_t *dev = json_object_get(inputs, "device");
    return occ_parse_cc(json_string_value(json_object_get(dev, "compute_capability")), major,
                        minor);
}
