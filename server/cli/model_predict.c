/*
 * `gpuprobe model predict`: a kernel's time by the MWP/CWP model, with the
 * parameters measured on a device and stored in a database.
 *
 * DESIGN
 * The options become the kernel object of POST /api/v1/model/predict
 * (model/predict.h) and go through the same parser, so both refuse the
 * same things. The kernel is given whole (--kernel JSON, or @FILE), or as
 * PTX with its launch (--ptx FILE --grid --block --regs [--param N=V]...),
 * whose description is derived; a parameter is named as trace capture names
 * it (its PTX name or index), and the ones the entry does not have, or that
 * a loop needs and are not given, are said in the options' words before
 * anything is predicted (check_params). The device is a UUID stored in the
 * database, or an index of a GPU attached here. Missing measurements are an
 * error naming the probe to run (exit 1).
 * --hits first predicts without caches (for the occupancy and the
 * description's record count), then captures a sample of the kernel on the
 * attached GPU and runs the cache model over it (server/jobs/kernel_hits.h),
 * (blocks on SMs in the order the device deals them, measured then, as the
 * validation job does), and predicts again with those hit rates; the answer carries them under
 * "hits". Pointer parameters are then given as trace capture takes them
 * (NAME=buf:BYTES[:FILL]); they are the capture's alone.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/model_store.h"
#include "db/store.h"
#include "model/occupancy_json.h"
#include "model/params.h"
#include "model/predict.h"
#include "model/ptx_desc.h"
#include "probes/gpu/devices.h"
#include "server/cli/cli.h"
#include "server/cli/model.h"
#include "server/jobs/kernel_hits.h"
#include "server/jobs/kind_model_sass.h"
#include "trace/deal.h"
#include "util/text.h"
#include "util/textfile.h"

#define CMD "model predict"

static const char usage[] =
    "usage: gpuprobe model predict --db PATH --device UUID|N\n"
    "           (--kernel JSON|@FILE | --ptx FILE --grid G --block B --regs R\n"
    "            [--smem S] [--static-smem S] [--param NAME=VALUE]... [--entry NAME])\n"
    "           [--launches R] [--transfer-bytes V] [--hits] [--compact]\n"
    "Predicts a kernel's time by the MWP/CWP model (Hong and Kim), with the parameters\n"
    "the latency and memory probes measured on the device and stored in the database.\n"
    "  --kernel JSON|@FILE  the kernel object of POST /api/v1/model/predict (docs/api.md)\n"
    "  --ptx FILE           derive the per-warp counts from this PTX and the launch:\n"
    "  --grid G, --block B  launch shape: N or X,Y,Z\n"
    "  --regs R             registers per thread (for occupancy)\n"
    "  --smem S, --static-smem S  shared memory per block, bytes, dynamic and static\n"
    "                       (with --ptx, --static-smem defaults to what the PTX's .shared\n"
    "                       declarations hold)\n"
    "  --param NAME=VALUE   an integer kernel parameter the loop trip counts need, NAME its\n"
    "                       PTX name or its index from 0, as trace capture takes it (with\n"
    "                       --hits, pointers too: NAME=buf:BYTES[:FILL]); a loop that needs\n"
    "                       one not given is refused naming it, and so is a NAME the entry\n"
    "                       does not have\n"
    "  --entry NAME         the .entry to describe (default: the first)\n"
    "  --launches R         times the kernel runs (default 1)\n"
    "  --transfer-bytes V   host<->device bytes around the launches (default 0)\n"
    "  --hits               with --ptx, on the GPU --device names: capture a sample of\n"
    "                       the kernel's blocks, model its L1 and L2 hit rates\n"
    "                       (docs/model.md) and predict with them\n"
    "Exit status: 0 predicted, 1 no such device or no measurements (the message names\n"
    "the probe to run), 2 bad usage or a malformed kernel (a --ptx FILE that is not PTX,\n"
    "one that does not begin with .version and .target, too).\n";

struct popts {
    const char *db, *device, *kernel, *ptx, *grid, *block, *regs, *smem, *static_smem, *entry,
        *launches, *transfer;
    struct cli_list params;
    int compact, hits;
};

static int parse_args(int argc, char **argv, struct popts *o, int *status)
{
    const struct cli_option opts[] = {
        {"db", .text = &o->db}, {"device", .text = &o->device}, {"kernel", .text = &o->kernel},
        {"ptx", .text = &o->ptx}, {"grid", .text = &o->grid}, {"block", .text = &o->block},
        {"regs", .text = &o->regs}, {"smem", .text = &o->smem},
        {"static-smem", .text = &o->static_smem}, {"param", .list = &o->params},
        {"entry", .text = &o->entry}, {"launches", .text = &o->launches},
        {"transfer-bytes", .text = &o->transfer}, {"compact", .flag = &o->compact},
        {"hits", .flag = &o->hits}, {0}};
    memset(o, 0, sizeof *o);
    if (cli_parse(CMD, usage, opts, NULL, argc, argv, status) < 0)
        return -1;
    if (!o->db || !o->device)
        *status = cli_fail(CMD, 2, "--db PATH and --device UUID|N are required (see --help)");
    else if (!o->kernel == !o->ptx)
        *status = cli_fail(CMD, 2, "give --kernel or --ptx (see --help)");
    else if (o->hits && (!o->ptx || !o->entry))
        *status = cli_fail(CMD, 2, "--hits needs --ptx, --entry and the launch (it runs the "
                                   "kernel)");
    return *status ? -1 : 0;
}

/* "N" or "X,Y,Z" as JSON; NULL when malformed. */
static json_t *shape(const char *s)
{
    json_t *a = json_array();
    char buf[96];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        long long v;
        if (parse_ll(t, 1, INT_MAX, &v) < 0 || json_array_size(a) == 3) {
            json_decref(a);
            return NULL;
        }
        json_array_append_new(a, json_integer(v));
    }
    if (json_array_size(a) == 0) {
        json_decref(a);
        return NULL;
    }
    return a;
}

