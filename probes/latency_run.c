/*
 * Running the latency probe on a GPU (see latency.h for the method).
 *
 * For each catalog entry: build the latency module, confirm from its own
 * cubin that every timed region holds the expected instructions (else the
 * entry carries the compiler's listing and no number), time the five
 * regions `repeats` times with one warp, then build and time the throughput
 * module with every SM full of warps. The SM clock is measured before and
 * after the whole run and reported with it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probes/gpu/clock.h"
#include "probes/latency.h"
#include "probes/latency_check.h"
#include "probes/stats.h"
#include "util/clock.h"

/* 4 blocks of 256 threads: 32 warps an SM, 8 chains each, all resident at
 * once even at FP64's register use, so the run is one wave. */
#define TPUT_BLOCKS_PER_SM 4
#define TPUT_TARGET_NS 2000000.0

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
static int time_regions(struct gpu *g, CUfunction fn, struct bufs *b, double cyc[LAT_REGIONS],
                        char *err, size_t errlen)
{
    unsigned long long out[LAT_REGIONS];
    void *params[] = {&b->out, &b->in, &b->glob};
    if (gpu_launch(g, fn, 1, 32, 0, params, err, errlen) < 0 ||
        gpu_check(g, g->cu->cuMemcpyDtoH(out, b->out, sizeof out), "cuMemcpyDtoH", err, errlen) < 0)
        return -1;
    for (int r = 0; r < LAT_REGIONS; r++)
        cyc[r] = (double)out[r];
    return 0;
}

static void measure_latency(struct gpu *g, const struct lat_entry *e, struct bufs *b, int repeats,
                            json_t *o)
{
    char err[512];
    struct gpu_module m;
    CUfunction fn;
    char *ptx = lat_ptx_latency(e, g->info.cc_major, g->info.cc_minor), name[64];
    snprintf(name, sizeof name, "latency_%s_lat", e->name);
    if (!ptx || gpu_module_build(g, ptx, name, &m, err, sizeof err) < 0) {
        json_object_set_new(o, "error", json_string(ptx ? err : "out of memory"));
        free(ptx);
        return;
    }
    free(ptx);
    json_t *sass = lat_check_latency(e, m.cubin, m.cubin_size);
    json_object_set_new(o, "sass", sass);
    double lat[PROBE_MAX_REPEATS], iss[PROBE_MAX_REPEATS], exe[PROBE_MAX_REPEATS], cyc[LAT_REGIONS];
    int ok = json_is_true(json_object_get(sass, "verified")) &&
             gpu_module_function(g, &m, "lat", &fn, err, sizeof err) == 0 &&
             upload_inputs(g, e, b, err, sizeof err) == 0;
    for (int r = 0; ok && r < repeats; r++) {
        ok = time_regions(g, fn, b, cyc, err, sizeof err) == 0;
        lat[r] = (cyc[4] - cyc[3]) / (double)((LAT_N2 - LAT_N1) * e->per_step);
        iss[r] = cyc[1] - cyc[0];
        exe[r] = cyc[2] - cyc[0];
    }
    if (ok) {
        json_object_set_new(o, "latency_cycles", spread_json(lat, (size_t)repeats));
        json_object_set_new(o, "issue_cycles", spread_json(iss, (size_t)repeats));
        json_object_set_new(o, "exec_cycles", spread_json(exe, (size_t)repeats));
    } else if (!json_object_get(o, "error")) {
        json_object_set_new(o, "error",
                            json_string(json_is_true(json_object_get(sass, "verified"))
                                            ? err
                                            : "the compiled code is not what the probe times; "
                                              "see sass.regions"));
    }
    gpu_module_free(g, &m);
}

/* ---- throughput ------------------------------------------------------------ */

struct tput_run {
    unsigned blocks, iters;
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
        rc = gpu_launch(g, fn, t->blocks, TPUT_THREADS, 0, params, err, errlen);
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
    double results = (double)t->blocks * TPUT_THREADS * TPUT_CHAINS * TPUT_UNROLL * t->iters *
                     e->per_step;
    double cycles = t->ns * t->mhz / 1000.0;
    return cycles > 0 ? results / cycles / sms : NAN;
}

static void measure_throughput(struct gpu *g, const struct lat_entry *e, struct bufs *b,
                               int repeats, json_t *o)
{
    char err[512];
    struct gpu_module m;
    CUfunction fn;
    char *ptx = lat_ptx_throughput(e, g->info.cc_major, g->info.cc_minor), name[64];
    snprintf(name, sizeof name, "latency_%s_tput", e->name);
    if (!ptx || gpu_module_build(g, ptx, name, &m, err, sizeof err) < 0) {
        json_object_set_new(o, "throughput_error", json_string(ptx ? err : "out of memory"));
        free(ptx);
        return;
    }
    free(ptx);
    json_t *sass = lat_check_throughput(e, m.cubin, m.cubin_size);
    json_object_set_new(o, "throughput_sass", sass);
    struct tput_run t = {.blocks = (unsigned)(g->info.sm_count * TPUT_BLOCKS_PER_SM), .iters = 4};
    double per[PROBE_MAX_REPEATS], mhz[PROBE_MAX_REPEATS];
    int ok = json_is_true(json_object_get(sass, "verified")) &&
             gpu_module_function(g, &m, "tput", &fn, err, sizeof err) == 0 &&
             upload_inputs(g, e, b, err, sizeof err) == 0 &&
             time_tput(g, fn, b, &t, err, sizeof err) == 0; /* sizes the run */
    if (ok) {
        double scale = t.ns > 0 ? TPUT_TARGET_NS / t.ns : 1;
        t.iters = (unsigned)fmax(4, fmin(4096, t.iters * scale));
    }
    for (int r = 0; ok && r < repeats; r++) {
        ok = time_tput(g, fn, b, &t, err, sizeof err) == 0;
        per[r] = results_per_clock_per_sm(e, &t, g->info.sm_count);
        mhz[r] = t.mhz;
    }
    if (ok) {
        json_object_set_new(o, "throughput_per_clock_per_sm", spread_json(per, (size_t)repeats));
        json_object_set_new(o, "throughput_clock_mhz", spread_json(mhz, (size_t)repeats));
        json_object_set_new(o, "throughput_shape",
                            json_pack("{s:i, s:i, s:i, s:i, s:i}", "blocks", t.blocks, "threads",
                                      TPUT_THREADS, "chains", TPUT_CHAINS, "unroll", TPUT_UNROLL,
                                      "iterations", t.iters));
    } else {
        json_object_set_new(o, "throughput_error",
                            json_string(json_is_true(json_object_get(sass, "verified"))
                                            ? err
                                            : "the compiled loop is not what the probe times"));
    }
    gpu_module_free(g, &m);
}

/* ---- the run ------------------------------------------------------------------ */

static json_t *entry_json(const struct lat_entry *e)
{
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:i}", "name", e->name, "group", e->group, "ptx",
                          e->ptx, "sass_opcode", e->sass, "per_step", e->per_step);
    if (e->note)
        json_object_set_new(o, "note", json_string(e->note));
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
    CUdeviceptr *all[] = {&b->in, &b->out, &b->glob};
    for (size_t i = 0; i < 3; i++)
        if (*all[i])
            g->cu->cuMemFree(*all[i]);
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
            measure_latency(&g, &lat_catalog[i], &b, repeats, o);
            measure_throughput(&g, &lat_catalog[i], &b, repeats, o);
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
