/*
 * The job scheduler: one thread that starts queued jobs in worker processes,
 * watches them, and records how each ended.
 *
 * DESIGN
 * Jobs live in the store, not in memory: the scheduler reads the queue from
 * the store every time it wakes (on a submission, a cancellation, a child's
 * exit or output, a deadline, or once a second), so a restart loses nothing.
 * Guarantees: at most one running job per GPU, FIFO per GPU (the queue is
 * read oldest first and a GPU's later job is never started while an older one
 * for it waits); jobs that need no GPU share cpu_workers slots, also FIFO.
 * A child's exit, crash, overrun or cancellation is turned into the job's
 * final state here, in one store transaction each. When the store cannot
 * write that transaction (disk full, I/O error), the outcome is kept in
 * memory and retried with a backoff until it can: the job stays running,
 * holding its slot, and a cancellation meanwhile replaces the outcome. An
 * orderly stop drains first (scheduler_drain), then re-queues what still
 * runs without counting the attempt.
 * Not done: priorities, fairness between GPUs beyond FIFO order, and
 * keeping an outcome across a restart (a job whose outcome the store never
 * took is re-run as interrupted at the next start).
 */
#ifndef GPUPROBE_SERVER_JOBS_SCHEDULER_H
#define GPUPROBE_SERVER_JOBS_SCHEDULER_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "db/store.h"

struct app;
struct scheduler;

/* Worker result documents larger than this fail the job. */
#define SCHED_RESULT_LIMIT (64u << 20)

struct scheduler *scheduler_start(struct app *app, char *err, size_t errlen);
/* Something changed in the queue: look again now. */
void scheduler_wake(struct scheduler *s);
/* Stores a queued job of kind k (device NULL for a CPU kind; params already
 * validated) with its deadline from job_timeout_s, and wakes the scheduler
 * if it runs (a job stored before it starts waits in the queue). 0 with
 * *id, or -1 with the store's reason. The one way jobs are created. */
struct job_kind;
int job_submit(struct app *app, const struct job_kind *k, const char *device,
               const json_t *params, int requested_timeout_s, int64_t *id, char *err,
               size_t errlen);

/* Kills the job's process if it runs here; the job then ends cancelled. */
void scheduler_cancel(struct scheduler *s, int64_t job_id);
/* The first step of an orderly stop: from now on the scheduler starts only
 * queued jobs that a client waits for (scheduler_wait: a synchronous sort),
 * and this call returns once no job runs (or waits to have its outcome
 * stored) and no client waits, 0, or at deadline_ms (monotonic) with jobs
 * still running, 1; then every scheduler_wait returns at once (1: not yet
 * ended), so that HTTP can stop. NULL is ok (0). */
int scheduler_drain(struct scheduler *s, int64_t deadline_ms);
/* Kills running workers, returns their jobs to the queue without counting
 * the attempt (store_job_stopped: "daemon stopped"), gives a job whose
 * outcome waits for the store one last try, and joins the thread. */
void scheduler_stop(struct scheduler *s);
int scheduler_running(struct scheduler *s);

/* Blocks until job_id has ended, timeout_ms has passed or the scheduler
 * stops, and hands back the job as last read (free it with job_row_free).
 * 0 when it has ended; 1 when it has not (yet); -1 with the reason when it
 * cannot be read (then j is empty). For a client that waits on its job. */
int scheduler_wait(struct scheduler *s, int64_t job_id, int timeout_ms, struct job_row *j,
                   char *err, size_t errlen);

/* The pure part of the decision, testable alone: may a job for `device`
 * (NULL = CPU) start, given the devices busy now and the CPU jobs running? */
struct sched_view {
    const char *const *busy_devices;
    size_t nbusy;
    int cpu_running;
    int cpu_workers;
    const char *const *blocked_devices;   /* devices whose older job waits */
    size_t nblocked;
};
int sched_may_start(const struct sched_view *v, const char *device);

#endif
