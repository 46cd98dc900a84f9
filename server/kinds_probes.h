/*
 * The probe job kinds: "latency", "memory" and "suite" (every probe of this
 * build, one after the other, in one job). Registered in
 * jobkinds.c's builtin list; `gpuprobe probe` runs the same descriptors in
 * its own process.
 */
#ifndef GPUPROBE_SERVER_KINDS_PROBES_H
#define GPUPROBE_SERVER_KINDS_PROBES_H

#include "server/jobkinds.h"

extern const struct job_kind kind_latency;
extern const struct job_kind kind_memory;
extern const struct job_kind kind_suite;

#endif
