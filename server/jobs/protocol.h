/*
 * The worker protocol: the one way the daemon and a `gpuprobe worker` child
 * speak to each other, in the role ntpd's imsg plays between its processes.
 *
 * DESIGN
 * A call goes down as an argv built from a typed struct worker_call
 * (worker_argv) and is read back by the worker with worker_call_parse, so
 * the two sides cannot disagree on an option. Job parameters travel on
 * stdin ("--params -"), never in argv, where `ps` would show them.
 * The answer comes up as one JSON document on stdout, the envelope:
 *   {"ok": true,  "result": {...}}
 *   {"ok": false, "error": "reason"[, "error_class": "input"|"params"|"storage"]
 *                 [, "error_line": N][, "error_offset": N]}
 * written from a struct worker_reply by worker_reply_write and read back
 * into the same struct by worker_reply_read, which checks every member:
 * an unknown member, a wrong type or a missing one is a hard error naming
 * it, never a guess. A crash, a signal or a non-zero exit is the rest of
 * the protocol; the scheduler turns each into the job's outcome.
 * Every job's deadline follows one rule (job_timeout_s), used where jobs
 * are created (job_submit, scheduler.h) and where they are run.
 * Guarantees: what worker_reply_write writes, worker_reply_read accepts and
 * reads back equal (a unit test holds them to it).
 */
#ifndef GPUPROBE_SERVER_JOBS_PROTOCOL_H
#define GPUPROBE_SERVER_JOBS_PROTOCOL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "server/config.h"
#include "server/jobs/registry.h"


/* ---- the call ---------------------------------------------------------------- */

enum worker_mode { WORKER_JOB, WORKER_DISCOVER };

struct worker_call {
    enum worker_mode mode;
    const char *kind;          /* WORKER_JOB: the job kind's name */
    int64_t job_id;            /* 0 when run by hand */
    const char *device;        /* the GPU's UUID (or index, by hand); NULL for CPU kinds */
    const char *params;        /* JSON text, or "-" to read it from stdin; NULL: defaults */
    const char *upload_dir;    /* set by the daemon: file parameters are names inside it */
    const char *cubin_dir;     /* where compiled modules are kept; NULL: not kept */
};

/* Enough for every option worker_argv writes. */
#define WORKER_ARGV_MAX 18

struct worker_argv {
    char *argv[WORKER_ARGV_MAX];   /* NULL-terminated */
    char job[24];                  /* storage for the job id's digits */
};

/* Fills a->argv to start exe on call. The strings point into call, exe and
 * a itself, which must outlive the spawn. */
void worker_argv(struct worker_argv *a, const char *exe, const struct worker_call *call);

/* Reads a worker's arguments (argv[0] = "worker") into call (pointing into
 * argv). 0 on success; 1 when --help was asked for; -1 with the reason. */
int worker_call_parse(int argc, char **argv, struct worker_call *call, char *err, size_t errlen);

/* The usage text of `gpuprobe worker`. */
extern const char worker_usage[];

/* ---- the reply --------------------------------------------------------------- */

struct worker_reply {
    int ok;
    json_t *result;                /* ok: the result object (owned) */
    char error[1024];              /* !ok: why */
    struct job_failure failure;    /* !ok: what kind of failure, and where */
};

/* Writes the envelope of r on f, one line, and flushes. 0, or -1 when f
 * cannot be written. */
int worker_reply_write(FILE *f, const struct worker_reply *r);

/* Parses the envelope in buf[0..len) into r. 0, or -1 with the reason in err
 * (r is then empty). Free r with worker_reply_free either way. */
int worker_reply_read(const char *buf, size_t len, struct worker_reply *r, char *err,
                      size_t errlen);
void worker_reply_free(struct worker_reply *r);

/* A failure's class, line and offset as JSON members ("error_class",
 * "error_line", "error_offset"; those it has), or NULL when it has none. */
json_t *job_failure_to_json(const struct job_failure *f);
/* The inverse, for a failure read back from the store; a NULL or empty
 * object gives JOB_FAILURE_NONE. 0, or -1 with the reason. */
int job_failure_from_json(const json_t *j, struct job_failure *f, char *err, size_t errlen);

/* ---- jobs -------------------------------------------------------------------- */

/* A job's deadline: the one asked for (> 0), else the daemon's job_timeout_s
 * (> 0), else the kind's default. */
int job_timeout_s(const struct config *cfg, const struct job_kind *k, int requested_s);

#endif
