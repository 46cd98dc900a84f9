/*
 * The local ptxas for unit tests (see ptxas.h).
 *
 * DESIGN
 * fork + execl, no shell: the paths are the test's own temporary files.
 */
#include "tests/unit/support/ptxas.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEFAULT_PTXAS "/usr/local/cuda/bin/ptxas"

const char *ptxas_find(void)
{
    const char *p = getenv("PTXAS") ? getenv("PTXAS") : DEFAULT_PTXAS;
    return access(p, X_OK) == 0 ? p : NULL;
}

int ptxas_run(const char *ptxas, const char *in, const char *out)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl(ptxas, ptxas, "-arch=sm_90", "-O3", in, "-o", out, (char *)NULL);
        _exit(127);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
