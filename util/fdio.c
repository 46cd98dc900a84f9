/*
 * Whole reads and writes on file descriptors (see fdio.h).
 *
 * DESIGN
 * One loop serves both directions: move() picks the call, move_all() keeps
 * calling it until everything has moved.
 * Test builds only: GPUPROBE_FAULT_FILE="write:N[:FILE]" makes this
 * process's Nth fd_write_all fail with ENOSPC (with FILE: the Nth and every
 * later one, while FILE exists), as a full disk would (the daemon's spooled uploads, a
 * worker's trace output: tests/integration/t_faults_files.sh). The release
 * build has no such code.
 */
#include "util/fdio.h"

#include <errno.h>
#include <unistd.h>

#ifdef GPUPROBE_TEST_BUILD
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

/* Whether this write is one the fault spec makes fail. */
static int fault_full(void)
{
    static atomic_long calls;
    const char *spec = getenv("GPUPROBE_FAULT_FILE");
    long at = 0;
    int used = 0;
    if (!spec || sscanf(spec, "write:%ld%n", &at, &used) != 1 || at < 1)
        return 0;
    long n = atomic_fetch_add(&calls, 1) + 1;
    const char *hold = spec[used] == ':' ? spec + used + 1 : "";
    return hold[0] ? n >= at && access(hold, F_OK) == 0 : n == at;
}
#else
static int fault_full(void) { return 0; }
#endif

/* One call: out 1 writes p[0..n), out 0 reads into it. */
static ssize_t move(int fd, char *p, size_t n, off_t off, int out)
{
    if (out)
        return off == FD_CURRENT ? write(fd, p, n) : pwrite(fd, p, n, off);
    return off == FD_CURRENT ? read(fd, p, n) : pread(fd, p, n, off);
}

/* 0: all n bytes moved; -1: a call failed (errno); 1: a call moved nothing. */
static int move_all(int fd, char *p, size_t n, off_t off, int out)
{
    while (n) {
        ssize_t k = move(fd, p, n, off, out);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? -1 : 1;
        p += k;
        n -= (size_t)k;
        if (off != FD_CURRENT)
            off += k;
    }
    return 0;
}

int fd_write_all(int fd, const void *p, size_t n, off_t off)
{
    if (fault_full()) {
        errno = ENOSPC;
        return -1;
    }
    /* the cast only lets the loop be shared: move() never writes into p when out is 1 */
    return move_all(fd, (char *)p, n, off, 1) == 0 ? 0 : -1;
}

int fd_read_all(int fd, void *p, size_t n, off_t off)
{
    return move_all(fd, p, n, off, 0);
}
