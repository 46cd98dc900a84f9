/*
 * Unit tests of worker child processes (server/jobs/spawn.c) with real processes
 * run through /bin/sh -c: child_run returns a clean child's stdout; turns a
 * non-zero exit into "exited with status N" followed by the stderr tail, a
 * signal into "killed by signal N (SIGNAME)", an overrun into "deadline"
 * (on time, with the child and what it started gone), oversized output into
 * "larger than", and a missing executable into status 127; a child that
 * leaves a background grandchild holding its stdout still ends at once
 * because the reaper kills the child's process group; the stderr tail keeps
 * the newest bytes of a long stderr and child_err_summary its last two
 * lines; child_spawn, child_kill and child_release leave no zombie behind,
 * and a kill sent the moment child_spawn returns still reaches the child.
 * Every pid file lives in a fresh mkdtemp directory removed by the teardown.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "server/jobs/spawn.h"

#define SH "/bin/sh"

struct tmp {
    char dir[64];
    char pidfile[128];
};

static int setup_tmp(void **state)
{
    struct tmp *t = calloc(1, sizeof *t);
    if (!t)
        return -1;
    snprintf(t->dir, sizeof t->dir, "/tmp/gpuprobe-test-spawn-XXXXXX");
    if (!mkdtemp(t->dir)) {
        free(t);
        return -1;
    }
    snprintf(t->pidfile, sizeof t->pidfile, "%s/pids", t->dir);
    *state = t;
    return 0;
}

static int teardown_tmp(void **state)
{
    struct tmp *t = *state;
    unlink(t->pidfile);
    rmdir(t->dir);
    free(t);
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* child_run of `sh -c script`. */
static int run_sh(const char *script, int timeout_s, size_t out_limit, char **out, char *err,
                  size_t errlen)
{
    char *argv[] = {"sh", "-c", (char *)script, NULL};
    err[0] = '\0';
    return child_run(SH, argv, timeout_s, out_limit, out, err, errlen);
}

/* 1 if pid is a live process (a zombie or a missing pid is not). */
static int alive(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')'); /* "pid (comm) S ..." */
    if (!paren || paren[1] != ' ')
        return 0;
    return paren[2] != 'Z' && paren[2] != 'X';
}

/* Waits up to ms for pid to stop being alive. */
static int gone_within(pid_t pid, int ms)
{
    for (int i = 0; i < ms / 10; i++) {
        if (!alive(pid))
            return 1;
        poll(NULL, 0, 10);
    }
    return !alive(pid);
}

/* Reads up to n pids written by the child into path. */
static int read_pids(const char *path, pid_t *pids, int n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int got = 0, v;
    while (got < n && fscanf(f, "%d", &v) == 1)
        pids[got++] = (pid_t)v;
    fclose(f);
    return got;
}

/* No child of this process remains, reaped or not. */
static void assert_no_children(void)
{
    errno = 0;
    pid_t r = waitpid(-1, NULL, WNOHANG);
    if (r != -1 || errno != ECHILD)
        fail_msg("waitpid(-1, WNOHANG) = %d (errno %d): a child is left over", (int)r, errno);
}

/* ---- child_run ------------------------------------------------------------------ */

static void test_run_success(void **state)
{
    (void)state;
    char err[512], *out = NULL;
    if (run_sh("echo hello", 5, 1024, &out, err, sizeof err) != 0)
        fail_msg("child_run: %s", err);
    assert_non_null(out);
    assert_string_equal(out, "hello\n");
    free(out);

    /* no output at all: an empty string, not NULL */
    out = NULL;
    if (run_sh("true", 5, 1024, &out, err, sizeof err) != 0)
        fail_msg("child_run: %s", err);
    assert_non_null(out);
    assert_string_equal(out, "");
    free(out);

    /* stderr of a successful child is not mixed into its output */
    out = NULL;
    if (run_sh("echo noise >&2; printf 'a\\nb'", 5, 1024, &out, err, sizeof err) != 0)
        fail_msg("child_run: %s", err);
    assert_string_equal(out, "a\nb");
    free(out);
    assert_no_children();
}

/* The child reads /dev/null, not the test's stdin. */
static void test_run_stdin_is_dev_null(void **state)
{
    (void)state;
    char err[512], *out = NULL;
    if (run_sh("cat; echo done", 5, 1024, &out, err, sizeof err) != 0)
        fail_msg("child_run: %s", err);
    assert_string_equal(out, "done\n");
    free(out);
}

