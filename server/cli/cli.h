/*
 * Subcommands of the gpuprobe binary. Each takes the arguments after its
 * name (argv[0] is the subcommand) and returns the process exit status:
 * 0 success, 1 failure while working, 2 bad usage. Errors are one line on
 * stderr: "gpuprobe CMD: reason".
 *
 * DESIGN
 * A subcommand states its options as a table (struct cli_option: the long
 * name and where its value goes) and cli_parse reads argv with it, so
 * --help, unknown options, missing values and stray operands are answered
 * alike by every command, in the same words.
 */
#ifndef GPUPROBE_SERVER_CLI_CLI_H
#define GPUPROBE_SERVER_CLI_CLI_H

#include <jansson.h>
#include <stdio.h>

#include "db/store.h"
#include "trace/params.h"

int cmd_serve(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_trace(int argc, char **argv);
/* `gpuprobe trace synth` (server/cli/trace_synth.c), dispatched by cmd_trace. */
int cmd_trace_synth(int argc, char **argv);
/* `gpuprobe trace cache` (server/cli/trace_cache.c), reached through cmd_trace. */
int cmd_trace_cache(int argc, char **argv);
int cmd_trace_capture(int argc, char **argv); /* trace_capture.c */
int cmd_export(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_push(int argc, char **argv);
int cmd_fleet(int argc, char **argv);
int cmd_regs_limit(int argc, char **argv); /* regs_limit.c: a developer experiment */

/* `gpuprobe trace --help`, one line per trace setting (trace/params.c). */
void cli_trace_usage(FILE *f);
/* The format a trace written to path is in when --out-format is not given,
 * the one rule of every trace command that writes one (sort, convert,
 * synth): a name ending in .bin is binary, one ending in .csv is CSV, any
 * other name (and "-", standard output) dflt, the command's own default. */
enum trace_out_format cli_trace_out_format(const char *path, enum trace_out_format dflt);

/* The most options one command's table may hold. */
#define CLI_MAX_OPTIONS 32

/* The values of an option that may be given more than once. */
#define CLI_LIST_MAX 16
struct cli_list {
    const char *item[CLI_LIST_MAX];
    int n;
};

/* One option: --name, and -letter too where letter is not 0. Exactly one of
 * text (takes a value; the last one given wins), flag (takes none; set to
 * 1) and list (takes a value each time, at most CLI_LIST_MAX) says where it
 * goes. A table ends with an entry whose name is NULL. */
struct cli_option {
    const char *name;
    char letter;
    const char **text;
    int *flag;
    struct cli_list *list;
};

/* Reads argv (argv[0] is the subcommand) by the table opts; --help and -h
 * are every command's. operand receives the one operand the command takes,
 * if given (NULL: it takes none). Returns 0 to go on, with *status 0; else
 * -1 with the exit status in *status: 0 after printing usage for --help, 2
 * after the message for an unknown option, a missing value, a list given
 * too often or an unexpected operand. Each call reads argv from argv[1]
 * (getopt's state is reset). At most CLI_MAX_OPTIONS options a table. */
int cli_parse(const char *cmd, const char *usage, const struct cli_option *opts,
              const char **operand, int argc, char **argv, int *status);
/* The same for a command that takes several operands (at most
 * CLI_LIST_MAX), in order. */
int cli_parse_operands(const char *cmd, const char *usage, const struct cli_option *opts,
                       struct cli_list *operands, int argc, char **argv, int *status);

/* Sets member of obj to the integer text, the value of --option; nothing
 * when text is NULL. 0, or 2 after the message when text is no integer. */
int cli_set_int(const char *cmd, json_t *obj, const char *member, const char *option,
                const char *text);

/* Opens (creating or migrating) the database at path, the value of cmd's
 * --db; NULL after the message, whose exit status is 1. */
store *cli_open_store(const char *cmd, const char *path);
/* The same for a command that only reads results: a path where no database
 * is, a typo most likely, is refused rather than made a new empty one. */
store *cli_read_store(const char *cmd, const char *path);

/* What `trace sort` and `trace cache` take from --device UUID --db PATH:
 * the device's stored info (gpuprobe devices) and its newest memory
 * result. 0, or the exit status after the message (no --db: 2; no such
 * device or no memory result: 1). */
int cli_device_memory(const char *cmd, const char *db, const char *uuid, json_t **info,
                      json_t **memory);

/* Prints j on stdout (indented, or on one line when compact) and a newline,
 * flushes, and releases j. 0, or -1 when stdout cannot be written. */
int cli_print_json(json_t *j, int compact);

/* Prints "gpuprobe CMD: <message>" on stderr and returns status. */
int cli_fail(const char *cmd, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The message for an option getopt_long did not accept (unknown, or its value
 * missing), naming the word at fault; returns 2. */
int cli_unknown_option(const char *cmd, int argc, char **argv);

#endif
