/*
 * Output files written whole or not at all (see outfile.h).
 */
#include "util/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The part files being written now, for a signal's handler to remove:
 * copies of their names (never pointers into a caller's struct, which may
 * be gone by the time a signal comes), set and cleared by the thread that
 * opens and commits them. */
#define LIVE_MAX 4
static char live[LIVE_MAX][PATH_MAX + 8];
static volatile sig_atomic_t live_on[LIVE_MAX];

static void live_add(const char *part)
{
    for (int i = 0; i < LIVE_MAX; i++)
        if (!live_on[i]) {
            snprintf(live[i], sizeof live[i], "%s", part);
            live_on[i] = 1;
            return;
        }
}

static void live_drop(const char *part)
{
    for (int i = 0; i < LIVE_MAX; i++)
        if (live_on[i] && strcmp(live[i], part) == 0) {
            live_on[i] = 0;
            return;
        }
}

static void on_signal(int sig)
{
    for (int i = 0; i < LIVE_MAX; i++)
        if (live_on[i])
            unlink(live[i]); /* async-signal-safe */
    raise(sig); /* the default action, restored by SA_RESETHAND */
}

void outfile_remove_on_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction was;
        /* one the process was started ignoring (nohup, a script's background job) stays ignored */
        if (sigaction(sigs[i], NULL, &was) == 0 && was.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
    }
}

int outfile_open(struct outfile *o, const char *path, char *err, size_t errlen)
{
    struct stat st;
    memset(o, 0, sizeof *o);
    o->path = path;
    if (!*path) {
        snprintf(err, errlen, "output: the path is empty");
        return -1;
    }
    o->to_stdout = strcmp(path, "-") == 0;
    o->direct = !o->to_stdout && stat(path, &st) == 0 && !S_ISREG(st.st_mode) &&
                !S_ISDIR(st.st_mode);
    if (!o->to_stdout && !o->direct &&
        snprintf(o->part, sizeof o->part, "%s.part", path) >= (int)sizeof o->part) {
        snprintf(err, errlen, "output %s: the path is too long", path);
        return -1;
    }
    /* a part file left by a run that was killed, or a link someone put in
     * its place (a shared directory), is removed, never written through */
    if (!o->to_stdout && !o->direct && unlink(o->part) < 0 && errno != ENOENT) {
        snprintf(err, errlen, "output %s: %s", o->part, strerror(errno));
        return -1;
    }
    int fd = o->to_stdout ? dup(STDOUT_FILENO)
             : o->direct  ? open(path, O_WRONLY | O_CLOEXEC)
                          : open(o->part, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        snprintf(err, errlen, "output %s: %s", outfile_name(o), strerror(errno));
    else if (!o->to_stdout && !o->direct)
        live_add(o->part);
    return fd;
}

/* Swaps the part file with an existing regular OUT and unlinks the old one;
 * -1 to fall back to a rename. */
static int swap_into_place(const struct outfile *o)
{
    struct stat st;
    if (lstat(o->path, &st) || !S_ISREG(st.st_mode) ||
        renameat2(AT_FDCWD, o->part, AT_FDCWD, o->path, RENAME_EXCHANGE))
        return -1;
    unlink(o->part);
    return 0;
}

int outfile_commit(struct outfile *o, char *err, size_t errlen)
{
    if (!o->to_stdout && !o->direct && swap_into_place(o) && rename(o->part, o->path)) {
        snprintf(err, errlen, "renaming %s: %s", o->part, strerror(errno));
        return -1;
    }
    live_drop(o->part);
    o->committed = 1;
    return 0;
}

void outfile_discard(const struct outfile *o)
{
    if (o->to_stdout || o->direct)
        return;
    live_drop(o->part);
    unlink(o->part);
    if (o->committed)
        unlink(o->path);
}

const char *outfile_name(const struct outfile *o)
{
    return o->to_stdout ? "(standard output)" : o->direct ? o->path : o->part;
}

long long outfile_bytes(const struct outfile *o)
{
    struct stat st;
    return !o->to_stdout && !o->direct && stat(o->path, &st) == 0 ? (long long)st.st_size : -1;
}
