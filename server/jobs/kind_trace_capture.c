/*
 * The "trace-capture" job kind (see kind_trace_capture.h).
 *
 * DESIGN
 * run_kind resolves the two files (paths from the command line, plain
 * names of upload_dir for the daemon), reads the PTX, splits "params"
 * into its items and hands everything to capture_run; a failure the PTX
 * or the parameters caused is reported as the input's (job_ctx.failure).
 * The finished hook removes the PTX always and the trace of a job that
 * did not succeed, as the trace-sort kind does with its files.
 */
#include "server/jobs/kind_trace_capture.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probes/capture.h"
#include "server/jobs/kind_trace.h"
#include "util/textfile.h"

#define CAPTURE_TIMEOUT_S 600

/* ---- the schema ---------------------------------------------------------------- */

static int check_dims(const struct param_spec *p, const json_t *v, char *why, size_t len)
{
    unsigned d[3];
    return capture_dims_parse(json_string_value(v), d, why, len) < 0 ||
                   capture_dims_limit(p->name, d, why, len) < 0
               ? -1
               : 0;
}

/* The items of "params" into args (pointers into copy, which the caller
 * frees); the count, or -1 with the reason. */
static int split_args(const char *text, char **copy, const char *args[TRACE_CAPTURE_MAX_ARGS],
                      char *why, size_t len)
{
    char *save = NULL;
    int n = 0;
    if (!(*copy = strdup(text)))
        return snprintf(why, len, "out of memory"), -1;
    for (char *t = strtok_r(*copy, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
        if (n == TRACE_CAPTURE_MAX_ARGS)
            return snprintf(why, len, "holds over %d items", TRACE_CAPTURE_MAX_ARGS), -1;
        if (capture_arg_check(t, why, len) < 0)
            return -1;
        size_t name = (size_t)(strchr(t, '=') - t);
        for (int i = 0; i < n; i++)
            if (strncmp(args[i], t, name + 1) == 0)
                return snprintf(why, len, "'%.*s' is given twice", (int)name, t), -1;
        args[n++] = t;
    }
    return n;
}

static int check_args(const struct param_spec *p, const json_t *v, char *why, size_t len)
{
    const char *args[TRACE_CAPTURE_MAX_ARGS];
    char *copy = NULL;
    (void)p;
    int n = split_args(json_string_value(v), &copy, args, why, len);
    free(copy);
    return n < 0 ? -1 : 0;
}

static const struct param_spec schema[] = {
    {.name = "ptx", .type = PARAM_STRING, .required = 1, .check = trace_job_check_file,
     .description = "the PTX module: a path from the command line, a file name in upload_dir "
                    "when the daemon runs the job"},
    {.name = "output", .type = PARAM_STRING, .check = trace_job_check_file,
     .description = "where the binary trace goes (written as OUTPUT.part, then renamed); a "
                    "daemon job that names none writes trace-<job id>.out in upload_dir"},
    {.name = "entry", .type = PARAM_STRING, .check = trace_job_check_file,
     .description = "the kernel (.entry) to capture; may be left out when the module has one"},
    {.name = "grid", .type = PARAM_STRING, .required = 1, .check = check_dims,
     .description = "blocks of the launch: X[,Y[,Z]]"},
    {.name = "block", .type = PARAM_STRING, .required = 1, .check = check_dims,
     .description = "threads per block: X[,Y[,Z]]"},
    {.name = "params", .type = PARAM_STRING, .default_json = "\"\"", .check = check_args,
     .description = "the kernel's parameters, NAME=VALUE separated by spaces (NAME: the PTX "
                    "name or index; VALUE: buf:BYTES[:zero|iota|rand:SEED|randf:SEED|f32:V] "
                    "for a pointer, else the scalar; docs/trace-capture.md)"},
    {.name = "shared_bytes", .type = PARAM_INT, .min = 0, .max = 1 << 30, .default_json = "0",
     .description = "dynamic shared memory of the launch, bytes"},
    {.name = "max_records", .type = PARAM_INT, .min = 1, .max = 4294967295.0,
     .default_json = "134217728",
     .description = "a kernel making more global accesses than this is refused"},
    {.name = "sample_blocks", .type = PARAM_INT, .min = 0, .max = 4294967295.0,
     .default_json = "0",
     .description = "record only the launch's first this many blocks (linear index, x "
                    "fastest; the whole launch still runs); 0: every block"},
};

/* ---- running ---------------------------------------------------------------------- */

static const char *param_str(const json_t *params, const char *name)
{
    return json_string_value(json_object_get(params, name));
}

struct paths {
    char ptx[PATH_MAX], output[PATH_MAX];
};

static int paths_of(const struct job_ctx *ctx, const json_t *params, struct paths *p, char *err,
                    size_t errlen)
{
    const char *output = param_str(params, "output");
    if (trace_job_resolve_file(ctx, "ptx", param_str(params, "ptx"), p->ptx, sizeof p->ptx, err,
                               errlen) < 0)
        return -1;
    if (output)
        return trace_job_resolve_file(ctx, "output", output, p->output, sizeof p->output, err,
                                      errlen);
    if (ctx->upload_dir && ctx->job_id > 0) {
        trace_sort_job_output(ctx->upload_dir, ctx->job_id, p->output, sizeof p->output);
        return 0;
    }
    return snprintf(err, errlen, "output: is required"), -1;
}

static void set_class(const struct job_ctx *ctx, enum job_error_class cls)
{
    if (ctx->failure)
        ctx->failure->cls = cls;
}

static json_t *run_kind(const struct job_ctx *ctx, const json_t *params, char *err, size_t errlen)
{
    struct paths *p = malloc(sizeof *p);
    const char *args[TRACE_CAPTURE_MAX_ARGS];
    char *copy = NULL, *ptx = NULL;
    json_t *doc = NULL;
    int nargs, input_fault = 0;
    struct capture_req q = {0};
    if (!p)
        return snprintf(err, errlen, "out of memory"), NULL;
    if (paths_of(ctx, params, p, err, errlen) < 0 ||
        (nargs = split_args(param_str(params, "params"), &copy, args, err, errlen)) < 0 ||
        capture_dims_parse(param_str(params, "grid"), q.grid, err, errlen) < 0 ||
        capture_dims_parse(param_str(params, "block"), q.block, err, errlen) < 0) {
        set_class(ctx, JOB_ERROR_PARAMS);
    } else if (!(ptx = text_file_read(p->ptx, TEXT_FILE_PTX_MAX, err, errlen))) {
        set_class(ctx, JOB_ERROR_INPUT);
    } else {
        q.ptx = ptx;
        q.entry = param_str(params, "entry");
        q.args = args;
        q.nargs = (size_t)nargs;
        q.shared_bytes = (unsigned)json_integer_value(json_object_get(params, "shared_bytes"));
        q.max_records = (uint64_t)json_integer_value(json_object_get(params, "max_records"));
        q.sample_blocks = (uint64_t)json_integer_value(json_object_get(params, "sample_blocks"));
        q.device = ctx->device_uuid ? ctx->device_uuid : "0";
        q.output = p->output;
        doc = capture_run(&q, err, errlen, &input_fault);
        if (!doc && input_fault)
            set_class(ctx, JOB_ERROR_INPUT);
    }
    free(copy);
    free(ptx);
    free(p);
    return doc;
}

/* ---- the descriptor ----------------------------------------------------------- */

static int check_result(const json_t *result, char *err, size_t errlen)
{
    if (!json_is_integer(json_object_get(result, "records")) ||
        !json_is_true(json_object_get(result, "same_answer")) ||
        !json_is_array(json_object_get(result, "sites")) ||
        !json_is_array(json_object_get(result, "buffers"))) {
        snprintf(err, errlen, "the capture result lacks \"records\", \"sites\", \"buffers\" or a "
                              "true \"same_answer\"");
        return -1;
    }
    return 0;
}

static void remove_named(const char *dir, const char *name, const char *suffix)
{
    char path[PATH_MAX];
    if (name && trace_sort_plain_name(name) &&
        snprintf(path, sizeof path, "%s/%s%s", dir, name, suffix) < (int)sizeof path)
        unlink(path);
}

/* In the daemon, when the job has ended: the PTX always goes, and so does
 * the trace of a job that did not succeed (and any partial one). */
static void finished(const char *upload_dir, int64_t job_id, const char *params_json,
                     int succeeded)
{
    json_t *p = json_loads(params_json ? params_json : "", 0, NULL);
    const char *output = param_str(p, "output");
    char path[PATH_MAX + 8];
    remove_named(upload_dir, param_str(p, "ptx"), "");
    if (output) {
        remove_named(upload_dir, output, ".part");
        if (!succeeded)
            remove_named(upload_dir, output, "");
    } else if (job_id > 0) {
        trace_sort_job_output(upload_dir, job_id, path, PATH_MAX);
        if (!succeeded)
            unlink(path);
        strcat(path, ".part");
        unlink(path);
    }
    json_decref(p);
}

const struct job_kind kind_trace_capture = {
    .name = "trace-capture",
    .summary = "Captures a kernel's memory trace from its PTX on a GPU: every global load and "
               "store recorded by an instrumented copy, checked to compute what the original "
               "does; internal: created by POST /api/v1/traces/capture",
    .needs_gpu = 1,
    .internal = 1,
    .created_by = "POST /api/v1/traces/capture",
    .default_timeout_s = CAPTURE_TIMEOUT_S,
    JOB_PARAMS(schema),
    .run = run_kind,
    .check_result = check_result,
    .finished = finished,
};
