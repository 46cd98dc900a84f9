/*
 * The probe job kinds: "latency", "memory", the probes that edit machine
 * code ("banks", "control-codes", "dual-issue") and "suite" (every probe of
 * this build, one after the other, in one job). Registered in
 * registry.c's builtin list; `gpuprobe probe` runs the same descriptors in
 * its own process. Here too: the "repeats" parameter that every kind which
 * measures on a GPU declares alike, model-validation's included.
 */
#ifndef GPUPROBE_SERVER_JOBS_KIND_PROBES_H
#define GPUPROBE_SERVER_JOBS_KIND_PROBES_H

#include "probes/gpu/stats.h"
#include "server/jobs/registry.h"

/* The "repeats" parameter of every kind that measures on a GPU (the probes
 * and model-validation): an integer from 1 to the bound every probe can run,
 * with the kind's default (JSON text) and its own description. */
#define REPEATS_PARAM(default_text, what)                                                    \
    {.name = "repeats", .type = PARAM_INT, .min = 1, .max = PROBE_MAX_REPEATS,               \
     .default_json = (default_text), .description = (what)}

extern const struct job_kind kind_latency;
extern const struct job_kind kind_memory;
extern const struct job_kind kind_banks;
extern const struct job_kind kind_control_codes;
extern const struct job_kind kind_dual_issue;
extern const struct job_kind kind_suite;

#endif
