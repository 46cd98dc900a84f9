/*
 * `gpuprobe model occupancy|predict`: the occupancy calculation and the
 * kernel-time model on the command line.
 *
 * DESIGN
 * The options become the same JSON request the API takes and go through the
 * same parser (model/occupancy_json.h, model/predict_json.h), so the command
 * line and POST /api/v1/model/occupancy and .../predict accept and refuse exactly the same things
 * and print the same answer. `occupancy --device` reads the device's compute
 * capability by discovery in this process. `occupancy --device N --sweep`
 * is the capture that checks the rules on a GPU (probes/occupancy_sweep.h):
 * it prints the driver's answers, and with --check the comparison with the
 * rules instead (exit 1 when any configuration disagrees). `predict` reads
 * the measured parameters from a database (--db) for the device named.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/occupancy.h"
#include "model/occupancy_check.h"
#include "model/occupancy_json.h"
#include "probes/gpu/devices.h"
#include "probes/occupancy_sweep.h"
#include "server/cli/cli.h"
#include "server/cli/model.h"

#define CMD "model occupancy"

static const char usage[] =
    "usage: gpuprobe model occupancy (--cc X.Y | --device N|UUID) --regs R --block B\n"
    "                      [--smem S] [--static-smem S] [--max-dynamic-smem S]\n"
    "                      [--carveout PCT] [--barriers N] [--json] [--compact]\n"
    "       gpuprobe model occupancy --device N|UUID --sweep [--check] [--compact]\n"
    "       gpuprobe model predict --db PATH --device UUID|N (--kernel JSON | --ptx FILE\n"
    "                      --grid G --block B [--param NAME=V]...) [--compact]\n"
    "  occupancy  resident blocks per SM of a launch, the resource that limits it and\n"
    "             every intermediate value (JSON), by the rules of the compute\n"
    "             capability (--cc) or of an attached GPU's (--device)\n"
    "    --regs R            registers per thread\n"
    "    --block B           threads per block\n"
    "    --smem S            dynamic shared memory per block, bytes (default 0)\n"
    "    --static-smem S     static shared memory per block, bytes (default 0)\n"
    "    --max-dynamic-smem S  the kernel's dynamic maximum (default: 48 KiB less static)\n"
    "    --carveout PCT      preferred shared-memory carve-out, percent (default: driver's)\n"
    "    --barriers N        named barriers the kernel uses (default 1)\n"
    "    --json              print the JSON answer even on a terminal (which gets a\n"
    "                        short table); --compact prints it on one line\n"
    "    --sweep             ask the driver for thousands of configurations (needs a GPU)\n"
    "                        and print its answers; with --check, compare them with the\n"
    "                        rules instead (exit 1 on any disagreement)\n"
    "  predict    kernel time by the MWP/CWP model from the parameters measured on the\n"
    "             device and stored in the database (see gpuprobe model predict --help)\n"
    "Exit status: 0 answered, 1 could not (no such device, no GPU, no measurements),\n"
    "2 bad usage; the reason is one line on stderr.\n";

struct occ_opts {
    const char *cc, *device, *regs, *block, *smem, *static_smem, *max_dyn, *carveout,
        *barriers;
    int sweep, check, compact, json;
};

static int occ_parse_args(int argc, char **argv, struct occ_opts *o, int *status)
{
    const struct cli_option opts[] = {
        {"cc", .text = &o->cc}, {"device", .text = &o->device}, {"regs", .text = &o->regs},
        {"block", .text = &o->block}, {"smem", .text = &o->smem},
        {"static-smem", .text = &o->static_smem}, {"max-dynamic-smem", .text = &o->max_dyn},
        {"carveout", .text = &o->carveout}, {"barriers", .text = &o->barriers},
        {"sweep", .flag = &o->sweep}, {"check", .flag = &o->check},
        {"compact", .flag = &o->compact}, {"json", .flag = &o->json}, {0}};
    memset(o, 0, sizeof *o);
    return cli_parse(CMD, usage, opts, NULL, argc, argv, status);
}

/* The request's members and the options that give them: the API's
 * parser checks the request and names a member; the command says the
 * option instead. */
