/*
 * Running the latency probe on a GPU (see latency.h for the method).
 *
 * For each catalog entry: build the latency module, confirm from its own
 * cubin that every timed region holds the expected instructions (else the
 * entry carries the compiler's listing and no number), time the five
 * regions `repeats` times with one warp, then build and time the throughput
 * module with every SM full of warps. The SM clock is measured before and
 * after the whole run and reported with it.
 *
 * DESIGN
 * The two kernels go through the same steps (build, check the machine
 * code, find the entry point, upload the inputs, time, or say why not);
 * measure() is those steps once, and a row of kinds[] is what differs:
 * the generator, the check, the timing and the members the entry gets.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probes/gpu/clock.h"
#include "probes/latency.h"
#include "probes/latency_check.h"
#include "probes/gpu/stats.h"
#include "util/clock.h"

/* 4 blocks of 256 threads: 32 warps an SM, 8 chains each, all resident at
 * once even at FP64's register use, so the run is one wave. */
#define TPUT_BLOCKS_PER_SM 4
#define TPUT_TARGET_NS 2000000.0
_Static_assert(WG_TPUT_PER_SM <= TPUT_BLOCKS_PER_SM, "the buffers are sized for the larger grid");

/* Device buffers shared by every entry of one run. */
struct bufs {
    CUdeviceptr in, out, glob;
    size_t out_size, glob_size;
};

static int upload_inputs(struct gpu *g, const struct lat_entry *e, struct bufs *b, char *err,
                         size_t errlen)
{
    unsigned char in[LAT_INPUT_BYTES];
    lat_fill_inputs(e, in);
    return gpu_check(g, g->cu->cuMemcpyHtoD(b->in, in, sizeof in), "cuMemcpyHtoD", err, errlen);
}

/* One launch of the latency kernel: the five regions' cycle counts. */
static int time_regions(struct gpu *g, CUfunction fn, const struct lat_entry *e, struct bufs *b,
                        double cyc[LAT_REGIONS], char *err, size_t errlen)
{
    unsigned long long out[LAT_REGIONS];
    void *params[] = {&b->out, &b->in, &b->glob};
    /* a warp, or a warpgroup for wgmma (every warp stores the same slots:
     * the last one's figures are kept) */
    if (gpu_launch(g, fn, 1, (unsigned)lat_block_threads(e, 0), 0, params, err, errlen) < 0 ||
        gpu_check(g, g->cu->cuMemcpyDtoH(out, b->out, sizeof out), "cuMemcpyDtoH", err, errlen) < 0)
        return -1;
    for (int r = 0; r < LAT_REGIONS; r++)
        cyc[r] = (double)out[r];
    return 0;
}

/* The chain, issue and execution latencies, `repeats` launches of the
 * latency kernel; the figures go into o only when every launch ran. */
static int time_latency(struct gpu *g, CUfunction fn, const struct lat_entry *e, struct bufs *b,
                        int repeats, json_t *o, char *err, size_t errlen)
{
    double lat[PROBE_MAX_REPEATS], iss[PROBE_MAX_REPEATS], exe[PROBE_MAX_REPEATS], cyc[LAT_REGIONS];
    for (int r = 0; r < repeats; r++) {
        if (time_regions(g, fn, e, b, cyc, err, errlen) < 0)
            return -1;
        lat[r] = (cyc[4] - cyc[3]) / (double)(lat_chain_span(e) * e->per_step);
        iss[r] = cyc[1] - cyc[0];
        exe[r] = cyc[2] - cyc[0];
    }
    json_object_set_new(o, "latency_cycles", spread_json(lat, (size_t)repeats));
    json_object_set_new(o, "issue_cycles", spread_json(iss, (size_t)repeats));
    json_object_set_new(o, "exec_cycles", spread_json(exe, (size_t)repeats));
    return 0;
}

/* ---- throughput ------------------------------------------------------------ */

struct tput_run {
    unsigned blocks, threads, iters;
    double ns, mhz;
};

/* One launch: wall nanoseconds from the first block's start to the last
 * block's end, and the SM clock as the blocks saw it. */
