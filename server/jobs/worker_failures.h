/*
 * Jobs that failed because of their worker process, counted by job kind and
 * by how the worker failed, for /metrics.
 *
 * DESIGN
 * The scheduler counts a job here when it ends failed because its worker
 * crashed (a signal), overran its deadline, exited non-zero, or sent a
 * document that is not a valid result (not the envelope, too large, or
 * refused by the kind's check). A job the worker itself reports as failed
 * (bad input, a probe that could not measure) is not counted: the worker
 * worked. The counts are process-wide, like the job kinds they are indexed
 * by (registry.h): C11 atomics added to with relaxed ordering by the
 * scheduler thread and read by the HTTP threads. They start at zero with
 * the process, as Prometheus counters do.
 */
#ifndef GPUPROBE_SERVER_JOBS_WORKER_FAILURES_H
#define GPUPROBE_SERVER_JOBS_WORKER_FAILURES_H

#include <stddef.h>
#include <stdint.h>

struct job_kind;

enum worker_failure {
    WORKER_CRASHED,          /* ended by a signal it was not sent for its deadline */
    WORKER_TIMED_OUT,        /* killed at its deadline */
    WORKER_EXIT_STATUS,      /* exited with a status other than 0 */
    WORKER_INVALID_DOCUMENT, /* answered something that is not a valid result */
    WORKER_FAILURE_COUNT
};

/* "crash", "timeout", "exit_status", "invalid_document": the reason label. */
const char *worker_failure_name(enum worker_failure why);

/* The most job kinds counted (tests/unit/test_metrics_page.c checks that the
 * registry fits). */
#define WORKER_FAILURE_KINDS 64

/* Counts one failure of a job of kind k. Contract: k is one of the
 * registry's kinds (job_kind_at). */
void worker_failure_count(const struct job_kind *k, enum worker_failure why);
/* Failures so far of the kind job_kind_at(kind) for that reason. */
uint64_t worker_failures(size_t kind, enum worker_failure why);

#endif
