/*
 * The job scheduler (see scheduler.h for the guarantees).
 *
 * The loop, top to bottom: apply cancellations, start what may start, poll
 * the wake pipe and every child's pipes and pidfd until something happens or
 * the nearest deadline, then collect output, kill overdue children and
 * finish the ones that exited. Workers are started and read through the
 * worker protocol (protocol.h) and get --upload-dir (file parameters of
 * internal kinds are names inside it); when a job ends here, however it
 * ends, its kind's finished hook removes the files the job owned, and then
 * everyone in scheduler_wait looks again.
 *
 * Ending a job is two steps: deciding its outcome (struct ending: succeed
 * with the result, fail with a reason, or cancelled) and writing it to the
 * store. When the write fails for the disk's sake (store_write_failed_io:
 * full, I/O error) the slot keeps the outcome in memory, its worker gone,
 * and tries again with a backoff (ENDING_FIRST_MS doubling up to
 * ENDING_MAX_MS) until the store takes it: the job stays `running` and
 * holds its slot meanwhile, a DELETE turns the kept outcome into a
 * cancellation, and once space returns the job ends with its real result.
 * While the store cannot write and no outcome waits, the loop probes it
 * with a tiny write (store_write_probe) on the same backoff, so /readyz
 * learns when writes work again.
 *
 * Stopping: scheduler_drain lets the running jobs finish (and starts only
 * the queued jobs a client waits for in scheduler_wait, such as a
 * synchronous sort) until nothing runs and nobody waits, or its deadline;
 * scheduler_stop then kills what still runs and re-queues it without
 * counting the attempt (store_job_stopped): an operator's stop is not the
 * job's failure.
 */
#include "server/jobs/scheduler.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "server/app.h"
#include "server/jobs/protocol.h"
#include "server/jobs/registry.h"
#include "server/jobs/spawn.h"
#include "server/jobs/worker_failures.h"
#include "server/log.h"
#include "util/clock.h"
#include "util/sdnotify.h"

#define MAX_CANCELS 256
#define QUEUE_SCAN 512
#define MAX_WAITERS 256
#define ENDING_FIRST_MS 100
#define ENDING_MAX_MS 5000

/* A job's outcome, decided, waiting to be written to the store. */
enum end_what { END_NONE, END_SUCCEED, END_FAIL, END_CANCEL };
struct ending {
    enum end_what what;
    char *result;                /* END_SUCCEED: the result document */
    char *reason;                /* END_FAIL: why */
    char *detail;                /* END_FAIL: the failure's details (JSON), or NULL */
    int64_t next_try_ms;         /* monotonic */
    int delay_ms;                /* the backoff's next step */
    int tries;
};

struct slot {
    int used;
    int64_t job_id;
    char device[48];             /* "" for a CPU job */
    const struct job_kind *kind;
    char *params_json;           /* as stored, for the kind's finished hook */
    struct child ch;
    int64_t started_ms;          /* monotonic */
    int64_t deadline_ms;         /* monotonic */
    int timeout_s;
    int cancelled;
    int timed_out;
    struct ending end;           /* what == END_NONE while the worker runs */
};

struct scheduler {
    struct app *app;
    pthread_t thread;
    int wake[2];
    atomic_int stop;
    atomic_int alive;
    pthread_mutex_t lock;        /* guards cancels */
    int64_t cancels[MAX_CANCELS];
    size_t ncancels;
    struct slot *slots;
    size_t nslots;
    pthread_mutex_t ended_lock;  /* guards ended_count and waiters; ended signals a change */
    pthread_cond_t ended;
    uint64_t ended_count;        /* jobs ended here so far */
    int64_t waiters[MAX_WAITERS];/* jobs a client waits for (scheduler_wait), which a
                                    drain still starts; one entry per waiting client */
    size_t nwaiters;
    atomic_int draining;         /* start only jobs that a client waits for */
    atomic_int abandon;          /* the drain's grace is over: waiting clients stop waiting */
    atomic_int busy;             /* slots in use, as of the loop's last round */
    atomic_long rounds;          /* rounds of the loop so far */
    int64_t next_probe_ms;       /* monotonic: when to probe a store that cannot write */
    int probe_delay_ms;
};

