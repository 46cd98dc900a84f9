/*
 * A synthetic fleet for the fleet benchmark and the fleet tests: result
 * bundles of many GPUs made from the shipped reference measurements, with
 * seeded noise and a few planted outliers.
 *
 *   fleet-synth --out DIR --gpus N --hosts H --seed S --outliers K
 *               [--figures] [--driver V] REFERENCE.json[=MODEL] ...
 *
 * Each GPU is a copy of one reference device (taken in turn, so the models
 * split the fleet evenly), renamed MODEL when given (a third model can be
 * the same measurements under another name: the fleet compares within a
 * model, so what matters is that its peers agree), with a UUID and a host
 * of its own (GPUs are spread over H hosts in turn; a host's k-th GPU sits
 * in slot k of an 8-GPU node: its PCI bus id and NUMA node are that slot's),
 * its results' origin
 * jobs renumbered, and noise: every repeated statistic ({"median", "min",
 * "max", "runs"}) whose values are not all whole numbers, and every cache
 * level's latency, is scaled by one factor 1 + N(0, SIGMA) drawn for it
 * (SIGMA = 0.5 %, about the spread of the reference's own repeats of a
 * clock-bound figure); whole-number statistics (latencies in cycles, stall
 * counts) stay exact, as they are across real GPUs. The first K GPUs get
 * one planted fault each, in turn: a slow L2 (its level latency +15 %), a
 * lower SM clock (-15 %), another register bank map (two registers moved
 * to the other class), slower device memory (bandwidth -20 %). Their UUIDs
 * and faults are listed in DIR/planted.tsv ("uuid<TAB>fault<TAB>figure
 * family"); every bundle is DIR/NNNNN.json with a valid sha256. With
 * --figures each result is replaced by its fleet figures alone (kind
 * fleet-figures, fleet/metrics.h), as a node with upstream_content =
 * figures sends it. With --driver V every GPU was measured under driver V
 * (each driver_version in its bundle is V): the same fleet on another
 * driver.
 *
 *   fleet-synth --digest DIR N
 *
 * reads DIR/00000.json .. the N-th back, parses each and checks its digest,
 * and prints how many it did per second: the least work any import of them
 * must do, the benchmark's baseline.
 * Not part of gpuprobe: it links the bundle code only for the digest.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fleet/metrics.h"
#include "server/bundles/bundle.h"
#include "util/jsonfile.h"

#define SIGMA 0.005

struct rng {
    uint64_t s;
};

static uint64_t next(struct rng *r) /* splitmix64 */
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double uniform(struct rng *r)
{
    return ((double)(next(r) >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(struct rng *r) /* Box-Muller */
{
    return sqrt(-2 * log(uniform(r))) * cos(2 * M_PI * uniform(r));
}

/* ---- noise ------------------------------------------------------------------ */

static int whole(const json_t *v)
{
    return json_is_integer(v) || (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)));
}

static void scale_number(json_t *parent, const char *key, size_t index, double f)
{
    json_t *v = key ? json_object_get(parent, key) : json_array_get(parent, index);
    if (!json_is_number(v))
        return;
    json_t *nv = json_real(json_number_value(v) * f);
    if (key)
        json_object_set_new(parent, key, nv);
    else
        json_array_set_new(parent, index, nv);
}

/* A repeated statistic: an object with median, min, max and runs. */
static int is_stat(const json_t *o)
{
    return json_is_object(o) && json_is_number(json_object_get(o, "median")) &&
           json_is_array(json_object_get(o, "runs"));
}

static int all_whole(const json_t *stat)
{
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(stat, "runs"), i, v) if (!whole(v)) return 0;
    return whole(json_object_get(stat, "median"));
}

static void scale_stat(json_t *stat, double f)
{
    scale_number(stat, "median", 0, f);
    scale_number(stat, "min", 0, f);
    scale_number(stat, "max", 0, f);
    json_t *runs = json_object_get(stat, "runs");
    for (size_t i = 0; i < json_array_size(runs); i++)
        scale_number(runs, NULL, i, f);
}

