/*
 * The "trace-sort" job kind (see kind_trace.h).
 *
 * DESIGN
 * run_kind resolves the file parameters (paths from the command line, plain
 * names of upload_dir for the daemon), reads every other parameter into a
 * struct trace_params through trace_params_from_json, and hands both to
 * trace_pipeline_sort; the pipeline's failure becomes the job's
 * (job_ctx.failure). The finished hook, run in the daemon when a job ends,
 * removes the files the job owned.
 */
#include "server/jobs/kind_trace.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/params.h"
#include "trace/pipeline.h"

#define TRACE_SORT_TIMEOUT_S 3600
#define NAME_MAX_BYTES 200
#define NFILE_PARAMS 3
#define NPARAMS (NFILE_PARAMS + TRACE_SETTING_COUNT)

/* ---- the schema -------------------------------------------------------------- */

int trace_job_check_file(const struct param_spec *p, const json_t *v, char *why, size_t len)
{
    (void)p;
    if (json_string_value(v)[0] != '\0')
        return 0;
    snprintf(why, len, "must not be empty");
    return -1;
}

/* A setting's value as the text its table entry parses. */
static int value_text(const json_t *v, char *buf, size_t len)
{
    if (json_is_string(v))
        return snprintf(buf, len, "%s", json_string_value(v)) < (int)len ? 0 : -1;
    if (json_is_integer(v))
        return snprintf(buf, len, "%lld", (long long)json_integer_value(v)) < (int)len ? 0 : -1;
    return snprintf(buf, len, "%.17g", json_number_value(v)) < (int)len ? 0 : -1;
}

/* Every setting is checked by trace/params.c's table (powers of two, 64-bit
 * seeds), after the schema's type and bounds. */
static int check_setting(const struct param_spec *p, const json_t *v, char *why, size_t len)
{
    char text[64];
    const struct trace_setting *s = trace_setting_find(p->name);
    if (!s || value_text(v, text, sizeof text) < 0) {
        snprintf(why, len, "is not a value of this setting");
        return -1;
    }
    json_t *ok = trace_setting_json(s, text, why, len);
    json_decref(ok);
    return ok ? 0 : -1;
}

static struct param_spec schema[NPARAMS] = {
    {.name = "input", .type = PARAM_STRING, .required = 1, .check = trace_job_check_file,
     .description = "the trace to sort: a path from the command line, a file name in "
                    "upload_dir when the daemon runs the job"},
    {.name = "output", .type = PARAM_STRING, .check = trace_job_check_file,
     .description = "where the sorted trace goes (written as OUTPUT.part, then renamed); a "
                    "daemon job that names none writes trace-<job id>.out in upload_dir"},
    {.name = "pc_flags", .type = PARAM_STRING, .check = trace_job_check_file,
     .description = "a per-PC dependency flag table (pc,dep lines) replacing the input's flags"},
};
static char descriptions[TRACE_SETTING_COUNT][400];

static const enum param_type param_types[] = {
    [TRACE_SETTING_INT] = PARAM_INT, [TRACE_SETTING_U64] = PARAM_STRING,
    [TRACE_SETTING_NUMBER] = PARAM_NUMBER, [TRACE_SETTING_CHOICE] = PARAM_ENUM};

/* The placements a job can take: the setting's, less dealt, whose order
 * is a device's measurement that no setting carries (trace/deal.h). */
static const char *job_placements[8];

/* s's choices as the job offers them. */
static const char *const *job_choices(const struct trace_setting *s)
{
    if (!s->choices || strcmp(s->name, "placement") != 0)
        return s->choices;
    size_t k = 0;
    for (const char *const *c = s->choices; *c && k + 1 < sizeof job_placements / sizeof *job_placements; c++)
        if (strcmp(*c, "dealt") != 0)
            job_placements[k++] = *c;
    job_placements[k] = NULL;
    return job_placements;
}

/* One schema entry per trace setting, from the table, before main runs:
 * the kind's descriptor is constant and the table is known at build time. */
__attribute__((constructor)) static void build_schema(void)
{
    for (size_t i = 0; i < TRACE_SETTING_COUNT; i++) {
        const struct trace_setting *s = trace_setting_at(i);
        const char *const *choices = job_choices(s);
        char bounds[160];
        struct trace_setting shown = *s;
        shown.choices = choices;
        trace_setting_bounds(&shown, bounds, sizeof bounds);
        snprintf(descriptions[i], sizeof descriptions[i], "%s (default: %s; %s%s)", s->meaning,
                 s->default_text, bounds,
                 choices != s->choices ? "; dealt only from the command line" : "");
        schema[NFILE_PARAMS + i] = (struct param_spec){
            .name = s->name, .type = param_types[s->type], .min = s->min, .max = s->max,
            .choices = choices, .default_json = s->fixed_default,
            .description = descriptions[i], .check = check_setting};
    }
}

