/*
 * The "trace-sort" job kind: reads a trace file (binary requests, CSV, NVBit
 * or Accel-Sim), orders its requests as they reach each SM's L1 with the
 * sorter of trace/ (docs/trace-sort.md), writes the result as CSV or binary
 * and returns the summary. One implementation for three callers: the
 * daemon's synchronous POST /api/v1/traces/sort (a worker run with
 * child_run), its job path (a queued job), and `gpuprobe trace sort` (in
 * process).
 *
 * DESIGN
 * The kind's parameters name files, so it is internal: POST /api/v1/jobs
 * refuses it and only the daemon creates its jobs. When the daemon runs it
 * (job_ctx.upload_dir set), input, output and pc_flags must be plain names
 * inside upload_dir, which the daemon generated; from the command line they
 * are paths. The output is written as OUTPUT.part and renamed when complete,
 * so a failed run never leaves a partial output; a bad input fails with the
 * line (text formats) and byte offset of its first bad record, in the error
 * text and as "error_line" / "error_offset" members of the worker's
 * document, with "error_class" "input" (the trace is wrong) or "params"
 * (the settings do not fit the trace).
 */
#ifndef GPUPROBE_SERVER_JOBS_KIND_TRACE_H
#define GPUPROBE_SERVER_JOBS_KIND_TRACE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "server/jobs/registry.h"
#include "trace/sort.h"

extern const struct job_kind kind_trace_sort;

/* The settings a user gives as text (the CLI's --NAME VALUE, the API's query
 * arguments), hyphenated, NULL-terminated: in-format, out-format, arch,
 * coalesce, ... seed. Not the file parameters. */
extern const char *const trace_sort_text_params[];

/* Adds one setting given as text to params (a JSON object), converted to
 * the type of the kind's parameter: name is one of trace_sort_text_params
 * (or the same with '_'). 0, or -1 with the reason in err (range checks are
 * left to trace_sort_params_check). */
int trace_sort_param_text(json_t *params, const char *name, const char *value, char *err,
                          size_t errlen);

/* job_params_validate for this kind, with the offending setting named as
 * the user spelt it: field "threads-per-block", err "threads-per-block:
 * must be an integer from 1 to 1024". A new object, or NULL. */
json_t *trace_sort_params_check(const json_t *given, char *err, size_t errlen, char *field,
                                size_t fieldlen);

/* The kind's run function, handing the summary back too when sum is not
 * NULL (free it with trace_summary_free; zeroed on failure). Returns the
 * result document: trace_summary_to_json's members plus "input_format",
 * "output_format" and "output_bytes" (null when writing to a pipe). */
json_t *trace_sort_run(const struct job_ctx *ctx, const json_t *params, struct trace_summary *sum,
                       char *err, size_t errlen);

/* The output file of a daemon job that names none: upload_dir/trace-ID.out. */
void trace_sort_job_output(const char *upload_dir, int64_t job_id, char *buf, size_t len);

/* 1 if name may be a file of upload_dir: 1-200 bytes of letters, digits,
 * '.', '_' and '-', not starting with '.'. */
int trace_sort_plain_name(const char *name);

#endif