static void test_run_exit_status(void **state)
{
    (void)state;
    char err[512], *out = NULL;
    assert_int_equal(run_sh("echo boom >&2; exit 3", 5, 1024, &out, err, sizeof err), -1);
    assert_null(out);
    assert_string_equal(err, "exited with status 3: boom");

    /* no stderr: no tail */
    assert_int_equal(run_sh("echo out; exit 42", 5, 1024, &out, err, sizeof err), -1);
    assert_null(out);
    assert_string_equal(err, "exited with status 42");
    assert_no_children();
}

static void test_run_signal(void **state)
{
    (void)state;
    char err[512], *out = NULL;
    assert_int_equal(run_sh("kill -SEGV $$", 5, 1024, &out, err, sizeof err), -1);
    assert_null(out);
    assert_string_equal(err, "killed by signal 11 (SIGSEGV)");

    assert_int_equal(run_sh("echo dying >&2; kill -TERM $$", 5, 1024, &out, err, sizeof err), -1);
    assert_string_equal(err, "killed by signal 15 (SIGTERM): dying");
    assert_no_children();
}

static void test_run_missing_executable(void **state)
{
    (void)state;
    char err[512], *out = NULL;
    char *argv[] = {"nope", NULL};
    err[0] = '\0';
    assert_int_equal(child_run("/nonexistent/gpuprobe-test-binary", argv, 5, 1024, &out, err,
                               sizeof err),
                     -1);
    assert_null(out);
    assert_string_equal(err, "exited with status 127");
    assert_no_children();
}

static void test_run_deadline(void **state)
{
    struct tmp *t = *state;
    char err[512], script[256], *out = NULL;
    /* the shell waits on a background sleep: both are in the child's group */
    snprintf(script, sizeof script, "sleep 10 & echo $$ $! > %s; wait", t->pidfile);
    double t0 = now_s();
    assert_int_equal(run_sh(script, 1, 1024, &out, err, sizeof err), -1);
    double took = now_s() - t0;
    assert_null(out);
    assert_string_equal(err, "deadline of 1 s exceeded");
    if (took < 0.9 || took > 1.5)
        fail_msg("deadline of 1 s took %.3f s", took);
    pid_t pids[2] = {0, 0}; /* read_pids fills both or the test stops */
    assert_int_equal(read_pids(t->pidfile, pids, 2), 2);
    /* the child itself was reaped by child_run */
    errno = 0;
    assert_int_equal(kill(pids[0], 0), -1);
    assert_int_equal(errno, ESRCH);
    /* and the grandchild was killed with it */
    if (!gone_within(pids[1], 1000))
        fail_msg("grandchild %d outlived the deadline", (int)pids[1]);
    assert_no_children();
}

static void test_run_output_limit(void **state)
{
    (void)state;
    char err[512], *out = NULL;
    assert_int_equal(run_sh("head -c 5000 /dev/zero", 5, 1000, &out, err, sizeof err), -1);
    assert_null(out);
    assert_string_equal(err, "output larger than 1000 bytes");
    assert_non_null(strstr(err, "larger"));

    /* the limit itself is allowed, one byte more is not */
    if (run_sh("printf 0123456789", 5, 10, &out, err, sizeof err) != 0)
        fail_msg("10 bytes under a limit of 10: %s", err);
    assert_string_equal(out, "0123456789");
    free(out);
    out = NULL;
    assert_int_equal(run_sh("printf 0123456789", 5, 9, &out, err, sizeof err), -1);
    assert_string_equal(err, "output larger than 9 bytes");
    assert_null(out);

    /* much more than a pipe holds: the child is drained, not stuck */
    double t0 = now_s();
    assert_int_equal(run_sh("head -c 3000000 /dev/zero", 5, 1000, &out, err, sizeof err), -1);
    assert_string_equal(err, "output larger than 1000 bytes");
    assert_true(now_s() - t0 < 2.0);
    assert_no_children();
}

/* A large output within the limit arrives whole. */
static void test_run_large_output(void **state)
{
    (void)state;
    char err[512], *out = NULL;
    if (run_sh("head -c 300000 /dev/zero | tr '\\0' x", 5, 300000, &out, err, sizeof err) != 0)
        fail_msg("child_run: %s", err);
    assert_int_equal(strlen(out), 300000);
    assert_int_equal(out[0], 'x');
    assert_int_equal(out[299999], 'x');
    free(out);
}

static void test_run_background_grandchild(void **state)
{
    (void)state;
    char err[512], *out = NULL;
    double t0 = now_s();
    if (run_sh("sleep 30 & echo $!; echo x", 10, 1024, &out, err, sizeof err) != 0)
        fail_msg("child_run: %s", err);
    double took = now_s() - t0;
    if (took > 0.5)
        fail_msg("a child whose grandchild holds stdout took %.3f s", took);
    int pid = 0;
    char tail[8] = "";
    assert_int_equal(sscanf(out, "%d\n%7s", &pid, tail), 2);
    assert_string_equal(tail, "x");
    assert_true(pid > 0);
    free(out);
    if (!gone_within((pid_t)pid, 1000))
        fail_msg("background grandchild %d still runs", pid);
    assert_no_children();
}