/* A job ended here: whoever waits on one looks at the store again. */
static void announce_end(struct scheduler *s)
{
    pthread_mutex_lock(&s->ended_lock);
    s->ended_count++;
    pthread_cond_broadcast(&s->ended);
    pthread_mutex_unlock(&s->ended_lock);
}

static int in_list(const char *const *list, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], s) == 0)
            return 1;
    return 0;
}

int sched_may_start(const struct sched_view *v, const char *device)
{
    if (!device)
        return v->cpu_running < v->cpu_workers;
    return !in_list(v->busy_devices, v->nbusy, device) &&
           !in_list(v->blocked_devices, v->nblocked, device);
}

void scheduler_wake(struct scheduler *s)
{
    if (!s)
        return;
    char b = 1;
    ssize_t w = write(s->wake[1], &b, 1);
    (void)w; /* a full pipe already means "wake up" */
}

void scheduler_cancel(struct scheduler *s, int64_t job_id)
{
    if (!s)
        return; /* not started yet: nothing runs, the store holds the request */
    pthread_mutex_lock(&s->lock);
    if (s->ncancels < MAX_CANCELS)
        s->cancels[s->ncancels++] = job_id;
    pthread_mutex_unlock(&s->lock);
    scheduler_wake(s);
}

int scheduler_running(struct scheduler *s) { return s && atomic_load(&s->alive); }

static void ending_clear(struct ending *e)
{
    free(e->result);
    free(e->reason);
    free(e->detail);
    memset(e, 0, sizeof *e);
}

/* A running worker is killed (its end then says cancelled); an outcome that
 * waits for the store becomes the cancellation, tried at once. */
static void cancel_slot(struct slot *sl)
{
    sl->cancelled = 1;
    if (sl->end.what == END_NONE) {
        child_kill(&sl->ch);
        return;
    }
    ending_clear(&sl->end);
    sl->end.what = END_CANCEL;
    sl->end.delay_ms = ENDING_FIRST_MS;
}

static void apply_cancels(struct scheduler *s)
{
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->ncancels; i++)
        for (size_t k = 0; k < s->nslots; k++)
            if (s->slots[k].used && s->slots[k].job_id == s->cancels[i])
                cancel_slot(&s->slots[k]);
    s->ncancels = 0;
    pthread_mutex_unlock(&s->lock);
}

/* ---- finishing ------------------------------------------------------------ */

static void log_finish(const struct slot *sl, const char *state, const char *reason)
{
    char q[1200];
    log_kv(state[0] == 's' ? LOG_INFO : LOG_WARN, "job_finished",
           "job=%lld kind=%s state=%s duration_ms=%lld error=%s", (long long)sl->job_id,
           sl->kind->name, state, (long long)(mono_ms() - sl->started_ms),
           log_quote(q, sizeof q, reason ? reason : ""));
}

/* Lets the kind remove the files the job owned, now that it has ended. */
static void job_ended(struct scheduler *s, const struct slot *sl, int succeeded)
{
    if (sl->kind->finished)
        sl->kind->finished(s->app->cfg.upload_dir, sl->job_id, sl->params_json, succeeded);
}

/* Decides: the job fails with reason and, if the worker described it, its
 * failure. */
