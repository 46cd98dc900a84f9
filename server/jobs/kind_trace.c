/*
 * The "trace-sort" job kind (see kind_trace.h).
 *
 * DESIGN
 * A run is four steps over one struct run: setup (files resolved, formats,
 * sorter parameters from the job's parameters through
 * trace_params_from_json), input (a binary requests file is opened in
 * place with trace_input_open; text, or binary with a per-PC flag table, is
 * read through trace_read_path into a spool and written thread-major to a
 * temporary file nobody else sees, O_TMPFILE where the kernel has it), sort
 * (trace_sort_input into a binary or CSV writer on OUTPUT.part), and commit
 * (rename to OUTPUT, summary JSON). Every failure goes through fail() or
 * fail_at(), which write the message and the error members once; the part
 * file is removed on every failure. Temporary and spool files go to
 * upload_dir when the daemon runs the job, else to $TMPDIR.
 * The parameter schema mirrors trace_params' settings one to one (names with
 * '_'); users spell them with '-' (CLI options, query arguments), which
 * trace_sort_param_text and trace_sort_params_check translate.
 */
#include "server/jobs/kind_trace.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/text.h"
#include "trace/binfmt.h"
#include "trace/csv.h"
#include "trace/readfile.h"
#include "trace/spool.h"

#define TRACE_SORT_TIMEOUT_S 3600
#define PATH_LEN 1200
#define NAME_MAX_BYTES 200
#define CSV_BUF_BYTES ((size_t)256 << 10)

/* ---- parameters ------------------------------------------------------------ */

static const char *const out_formats[] = {"csv", "bin", NULL};
static const char *const coalesce_choices[] = {"line128", "sector32", NULL};
static const char *const schedule_choices[] = {"rr", "gto", NULL};
static const char *const delay_choices[] = {"normal", "fixed", NULL};
static const char *const placement_choices[] = {"rr", "fill", NULL};

static int check_file(const json_t *v, char *why, size_t len)
{
    if (json_string_value(v)[0] != '\0')
        return 0;
    snprintf(why, len, "must not be empty");
    return -1;
}

static int check_line(const json_t *v, char *why, size_t len)
{
    json_int_t n = json_integer_value(v);
    if ((n & (n - 1)) == 0)
        return 0;
    snprintf(why, len, "must be a power of two from 32 to %u", TRACE_MAX_LINE);
    return -1;
}

static int check_seed(const json_t *v, char *why, size_t len)
{
    struct trace_params p;
    trace_params_default(&p);
    if (trace_params_set(&p, "seed", json_string_value(v), NULL, 0) == 0)
        return 0;
    snprintf(why, len, "must be a decimal integer from 0 to %" PRIu64, UINT64_MAX);
    return -1;
}

