/*
 * `gpuprobe trace sort|convert`: trace files on the command line, no daemon.
 *
 * DESIGN
 * Both commands are thin drivers over the trace pipeline
 * (trace/pipeline.h), the same code the daemon's trace-sort job runs: the
 * options become a struct trace_params through trace/params.c's settings
 * table (one --NAME option per setting, and the help text, derived from it)
 * and the files a struct trace_files. `sort` prints the summary on stderr
 * (trace_summary_print) and/or writes the result document as JSON;
 * `convert` takes only the settings that say how the trace is read and
 * written. Output goes to OUT (written as OUT.part and renamed, never left
 * half-written) or, with -o -, to stdout.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/cli/cli.h"
#include "server/cli/trace_sort_device.h"
#include "server/cli/trace_sort_l1.h"
#include "trace/params.h"
#include "trace/pipeline.h"
#include "util/outfile.h"

#define NOPTS (5 + TRACE_SETTING_COUNT + TRACE_SORT_L1_NOPTS + TRACE_SORT_DEVICE_NOPTS + 1)
#define HELP_COLUMN 26
#define HELP_WIDTH 79

static const char usage_head[] =
    "usage: gpuprobe trace sort IN -o OUT [options]\n"
    "       gpuprobe trace convert IN -o OUT [--in-format F] [--out-format F] [--pc-flags FILE]\n"
    "       gpuprobe trace synth --pattern NAME --size N[,M,K] -o OUT (see trace synth --help)\n"
    "       gpuprobe trace cache SORTED [options]   (L1/L2 hit rates: trace cache --help)\n"
    "       gpuprobe trace capture --ptx FILE ... (a kernel's trace on a GPU: trace capture --help)\n"
    "sort     orders the trace's memory requests as they reach each SM's L1\n"
    "         (docs/trace-sort.md) and writes them as sm,seq,tid,pc,addr,width,dep,op\n"
    "convert  rewrites a trace in another format: requests (any input format) to\n"
    "         CSV (tid,pc,addr,width,dep,op) or binary requests, in input order; or a\n"
    "         sorted binary file to CSV (sm,seq,...) or binary\n"
    "options:\n"
    "  -o, --output OUT        the file to write ('-': standard output), written as\n"
    "                          OUT.part and renamed (a device such as /dev/null is\n"
    "                          written in place); no OUT is left on failure\n"
    "  --pc-flags FILE         per-PC dependency flags (pc,dep lines) that replace the\n"
    "                          input's\n"
    "  --summary-json FILE     sort: also write the summary as JSON ('-': standard output)\n"
    "  --quiet                 sort: no summary on stderr\n"
    "  --device UUID           sort: for this measured GPU, from its results in --db:\n"
    "                          its SM count, threads and blocks per SM, and the order\n"
    "                          its memory probe saw blocks dealt to SMs (placement\n"
    "                          dealt); what is given explicitly wins\n"
    "  --db PATH               the database holding the device's results\n"
    "settings (convert takes only the two formats; the presets: docs/trace-sort.md):\n";

static const char usage_tail[] =
    "The summary: requests in and out, coalescing ratio, instructions, blocks,\n"
    "warps, ticks, stalls (MSHR-full and all-blocked ticks, dependency waits, most\n"
    "in flight) in total and per SM; its JSON is the result document of a\n"
    "trace-sort job.\n"
    "Exit status: 0 done; 1 the input is bad (the reason names the line and byte\n"
    "offset of the first bad record) or the output cannot be written; 2 bad usage.\n";

struct trace_opts {
    const char *cmd, *input, *output, *pc_flags, *summary_json;
    int quiet;
    struct trace_params p;
    int sort_only;    /* a setting convert does not take was given */
    struct trace_sort_l1 l1;   /* the cache feedback options (sort only) */
    struct trace_sort_device dev; /* --device and --db (sort only) */
};

/* Every trace command, the one list that dispatching and the refusal of an
 * unknown one read. run NULL: sort and convert, which share the settings
 * table and are parsed here; the others have options of their own, each
 * command in its own file. */