/* ---- settings as text --------------------------------------------------------- */

/* src with every '_' spelt '-', into dst; -1 if it does not fit. */
static int hyphenate(const char *src, char *dst, size_t len)
{
    size_t n = strlen(src);
    if (n >= len)
        return -1;
    for (size_t i = 0; i <= n; i++)
        dst[i] = src[i] == '_' ? '-' : src[i];
    return 0;
}

static void known_settings(char *buf, size_t len)
{
    size_t n = 0;
    char name[64];
    buf[0] = '\0';
    for (size_t i = 0; i < TRACE_SETTING_COUNT && n < len; i++)
        if (hyphenate(trace_setting_at(i)->name, name, sizeof name) == 0)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", name);
}


int trace_sort_param_text(json_t *params, const char *name, const char *value, char *err,
                          size_t errlen)
{
    char known[400], why[300];
    const struct trace_setting *s = trace_setting_find(name);
    if (!s) {
        known_settings(known, sizeof known);
        snprintf(err, errlen, "'%.64s' is not a setting (known: %s)", name, known);
        return -1;
    }
    if (json_object_get(params, s->name)) { /* under this name or another of the setting's */
        snprintf(err, errlen, "'%.64s' is given more than once", name);
        return -1;
    }
    json_t *v = trace_setting_json(s, value, why, sizeof why);
    if (!v) {
        snprintf(err, errlen, "%.64s: %s", name, why);
        return -1;
    }
    json_object_set_new(params, s->name, v);
    return 0;
}

json_t *trace_sort_params_check(const json_t *given, char *err, size_t errlen, char *field,
                                size_t fieldlen)
{
    char e[512], f[128];
    json_t *out = job_params_validate(&kind_trace_sort, given, e, sizeof e, f, sizeof f);
    if (out)
        return out;
    const char *name = strncmp(f, "params.", 7) == 0 ? f + 7 : f;
    const char *why = strncmp(e, f, strlen(f)) == 0 ? e + strlen(f) : e;
    if (hyphenate(name, field, fieldlen) < 0)
        snprintf(field, fieldlen, "params");
    snprintf(err, errlen, "%s%s", field, why);
    return NULL;
}

/* ---- file names ---------------------------------------------------------------- */

int trace_sort_plain_name(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > NAME_MAX_BYTES || name[0] == '.')
        return 0;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '_' || *p == '-'))
            return 0;
    return 1;
}

void trace_sort_job_output(const char *upload_dir, int64_t job_id, char *buf, size_t len)
{
    snprintf(buf, len, "%s/trace-%lld.out", upload_dir, (long long)job_id);
}

static const char *param_str(const json_t *params, const char *name)
{
    return json_string_value(json_object_get(params, name));
}

int trace_job_resolve_file(const struct job_ctx *ctx, const char *what, const char *value,
                           char *out, size_t len, char *err, size_t errlen)
{
    const char *dir = ctx->upload_dir;
    if (dir && !trace_sort_plain_name(value)) {
        snprintf(err, errlen, "%s: '%.100s' is not a file name of the upload folder", what, value);
        return -1;
    }
    int n = dir ? snprintf(out, len, "%s/%s", dir, value) : snprintf(out, len, "%s", value);
    if (n >= 0 && (size_t)n < len)
        return 0;
    snprintf(err, errlen, "%s: the path is too long", what);
    return -1;
}

struct paths {
    char input[PATH_MAX], output[PATH_MAX], pc_flags[PATH_MAX];
};

/* The job's files as the pipeline takes them. */
static int files_of(const struct job_ctx *ctx, const json_t *params, struct paths *p,
                    struct trace_files *f, char *err, size_t errlen)
{
    const char *input = param_str(params, "input"), *output = param_str(params, "output");
    const char *flags = param_str(params, "pc_flags");
    *f = (struct trace_files){.input = p->input, .output = p->output,
                              .pc_flags = flags ? p->pc_flags : NULL, .tmpdir = ctx->upload_dir};
    if (!input || trace_job_resolve_file(ctx, "input", input, p->input, sizeof p->input, err, errlen))
        return input ? -1 : (snprintf(err, errlen, "input: is required"), -1);
    if (flags && trace_job_resolve_file(ctx, "pc_flags", flags, p->pc_flags, sizeof p->pc_flags, err, errlen))
        return -1;
    if (output && !ctx->upload_dir && strcmp(output, "-") == 0)
        f->output = "-";
    else if (output)
        return trace_job_resolve_file(ctx, "output", output, p->output, sizeof p->output, err, errlen);
    else if (ctx->upload_dir && ctx->job_id > 0)
        trace_sort_job_output(ctx->upload_dir, ctx->job_id, p->output, sizeof p->output);
    else
        return snprintf(err, errlen, "output: is required"), -1;
    return 0;
}

