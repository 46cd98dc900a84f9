/*
 * One worker child per GPU for `gpuprobe probe ... --device all` (see
 * probe_fanout.h for the design). The loop below starts every child first,
 * then polls all their descriptors at once until each has exited, and only
 * then reads each one's envelope: nothing a child does can block another.
 */
#include "server/cli/probe_fanout.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "server/jobs/protocol.h"
#include "server/jobs/scheduler.h"
#include "server/jobs/spawn.h"

/* The running binary, as the daemon starts its workers (server/app.c). */
#define SELF_EXE "/proc/self/exe"

/* Starts device i's child; 0, or -1 with the reason in o->error. */
static int start_one(struct child *c, const struct job_kind *k, const char *params,
                     const char *cubin_dir, const char *device, struct probe_outcome *o)
{
    struct worker_call call = {.mode = WORKER_JOB, .kind = k->name, .device = device,
                               .params = "-", .cubin_dir = cubin_dir};
    struct worker_argv wa;
    char err[512];
    worker_argv(&wa, SELF_EXE, &call);
    if (child_spawn(c, SELF_EXE, wa.argv, params, SCHED_RESULT_LIMIT, err, sizeof err) == 0)
        return 0;
    snprintf(o->error, sizeof o->error, "cannot start a worker: %s", err);
    return -1;
}

/* Waits until every started child has exited, reading their pipes as they
 * write (a child blocked on a full pipe would never exit). */
static void wait_all(struct child *c, const int *started, size_t n)
{
    struct pollfd *p = calloc(3 * (n ? n : 1), sizeof *p);
    for (;;) {
        size_t np = 0, running = 0;
        int blind = !p; /* an exit that no pidfd reports: look again soon */
        for (size_t i = 0; i < n; i++) {
            if (!started[i] || child_reap(&c[i]))
                continue;
            running++;
            blind |= c[i].pidfd < 0;
            if (p) {
                p[np++] = (struct pollfd){c[i].out_fd, POLLIN, 0};
                p[np++] = (struct pollfd){c[i].err_fd, POLLIN, 0};
                p[np++] = (struct pollfd){c[i].pidfd, POLLIN, 0};
            }
        }
        if (!running)
            break;
        poll(p, p ? np : 0, blind ? 20 : 1000);
        for (size_t i = 0; i < n; i++)
            if (started[i] && !c[i].exited)
                child_read(&c[i]);
    }
    free(p);
}

/* Turns an exited child's envelope into o. */
static void take_outcome(struct child *c, struct probe_outcome *o)
{
    struct worker_reply r;
    char how[128], tail[512], err[512];
    if (!WIFEXITED(c->status) || WEXITSTATUS(c->status) != 0) {
        child_exit_text(c, how, sizeof how);
        child_err_summary(c, tail, sizeof tail);
        snprintf(o->error, sizeof o->error, "worker %s%s%.600s", how, tail[0] ? ": " : "", tail);
    } else if (c->out_overflow)
        snprintf(o->error, sizeof o->error, "worker output larger than %u bytes",
                 (unsigned)SCHED_RESULT_LIMIT);
    else if (worker_reply_read(c->out.data ? c->out.data : "", c->out.len, &r, err,
                               sizeof err) < 0)
        snprintf(o->error, sizeof o->error, "the worker's answer is malformed: %s", err);
    else {
        if (r.ok)
            o->result = json_incref(r.result);
        else
            snprintf(o->error, sizeof o->error, "%s",
                     r.error[0] ? r.error : "the probe failed without a reason");
        worker_reply_free(&r);
    }
}

int probe_fanout(const struct job_kind *k, const json_t *params, const char *cubin_dir,
                 char *const *devices, size_t n, struct probe_outcome *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (struct probe_outcome){0};
    char *ptext = json_dumps(params, JSON_COMPACT);
    struct child *c = calloc(n ? n : 1, sizeof *c);
    int *started = calloc(n ? n : 1, sizeof *started);
    if (!ptext || !c || !started) {
        for (size_t i = 0; i < n; i++)
            snprintf(out[i].error, sizeof out[i].error, "out of memory");
        free(ptext);
        free(c);
        free(started);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        started[i] = start_one(&c[i], k, ptext, cubin_dir, devices[i], &out[i]) == 0;
    wait_all(c, started, n);
    for (size_t i = 0; i < n; i++) {
        if (!started[i])
            continue;
        take_outcome(&c[i], &out[i]);
        child_release(&c[i]);
    }
    free(ptext);
    free(c);
    free(started);
    return 0;
}

void probe_outcomes_free(struct probe_outcome *out, size_t n)
{
    for (size_t i = 0; out && i < n; i++) {
        json_decref(out[i].result);
        out[i].result = NULL;
    }
}
