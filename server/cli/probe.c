/*
 * `gpuprobe probe latency|memory|banks|control-codes|dual-issue|suite`: runs a
 * probe on a GPU in this process, with no daemon, and prints its result; with
 * --device all on every attached GPU at once, one worker child per GPU
 * (probe_fanout.h), the results then finished here in device order.
 *
 * DESIGN
 * The command is a thin driver over the same job-kind descriptors the daemon
 * runs (server/jobs/kind_probes.c): the options become the kind's parameters and
 * go through the one validator, the kind's run function measures, its result
 * check vets the document, and with --db its saver stores the rows through
 * store_job_record (a succeeded job, inserted, started and finished in one
 * transaction), so `gpuprobe serve` on that database serves the result as if
 * it had run the job itself. The device the result names is recorded too.
 * A --db that exists is opened before the probe runs, and a new one's
 * folder is checked then, so an unusable path fails before minutes of
 * measuring; a new database is made when the first result is to be stored
 * (struct results), so a probe that stores nothing makes none. Output: the
 * JSON document, or on a terminal a table (probe_table.c) unless --json or
 * --compact asks for JSON.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/store.h"
#include "server/cli/cli.h"
#include "server/jobs/registry.h"
#include "server/cli/probe_fanout.h"
#include "server/cli/probe_table.h"
#include "server/cli/push.h"
#include "db/outbox.h"
#include "probes/gpu/devices.h"
#include "util/text.h"

static const char usage[] =
    "usage: gpuprobe probe latency|memory|banks|control-codes|dual-issue|suite\n"
    "                      --device N|UUID|all [--repeats N] [--instructions LIST] [--sample N]\n"
    "                      [--db PATH] [--push URL --token-file F [--tries N]\n"
    "                      [--content full|figures]] [--json]\n"
    "                      [--compact] [--keep-cubins DIR]\n"
    "Runs a probe here (no daemon needed) and prints the result: on one GPU in this\n"
    "process, or with --device all on every GPU at once, one worker process each.\n"
    "  latency        latency and throughput of each instruction of the catalog\n"
    "  memory         load latency over footprints, cache levels, shared memory, departure,\n"
    "                 L1 sets, L2 partitions, distributed shared memory (clusters 2-16),\n"
    "                 async copies (cp.async, TMA)\n"
    "  banks          register banks: conflicting registers, their cost, reuse flags\n"
    "  control-codes  what stall, yield, wait masks and reuse mean; smallest safe stalls;\n"
    "                 which ready warp issues after a stall or yield\n"
    "  dual-issue     whether two FFMAs of one warp issue in one cycle\n"
    "  suite          every probe, one after the other\n"
    "options:\n"
    "  --device N|UUID|all  the GPU, by index or UUID (see gpuprobe devices), or every\n"
    "                       attached GPU at once, each in its own worker process; the\n"
    "                       results come in device order, a failing GPU stops no other;\n"
    "                       required\n"
    "  --repeats N          measurements of each figure, 1 to 50 (default 5; 3 for banks,\n"
    "                       control-codes and dual-issue)\n"
    "  --instructions LIST  latency only: catalog names separated by commas (default all;\n"
    "                       the wgmma_* entries need compute capability 9.0, sm_90a)\n"
    "  --sample N           banks only: random register pairs that confirm the classes,\n"
    "                       0 to 10000 (default 64)\n"
    "  --db PATH            also store the result in this database as a succeeded job\n"
    "                       of that kind, so gpuprobe serve on it serves the result\n"
    "  --push URL           send each result to the central gpuprobe at URL (POST\n"
    "                       URL/api/v1/import), stored first in --db's outbox, or in a\n"
    "                       temporary database without --db\n"
    "  --token-file F       with --push: the central's write token, the first line of F\n"
    "  --tries N            with --push: rounds of pushing, 1 to 100 (default 5)\n"
    "  --content full|figures  with --push: the whole result (default) or its fleet\n"
    "                       figures alone (docs/fleet.md)\n"
    "  --json               print the JSON result document even on a terminal\n"
    "  --compact            print the JSON document on one line (implies --json)\n"
    "  --keep-cubins DIR    write every compiled module's PTX and cubin into DIR\n"
    "Output: on a terminal, a table (latency: instruction, group, SASS opcode, latency\n"
    "median [min-max] in cycles, throughput in results per clock per SM; memory: the\n"
    "curves, levels and figures; banks: the classes, costs and runs; control-codes: per\n"
    "instruction the compiler's stall, latency, smallest safe stall and fits, then the\n"
    "meanings and the issue order's decisions per experiment; dual-issue: the verdict\n"
    "and the rate of each configuration); otherwise,\n"
    "or with --json, the JSON document.\n"
    "Exit status: 0 measured (and with --push, every result acknowledged by the\n"
    "central), 1 a probe could not run (no driver, no GPU, unknown device), a result\n"
    "could not be stored, or the central did not acknowledge every result (they stay\n"
    "in --db's outbox for gpuprobe push), 2 bad usage; the reason is one line on stderr.\n"
#ifdef GPUPROBE_TEST_BUILD
    "Test build: suite-standin replays the reference H200's suite on the stand-in GPUs\n"
    "that GPUPROBE_STANDIN_GPUS=N lists (tests/kinds/standin.c; no GPU touched);\n"
    "test-gpu holds each GPU --seconds S (crashing on --crash-on UUID) and answers its\n"
    "process and its start and end.\n"
#endif
    ;

static const char *const probe_kinds[] = {
    "latency", "memory", "banks", "control-codes", "dual-issue", "suite",
#ifdef GPUPROBE_TEST_BUILD
    "suite-standin", /* a STAND-IN replaying a real suite (tests/kinds/standin.c) */
    "test-gpu",      /* holds a GPU and says when and where it ran (t_multigpu.sh) */
