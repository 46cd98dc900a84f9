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

#define MAX_CANCELS 256
#define QUEUE_SCAN 512

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
    pthread_mutex_t ended_lock;  /* guards ended_count; ended signals a change */
    pthread_cond_t ended;
    uint64_t ended_count;        /* jobs ended here so far */
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

static void apply_cancels(struct scheduler *s)
{
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->ncancels; i++)
        for (size_t k = 0; k < s->nslots; k++)
            if (s->slots[k].used && s->slots[k].job_id == s->cancels[i]) {
                s->slots[k].cancelled = 1;
                child_kill(&s->slots[k].ch);
            }
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

/* Fails the job with reason and, if the worker described it, its failure. */
static void fail_job(struct scheduler *s, struct slot *sl, const char *reason,
                     const struct job_failure *f)
{
    char err[256];
    json_t *detail = f ? job_failure_to_json(f) : NULL;
    char *text = detail ? json_dumps(detail, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if (store_job_fail(s->app->db, sl->job_id, reason, text, err, sizeof err) < 0)
        log_kv(LOG_ERROR, "store_failed", "job=%lld error=%s", (long long)sl->job_id, err);
    free(text);
    json_decref(detail);
    log_finish(sl, "failed", reason);
}

/* Fails the job because its worker failed it (counted for /metrics). */
static void worker_failed(struct scheduler *s, struct slot *sl, enum worker_failure why,
                          const char *reason)
{
    worker_failure_count(sl->kind, why);
    fail_job(s, sl, reason, NULL);
}

/* Lets the kind remove the files the job owned, now that it has ended. */
static void job_ended(struct scheduler *s, const struct slot *sl, int succeeded)
{
    if (sl->kind->finished)
        sl->kind->finished(s->app->cfg.upload_dir, sl->job_id, sl->params_json, succeeded);
}

/* Reads the worker's envelope and stores the outcome it reports; 1 if the
 * job succeeded. */
static int finish_with_output(struct scheduler *s, struct slot *sl)
{
    char reason[1200], err[512];
    struct worker_reply r;
    int rc = -1;
    if (worker_reply_read(sl->ch.out.data, sl->ch.out.len, &r, err, sizeof err) < 0) {
        snprintf(reason, sizeof reason, "worker sent an invalid result document: %s", err);
        worker_failed(s, sl, WORKER_INVALID_DOCUMENT, reason);
    } else if (!r.ok) {
        fail_job(s, sl, r.error, &r.failure);
    } else if (sl->kind->check_result && sl->kind->check_result(r.result, err, sizeof err) < 0) {
        snprintf(reason, sizeof reason, "worker sent an invalid result: %s", err);
        worker_failed(s, sl, WORKER_INVALID_DOCUMENT, reason);
    } else {
        char *text = json_dumps(r.result, JSON_COMPACT);
        snprintf(err, sizeof err, "out of memory");
        rc = text ? store_job_succeed(s->app->db, sl->job_id, text, sl->kind->save, err,
                                      sizeof err)
                  : -1;
        free(text);
        if (rc == 0)
            log_finish(sl, "succeeded", NULL);
        else if (rc == 1) /* someone else ended it meanwhile; its state stands */
            log_kv(LOG_WARN, "result_discarded", "job=%lld reason=not_running",
                   (long long)sl->job_id);
        else {
            snprintf(reason, sizeof reason, "storing the result failed: %s", err);
            fail_job(s, sl, reason, NULL);
        }
    }
    worker_reply_free(&r);
    return rc == 0;
}

static void finish_slot(struct scheduler *s, struct slot *sl)
{
    char reason[1024], how[128], tail[600], err[256];
    int succeeded = 0;
    if (sl->cancelled) {
        if (store_job_cancelled(s->app->db, sl->job_id, err, sizeof err) < 0)
            log_kv(LOG_ERROR, "store_failed", "job=%lld error=%s", (long long)sl->job_id, err);
        log_finish(sl, "cancelled", NULL);
    } else if (sl->timed_out) {
        snprintf(reason, sizeof reason, "deadline of %d s exceeded; the worker was killed",
                 sl->timeout_s);
        worker_failed(s, sl, WORKER_TIMED_OUT, reason);
    } else if (!WIFEXITED(sl->ch.status) || WEXITSTATUS(sl->ch.status) != 0) {
        child_exit_text(&sl->ch, how, sizeof how);
        child_err_summary(&sl->ch, tail, sizeof tail);
        snprintf(reason, sizeof reason, "worker %s%s%s", how, tail[0] ? "; stderr: " : "", tail);
        worker_failed(s, sl, WIFEXITED(sl->ch.status) ? WORKER_EXIT_STATUS : WORKER_CRASHED,
                      reason);
    } else if (sl->ch.out_overflow) {
        snprintf(reason, sizeof reason, "worker result larger than %u bytes", SCHED_RESULT_LIMIT);
        worker_failed(s, sl, WORKER_INVALID_DOCUMENT, reason);
    } else {
        succeeded = finish_with_output(s, sl);
    }
    job_ended(s, sl, succeeded);
    child_release(&sl->ch);
    free(sl->params_json);
    memset(sl, 0, sizeof *sl);
    sl->ch.out_fd = sl->ch.err_fd = sl->ch.pidfd = -1;
    announce_end(s);
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
    if (child_spawn(&sl->ch, s->app->self_exe, wa.argv, j->params_json, SCHED_RESULT_LIMIT, err,
                    sizeof err) < 0) {
        store_job_fail(s->app->db, j->id, err, NULL, err, sizeof err);
        if (k->finished)
            k->finished(cfg->upload_dir, j->id, j->params_json, 0);
        announce_end(s);
        return -1;
    }
    sl->used = 1;
    sl->job_id = j->id;
    snprintf(sl->device, sizeof sl->device, "%s", j->device ? j->device : "");
    sl->kind = k;
    sl->params_json = strdup(j->params_json ? j->params_json : "{}");
    sl->timeout_s = job_timeout_s(cfg, k, j->timeout_s);
    sl->started_ms = mono_ms();
    sl->deadline_ms = sl->started_ms + (int64_t)sl->timeout_s * 1000;
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
        for (size_t i = 0; i < n && free_slot(s); i++)
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
        if (sl->ch.pidfd < 0)
            t = t < 20 ? t : 20;
        int64_t left = sl->deadline_ms - now;
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
        if (!s->slots[i].used)
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
        child_read(&sl->ch);
        if (!sl->timed_out && !sl->cancelled && now >= sl->deadline_ms) {
            sl->timed_out = 1;
            child_kill(&sl->ch);
        }
        if (child_reap(&sl->ch))
            finish_slot(s, sl);
    }
}

