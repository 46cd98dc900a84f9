/*
 * Subcommands of the gpuprobe binary. Each takes the arguments after its
 * name (argv[0] is the subcommand) and returns the process exit status:
 * 0 success, 1 failure while working, 2 bad usage. Errors are one line on
 * stderr: "gpuprobe CMD: reason".
 */
#ifndef GPUPROBE_SERVER_CLI_CLI_H
#define GPUPROBE_SERVER_CLI_CLI_H

#include <jansson.h>
#include <stdio.h>

int cmd_serve(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_trace(int argc, char **argv);

/* `gpuprobe trace --help`, one line per trace setting (trace/params.c). */
void cli_trace_usage(FILE *f);

/* Prints j on stdout (indented, or on one line when compact) and a newline,
 * flushes, and releases j. 0, or -1 when stdout cannot be written. */
int cli_print_json(json_t *j, int compact);

/* Prints "gpuprobe CMD: <message>" on stderr and returns status. */
int cli_fail(const char *cmd, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Handles --help/-h (prints usage, *done = 1, returns 0) and unknown options
 * (returns 2 after the message) for a getopt_long loop's return value. */
int cli_unknown_option(const char *cmd, int argc, char **argv);

#endif
