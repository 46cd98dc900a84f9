/*
 * Whole reads and writes on file descriptors (see fdio.h).
 *
 * DESIGN
 * One loop serves both directions: move() picks the call, move_all() keeps
 * calling it until everything has moved.
 */
#include "util/fdio.h"

#include <errno.h>
#include <unistd.h>

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
    /* the cast only lets the loop be shared: move() never writes into p when out is 1 */
    return move_all(fd, (char *)p, n, off, 1) == 0 ? 0 : -1;
}

int fd_read_all(int fd, void *p, size_t n, off_t off)
{
    return move_all(fd, p, n, off, 0);
}
