/*
 * Worker child processes (see spawn.h).
 */
#include "server/jobs/spawn.h"

#include "util/utf8.h"
#include "util/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    return -1;
#endif
}

/* In the child, between fork and exec: async-signal-safe calls only. */
static void exec_child(const char *exe, char *const argv[], int in_r, int out_w, int err_w,
                       pid_t parent)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127);
    if (dup2(in_r, 0) < 0 || dup2(out_w, 1) < 0 || dup2(err_w, 2) < 0)
        _exit(127);
    if (syscall(SYS_close_range, 3U, ~0U, 0U) < 0)
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigaction(SIGPIPE, &dfl, NULL);
    execv(exe, argv);
    _exit(127);
}

/* A descriptor positioned at the start of input (or of /dev/null). */
static int input_fd(const char *input, char *err, size_t errlen)
{
    if (!input)
        return open("/dev/null", O_RDONLY | O_CLOEXEC);
    int fd = memfd_create("gpuprobe-input", MFD_CLOEXEC);
    size_t len = strlen(input), done = 0;
    while (fd >= 0 && done < len) {
        ssize_t n = write(fd, input + done, len - done);
        if (n < 0 && errno != EINTR) {
            close(fd);
            fd = -1;
        }
        done += n > 0 ? (size_t)n : 0;
    }
    if (fd < 0 || lseek(fd, 0, SEEK_SET) < 0) {
        snprintf(err, errlen, "cannot hand the input over: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

int child_spawn(struct child *c, const char *exe, char *const argv[], const char *input,
                size_t out_limit, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->out_fd = c->err_fd = c->pidfd = -1;
    c->out_limit = out_limit;
    int out[2], errp[2], in = input_fd(input, err, errlen);
    if (in < 0)
        return -1;
    if (pipe2(out, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        close(in);
        return -1;
    }
    if (pipe2(errp, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        close(in), close(out[0]), close(out[1]);
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0)
        exec_child(exe, argv, in, out[1], errp[1], parent);
    if (pid > 0)
        setpgid(pid, pid); /* also here: a kill may come before the child runs */
    close(in);
    close(out[1]);
    close(errp[1]);
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        close(out[0]), close(errp[0]);
        return -1;
    }
    c->pid = pid;
    c->out_fd = out[0];
    c->err_fd = errp[0];
    fcntl(c->out_fd, F_SETFL, O_NONBLOCK);
    fcntl(c->err_fd, F_SETFL, O_NONBLOCK);
    c->pidfd = open_pidfd(pid);
    return 0;
}

static void keep_out(struct child *c, const char *buf, size_t n)
{
    if (!c->out_overflow && buf_append(&c->out, buf, n, c->out_limit) < 0)
        c->out_overflow = 1;
}

static void keep_err(struct child *c, const char *buf, size_t n)
{
    if (n >= CHILD_ERR_TAIL) {
        memcpy(c->err_tail, buf + n - (CHILD_ERR_TAIL - 1), CHILD_ERR_TAIL - 1);
        c->err_len = CHILD_ERR_TAIL - 1;
    } else {
        if (c->err_len + n >= CHILD_ERR_TAIL) {
            size_t drop = c->err_len + n - (CHILD_ERR_TAIL - 1);
            memmove(c->err_tail, c->err_tail + drop, c->err_len - drop);
            c->err_len -= drop;
        }
        memcpy(c->err_tail + c->err_len, buf, n);
        c->err_len += n;
    }
    c->err_tail[c->err_len] = '\0';
}

/* Reads fd until it would block; closes it at end of file. */
static void drain(struct child *c, int *fd, void (*keep)(struct child *, const char *, size_t))
{
    char buf[65536];
    while (*fd >= 0) {
        ssize_t n = read(*fd, buf, sizeof buf);
        if (n > 0) {
            keep(c, buf, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        close(*fd);
        *fd = -1;
    }
}

void child_read(struct child *c)
{
    drain(c, &c->out_fd, keep_out);
    drain(c, &c->err_fd, keep_err);
}

int child_reap(struct child *c)
{
    if (c->exited)
        return 1;
    int status;
    pid_t r = waitpid(c->pid, &status, WNOHANG);
    if (r != c->pid)
        return 0;
    c->exited = 1;
    c->status = status;
    /* Anything the worker left behind in its group must not hold the pipes open. */
    kill(-c->pid, SIGKILL);
    for (int i = 0; i < 100 && (c->out_fd >= 0 || c->err_fd >= 0); i++) {
        child_read(c);
        if (c->out_fd >= 0 || c->err_fd >= 0) {
            struct pollfd p[2] = {{c->out_fd, POLLIN, 0}, {c->err_fd, POLLIN, 0}};
            poll(p, 2, 10);
        }
    }
    return 1;
}

void child_kill(struct child *c)
{
    if (!c->exited && c->pid > 0)
        kill(-c->pid, SIGKILL);
}

void child_release(struct child *c)
{
    if (!c->exited && c->pid > 0) {
        kill(-c->pid, SIGKILL);
        waitpid(c->pid, &c->status, 0);
        c->exited = 1;
    }
    if (c->out_fd >= 0)
        close(c->out_fd);
    if (c->err_fd >= 0)
        close(c->err_fd);
    if (c->pidfd >= 0)
        close(c->pidfd);
    c->out_fd = c->err_fd = c->pidfd = -1;
    buf_free(&c->out);
}

void child_exit_text(const struct child *c, char *buf, size_t len)
{
    if (WIFSIGNALED(c->status)) {
        int sig = WTERMSIG(c->status);
        const char *abbrev = sigabbrev_np(sig);
        snprintf(buf, len, "killed by signal %d (SIG%s)", sig, abbrev ? abbrev : "?");
    } else if (WIFEXITED(c->status)) {
        snprintf(buf, len, "exited with status %d", WEXITSTATUS(c->status));
    } else {
        snprintf(buf, len, "ended with wait status %d", c->status);
    }
}

void child_err_summary(const struct child *c, char *buf, size_t len)
{
    const char *s = c->err_tail;
    size_t n = c->err_len;
    while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
        n--;
    /* The last two lines say most: the error and what led to it. */
    size_t start = n;
    for (int lines = 0; start > 0; start--)
        if (s[start - 1] == '\n' && ++lines == 2)
            break;
    size_t m = n - start < len - 1 ? n - start : len - 1;
    memcpy(buf, s + start, m);
    buf[m] = '\0';
    for (size_t i = 0; i < m; i++)
        if (buf[i] == '\n')
            buf[i] = ' ';
    utf8_scrub(buf);
}


static int wait_with_deadline(struct child *c, int64_t deadline)
{
    while (!child_reap(c)) {
        int64_t left = deadline - mono_ms();
        if (left <= 0)
            return -1;
        struct pollfd p[3] = {{c->out_fd, POLLIN, 0}, {c->err_fd, POLLIN, 0}, {c->pidfd, POLLIN, 0}};
        poll(p, 3, c->pidfd >= 0 ? (int)(left < 1000 ? left : 1000) : 20);
        child_read(c);
    }
    return 0;
}

int child_run(const char *exe, char *const argv[], int timeout_s, size_t out_limit, char **out,
              char *err, size_t errlen)
{
    struct child c;
    if (child_spawn(&c, exe, argv, NULL, out_limit, err, errlen) < 0)
        return -1;
    int rc = -1;
    char how[128], tail[512];
    if (wait_with_deadline(&c, mono_ms() + (int64_t)timeout_s * 1000) < 0) {
        snprintf(err, errlen, "deadline of %d s exceeded", timeout_s);
    } else if (!WIFEXITED(c.status) || WEXITSTATUS(c.status) != 0) {
        child_exit_text(&c, how, sizeof how);
        child_err_summary(&c, tail, sizeof tail);
        snprintf(err, errlen, "%s%s%s", how, tail[0] ? ": " : "", tail);
    } else if (c.out_overflow) {
        snprintf(err, errlen, "output larger than %zu bytes", out_limit);
    } else {
        *out = c.out.data ? c.out.data : strdup("");
        c.out = (struct buf){0};
        rc = *out ? 0 : -1;
        if (rc < 0)
            snprintf(err, errlen, "out of memory");
    }
    child_release(&c);
    return rc;
}
