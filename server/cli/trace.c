/*
 * `gpuprobe trace sort|convert`: trace files on the command line, no daemon.
 *
 * DESIGN
 * `sort` is a thin driver over the trace-sort job kind (server/jobs/kind_trace.c):
 * the options become the kind's parameters (the same names as the API's
 * query arguments), go through the kind's validator, and trace_sort_run
 * does the work in this process, exactly as a daemon worker would; the
 * summary it hands back is printed on stderr (trace_summary_print) and/or
 * written as JSON. `convert` rewrites a trace in another format with the
 * library directly: requests in any input format to CSV or binary requests
 * (trace_read_path into a CSV or binary writer, in input order), or a
 * sorted binary file to CSV (sm,seq,...) or binary. Output goes to OUT
 * (removed again if the command fails) or, with -o -, to stdout.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/cli/cli.h"
#include "server/jobs/kind_trace.h"
#include "trace/binfmt.h"
#include "trace/csv.h"
#include "trace/readfile.h"

static const char usage[] =
    "usage: gpuprobe trace sort IN -o OUT [options]\n"
    "       gpuprobe trace convert IN -o OUT [--in-format F] [--out-format csv|bin]\n"
    "                              [--pc-flags FILE]\n"
    "sort     orders the trace's memory requests as they reach each SM's L1\n"
    "         (docs/trace-sort.md) and writes them as sm,seq,tid,pc,addr,width,dep\n"
    "convert  rewrites a trace in another format: requests (any input format) to\n"
    "         CSV (tid,pc,addr,width,dep) or binary requests, in input order; or a\n"
    "         sorted binary file to CSV (sm,seq,...) or binary\n"
    "options:\n"
    "  -o, --output OUT        the file to write ('-': standard output); sort writes\n"
    "                          OUT.part and renames it, and no OUT is left on failure\n"
    "  --in-format F           auto (default: told from the content: the binary magic,\n"
    "                          the CSV header line, MEMTRACE: lines, or Accel-Sim's\n"
    "                          -grid dim/#BEGIN_TB lines), csv, bin, nvbit, accelsim\n"
    "  --out-format F          csv (default) or bin (docs/trace-format.md)\n"
    "  --pc-flags FILE         per-PC dependency flags (pc,dep lines) that replace the\n"
    "                          input's\n"
    "sort only (defaults: the arch preset, see docs/trace-sort.md, \"Parameters\"):\n"
    "  --arch A                fermi (default), kepler, volta, ampere or hopper: the\n"
    "                          preset for every setting not given\n"
    "  --coalesce C            line128 or sector32\n"
    "  --schedule S            rr (round-robin, default) or gto (greedy-then-oldest)\n"
    "  --delay D               normal (default) or fixed\n"
    "  --placement P           blocks to SMs: rr (default) or fill\n"
    "  --threads-per-block N   block size of the traced kernel (default: the trace's,\n"
    "                          else 256)\n"
    "  --blocks-per-sm N       resident blocks per SM (0, the default: derived)\n"
    "  --threads-per-sm N      limits used to derive --blocks-per-sm\n"
    "  --max-blocks-per-sm N\n"
    "  --sms N                 SM count\n"
    "  --line N                L1 line in bytes, a power of two (default 128)\n"
    "  --mshr N                requests in flight per SM before the LSU stalls\n"
    "  --lat-min M             shortest delay, in requests\n"
    "  --lat-sigma S           sigma of the delay's normal part, in requests\n"
    "  --seed N                random seed (default 1)\n"
    "  --summary-json FILE     also write the summary as JSON ('-': standard output)\n"
    "  --quiet                 no summary on stderr\n"
    "The summary: requests in and out, coalescing ratio, instructions, blocks,\n"
    "warps, ticks, stalls (MSHR-full and all-blocked ticks, dependency waits, most\n"
    "in flight) in total and per SM; its JSON is the result document of a\n"
    "trace-sort job.\n"
    "Exit status: 0 done; 1 the input is bad (the reason names the line and byte\n"
    "offset of the first bad record) or the output cannot be written; 2 bad usage.\n";

#define NTEXT 32
#define CSV_BUF_BYTES ((size_t)256 << 10)

struct trace_opts {
    const char *cmd, *input, *output, *pc_flags, *summary_json;
    int quiet;
    json_t *settings; /* --NAME VALUE as the kind's parameters */
    int sort_only;    /* a sort setting was given (refused by convert) */
};