static int time_tput(struct gpu *g, CUfunction fn, struct bufs *b, struct tput_run *t, char *err,
                     size_t errlen)
{
    void *params[] = {&b->out, &b->in, &b->glob, &t->iters};
    size_t words = (size_t)t->blocks * 4;
    unsigned long long *st = malloc(words * sizeof *st);
    double *mhz = malloc(t->blocks * sizeof *mhz);
    int rc = st && mhz ? 0 : (snprintf(err, errlen, "out of memory"), -1);
    if (rc == 0)
        rc = gpu_launch(g, fn, t->blocks, t->threads, 0, params, err, errlen);
    if (rc == 0)
        rc = gpu_check(g, g->cu->cuMemcpyDtoH(st, b->out, words * sizeof *st), "cuMemcpyDtoH",
                       err, errlen);
    if (rc == 0) {
        unsigned long long g0 = ~0ULL, g1 = 0;
        for (unsigned i = 0; i < t->blocks; i++) {
            unsigned long long *w = st + 4 * i; /* clock start, timer start, clock end, timer end */
            g0 = w[1] < g0 ? w[1] : g0;
            g1 = w[3] > g1 ? w[3] : g1;
            mhz[i] = w[3] > w[1] ? (double)(w[2] - w[0]) / (double)(w[3] - w[1]) * 1000.0 : 0;
        }
        t->ns = (double)(g1 - g0);
        t->mhz = spread_of(mhz, t->blocks).median;
    }
    free(st);
    free(mhz);
    return rc;
}

static double results_per_clock_per_sm(const struct lat_entry *e, const struct tput_run *t,
                                       int sms)
{
    /* a tensor-core step is one warp's operation (a warpgroup's for wgmma,
     * whose blocks are one warpgroup), not one per thread */
    double units = lat_is_warpgroup(e) ? 1 : e->mma ? TPUT_THREADS / 32 : TPUT_THREADS;
    double results = (double)t->blocks * units * lat_tput_steps(e) * t->iters * e->per_step;
    double cycles = t->ns * t->mhz / 1000.0;
    return cycles > 0 ? results / cycles / sms : NAN;
}

/* Results per clock per SM and the clock, `repeats` launches of the
 * throughput kernel with blocks_per_sm blocks an SM, after one that sizes
 * the run to about TPUT_TARGET_NS. */
static int rate_runs(struct gpu *g, CUfunction fn, const struct lat_entry *e, struct bufs *b,
                     int repeats, int blocks_per_sm, struct tput_run *t, double *per, double *mhz,
                     char *err, size_t errlen)
{
    *t = (struct tput_run){.blocks = (unsigned)(g->info.sm_count * blocks_per_sm),
                           .threads = (unsigned)lat_block_threads(e, 1), .iters = 4};
    if (time_tput(g, fn, b, t, err, errlen) < 0)
        return -1;
    double scale = t->ns > 0 ? TPUT_TARGET_NS / t->ns : 1;
    t->iters = (unsigned)fmax(4, fmin(4096, t->iters * scale));
    for (int r = 0; r < repeats; r++) {
        if (time_tput(g, fn, b, t, err, errlen) < 0)
            return -1;
        per[r] = results_per_clock_per_sm(e, t, g->info.sm_count);
        mhz[r] = t->mhz;
    }
    return 0;
}

/* Results per clock per SM, every SM full of warps (WG_TPUT_PER_SM
 * warpgroups for wgmma, which are also run alone, one an SM); the figures
 * go into o only when every launch ran. */
