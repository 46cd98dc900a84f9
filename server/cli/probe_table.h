/*
 * A probe's result document as a table for a person at a terminal
 * (`gpuprobe probe` on a tty). The JSON document stays the contract; this is
 * a view of it that shows the medians with their spread and says plainly
 * where a figure is missing and why.
 */
#ifndef GPUPROBE_SERVER_CLI_PROBE_TABLE_H
#define GPUPROBE_SERVER_CLI_PROBE_TABLE_H

#include <jansson.h>
#include <stdio.h>

/* Prints a latency or memory document, or a suite's members in turn. */
void probe_table_print(FILE *f, const json_t *result);

#endif
