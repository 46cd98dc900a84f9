/*
 * Private temporary files (see tmpfile.h).
 */
#include "trace/tmpfile.h"

#include <assert.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

const char *trace_tmpdir(const char *dir)
{
    if (!dir || !*dir)
        dir = getenv("TMPDIR");
    return dir && *dir ? dir : "/tmp";
}

int trace_tmp_open(const char *dir, const char *tag, char *path, size_t len, int *named)
{
    assert(tag && path && len > 0 && named);
    dir = trace_tmpdir(dir);
    *named = 0;
#ifdef O_TMPFILE
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) {
        snprintf(path, len, "/proc/self/fd/%d", fd);
        return fd;
    }
#endif
    snprintf(path, len, "%s/gpuprobe-%s-XXXXXX", dir, tag);
    *named = 1;
    return mkostemp(path, O_CLOEXEC);
}
