/*
 * The JSON forms of jobs and times served by the API (docs/api.md, JOB).
 */
#ifndef GPUPROBE_SERVER_API_JOB_JSON_H
#define GPUPROBE_SERVER_API_JOB_JSON_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "db/store.h"
#include "util/rfc3339.h" /* time_to_json */

/* The JOB object; with detail, also "result" (events are added by the caller). */
json_t *job_to_json(const struct job_row *j, int detail);
json_t *job_events_to_json(const struct job_event *ev, size_t n);

#endif