static int time_throughput(struct gpu *g, CUfunction fn, const struct lat_entry *e,
                           struct bufs *b, int repeats, json_t *o, char *err, size_t errlen)
{
    struct tput_run t;
    double per[PROBE_MAX_REPEATS], mhz[PROBE_MAX_REPEATS];
    if (lat_is_warpgroup(e)) {
        if (rate_runs(g, fn, e, b, repeats, 1, &t, per, mhz, err, errlen) < 0)
            return -1;
        json_object_set_new(o, "throughput_one_warpgroup_per_clock_per_sm",
                            spread_json(per, (size_t)repeats));
    }
    if (rate_runs(g, fn, e, b, repeats, lat_is_warpgroup(e) ? WG_TPUT_PER_SM : TPUT_BLOCKS_PER_SM,
                  &t, per, mhz, err, errlen) < 0)
        return -1;
    json_object_set_new(o, "throughput_per_clock_per_sm", spread_json(per, (size_t)repeats));
    json_object_set_new(o, "throughput_clock_mhz", spread_json(mhz, (size_t)repeats));
    if (e->mma) { /* the whole GPU's rate at the clock each launch ran at */
        double tf[PROBE_MAX_REPEATS];
        for (int r = 0; r < repeats; r++)
            tf[r] = per[r] * e->mma->flops * g->info.sm_count * mhz[r] * 1e6 / 1e12;
        json_object_set_new(o, "tflops", spread_json(tf, (size_t)repeats));
    }
    json_object_set_new(o, "throughput_shape",
                        json_pack("{s:i, s:i, s:i, s:i, s:i}", "blocks", t.blocks, "threads",
                                  t.threads, "chains", lat_is_warpgroup(e) ? 1 : TPUT_CHAINS,
                                  "unroll", lat_is_warpgroup(e) ? WG_TPUT_UNROLL : TPUT_UNROLL,
                                  "iterations", t.iters));
    return 0;
}

/* ---- one entry, both kernels ---------------------------------------------------- */

/* What differs between timing an entry's latency and its throughput. */
struct kernel_kind {
    const char *kernel;              /* the entry point, and the module name's suffix */
    char *(*ptx)(const struct lat_entry *e, int cc_major, int cc_minor);
    json_t *(*check)(const struct lat_entry *e, const void *cubin, size_t size);
    int (*time)(struct gpu *g, CUfunction fn, const struct lat_entry *e, struct bufs *b,
                int repeats, json_t *o, char *err, size_t errlen);
    const char *sass_key, *error_key;   /* members of the entry's object */
    const char *unverified;          /* the error when the check refuses the code */
};

static const struct kernel_kind kinds[] = {
    {"lat", lat_ptx_latency, lat_check_latency, time_latency, "sass", "error",
     "the compiled code is not what the probe times; see sass.regions"},
    {"tput", lat_ptx_throughput, lat_check_throughput, time_throughput, "throughput_sass",
     "throughput_error", "the compiled loop is not what the probe times"},
};

/* Builds e's module of kind k, checks its machine code, uploads e's inputs
 * and times it: o gains the check's verdict and the figures, or the
 * reason there are none. */
static void measure(struct gpu *g, const struct lat_entry *e, const struct kernel_kind *k,
                    struct bufs *b, int repeats, json_t *o)
{
    char err[512], name[64];
    struct gpu_module m;
    CUfunction fn;
    snprintf(name, sizeof name, "latency_%s_%s", e->name, k->kernel);
    if (lat_is_warpgroup(e) && (g->info.cc_major != 9 || g->info.cc_minor != 0)) {
        /* sm_90a code runs on compute capability 9.0 only */
        snprintf(err, sizeof err, "wgmma.mma_async needs sm_90a; this device is sm_%d%d",
                 g->info.cc_major, g->info.cc_minor);
        json_object_set_new(o, k->error_key, json_string(err));
        return;
    }
    if (gpu_module_build_generated(g, k->ptx(e, g->info.cc_major, g->info.cc_minor), name, &m,
                                   err, sizeof err) < 0) {
        json_object_set_new(o, k->error_key, json_string(err));
        return;
    }
    json_t *sass = k->check(e, m.cubin, m.cubin_size);
    json_object_set_new(o, k->sass_key, sass);
    int verified = json_is_true(json_object_get(sass, "verified"));
    if (!verified || gpu_module_function(g, &m, k->kernel, &fn, err, sizeof err) < 0 ||
        upload_inputs(g, e, b, err, sizeof err) < 0 ||
        k->time(g, fn, e, b, repeats, o, err, sizeof err) < 0)
        json_object_set_new(o, k->error_key, json_string(verified ? err : k->unverified));
    gpu_module_free(g, &m);
}

