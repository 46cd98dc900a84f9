/*
 * Capture a sample, sort it, model its caches, read the hit rates (see
 * kernel_hits.h).
 */
#include "server/jobs/kernel_hits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/model.h"
#include "probes/capture.h"
#include "probes/gpu/gpu.h"
#include "probes/placement.h"
#include "trace/deal.h"
#include "trace/pipeline.h"
#include "util/errf.h"

double kernel_hits_block_records(const json_t *per_warp, unsigned threads, int warp_size)
{
    double warps = (double)((threads + (unsigned)warp_size - 1) / (unsigned)warp_size);
    return (json_number_value(json_object_get(per_warp, "coalesced")) +
            json_number_value(json_object_get(per_warp, "uncoalesced"))) *
           warps * warp_size;
}

uint64_t kernel_hits_sample_blocks(const struct kernel_hits_req *r)
{
    uint64_t total = (uint64_t)r->grid[0] * r->grid[1] * r->grid[2];
    uint64_t wave = (uint64_t)r->sm_count * (uint64_t)r->blocks_per_sm;
    uint64_t budget = r->budget ? r->budget : KERNEL_HITS_BUDGET, n = wave;
    if (r->records_per_block > 0 && budget / r->records_per_block < (double)n)
        n = (uint64_t)(budget / r->records_per_block);
    n = n ? n : 1;
    return n < total ? n : total;
}

static int capture(const struct kernel_hits_req *r, uint64_t blocks, const char *path,
                   json_t **doc, char *err, size_t errlen)
{
    struct capture_req c = {.ptx = r->ptx, .entry = r->entry, .args = r->args,
                            .nargs = r->nargs, .device = r->device, .output = path,
                            .max_records = 4ull * (r->budget ? r->budget : KERNEL_HITS_BUDGET),
                            .sample_blocks = blocks};
    int input_fault = 0;
    memcpy(c.grid, r->grid, sizeof c.grid);
    memcpy(c.block, r->block, sizeof c.block);
    char why[512];
    *doc = capture_run(&c, why, sizeof why, &input_fault);
    return *doc ? 0 : errf(err, errlen, "capturing the sample: %s", why);
}

static int sort(const struct kernel_hits_req *r, const char *in, const char *out, char *err,
                size_t errlen)
{
    struct trace_params p;
    struct trace_summary sum;
    struct trace_outcome oc;
    struct trace_failure fail;
    char msg[256], sms[16], per_sm[16];
    snprintf(sms, sizeof sms, "%d", r->sm_count);
    snprintf(per_sm, sizeof per_sm, "%d", r->blocks_per_sm);
    trace_params_default(&p);
    if (trace_params_set(&p, "arch", "hopper", msg, sizeof msg) ||
        trace_params_set(&p, "sms", sms, msg, sizeof msg) ||
        trace_params_set(&p, "blocks_per_sm", per_sm, msg, sizeof msg) ||
        trace_params_set(&p, "out_format", "bin", msg, sizeof msg) ||
        (r->deal && trace_params_set(&p, "placement", "dealt", msg, sizeof msg)))
        return errf(err, errlen, "sorting the sample: %s", msg);
    p.deal = r->deal;
    struct trace_files f = {.input = in, .output = out, .tmpdir = r->tmpdir};
    if (trace_pipeline_sort(&f, &p, &sum, &oc, &fail) < 0)
        return errf(err, errlen, "sorting the sample: %s", fail.msg);
    trace_summary_free(&sum);
    return 0;
}

static int model(const struct kernel_hits_req *r, const char *path, struct cache_result *res,
                 char *err, size_t errlen)
{
    struct cache_input in;
    struct trace_err terr;
    struct cache_config cfg;
    char msg[256];
    memset(&cfg, 0, sizeof cfg);
    if (cache_input_open(&in, path, &terr))
        return errf(err, errlen, "reading the sorted sample: %s", terr.msg);
    int rc = cache_arch_geometry("hopper", &cfg.geom[0], &cfg.geom[1], msg, sizeof msg);
    if (rc == 0 && r->l2_bytes)
        rc = cache_geom_resize(&cfg.geom[1], r->l2_bytes, msg, sizeof msg);
    if (rc == 0) {
        cfg.timing[0] = (struct cache_timing){in.params.lat_min, in.params.mshr, cache_arch_merge("hopper")};
        cfg.timing[1] = (struct cache_timing){0, 0, cache_arch_merge("hopper")};
        cfg.engines = CACHE_ENGINE_EXACT;
        cfg.l2 = 1;
        cfg.tmpdir = r->tmpdir;
        rc = cache_model_run(&in, &cfg, res, msg, sizeof msg);
    }
    cache_input_close(&in);
    return rc ? errf(err, errlen, "the cache model: %s", msg) : 0;
}

int kernel_hits_deal(const char *device, struct trace_deal *d, json_t **doc)
{
    struct gpu g;
    char err[320];
    memset(d, 0, sizeof *d);
    if (gpu_open(&g, device, err, sizeof err) < 0) {
        *doc = json_pack("{s:s}", "error", err);
        return -1;
    }
    *doc = pl_probe(&g);
    gpu_close(&g);
    const char *status = json_string_value(json_object_get(*doc, "status"));
    int rc = status && strcmp(status, "determined") == 0
                 ? trace_deal_from_json(json_object_get(*doc, "order"), d, err, sizeof err)
                 : -1;
    json_object_del(*doc, "order");
    json_object_del(json_object_get(*doc, "check"), "order");
    return rc;
}

