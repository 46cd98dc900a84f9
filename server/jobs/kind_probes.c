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
 * the check is one the saver accepts. The registry calls a run function
 * without saying which kind it serves, so each probe keeps its own: one
 * line that hands the validated parameters to the probe's C call. The suite
 * runs every kind of suite_members in turn on one device through those same
 * run functions, each with its own defaults and the suite's repeats; a probe
 * that fails leaves {"error": reason} as its member, and the suite fails
 * only when all did.
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
    char name[NAME_MAX_LEN], known[2048];
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
    REPEATS_PARAM("5", "measurements of each figure; the median, minimum and maximum are kept"),
    {.name = "instructions", .type = PARAM_STRING, .default_json = "\"all\"",
     .description = "catalog entries to measure, comma-separated (\"ffma,dfma\"), or \"all\"",
     .check = check_instructions},
};

static const struct param_spec memory_params[] = {
    REPEATS_PARAM("5", "measurements of each point and figure; the median, minimum and maximum "
                       "are kept"),
};

/* The probes that edit machine code measure each point fewer times by default. */
static const struct param_spec banks_params[] = {
    {.name = "sample", .type = PARAM_INT, .min = 0, .max = 10000, .default_json = "64",
     .description = "random register pairs that confirm the classes"},
    REPEATS_PARAM("3", "measurements of the reference rate and of each cost; the median, "
                       "minimum and maximum are kept"),
};

static const struct param_spec control_codes_params[] = {
    REPEATS_PARAM("3", "measurements of each stall and yield setting; the median, minimum and "
                       "maximum are kept"),
};

static const struct param_spec dual_issue_params[] = {
    REPEATS_PARAM("3", "measurements of each ordering, operand choice and warp count; the "
                       "median, minimum and maximum are kept"),
};

static const struct param_spec suite_params[] = {
    REPEATS_PARAM("5", "measurements of each figure of every probe"),
};

/* ---- the probes' calls ------------------------------------------------------- */

static int repeats(const json_t *params)
{
    return (int)json_integer_value(json_object_get(params, "repeats"));
}

static json_t *latency_run(const struct job_ctx *ctx, const json_t *params, char *err,
                           size_t errlen)
{
    const char *only = json_string_value(json_object_get(params, "instructions"));
    return latency_probe_run(ctx->device_uuid, repeats(params), only, err, errlen);
}

static json_t *memory_run(const struct job_ctx *ctx, const json_t *params, char *err,
                          size_t errlen)
{
    return memory_probe_run(ctx->device_uuid, repeats(params), err, errlen);
}

static json_t *banks_run(const struct job_ctx *ctx, const json_t *params, char *err,
                         size_t errlen)
{
    int sample = (int)json_integer_value(json_object_get(params, "sample"));
    return banks_probe_run(ctx->device_uuid, sample, repeats(params), err, errlen);
}

static json_t *control_codes_run(const struct job_ctx *ctx, const json_t *params, char *err,
                                 size_t errlen)
{
    return control_codes_probe_run(ctx->device_uuid, repeats(params), err, errlen);
}

static json_t *dual_issue_run(const struct job_ctx *ctx, const json_t *params, char *err,
                              size_t errlen)
{
    return dual_issue_probe_run(ctx->device_uuid, repeats(params), err, errlen);
}

/* ---- the probe kinds --------------------------------------------------------- */

const struct job_kind kind_latency = {
    .name = "latency",
    .summary = "Latency and throughput of each instruction of the catalog, checked against "
               "the SASS it compiled to",
    .needs_gpu = 1, .default_timeout_s = PROBE_TIMEOUT_S, JOB_PARAMS(latency_params),
    .run = latency_run, .check_result = results_latency_check, .save = results_latency_save,
};

const struct job_kind kind_memory = {
    .name = "memory",
    .summary = "Load latency over working-set sizes (cached and L2-only loads), the levels "
               "of the hierarchy read off it, shared-memory latency and load departure delay",
    .needs_gpu = 1, .default_timeout_s = PROBE_TIMEOUT_S, JOB_PARAMS(memory_params),
    .run = memory_run, .check_result = results_memory_check, .save = results_memory_save,
};