static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
} commands[] = {
    {"sort", NULL},
    {"convert", NULL},
    {"synth", cmd_trace_synth},
    {"cache", cmd_trace_cache},
    {"capture", cmd_trace_capture},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

/* The index in commands of the one called name; -1 when there is none. */
static int command_index(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(name, commands[i].name) == 0)
            return (int)i;
    return -1;
}

/* "sort, convert, ...": every command's name, for a refusal. */
static const char *command_names(void)
{
    static char names[128];
    size_t n = 0;
    for (size_t i = 0; i < NCOMMANDS && n < sizeof names; i++)
        n += (size_t)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "", commands[i].name);
    return names;
}

/* ---- usage ------------------------------------------------------------------------ */

/* "--threads-per-block N": the option as users write it, with a placeholder. */
static void option_text(const struct trace_setting *s, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "--");
    for (const char *c = s->name; *c && n + 1 < len; c++)
        buf[n++] = *c == '_' ? '-' : *c;
    char value = s->type == TRACE_SETTING_CHOICE ? (char)toupper((unsigned char)s->name[0])
                 : s->type == TRACE_SETTING_NUMBER ? 'X'
                                                   : 'N';
    snprintf(buf + n, len - n, " %c", value);
}

/* Prints text from column HELP_COLUMN, wrapped at HELP_WIDTH. */
static void print_wrapped(FILE *f, int col, const char *text)
{
    while (*text) {
        int room = HELP_WIDTH - HELP_COLUMN, n = (int)strlen(text);
        if (n > room) {
            n = room;
            while (n > 0 && text[n] != ' ')
                n--;
            if (n == 0)
                n = room;
        }
        fprintf(f, "%*s%.*s\n", col < HELP_COLUMN ? HELP_COLUMN - col : 0, "", n, text);
        text += n;
        while (*text == ' ')
            text++;
        col = 0;
    }
}

void cli_trace_usage(FILE *f)
{
    fputs(usage_head, f);
    for (size_t i = 0; i < TRACE_SETTING_COUNT; i++) {
        const struct trace_setting *s = trace_setting_at(i);
        char opt[64], bounds[160], text[700];
        option_text(s, opt, sizeof opt);
        trace_setting_bounds(s, bounds, sizeof bounds);
        snprintf(text, sizeof text, "%s (default %s; %s)", s->meaning, s->default_text, bounds);
        int col = fprintf(f, "  %s", opt);
        if (col + 1 >= HELP_COLUMN) {
            fputc('\n', f);
            col = 0;
        }
        print_wrapped(f, col, text);
    }
    trace_sort_l1_usage(f);
    fputs(usage_tail, f);
}

/* ---- arguments ----------------------------------------------------------------- */

/* The long options: the fixed ones, then one per setting (val 256 + i),
 * then the cache feedback ones (trace_sort_l1.h) and the device's
 * (trace_sort_device.h). */
