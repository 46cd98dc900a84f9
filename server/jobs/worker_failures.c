/*
 * Worker failures by job kind (see worker_failures.h).
 */
#include "server/jobs/worker_failures.h"

#include <assert.h>
#include <stdatomic.h>

#include "server/jobs/registry.h"

/* Indexed by the kind's place in the registry, then by the reason. */
static _Atomic uint64_t counts[WORKER_FAILURE_KINDS][WORKER_FAILURE_COUNT];

static const char *const names[WORKER_FAILURE_COUNT] = {
    [WORKER_CRASHED] = "crash",
    [WORKER_TIMED_OUT] = "timeout",
    [WORKER_EXIT_STATUS] = "exit_status",
    [WORKER_INVALID_DOCUMENT] = "invalid_document",
};

const char *worker_failure_name(enum worker_failure why)
{
    assert(why < WORKER_FAILURE_COUNT);
    return names[why];
}

void worker_failure_count(const struct job_kind *k, enum worker_failure why)
{
    assert(why < WORKER_FAILURE_COUNT);
    size_t i = 0, n = job_kind_count();
    while (i < n && job_kind_at(i) != k)
        i++;
    assert(i < n && i < WORKER_FAILURE_KINDS);
    atomic_fetch_add_explicit(&counts[i][why], 1, memory_order_relaxed);
}

uint64_t worker_failures(size_t kind, enum worker_failure why)
{
    assert(kind < WORKER_FAILURE_KINDS && why < WORKER_FAILURE_COUNT);
    return atomic_load_explicit(&counts[kind][why], memory_order_relaxed);
}
