/*
 * Child processes: the only way gpuprobe runs a job or touches a GPU.
 *
 * DESIGN
 * A child is fork+exec of this same binary with the `worker` subcommand. It
 * gets its own process group (so a kill reaches anything it started), dies
 * with the daemon (PR_SET_PDEATHSIG), reads its input and writes its result
 * to a stdout pipe and its diagnostics to a stderr pipe. The parent keeps the
 * stdout bytes up to a cap and the last bytes of stderr (the useful part of
 * a crash report), and learns of the exit through a pidfd it can poll.
 * Nothing between fork and exec allocates or locks: the daemon has threads.
 */
#ifndef GPUPROBE_SERVER_JOBS_SPAWN_H
#define GPUPROBE_SERVER_JOBS_SPAWN_H

#include <stddef.h>
#include <sys/types.h>

#include "util/text.h"

#define CHILD_ERR_TAIL 2048

struct child {
    pid_t pid;
    int pidfd;                 /* -1 if the kernel has no pidfd_open */
    int out_fd, err_fd;        /* -1 once at end of file */
    struct buf out;            /* stdout bytes, NUL-terminated */
    size_t out_limit;
    int out_overflow;          /* the child wrote more than out_limit */
    char err_tail[CHILD_ERR_TAIL];
    size_t err_len;
    int exited;
    int status;                /* as from waitpid, once exited */
};

/* Starts exe with argv (argv[0] included, NULL-terminated). The child reads
 * input (any size; NULL = nothing) on stdin: it is handed over in a memory
 * file, not a pipe, so the parent never blocks and nothing shows in `ps`.
 * out_limit caps the stdout bytes kept. -1 with the reason in err. */
int child_spawn(struct child *c, const char *exe, char *const argv[], const char *input,
                size_t out_limit, char *err, size_t errlen);

/* Reads what is ready on the child's pipes without blocking. */
void child_read(struct child *c);
/* Reaps the child if it has exited (non-blocking); returns c->exited. Once it
 * has, drains the pipes. */
int child_reap(struct child *c);
/* SIGKILL to the child's process group. */
void child_kill(struct child *c);
/* Closes descriptors and frees buffers (the child must have been reaped or
 * killed; a killed child is reaped here). */
void child_release(struct child *c);

/* "exited with status 3", "killed by signal 11 (SIGSEGV)". */
void child_exit_text(const struct child *c, char *buf, size_t len);
/* The last line(s) of stderr, trimmed, for an error message ("" if none). */
void child_err_summary(const struct child *c, char *buf, size_t len);

/* Runs a child to completion with a deadline; for short tasks such as device
 * discovery. On success (exit status 0) returns 0 with *out malloc'd.
 * -1 with the reason otherwise ("exited with status 1: <stderr's tail>"),
 * which the caller prefixes with what it ran. */
int child_run(const char *exe, char *const argv[], int timeout_s, size_t out_limit, char **out,
              char *err, size_t errlen);

#endif
