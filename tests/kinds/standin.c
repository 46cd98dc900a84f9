/*
 * STAND-IN GPUs AND THE suite-standin KIND: test build only (VARIANT=test
 * and asan; the shipped binary has neither, tests/dist/check.sh asserts it).
 *
 * DESIGN
 * The fleet's paths (a node's daemon pushing to a central, `gpuprobe probe
 * --device all --push`, the Slurm array) need GPU results on machines that
 * have no GPU. Instead of inventing figures, the stand-in replays a real
 * capture: the suite document measured on an H200 that the reference bundle
 * data/reference/h200.json holds (linked into every binary), with the
 * device's identity replaced.
 * - GPUPROBE_STANDIN_GPUS=N (1..16) in the environment makes discovery
 *   (gpu_discover, so the daemon, `gpuprobe devices` and `--device all`
 *   alike) list N stand-in GPUs besides the real ones: the reference H200's
 *   attributes, named "NVIDIA H200 (stand-in)", with a UUID made from this
 *   host's name and the index (every node of a cluster gets its own; the
 *   same node the same ones at every run), PCI bus ids 0000:a0:00.0 on,
 *   and NUMA node index/4 (four GPUs to a socket, as on an 8-GPU node).
 * - The kind suite-standin runs on such a device (needs_gpu: it takes the
 *   GPU slot and names the device like any probe) and answers the H200's
 *   suite document with the stand-in's description as each probe's
 *   "device"; it is checked and saved by the suite's own check and saver, so
 *   result tables, fleet figures, bundles and a central see a real-looking
 *   suite. The job's kind and the device's name say it is a stand-in.
 */
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/results.h"
#include "probes/gpu/devices.h"
#include "server/bundles/reference.h"
#include "server/jobs/kind_probes.h"
#include "server/jobs/registry.h"

#define STANDIN_MAX 16
#define STANDIN_NAME "NVIDIA H200 (stand-in)"
#define STANDIN_SOURCE "h200.json"

/* The reference H200 bundle's first device (its "info" and "results"). */
static json_t *reference_device(char *err, size_t errlen)
{
    for (const struct embedded_bundle *b = reference_bundles; b->name; b++) {
        if (strcmp(b->name, STANDIN_SOURCE) != 0)
            continue;
        json_error_t je;
        json_t *doc = json_loadb((const char *)b->start, (size_t)(b->end - b->start), 0, &je);
        json_t *dev = json_incref(json_array_get(json_object_get(doc, "devices"), 0));
        json_decref(doc);
        if (!dev)
            snprintf(err, errlen, "the reference %s holds no device", STANDIN_SOURCE);
        return dev;
    }
    snprintf(err, errlen, "no reference bundle %s is linked in", STANDIN_SOURCE);
    return NULL;
}

/* How many stand-ins the environment asks for (0: none). */
static int standin_count(void)
{
    const char *v = getenv("GPUPROBE_STANDIN_GPUS");
    int n = v ? atoi(v) : 0;
    return n < 0 ? 0 : n > STANDIN_MAX ? STANDIN_MAX : n;
}

/* The UUID of stand-in i on this host: SHA-256 of "standin:HOST:i". */
static void standin_uuid(int i, char *uuid, size_t len)
{
    char host[256] = "unknown", seed[300];
    struct sha256_ctx ctx;
    unsigned char d[SHA256_DIGEST_SIZE];
    if (gethostname(host, sizeof host - 1) < 0)
        snprintf(host, sizeof host, "unknown");
    int n = snprintf(seed, sizeof seed, "standin:%s:%d", host, i);
    sha256_init(&ctx);
    sha256_update(&ctx, (size_t)n, (const uint8_t *)seed);
    sha256_digest(&ctx, sizeof d, d);
    gpu_uuid_format(d, uuid, len);
}

/* Stand-in i's description: the reference H200's, renamed. */
static json_t *standin_info(const json_t *reference, int i)
{
    char uuid[48], pci[32];
    json_t *info = json_deep_copy(json_object_get(reference, "info"));
    standin_uuid(i, uuid, sizeof uuid);
    snprintf(pci, sizeof pci, "0000:%02x:00.0", 0xa0 + i);
    json_object_set_new(info, "index", json_integer(i));
    json_object_set_new(info, "uuid", json_string(uuid));
    json_object_set_new(info, "name", json_string(STANDIN_NAME));
    json_object_set_new(info, "pci_bus_id", json_string(pci));
    /* four GPUs to a socket, as on an 8-GPU HGX node */
    json_object_set_new(info, "numa_node", json_integer(i / 4));
    return info;
}

