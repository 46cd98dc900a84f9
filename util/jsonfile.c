/*
 * A JSON file parsed from memory (see jsonfile.h).
 */
#include "util/jsonfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static json_t *fail(json_error_t *e, const char *path, const char *why)
{
    if (e) {
        memset(e, 0, sizeof *e);
        snprintf(e->text, sizeof e->text, "unable to read %s: %s", path, why);
        snprintf(e->source, sizeof e->source, "%s", path);
        e->line = -1;
        e->column = -1;
    }
    return NULL;
}

json_t *json_load_path(const char *path, size_t flags, json_error_t *e)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return fail(e, path, strerror(errno));
    if (fstat(fd, &st) < 0) {
        int err = errno;
        close(fd);
        return fail(e, path, strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return fail(e, path, "not a regular file");
    }
    if (st.st_size == 0) { /* mmap refuses an empty file; jansson words the error */
        close(fd);
        return json_loadb("", 0, flags, e);
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return fail(e, path, strerror(errno));
    json_t *j = json_loadb(p, (size_t)st.st_size, flags, e);
    munmap(p, (size_t)st.st_size);
    return j;
}