static void decide_fail(struct slot *sl, const char *reason, const struct job_failure *f)
{
    json_t *detail = f ? job_failure_to_json(f) : NULL;
    ending_clear(&sl->end);
    sl->end.what = END_FAIL;
    sl->end.reason = strdup(reason && *reason ? reason : "unknown reason");
    sl->end.detail = detail ? json_dumps(detail, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(detail);
}

/* Decides that the job fails because its worker failed it (counted for
 * /metrics). */
static void worker_failed(struct slot *sl, enum worker_failure why, const char *reason)
{
    worker_failure_count(sl->kind, why);
    decide_fail(sl, reason, NULL);
}

/* Reads the worker's envelope and decides the outcome it reports. */
static void decide_from_output(struct slot *sl)
{
    char reason[1200], err[512];
    struct worker_reply r;
    if (worker_reply_read(sl->ch.out.data, sl->ch.out.len, &r, err, sizeof err) < 0) {
        snprintf(reason, sizeof reason, "worker sent an invalid result document: %s", err);
        worker_failed(sl, WORKER_INVALID_DOCUMENT, reason);
        return;
    }
    if (!r.ok) {
        decide_fail(sl, r.error, &r.failure);
    } else if (sl->kind->check_result && sl->kind->check_result(r.result, err, sizeof err) < 0) {
        snprintf(reason, sizeof reason, "worker sent an invalid result: %s", err);
        worker_failed(sl, WORKER_INVALID_DOCUMENT, reason);
    } else {
        ending_clear(&sl->end);
        sl->end.what = END_SUCCEED;
        sl->end.result = json_dumps(r.result, JSON_COMPACT);
        if (!sl->end.result)
            decide_fail(sl, "storing the result failed: out of memory", NULL);
    }
    worker_reply_free(&r);
}

/* Decides the outcome of a slot whose worker has exited. */
static void decide(struct slot *sl)
{
    char reason[1024], how[128], tail[600];
    if (sl->cancelled) {
        ending_clear(&sl->end);
        sl->end.what = END_CANCEL;
    } else if (sl->timed_out) {
        snprintf(reason, sizeof reason, "deadline of %d s exceeded; the worker was killed",
                 sl->timeout_s);
        worker_failed(sl, WORKER_TIMED_OUT, reason);
    } else if (!WIFEXITED(sl->ch.status) || WEXITSTATUS(sl->ch.status) != 0) {
        child_exit_text(&sl->ch, how, sizeof how);
        child_err_summary(&sl->ch, tail, sizeof tail);
        snprintf(reason, sizeof reason, "worker %s%s%s", how, tail[0] ? "; stderr: " : "", tail);
        worker_failed(sl, WIFEXITED(sl->ch.status) ? WORKER_EXIT_STATUS : WORKER_CRASHED, reason);
    } else if (sl->ch.out_overflow) {
        snprintf(reason, sizeof reason, "worker result larger than %u bytes", SCHED_RESULT_LIMIT);
        worker_failed(sl, WORKER_INVALID_DOCUMENT, reason);
    } else {
        decide_from_output(sl);
    }
    sl->end.delay_ms = ENDING_FIRST_MS;
}

/* Writes the decided outcome: 0 written (or moot: the job had ended
 * otherwise), 1 the store could not write it now (try again later), and
 * END_SUCCEED turned into END_FAIL when the store refused the result
 * itself. *succeeded says whether the job ended succeeded. */
static int write_outcome(struct scheduler *s, struct slot *sl, int *succeeded)
{
    char err[512], reason[1200];
    int rc;
    store *db = s->app->db;
    *succeeded = 0;
    switch (sl->end.what) {
    case END_SUCCEED:
        rc = store_job_succeed(db, sl->job_id, sl->end.result, sl->kind->save, err, sizeof err);
        if (rc < 0 && !store_write_failed_io()) { /* the result itself was refused */
            snprintf(reason, sizeof reason, "storing the result failed: %s", err);
            decide_fail(sl, reason, NULL);
            return write_outcome(s, sl, succeeded);
        }
        if (rc == 0)
            log_finish(sl, "succeeded", NULL);
        else if (rc == 1) /* someone else ended it meanwhile; its state stands */
            log_kv(LOG_WARN, "result_discarded", "job=%lld reason=not_running",
                   (long long)sl->job_id);
        *succeeded = rc == 0;
        break;
    case END_FAIL:
        rc = store_job_fail(db, sl->job_id, sl->end.reason ? sl->end.reason : "out of memory",
                            sl->end.detail, err, sizeof err);
        if (rc == 0)
            log_finish(sl, "failed", sl->end.reason);
        break;
    case END_CANCEL:
        rc = store_job_cancelled(db, sl->job_id, err, sizeof err);
        if (rc == 0)
            log_finish(sl, "cancelled", NULL);
        break;
    default:
        return 0;
    }
    if (rc >= 0)
        return 0;
    if (!store_write_failed_io()) { /* not the disk: trying again would not help */
        log_kv(LOG_ERROR, "store_failed", "job=%lld error=%s", (long long)sl->job_id, err);
        return 0;
    }
    if (sl->end.tries == 0 || sl->end.tries % 20 == 0)
        log_kv(LOG_ERROR, "store_failed", "job=%lld tries=%d retry_ms=%d error=%s",
               (long long)sl->job_id, sl->end.tries + 1, sl->end.delay_ms, err);
    return 1;
}

/* Empties a slot whose job has ended. */
static void release_slot(struct scheduler *s, struct slot *sl, int succeeded)
{
    job_ended(s, sl, succeeded);
    child_release(&sl->ch);
    ending_clear(&sl->end);
    free(sl->params_json);
    memset(sl, 0, sizeof *sl);
    sl->ch.out_fd = sl->ch.err_fd = sl->ch.pidfd = -1;
    announce_end(s);
}

/* Tries to write the slot's outcome now; on success the slot is emptied,
 * else it waits for the next try. */
static void try_end(struct scheduler *s, struct slot *sl)
{
    int succeeded = 0;
    if (write_outcome(s, sl, &succeeded) == 0) {
        if (sl->end.tries > 0)
            log_kv(LOG_INFO, "job_end_stored", "job=%lld tries=%d", (long long)sl->job_id,
                   sl->end.tries + 1);
        release_slot(s, sl, succeeded);
        return;
    }
    sl->end.tries++;
    sl->end.next_try_ms = mono_ms() + sl->end.delay_ms;
    sl->end.delay_ms = sl->end.delay_ms * 2 > ENDING_MAX_MS ? ENDING_MAX_MS : sl->end.delay_ms * 2;
}

/* A worker has exited: decide its job's outcome, free the worker's
 * resources (the outcome is all that is kept) and try to store it. */
static void finish_slot(struct scheduler *s, struct slot *sl)
{
    decide(sl);
    child_release(&sl->ch);
    try_end(s, sl);
}

/* ---- starting ------------------------------------------------------------- */

static int device_attached(struct app *app, const char *uuid)
{
    int found = 0;
    pthread_mutex_lock(&app->inv_lock);
    for (size_t i = 0; i < app->inv.count && !found; i++)
        found = strcmp(app->inv.devices[i].uuid, uuid) == 0;
    pthread_mutex_unlock(&app->inv_lock);
    return found;
}

/* Marks a job that can never run here as failed (it must be started first,
 * since only running jobs end). */
static void refuse_job(struct scheduler *s, const struct job_row *j, const char *reason)
{
    char err[256];
    if (store_job_start(s->app->db, j->id, err, sizeof err) == 0)
        store_job_fail(s->app->db, j->id, reason, NULL, err, sizeof err);
    log_kv(LOG_WARN, "job_refused", "job=%lld kind=%s", (long long)j->id, j->kind);
    announce_end(s);
}

static int launch(struct scheduler *s, struct slot *sl, const struct job_row *j,
                  const struct job_kind *k)
{
    char err[256], cubins[1100];
    const struct config *cfg = &s->app->cfg;
    snprintf(cubins, sizeof cubins, "%s/job-%lld", cfg->cubin_dir, (long long)j->id);
    struct worker_call call = {.mode = WORKER_JOB, .kind = j->kind, .job_id = j->id,
                               .device = j->device, .params = "-",
                               .upload_dir = cfg->upload_dir,
                               .cubin_dir = cfg->cubin_dir[0] ? cubins : NULL};
    struct worker_argv wa;
    worker_argv(&wa, s->app->self_exe, &call);
    int rc = store_job_start(s->app->db, j->id, err, sizeof err);
    if (rc != 0)
        return rc; /* cancelled meanwhile, or the store failed: nothing started */
    sl->used = 1;
    sl->job_id = j->id;
    snprintf(sl->device, sizeof sl->device, "%s", j->device ? j->device : "");
    sl->kind = k;
    sl->params_json = strdup(j->params_json ? j->params_json : "{}");
    sl->timeout_s = job_timeout_s(cfg, k, j->timeout_s);
    sl->started_ms = mono_ms();
    sl->deadline_ms = sl->started_ms + (int64_t)sl->timeout_s * 1000;
    if (child_spawn(&sl->ch, s->app->self_exe, wa.argv, j->params_json, SCHED_RESULT_LIMIT, err,
                    sizeof err) < 0) {
        decide_fail(sl, err, NULL); /* it ends like any job, kept until the store takes it */
        sl->end.delay_ms = ENDING_FIRST_MS;
        try_end(s, sl);
        return -1;
    }
    log_kv(LOG_INFO, "job_started", "job=%lld kind=%s device=%s pid=%d timeout_s=%d",
           (long long)j->id, j->kind, j->device ? j->device : "cpu", (int)sl->ch.pid,
           sl->timeout_s);
    return 0;
}

static struct slot *free_slot(struct scheduler *s)
{
    for (size_t i = 0; i < s->nslots; i++)
        if (!s->slots[i].used)
            return &s->slots[i];
    return NULL;
}

/* The busy devices and CPU count, as a view for sched_may_start. */
static void current_view(struct scheduler *s, struct sched_view *v, const char **busy)
{
    memset(v, 0, sizeof *v);
    v->busy_devices = busy;
    v->cpu_workers = s->app->cfg.cpu_workers;
    for (size_t i = 0; i < s->nslots; i++) {
        if (!s->slots[i].used)
            continue;
        if (s->slots[i].device[0])
            busy[v->nbusy++] = s->slots[i].device;
        else
            v->cpu_running++;
    }
}

static void consider(struct scheduler *s, const struct job_row *j, struct sched_view *v,
                     const char **busy, const char **blocked)
{
    char reason[512];
    const struct job_kind *k = job_kind_find(j->kind);
    if (!k) {
        snprintf(reason, sizeof reason, "job kind '%s' is not known to this gpuprobe", j->kind);
        refuse_job(s, j, reason);
        return;
    }
    if (k->needs_gpu && (!j->device || !device_attached(s->app, j->device))) {
        snprintf(reason, sizeof reason, "device %s is not attached to this host",
                 j->device ? j->device : "(none)");
        refuse_job(s, j, reason);
        return;
    }
    const char *dev = k->needs_gpu ? j->device : NULL;
    struct slot *sl = sched_may_start(v, dev) ? free_slot(s) : NULL;
    if (sl && launch(s, sl, j, k) == 0) {
        if (dev)
            busy[v->nbusy++] = sl->device;
        else
            v->cpu_running++;
        return;
    }
    if (dev && v->nblocked < QUEUE_SCAN)
        blocked[v->nblocked++] = j->device; /* keep FIFO: later jobs of this GPU wait */
}

/* Whether a client waits for job id in scheduler_wait. */
static int is_waited(struct scheduler *s, int64_t id)
{
    int found = 0;
    pthread_mutex_lock(&s->ended_lock);
    for (size_t i = 0; i < s->nwaiters && !found; i++)
        found = s->waiters[i] == id;
    pthread_mutex_unlock(&s->ended_lock);
    return found;
}

static void start_jobs(struct scheduler *s)
{
    struct job_row *rows = NULL;
    size_t n = 0;
    char err[256];
    if (store_jobs_queued(s->app->db, QUEUE_SCAN, &rows, &n, err, sizeof err) < 0) {
        log_kv(LOG_ERROR, "store_failed", "op=queue error=%s", err);
        return;
    }
    const char **busy = calloc(s->nslots + 1, sizeof *busy);
    const char **blocked = calloc(QUEUE_SCAN + 1, sizeof *blocked);
    if (busy && blocked) {
        struct sched_view v;
        current_view(s, &v, busy);
        v.blocked_devices = blocked;
        int draining = atomic_load(&s->draining);
        for (size_t i = 0; i < n && free_slot(s); i++)
            if (!draining || is_waited(s, rows[i].id))
                consider(s, &rows[i], &v, busy, blocked);
    }
    free(busy);
    free(blocked);
    job_rows_free(rows, n);
}

/* ---- the loop -------------------------------------------------------------- */

static int poll_timeout(struct scheduler *s)
{
    int64_t now = mono_ms(), t = 1000;
    for (size_t i = 0; i < s->nslots; i++) {
        struct slot *sl = &s->slots[i];
        if (!sl->used)
            continue;
        int64_t left = sl->end.what != END_NONE ? sl->end.next_try_ms - now : sl->deadline_ms - now;
        if (sl->end.what == END_NONE && sl->ch.pidfd < 0)
            t = t < 20 ? t : 20;
        t = left < t ? (left > 0 ? left : 0) : t;
    }
    return (int)t;
}

static void wait_for_events(struct scheduler *s)
{
    struct pollfd *p = calloc(1 + 3 * s->nslots, sizeof *p);
    if (!p) {
        usleep(100000);
        return;
    }
    size_t n = 0;
    p[n++] = (struct pollfd){s->wake[0], POLLIN, 0};
    for (size_t i = 0; i < s->nslots; i++) {
        struct child *c = &s->slots[i].ch;
        if (!s->slots[i].used || s->slots[i].end.what != END_NONE)
            continue;
        p[n++] = (struct pollfd){c->out_fd, POLLIN, 0};
        p[n++] = (struct pollfd){c->err_fd, POLLIN, 0};
        p[n++] = (struct pollfd){c->pidfd, POLLIN, 0};
    }
    poll(p, n, poll_timeout(s));
    if (p[0].revents) {
        char buf[256];
        while (read(s->wake[0], buf, sizeof buf) > 0) {
        }
    }
    free(p);
}

static void tend_children(struct scheduler *s)
{
    int64_t now = mono_ms();
    for (size_t i = 0; i < s->nslots; i++) {
        struct slot *sl = &s->slots[i];
        if (!sl->used)
            continue;
        if (sl->end.what != END_NONE) {
            if (now >= sl->end.next_try_ms)
                try_end(s, sl);
            continue;
        }
        child_read(&sl->ch);
        if (!sl->timed_out && !sl->cancelled && now >= sl->deadline_ms) {
            sl->timed_out = 1;
            child_kill(&sl->ch);
        }
        if (child_reap(&sl->ch))
            finish_slot(s, sl);
    }
}

/* While the store cannot write and no kept outcome retries it anyway, a
 * tiny write now and then finds out when it can again (for /readyz). */
static void probe_store(struct scheduler *s)
{
    char err[256];
    int64_t now = mono_ms();
    if (store_write_health(s->app->db, NULL, 0, NULL) == 0) {
        s->probe_delay_ms = 0;
        return;
    }
    for (size_t i = 0; i < s->nslots; i++)
        if (s->slots[i].used && s->slots[i].end.what != END_NONE)
            return;
    if (s->probe_delay_ms && now < s->next_probe_ms)
        return;
    if (store_write_probe(s->app->db, err, sizeof err) == 0) {
        log_kv(LOG_INFO, "store_writable", "after=probe");
        s->probe_delay_ms = 0;
        return;
    }
    s->probe_delay_ms = s->probe_delay_ms ? s->probe_delay_ms * 2 : ENDING_FIRST_MS;
    if (s->probe_delay_ms > ENDING_MAX_MS)
        s->probe_delay_ms = ENDING_MAX_MS;
    s->next_probe_ms = now + s->probe_delay_ms;
}

static void count_busy(struct scheduler *s)
{
    int n = 0;
    for (size_t i = 0; i < s->nslots; i++)
        n += s->slots[i].used;
    atomic_store(&s->busy, n);
}

/* On stop: running jobs go back to the queue, to run again after restart,
 * without counting the attempt; a kept outcome gets one last try (if the
 * store still cannot take it, the job stays running in the store and the
 * next start re-queues it as interrupted). */
static void interrupt_all(struct scheduler *s)
{
    char err[256];
    for (size_t i = 0; i < s->nslots; i++) {
        struct slot *sl = &s->slots[i];
        if (!sl->used)
            continue;
        if (sl->end.what != END_NONE) {
            try_end(s, sl);
            if (sl->used)
                log_kv(LOG_ERROR, "job_outcome_lost", "job=%lld reason=store_cannot_write",
                       (long long)sl->job_id);
        } else {
            child_kill(&sl->ch);
            child_release(&sl->ch);
            int rc = store_job_stopped(s->app->db, sl->job_id,
                                       "the daemon was stopped while the job ran", err,
                                       sizeof err);
            if (rc < 0)
                log_kv(LOG_ERROR, "store_failed", "job=%lld error=%s", (long long)sl->job_id,
                       err);
            log_kv(LOG_INFO, "job_interrupted", "job=%lld requeued=%d", (long long)sl->job_id,
                   rc == 0);
        }
        if (!sl->used)
            continue;
        ending_clear(&sl->end);
        free(sl->params_json);
        sl->params_json = NULL;
        sl->used = 0;
    }
    announce_end(s);
}

static void *run(void *arg)
{
    struct scheduler *s = arg;
    while (!atomic_load(&s->stop)) {
        /* systemd's watchdog (Type=notify, WatchdogSec): a daemon whose job
         * loop stopped turning is restarted; the loop wakes at least once a
         * second */
        sdnotify_watchdog_pet(mono_ms());
        apply_cancels(s);
        start_jobs(s);
        wait_for_events(s);
        tend_children(s);
        probe_store(s);
        count_busy(s);
        atomic_fetch_add(&s->rounds, 1);
    }
    interrupt_all(s);
    atomic_store(&s->alive, 0);
    return NULL;
}

struct scheduler *scheduler_start(struct app *app, char *err, size_t errlen)
{
    struct scheduler *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->app = app;
    pthread_mutex_lock(&app->inv_lock);
    s->nslots = (size_t)app->cfg.cpu_workers + app->inv.count;
    pthread_mutex_unlock(&app->inv_lock);
    s->slots = calloc(s->nslots, sizeof *s->slots);
    if (!s->slots || pipe2(s->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
        snprintf(err, errlen, "scheduler set-up: %s", strerror(errno));
        free(s->slots);
        free(s);
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->ended_lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->ended, &ca);
    pthread_condattr_destroy(&ca);
    atomic_store(&s->alive, 1);
    if (pthread_create(&s->thread, NULL, run, s) != 0) {
        snprintf(err, errlen, "cannot start the scheduler thread");
        close(s->wake[0]), close(s->wake[1]);
        free(s->slots);
        free(s);
        return NULL;
    }
    return s;
}

void scheduler_stop(struct scheduler *s)
{
    if (!s)
        return;
    atomic_store(&s->stop, 1);
    scheduler_wake(s);
    pthread_join(s->thread, NULL);
    close(s->wake[0]);
    close(s->wake[1]);
    pthread_mutex_destroy(&s->lock);
    pthread_mutex_destroy(&s->ended_lock);
    pthread_cond_destroy(&s->ended);
    free(s->slots);
    free(s);
}

/* Waits until ended_count passes seen or deadline_ms (monotonic) comes. */
static void wait_for_an_end(struct scheduler *s, uint64_t seen, int64_t deadline_ms)
{
    struct timespec ts = {.tv_sec = (time_t)(deadline_ms / 1000),
                          .tv_nsec = (long)(deadline_ms % 1000) * 1000000};
    pthread_mutex_lock(&s->ended_lock);
    while (s->ended_count == seen && mono_ms() < deadline_ms)
        if (pthread_cond_timedwait(&s->ended, &s->ended_lock, &ts) != 0)
            break;
    pthread_mutex_unlock(&s->ended_lock);
}

/* Registers (add 1) or removes (add 0) one client waiting for job_id. A
 * full table only means a drain may not start that job. */
static void note_waiter(struct scheduler *s, int64_t job_id, int add)
{
    pthread_mutex_lock(&s->ended_lock);
    if (add && s->nwaiters < MAX_WAITERS) {
        s->waiters[s->nwaiters++] = job_id;
    } else if (!add) {
        for (size_t i = 0; i < s->nwaiters; i++)
            if (s->waiters[i] == job_id) {
                s->waiters[i] = s->waiters[--s->nwaiters];
                break;
            }
    }
    pthread_mutex_unlock(&s->ended_lock);
}

static int wait_once(struct scheduler *s, int64_t job_id, int64_t deadline, struct job_row *j,
                     char *err, size_t errlen);

int scheduler_wait(struct scheduler *s, int64_t job_id, int timeout_ms, struct job_row *j,
                   char *err, size_t errlen)
{
    assert(s);
    note_waiter(s, job_id, 1);
    scheduler_wake(s); /* a draining scheduler starts the job now that someone waits */
    int rc = wait_once(s, job_id, mono_ms() + timeout_ms, j, err, errlen);
    note_waiter(s, job_id, 0);
    return rc;
}

int scheduler_drain(struct scheduler *s, int64_t deadline_ms)
{
    if (!s)
        return 0;
    atomic_store(&s->draining, 1);
    long r0 = atomic_load(&s->rounds);
    scheduler_wake(s);
    for (;;) {
        pthread_mutex_lock(&s->ended_lock);
        size_t waiting = s->nwaiters;
        pthread_mutex_unlock(&s->ended_lock);
        /* busy is counted at the end of a round: trust it only once a whole
         * round has run since draining began */
        if (atomic_load(&s->rounds) >= r0 + 2 && atomic_load(&s->busy) == 0 && waiting == 0)
            return 0;
        if (atomic_load(&s->rounds) < r0 + 2)
            scheduler_wake(s);
        if (mono_ms() >= deadline_ms) {
            /* the grace is over: every client still waiting is answered
             * "not yet" now, so that HTTP can stop and the jobs be stopped */
            atomic_store(&s->abandon, 1);
            announce_end(s);
            return 1;
        }
        usleep(20000);
    }
}

static int wait_once(struct scheduler *s, int64_t job_id, int64_t deadline, struct job_row *j,
                     char *err, size_t errlen)
{
    for (;;) {
        pthread_mutex_lock(&s->ended_lock);
        uint64_t seen = s->ended_count;
        pthread_mutex_unlock(&s->ended_lock);
        int rc = store_job_get(s->app->db, job_id, j, err, errlen);
        if (rc == 1)
            snprintf(err, errlen, "there is no job %lld", (long long)job_id);
        if (rc != 0)
            return -1;
        int64_t now = mono_ms();
        if (job_state_is_terminal(j->state) || now >= deadline || !scheduler_running(s) ||
            atomic_load(&s->abandon))
            return job_state_is_terminal(j->state) ? 0 : 1;
        job_row_free(j);
        /* jobs also end outside the scheduler (a queued job cancelled by
         * DELETE): look at the store at least once a second */
        wait_for_an_end(s, seen, now + 1000 < deadline ? now + 1000 : deadline);
    }
}

int job_submit(struct app *app, const struct job_kind *k, const char *device,
               const json_t *params, int requested_timeout_s, int64_t *id, char *err,
               size_t errlen)
{
    assert(k && (device != NULL) == (k->needs_gpu != 0));
    char *text = json_dumps(params, JSON_COMPACT | JSON_SORT_KEYS);
    if (!text) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = store_job_insert(app->db, k->name, device, text,
                              job_timeout_s(&app->cfg, k, requested_timeout_s),
                              app->cfg.max_attempts, id, err, errlen);
    free(text);
    if (rc == 0)
        scheduler_wake(app->sched);
    return rc;
}