static void noise(json_t *v, struct rng *r)
{
    if (is_stat(v)) {
        if (!all_whole(v))
            scale_stat(v, 1 + SIGMA * gauss(r));
        return;
    }
    const char *key;
    json_t *child;
    size_t i;
    if (json_is_object(v)) {
        json_object_foreach(v, key, child) noise(child, r);
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, child) noise(child, r);
    }
}

/* Each cache level's latency is a plain number (read off the curve): the
 * same noise, or for a slow L2 +15 % on the L2 as each load kind sees it
 * (.ca's level 2, .cg's level 1). */
static void levels(json_t *memory, struct rng *r, int slow_l2)
{
    static const struct {
        const char *load;
        json_int_t l2;
    } loads[] = {{"ca", 2}, {"cg", 1}};
    for (size_t l = 0; l < 2; l++) {
        size_t i;
        json_t *lv;
        json_array_foreach(json_object_get(json_object_get(memory, "levels"), loads[l].load), i,
                           lv) {
            int l2 = json_integer_value(json_object_get(lv, "level")) == loads[l].l2;
            scale_number(lv, "cycles", 0, slow_l2 && l2 ? 1.15 : 1 + SIGMA * gauss(r));
        }
    }
}

/* ---- planted faults ------------------------------------------------------------ */

static const char *const faults[][2] = {
    {"slow-l2", "gpuprobe_memory_latency_cycles"},
    {"low-clock", "gpuprobe_sm_clock_mhz"},
    {"bank-map", "gpuprobe_register_bank_map"},
    {"slow-dram", "gpuprobe_dram_bandwidth_bytes_per_second"},
};
#define NFAULTS (sizeof faults / sizeof faults[0])

static void low_clock(json_t *v)
{
    const char *key;
    json_t *child;
    size_t i;
    if (json_is_object(v)) {
        json_t *c = json_object_get(v, "clock_mhz");
        if (json_is_object(c) && json_object_get(c, "before")) {
            scale_number(c, "before", 0, 0.85);
            scale_number(c, "after", 0, 0.85);
        }
        json_object_foreach(v, key, child) if (strcmp(key, "clock_mhz")) low_clock(child);
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, child) low_clock(child);
    }
}

static int by_integer(const void *a, const void *b)
{
    json_int_t x = json_integer_value(*(json_t *const *)a);
    json_int_t y = json_integer_value(*(json_t *const *)b);
    return (x > y) - (x < y);
}

/* Moves registers 10 and 11 to each other's class, in the map and in the
 * class lists (kept ascending). */
static void other_bank_map(json_t *banks)
{
    json_t *map = json_object_get(banks, "map");
    json_t *a = json_deep_copy(json_array_get(map, 10)), *b = json_deep_copy(json_array_get(map, 11));
    json_array_set_new(map, 10, b);
    json_array_set_new(map, 11, a);
    size_t i, j;
    json_t *cls, *reg;
    json_array_foreach(json_object_get(banks, "classes"), i, cls) {
        size_t n = json_array_size(cls);
        json_t **regs = malloc((n ? n : 1) * sizeof *regs);
        if (!regs)
            return;
        json_array_foreach(cls, j, reg) {
            json_int_t v = json_integer_value(reg);
            regs[j] = json_integer(v == 10 ? 11 : v == 11 ? 10 : v);
        }
        qsort(regs, n, sizeof *regs, by_integer);
        json_array_clear(cls);
        for (j = 0; j < n; j++)
            json_array_append_new(cls, regs[j]);
        free(regs);
    }
}

/* ---- one GPU ------------------------------------------------------------------ */

static json_t *suite_part(json_t *device, const char *part)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(device, "results"), i, r) {
        json_t *res = json_object_get(r, "result");
        const char *kind = json_string_value(json_object_get(r, "kind"));
        if (strcmp(kind, "suite") == 0 && json_object_get(res, part))
            return json_object_get(res, part);
        if (strcmp(kind, part) == 0)
            return res;
    }
    return NULL;
}