/* On stop: running jobs go back to the queue, to run again after restart. */
static void interrupt_all(struct scheduler *s)
{
    char err[256];
    for (size_t i = 0; i < s->nslots; i++) {
        struct slot *sl = &s->slots[i];
        if (!sl->used)
            continue;
        child_kill(&sl->ch);
        child_release(&sl->ch);
        int requeued = 0;
        int stored = store_job_interrupt(s->app->db, sl->job_id,
                                         "daemon stopped while the job ran", &requeued, err,
                                         sizeof err) == 0;
        if (!stored)
            log_kv(LOG_ERROR, "store_failed", "job=%lld error=%s", (long long)sl->job_id, err);
        log_kv(LOG_INFO, "job_interrupted", "job=%lld requeued=%d", (long long)sl->job_id,
               requeued);
        if (stored && !requeued) /* out of attempts: it failed, for good */
            job_ended(s, sl, 0);
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
        apply_cancels(s);
        start_jobs(s);
        wait_for_events(s);
        tend_children(s);
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

int scheduler_wait(struct scheduler *s, int64_t job_id, int timeout_ms, struct job_row *j,
                   char *err, size_t errlen)
{
    assert(s);
    int64_t deadline = mono_ms() + timeout_ms;
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
        if (job_state_is_terminal(j->state) || now >= deadline || !scheduler_running(s))
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