/* ---- arguments ----------------------------------------------------------------- */

/* The long options: the fixed ones, then one per text setting (val 256 + i). */
static void build_options(struct option *opts, size_t n)
{
    static const struct option fixed[] = {
        {"output", required_argument, NULL, 'o'}, {"pc-flags", required_argument, NULL, 'P'},
        {"summary-json", required_argument, NULL, 'S'}, {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'}};
    size_t k = 0;
    for (; k < sizeof fixed / sizeof fixed[0]; k++)
        opts[k] = fixed[k];
    for (size_t i = 0; trace_sort_text_params[i] && k + 1 < n; i++, k++)
        opts[k] = (struct option){trace_sort_text_params[i], required_argument, NULL, 256 + (int)i};
    opts[k] = (struct option){0, 0, 0, 0};
}

static int take_setting(struct trace_opts *o, int i, const char *value)
{
    char err[512];
    const char *name = trace_sort_text_params[i];
    if (trace_sort_param_text(o->settings, name, value, err, sizeof err) < 0)
        return cli_fail("trace", 2, "--%s", err);
    if (strcmp(name, "in-format") != 0 && strcmp(name, "out-format") != 0)
        o->sort_only = 1;
    return 0;
}

static int take_positionals(struct trace_opts *o, int argc, char **argv)
{
    if (optind >= argc)
        return cli_fail("trace", 2, "name a command: sort or convert (see gpuprobe trace --help)");
    o->cmd = argv[optind++];
    if (strcmp(o->cmd, "sort") != 0 && strcmp(o->cmd, "convert") != 0)
        return cli_fail("trace", 2, "unknown command '%s' (sort or convert)", o->cmd);
    if (optind >= argc)
        return cli_fail("trace", 2, "name the input trace (gpuprobe trace %s IN -o OUT)", o->cmd);
    o->input = argv[optind++];
    if (optind < argc)
        return cli_fail("trace", 2, "unexpected argument '%s'", argv[optind]);
    if (!o->output)
        return cli_fail("trace", 2, "-o OUT is required ('-' for standard output)");
    return 0;
}

static int parse_args(int argc, char **argv, struct trace_opts *o, int *done)
{
    struct option opts[NTEXT];
    int c, rc;
    build_options(opts, NTEXT);
    opterr = 0; /* our own one-line message instead of getopt's */
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': o->output = optarg; break;
        case 'P': o->pc_flags = optarg; break;
        case 'S': o->summary_json = optarg; break;
        case 'q': o->quiet = 1; break;
        case 'h': fputs(usage, stdout); *done = 1; return 0;
        default:
            if (c < 256)
                return cli_unknown_option("trace", argc, argv);
            if ((rc = take_setting(o, c - 256, optarg)) != 0)
                return rc;
        }
    }
    if ((rc = take_positionals(o, argc, argv)) != 0)
        return rc;
    if (strcmp(o->cmd, "convert") == 0 && (o->sort_only || o->summary_json))
        return cli_fail("trace", 2, "convert takes only -o, --in-format, --out-format and "
                                    "--pc-flags (the sort settings are for trace sort)");
    if (o->summary_json && strcmp(o->summary_json, "-") == 0 && strcmp(o->output, "-") == 0)
        return cli_fail("trace", 2, "the output and the summary cannot both go to stdout");
    return 0;
}

/* ---- sort ------------------------------------------------------------------------ */

static int write_summary(const json_t *res, const char *path)
{
    int to_stdout = strcmp(path, "-") == 0;
    FILE *f = to_stdout ? stdout : fopen(path, "w");
    if (!f)
        return -1;
    int rc = json_dumpf(res, f, JSON_INDENT(2) | JSON_REAL_PRECISION(12)) == 0 &&
                     fputc('\n', f) != EOF
                 ? 0
                 : -1;
    if ((to_stdout ? fflush(f) : fclose(f)) != 0)
        rc = -1;
    return rc;
}