static const struct param_spec trace_sort_params[] = {
    {.name = "input", .type = PARAM_STRING, .required = 1, .check = check_file,
     .description = "the trace to sort: a path from the command line, a file name in "
                    "upload_dir when the daemon runs the job"},
    {.name = "output", .type = PARAM_STRING, .check = check_file,
     .description = "where the sorted trace goes (written as OUTPUT.part, then renamed); a "
                    "daemon job that names none writes trace-<job id>.out in upload_dir"},
    {.name = "pc_flags", .type = PARAM_STRING, .check = check_file,
     .description = "a per-PC dependency flag table (pc,dep lines) replacing the input's flags"},
    {.name = "in_format", .type = PARAM_ENUM, .choices = trace_format_names,
     .default_json = "\"auto\"",
     .description = "the input's format; auto tells it from the content"},
    {.name = "out_format", .type = PARAM_ENUM, .choices = out_formats, .default_json = "\"csv\"",
     .description = "csv (sm,seq,tid,pc,addr,width,dep) or bin (docs/trace-format.md, kind 2)"},
    {.name = "arch", .type = PARAM_ENUM, .choices = trace_arch_names,
     .description = "preset for every setting not given (default fermi)"},
    {.name = "coalesce", .type = PARAM_ENUM, .choices = coalesce_choices,
     .description = "line128 (per 128 bytes of data) or sector32 (per 32-byte sector); "
                    "default from arch"},
    {.name = "schedule", .type = PARAM_ENUM, .choices = schedule_choices,
     .description = "warp scheduling: rr (round-robin, default) or gto (greedy-then-oldest)"},
    {.name = "delay", .type = PARAM_ENUM, .choices = delay_choices,
     .description = "normal (lat_min + |N(0, lat_sigma)|, default) or fixed (lat_min)"},
    {.name = "placement", .type = PARAM_ENUM, .choices = placement_choices,
     .description = "blocks to SMs: rr (round-robin, default) or fill"},
    {.name = "threads_per_block", .type = PARAM_INT, .min = 1, .max = TRACE_MAX_THREADS_PER_BLOCK,
     .description = "block size of the traced kernel; default the trace's, else 256"},
    {.name = "blocks_per_sm", .type = PARAM_INT, .min = 0, .max = TRACE_MAX_BLOCKS_PER_SM,
     .description = "resident blocks per SM; 0 (default) derives it from the limits"},
    {.name = "threads_per_sm", .type = PARAM_INT, .min = 32, .max = TRACE_MAX_THREADS_PER_SM,
     .description = "hardware limit used to derive blocks_per_sm; default from arch"},
    {.name = "max_blocks_per_sm", .type = PARAM_INT, .min = 1, .max = TRACE_MAX_BLOCKS_PER_SM,
     .description = "hardware limit used to derive blocks_per_sm; default from arch"},
    {.name = "sms", .type = PARAM_INT, .min = 1, .max = TRACE_MAX_SMS,
     .description = "SM count; default from arch"},
    {.name = "line", .type = PARAM_INT, .min = 32, .max = TRACE_MAX_LINE, .check = check_line,
     .description = "L1 line size in bytes, a power of two (default 128)"},
    {.name = "mshr", .type = PARAM_INT, .min = 1, .max = TRACE_MAX_MSHR,
     .description = "requests in flight per SM before the LSU stalls; default from arch"},
    {.name = "lat_min", .type = PARAM_INT, .min = 1, .max = TRACE_MAX_LAT_MIN,
     .description = "M: the shortest delay, in requests; default from arch"},
    {.name = "lat_sigma", .type = PARAM_NUMBER, .min = 0, .max = TRACE_MAX_LAT_SIGMA,
     .description = "sigma of the delay's normal part, in requests; default from arch"},
    {.name = "seed", .type = PARAM_STRING, .check = check_seed,
     .description = "random seed, a decimal unsigned 64-bit integer (default 1)"},
};
#define NPARAMS (sizeof trace_sort_params / sizeof trace_sort_params[0])

/* The parameters that are not sorter settings. */
static int is_io_param(const char *name)
{
    static const char *const io[] = {"input", "output", "pc_flags", "in_format", "out_format",
                                     NULL};
    for (const char *const *p = io; *p; p++)
        if (strcmp(*p, name) == 0)
            return 1;
    return 0;
}

const char *const trace_sort_text_params[] = {
    "in-format", "out-format", "arch", "coalesce", "schedule", "delay",
    "placement", "threads-per-block", "blocks-per-sm", "threads-per-sm", "max-blocks-per-sm", "sms",
    "line", "mshr", "lat-min", "lat-sigma", "seed", NULL,
};

/* src with every c replaced by r, into dst; -1 if it does not fit. */
static int respell(const char *src, char c, char r, char *dst, size_t len)
{
    size_t n = strlen(src);
    if (n >= len)
        return -1;
    for (size_t i = 0; i <= n; i++)
        dst[i] = src[i] == c ? r : src[i];
    return 0;
}

static const struct param_spec *find_param(const char *name)
{
    for (size_t i = 0; i < NPARAMS; i++)
        if (strcmp(trace_sort_params[i].name, name) == 0)
            return &trace_sort_params[i];
    return NULL;
}

/* The spec of a text-settable parameter spelt with '-' or '_', or NULL. */
static const struct param_spec *find_text_param(const char *name, char *key, size_t keylen)
{
    char spelt[64];
    if (respell(name, '-', '_', key, keylen) < 0)
        return NULL;
    for (const char *const *p = trace_sort_text_params; *p; p++)
        if (respell(*p, '-', '_', spelt, sizeof spelt) == 0 && strcmp(spelt, key) == 0)
            return find_param(key);
    return NULL;
}

