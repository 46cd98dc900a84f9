/*
 * `gpuprobe trace cache SORTED`: L1 and L2 hit rates of a sorted trace
 * (the sorter's output), by the exact and the reuse-distance engines of
 * the cache model (cache/, docs/cache-model.md).
 *
 * DESIGN
 * A thin driver: the options become a struct cache_config (geometry from
 * --arch, then --l1/--l2 over it; timing from the sorted file's own
 * parameters — M as the latency, its MSHR count — or the architecture's
 * trace preset for CSV input, then --latency/--mshr/--merge; with --device,
 * the capacities come from the device's stored memory result, and with
 * --set-index hardware the L1's set mapping its L1 set search found), the
 * input is
 * opened by cache_input_open, the model run by cache_model_run. On a
 * terminal a table, otherwise (or with --json) the JSON document of
 * cache_result_to_json. `trace` dispatches here when its first word is
 * "cache" (server/cli/trace.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/input.h"
#include "cache/model.h"
#include "cache/setindex.h"
#include "db/results.h"
#include "probes/l1_sets.h"
#include "server/cli/cli.h"
#include "server/cli/trace_cache_parts.h"
#include "trace/readfile.h"

#define CMD "trace cache"

static const char usage[] =
    "usage: gpuprobe trace cache SORTED [options]\n"
    "L1 (per SM) and L2 hit rates, by request and by sector, of a sorted trace\n"
    "(the output of gpuprobe trace sort, binary or CSV), from two engines: an\n"
    "exact set-associative LRU simulation and the reuse-distance model\n"
    "(docs/cache-model.md); misses by class: compulsory, capacity, associativity,\n"
    "sector, latency, mshr.\n"
    "options:\n"
    "  --arch A            cache geometry preset: hopper (default) or fermi; a sorted\n"
    "                      binary file made for another SM count or line (its header\n"
    "                      says; trace sort's default is fermi's) is refused when no\n"
    "                      geometry is given, warned about when one is\n"
    "  --device UUID       the capacities measured on this device (its newest memory\n"
    "                      result in --db): the L1 the largest footprint the memory\n"
    "                      probe still found at L1 latency, the L2 the driver's L2\n"
    "                      size, each rounded down to whole ways of the preset's sets\n"
    "  --db PATH           the database holding the device's results (with --device)\n"
    "  --l1 SIZE,ASSOC,LINE,SECTOR\n"
    "                      the L1 of each SM, e.g. 224K,448,128,32 (ASSOC 'full':\n"
    "                      fully associative); overrides the preset\n"
    "  --l2 SIZE,ASSOC,LINE,SECTOR|none\n"
    "                      the shared L2 (same line and sector as the L1), or none\n"
    "  --set-index F       modulo (default) or xor, for both levels; or, for the L1\n"
    "                      alone, mask:M0,M1,... (set bit j = parity of address AND\n"
    "                      Mj; 2^count sets, the ways follow from the size) or\n"
    "                      hardware: the masks the device's newest memory result\n"
    "                      found (needs --device and --db)\n"
    "  --engine E          exact, reuse or both (default)\n"
    "  --latency N         L1 fetch latency in requests of the SM's stream (default:\n"
    "                      the sort's lat_min from the binary header, else the\n"
    "                      architecture's trace preset)\n"
    "  --mshr N            L1 MSHRs per SM (default: the sort's mshr, as --latency)\n"
    "  --merge N           requests that may merge into one fetch in flight (default:\n"
    "                      hopper 64, measured on an H200; fermi 8, GPGPU-Sim's; 0:\n"
    "                      every request to a line in flight is an mshr miss)\n"
    "  --l2-latency N      L2 fetch latency in L2 requests (default 0: not modelled)\n"
    "  --l2-partitions F   the L2 as two partitions (docs/cache-model.md, \"The L2's\n"
    "                      partitions\"): F is a memory probe result (gpuprobe probe\n"
    "                      memory --json) whose l2_partitions found two; each SM reads\n"
    "                      through its own, half the L2, and a line missed there is\n"
    "                      looked up in its home partition too (the L2's figures count\n"
    "                      both lookups, as the hardware's counters do). With --device\n"
    "                      the device's own result is used when it found two; 'none':\n"
    "                      one L2 whatever was found\n"
    "  --threads N         1 (default) or 2: with both engines and the L2, each\n"
    "                      engine's walk on a thread of its own (the same counts;\n"
    "                      less wall time on two idle cores, both engines' memory\n"
    "                      at once); one engine always runs on one thread\n"
    "  --json              the JSON document even on a terminal\n"
    "Exit status: 0 done; 1 the input is bad or cannot be read; 2 bad usage.\n";

struct opts {
    const char *input, *arch, *l1, *l2, *set_index, *engine, *latency, *mshr, *merge, *l2_latency;
    const char *device, *db, *l2_parts, *threads;
    int json;
    int chosen;        /* the geometry was given (--arch, --device, --l1 or --l2) */
    unsigned device_sms; /* --device's SM count, from its stored info; 0 when not known */
};