static void set_identity(json_t *v, const char *uuid, const char *name)
{
    const char *key;
    json_t *child;
    size_t i;
    if (json_is_object(v)) {
        json_t *dev = json_object_get(v, "device");
        if (json_is_object(dev) && json_object_get(dev, "uuid")) {
            json_object_set_new(dev, "uuid", json_string(uuid));
            if (name)
                json_object_set_new(dev, "name", json_string(name));
        }
        json_object_foreach(v, key, child) if (strcmp(key, "device")) set_identity(child, uuid, name);
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, child) set_identity(child, uuid, name);
    }
}

/* Every driver_version within v becomes driver (the device's info and
 * each result's provenance). */
static void set_driver(json_t *v, const char *driver)
{
    const char *key;
    json_t *child;
    size_t i;
    if (json_is_object(v)) {
        json_object_foreach(v, key, child) {
            if (strcmp(key, "driver_version") == 0 && json_is_string(child))
                json_string_set(child, driver);
            else
                set_driver(child, driver);
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, child) set_driver(child, driver);
    }
}

/* The PCI bus of an 8-GPU HGX node's slots; slots 0-3 hang off NUMA node 0,
 * 4-7 off node 1. */
static const unsigned hgx_bus[8] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};

/* How one GPU's bundle is made, beyond its reference and place. */
struct making {
    int figures_only;
    const char *driver;      /* NULL: the reference's */
};

static json_t *gpu(const json_t *ref, const char *model, size_t index, size_t slot,
                   const char *host, int fault, const struct making *mk, struct rng *r,
                   char uuid[48])
{
    json_t *b = json_deep_copy(ref);
    json_t *dev = json_array_get(json_object_get(b, "devices"), 0);
    snprintf(uuid, 48, "GPU-5f000000-0000-4000-8000-%012zx", index);
    json_object_set_new(dev, "uuid", json_string(uuid));
    json_object_set_new(dev, "host", json_string(host));
    if (model)
        json_object_set_new(dev, "name", json_string(model));
    set_identity(dev, uuid, model);
    if (mk->driver)
        set_driver(dev, mk->driver);
    json_t *info = json_object_get(dev, "info");
    json_object_set_new(info, "uuid", json_string(uuid));
    if (model)
        json_object_set_new(info, "name", json_string(model));
    char bus[16];
    snprintf(bus, sizeof bus, "0000:%02x:00.0", hgx_bus[slot % 8] + (unsigned)(slot / 8));
    json_object_set_new(info, "pci_bus_id", json_string(bus));
    json_object_set_new(info, "numa_node", json_integer((json_int_t)(slot % 8 / 4)));
    size_t i;
    json_t *res;
    json_array_foreach(json_object_get(dev, "results"), i, res) {
        json_t *job = json_object_get(res, "job");
        json_object_set_new(job, "id", json_integer((json_int_t)(index * 16 + i + 1)));
        json_object_set_new(job, "host", json_string(host));
        noise(json_object_get(res, "result"), r);
    }
    json_t *memory = suite_part(dev, "memory");
    levels(memory, r, fault == 0);
    if (fault == 1)
        low_clock(dev);
    if (fault == 2)
        other_bank_map(suite_part(dev, "banks"));
    if (fault == 3)
        scale_stat(json_object_get(json_object_get(suite_part(dev, "model-validation"),
                                                   "bandwidth"),
                                   "dram_bytes_per_s"),
                   0.8);
    char hex[65], err[64];
    json_object_del(b, "sha256");
    int ok = mk->figures_only ? bundle_to_figures(b, err, sizeof err) > 0
                          : bundle_digest(b, hex) == 0 &&
                                json_object_set_new(b, "sha256", json_string(hex)) == 0;
    if (!ok) {
        json_decref(b);
        return NULL;
    }
    return b;
}

/* ---- the fleet ---------------------------------------------------------------- */

