/*
 * The probe job kinds: "latency", "memory", the probes that edit machine
 * code ("banks", "control-codes", "dual-issue") and "suite" (every probe of
 * this build, one after the other, in one job). Registered in
 * registry.c's builtin list; `gpuprobe probe` runs the same descriptors in
 * its own process.
 */
#ifndef GPUPROBE_SERVER_JOBS_KIND_PROBES_H
#define GPUPROBE_SERVER_JOBS_KIND_PROBES_H

#include "server/jobs/registry.h"

extern const struct job_kind kind_latency;
extern const struct job_kind kind_memory;
extern const struct job_kind kind_banks;
extern const struct job_kind kind_control_codes;
extern const struct job_kind kind_dual_issue;
extern const struct job_kind kind_suite;

#endif
