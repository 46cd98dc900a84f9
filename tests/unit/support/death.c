/*
 * Test support: contracts (see death.h).
 */
#include "tests/unit/support/death.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int dies_by_assert(void (*fn)(void *arg), void *arg)
{
    pid_t pid = fork();
    if (pid < 0)
        return 0;
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, STDERR_FILENO);
        fn(arg);
        _exit(0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        ;
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}