static int read_file(const char *path, char **text)
{
    char why[PATH_MAX + 100];
    *text = text_file_read(path, TEXT_FILE_PTX_MAX, why, sizeof why);
    return *text ? 0 : cli_fail(CMD, 2, "cannot read %s", why);
}

/* The parameters of a kernel built from --ptx, checked against the entry
 * as the prediction will (model/ptx_desc.h), so that a fault is said in the
 * options' words: a --param the entry does not have (the message lists
 * its parameters), or one a loop's trip count needs (how to give it).
 * Other faults are the prediction's to report: 0. */
static int check_params(const struct popts *o, const json_t *k)
{
    struct pd_launch l;
    struct pd_desc d;
    char why[512], how[PD_MAX_MISSING * (PD_PARAM_LEN + 24)] = "", idx[PD_MAX_MISSING * 24] = "";
    if (json_object_size(json_object_get(k, "params")) > PD_MAX_PARAMS)
        return 0;
    pd_launch_from_json(k, &l);
    if (pd_describe(json_string_value(json_object_get(k, "ptx")), o->entry, &l, &d, why,
                    sizeof why) == 0 || !d.param[0])
        return 0;
    if (!d.nmissing)
        return cli_fail(CMD, 2, "--param %s: %s", d.param, why);
    for (int i = 0; i < d.nmissing; i++) {
        size_t used = strlen(how), iused = strlen(idx);
        snprintf(how + used, sizeof how - used, " --param %s=VALUE", d.missing[i]);
        snprintf(idx + iused, sizeof idx - iused, " --param %d=VALUE", d.missing_index[i]);
    }
    return cli_fail(CMD, 2, "%s: give %s with%s (or by index:%s)", why,
                    d.nmissing > 1 ? "them" : "it", how, idx);
}