/* ---- stderr tail -------------------------------------------------------------------- */

static void test_run_long_stderr_summary(void **state)
{
    (void)state;
    char err[1024], *out = NULL;
    assert_int_equal(run_sh("i=0; while [ $i -lt 400 ]; do echo \"noise line $i\" >&2; "
                            "i=$((i+1)); done; echo 'the cause' >&2; echo 'the error' >&2; "
                            "exit 1",
                            5, 1024, &out, err, sizeof err),
                     -1);
    assert_string_equal(err, "exited with status 1: the cause the error");
}

static void test_err_tail_keeps_newest(void **state)
{
    (void)state;
    struct child c;
    char err[256];
    /* ~6 KB of stderr in many writes, then a recognisable end */
    char *argv[] = {"sh", "-c",
                    "i=0; while [ $i -lt 500 ]; do echo \"line $i of noise\" >&2; i=$((i+1)); "
                    "done; echo 'last but one' >&2; printf 'very last\\n\\n  ' >&2",
                    NULL};
    if (child_spawn(&c, SH, argv, NULL, 1024, err, sizeof err) != 0)
        fail_msg("child_spawn: %s", err);
    double t0 = now_s();
    while (!child_reap(&c)) {
        if (now_s() - t0 > 5)
            fail_msg("child did not end");
        struct pollfd p[2] = {{c.out_fd, POLLIN, 0}, {c.err_fd, POLLIN, 0}};
        poll(p, 2, 10);
        child_read(&c);
    }
    assert_int_equal(c.err_len, CHILD_ERR_TAIL - 1);
    assert_int_equal(strlen(c.err_tail), CHILD_ERR_TAIL - 1);
    const char *end = "line 499 of noise\nlast but one\nvery last\n\n  ";
    assert_string_equal(c.err_tail + c.err_len - strlen(end), end);
    char sum[128];
    child_err_summary(&c, sum, sizeof sum);
    assert_string_equal(sum, "last but one very last");
    char how[64];
    child_exit_text(&c, how, sizeof how);
    assert_string_equal(how, "exited with status 0");
    child_release(&c);
    assert_no_children();
}

/* child_err_summary on hand-filled tails. */
static void summary_of(const char *tail, size_t buflen, const char *want)
{
    struct child c;
    char buf[64];
    memset(&c, 0, sizeof c);
    snprintf(c.err_tail, sizeof c.err_tail, "%s", tail);
    c.err_len = strlen(c.err_tail);
    memset(buf, '#', sizeof buf);
    child_err_summary(&c, buf, buflen);
    assert_string_equal(buf, want);
    assert_int_equal(buf[buflen], '#');
}

static void test_err_summary(void **state)
{
    (void)state;
    summary_of("", 32, "");
    summary_of("\n\n", 32, "");
    summary_of("oops", 32, "oops");
    summary_of("oops\n", 32, "oops");
    summary_of("one\ntwo\n", 32, "one two");
    summary_of("one\ntwo\nthree\nfour\n", 32, "three four");
    summary_of("one\ntwo\nthree\nfour \n \n", 32, "three four");
    summary_of("a\nb\nc", 32, "b c");
    /* cut to the buffer, from the start of the last two lines */
    summary_of("zero\nfirst line\nsecond line\n", 8, "first l");
    summary_of("x\ny\n", 1, "");
}

/* ---- spawn / kill / release ---------------------------------------------------------- */

/* Waits (up to 1 s) until the child leads its own process group. */
static void wait_own_group(pid_t pid)
{
    for (int i = 0; i < 100 && getpgid(pid) != pid; i++)
        poll(NULL, 0, 10);
    if (getpgid(pid) != pid)
        fail_msg("child %d never got its own process group", (int)pid);
}

