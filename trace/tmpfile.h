/*
 * Private temporary files for the trace pipeline: the spool's runs and the
 * thread-major copies of inputs that are not in that order.
 *
 * DESIGN
 * One rule for where they go (the caller's folder, else $TMPDIR, else
 * /tmp) and one way to make them: O_TMPFILE where the kernel has it, so no
 * other process can ever see the file and nothing is left behind by a
 * crash; else a named file the caller removes as soon as it has opened it
 * where it needs it.
 */
#ifndef GPUPROBE_TRACE_TMPFILE_H
#define GPUPROBE_TRACE_TMPFILE_H

#include <stddef.h>

/* dir when it is given and not empty, else $TMPDIR when set and not empty,
 * else "/tmp". */
const char *trace_tmpdir(const char *dir);

/* Creates a private file in trace_tmpdir(dir) and returns its descriptor
 * (read-write, close-on-exec), or -1 with errno. path receives a name that
 * opens the same file while the descriptor is open (/proc/self/fd/N for an
 * O_TMPFILE file, else DIR/gpuprobe-TAG-XXXXXX with *named set: the caller
 * unlinks path once it no longer needs the name). */
int trace_tmp_open(const char *dir, const char *tag, char *path, size_t len, int *named);

#endif
