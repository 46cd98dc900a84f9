/*
 * Small helpers shared by the subcommands: one-line errors, JSON output.
 */
#include "server/cli/cli.h"

#include <stdarg.h>
#include <stdio.h>

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
    extern int optind;
    const char *word = optind - 1 < argc && optind > 0 ? argv[optind - 1] : "?";
    return cli_fail(cmd, 2, "unknown option or missing value near '%s' (see gpuprobe %s --help)",
                    word, cmd);
}

int cli_print_json(json_t *j, int compact)
{
    int rc = json_dumpf(j, stdout, compact ? JSON_COMPACT : JSON_INDENT(2));
    json_decref(j);
    putchar('\n');
    return rc == 0 && fflush(stdout) == 0 ? 0 : -1;
}
