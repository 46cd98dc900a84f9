/*
 * Whole text files (see textfile.h).
 */
#include "util/textfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fdio.h"

char *text_file_read(const char *path, size_t max, char *err, size_t errlen)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    char *text = NULL;
    if (fd < 0 || fstat(fd, &st) < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
    } else if (!S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
        snprintf(err, errlen, "%s: not a regular file of at most %zu bytes", path, max);
    } else if (!(text = malloc((size_t)st.st_size + 1))) {
        snprintf(err, errlen, "%s: out of memory", path);
    } else if (fd_read_all(fd, text, (size_t)st.st_size, 0) != 0) {
        snprintf(err, errlen, "%s: cannot be read", path);
        free(text);
        text = NULL;
    } else {
        text[st.st_size] = '\0';
        if (memchr(text, '\0', (size_t)st.st_size)) {
            snprintf(err, errlen, "%s: holds a NUL byte: not a text file", path);
            free(text);
            text = NULL;
        }
    }
    if (fd >= 0)
        close(fd);
    return text;
}

int text_file_write(const char *path, const char *text, size_t len, char *err, size_t errlen)
{
    char part[4096];
    if (snprintf(part, sizeof part, "%s.part", path) >= (int)sizeof part) {
        snprintf(err, errlen, "%s: the path is too long", path);
        return -1;
    }
    int fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int rc = fd >= 0 && fd_write_all(fd, text, len, FD_CURRENT) == 0 ? 0 : -1;
    if (fd >= 0 && close(fd) < 0)
        rc = -1;
    if (rc == 0 && rename(part, path) < 0)
        rc = -1;
    if (rc < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        unlink(part);
    }
    return rc;
}
