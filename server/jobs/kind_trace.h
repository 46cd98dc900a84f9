/*
 * The "trace-sort" job kind: a thin adapter between a job's parameters and
 * the trace pipeline (trace/pipeline.h), which sorts a trace file (binary
 * requests, CSV, NVBit or Accel-Sim) into L1 arrival order. The daemon
 * creates its jobs for POST /api/v1/traces/sort.
 *
 * DESIGN
 * The parameters are the files (input, output, pc_flags) followed by every
 * trace setting of trace/params.c's table, one schema entry each, built from
 * that table at start-up; each setting's value is checked by the table too,
 * so the schema, the query arguments and the command line cannot disagree.
 * The kind's parameters name files, so it is internal: POST /api/v1/jobs
 * refuses it and only the daemon creates its jobs, whose file parameters
 * are plain names inside upload_dir (job_ctx.upload_dir); a daemon job that
 * names no output writes trace-<job id>.out there. A failure is reported
 * with the pipeline's class, line and offset (job_ctx.failure).
 */
#ifndef GPUPROBE_SERVER_JOBS_KIND_TRACE_H
#define GPUPROBE_SERVER_JOBS_KIND_TRACE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "server/jobs/registry.h"

extern const struct job_kind kind_trace_sort;

/* Adds one setting given as text (a query argument) to params (a JSON
 * object) with the JSON type the schema takes: name is a setting's name
 * spelt with '-' or '_'. 0, or -1 with "name: reason" in err (an unknown
 * name: "'name' is not a setting (known: in-format, ...)"; one already set,
 * under either spelling: "'name' is given more than once"). */
int trace_sort_param_text(json_t *params, const char *name, const char *value, char *err,
                          size_t errlen);

/* job_params_validate for this kind, with the offending setting named as
 * the user spelt it: field "threads-per-block", err "threads-per-block:
 * must be an integer from 1 to 1024". A new object, or NULL. */
json_t *trace_sort_params_check(const json_t *given, char *err, size_t errlen, char *field,
                                size_t fieldlen);

/* The output file of a daemon job that names none: upload_dir/trace-ID.out. */
void trace_sort_job_output(const char *upload_dir, int64_t job_id, char *buf, size_t len);

/* The check of a file parameter (not empty), shared by the kinds whose
 * parameters name files (trace-sort, trace-capture). */
int trace_job_check_file(const struct param_spec *p, const json_t *v, char *why, size_t len);

/* A file parameter as a path: the value itself from the command line, or
 * ctx->upload_dir/value for the daemon, where value must be a plain name.
 * 0, or -1 with "what: reason" in err. */
int trace_job_resolve_file(const struct job_ctx *ctx, const char *what, const char *value,
                           char *out, size_t len, char *err, size_t errlen);

/* 1 if name may be a file of upload_dir: 1-200 bytes of letters, digits,
 * '.', '_' and '-', not starting with '.'. */
int trace_sort_plain_name(const char *name);

#endif
