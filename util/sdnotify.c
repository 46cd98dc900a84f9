/*
 * The service notification datagram (see sdnotify.h).
 */
#include "util/sdnotify.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/text.h"

int sdnotify_send(const char *state)
{
    const char *path = getenv("NOTIFY_SOCKET");
    if (!path || !*path)
        return 0;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t len = strlen(path);
    if ((path[0] != '/' && path[0] != '@') || len >= sizeof sa.sun_path) {
        errno = EINVAL;
        return -1;
    }
    memcpy(sa.sun_path, path, len);
    if (path[0] == '@')
        sa.sun_path[0] = '\0'; /* the abstract namespace: no trailing NUL counted */
    socklen_t salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len +
                                  (path[0] == '/'));
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    ssize_t n = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, salen);
    int saved = errno;
    close(fd);
    errno = saved;
    return n == (ssize_t)strlen(state) ? 0 : -1;
}

uint64_t sdnotify_watchdog_usec(void)
{
    const char *usec = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
    long long v, p;
    if (!usec || parse_ll(usec, 1, (1LL << 62), &v) < 0)
        return 0;
    if (pid && (parse_ll(pid, 1, (1LL << 31), &p) < 0 || p != (long long)getpid()))
        return 0;
    return (uint64_t)v;
}

/* When the last pet was sent (monotonic ms); INT64_MIN before the first. */
static _Atomic int64_t last_pet_ms = INT64_MIN;

int sdnotify_watchdog_pet(int64_t now_ms)
{
    uint64_t usec = sdnotify_watchdog_usec();
    if (!usec)
        return 0;
    int64_t half_ms = (int64_t)(usec / 2000);
    int64_t last = atomic_load(&last_pet_ms);
    if (last != INT64_MIN && now_ms - last < half_ms)
        return 0;
    if (!atomic_compare_exchange_strong(&last_pet_ms, &last, now_ms))
        return 0; /* another thread pets at this very moment */
    return sdnotify_send("WATCHDOG=1") == 0;
}