/* ---- the run ------------------------------------------------------------------ */

static json_t *entry_json(const struct lat_entry *e)
{
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:i}", "name", e->name, "group", e->group, "ptx",
                          e->ptx, "sass_opcode", e->sass, "per_step", e->per_step);
    if (e->note)
        json_object_set_new(o, "note", json_string(e->note));
    if (e->mma) /* throughput counts warp-wide operations of this many flops */
        json_object_set_new(o, "flops_per_step", json_real(e->mma->flops));
    if (lat_is_warpgroup(e)) /* the document's n1 and n2 are the other entries' */
        json_object_set_new(o, "chain_steps", json_pack("{s:i, s:i}", "n1", WG_N1, "n2", WG_N2));
    return o;
}

static int alloc_bufs(struct gpu *g, struct bufs *b, char *err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    size_t blocks = (size_t)g->info.sm_count * TPUT_BLOCKS_PER_SM;
    b->out_size = blocks * 4 * sizeof(unsigned long long);
    b->glob_size = blocks * TPUT_THREADS * TPUT_CHAINS * 8;
    return gpu_check(g, g->cu->cuMemAlloc(&b->in, 128), "cuMemAlloc", err, errlen) < 0 ||
                   gpu_check(g, g->cu->cuMemAlloc(&b->out, b->out_size), "cuMemAlloc", err,
                             errlen) < 0 ||
                   gpu_check(g, g->cu->cuMemAlloc(&b->glob, b->glob_size), "cuMemAlloc", err,
                             errlen) < 0 ||
                   gpu_check(g, g->cu->cuMemsetD32(b->glob, 0, b->glob_size / 4), "cuMemsetD32",
                             err, errlen) < 0
               ? -1
               : 0;
}

static void free_bufs(struct gpu *g, struct bufs *b)
{
    CUdeviceptr *bufs[] = {&b->in, &b->out, &b->glob};
    gpu_free_buffers(g, bufs, sizeof bufs / sizeof bufs[0]);
}

static int wanted(const char *only, const char *name)
{
    if (!only || !*only || strcmp(only, "all") == 0)
        return 1;
    size_t n = strlen(name);
    for (const char *p = only; (p = strstr(p, name)); p += n)
        if ((p == only || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}


json_t *latency_probe_run(const char *device, int repeats, const char *only, char *err,
                          size_t errlen)
{
    struct gpu g;
    struct bufs b;
    double t0 = mono_s(), before = 0, after = 0;
    if (repeats < 1 || repeats > PROBE_MAX_REPEATS) {
        snprintf(err, errlen, "repeats must be from 1 to %d", PROBE_MAX_REPEATS);
        return NULL;
    }
    if (gpu_open(&g, device, err, errlen) < 0)
        return NULL;
    json_t *entries = json_array(), *res = NULL;
    if (alloc_bufs(&g, &b, err, errlen) == 0 && gpu_clock_mhz(&g, &before, err, errlen) == 0) {
        for (size_t i = 0; i < lat_catalog_count; i++) {
            if (!wanted(only, lat_catalog[i].name))
                continue;
            json_t *o = entry_json(&lat_catalog[i]);
            for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
                measure(&g, &lat_catalog[i], &kinds[k], &b, repeats, o);
            json_array_append_new(entries, o);
        }
        if (gpu_clock_mhz(&g, &after, err, errlen) == 0)
            res = json_pack("{s:s, s:o, s:s, s:{s:f, s:f}, s:i, s:i, s:i, s:o, s:f}", "probe",
                            "latency", "device", gpu_json(&g),
                            "driver_version", g.driver_version, "clock_mhz", "before", before,
                            "after", after, "repeats", repeats, "n1", LAT_N1, "n2", LAT_N2,
                            "entries", json_incref(entries), "wall_s", mono_s() - t0);
        if (res && g.keep_dir[0])
            json_object_set_new(res, "cubin_dir", json_string(g.keep_dir));
    }
    json_decref(entries);
    free_bufs(&g, &b);
    gpu_close(&g);
    return res;
}