static int run_sort(const struct trace_opts *o)
{
    char err[1024], field[64];
    json_object_set_new(o->settings, "input", json_string(o->input));
    json_object_set_new(o->settings, "output", json_string(o->output));
    if (o->pc_flags)
        json_object_set_new(o->settings, "pc_flags", json_string(o->pc_flags));
    json_t *params = trace_sort_params_check(o->settings, err, sizeof err, field, sizeof field);
    if (!params)
        return cli_fail("trace", 2, "--%s", err);
    struct job_failure failure = JOB_FAILURE_NONE;
    struct job_ctx ctx = {.failure = &failure};
    struct trace_summary sum;
    json_t *res = trace_sort_run(&ctx, params, &sum, err, sizeof err);
    int status = 0;
    if (!res && failure.cls == JOB_ERROR_INPUT)
        status = cli_fail("trace", 1, "%s: %s", o->input, err);
    else if (!res)
        status = cli_fail("trace", 1, "%s", err);
    if (res && !o->quiet)
        trace_summary_print(&sum, stderr);
    if (res && o->summary_json && write_summary(res, o->summary_json) < 0)
        status = cli_fail("trace", 1, "cannot write the summary to %s", o->summary_json);
    trace_summary_free(&sum);
    json_decref(res);
    json_decref(params);
    return status;
}

/* ---- convert --------------------------------------------------------------------- */

struct conv {
    const struct trace_opts *o;
    enum trace_format fmt;
    int out_bin;
    struct trace_pcflags flags;
    int has_flags;
    int fd;                   /* the output, until a writer owns it */
    char msg[600];            /* why it failed */
};

/* Records why converting failed: "label: where", where being err's position
 * and message (positioned) or its message alone. */
static int conv_fail(struct conv *c, const char *label, const struct trace_err *te,
                     int positioned)
{
    char where[400] = "";
    if (te && positioned)
        trace_err_format(te, where, sizeof where);
    else if (te)
        snprintf(where, sizeof where, "%s", te->msg);
    snprintf(c->msg, sizeof c->msg, "%s%s%s", label, where[0] ? ": " : "", where);
    return -1;
}

/* The outcome of a reader feeding a writer; 0 if all went. */
static int read_outcome(struct conv *c, int rc, const struct trace_err *te)
{
    if (rc == TRACE_EINPUT)
        return conv_fail(c, c->o->input, te, 1);
    if (rc < 0)
        return conv_fail(c, c->o->input, te, 0);
    return rc ? conv_fail(c, "writing the output failed", NULL, 0) : 0;
}

static int csv_out(struct conv *c, const struct trace_bin *sorted)
{
    struct trace_err te = {0};
    struct trace_wbuf wb;
    char *buf = malloc(CSV_BUF_BYTES);
    FILE *f = buf ? fdopen(c->fd, "w") : NULL;
    if (!f) {
        free(buf);
        return conv_fail(c, "out of memory", NULL, 0);
    }
    c->fd = -1;
    trace_wbuf_init_file(&wb, buf, CSV_BUF_BYTES, f);
    int rc;
    if (sorted) {
        trace_csv_write_out_header(&wb);
        rc = read_outcome(c, trace_bin_read_out(sorted, trace_csv_out_sink, &wb, &te), &te);
    } else {
        trace_csv_write_in_header(&wb);
        rc = read_outcome(c, trace_read_path(c->o->input, c->fmt, c->has_flags ? &c->flags : NULL,
                                             trace_csv_sink, &wb, NULL, NULL, &te),
                          &te);
    }
    int flushed = trace_wbuf_flush(&wb), closed = fclose(f);
    if ((flushed || closed) && rc == 0)
        rc = conv_fail(c, "writing the output failed", NULL, 0);
    free(buf);
    return rc;
}