static void build_options(struct option *opts, char names[][64])
{
    static const struct option fixed[] = {
        {"output", required_argument, NULL, 'o'}, {"pc-flags", required_argument, NULL, 'P'},
        {"summary-json", required_argument, NULL, 'S'}, {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'}};
    size_t k = 0;
    for (; k < sizeof fixed / sizeof fixed[0]; k++)
        opts[k] = fixed[k];
    for (size_t i = 0; i < TRACE_SETTING_COUNT; i++, k++) {
        option_text(trace_setting_at(i), names[i], 64);
        *strchr(names[i], ' ') = '\0';
        opts[k] = (struct option){names[i] + 2, required_argument, NULL, 256 + (int)i};
    }
    for (size_t i = 0; i < TRACE_SORT_L1_NOPTS; i++, k++)
        opts[k] = trace_sort_l1_options[i];
    for (size_t i = 0; i < TRACE_SORT_DEVICE_NOPTS; i++, k++)
        opts[k] = trace_sort_device_options[i];
    opts[k] = (struct option){0, 0, 0, 0};
}

static int take_setting(struct trace_opts *o, int i, const char *value)
{
    char why[300], opt[64];
    const struct trace_setting *s = trace_setting_at((size_t)i);
    option_text(s, opt, sizeof opt);
    *strchr(opt, ' ') = '\0';
    if (trace_setting_apply(&o->p, s, value, why, sizeof why) < 0)
        return cli_fail("trace", 2, "%s: %s", opt, why);
    if (!s->io)
        o->sort_only = 1;
    return 0;
}

static int take_positionals(struct trace_opts *o, int argc, char **argv)
{
    if (optind >= argc)
        return cli_fail("trace", 2, "name a command: one of %s (see gpuprobe trace --help)",
                        command_names());
    o->cmd = argv[optind++];
    int i = command_index(o->cmd);
    if (i < 0)
        return cli_fail("trace", 2, "unknown command '%s' (one of %s)", o->cmd, command_names());
    if (commands[i].run) /* reached only when an option came before its name */
        return cli_fail("trace", 2, "trace %s takes its options after its name: gpuprobe trace %s"
                        " [options] (see gpuprobe trace %s --help)", o->cmd, o->cmd, o->cmd);
    if (optind >= argc)
        return cli_fail("trace", 2, "name the input trace (gpuprobe trace %s IN -o OUT)", o->cmd);
    o->input = argv[optind++];
    if (optind < argc)
        return cli_fail("trace", 2, "unexpected argument '%s'", argv[optind]);
    if (!o->output || !*o->output)
        return cli_fail("trace", 2, "-o OUT is required ('-' for standard output)");
    return 0;
}

enum trace_out_format cli_trace_out_format(const char *path, enum trace_out_format dflt)
{
    size_t n = strlen(path);
    if (n > 4 && strcmp(path + n - 4, ".bin") == 0)
        return TRACE_OUT_BIN;
    if (n > 4 && strcmp(path + n - 4, ".csv") == 0)
        return TRACE_OUT_CSV;
    return dflt;
}

/* With no --out-format, OUT's name says the format (cli_trace_out_format):
 * `trace sort in.bin -o out.bin` wrote CSV text into a file named .bin. */
static void default_out_format(struct trace_opts *o)
{
    if (!(o->p.set & TRACE_P_OUT_FORMAT))
        o->p.out_format = cli_trace_out_format(o->output, o->p.out_format);
}

static int parse_args(int argc, char **argv, struct trace_opts *o, int *done)
{
    struct option opts[NOPTS];
    char names[TRACE_SETTING_COUNT][64];
    int c, rc;
    build_options(opts, names);
    opterr = 0; /* our own one-line message instead of getopt's */
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': o->output = optarg; break;
        case 'P': o->pc_flags = optarg; break;
        case 'S': o->summary_json = optarg; break;
        case 'q': o->quiet = 1; break;
        case 'h': cli_trace_usage(stdout); *done = 1; return 0;
        default:
            if (c >= TRACE_SORT_DEVICE_OPT) {
                trace_sort_device_take(&o->dev, c, optarg);
                break;
            }
            if (c >= TRACE_SORT_L1_OPT) {
                trace_sort_l1_take(&o->l1, c, optarg);
                break;
            }
            if (c < 256)
                return cli_unknown_option("trace", argc, argv);
            if ((rc = take_setting(o, c - 256, optarg)) != 0)
                return rc;
        }
    }
    if ((rc = take_positionals(o, argc, argv)) != 0)
        return rc;
    if (strcmp(o->cmd, "convert") == 0 &&
        (o->sort_only || o->summary_json || o->l1.given || o->dev.uuid || o->dev.db))
        return cli_fail("trace", 2, "convert takes only -o, --in-format, --out-format and "
                                    "--pc-flags (the sort settings are for trace sort)");
    default_out_format(o);
    if (o->summary_json && !*o->summary_json)
        return cli_fail("trace", 2, "--summary-json needs a FILE ('-' for standard output)");
    if (o->summary_json && strcmp(o->summary_json, o->output) == 0)
        return cli_fail("trace", 2, "the output and the summary cannot both go to %s",
                        strcmp(o->output, "-") == 0 ? "stdout" : o->output);
    return 0;
}

/* ---- running --------------------------------------------------------------------- */

