#include "util/cores.h"

#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* Readings of the runnable count that cores_idle takes at most. */
#define CORES_READINGS 8

int cores_parse_loadavg(const char *text, long *running)
{
    const char *p = text;
    for (int field = 0; field < 3; field++) { /* the three averages */
        while (*p == ' ')
            p++;
        if (*p == '\0')
            return -1;
        while (*p != ' ' && *p != '\0')
            p++;
    }
    while (*p == ' ')
        p++;
    if (*p < '0' || *p > '9')
        return -1;
    char *end;
    long n = strtol(p, &end, 10);
    if (*end != '/' || end[1] < '0' || end[1] > '9' || n < 1) /* the reader itself runs */
        return -1;
    *running = n;
    return 0;
}

/* The runnable threads now, -1 where /proc/loadavg cannot be read. */
static long running_now(void)
{
    char b[128];
    int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, b, sizeof b - 1);
    close(fd);
    long running;
    if (n <= 0)
        return -1;
    b[n] = '\0';
    return cores_parse_loadavg(b, &running) == 0 ? running : -1;
}

double cores_idle(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1)
        cpus = 1;
    /* The fewest of a few readings 1 ms apart: one reading also counts
     * whatever woke for an instant (the shell that started the caller,
     * a kernel worker); a machine kept busy is busy in every reading. */
    long fewest = -1;
    for (int i = 0; i < CORES_READINGS && fewest != 1; i++) {
        if (i > 0)
            nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
        long running = running_now();
        if (running < 1)
            break;
        if (fewest < 0 || running < fewest)
            fewest = running;
    }
    if (fewest >= 1)
        return (double)(cpus - fewest);
    double load;
    if (getloadavg(&load, 1) != 1)
        return 0;
    return (double)cpus - load - 1.0;
}
