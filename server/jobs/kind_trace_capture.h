/*
 * The "trace-capture" job kind: a kernel's memory trace taken on a GPU
 * from its PTX (probes/capture.h). The daemon creates its jobs for
 * POST /api/v1/traces/capture; `gpuprobe trace capture` makes the same call
 * in its own process.
 *
 * DESIGN
 * A GPU kind, one job per GPU like the probes (the capture launches three
 * times and must not share the device with a measurement). Its parameters
 * name files (the PTX, the trace), so it is internal: the daemon's jobs
 * name plain files inside upload_dir, and a job that names no output
 * writes trace-<job id>.out there, the name a trace-sort job's output has,
 * so GET /api/v1/jobs/{id}/output serves both. The kernel's parameters are
 * one string of NAME=VALUE items separated by spaces (the schema has no
 * lists); grid and block are "X[,Y[,Z]]". The schema's checks are the
 * capture's own parsers, so a bad shape is refused at submission.
 */
#ifndef GPUPROBE_SERVER_JOBS_KIND_TRACE_CAPTURE_H
#define GPUPROBE_SERVER_JOBS_KIND_TRACE_CAPTURE_H

#include "server/jobs/registry.h"

extern const struct job_kind kind_trace_capture;

/* The most NAME=VALUE items a job's "params" holds. */
#define TRACE_CAPTURE_MAX_ARGS 64

#endif
