/*
 * The probe job kinds (see kind_probes.h).
 *
 * DESIGN
 * Each kind is a descriptor: its parameters (checked by the one validator in
 * registry.c; the instruction list is checked against the latency catalog
 * through the parameter's own check, so a bad name is refused at submission,
 * not when the worker runs), a run function that calls the probe in the
 * worker process, the result check and the saver. The check and the saver
 * are db/results.h's walks over the same document, so a result that passes
 * the check is one the saver accepts. The suite runs every probe of
 * suite_probes in turn on one device; a probe that fails leaves
 * {"error": reason} as its member, and the suite fails only when all did.
 */
#include "server/jobs/kind_probes.h"

#include <stdio.h>
#include <string.h>

#include "db/results.h"
#include "probes/banks.h"
#include "probes/control_codes.h"
#include "probes/dual_issue.h"
#include "probes/latency.h"
#include "probes/memory.h"
#include "probes/stats.h"

#define PROBE_TIMEOUT_S 600
#define NAME_MAX_LEN 64

/* ---- parameters --------------------------------------------------------------- */

/* "known: fadd, fmul, ..." into buf. */
static void catalog_names(char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "known: all");
    for (size_t i = 0; i < lat_catalog_count && n < len; i++)
        n += (size_t)snprintf(buf + n, len - n, ", %s", lat_catalog[i].name);
}

/* The next comma-separated name of *p into name; -1 when it is empty or too long. */
static int next_name(const char **p, char name[NAME_MAX_LEN])
{
    size_t n = strcspn(*p, ",");
    int ok = n > 0 && n < NAME_MAX_LEN;
    if (ok) {
        memcpy(name, *p, n);
        name[n] = '\0';
    }
    *p += n + ((*p)[n] == ',');
    return ok ? 0 : -1;
}

static int check_instructions(const struct param_spec *spec, const json_t *v, char *why,
                              size_t len)
{
    (void)spec;
    const char *p = json_string_value(v), *end = p + strlen(p);
    char name[NAME_MAX_LEN], known[512];
    if (strcmp(p, "all") == 0)
        return 0;
    catalog_names(known, sizeof known);
    if (*p == '\0' || end[-1] == ',') {
        snprintf(why, len, "must be \"all\" or catalog names separated by commas (%s)", known);
        return -1;
    }
    while (*p) {
        const char *at = p;
        if (next_name(&p, name) < 0) {
            snprintf(why, len, "an empty or overlong name at offset %zu (%s)",
                     (size_t)(at - json_string_value(v)), known);
            return -1;
        }
        if (!lat_find(name)) {
            snprintf(why, len, "unknown instruction '%s' (%s)", name, known);
            return -1;
        }
    }
    return 0;
}

static const struct param_spec latency_params[] = {
    {.name = "repeats", .type = PARAM_INT, .min = 1, .max = PROBE_MAX_REPEATS, .default_json = "5",
     .description = "measurements of each figure; the median, minimum and maximum are kept"},
    {.name = "instructions", .type = PARAM_STRING, .default_json = "\"all\"",
     .description = "catalog entries to measure, comma-separated (\"ffma,dfma\"), or \"all\"",
     .check = check_instructions},
};

static const struct param_spec memory_params[] = {
    {.name = "repeats", .type = PARAM_INT, .min = 1, .max = PROBE_MAX_REPEATS, .default_json = "5",
     .description = "measurements of each point and figure; the median, minimum and maximum "
                    "are kept"},
};

/* The probes that edit machine code measure each point fewer times by default. */
#define EDIT_REPEATS(what)                                                                    \
    {.name = "repeats", .type = PARAM_INT, .min = 1, .max = PROBE_MAX_REPEATS, .default_json = "3",          \
     .description = what}

static const struct param_spec banks_params[] = {
    {.name = "sample", .type = PARAM_INT, .min = 0, .max = 10000, .default_json = "64",
     .description = "random register pairs that confirm the classes"},
    EDIT_REPEATS("measurements of the reference rate and of each cost; the median, minimum "
                 "and maximum are kept"),
};

