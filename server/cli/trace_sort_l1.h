/*
 * `gpuprobe trace sort`'s cache feedback options (--feedback, --mshr-merge
 * and the L1 they model): docs/trace-sort.md, "Cache feedback".
 *
 * DESIGN
 * trace.c parses the sort's options with one getopt table; it adds these
 * (trace_sort_l1_options, values from TRACE_SORT_L1_OPT) and hands each
 * one it reads to trace_sort_l1_take. Once every option is read,
 * trace_sort_l1_setup turns them into the L1 the sort consults
 * (cache/feedback.h) — the geometry from the same presets and options as
 * `trace cache` (the sort's --arch, then --l1 and --set-index), the hit
 * latency from the sort's lat_min unless given — or into none when neither
 * option is given, so the sort is then exactly what it was without them.
 * They are not trace settings (trace/params.c): the trace-sort job and the
 * API do not take them yet.
 */
#ifndef GPUPROBE_SERVER_CLI_TRACE_SORT_L1_H
#define GPUPROBE_SERVER_CLI_TRACE_SORT_L1_H

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>

#include "cache/feedback.h"
#include "trace/params.h"

/* getopt values of the options (TRACE_SORT_L1_OPT + i), above any other. */
#define TRACE_SORT_L1_OPT 1024
#define TRACE_SORT_L1_NOPTS 6

struct trace_sort_l1 {
    int feedback, mshr_merge;                           /* the two options */
    const char *l1, *set_index, *hit_latency, *merge;   /* their settings, as given */
    int given;                                          /* any of the six was given */
    int set_up;                                         /* fb and ops are live */
    struct cache_feedback fb;                           /* set up: the L1 */
    struct trace_l1_ops ops;
};

/* The options, for a getopt_long table (no terminating entry). */
extern const struct option trace_sort_l1_options[TRACE_SORT_L1_NOPTS];

/* Their lines of `gpuprobe trace --help`. */
void trace_sort_l1_usage(FILE *f);

/* Takes option c (TRACE_SORT_L1_OPT + i) with its argument. */
void trace_sort_l1_take(struct trace_sort_l1 *o, int c, const char *arg);

/* Builds the L1 for a sort with parameters p (every option read, the
 * preset applied): *ops NULL when neither --feedback nor --mshr-merge was
 * given, else &o->ops. 0, or 2 after the message (a bad value, a setting
 * without its option, no L1 preset for the architecture). */
int trace_sort_l1_setup(struct trace_sort_l1 *o, const struct trace_params *p,
                        const struct trace_l1_ops **ops);

/* Frees what the L1 kept (after the sort). */
void trace_sort_l1_free(struct trace_sort_l1 *o);

/* Adds the L1's description to a sort's result document, beside the
 * counts trace_summary_to_json put in its "l1" member: "feedback",
 * "mshr_merge", the geometry, "hit_latency", "max_merge". -1 out of
 * memory. Nothing when no L1 was set up. */
int trace_sort_l1_describe(const struct trace_sort_l1 *o, json_t *result);

#endif