static void test_spawn_kill_release(void **state)
{
    (void)state;
    struct child c;
    char err[256];
    char *argv[] = {"sh", "-c", "sleep 30", NULL};
    assert_no_children();
    if (child_spawn(&c, SH, argv, NULL, 1024, err, sizeof err) != 0)
        fail_msg("child_spawn: %s", err);
    assert_true(c.pid > 0);
    assert_true(c.out_fd >= 0);
    assert_true(c.err_fd >= 0);
    assert_int_equal(c.exited, 0);
    wait_own_group(c.pid);
    pid_t pid = c.pid;
    double t0 = now_s();
    child_kill(&c);
    child_release(&c);
    assert_true(now_s() - t0 < 0.5);
    assert_int_equal(c.exited, 1);
    assert_true(WIFSIGNALED(c.status));
    assert_int_equal(WTERMSIG(c.status), SIGKILL);
    char how[64];
    child_exit_text(&c, how, sizeof how);
    assert_string_equal(how, "killed by signal 9 (SIGKILL)");
    assert_int_equal(c.out_fd, -1);
    assert_int_equal(c.err_fd, -1);
    assert_int_equal(c.pidfd, -1);
    assert_null(c.out.data);
    errno = 0;
    assert_int_equal(kill(pid, 0), -1);
    assert_int_equal(errno, ESRCH);
    assert_no_children();

    /* release alone also kills and reaps a running child */
    if (child_spawn(&c, SH, argv, NULL, 1024, err, sizeof err) != 0)
        fail_msg("child_spawn: %s", err);
    wait_own_group(c.pid);
    t0 = now_s();
    child_release(&c);
    assert_true(now_s() - t0 < 0.5);
    assert_int_equal(c.exited, 1);
    assert_true(WIFSIGNALED(c.status));
    assert_no_children();

    /* kill, then reap through child_reap */
    if (child_spawn(&c, SH, argv, NULL, 1024, err, sizeof err) != 0)
        fail_msg("child_spawn: %s", err);
    wait_own_group(c.pid);
    child_kill(&c);
    t0 = now_s();
    while (!child_reap(&c)) {
        if (now_s() - t0 > 5)
            fail_msg("killed child not reaped");
        poll(NULL, 0, 5);
    }
    assert_true(WIFSIGNALED(c.status));
    assert_int_equal(c.out_fd, -1); /* drained to end of file on reap */
    assert_int_equal(c.err_fd, -1);
    child_release(&c);
    assert_no_children();
}

/* A kill issued at once after child_spawn returns must reach the child,
 * before it has had time to run anything. (The child makes itself a group
 * leader after the fork; a kill of the group sent before that finds no
 * group.) The child sleeps 1 s, so a lost kill shows as a slow release. */
static void test_kill_right_after_spawn(void **state)
{
    (void)state;
    struct child c;
    char err[256];
    char *argv[] = {"sh", "-c", "sleep 1", NULL};
    if (child_spawn(&c, SH, argv, NULL, 1024, err, sizeof err) != 0)
        fail_msg("child_spawn: %s", err);
    double t0 = now_s();
    child_kill(&c);
    child_release(&c);
    double took = now_s() - t0;
    int killed = WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGKILL;
    assert_no_children();
    if (took > 0.5 || !killed)
        fail_msg("child_kill right after child_spawn did not kill: release took %.3f s, "
                 "wait status %d",
                 took, c.status);
}

/* Input larger than a pipe buffer (and than one argv string may be) reaches
 * the child's stdin whole, and the parent does not block handing it over. */
static void test_spawn_input_on_stdin(void **state)
{
    (void)state;
    struct child c;
    char err[256];
    size_t len = 300 * 1024;
    char *input = malloc(len + 1);
    assert_non_null(input);
    for (size_t i = 0; i < len; i++)
        input[i] = (char)('a' + i % 26);
    input[len] = '\0';
    char *argv[] = {"sh", "-c", "cat", NULL};
    if (child_spawn(&c, SH, argv, input, len + 1, err, sizeof err) != 0)
        fail_msg("child_spawn: %s", err);
    double t0 = now_s();
    while (!child_reap(&c) && now_s() - t0 < 5) {
        child_read(&c);
        usleep(1000);
    }
    assert_int_equal(c.exited, 1);
    assert_int_equal(c.out.len, len);
    assert_memory_equal(c.out.data, input, len);
    child_release(&c);
    free(input);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_success),
        cmocka_unit_test(test_run_stdin_is_dev_null),
        cmocka_unit_test(test_run_exit_status),
        cmocka_unit_test(test_run_signal),
        cmocka_unit_test(test_run_missing_executable),
        cmocka_unit_test_setup_teardown(test_run_deadline, setup_tmp, teardown_tmp),
        cmocka_unit_test(test_run_output_limit),
        cmocka_unit_test(test_run_large_output),
        cmocka_unit_test(test_run_background_grandchild),
        cmocka_unit_test(test_run_long_stderr_summary),
        cmocka_unit_test(test_err_tail_keeps_newest),
        cmocka_unit_test(test_err_summary),
        cmocka_unit_test(test_spawn_kill_release),
        cmocka_unit_test(test_kill_right_after_spawn),
        cmocka_unit_test(test_spawn_input_on_stdin),
    };
    return cmocka_run_group_tests_name("spawn", tests, NULL, NULL);
}