static int ptx_kernel(const struct popts *o, json_t *k)
{
    char *text;
    json_t *grid = o->grid ? shape(o->grid) : NULL, *block = o->block ? shape(o->block) : NULL;
    if (!grid || !block) {
        json_decref(grid);
        json_decref(block);
        return cli_fail(CMD, 2, "--grid and --block are required with --ptx, as N or X,Y,Z");
    }
    json_object_set_new(k, "grid", grid);
    json_object_set_new(k, "block", block);
    if (cli_set_int(CMD, k, "regs", "regs", o->regs) ||
        cli_set_int(CMD, k, "smem", "smem", o->smem) ||
        cli_set_int(CMD, k, "static_smem", "static-smem", o->static_smem) ||
        read_file(o->ptx, &text))
        return 2;
    json_object_set_new(k, "ptx", json_string(text));
    free(text);
    if (o->entry)
        json_object_set_new(k, "entry", json_string(o->entry));
    json_t *params = json_object();
    json_object_set_new(k, "params", params);
    for (int i = 0; i < o->params.n; i++) {
        const char *given = o->params.item[i], *eq = strchr(given, '=');
        char name[PD_PARAM_LEN];
        size_t n = eq ? (size_t)(eq - given) : 0;
        if (!eq || n == 0)
            return cli_fail(CMD, 2, "--param must be NAME=VALUE, not '%s'", given);
        if (n >= sizeof name)
            return cli_fail(CMD, 2, "--param %.*s...: a name of %zu bytes; names are under %d (or give the index)",
                            40, given, n, PD_PARAM_LEN);
        memcpy(name, given, n);
        name[n] = '\0';
        if (o->hits && strncmp(eq + 1, "buf:", 4) == 0)
            continue; /* a buffer: the capture's, not the description's */
        if (json_object_get(params, name))
            return cli_fail(CMD, 2, "--param %s is given twice", name);
        if (cli_set_int(CMD, params, name, "param", eq + 1))
            return 2;
    }
    return check_params(o, k);
}

static json_t *kernel_json(const struct popts *o, int *status)
{
    json_t *k = NULL;
    char *text = NULL;
    json_error_t je;
    *status = 0;
    if (o->kernel) {
        if (o->kernel[0] == '@' && (*status = read_file(o->kernel + 1, &text)) != 0)
            return NULL;
        k = json_loads(text ? text : o->kernel, JSON_REJECT_DUPLICATES, &je);
        free(text);
        if (!k) {
            *status = cli_fail(CMD, 2, "--kernel is not JSON: %s", je.text);
            return NULL;
        }
    } else {
        k = json_object();
        if ((*status = ptx_kernel(o, k)) != 0) {
            json_decref(k);
            return NULL;
        }
    }
    if (json_is_object(k) &&
        ((*status = cli_set_int(CMD, k, "launches", "launches", o->launches)) != 0 ||
         (*status = cli_set_int(CMD, k, "transfer_bytes", "transfer-bytes", o->transfer)) != 0)) {
        json_decref(k);
        return NULL;
    }
    return k;
}

/* The UUID for --device: an attached GPU's by index, else the text itself
 * (a UUID). 0, or -1 when a number names no GPU attached here: a stored
 * device (the reference GPUs, an imported one) is named by its UUID. */
static int device_uuid(const char *device, char uuid[48])
{
    struct gpu_inventory inv;
    long long idx;
    snprintf(uuid, 48, "%s", device);
    if (parse_ll(device, 0, INT_MAX, &idx) < 0)
        return 0;
    int found = 0;
    if (gpu_discover(&inv) == 0) {
        for (size_t i = 0; i < inv.count; i++)
            if (inv.devices[i].index == idx) {
                snprintf(uuid, 48, "%s", inv.devices[i].uuid);
                found = 1;
            }
        gpu_inventory_free(&inv);
    }
    return found ? 0 : -1;
}

/* "UUID (name, host), ..." of the database's devices, the first few, into
 * buf: what a user who named no known device can name instead. */
static void stored_devices(store *s, char *buf, size_t len)
{
    struct device_row *rows = NULL;
    size_t n = 0, at = 0;
    char err[256];
    snprintf(buf, len, "none");
    if (store_device_list(s, &rows, &n, err, sizeof err) < 0 || n == 0)
        return;
    for (size_t i = 0; i < n && i < 4 && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s (%s, host %s)", i ? ", " : "", rows[i].uuid,
                               rows[i].name ? rows[i].name : "?", rows[i].hostname ? rows[i].hostname : "?");
    if (n > 4 && at < len)
        snprintf(buf + at, len - at, " and %zu more", n - 4);
    device_rows_free(rows, n);
}

/* 0 when uuid is a device of the database, else the failure, naming the
 * devices it holds. */
static int known_device(store *s, const struct popts *o, const char *uuid, int index_unknown)
{
    struct device_row row;
    char err[256], list[600];
    int rc = index_unknown ? 1 : store_device_get(s, uuid, &row, err, sizeof err);
    if (rc < 0)
        return cli_fail(CMD, 1, "%s", err);
    if (rc == 0) {
        device_row_free(&row);
        return 0;
    }
    stored_devices(s, list, sizeof list);
    if (index_unknown)
        return cli_fail(CMD, 1, "no GPU with index %s is attached here; name a device of %s by its UUID: %s",
                        o->device, o->db, list);
    return cli_fail(CMD, 1, "device %s is not in %s; its devices: %s", uuid, o->db, list);
}

