/*
 * Whole text files in and out: a PTX module read into one NUL-terminated
 * string, an instrumented module written back.
 *
 * DESIGN
 * Reading refuses a file over `max` bytes (no unbounded allocation from a
 * path a user names) and one holding a NUL byte (text is handed to C
 * string code). Writing goes through util/outfile.h, as a trace does:
 * PATH.part put into place whole, "-" standard output, a device or FIFO
 * written in place.
 */
#ifndef GPUPROBE_UTIL_TEXTFILE_H
#define GPUPROBE_UTIL_TEXTFILE_H

#include <stddef.h>

/* The most bytes of a PTX module (or a kernel's description) read whole:
 * far above any real module (nvcc's largest run to a few MB). */
#define TEXT_FILE_PTX_MAX ((size_t)256 << 20)

/* The file's bytes and a NUL (caller frees); NULL with the reason in err. */
char *text_file_read(const char *path, size_t max, char *err, size_t errlen);
/* Writes len bytes of text to path (outfile.h). 0, or -1 with err. */
int text_file_write(const char *path, const char *text, size_t len, char *err, size_t errlen);

#endif
