/*
 * Small helpers shared by the subcommands: option parsing, integer options,
 * one-line errors, opening the database, JSON output.
 *
 * DESIGN
 * cli_parse turns a command's table of options into getopt_long's (an
 * option with a letter answers to it; one without gets a value past every
 * character, 256 + its index) and stores each value where the table says.
 * getopt's own messages are off (opterr): every refusal is one line in the
 * commands' style. A table is checked as it is read: too long, or an entry
 * that says two places for its value, fails an assert.
 */
#include "server/cli/cli.h"

#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "db/results.h"
#include "server/store_open.h"
#include "util/text.h"

int cli_fail(const char *cmd, int status, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "gpuprobe %s: %s\n", cmd, msg);
    return status;
}

int cli_unknown_option(const char *cmd, int argc, char **argv)
{
    /* getopt_long has set optind past the offending word */
    const char *word = optind - 1 < argc && optind > 0 ? argv[optind - 1] : "?";
    return cli_fail(cmd, 2, "unknown option or missing value near '%s' (see gpuprobe %s --help)",
                    word, cmd);
}

/* ---- options ------------------------------------------------------------------ */

/* opts as getopt_long's long options and short-option string, help included. */
static void getopt_tables(const struct cli_option *opts, struct option *longs, char *shorts)
{
    size_t i = 0, s = 0;
    shorts[s++] = 'h';
    for (; opts[i].name; i++) {
        int has_arg = opts[i].flag ? no_argument : required_argument;
        assert(i < CLI_MAX_OPTIONS);
        assert(!!opts[i].text + !!opts[i].flag + !!opts[i].list == 1);
        longs[i] = (struct option){opts[i].name, has_arg, NULL,
                                   opts[i].letter ? opts[i].letter : 256 + (int)i};
        if (opts[i].letter) {
            shorts[s++] = opts[i].letter;
            if (has_arg == required_argument)
                shorts[s++] = ':';
        }
    }
    longs[i++] = (struct option){"help", no_argument, NULL, 'h'};
    longs[i] = (struct option){0, 0, 0, 0};
    shorts[s] = '\0';
}

/* The option getopt_long answered c for, or NULL when it refused the word. */
static const struct cli_option *option_of(const struct cli_option *opts, int c)
{
    for (size_t i = 0; opts[i].name; i++)
        if (c == (opts[i].letter ? opts[i].letter : 256 + (int)i))
            return &opts[i];
    return NULL;
}

/* Stores value (NULL for a flag) where o says; 0, or 2 after the message. */
static int take(const char *cmd, const struct cli_option *o, const char *value)
{
    if (o->flag)
        *o->flag = 1;
    else if (o->text)
        *o->text = value;
    else if (o->list->n == CLI_LIST_MAX)
        return cli_fail(cmd, 2, "at most %d --%s", CLI_LIST_MAX, o->name);
    else
        o->list->item[o->list->n++] = value;
    return 0;
}

/* cli_parse with the operands going to one (at most one) or many. */
static int parse(const char *cmd, const char *usage, const struct cli_option *opts,
                 const char **one, struct cli_list *many, int argc, char **argv, int *status)
{
    struct option longs[CLI_MAX_OPTIONS + 2];
    char shorts[2 * CLI_MAX_OPTIONS + 2];
    const struct cli_option *o;
    int c;
    *status = 0;
    getopt_tables(opts, longs, shorts);
    optind = 0; /* from argv[1], whatever an earlier call left */
    opterr = 0; /* our own one-line message instead of getopt's */
    while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        if (c == 'h') {
            fputs(usage, stdout);
            *status = 0;
            return -1;
        }
        if (!(o = option_of(opts, c)))
            *status = cli_unknown_option(cmd, argc, argv);
        else
            *status = take(cmd, o, optarg);
        if (*status)
            return -1;
    }
    if (one && optind < argc)
        *one = argv[optind++];
    while (many && optind < argc && many->n < CLI_LIST_MAX)
        many->item[many->n++] = argv[optind++];
    if (optind < argc) {
        *status = many ? cli_fail(cmd, 2, "at most %d operands", CLI_LIST_MAX)
                       : cli_fail(cmd, 2, "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    return 0;
}

int cli_parse(const char *cmd, const char *usage, const struct cli_option *opts,
              const char **operand, int argc, char **argv, int *status)
{
    return parse(cmd, usage, opts, operand, NULL, argc, argv, status);
}

int cli_parse_operands(const char *cmd, const char *usage, const struct cli_option *opts,
                       struct cli_list *operands, int argc, char **argv, int *status)
{
    return parse(cmd, usage, opts, NULL, operands, argc, argv, status);
}

int cli_set_int(const char *cmd, json_t *obj, const char *member, const char *option,
                const char *text)
{
    long long v;
    if (!text)
        return 0;
    if (parse_ll(text, LLONG_MIN, LLONG_MAX, &v) < 0)
        return cli_fail(cmd, 2, "--%s must be an integer, not '%s'", option, text);
    json_object_set_new(obj, member, json_integer(v));
    return 0;
}

/* ---- the database and output -------------------------------------------------- */

store *cli_open_store(const char *cmd, const char *path)
{
    store *s;
    char err[512];
    if (gpuprobe_store_open(&s, path, NULL, NULL, err, sizeof err) != 0)
        cli_fail(cmd, 1, "%s", err);
    return s;
}

store *cli_read_store(const char *cmd, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return cli_fail(cmd, 1, "no database at %s: %s", path, strerror(errno)), NULL;
    return cli_open_store(cmd, path);
}

int cli_device_memory(const char *cmd, const char *db, const char *uuid, json_t **info,
                      json_t **memory)
{
    char err[512];
    *info = *memory = NULL;
    if (!db)
        return cli_fail(cmd, 2, "--device needs --db PATH (the database with its results)");
    store *s = cli_read_store(cmd, db);
    if (!s)
        return 1;
    struct device_row d;
    int rc = store_device_get(s, uuid, &d, err, sizeof err);
    if (rc == 0 && d.info_json)
        *info = json_loads(d.info_json, 0, NULL);
    if (rc == 0)
        device_row_free(&d);
    int got = rc == 0 ? store_probe_result(s, uuid, "memory", 0, memory, err, sizeof err) : rc;
    store_close(s);
    if (rc == 0 && got == 0)
        return 0;
    json_decref(*info);
    *info = NULL;
    return cli_fail(cmd, 1, "%s: %s", uuid,
                    rc < 0 || got < 0 ? err
                    : rc == 1         ? "no such device in the database"
                                      : "no memory result for this device (run gpuprobe probe memory)");
}

int cli_print_json(json_t *j, int compact)
{
    int rc = json_dumpf(j, stdout, compact ? JSON_COMPACT : JSON_INDENT(2));
    json_decref(j);
    putchar('\n');
    return rc == 0 && fflush(stdout) == 0 ? 0 : -1;
}