/* The sample's hit rates for kernel on the device (see the DESIGN). */
static json_t *sample_hits(const struct popts *o, const json_t *kernel, const json_t *first,
                           const json_t *inputs, const struct mwp_hw *hw, char *err,
                           size_t errlen)
{
    const json_t *pw = json_object_get(
        json_object_get(json_object_get(first, "kernel"), "description"), "per_warp");
    const json_t *occ = json_object_get(first, "occupancy");
    const json_t *dev = json_object_get(inputs, "device");
    struct kernel_hits_req r = {
        .ptx = json_string_value(json_object_get(kernel, "ptx")),
        .entry = o->entry,
        .args = (const char *const *)o->params.item,
        .nargs = (size_t)o->params.n,
        .device = o->device,
        .sm_count = hw->sm_count,
        .blocks_per_sm = (int)json_integer_value(json_object_get(occ, "blocks_per_sm")),
        .l2_bytes = (uint64_t)json_integer_value(json_object_get(dev, "l2_bytes")),
    };
    /* blocks on SMs as the device deals them, as the validation job's samples */
    struct trace_deal deal;
    json_t *placement = NULL;
    if (kernel_hits_deal(o->device, &deal, &placement) == 0)
        r.deal = &deal;
    struct pd_launch l;
    pd_launch_from_json(kernel, &l);
    memcpy(r.grid, l.grid, sizeof r.grid);
    memcpy(r.block, l.block, sizeof r.block);
    r.records_per_block =
        kernel_hits_block_records(pw, r.block[0] * r.block[1] * r.block[2], hw->warp_size);
    json_t *hits = kernel_hits(&r, err, errlen);
    const char *why = json_string_value(json_object_get(placement, "reason"));
    if (!why)
        why = json_string_value(json_object_get(placement, "error"));
    if (hits && !r.deal) /* round-robin: say why the order was not used */
        json_object_set_new(json_object_get(hits, "sample"), "placement_reason",
                            json_string(why ? why : "the block placement was not determined"));
    json_decref(placement);
    trace_deal_free(&deal);
    return hits;
}

/* The kernel to predict with the sample's hit rates and, when the cubin could
 * be read, the SASS's counts in place of the PTX's (counts NULL: the PTX's),
 * with the static shared memory the first prediction used (the PTX's
 * .shared declarations when --static-smem is not given: the PTX goes). */
static json_t *kernel_with(const json_t *kernel, const json_t *first, const json_t *hits,
                           const json_t *counts)
{
    json_t *k = json_deep_copy(kernel);
    json_object_set_new(k, "cache", json_pack("{s:O, s:O, s:O}", "l1_hit",
                                              json_object_get(hits, "l1_hit"), "l2_hit",
                                              json_object_get(hits, "l2_hit"), "l2_hit_store",
                                              json_object_get(hits, "l2_hit_store")));
    if (counts) {
        json_object_set(k, "static_smem", json_object_get(json_object_get(json_object_get(
                                              first, "occupancy"), "input"), "static_smem"));
        json_object_del(k, "ptx");
        json_object_del(k, "entry");
        json_object_del(k, "params");
        json_object_set(k, "per_warp", json_object_get(counts, "per_warp"));
        json_object_set(k, "uncoal_per_access", json_object_get(counts, "uncoal_per_access"));
        json_object_set(k, "coal_bytes", json_object_get(counts, "coal_bytes"));
    }
    return k;
}

/* A refusal of the kernel (err begins with its member, field). Built from
 * options, the member is said as the option that gave it ("k.ptx: loop at
 * label ...", "--grid: ..."), not as a JSON path that reads like a file's
 * name; from --kernel, as the member of that JSON. */