/* The summary's file is opened before the sort (util/outfile.h: whole or
 * nothing, a device in place, "-" standard output), so that a summary that
 * cannot be written fails the command before it writes OUT. */
static int write_summary(const json_t *res, struct outfile *so, int fd, char *err, size_t errlen)
{
    int rc = json_dumpfd(res, fd, JSON_INDENT(2) | JSON_REAL_PRECISION(12)) == 0 &&
                     write(fd, "\n", 1) == 1
                 ? 0
                 : -1;
    if (rc < 0)
        snprintf(err, errlen, "%s: %s", outfile_name(so), strerror(errno));
    if (close(fd) < 0 && rc == 0) {
        snprintf(err, errlen, "%s: %s", outfile_name(so), strerror(errno));
        rc = -1;
    }
    if (rc == 0 && outfile_commit(so, err, errlen) < 0)
        rc = -1;
    if (rc < 0)
        outfile_discard(so);
    return rc;
}

/* OUT, written whole, goes again when the command fails after all (a
 * device or standard output is left alone). */
static void drop_output(const char *path)
{
    struct stat st;
    if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode))
        unlink(path);
}

/* A failed run as the command's one line: the file at fault first. */
static int failed(const struct trace_failure *fail)
{
    if (fail->file)
        return cli_fail("trace", 1, "%s: %s", fail->file, fail->msg);
    return cli_fail("trace", 1, "%s", fail->msg);
}

static int run_sort(struct trace_opts *o, struct trace_files *files)
{
    struct trace_summary sum;
    struct trace_outcome out;
    struct trace_failure fail;
    struct outfile so;
    char err[600] = "out of memory";
    int sfd = -1;
    if (o->summary_json && (sfd = outfile_open(&so, o->summary_json, err, sizeof err)) < 0)
        return cli_fail("trace", 1, "the summary: %s", err);
    int rc = trace_sort_device_setup(&o->dev, &o->p);
    if (rc == 0)
        rc = trace_sort_l1_setup(&o->l1, &o->p, &files->l1);
    if (rc == 0)
        rc = trace_pipeline_sort(files, &o->p, &sum, &out, &fail);
    trace_sort_l1_free(&o->l1);
    trace_sort_device_free(&o->dev);
    if (rc != 0) {
        if (sfd >= 0) {
            close(sfd);
            outfile_discard(&so);
        }
        return rc < 0 ? failed(&fail) : rc;
    }
    int status = 0;
    if (!o->quiet)
        trace_summary_print(&sum, stderr);
    if (sfd >= 0) {
        json_t *res = trace_pipeline_result(&sum, &o->p, &out);
        if (!res || trace_sort_l1_describe(&o->l1, res) < 0) {
            close(sfd);
            outfile_discard(&so);
            status = -1;
        } else if (write_summary(res, &so, sfd, err, sizeof err) < 0) {
            status = -1;
        }
        if (status < 0) {
            drop_output(files->output);
            status = cli_fail("trace", 1, "cannot write the summary: %s", err);
        }
        json_decref(res);
    }
    trace_summary_free(&sum);
    return status;
}

static int run_convert(const struct trace_opts *o, const struct trace_files *files)
{
    struct trace_outcome out;
    struct trace_failure fail;
    return trace_pipeline_convert(files, &o->p, &out, &fail) < 0 ? failed(&fail) : 0;
}

int cmd_trace(int argc, char **argv)
{
    struct trace_opts o = {0};
    int done = 0, status;
    outfile_remove_on_signals(); /* Ctrl-C leaves no OUT.part */
    int i = argc > 1 ? command_index(argv[1]) : -1;
    if (i >= 0 && commands[i].run)
        return commands[i].run(argc - 1, argv + 1);
    trace_params_default(&o.p);
    status = parse_args(argc, argv, &o, &done);
    if (status || done)
        return status;
    struct trace_files files = {.input = o.input, .output = o.output, .pc_flags = o.pc_flags};
    return strcmp(o.cmd, "sort") == 0 ? run_sort(&o, &files) : run_convert(&o, &files);
}