static void known_settings(char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (const char *const *p = trace_sort_text_params; *p && n < len; p++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", *p);
}

/* value as the JSON type of spec; NULL if it is not of that type. */
static json_t *typed_value(const struct param_spec *spec, const char *value)
{
    long long i;
    char *end;
    switch (spec->type) {
    case PARAM_INT:
        return parse_ll(value, LLONG_MIN, LLONG_MAX, &i) == 0 ? json_integer(i) : NULL;
    case PARAM_NUMBER: {
        errno = 0;
        double d = strtod(value, &end);
        int ok = *value && *value != ' ' && !*end && !errno && isfinite(d);
        return ok ? json_real(d) : NULL;
    }
    default:
        return json_string(value);
    }
}

int trace_sort_param_text(json_t *params, const char *name, const char *value, char *err,
                          size_t errlen)
{
    char key[64], known[400];
    const struct param_spec *spec = find_text_param(name, key, sizeof key);
    if (!spec) {
        known_settings(known, sizeof known);
        snprintf(err, errlen, "'%.64s' is not a setting (known: %s)", name, known);
        return -1;
    }
    json_t *v = typed_value(spec, value);
    if (!v) {
        snprintf(err, errlen, "%s: must be %s, not '%.64s'", name,
                 spec->type == PARAM_INT ? "an integer" : "a number", value);
        return -1;
    }
    json_object_set_new(params, key, v);
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
    if (respell(name, '_', '-', field, fieldlen) < 0)
        snprintf(field, fieldlen, "params");
    snprintf(err, errlen, "%s%s", field, why);
    return NULL;
}

/* ---- file names ------------------------------------------------------------- */

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

/* ---- a run ------------------------------------------------------------------- */

struct run {
    const struct job_ctx *ctx;
    char *err;
    size_t errlen;
    char input[PATH_LEN], output[PATH_LEN], part[PATH_LEN + 8], flags_path[PATH_LEN];
    int has_flags, flags_loaded, to_stdout, out_bin, in_open, from_text, committed;
    enum trace_format in_fmt;
    const char *tmpdir;          /* NULL: $TMPDIR */
    struct trace_params p;
    struct trace_pcflags flags;
    struct trace_input in;
};

static int fail(struct run *r, enum job_error_class cls, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct run *r, enum job_error_class cls, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, r->errlen, fmt, ap);
    va_end(ap);
    if (r->ctx->failure)
        r->ctx->failure->cls = cls;
    return -1;
}

/* A bad record of the trace: its line (text formats) and byte offset. */
static int fail_at(struct run *r, const struct trace_err *te)
{
    char where[400];
    trace_err_format(te, where, sizeof where);
    fail(r, JOB_ERROR_INPUT, "%s", where);
    if (r->ctx->failure) {
        r->ctx->failure->line = te->line ? (long long)te->line : -1;
        r->ctx->failure->offset = (long long)te->offset;
    }
    return -1;
}

/* A file parameter: a path, or for the daemon a name inside upload_dir. */
static int resolve_file(struct run *r, const char *what, const char *value, char *out, size_t len)
{
    const char *dir = r->ctx->upload_dir;
    if (dir && !trace_sort_plain_name(value))
        return fail(r, JOB_ERROR_OTHER, "%s: '%.100s' is not a file name of the upload folder", what, value);
    int n = dir ? snprintf(out, len, "%s/%s", dir, value) : snprintf(out, len, "%s", value);
    return n < 0 || (size_t)n >= len ? fail(r, JOB_ERROR_OTHER, "%s: the path is too long", what) : 0;
}

static const char *param_str(const json_t *params, const char *name)
{
    return json_string_value(json_object_get(params, name));
}

static int setup_files(struct run *r, const json_t *params)
{
    const char *input = param_str(params, "input"), *output = param_str(params, "output");
    const char *flags = param_str(params, "pc_flags");
    if (!input)
        return fail(r, JOB_ERROR_PARAMS, "input: is required");
    if (resolve_file(r, "input", input, r->input, sizeof r->input))
        return -1;
    if (output && !r->ctx->upload_dir && strcmp(output, "-") == 0)
        r->to_stdout = 1;
    else if (output && resolve_file(r, "output", output, r->output, sizeof r->output))
        return -1;
    else if (!output && r->ctx->upload_dir && r->ctx->job_id > 0)
        trace_sort_job_output(r->ctx->upload_dir, r->ctx->job_id, r->output, sizeof r->output);
    else if (!output)
        return fail(r, JOB_ERROR_PARAMS, "output: is required");
    snprintf(r->part, sizeof r->part, "%s.part", r->output);
    r->has_flags = flags != NULL;
    return flags ? resolve_file(r, "pc_flags", flags, r->flags_path, sizeof r->flags_path) : 0;
}

