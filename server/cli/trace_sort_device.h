/*
 * `gpuprobe trace sort --device UUID --db PATH`: a sort for one measured
 * GPU (docs/trace-sort.md, step 1b).
 *
 * DESIGN
 * The device's stored info gives the machine the sort models (its SM
 * count, threads and blocks an SM holds) and its newest memory result the
 * order its block scheduler deals blocks in (block_placement,
 * probes/placement.h), which becomes placement dealt (trace/deal.h). What
 * the user set explicitly wins, the device comes next, the --arch preset
 * last. A device whose memory result has no determined order, or one that
 * does not deal to exactly the sort's SMs (--sms given otherwise), keeps
 * the placement it had, with a warning that says why; --placement dealt
 * then fails with that reason.
 */
#ifndef GPUPROBE_SERVER_CLI_TRACE_SORT_DEVICE_H
#define GPUPROBE_SERVER_CLI_TRACE_SORT_DEVICE_H

#include <getopt.h>

#include "trace/deal.h"
#include "trace/params.h"

/* getopt values of the options (TRACE_SORT_DEVICE_OPT + i). */
#define TRACE_SORT_DEVICE_OPT 1100
#define TRACE_SORT_DEVICE_NOPTS 2

struct trace_sort_device {
    const char *uuid, *db;     /* the options, as given */
    struct trace_deal deal;    /* set up: the device's order, p->deal points here */
};

extern const struct option trace_sort_device_options[TRACE_SORT_DEVICE_NOPTS];

/* Takes option c (TRACE_SORT_DEVICE_OPT + i) with its argument. */
void trace_sort_device_take(struct trace_sort_device *d, int c, const char *arg);

/* Applies the device to p (every option read): nothing without --device.
 * 0, or the exit status after the message. */
int trace_sort_device_setup(struct trace_sort_device *d, struct trace_params *p);

void trace_sort_device_free(struct trace_sort_device *d);

#endif