static const struct param_spec control_codes_params[] = {
    EDIT_REPEATS("measurements of each stall and yield setting; the median, minimum and "
                 "maximum are kept"),
};

static const struct param_spec dual_issue_params[] = {
    EDIT_REPEATS("measurements of each ordering, operand choice and warp count; the median, "
                 "minimum and maximum are kept"),
};

static const struct param_spec suite_params[] = {
    {.name = "repeats", .type = PARAM_INT, .min = 1, .max = PROBE_MAX_REPEATS, .default_json = "5",
     .description = "measurements of each figure of every probe"},
};

static int param_int(const json_t *params, const char *name)
{
    return (int)json_integer_value(json_object_get(params, name));
}

/* ---- latency ------------------------------------------------------------------ */

static json_t *latency_run(const struct job_ctx *ctx, const json_t *params, char *err,
                           size_t errlen)
{
    const char *only = json_string_value(json_object_get(params, "instructions"));
    return latency_probe_run(ctx->device_uuid, param_int(params, "repeats"), only, err, errlen);
}

const struct job_kind kind_latency = {
    .name = "latency",
    .summary = "Latency and throughput of each instruction of the catalog, checked against "
               "the SASS it compiled to",
    .needs_gpu = 1,
    .default_timeout_s = PROBE_TIMEOUT_S,
    .params = latency_params,
    .nparams = sizeof latency_params / sizeof latency_params[0],
    .run = latency_run,
    .check_result = results_latency_check,
    .save = results_latency_save,
};

/* ---- memory ------------------------------------------------------------------- */

static json_t *memory_run(const struct job_ctx *ctx, const json_t *params, char *err,
                          size_t errlen)
{
    return memory_probe_run(ctx->device_uuid, param_int(params, "repeats"), err, errlen);
}

const struct job_kind kind_memory = {
    .name = "memory",
    .summary = "Load latency over working-set sizes (cached and L2-only loads), the levels "
               "of the hierarchy read off it, shared-memory latency and load departure delay",
    .needs_gpu = 1,
    .default_timeout_s = PROBE_TIMEOUT_S,
    .params = memory_params,
    .nparams = sizeof memory_params / sizeof memory_params[0],
    .run = memory_run,
    .check_result = results_memory_check,
    .save = results_memory_save,
};

/* ---- banks -------------------------------------------------------------------- */

static json_t *banks_run(const struct job_ctx *ctx, const json_t *params, char *err,
                         size_t errlen)
{
    return banks_probe_run(ctx->device_uuid, param_int(params, "sample"),
                           param_int(params, "repeats"), err, errlen);
}

const struct job_kind kind_banks = {
    .name = "banks",
    .summary = "Register banks: which registers conflict when read by one FFMA (found by "
               "editing the machine code), confirmed on random pairs, and what a conflict "
               "and the reuse flags cost",
    .needs_gpu = 1,
    .default_timeout_s = PROBE_TIMEOUT_S,
    .params = banks_params,
    .nparams = sizeof banks_params / sizeof banks_params[0],
    .run = banks_run,
    .check_result = results_banks_check,
    .save = results_banks_save,
};

/* ---- control codes ------------------------------------------------------------- */

static json_t *control_codes_run(const struct job_ctx *ctx, const json_t *params, char *err,
                                 size_t errlen)
{
    return control_codes_probe_run(ctx->device_uuid, param_int(params, "repeats"), err, errlen);
}

const struct job_kind kind_control_codes = {
    .name = "control-codes",
    .summary = "What the scheduling fields of the machine code mean: each instruction timed "
               "and checked at every stall count and yield, the smallest safe stall, and the "
               "meaning of stall, yield, wait masks and reuse read off the sweeps",
    .needs_gpu = 1,
    .default_timeout_s = PROBE_TIMEOUT_S,
    .params = control_codes_params,
    .nparams = sizeof control_codes_params / sizeof control_codes_params[0],
    .run = control_codes_run,
    .check_result = results_control_codes_check,
    .save = results_control_codes_save,
};