static const struct {
    const char *member, *option;
} occ_members[] = {
    {"regs", "regs"}, {"block", "block"}, {"smem", "smem"}, {"static_smem", "static-smem"},
    {"max_dynamic_smem", "max-dynamic-smem"}, {"carveout", "carveout"}, {"barriers", "barriers"},
    {"compute_capability", "cc"}, {"device", "device"},
};
#define OCC_INT_MEMBERS 7 /* the first ones: integers */

/* The options as the JSON request the API takes; NULL after the message. */
static json_t *occ_request_json(const struct occ_opts *o, int *status)
{
    const char *const texts[OCC_INT_MEMBERS] = {o->regs,    o->block,    o->smem,    o->static_smem,
                                                o->max_dyn, o->carveout, o->barriers};
    json_t *req = json_object();
    if (o->cc)
        json_object_set_new(req, "compute_capability", json_string(o->cc));
    if (o->device)
        json_object_set_new(req, "device", json_string(o->device));
    for (size_t i = 0; i < OCC_INT_MEMBERS; i++)
        if ((*status = cli_set_int(CMD, req, occ_members[i].member, occ_members[i].option, texts[i])) != 0) {
            json_decref(req);
            return NULL;
        }
    return req;
}

/* The parser's reason err about member field, in the command's words:
 * "regs: is required" is "--regs R is required" on the command line. */
static int occ_request_fail(const char *field, const char *err)
{
    size_t n = strlen(field);
    for (size_t i = 0; i < sizeof occ_members / sizeof occ_members[0]; i++)
        if (n && strcmp(field, occ_members[i].member) == 0 && strncmp(err, field, n) == 0 && err[n] == ':')
            return cli_fail(CMD, 2, "--%s:%s", occ_members[i].option, err + n + 1);
    return cli_fail(CMD, 2, "%s", err);
}

/* The compute capability of an attached device (index or UUID). */
static int device_cc(const char *device, int *major, int *minor)
{
    struct gpu_inventory inv;
    char *end;
    long idx = strtol(device, &end, 10);
    int found = 0;
    if (gpu_discover(&inv) < 0)
        return cli_fail(CMD, 1, "out of memory");
    for (size_t i = 0; i < inv.count && !found; i++)
        if (strcmp(inv.devices[i].uuid, device) == 0 ||
            (*end == '\0' && end != device && inv.devices[i].index == idx)) {
            *major = inv.devices[i].cc_major;
            *minor = inv.devices[i].cc_minor;
            found = 1;
        }
    int status = found ? 0
                 : inv.count ? cli_fail(CMD, 1, "no attached GPU is '%s'", device)
                             : cli_fail(CMD, 1, "no GPU: %s", inv.reason);
    gpu_inventory_free(&inv);
    return status;
}

/* The answer for a person: the blocks, what limits them, every limit. */
static void occ_table(FILE *f, const json_t *a)
{
    const json_t *limits = json_object_get(a, "limits"), *v;
    const char *limiter = json_string_value(json_object_get(a, "limiter")), *name;
    const char *refused = json_string_value(json_object_get(a, "refused"));
    fprintf(f, "compute capability %s: %lld blocks per SM, %lld warps active of %lld "
               "(occupancy %.0f%%)%s%s\n",
            json_string_value(json_object_get(a, "compute_capability")),
            json_integer_value(json_object_get(a, "blocks_per_sm")),
            json_integer_value(json_object_get(a, "active_warps")),
            json_integer_value(json_object_get(json_object_get(a, "warps"), "max_per_sm")),
            100 * json_number_value(json_object_get(a, "occupancy")),
            refused ? "; no block fits: " : "", refused ? refused : "");
    fprintf(f, "%-14s %10s\n", "limit", "blocks/SM");
    json_object_foreach((json_t *)limits, name, v) {
        char n[24] = "-"; /* null: the resource sets no limit */
        if (json_is_integer(v))
            snprintf(n, sizeof n, "%lld", (long long)json_integer_value(v));
        fprintf(f, "%-14s %10s%s\n", name, n,
                limiter && strcmp(name, limiter) == 0 ? "  <- limiter" : "");
    }
    fprintf(f, "registers: %lld a warp as allocated, %lld a block; shared memory: %lld a "
               "block as allocated\n",
            json_integer_value(json_object_get(json_object_get(a, "registers"),
                                               "per_warp_allocated")),
            json_integer_value(json_object_get(json_object_get(a, "registers"), "per_block")),
            json_integer_value(json_object_get(json_object_get(a, "shared_memory"),
                                               "per_block_allocated")));
}