#endif
    NULL};

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
    const char *seconds, *crash_on; /* test build, kind test-gpu only */
    struct cli_push_args push;
    struct push_target target;   /* with --push: checked from push */
    int tries;
    int json, compact;
};

/* ---- arguments --------------------------------------------------------------- */

static int parse_args(int argc, char **argv, struct probe_opts *o, int *status)
{
    const struct cli_option opts[] = {
        {"device", .text = &o->device}, {"repeats", .text = &o->repeats},
        {"instructions", .text = &o->instructions}, {"db", .text = &o->db},
        {"sample", .text = &o->sample}, {"json", .flag = &o->json},
        {"compact", .flag = &o->compact}, {"keep-cubins", .text = &o->cubin_dir},
        {"push", .text = &o->push.url}, {"token-file", .text = &o->push.token_file},
        {"tries", .text = &o->push.tries}, {"content", .text = &o->push.content},
#ifdef GPUPROBE_TEST_BUILD
        {"seconds", .text = &o->seconds}, {"crash-on", .text = &o->crash_on},
#endif
        {0}};
    char names[128];
    memset(o, 0, sizeof *o);
    if (cli_parse("probe", usage, opts, &o->kind, argc, argv, status) < 0)
        return -1;
    if (!o->kind)
        *status = cli_fail("probe", 2, "name a probe: %s (see --help)",
                           kind_names(names, sizeof names));
    else if (!o->device)
        *status = cli_fail("probe", 2, "--device N|UUID|all is required (see gpuprobe devices)");
    else if (!o->push.url && (o->push.token_file || o->push.tries || o->push.content))
        *status = cli_fail("probe", 2, "--token-file, --tries and --content go with --push URL");
    else if (o->push.url &&
             (*status = cli_push_setup("probe", &o->push, &o->target, &o->tries)))
        ;
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
        if (o->seconds)
            json_object_set_new(given, "seconds", json_real(atof(o->seconds)));
        if (o->crash_on)
            json_object_set_new(given, "crash_on", json_string(o->crash_on));
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

/* Where results are stored: --db, or with --push alone a temporary
 * database in tmp (a folder made for it). The store is opened when the
 * first result is to be stored, or at once for a --db that exists. */
struct results {
    const struct probe_opts *o;
    store *s;
    int failed; /* opening failed, and said why */
    char tmp[4096];
};

static store *open_results_store(const struct probe_opts *o, const char *tmp);

/* The store, opened now if it is not yet; NULL when none is wanted or it
 * could not be opened (r->failed, after the message). */
static store *results_store(struct results *r)
{
    if (!r->s && !r->failed && (r->o->db || r->o->push.url)) {
        r->s = open_results_store(r->o, r->tmp);
        r->failed = !r->s;
    }
    return r->s;
}

/* Checks, prints and (with a store) records one device's result as *id. */
static int finish_probe(const struct job_kind *k, const json_t *params,
                        const struct probe_opts *o, const json_t *result, struct results *r, int64_t *id)
{
    char err[1024] = "";
    int status = 0;
    store *s = NULL;
    if (print_result(result, o) < 0)
        status = cli_fail("probe", 1, "cannot write the result");
    else if (k->check_result && k->check_result(result, err, sizeof err) < 0)
        status = cli_fail("probe", 1, "the probe produced an invalid result: %s", err);
    else if (!(s = results_store(r)) && r->failed)
        status = 1;
    else if (s && store_result(s, k, params, result, id, err, sizeof err) < 0)
        status = cli_fail("probe", 1, "storing the result in %s failed: %s",
                          o->db ? o->db : "the push database", err);
    else if (s && o->db)
        fprintf(stderr, "gpuprobe probe: stored as job %lld in %s\n", (long long)*id, o->db);
    return status;
}

/* Measures one device in this process, then finish_probe. */
static int run_probe(const struct job_kind *k, const json_t *params, const struct probe_opts *o,
                     const char *device, struct results *r, int64_t *id)
{
    struct job_ctx ctx = {.job_id = 0, .device_uuid = device};
    char err[1024] = "";
    json_t *result = k->run(&ctx, params, err, sizeof err);
    if (!result)
        return cli_fail("probe", 1, "%s%s%s", device, ": ",
                        err[0] ? err : "the probe failed without a reason");
    int status = finish_probe(k, params, o, result, r, id);
    json_decref(result);
    return status;
}

/* With --device all: every device measured at once, one worker child each
 * (probe_fanout.h), then finished one by one in device order; a device's
 * failure is reported and the others go on. *recorded counts the ids. */
static int probe_concurrently(const struct job_kind *k, const json_t *params,
                              const struct probe_opts *o, char **devices, size_t n, struct results *r,
                              int64_t *ids, size_t *recorded)
{
    struct probe_outcome *out = calloc(n, sizeof *out);
    if (!out)
        return cli_fail("probe", 1, "out of memory");
    int status = 0;
    probe_fanout(k, params, o->cubin_dir, devices, n, out);
    for (size_t i = 0; i < n; i++) {
        int rc = out[i].result
                     ? finish_probe(k, params, o, out[i].result, r, &ids[*recorded])
                     : cli_fail("probe", 1, "%s: %s", devices[i], out[i].error);
        *recorded += rc == 0 && r->s;
        status = status ? status : rc;
    }
    probe_outcomes_free(out, n);
    free(out);
    return status;
}

/* The devices to measure: the one named, or with "all" every attached GPU
 * (*n 0 after the message when there is none). *list is malloc'd. */
static int devices_to_probe(const char *device, char ***list, size_t *n)
{
    struct gpu_inventory inv;
    *n = 0;
    *list = NULL;
    if (strcmp(device, "all") != 0) {
        *list = malloc(sizeof **list);
        if (!*list || !((*list)[0] = strdup(device)))
            return cli_fail("probe", 1, "out of memory");
        *n = 1;
        return 0;
    }
    if (gpu_discover(&inv) < 0)
        return cli_fail("probe", 1, "out of memory");
    int status = 0;
    if (inv.count == 0)
        status = cli_fail("probe", 1, "--device all: no GPU attached (%s)", inv.reason);
    else if (!(*list = calloc(inv.count, sizeof **list)))
        status = cli_fail("probe", 1, "out of memory");
    for (size_t i = 0; status == 0 && i < inv.count; i++)
        if (!((*list)[(*n)++] = strdup(inv.devices[i].uuid)))
            status = cli_fail("probe", 1, "out of memory");
    gpu_inventory_free(&inv);
    return status;
}

/* Measures the device named, or with --device all every device of the
 * list concurrently (going on after a failure), then pushes what was
 * recorded; the first failure's status. */
static int probe_devices(const struct job_kind *k, const json_t *params,
                         const struct probe_opts *o, char **devices, size_t n, struct results *r)
{
    int64_t *ids = calloc(n ? n : 1, sizeof *ids);
    size_t recorded = 0;
    int status = !ids ? cli_fail("probe", 1, "out of memory")
                 : strcmp(o->device, "all") == 0
                     ? probe_concurrently(k, params, o, devices, n, r, ids, &recorded)
                     : run_probe(k, params, o, devices[0], r, &ids[0]);
    if (ids && strcmp(o->device, "all") != 0)
        recorded = status == 0 && r->s;
    if (ids && o->push.url && recorded) {
        int rc = cli_push_results("probe", r->s, &o->target, o->tries, ids, recorded);
        status = status ? status : rc;
    }
    free(ids);
    return status;
}

/* The store results go to: --db, or with --push alone a temporary one in
 * tmp (the folder usable_db made); NULL without either, or after the
 * message. */
static store *open_results_store(const struct probe_opts *o, const char *tmp)
{
    char path[4200], err[512];
    store *s = NULL;
    if (o->db)
        s = cli_open_store("probe", o->db);
    else if (o->push.url && tmp[0]) {
        snprintf(path, sizeof path, "%s/results.db", tmp);
        s = cli_open_store("probe", path);
    } else
        return NULL;
    if (s && o->push.url && outbox_set_upstream(s, o->push.url, err, sizeof err) != 0) {
        cli_fail("probe", 1, "%s", err);
        store_close(s);
        return NULL;
    }
    return s;
}

/* Removes the temporary database and its folder. */
static void remove_temporary(const char *tmp)
{
    static const char *const files[] = {"results.db", "results.db-wal", "results.db-shm"};
    char path[4200];
    if (!tmp[0])
        return;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", tmp, files[i]);
        unlink(path);
    }
    rmdir(tmp);
}