/* The stand-ins as an inventory document gpu_inventory_from_json reads. */
static json_t *standin_inventory(const json_t *reference, int n)
{
    const json_t *info = json_object_get(reference, "info");
    json_t *list = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(list, standin_info(reference, i));
    return json_pack("{s:O, s:O, s:n, s:o}", "driver_version",
                     json_object_get(info, "driver_version"), "cuda_driver_version",
                     json_object_get(info, "cuda_driver_version"), "reason", "devices", list);
}

/* Appends the stand-ins to inv, after its real GPUs (renumbered after them). */
static int append_standins(struct gpu_inventory *inv, const struct gpu_inventory *add)
{
    struct gpu_device *all = realloc(inv->devices, (inv->count + add->count) * sizeof *all);
    if (!all)
        return -1;
    inv->devices = all;
    for (size_t i = 0; i < add->count; i++) {
        all[inv->count] = add->devices[i];
        all[inv->count].index = (int)inv->count;
        inv->count++;
    }
    if (!inv->driver_version[0])
        snprintf(inv->driver_version, sizeof inv->driver_version, "%s", add->driver_version);
    if (!inv->cuda_driver_version)
        inv->cuda_driver_version = add->cuda_driver_version;
    inv->reason[0] = '\0';
    return 0;
}

int standin_gpus_add(struct gpu_inventory *inv)
{
    int n = standin_count();
    char err[256];
    if (n == 0)
        return 0;
    json_t *reference = reference_device(err, sizeof err);
    json_t *doc = reference ? standin_inventory(reference, n) : NULL;
    struct gpu_inventory add;
    int rc = doc && gpu_inventory_from_json(doc, &add, err, sizeof err) == 0 ? 0 : -1;
    json_decref(doc);
    json_decref(reference);
    if (rc == 0) {
        rc = append_standins(inv, &add);
        gpu_inventory_free(&add);
    }
    return rc;
}

/* ---- the kind ------------------------------------------------------------------ */

/* The stand-in whose UUID is uuid, described; NULL when it is none. */
static json_t *standin_of(const json_t *reference, const char *uuid)
{
    for (int i = 0, n = standin_count(); i < n; i++) {
        json_t *info = standin_info(reference, i);
        if (strcmp(json_string_value(json_object_get(info, "uuid")), uuid) == 0)
            return info;
        json_decref(info);
    }
    return NULL;
}

/* The reference's suite document, each probe's "device" replaced by info. */
static json_t *replayed_suite(const json_t *reference, const json_t *info)
{
    const json_t *r;
    size_t i;
    json_array_foreach(json_object_get(reference, "results"), i, r) {
        if (strcmp(json_string_value(json_object_get(r, "kind")), "suite") != 0)
            continue;
        json_t *suite = json_deep_copy(json_object_get(r, "result"));
        const char *probe;
        json_t *doc;
        json_object_foreach(suite, probe, doc)
            if (json_is_object(json_object_get(doc, "device")))
                json_object_set(doc, "device", (json_t *)info);
        return suite;
    }
    return NULL;
}

static json_t *standin_run(const struct job_ctx *ctx, const json_t *params, char *err,
                           size_t errlen)
{
    (void)params;
    json_t *reference = reference_device(err, errlen), *info = NULL, *suite = NULL;
    if (reference && ctx->device_uuid)
        info = standin_of(reference, ctx->device_uuid);
    if (reference && !info)
        snprintf(err, errlen, "%s is no stand-in GPU (GPUPROBE_STANDIN_GPUS=%d on this host)",
                 ctx->device_uuid ? ctx->device_uuid : "(no device)", standin_count());
    if (info && !(suite = replayed_suite(reference, info)))
        snprintf(err, errlen, "the reference %s holds no suite result", STANDIN_SOURCE);
    json_decref(info);
    json_decref(reference);
    return suite;
}

static int standin_check(const json_t *result, char *err, size_t errlen)
{
    return kind_suite.check_result(result, err, errlen);
}

const struct job_kind test_standin_kind = {
    .name = "suite-standin",
    .summary = "Test-only STAND-IN: answers the reference H200's real suite document "
               "(data/reference/h200.json) as this stand-in GPU's, no GPU touched",
    .needs_gpu = 1,
    .default_timeout_s = 60,
    .params = NULL,
    .nparams = 0,
    .run = standin_run,
    .check_result = standin_check,
    .save = results_suite_save,
};