static int bin_out(struct conv *c, const struct trace_bin *sorted)
{
    struct trace_err te = {0};
    struct trace_read_stats st = {0};
    struct trace_bin_header h;
    if (sorted)
        h = sorted->h;
    else
        trace_bin_header_init(&h, TRACE_BIN_REQUESTS, NULL);
    struct trace_bin_writer *w = trace_bin_writer_fd(c->fd, 1, &h, &te);
    c->fd = -1;
    if (!w)
        return conv_fail(c, "output", &te, 0);
    int rc;
    if (sorted) {
        trace_bin_writer_set_input(w, sorted->h.input_records);
        rc = read_outcome(c, trace_bin_read_out(sorted, trace_bin_write_out, w, &te), &te);
    } else {
        rc = read_outcome(c, trace_read_path(c->o->input, c->fmt, c->has_flags ? &c->flags : NULL,
                                             trace_bin_write_rec, w, &st, NULL, &te),
                          &te);
        if (st.threads_per_block && st.threads_per_block <= UINT32_MAX)
            trace_bin_writer_set_threads_per_block(w, (uint32_t)st.threads_per_block);
    }
    if (trace_bin_writer_close(w, &te) && rc == 0)
        rc = conv_fail(c, "output", &te, 0);
    return rc;
}

/* Opens a sorted binary input (*sorted = 1), or leaves a requests file for
 * trace_read_path. */
static int open_sorted(struct conv *c, struct trace_bin *b, int *sorted)
{
    struct trace_err te = {0};
    *sorted = 0;
    if (c->fmt != TRACE_FMT_BIN)
        return 0;
    if (trace_bin_open(c->o->input, b, &te))
        return conv_fail(c, c->o->input, &te, 1);
    if (b->h.kind != TRACE_BIN_SORTED) {
        trace_bin_close(b);
        return 0;
    }
    *sorted = 1;
    return c->has_flags ? conv_fail(c, "--pc-flags applies to request traces, not to a sorted "
                                       "file", NULL, 0)
                        : 0;
}

static int convert_input(struct conv *c)
{
    struct trace_err te = {0};
    struct trace_bin b;
    int sorted = 0, rc;
    if (c->o->pc_flags) {
        c->has_flags = 1;
        rc = trace_pcflags_load(&c->flags, c->o->pc_flags, &te);
        if (rc)
            return conv_fail(c, c->o->pc_flags, &te, rc == TRACE_EINPUT);
    }
    if (c->fmt == TRACE_FMT_AUTO && (rc = trace_detect_path(c->o->input, &c->fmt, &te)) != 0)
        return conv_fail(c, c->o->input, &te, rc == TRACE_EINPUT);
    if (open_sorted(c, &b, &sorted))
        return -1;
    rc = c->out_bin ? bin_out(c, sorted ? &b : NULL) : csv_out(c, sorted ? &b : NULL);
    if (sorted)
        trace_bin_close(&b);
    return rc;
}

static int run_convert(const struct trace_opts *o)
{
    const char *in = json_string_value(json_object_get(o->settings, "in_format"));
    const char *out = json_string_value(json_object_get(o->settings, "out_format"));
    struct conv c = {.o = o, .fd = -1};
    int f = trace_format_parse(in ? in : "auto");
    if (f < 0)
        return cli_fail("trace", 2, "--in-format must be auto, csv, bin, nvbit or accelsim");
    if (out && strcmp(out, "csv") != 0 && strcmp(out, "bin") != 0)
        return cli_fail("trace", 2, "--out-format must be csv or bin");
    c.fmt = (enum trace_format)f;
    c.out_bin = out && strcmp(out, "bin") == 0;
    int to_stdout = strcmp(o->output, "-") == 0;
    c.fd = to_stdout ? dup(STDOUT_FILENO)
                     : open(o->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (c.fd < 0)
        return cli_fail("trace", 1, "%s: %s", o->output, strerror(errno));
    int rc = convert_input(&c);
    if (c.fd >= 0)
        close(c.fd);
    if (c.has_flags)
        trace_pcflags_free(&c.flags);
    if (rc && !to_stdout)
        unlink(o->output);
    return rc ? cli_fail("trace", 1, "%s", c.msg) : 0;
}

int cmd_trace(int argc, char **argv)
{
    struct trace_opts o = {.settings = json_object()};
    int done = 0, status = parse_args(argc, argv, &o, &done);
    if (status == 0 && !done)
        status = strcmp(o.cmd, "sort") == 0 ? run_sort(&o) : run_convert(&o);
    json_decref(o.settings);
    return status;
}