static int kernel_fail(const struct popts *o, int status, const char *field, const char *err)
{
    static const struct {
        const char *member, *option;
    } opt[] = {{"grid", "--grid"},   {"block", "--block"},   {"regs", "--regs"},
               {"smem", "--smem"},   {"static_smem", "--static-smem"},
               {"entry", "--entry"}, {"launches", "--launches"},
               {"transfer_bytes", "--transfer-bytes"}, {"params", "--param"}};
    size_t n = strlen(field);
    if (!o->ptx) /* the member of the JSON given: named as the API names it */
        return cli_fail(CMD, status, "--kernel: kernel%s%s", field[0] ? "." : ": ", err);
    if (!field[0] || strncmp(err, field, n) != 0 || strncmp(err + n, ": ", 2) != 0)
        return cli_fail(CMD, status, "kernel%s%s", field[0] ? "." : ": ", err);
    if (!strcmp(field, "ptx"))
        return cli_fail(CMD, status, "%s: %s", o->ptx, err + n + 2);
    if (!strncmp(field, "params.", 7))
        return cli_fail(CMD, status, "--param %s: %s", field + 7, err + n + 2);
    for (size_t i = 0; i < sizeof opt / sizeof opt[0]; i++)
        if (!strcmp(field, opt[i].member))
            return cli_fail(CMD, status, "%s: %s", opt[i].option, err + n + 2);
    return cli_fail(CMD, status, "kernel.%s", err);
}

static int predict(store *s, const struct popts *o, const json_t *kernel)
{
    char uuid[48], err[768], field[160];
    int missing, major, minor;
    struct mwp_hw hw;
    json_t *inputs = NULL, *out = NULL;
    if (known_device(s, o, uuid, device_uuid(o->device, uuid) < 0))
        return 1;
    if (store_model_inputs(s, uuid, &inputs, err, sizeof err) < 0)
        return cli_fail(CMD, 1, "%s", err);
    int status = 0;
    const struct occ_rules *r = NULL;
    if (model_hw_from_inputs(inputs, uuid, &hw, &missing, err, sizeof err) < 0)
        status = cli_fail(CMD, 1, "%s", err);
    else if (model_inputs_cc(inputs, &major, &minor) < 0 || !(r = occ_rules_for(major, minor)))
        status = cli_fail(CMD, 1, "no occupancy rules for device %s's compute capability", uuid);
    else if (model_predict_json(kernel, r, &hw, &out, err, sizeof err, field, sizeof field) < 0)
        status = kernel_fail(o, 2, field, err); /* err starts with its field */
    else if (o->hits) {
        json_t *hits = sample_hits(o, kernel, out, inputs, &hw, err, sizeof err), *again = NULL;
        char why[512] = "";
        struct pd_launch l;
        pd_launch_from_json(kernel, &l);
        json_t *counts = hits ? model_sass_describe_ptx(o->device,
                                                        json_string_value(json_object_get(kernel, "ptx")),
                                                        o->entry, &l, why, sizeof why)
                              : NULL;
        json_t *k2 = hits ? kernel_with(kernel, out, hits, counts) : NULL;
        json_decref(out);
        out = NULL;
        if (!hits)
            status = cli_fail(CMD, 1, "--hits: %s", err);
        else if (model_predict_json(k2, r, &hw, &again, err, sizeof err, field, sizeof field) < 0)
            status = kernel_fail(o, 1, field, err);
        else {
            json_object_set_new(again, "hits", hits);
            hits = NULL;
            json_object_set_new(again, "sass_counts", counts ? counts : json_null());
            counts = NULL;
            if (!json_object_get(again, "sass_counts") || json_is_null(json_object_get(again, "sass_counts")))
                json_object_set_new(again, "sass_error", json_string(why));
            json_object_set_new(again, "device", json_string(uuid));
            if (cli_print_json(again, o->compact) < 0)
                status = cli_fail(CMD, 1, "cannot write output");
        }
        json_decref(hits);
        json_decref(counts);
        json_decref(k2);
    } else {
        json_object_set_new(out, "device", json_string(uuid));
        if (cli_print_json(out, o->compact) < 0) /* releases out */
            status = cli_fail(CMD, 1, "cannot write output");
        out = NULL;
    }
    json_decref(out);
    json_decref(inputs);
    return status;
}

int cmd_model_predict(int argc, char **argv)
{
    struct popts o;
    int status;
    if (parse_args(argc, argv, &o, &status) < 0)
        return status;
    json_t *kernel = kernel_json(&o, &status);
    if (!kernel)
        return status;
    store *s = cli_read_store(CMD, o.db);
    status = s ? predict(s, &o, kernel) : 1;
    store_close(s);
    json_decref(kernel);
    return status;
}