/* Every parameter that is not a file, as the pipeline's settings. */
static int settings_of(const json_t *params, struct trace_params *p, char *err, size_t errlen)
{
    json_t *settings = json_deep_copy(params);
    for (size_t i = 0; i < NFILE_PARAMS; i++)
        json_object_del(settings, schema[i].name);
    trace_params_default(p);
    int rc = trace_params_from_json(p, settings, err, errlen);
    json_decref(settings);
    return rc;
}

static const enum job_error_class error_classes[] = {
    [TRACE_FAULT_OTHER] = JOB_ERROR_OTHER, [TRACE_FAULT_INPUT] = JOB_ERROR_INPUT,
    [TRACE_FAULT_PARAMS] = JOB_ERROR_PARAMS, [TRACE_FAULT_SPACE] = JOB_ERROR_STORAGE};

static json_t *run_kind(const struct job_ctx *ctx, const json_t *params, char *err, size_t errlen)
{
    struct paths *paths = malloc(sizeof *paths);
    struct trace_files files;
    struct trace_params p;
    struct trace_summary sum;
    struct trace_outcome out;
    struct trace_failure fail;
    json_t *res = NULL;
    if (!paths) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (files_of(ctx, params, paths, &files, err, errlen) == 0 &&
        settings_of(params, &p, err, errlen) == 0) {
        if (trace_pipeline_sort(&files, &p, &sum, &out, &fail) == 0) {
            res = trace_pipeline_result(&sum, &p, &out);
            trace_summary_free(&sum);
            if (!res)
                snprintf(err, errlen, "out of memory for the summary");
        } else {
            snprintf(err, errlen, "%s", fail.msg);
            if (ctx->failure)
                *ctx->failure = (struct job_failure){error_classes[fail.fault], fail.line,
                                                     fail.offset};
        }
    } else if (ctx->failure) {
        ctx->failure->cls = JOB_ERROR_PARAMS;
    }
    free(paths);
    return res;
}

/* ---- the descriptor ----------------------------------------------------------- */

static int check_result(const json_t *result, char *err, size_t errlen)
{
    static const char *const counts[] = {"records_in", "requests_out", "blocks", "ticks", NULL};
    for (const char *const *c = counts; *c; c++)
        if (!json_is_integer(json_object_get(result, *c))) {
            snprintf(err, errlen, "the summary lacks the integer \"%s\"", *c);
            return -1;
        }
    if (!json_is_array(json_object_get(result, "sms")) ||
        !json_is_object(json_object_get(result, "params"))) {
        snprintf(err, errlen, "the summary lacks \"sms\" or \"params\"");
        return -1;
    }
    return 0;
}

/* Removes path+suffix. */
static void remove_suffixed(const char *path, const char *suffix)
{
    char full[PATH_MAX + 16];
    if (snprintf(full, sizeof full, "%s%s", path, suffix) < (int)sizeof full)
        unlink(full);
}

/* Removes the upload_dir file named by a stored parameter (a plain name only). */
static void remove_named(const char *dir, const char *name, const char *suffix)
{
    char path[PATH_MAX];
    if (name && trace_sort_plain_name(name) &&
        snprintf(path, sizeof path, "%s/%s", dir, name) < (int)sizeof path)
        remove_suffixed(path, suffix);
}

/* In the daemon, when the job has ended: the input always goes, and so does
 * the output of a job that did not succeed (and any partial one). */
static void finished(const char *upload_dir, int64_t job_id, const char *params_json,
                     int succeeded)
{
    json_t *p = json_loads(params_json ? params_json : "", 0, NULL);
    const char *output = param_str(p, "output");
    char path[PATH_MAX];
    remove_named(upload_dir, param_str(p, "input"), "");
    if (output) {
        remove_named(upload_dir, output, ".part");
        if (!succeeded)
            remove_named(upload_dir, output, "");
    } else if (job_id > 0) {
        trace_sort_job_output(upload_dir, job_id, path, sizeof path);
        remove_suffixed(path, ".part");
        if (!succeeded)
            unlink(path);
    }
    json_decref(p);
}

const struct job_kind kind_trace_sort = {
    .name = "trace-sort",
    .summary = "Orders a trace's memory requests as they reach each SM's L1 and writes the "
               "sorted trace; internal: created by POST /api/v1/traces/sort",
    .needs_gpu = 0,
    .internal = 1,
    .created_by = "POST /api/v1/traces/sort",
    .default_timeout_s = TRACE_SORT_TIMEOUT_S,
    .params = schema,
    .nparams = NPARAMS,
    .run = run_kind,
    .check_result = check_result,
    .finished = finished,
};