/* The answer as JSON, or as the table on a terminal. 0, or -1 when stdout
 * cannot be written. */
static int occ_print(const struct occ_opts *o, json_t *answer)
{
    if (o->json || o->compact || !isatty(STDOUT_FILENO))
        return cli_print_json(answer, o->compact);
    occ_table(stdout, answer);
    json_decref(answer);
    return fflush(stdout) == 0 ? 0 : -1;
}

static int occ_answer(const struct occ_opts *o)
{
    int status;
    char err[512], field[64];
    struct occ_request rq;
    struct occ_result res;
    json_t *req = occ_request_json(o, &status);
    if (!req)
        return status;
    status = 0;
    if (occ_request_parse(req, &rq, err, sizeof err, field, sizeof field) < 0)
        status = occ_request_fail(field, err);
    else if (rq.device)
        status = device_cc(o->device, &rq.cc_major, &rq.cc_minor);
    const struct occ_rules *r = status ? NULL : occ_rules_for(rq.cc_major, rq.cc_minor);
    if (!status && !r)
        status = cli_fail(CMD, rq.device ? 1 : 2,
                          "no occupancy rules for compute capability %d.%d (known: 7.0, 7.5, "
                          "8.0, 8.6, 8.9, 9.0)", rq.cc_major, rq.cc_minor);
    if (!status && occ_compute(r, &rq.in, &res, err, sizeof err) < 0)
        status = cli_fail(CMD, 2, "%s", err);
    if (!status && occ_print(o, occ_result_json(r, &rq.in, &res)) < 0)
        status = cli_fail(CMD, 1, "cannot write output");
    json_decref(req);
    return status;
}

static int occ_sweep(const struct occ_opts *o)
{
    char err[512] = "";
    struct occ_check chk;
    json_t *cap = occupancy_sweep_run(o->device, err, sizeof err);
    if (!cap)
        return cli_fail(CMD, 1, "%s", err[0] ? err : "the capture failed");
    if (!o->check)
        return cli_print_json(cap, o->compact) < 0 ? cli_fail(CMD, 1, "cannot write")
                                               : 0;
    int rc = occ_check_capture(cap, &chk, err, sizeof err);
    const char *cc = json_string_value(
        json_object_get(json_object_get(cap, "device"), "compute_capability"));
    json_t *report = rc == 0 ? occ_check_json(&chk, cc) : NULL;
    json_decref(cap);
    if (!report)
        return cli_fail(CMD, 1, "checking the capture: %s", err);
    int all = chk.agree == chk.rows && chk.attributes_agree == chk.attributes_checked;
    if (cli_print_json(report, o->compact) < 0)
        return cli_fail(CMD, 1, "cannot write output");
    return all ? 0 : cli_fail(CMD, 1, "%d of %d configurations disagree",
                              chk.rows - chk.agree, chk.rows);
}

static int cmd_occupancy(int argc, char **argv)
{
    struct occ_opts o;
    int status;
    if (occ_parse_args(argc, argv, &o, &status) < 0)
        return status;
    if (o.check && !o.sweep)
        return cli_fail(CMD, 2, "--check goes with --sweep");
    if (o.sweep) {
        if (!o.device || o.cc || o.regs || o.block || o.smem)
            return cli_fail(CMD, 2,
                            "--sweep takes --device N|UUID and no configuration");
        return occ_sweep(&o);
    }
    return occ_answer(&o);
}

int cmd_model(int argc, char **argv)
{
    if (argc < 2)
        return cli_fail("model", 2, "name a calculation: occupancy or predict (see --help)");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    if (strcmp(argv[1], "occupancy") == 0)
        return cmd_occupancy(argc - 1, argv + 1);
    if (strcmp(argv[1], "predict") == 0)
        return cmd_model_predict(argc - 1, argv + 1);
    return cli_fail("model", 2, "no calculation '%s' (occupancy, predict)", argv[1]);
}
