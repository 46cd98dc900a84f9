/*
 * `gpuprobe worker`: the child side of every job. It runs one job kind (or
 * device discovery) and writes one JSON document to stdout:
 *   {"ok": true, "result": {...}}   or   {"ok": false, "error": "reason"}
 * A failing kind may add members to the failure document (the trace-sort
 * kind adds "error_line", "error_offset" and "error_class" for a bad
 * input); readers that know only "ok" and "error" are unaffected.
 * A crash, a signal or a non-zero exit says the rest; the daemon turns
 * each into the job's outcome. Parameters are validated again here, so a
 * worker started by hand gets the same checks as one started by the daemon.
 * --upload-dir is how the daemon tells a kind that its file parameters are
 * names inside that folder (job_ctx.upload_dir).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/devices.h"
#include "server/cli.h"
#include "server/jobkinds.h"

static const char usage[] =
    "usage: gpuprobe worker --discover\n"
    "       gpuprobe worker --kind KIND [--params JSON|-] [--device UUID] [--job ID]\n"
    "                       [--cubin-dir DIR] [--upload-dir DIR]\n"
    "Runs one job (or device discovery) in this process and prints the result\n"
    "document on stdout. --params - reads the parameters from stdin, as the\n"
    "daemon passes them. --cubin-dir keeps every compiled module's PTX and cubin\n"
    "there. --upload-dir DIR: file parameters are names inside DIR (the daemon's\n"
    "upload folder). The daemon starts one worker per job.\n";

static int emit(json_t *doc)
{
    return cli_print_json(doc, 1) == 0 ? 0 : 1;
}

/* {"ok":false,"error":reason} plus the kind's extra members (may be NULL). */
static int emit_error(const char *reason, json_t *members)
{
    json_t *doc = json_pack("{s:b, s:s}", "ok", 0, "error", reason);
    if (members)
        json_object_update_missing(doc, members);
    return emit(doc);
}

static int run_discovery(void)
{
    struct gpu_inventory inv;
    if (gpu_discover(&inv) < 0)
        return emit_error("out of memory during discovery", NULL);
    json_t *j = gpu_inventory_to_json(&inv);
    gpu_inventory_free(&inv);
    return emit(json_pack("{s:b, s:o}", "ok", 1, "result", j));
}

struct job_args {
    const char *kind, *params, *device, *upload_dir;
    long long job;
};

static int run_job(const struct job_args *a)
{
    const char *kind = a->kind, *params_text = a->params, *device = a->device;
    const struct job_kind *k = job_kind_find(kind);
    if (!k)
        return cli_fail("worker", 2, "no job kind '%s'", kind);
    if (k->needs_gpu && !device)
        return cli_fail("worker", 2, "kind '%s' needs --device", kind);
    json_error_t je;
    json_t *given = NULL;
    if (params_text && strcmp(params_text, "-") == 0)
        given = json_loadf(stdin, JSON_REJECT_DUPLICATES, &je);
    else if (params_text)
        given = json_loads(params_text, JSON_REJECT_DUPLICATES, &je);
    if (params_text && !given)
        return cli_fail("worker", 2, "--params is not JSON: %s", je.text);
    char err[512], field[128];
    json_t *params = job_params_validate(k, given, err, sizeof err, field, sizeof field);
    json_decref(given);
    if (!params)
        return cli_fail("worker", 2, "%s", err);
    json_t *members = json_object();
    struct job_ctx ctx = {.job_id = a->job, .device_uuid = device, .upload_dir = a->upload_dir,
                          .error_members = members};
    err[0] = '\0';
    json_t *result = k->run(&ctx, params, err, sizeof err);
    json_decref(params);
    int rc = result ? emit(json_pack("{s:b, s:o}", "ok", 1, "result", result))
                    : emit_error(err[0] ? err : "the job failed without a reason", members);
    json_decref(members);
    return rc;
}

int cmd_worker(int argc, char **argv)
{
    static const struct option opts[] = {
        {"discover", no_argument, NULL, 'D'}, {"kind", required_argument, NULL, 'k'},
        {"params", required_argument, NULL, 'p'}, {"device", required_argument, NULL, 'd'},
        {"job", required_argument, NULL, 'j'}, {"cubin-dir", required_argument, NULL, 'C'},
        {"upload-dir", required_argument, NULL, 'U'}, {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0}};
    struct job_args a = {0};
    int discover = 0, c;
    opterr = 0; /* our own one-line message instead of getopt's */
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'D': discover = 1; break;
        case 'k': a.kind = optarg; break;
        case 'p': a.params = optarg; break;
        case 'd': a.device = optarg; break;
        case 'j': a.job = atoll(optarg); break;
        case 'U': a.upload_dir = optarg; break;
        case 'C': setenv("GPUPROBE_CUBIN_DIR", optarg, 1); break; /* read by probes/gpu.c */
        case 'h': fputs(usage, stdout); return 0;
        default: return cli_unknown_option("worker", argc, argv);
        }
    }
    if (optind < argc)
        return cli_fail("worker", 2, "unexpected argument '%s'", argv[optind]);
    if (discover)
        return run_discovery();
    if (!a.kind)
        return cli_fail("worker", 2, "give --discover or --kind (see gpuprobe worker --help)");
    return run_job(&a);
}
