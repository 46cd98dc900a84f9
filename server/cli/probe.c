/*
 * `gpuprobe probe latency|memory|banks|control-codes|dual-issue|suite`: runs a
 * probe on a GPU in this process, with no daemon, and prints its result.
 *
 * DESIGN
 * The command is a thin driver over the same job-kind descriptors the daemon
 * runs (server/jobs/kind_probes.c): the options become the kind's parameters and
 * go through the one validator, the kind's run function measures, its result
 * check vets the document, and with --db its saver stores the rows through
 * store_job_record (a succeeded job, inserted, started and finished in one
 * transaction), so `gpuprobe serve` on that database serves the result as if
 * it had run the job itself. The device the result names is recorded too.
 * The database is opened before the probe runs, so an unusable path fails
 * before minutes of measuring. Output: the JSON document, or on a terminal
 * a table (probe_table.c) unless --json or --compact asks for JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/store.h"
#include "server/cli/cli.h"
#include "server/jobs/registry.h"
#include "server/cli/probe_table.h"

static const char usage[] =
    "usage: gpuprobe probe latency|memory|banks|control-codes|dual-issue|suite\n"
    "                      --device N|UUID [--repeats N] [--instructions LIST] [--sample N]\n"
    "                      [--db PATH] [--json] [--compact] [--keep-cubins DIR]\n"
    "Runs a probe on one GPU in this process (no daemon needed) and prints the result.\n"
    "  latency        latency and throughput of each instruction of the catalog\n"
    "  memory         load latency over footprints, cache levels, shared memory, departure\n"
    "  banks          register banks: conflicting registers, their cost, reuse flags\n"
    "  control-codes  what stall, yield, wait masks and reuse mean; smallest safe stalls\n"
    "  dual-issue     whether two FFMAs of one warp issue in one cycle\n"
    "  suite          every probe, one after the other\n"
    "options:\n"
    "  --device N|UUID      the GPU, by index or UUID (see gpuprobe devices); required\n"
    "  --repeats N          measurements of each figure, 1 to 50 (default 5; 3 for banks,\n"
    "                       control-codes and dual-issue)\n"
    "  --instructions LIST  latency only: catalog names separated by commas (default all)\n"
    "  --sample N           banks only: random register pairs that confirm the classes,\n"
    "                       0 to 10000 (default 64)\n"
    "  --db PATH            also store the result in this database as a succeeded job\n"
    "                       of that kind, so gpuprobe serve on it serves the result\n"
    "  --json               print the JSON result document even on a terminal\n"
    "  --compact            print the JSON document on one line (implies --json)\n"
    "  --keep-cubins DIR    write every compiled module's PTX and cubin into DIR\n"
    "Output: on a terminal, a table (latency: instruction, group, SASS opcode, latency\n"
    "median [min-max] in cycles, throughput in results per clock per SM; memory: the\n"
    "curves, levels and figures; banks: the classes, costs and runs; control-codes: per\n"
    "instruction the compiler's stall, latency, smallest safe stall and fits, then the\n"
    "meanings; dual-issue: the verdict and the rate of each configuration); otherwise,\n"
    "or with --json, the JSON document.\n"
    "Exit status: 0 measured, 1 the probe could not run (no driver, no GPU, unknown\n"
    "device) or the result could not be stored, 2 bad usage; the reason is one line\n"
    "on stderr.\n";

static const char *const probe_kinds[] = {"latency",    "memory", "banks", "control-codes",
                                           "dual-issue", "suite",  NULL};

/* "latency, memory, ..., suite" into buf, for messages; returns buf. */
static const char *kind_names(char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (const char *const *p = probe_kinds; *p && n < len; p++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", p == probe_kinds ? "" : ", ", *p);
    return buf;
}

struct probe_opts {
    const char *kind, *device, *db, *instructions, *repeats, *sample, *cubin_dir;
    int json, compact;
};

/* ---- arguments --------------------------------------------------------------- */

static int parse_args(int argc, char **argv, struct probe_opts *o, int *status)
{
    const struct cli_option opts[] = {
        {"device", .text = &o->device}, {"repeats", .text = &o->repeats},
        {"instructions", .text = &o->instructions}, {"db", .text = &o->db},
        {"sample", .text = &o->sample}, {"json", .flag = &o->json},
        {"compact", .flag = &o->compact}, {"keep-cubins", .text = &o->cubin_dir}, {0}};
    char names[128];
    memset(o, 0, sizeof *o);
    if (cli_parse("probe", usage, opts, &o->kind, argc, argv, status) < 0)
        return -1;
    if (!o->kind)
        *status = cli_fail("probe", 2, "name a probe: %s (see --help)",
                           kind_names(names, sizeof names));
    else if (!o->device)
        *status = cli_fail("probe", 2, "--device N|UUID is required (see gpuprobe devices)");
    else {
        o->json |= o->compact; /* --compact implies --json */
        if (o->cubin_dir)
            setenv("GPUPROBE_CUBIN_DIR", o->cubin_dir, 1); /* read by probes/gpu/gpu.c */
        return 0;
    }
    return -1;
}

static const struct job_kind *find_probe(const char *name)
{
    for (const char *const *p = probe_kinds; *p; p++)
        if (strcmp(*p, name) == 0)
            return job_kind_find(name);
    return NULL;
}

/* The options as the kind's parameters, validated; NULL after the message. */
static json_t *make_params(const struct job_kind *k, const struct probe_opts *o, int *status)
{
    json_t *given = json_object(), *params = NULL;
    char err[512], field[128];
    if ((*status = cli_set_int("probe", given, "repeats", "repeats", o->repeats)) == 0 &&
        (*status = cli_set_int("probe", given, "sample", "sample", o->sample)) == 0) {
        if (o->instructions)
            json_object_set_new(given, "instructions", json_string(o->instructions));
        params = job_params_validate(k, given, err, sizeof err, field, sizeof field);
        if (!params)
            *status = cli_fail("probe", 2, "--%s",
                               strncmp(err, "params.", 7) == 0 ? err + 7 : err);
    }
    json_decref(given);
    return params;
}

/* ---- storing ------------------------------------------------------------------- */

/* The "device" object of the result, or of the first suite member that has one. */
static const json_t *result_device(const json_t *result)
{
    const char *key;
    const json_t *v;
    if (json_is_object(json_object_get(result, "device")))
        return json_object_get(result, "device");
    json_object_foreach((json_t *)result, key, v)
        if (json_is_object(json_object_get(v, "device")))
            return json_object_get(v, "device");
    return NULL;
}

/* Records this host and the device the result names; *uuid points into dev. */
static int record_device(store *s, const json_t *dev, const char **uuid, char *err,
                         size_t errlen)
{
    char host[256] = "unknown";
    int64_t host_id;
    const char *name = json_string_value(json_object_get(dev, "name"));
    const char *cc = json_string_value(json_object_get(dev, "compute_capability"));
    *uuid = json_string_value(json_object_get(dev, "uuid"));
    if (!*uuid || !name || !cc) {
        snprintf(err, errlen, "the result names no device");
        return -1;
    }
    if (gethostname(host, sizeof host - 1) < 0)
        snprintf(host, sizeof host, "unknown");
    char *info = json_dumps(dev, JSON_COMPACT | JSON_SORT_KEYS);
    int rc = info && store_host_upsert(s, host, "", &host_id, err, errlen) == 0 &&
                     store_device_upsert(s, host_id, *uuid, name, cc, info, err, errlen) == 0
                 ? 0
                 : -1;
    if (!info)
        snprintf(err, errlen, "out of memory");
    free(info);
    return rc;
}

static int store_result(store *s, const struct job_kind *k, const json_t *params,
                        const json_t *result, int64_t *id, char *err, size_t errlen)
{
    const char *uuid;
    if (record_device(s, result_device(result), &uuid, err, errlen) < 0)
        return -1;
    char *ptext = json_dumps(params, JSON_COMPACT | JSON_SORT_KEYS);
    char *rtext = json_dumps(result, JSON_COMPACT);
    int rc = ptext && rtext ? store_job_record(s, k->name, uuid, ptext, k->default_timeout_s,
                                               rtext, k->save, id, err, errlen)
                            : (snprintf(err, errlen, "out of memory"), -1);
    free(ptext);
    free(rtext);
    return rc;
}

/* ---- running --------------------------------------------------------------------- */

static int print_result(const json_t *result, const struct probe_opts *o)
{
    if (o->json || !isatty(STDOUT_FILENO))
        return cli_print_json(json_incref((json_t *)result), o->compact);
    probe_table_print(stdout, result);
    return fflush(stdout) == 0 ? 0 : -1;
}

/* Measures, checks, prints and (with a store) records. */
static int run_probe(const struct job_kind *k, const json_t *params, const struct probe_opts *o,
                     store *s)
{
    struct job_ctx ctx = {.job_id = 0, .device_uuid = o->device};
    char err[1024] = "";
    int64_t id = 0;
    json_t *result = k->run(&ctx, params, err, sizeof err);
    if (!result)
        return cli_fail("probe", 1, "%s", err[0] ? err : "the probe failed without a reason");
    int status = 0;
    if (print_result(result, o) < 0)
        status = cli_fail("probe", 1, "cannot write the result");
    else if (k->check_result && k->check_result(result, err, sizeof err) < 0)
        status = cli_fail("probe", 1, "the probe produced an invalid result: %s", err);
    else if (s && store_result(s, k, params, result, &id, err, sizeof err) < 0)
        status = cli_fail("probe", 1, "storing the result in %s failed: %s", o->db, err);
    else if (s)
        fprintf(stderr, "gpuprobe probe: stored as job %lld in %s\n", (long long)id, o->db);
    json_decref(result);
    return status;
}

int cmd_probe(int argc, char **argv)
{
    struct probe_opts o;
    int status;
    char names[128];
    if (parse_args(argc, argv, &o, &status) < 0)
        return status;
    const struct job_kind *k = find_probe(o.kind);
    if (!k)
        return cli_fail("probe", 2, "no probe '%s' in this build (%s)", o.kind,
                        kind_names(names, sizeof names));
    json_t *params = make_params(k, &o, &status);
    if (!params)
        return status;
    store *s = o.db ? cli_open_store("probe", o.db) : NULL;
    status = o.db && !s ? 1 : run_probe(k, params, &o, s);
    json_decref(params);
    store_close(s);
    return status;
}