const struct job_kind kind_banks = {
    .name = "banks",
    .summary = "Register banks: which registers conflict when read by one FFMA (found by "
               "editing the machine code), confirmed on random pairs, and what a conflict "
               "and the reuse flags cost",
    .needs_gpu = 1, .default_timeout_s = PROBE_TIMEOUT_S, JOB_PARAMS(banks_params),
    .run = banks_run, .check_result = results_banks_check, .save = results_banks_save,
};

const struct job_kind kind_control_codes = {
    .name = "control-codes",
    .summary = "What the scheduling fields of the machine code mean: each instruction timed "
               "and checked at every stall count and yield, the smallest safe stall, the "
               "meaning of stall, yield, wait masks and reuse read off the sweeps, and which "
               "ready warp issues after a stall or yield",
    .needs_gpu = 1, .default_timeout_s = PROBE_TIMEOUT_S, JOB_PARAMS(control_codes_params),
    .run = control_codes_run, .check_result = results_control_codes_check,
    .save = results_control_codes_save,
};

const struct job_kind kind_dual_issue = {
    .name = "dual-issue",
    .summary = "Whether two FFMAs of one warp issue in one cycle: single and dual orderings "
               "encoded in the control codes, with operands chosen from the register banks, "
               "against the FFMA peak",
    .needs_gpu = 1, .default_timeout_s = PROBE_TIMEOUT_S, JOB_PARAMS(dual_issue_params),
    .run = dual_issue_run, .check_result = results_dual_issue_check,
    .save = results_dual_issue_save,
};

/* ---- suite ---------------------------------------------------------------------- */

static const struct job_kind *const suite_members[] = {
    &kind_latency, &kind_memory, &kind_banks, &kind_control_codes, &kind_dual_issue,
};
#define SUITE_MEMBERS (sizeof suite_members / sizeof suite_members[0])

/* Appends "name: why" to err ("; " between reasons). */
static void add_reason(char *err, size_t errlen, const char *name, const char *why)
{
    size_t n = strlen(err);
    if (n < errlen)
        snprintf(err + n, errlen - n, "%s%s: %s", n ? "; " : "", name,
                 why[0] ? why : "failed without a reason");
}

/* Runs member k with its own defaults and the suite's repeats; NULL with the
 * reason in why. */
static json_t *run_member(const struct job_kind *k, const struct job_ctx *ctx,
                          const json_t *params, char *why, size_t whylen)
{
    char field[64];
    json_t *given = json_pack("{s:i}", "repeats", repeats(params));
    json_t *own = job_params_validate(k, given, why, whylen, field, sizeof field);
    json_t *doc = own ? k->run(ctx, own, why, whylen) : NULL;
    json_decref(given);
    json_decref(own);
    return doc;
}

static json_t *suite_run(const struct job_ctx *ctx, const json_t *params, char *err,
                         size_t errlen)
{
    json_t *res = json_object();
    char why[512];
    size_t ok = 0;
    err[0] = '\0';
    for (size_t i = 0; i < SUITE_MEMBERS; i++) {
        const char *name = suite_members[i]->name;
        why[0] = '\0';
        json_t *doc = run_member(suite_members[i], ctx, params, why, sizeof why);
        if (doc)
            ok++;
        else
            add_reason(err, errlen, name, why);
        json_object_set_new(res, name,
                            doc ? doc : json_pack("{s:s}", "error", why[0] ? why : "failed"));
    }
    if (ok)
        return res;
    json_decref(res);
    return NULL;
}

static int suite_check(const json_t *result, char *err, size_t errlen)
{
    for (size_t i = 0; i < SUITE_MEMBERS; i++)
        if (!json_object_get(result, suite_members[i]->name)) {
            snprintf(err, errlen, "the suite result lacks \"%s\"", suite_members[i]->name);
            return -1;
        }
    return results_suite_check(result, err, errlen);
}

const struct job_kind kind_suite = {
    .name = "suite",
    .summary = "Every probe of this build on one device, one after the other (latency, "
               "memory, banks, control-codes, dual-issue)",
    .needs_gpu = 1, .default_timeout_s = PROBE_TIMEOUT_S * (int)SUITE_MEMBERS,
    JOB_PARAMS(suite_params),
    .run = suite_run, .check_result = suite_check, .save = results_suite_save,
};