/* The sorter's settings: every parameter that is not a file or a format. */
static int setup_settings(struct run *r, const json_t *params)
{
    json_t *settings = json_object();
    const char *key;
    json_t *v;
    char msg[256];
    json_object_foreach((json_t *)params, key, v)
        if (!is_io_param(key))
            json_object_set(settings, key, v);
    trace_params_default(&r->p);
    int rc = trace_params_from_json(&r->p, settings, msg, sizeof msg);
    json_decref(settings);
    return rc ? fail(r, JOB_ERROR_PARAMS, "%s", msg) : 0;
}

static int setup(struct run *r, const json_t *params)
{
    const char *in = param_str(params, "in_format"), *out = param_str(params, "out_format");
    int f = trace_format_parse(in ? in : "auto");
    if (f < 0)
        return fail(r, JOB_ERROR_PARAMS, "in_format: unknown format '%.40s'", in);
    r->in_fmt = (enum trace_format)f;
    r->out_bin = out && strcmp(out, "bin") == 0;
    if (out && !r->out_bin && strcmp(out, "csv") != 0)
        return fail(r, JOB_ERROR_PARAMS, "out_format: must be csv or bin, not '%.40s'", out);
    r->tmpdir = r->ctx->upload_dir;
    return setup_files(r, params) || setup_settings(r, params) ? -1 : 0;
}

/* ---- input ------------------------------------------------------------------- */

static int load_flags(struct run *r)
{
    struct trace_err te = {0};
    r->flags_loaded = 1;
    int rc = trace_pcflags_load(&r->flags, r->flags_path, &te);
    char where[400];
    trace_err_format(&te, where, sizeof where);
    if (rc == TRACE_EINPUT)
        return fail(r, JOB_ERROR_INPUT, "pc flags: %s", where);
    return rc ? fail(r, JOB_ERROR_OTHER, "pc flags: %s", te.msg) : 0;
}

static int detect(struct run *r)
{
    struct trace_err te = {0};
    if (r->in_fmt != TRACE_FMT_AUTO)
        return 0;
    int rc = trace_detect_path(r->input, &r->in_fmt, &te);
    if (rc == TRACE_EINPUT)
        return fail_at(r, &te);
    return rc ? fail(r, JOB_ERROR_OTHER, "input: %s", te.msg) : 0;
}

/* A file in dir that no one else sees: O_TMPFILE, reopened through
 * /proc/self/fd; else a named one (*named) the caller unlinks once opened. */
static int temp_open(const char *dir, char *path, size_t len, int *named)
{
    if (!dir)
        dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    *named = 0;
#ifdef O_TMPFILE
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) {
        snprintf(path, len, "/proc/self/fd/%d", fd);
        return fd;
    }
#endif
    snprintf(path, len, "%s/gpuprobe-requests-XXXXXX", dir);
    *named = 1;
    return mkostemp(path, O_CLOEXEC);
}

/* Writes the spool, thread-major, to a temporary file and opens that. */
static int open_spooled(struct run *r, struct trace_spool *sp, const struct trace_read_stats *st)
{
    char path[PATH_LEN];
    int named;
    int fd = temp_open(r->tmpdir, path, sizeof path, &named);
    int wfd = fd < 0 ? -1 : dup(fd);
    if (wfd < 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return fail(r, JOB_ERROR_OTHER, "temporary file for the thread-major trace: %s", strerror(e));
    }
    struct trace_bin_header h;
    struct trace_err te = {0};
    trace_bin_header_init(&h, TRACE_BIN_REQUESTS, NULL);
    h.threads_per_block = st->threads_per_block > UINT32_MAX ? UINT32_MAX
                                                             : (uint32_t)st->threads_per_block;
    struct trace_bin_writer *w = trace_bin_writer_fd(wfd, 1, &h, &te);
    int rc = w ? trace_spool_finish(sp, w, &te) : -1;
    if (w && trace_bin_writer_close(w, rc ? NULL : &te) && rc == 0)
        rc = -1;
    struct trace_sort_opts o = {.tmpdir = r->tmpdir};
    if (rc == 0 && trace_input_open(&r->in, path, &o, &te) == 0)
        r->in_open = 1;
    if (named)
        unlink(path);
    close(fd); /* the mapping keeps the file */
    return r->in_open ? 0 : fail(r, JOB_ERROR_OTHER, "spooling the trace: %s", te.msg);
}