uint64_t kernel_hits_buffer_bytes(const char *const *args, size_t nargs)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < nargs; i++) {
        const char *v = args[i] ? strchr(args[i], '=') : NULL;
        if (v && strncmp(v + 1, "buf:", 4) == 0)
            sum += strtoull(v + 5, NULL, 10);
    }
    return sum;
}

json_t *kernel_hits_rates(const struct kernel_hits_req *r, const struct cache_counts *l1,
                          const struct cache_counts *l2, uint64_t sampled, const json_t *cap)
{
    uint64_t total = (uint64_t)r->grid[0] * r->grid[1] * r->grid[2];
    /* loads alone: a store is written through the L1 with all its sectors */
    double load_sectors = (double)(l1->sectors - l1->stores.sectors);
    double below = (double)(l1->below_sectors - l1->stores.sectors);
    double f = (double)sampled / (double)total;
    double l1_hit = load_sectors > 0 ? 1.0 - below / load_sectors : 0.0;
    /* compulsory misses count lines (a line's first touch); its other sectors
     * come as sector misses: the data is at most every sector of those lines */
    double footprint = (double)l2->miss[CACHE_MISS_COMPULSORY] * KERNEL_HITS_SECTORS_PER_LINE / f;
    uint64_t buffers = kernel_hits_buffer_bytes(r->args, r->nargs);
    if (buffers && footprint > buffers / 32.0)
        footprint = buffers / 32.0;
    double l2_loads = (double)(l2->sectors - l2->stores.sectors);
    double sample_l2 = l2_loads > 0 ? (double)(l2->sector_hits - l2->stores.sector_hits) / l2_loads
                                    : 0.0;
    /* a store hits the L2 when its sector is already there (written back, allocated) */
    double l2_store = l2->stores.sectors ? (double)l2->stores.sector_hits / (double)l2->stores.sectors
                                         : 0.0;
    int fits = below > 0 && footprint * 32.0 <= (double)r->l2_bytes;
    double l2_hit = fits ? 1.0 - footprint / (below / f) : sample_l2;
    if (l2_hit < 0)
        l2_hit = 0;
    json_t *sample = json_pack(
        "{s:I, s:f, s:O, s:i, s:i, s:s, s:I, s:I, s:f, s:I, s:f, s:s}", "blocks", (json_int_t)sampled, "fraction", f, "records",
        cap && json_object_get(cap, "records") ? json_object_get(cap, "records") : json_null(),
        "sms",
        r->sm_count, "blocks_per_sm", r->blocks_per_sm, "placement", r->deal ? "dealt" : "rr", "l1_sectors", (json_int_t)l1->sectors,
        "l1_to_l2_sectors", (json_int_t)l1->below_sectors, "footprint_sectors", footprint,
        "l2_bytes", (json_int_t)r->l2_bytes, "l2_sample_hit_rate", sample_l2, "l2_rule",
        fits ? "the kernel's data fits the L2: compulsory misses only"
             : "the sample's own L2 hit rate");
    return json_pack("{s:f, s:f, s:f, s:o}", "l1_hit", l1_hit, "l2_hit", l2_hit, "l2_hit_store",
                     l2_store, "sample", sample);
}

json_t *kernel_hits(const struct kernel_hits_req *req, char *err, size_t errlen)
{
    const char *base = req->tmpdir ? req->tmpdir : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char dir[512], trace[600], sorted[600], why[256];
    if (req->sm_count < 1 || req->blocks_per_sm < 1) {
        errf(err, errlen, "no SM count or occupancy for the sample");
        return NULL;
    }
    /* an order that does not deal to the sample's SMs: round-robin, as
     * without one, rather than no hit rates */
    struct kernel_hits_req fit = *req;
    if (fit.deal && trace_deal_check(fit.deal, (uint32_t)fit.sm_count, why, sizeof why) != 0)
        fit.deal = NULL;
    const struct kernel_hits_req *r = &fit;
    uint64_t blocks = kernel_hits_sample_blocks(r);
    snprintf(dir, sizeof dir, "%s/gpuprobe-hits-XXXXXX", base);
    if (!mkdtemp(dir)) {
        errf(err, errlen, "a folder for the sample in %s: %m", base);
        return NULL;
    }
    snprintf(trace, sizeof trace, "%s/sample.trace", dir);
    snprintf(sorted, sizeof sorted, "%s/sample.sorted", dir);
    json_t *cap = NULL, *out = NULL;
    struct cache_result res;
    memset(&res, 0, sizeof res);
    if (capture(r, blocks, trace, &cap, err, errlen) == 0 && sort(r, trace, sorted, err, errlen) == 0 &&
        model(r, sorted, &res, err, errlen) == 0) {
        out = kernel_hits_rates(r, &res.r[CACHE_EXACT][CACHE_L1].total,
                                &res.r[CACHE_EXACT][CACHE_L2].total, blocks, cap);
        cache_result_free(&res);
    }
    json_decref(cap);
    unlink(trace);
    unlink(sorted);
    rmdir(dir);
    return out;
}
