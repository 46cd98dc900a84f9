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
#include "util/outfile.h"

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
    struct outfile o;
    int fd = outfile_open(&o, path, err, errlen);
    if (fd < 0)
        return -1;
    int rc = fd_write_all(fd, text, len, FD_CURRENT);
    if (close(fd) < 0)
        rc = -1;
    if (rc < 0)
        snprintf(err, errlen, "%s: %s", outfile_name(&o), strerror(errno));
    if (rc < 0 || outfile_commit(&o, err, errlen) < 0) {
        outfile_discard(&o);
        return -1;
    }
    return 0;
}