/* ---- dual issue ------------------------------------------------------------------ */

static json_t *dual_issue_run(const struct job_ctx *ctx, const json_t *params, char *err,
                              size_t errlen)
{
    return dual_issue_probe_run(ctx->device_uuid, param_int(params, "repeats"), err, errlen);
}

const struct job_kind kind_dual_issue = {
    .name = "dual-issue",
    .summary = "Whether two FFMAs of one warp issue in one cycle: single and dual orderings "
               "encoded in the control codes, with operands chosen from the register banks, "
               "against the FFMA peak",
    .needs_gpu = 1,
    .default_timeout_s = PROBE_TIMEOUT_S,
    .params = dual_issue_params,
    .nparams = sizeof dual_issue_params / sizeof dual_issue_params[0],
    .run = dual_issue_run,
    .check_result = results_dual_issue_check,
    .save = results_dual_issue_save,
};

/* ---- suite ---------------------------------------------------------------------- */

#define SUITE_BANKS_SAMPLE 64    /* the banks kind's default */

static json_t *suite_latency(const char *device, int repeats, char *err, size_t errlen)
{
    return latency_probe_run(device, repeats, "all", err, errlen);
}

static json_t *suite_banks(const char *device, int repeats, char *err, size_t errlen)
{
    return banks_probe_run(device, SUITE_BANKS_SAMPLE, repeats, err, errlen);
}

static const struct {
    const char *name;
    json_t *(*run)(const char *device, int repeats, char *err, size_t errlen);
} suite_probes[] = {
    {"latency", suite_latency},
    {"memory", memory_probe_run},
    {"banks", suite_banks},
    {"control-codes", control_codes_probe_run},
    {"dual-issue", dual_issue_probe_run},
};
#define SUITE_PROBES (sizeof suite_probes / sizeof suite_probes[0])

/* Appends "name: why" to err ("; " between reasons). */
static void add_reason(char *err, size_t errlen, const char *name, const char *why)
{
    size_t n = strlen(err);
    if (n < errlen)
        snprintf(err + n, errlen - n, "%s%s: %s", n ? "; " : "", name,
                 why[0] ? why : "failed without a reason");
}

static json_t *suite_run(const struct job_ctx *ctx, const json_t *params, char *err,
                         size_t errlen)
{
    json_t *res = json_object();
    char why[512];
    size_t ok = 0;
    err[0] = '\0';
    for (size_t i = 0; i < SUITE_PROBES; i++) {
        why[0] = '\0';
        json_t *doc = suite_probes[i].run(ctx->device_uuid, param_int(params, "repeats"), why,
                                          sizeof why);
        if (doc)
            ok++;
        else
            add_reason(err, errlen, suite_probes[i].name, why);
        json_object_set_new(res, suite_probes[i].name,
                            doc ? doc : json_pack("{s:s}", "error", why[0] ? why : "failed"));
    }
    if (ok)
        return res;
    json_decref(res);
    return NULL;
}

static int suite_check(const json_t *result, char *err, size_t errlen)
{
    for (size_t i = 0; i < SUITE_PROBES; i++)
        if (!json_object_get(result, suite_probes[i].name)) {
            snprintf(err, errlen, "the suite result lacks \"%s\"", suite_probes[i].name);
            return -1;
        }
    return results_suite_check(result, err, errlen);
}

const struct job_kind kind_suite = {
    .name = "suite",
    .summary = "Every probe of this build on one device, one after the other (latency, "
               "memory, banks, control-codes, dual-issue)",
    .needs_gpu = 1,
    .default_timeout_s = PROBE_TIMEOUT_S * (int)SUITE_PROBES,
    .params = suite_params,
    .nparams = sizeof suite_params / sizeof suite_params[0],
    .run = suite_run,
    .check_result = suite_check,
    .save = results_suite_save,
};