/* Text (or flagged binary) input: reader -> spool -> thread-major file. */
static int open_through_spool(struct run *r)
{
    struct trace_err te = {0};
    struct trace_read_stats st;
    struct trace_spool *sp = trace_spool_new(r->tmpdir, 0, &te);
    if (!sp)
        return fail(r, JOB_ERROR_OTHER, "%s", te.msg);
    r->from_text = 1;
    int rc = trace_read_path(r->input, r->in_fmt, r->has_flags ? &r->flags : NULL,
                             trace_spool_add, sp, &st, NULL, &te);
    if (rc == TRACE_EINPUT)
        rc = fail_at(r, &te);
    else if (rc < 0)
        rc = fail(r, JOB_ERROR_OTHER, "input: %s", te.msg);
    else /* rc > 0: the spool failed, and finishing says why */
        rc = open_spooled(r, sp, &st);
    trace_spool_free(sp);
    return rc;
}

static int open_input(struct run *r)
{
    if ((r->has_flags && load_flags(r)) || detect(r))
        return -1;
    if (r->in_fmt != TRACE_FMT_BIN || r->has_flags)
        return open_through_spool(r);
    struct trace_err te = {0};
    struct trace_sort_opts o = {.tmpdir = r->tmpdir};
    int rc = trace_input_open(&r->in, r->input, &o, &te);
    r->in_open = rc == 0;
    if (rc == TRACE_SORT_EINPUT)
        return fail_at(r, &te);
    return rc ? fail(r, JOB_ERROR_OTHER, "input: %s", te.msg) : 0;
}

/* ---- output ------------------------------------------------------------------ */

struct out {
    struct trace_bin_writer *bw; /* bin */
    struct trace_wbuf wb;        /* csv */
    char *buf;
    int fd;
    int write_errno;
};

static int fd_flush(void *ctx, const char *data, size_t n)
{
    struct out *o = ctx;
    while (n) {
        ssize_t w = write(o->fd, data, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            o->write_errno = w < 0 ? errno : EIO;
            return -1;
        }
        data += w;
        n -= (size_t)w;
    }
    return 0;
}

static int out_sink(void *ctx, const struct trace_out *recs, size_t n)
{
    struct out *o = ctx;
    return o->bw ? trace_bin_write_out(o->bw, recs, n) : trace_csv_out_sink(&o->wb, recs, n);
}

