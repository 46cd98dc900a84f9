/*
 * The pieces the terminal tables share (server/cli/probe_table*.c); nothing else
 * includes this header. Every accessor tolerates an absent member or one of
 * the wrong type.
 */
#ifndef GPUPROBE_SERVER_CLI_PROBE_TABLE_INTERNAL_H
#define GPUPROBE_SERVER_CLI_PROBE_TABLE_INTERNAL_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#define ERR_WIDTH 70             /* characters of an error shown in a row */

/* The number under key (0 when absent). */
double pt_num(const json_t *o, const char *key);
/* The error of v: {"error": "..."} or a bare string; NULL otherwise. */
const char *pt_error_of(const json_t *v);
/* "median [min-max]" (fig may wrap its figure in "cycles"), the error, or "-". */
void pt_figure_text(const json_t *fig, char *buf, size_t len);
/* The text under key, or dflt. */
const char *pt_text(const json_t *o, const char *key, const char *dflt);
/* The probe, device, driver, clock, repeats and time, then a blank line. */
void pt_header(FILE *f, const json_t *doc);

/* The tables of the probes that edit machine code (probe_table_edits.c). */
void pt_banks_table(FILE *f, const json_t *doc);
void pt_control_codes_table(FILE *f, const json_t *doc);
void pt_dual_issue_table(FILE *f, const json_t *doc);

#endif