static int usage(void)
{
    fprintf(stderr, "usage: fleet-synth --out DIR --gpus N --hosts H --seed S --outliers K "
                    "[--figures] [--driver V]\n                   REFERENCE.json[=MODEL] ...\n"
                    "       fleet-synth --digest DIR N\n");
    return 2;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* The baseline: parse and digest each bundle, as an import must. */
static int digest_all(const char *dir, long n)
{
    double t0 = now_s();
    for (long g = 0; g < n; g++) {
        char path[4200], hex[65];
        snprintf(path, sizeof path, "%s/%05ld.json", dir, g);
        json_t *b = json_load_path(path, JSON_REJECT_DUPLICATES, NULL);
        if (!b || bundle_digest(b, hex) != 0 ||
            strcmp(hex, json_string_value(json_object_get(b, "sha256")) ?: "") != 0) {
            fprintf(stderr, "fleet-synth: %s: not a bundle with a valid digest\n", path);
            return 1;
        }
        json_decref(b);
    }
    double dt = now_s() - t0;
    printf("%ld bundles parsed and digested in %.3f s: %.1f per second\n", n, dt, n / dt);
    return 0;
}

static long number(const char *s)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    return errno || *end || v < 0 ? -1 : v;
}

int main(int argc, char **argv)
{
    const char *out = NULL;
    long gpus = -1, hosts = -1, seed = 1, outliers = 0;
    struct making mk = {0, NULL};
    json_t *refs[8];
    const char *models[8];
    size_t nrefs = 0;
    if (argc == 4 && strcmp(argv[1], "--digest") == 0)
        return number(argv[3]) > 0 ? digest_all(argv[2], number(argv[3])) : usage();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 < argc && strcmp(a, "--out") == 0)
            out = argv[++i];
        else if (i + 1 < argc && strcmp(a, "--gpus") == 0)
            gpus = number(argv[++i]);
        else if (i + 1 < argc && strcmp(a, "--hosts") == 0)
            hosts = number(argv[++i]);
        else if (i + 1 < argc && strcmp(a, "--seed") == 0)
            seed = number(argv[++i]);
        else if (i + 1 < argc && strcmp(a, "--outliers") == 0)
            outliers = number(argv[++i]);
        else if (strcmp(a, "--figures") == 0)
            mk.figures_only = 1;
        else if (i + 1 < argc && strcmp(a, "--driver") == 0)
            mk.driver = argv[++i];
        else if (a[0] != '-' && nrefs < 8) {
            char path[4096];
            snprintf(path, sizeof path, "%s", a);
            char *eq = strchr(path, '=');
            models[nrefs] = eq ? a + (eq - path) + 1 : NULL;
            if (eq)
                *eq = '\0';
            json_error_t e;
            if (!(refs[nrefs] = json_load_file(path, 0, &e))) {
                fprintf(stderr, "fleet-synth: %s: %s\n", path, e.text);
                return 1;
            }
            nrefs++;
        } else
            return usage();
    }
    if (!out || gpus < 1 || hosts < 1 || seed < 0 || outliers < 0 || !nrefs)
        return usage();
    char path[4200];
    snprintf(path, sizeof path, "%s/planted.tsv", out);
    FILE *planted = fopen(path, "w");
    if (!planted) {
        fprintf(stderr, "fleet-synth: %s: %s\n", path, strerror(errno));
        return 1;
    }
    struct rng r = {(uint64_t)seed};
    for (long g = 0; g < gpus; g++) {
        char host[32], uuid[48];
        snprintf(host, sizeof host, "node%04ld", g % hosts);
        int fault = g < outliers ? (int)(g % NFAULTS) : -1;
        json_t *b = gpu(refs[g % (long)nrefs], models[g % (long)nrefs], (size_t)g,
                        (size_t)(g / hosts), host, fault, &mk, &r, uuid);
        snprintf(path, sizeof path, "%s/%05ld.json", out, g);
        if (!b || json_dump_file(b, path, JSON_COMPACT | JSON_REAL_PRECISION(17)) != 0) {
            fprintf(stderr, "fleet-synth: cannot write %s\n", path);
            return 1;
        }
        json_decref(b);
        if (fault >= 0)
            fprintf(planted, "%s\t%s\t%s\n", uuid, faults[fault][0], faults[fault][1]);
    }
    for (size_t i = 0; i < nrefs; i++)
        json_decref(refs[i]);
    return fclose(planted) == 0 ? 0 : 1;
}