/* Where a new file at path is made: path, or the file a dangling symbolic
 * link there names (followed up to 8 links, a relative target read from
 * the link's folder). */
#define MADE_AT_LEN 8200 /* a folder and a link's target, each under 4096 */
static void made_at(const char *path, char out[MADE_AT_LEN])
{
    const size_t len = MADE_AT_LEN;
    snprintf(out, len, "%s", path);
    for (int i = 0; i < 8; i++) {
        char target[4096], dir[4096];
        ssize_t n = readlink(out, target, sizeof target - 1);
        if (n < 0)
            return;
        target[n] = '\0';
        path_folder(out, dir, sizeof dir);
        if (target[0] == '/')
            snprintf(out, len, "%s", target);
        else
            snprintf(out, len, "%s/%s", dir, target);
    }
}

/* Before any measuring, so that nothing measured is lost for want of a
 * place to keep it: a --db that exists is opened (into r), a new one's
 * folder must let the database be made there, and with --push alone the
 * temporary folder is made. 0, or the status after the message. */
static int usable_db(const struct probe_opts *o, struct results *r)
{
    if (!o->db && o->push.url) {
        snprintf(r->tmp, sizeof r->tmp, "%s/gpuprobe-push-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (mkdtemp(r->tmp))
            return 0;
        int e = errno;
        int status = cli_fail("probe", 1, "cannot make a temporary folder %s: %s", r->tmp, strerror(e));
        r->tmp[0] = '\0';
        return status;
    }
    if (!o->db)
        return 0;
    if (!o->db[0])
        return cli_fail("probe", 2, "--db: a database file path is needed");
    if (access(o->db, F_OK) == 0)
        return results_store(r) ? 0 : 1;
    char file[MADE_AT_LEN], dir[MADE_AT_LEN];
    made_at(o->db, file);
    path_folder(file, dir, sizeof dir);
    if (access(dir, W_OK | X_OK) != 0)
        return strcmp(file, o->db) == 0
                   ? cli_fail("probe", 1, "cannot make the database %s: %s: %s", o->db, dir, strerror(errno))
                   : cli_fail("probe", 1, "cannot make the database %s (a link to %s): %s: %s", o->db, file, dir,
                              strerror(errno));
    return 0;
}

static void free_list(char **list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

int cmd_probe(int argc, char **argv)
{
    struct probe_opts o;
    int status;
    char names[128];
    char **devices = NULL;
    size_t ndevices = 0;
    if (parse_args(argc, argv, &o, &status) < 0)
        return status;
    const struct job_kind *k = find_probe(o.kind);
    if (!k)
        return cli_fail("probe", 2, "no probe '%s' in this build (%s)", o.kind,
                        kind_names(names, sizeof names));
    json_t *params = make_params(k, &o, &status);
    if (!params)
        return status;
    struct results r = {.o = &o};
    status = usable_db(&o, &r);
    if (status == 0)
        status = devices_to_probe(o.device, &devices, &ndevices);
    if (status == 0)
        status = probe_devices(k, params, &o, devices, ndevices, &r);
    free_list(devices, ndevices);
    json_decref(params);
    store_close(r.s);
    remove_temporary(r.tmp);
    return status;
}