static int open_output(struct run *r, struct out *o)
{
    int fd = r->to_stdout ? dup(STDOUT_FILENO)
                          : open(r->part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return fail(r, JOB_ERROR_OTHER, "output %s: %s", r->to_stdout ? "(standard output)" : r->part,
                    strerror(errno));
    if (r->out_bin) {
        struct trace_bin_header h;
        struct trace_err te = {0};
        trace_bin_header_init(&h, TRACE_BIN_SORTED, &r->p);
        o->bw = trace_bin_writer_fd(fd, 1, &h, &te);
        return o->bw ? 0 : fail(r, JOB_ERROR_OTHER, "output: %s", te.msg);
    }
    o->fd = fd;
    o->buf = malloc(CSV_BUF_BYTES);
    if (!o->buf)
        return fail(r, JOB_ERROR_OTHER, "out of memory for the output buffer");
    trace_wbuf_init(&o->wb, o->buf, CSV_BUF_BYTES, fd_flush, o);
    trace_csv_write_out_header(&o->wb);
    return 0;
}

/* Flushes and closes; 0, or -1 with the reason in msg. */
static int close_output(struct out *o, uint64_t records_in, char *msg, size_t len)
{
    int rc = 0;
    if (o->bw) {
        struct trace_err te = {0};
        trace_bin_writer_set_input(o->bw, records_in);
        rc = trace_bin_writer_close(o->bw, &te);
        snprintf(msg, len, "%s", te.msg);
        o->bw = NULL;
    } else if (o->fd >= 0) {
        rc = o->buf ? trace_wbuf_flush(&o->wb) : 0;
        if (close(o->fd) && !rc) {
            o->write_errno = errno;
            rc = -1;
        }
        snprintf(msg, len, "%s", strerror(o->write_errno ? o->write_errno : EIO));
        o->fd = -1;
    }
    free(o->buf);
    o->buf = NULL;
    return rc;
}

/* ---- sorting ----------------------------------------------------------------- */

static json_t *result_doc(const struct run *r, const struct trace_summary *sum)
{
    json_t *j = trace_summary_to_json(sum);
    struct stat st;
    if (!j)
        return NULL;
    json_object_set_new(j, "input_format", json_string(trace_format_name(r->in_fmt)));
    json_object_set_new(j, "output_format", json_string(r->out_bin ? "bin" : "csv"));
    json_object_set_new(j, "output_bytes", !r->to_stdout && stat(r->output, &st) == 0
                                               ? json_integer((json_int_t)st.st_size)
                                               : json_null());
    return j;
}

/* The sort's outcome: 0 when the output is complete and in place, else a
 * failure; rc is trace_sort_input's. */
static int sort_outcome(struct run *r, int rc, const struct trace_err *te, int closed,
                        const char *close_msg)
{
    if (rc == TRACE_SORT_EINPUT && (r->from_text || r->in.spooled))
        return fail(r, JOB_ERROR_INPUT, "%s", te->msg); /* offsets would be of a temporary file */
    if (rc == TRACE_SORT_EINPUT)
        return fail_at(r, te);
    if (rc < 0)
        return fail(r, JOB_ERROR_OTHER, "sorting: %s", te->msg);
    if (rc > 0 || closed)
        return fail(r, JOB_ERROR_OTHER, "writing %s: %s", r->to_stdout ? "the output" : r->part, close_msg);
    if (!r->to_stdout && rename(r->part, r->output))
        return fail(r, JOB_ERROR_OTHER, "renaming %s: %s", r->part, strerror(errno));
    r->committed = 1;
    return 0;
}

/* After a failure: no partial (or orphaned) output stays. */
static void discard(const struct run *r)
{
    if (r->to_stdout)
        return;
    unlink(r->part);
    if (r->committed)
        unlink(r->output);
}

static json_t *execute(struct run *r, struct trace_summary *sum)
{
    char msg[256];
    if (open_input(r))
        return NULL;
    trace_params_resolve(&r->p, r->in.bin.h.threads_per_block);
    if (trace_params_validate(&r->p, msg, sizeof msg)) {
        fail(r, JOB_ERROR_PARAMS, "%s", msg);
        return NULL;
    }
    struct out o = {.fd = -1};
    if (open_output(r, &o)) {
        close_output(&o, 0, msg, sizeof msg);
        discard(r);
        return NULL;
    }
    struct trace_err te = {0};
    struct trace_sort_opts so = {.tmpdir = r->tmpdir};
    int rc = trace_sort_input(&r->in, &r->p, &so, out_sink, &o, sum, &te);
    int closed = close_output(&o, sum->records_in, msg, sizeof msg);
    json_t *res = sort_outcome(r, rc, &te, closed, msg) ? NULL : result_doc(r, sum);
    if (!res && !r->err[0])
        fail(r, JOB_ERROR_OTHER, "out of memory for the summary");
    if (!res)
        discard(r);
    return res;
}

json_t *trace_sort_run(const struct job_ctx *ctx, const json_t *params, struct trace_summary *sum,
                       char *err, size_t errlen)
{
    struct trace_summary local;
    struct trace_summary *s = sum ? sum : &local;
    struct run *r = calloc(1, sizeof *r);
    memset(s, 0, sizeof *s);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    *r = (struct run){.ctx = ctx, .err = err, .errlen = errlen};
    err[0] = '\0';
    json_t *res = setup(r, params) == 0 ? execute(r, s) : NULL;
    if (r->in_open)
        trace_input_close(&r->in);
    if (r->flags_loaded)
        trace_pcflags_free(&r->flags);
    free(r);
    if (!res || !sum) {
        trace_summary_free(s);
        memset(s, 0, sizeof *s);
    }
    return res;
}

/* ---- the descriptor ----------------------------------------------------------- */

static json_t *run_kind(const struct job_ctx *ctx, const json_t *params, char *err, size_t errlen)
{
    return trace_sort_run(ctx, params, NULL, err, errlen);
}

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
    char full[PATH_LEN + 16];
    if (snprintf(full, sizeof full, "%s%s", path, suffix) < (int)sizeof full)
        unlink(full);
}

/* Removes the upload_dir file named by a stored parameter (a plain name only). */
static void remove_named(const char *dir, const char *name, const char *suffix)
{
    char path[PATH_LEN];
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
    char path[PATH_LEN];
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
    .params = trace_sort_params,
    .nparams = NPARAMS,
    .run = run_kind,
    .check_result = check_result,
    .finished = finished,
};