static int number(const char *opt, const char *text, uint32_t max, uint32_t *v)
{
    char *end;
    unsigned long long x = text ? strtoull(text, &end, 10) : 0;
    if (!text)
        return 0;
    if (end == text || *end || text[0] == '-' || x > max)
        return cli_fail(CMD, 2, "--%s must be an integer from 0 to %u, not '%s'", opt, max, text);
    *v = (uint32_t)x;
    return 0;
}

/* A number member of a JSON object, 0 when absent. */
static uint64_t member_u64(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

static int resize(struct cache_geom *g, uint64_t bytes)
{
    char msg[256];
    return cache_geom_resize(g, bytes, msg, sizeof msg);
}

/* --device: the L1 capacity from the newest memory result (its first
 * level's up_to_bytes, the largest footprint still at L1 latency; a
 * document's next_bytes, the first one past it, when the result has it),
 * the L2 from the device's l2_bytes. docs/cache-model.md, "Geometry". */
static int device_geometry(struct opts *o, struct cache_config *cfg, json_t **l1_sets,
                           json_t **l2_parts)
{
    json_t *res, *info;
    int rc = cli_device_memory(CMD, o->db, o->device, &info, &res);
    if (rc)
        return rc;
    uint64_t l1 = 0, l2 = member_u64(info, "l2_bytes"), sms = member_u64(info, "sm_count");
    o->device_sms = sms <= UINT32_MAX ? (unsigned)sms : 0;
    size_t i;
    json_t *lv;
    json_array_foreach(json_object_get(json_object_get(res, "levels"), "ca"), i, lv) {
        if (member_u64(lv, "level") == 1)
            l1 = member_u64(lv, "up_to_bytes");
    }
    *l1_sets = json_incref(json_object_get(res, "l1_sets"));
    *l2_parts = json_incref(json_object_get(res, "l2_partitions"));
    json_decref(res);
    json_decref(info);
    if (!l1 || resize(&cfg->geom[0], l1))
        return cli_fail(CMD, 1, "%s: the memory result has no usable L1 level", o->device);
    if (l2 && resize(&cfg->geom[1], l2))
        return cli_fail(CMD, 1, "%s: l2_bytes %llu does not fit the L2's sets", o->device,
                        (unsigned long long)l2);
    return 0;
}

/* --set-index hardware: the masks of the device's L1 set search (the
 * memory result's l1_sets), for lines of the size it found. */
static int hardware_spec(const struct opts *o, const json_t *l1_sets, const struct cache_geom *l1,
                         struct cache_set_spec *spec)
{
    char err[512];
    uint32_t line;
    size_t n;
    if (!o->device)
        return cli_fail(CMD, 2, "--set-index hardware needs --device UUID and --db PATH: the "
                                "mapping is the device's stored memory result");
    if (!l1_sets || json_is_null(l1_sets))
        return cli_fail(CMD, 1, "%s: its newest memory result has no L1 set search (run gpuprobe "
                                "probe memory with this gpuprobe)", o->device);
    memset(spec, 0, sizeof *spec);
    spec->index = CACHE_SET_MASKS;
    if (l1s_masks_from_json(l1_sets, spec->masks, CACHE_MAX_INDEX_MASKS, &n, &line, err,
                            sizeof err) < 0)
        return cli_fail(CMD, 1, "%s: %s", o->device, err);
    if (line != l1->line)
        return cli_fail(CMD, 2, "%s: the L1 set mapping is for %u-byte lines, the L1 has %u",
                        o->device, line, l1->line);
    spec->nmasks = (uint32_t)n;
    return 0;
}

/* --set-index: modulo and xor on both levels; masks (given or the
 * hardware's) on the L1, which is what the probe measures. */
static int set_index(const struct opts *o, const json_t *l1_sets, struct cache_config *cfg)
{
    struct cache_set_spec spec;
    char msg[256];
    int rc;
    if (strcmp(o->set_index, "hardware") == 0) {
        if ((rc = hardware_spec(o, l1_sets, &cfg->geom[0], &spec)) != 0)
            return rc;
    } else if (cache_set_spec_parse(o->set_index, &spec, msg, sizeof msg)) {
        return cli_fail(CMD, 2, "--set-index: %s", msg);
    }
    for (int lv = 0; lv < (spec.index == CACHE_SET_MASKS ? 1 : 2); lv++)
        if (cache_geom_set_index(&cfg->geom[lv], &spec, msg, sizeof msg))
            return cli_fail(CMD, 2, "--set-index on the L%d: %s", lv + 1, msg);
    return 0;
}

/* The L2's partitions: --l2-partitions FILE (a memory probe result), none,
 * or, with --device, the device's own search when it found two; each
 * partition's half of the L2 must still be whole sets. */
static int partitions(const struct opts *o, const json_t *device_parts, struct cache_config *cfg)
{
    char msg[300];
    json_error_t je;
    if (o->l2_parts && strcmp(o->l2_parts, "none") == 0)
        return 0;
    if (!o->l2_parts) { /* --device: its search, if it found two */
        const json_t *v = json_object_get(device_parts, "verdict");
        if (!json_is_string(v) || strcmp(json_string_value(v), "two partitions") != 0 ||
            cache_parts_from_json(device_parts, &cfg->parts, msg, sizeof msg))
            return 0;
    } else {
        json_t *doc = json_load_file(o->l2_parts, 0, &je);
        if (!doc)
            return cli_fail(CMD, 1, "--l2-partitions: %s: %s", o->l2_parts, je.text);
        int rc = cache_parts_from_json(doc, &cfg->parts, msg, sizeof msg);
        json_decref(doc);
        if (rc)
            return cli_fail(CMD, 1, "--l2-partitions: %s: %s", o->l2_parts, msg);
    }
    struct cache_geom half;
    if (!cfg->l2 || cache_part_geom(&cfg->geom[1], &half, msg, sizeof msg))
        return cli_fail(CMD, 2, "--l2-partitions: %s", cfg->l2 ? msg : "there is no L2 (--l2 none)");
    return 0;
}

/* The geometry: the preset, the device's capacities, then --l1/--l2, then
 * --set-index, then the L2's partitions. */
static int geometry(struct opts *o, struct cache_config *cfg)
{
    char msg[256];
    int rc = 0;
    json_t *l1_sets = NULL, *l2_parts = NULL;
    if (cache_arch_geometry(o->arch, &cfg->geom[0], &cfg->geom[1], msg, sizeof msg))
        return cli_fail(CMD, 2, "--arch: %s", msg);
    if (o->device)
        rc = device_geometry(o, cfg, &l1_sets, &l2_parts);
    if (!rc && o->l1 && cache_geom_parse(o->l1, &cfg->geom[0], msg, sizeof msg))
        rc = cli_fail(CMD, 2, "--l1: %s", msg);
    cfg->l2 = !(o->l2 && strcmp(o->l2, "none") == 0);
    if (!rc && o->l2 && cfg->l2 && cache_geom_parse(o->l2, &cfg->geom[1], msg, sizeof msg))
        rc = cli_fail(CMD, 2, "--l2: %s", msg);
    if (!rc && o->set_index)
        rc = set_index(o, l1_sets, cfg);
    if (!rc && (o->l2_parts || (cfg->l2 && l2_parts)))
        rc = partitions(o, l2_parts, cfg);
    json_decref(l1_sets);
    json_decref(l2_parts);
    if (rc)
        return rc;
    if (cfg->l2 && (cfg->geom[1].line != cfg->geom[0].line || cfg->geom[1].sector != cfg->geom[0].sector))
        return cli_fail(CMD, 2,
                        "the L2's line and sector must be the L1's (%u and %u bytes), and the %s L2 has "
                        "%u and %u: give --l2 SIZE,ASSOC,%u,%u, or --l2 none",
                        cfg->geom[0].line, cfg->geom[0].sector, o->l2 ? "--l2" : "preset's",
                        cfg->geom[1].line, cfg->geom[1].sector, cfg->geom[0].line, cfg->geom[0].sector);
    if (!o->engine || strcmp(o->engine, "both") == 0)
        cfg->engines = CACHE_ENGINE_BOTH;
    else if (strcmp(o->engine, "exact") == 0)
        cfg->engines = CACHE_ENGINE_EXACT;
    else if (strcmp(o->engine, "reuse") == 0)
        cfg->engines = CACHE_ENGINE_REUSE;
    else
        return cli_fail(CMD, 2, "--engine must be exact, reuse or both, not '%s'", o->engine);
    return 0;
}

/* The timing: the sort's parameters (binary) or the trace preset, then the options. */
static int timing(const struct opts *o, const struct cache_input *in, struct cache_config *cfg)
{
    struct trace_params p;
    char msg[256];
    trace_params_default(&p);
    if (in->has_params)
        p = in->params;
    else if (trace_params_preset(&p, o->arch, msg, sizeof msg))
        return cli_fail(CMD, 2, "--arch: %s", msg);
    cfg->timing[0] = (struct cache_timing){p.lat_min, p.mshr, cache_arch_merge(o->arch)};
    cfg->timing[1] = (struct cache_timing){0, 0, cache_arch_merge(o->arch)};
    if (number("latency", o->latency, 1000000, &cfg->timing[0].latency) ||
        number("mshr", o->mshr, 65536, &cfg->timing[0].mshr) ||
        number("merge", o->merge, 1000000, &cfg->timing[0].max_merge) ||
        number("l2-latency", o->l2_latency, 1000000, &cfg->timing[1].latency))
        return 2;
    cfg->timing[1].max_merge = cfg->timing[0].max_merge;
    return 0;
}

/* A sorted binary file carries the sort's parameters: an order sorted for
 * another machine than the geometry's (trace sort's default is Fermi's 15
 * SMs, this command's Hopper's L1 and L2) is refused when the geometry is
 * the default, and warned about when it was chosen (docs/cache-model.md,
 * "Which machine the order is for"). CSV carries none: nothing to check. */
static int sort_fits(const struct opts *o, const struct cache_input *in,
                     const struct cache_config *cfg)
{
    char why[256], as[16] = "", fix[96] = "--arch hopper takes it as it is; --l1, --l2";
    if (!in->has_params)
        return 0;
    if (o->device_sms) { /* --device: its own SMs, not the preset's */
        if (in->params.sms == o->device_sms && in->params.line_bytes == cfg->geom[0].line)
            return 0;
        snprintf(why, sizeof why, "sorted for %u SMs, %u-byte lines; device %s has %u SMs and %u-byte L1 lines",
                 in->params.sms, in->params.line_bytes, o->device, o->device_sms, cfg->geom[0].line);
    } else if (cache_arch_fits_sort(o->arch, &cfg->geom[0], &in->params, as, sizeof as, why, sizeof why) == 0) {
        return 0;
    }
    if (o->chosen) {
        fprintf(stderr, "gpuprobe %s: warning: %s: %s: the hit rates are of that order on this "
                        "geometry\n", CMD, o->input, why);
        return 0;
    }
    for (const char *const *a = cache_arch_names; *a; a++)
        if (as[0] && strcmp(*a, as) == 0)
            snprintf(fix, sizeof fix, "--arch %s, the preset it was sorted with", as);
    return cli_fail(CMD, 2, "%s: %s (the default): sort it for Hopper (gpuprobe trace sort TRACE "
                            "-o OUT --out-format bin --arch hopper), or name the geometry to model "
                            "it against (%s)", o->input, why, fix);
}

/* ---- the table ------------------------------------------------------------------ */

static void size_text(uint64_t b, char *buf, size_t len)
{
    if (b % (1 << 20) == 0)
        snprintf(buf, len, "%llu MiB", (unsigned long long)(b >> 20));
    else if (b % 1024 == 0)
        snprintf(buf, len, "%llu KiB", (unsigned long long)(b >> 10));
    else
        snprintf(buf, len, "%llu B", (unsigned long long)b);
}

static void geom_line(const char *name, const struct cache_geom *g, const struct cache_timing *t)
{
    char sz[32], index[256];
    size_text(g->size, sz, sizeof sz);
    printf("%s %s, %u-way (%u sets), %u B lines, %u B sectors, %s index, stores %s; latency %u, "
           "mshr %u, merge %u\n",
           name, sz, g->assoc, g->sets, g->line, g->sector,
           cache_set_index_text(g, index, sizeof index),
           g->write == CACHE_WRITE_THROUGH_NO_ALLOCATE ? "written through, not allocated"
                                                       : "written back, allocated",
           t->latency, t->mshr, t->max_merge);
}

/* The row of a level: its hit rates, the loads' sector lookup hit rate
 * (present or on its way: ncu's global-load lookup hits), the stores' hit
 * rate, the misses by class and what went below. */
static void row(const char *name, const struct cache_estimate *e)
{
    double ld_sectors = e->sectors - e->stores.sectors;
    double ld_lookup = e->sector_hits - e->stores.sector_hits + e->pending_sectors - e->stores.pending_sectors;
    printf("%-9s %12.0f %7.2f %7.2f %8.2f %7.2f", name, e->requests, 100 * cache_rate(e->hits, e->requests),
           100 * cache_rate(e->sector_hits, e->sectors), 100 * cache_rate(ld_lookup, ld_sectors),
           100 * cache_rate(e->stores.hits, e->stores.requests));
    for (int i = 0; i < CACHE_MISS_CLASSES; i++)
        printf(" %11.0f", e->miss[i]);
    printf(" %11.0f\n", e->below);
}

static void print_table(const struct cache_result *res, const struct cache_config *cfg)
{
    static const char *const eng[2] = {"exact", "reuse"};
    printf("%llu requests on %u SMs\n", (unsigned long long)res->records, res->sms);
    geom_line("L1", &cfg->geom[0], &cfg->timing[0]);
    if (res->l2)
        geom_line("L2", &cfg->geom[1], &cfg->timing[1]);
    printf("\n%-9s %12s %7s %7s %8s %7s", "", "requests", "hit%", "sect%", "ld-look%", "st-hit%");
    for (int i = 0; i < CACHE_MISS_CLASSES; i++)
        printf(" %11s", i == CACHE_MISS_CONFLICT ? "assoc" : cache_miss_name((enum cache_miss)i));
    printf(" %11s\n", "to next");
    for (int lv = 0; lv < (res->l2 ? 2 : 1); lv++)
        for (int e = 0; e < 2; e++) {
            if (!(res->engines & (1 << e)))
                continue;
            char name[16];
            snprintf(name, sizeof name, "L%d %s", lv + 1, eng[e]);
            row(name, &res->r[e][lv].est);
        }
    if (res->engines == CACHE_ENGINE_BOTH)
        for (int lv = 0; lv < (res->l2 ? 2 : 1); lv++) {
            const struct cache_estimate *a = &res->r[0][lv].est, *b = &res->r[1][lv].est;
            printf("L%d reuse - exact: %+.2f hit-rate points (requests), %+.2f (sectors)\n", lv + 1,
                   100 * (cache_rate(b->hits, b->requests) - cache_rate(a->hits, a->requests)),
                   100 * (cache_rate(b->sector_hits, b->sectors) - cache_rate(a->sector_hits, a->sectors)));
        }
    printf("\nper SM, L1 hit%% (requests)%s\n%6s %12s", res->l2 ? " and the L2 hit% of its requests" : "",
           "sm", "requests");
    for (int e = 0; e < 2; e++)
        if (res->engines & (1 << e)) {
            printf(" %8s", eng[e]);
            if (res->l2)
                printf("  L2 %-5s", eng[e]);
        }
    putchar('\n');
    for (uint32_t s = 0; s < res->sms; s++) {
        int e0 = res->engines & 1 ? 0 : 1;
        const struct cache_estimate *x = &res->r[e0][0].est_sm[s];
        if (!x->requests)
            continue;
        printf("%6u %12.0f", s, x->requests);
        for (int e = 0; e < 2; e++)
            if (res->engines & (1 << e)) {
                const struct cache_estimate *y = &res->r[e][0].est_sm[s], *z = &res->r[e][1].est_sm[s];
                printf(" %8.2f", 100 * cache_rate(y->hits, y->requests));
                if (res->l2)
                    printf("  %8.2f", 100 * cache_rate(z->hits, z->requests));
            }
        putchar('\n');
    }
    if (!(res->engines & CACHE_ENGINE_REUSE))
        return;
    for (int lv = 0; lv < (res->l2 ? 2 : 1); lv++) {
        const struct cache_rdhist *h = &res->r[1][lv].hist;
        printf("\nL%d reuse distances (distinct lines between uses): compulsory %llu\n", lv + 1,
               (unsigned long long)h->cold);
        for (int k = 0; k < CACHE_RD_BINS; k++)
            if (h->bin[k]) {
                unsigned long long lo = k ? 1ull << (k - 1) : 0, hi = k ? (1ull << k) - 1 : 0;
                if (h->beyond_from && hi >= h->beyond_from) /* as the JSON: the bin ends below the cap */
                    hi = h->beyond_from - 1;
                printf("  %10llu-%-10llu %12llu\n", lo, hi, (unsigned long long)h->bin[k]);
            }
        if (h->beyond_from) /* the capped L2: reuses deeper than the lines it tracks */
            printf("  %10llu%-12s%12llu (deeper than the %llu lines tracked)\n", (unsigned long long)h->beyond_from,
                   " or more", (unsigned long long)h->beyond, (unsigned long long)h->beyond_from);
    }
}

/* ---- the command ------------------------------------------------------------------ */

int cmd_trace_cache(int argc, char **argv)
{
    struct opts o = {0};
    const struct cli_option table[] = {
        {"arch", 0, &o.arch, NULL, NULL},         {"l1", 0, &o.l1, NULL, NULL},
        {"l2", 0, &o.l2, NULL, NULL},             {"set-index", 0, &o.set_index, NULL, NULL},
        {"engine", 0, &o.engine, NULL, NULL},     {"latency", 0, &o.latency, NULL, NULL},
        {"mshr", 0, &o.mshr, NULL, NULL},         {"merge", 0, &o.merge, NULL, NULL},
        {"l2-latency", 0, &o.l2_latency, NULL, NULL}, {"json", 0, NULL, &o.json, NULL},
        {"device", 0, &o.device, NULL, NULL},     {"db", 0, &o.db, NULL, NULL},
        {"l2-partitions", 0, &o.l2_parts, NULL, NULL}, {"threads", 0, &o.threads, NULL, NULL},
        {NULL, 0, NULL, NULL, NULL}};
    int status;
    if (cli_parse(CMD, usage, table, &o.input, argc, argv, &status) < 0)
        return status;
    if (!o.input)
        return cli_fail(CMD, 2, "name the sorted trace (gpuprobe trace cache SORTED)");
    o.chosen = o.arch || o.device || o.l1 || o.l2;
    if (!o.arch)
        o.arch = "hopper";
    struct cache_config cfg;
    memset(&cfg, 0, sizeof cfg);
    if ((status = geometry(&o, &cfg)) != 0)
        return status;
    if (o.threads && strcmp(o.threads, "1") != 0 && strcmp(o.threads, "2") != 0)
        return cli_fail(CMD, 2, "--threads must be 1 or 2, not '%s'", o.threads);
    cfg.threads = o.threads ? o.threads[0] - '0' : 1;
    struct cache_input in;
    struct trace_err err = {0};
    if (cache_input_open(&in, o.input, &err)) {
        char msg[400];
        trace_err_format(&err, msg, sizeof msg);
        return cli_fail(CMD, 1, "%s: %s", o.input, msg);
    }
    if ((status = timing(&o, &in, &cfg)) != 0 || (status = sort_fits(&o, &in, &cfg)) != 0) {
        cache_input_close(&in);
        return status;
    }
    struct cache_result res;
    char msg[256];
    if (cache_model_run(&in, &cfg, &res, msg, sizeof msg)) {
        cache_result_free(&res);
        cache_input_close(&in);
        return cli_fail(CMD, 1, "%s", msg);
    }
    cache_input_close(&in);
    if (o.json || !isatty(STDOUT_FILENO)) {
        json_t *j = cache_result_to_json(&res, &cfg);
        status = j && cli_print_json(j, 0) == 0 ? 0 : cli_fail(CMD, 1, "cannot write the result");
    } else {
        print_table(&res, &cfg);
        status = fflush(stdout) == 0 ? 0 : 1;
    }
    cache_result_free(&res);
    return status;
}
