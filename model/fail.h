/*
 * How model/ reports a failure: a one-line reason written into the
 * caller's buffer, and -1 returned, so a failing step can be written
 * `return model_fail(err, errlen, "...", ...)`.
 *
 * DESIGN
 * The files of model/ each carry their caller's (err, errlen) in their own
 * context struct; this one function is where all of them format into it,
 * so no file keeps a variadic twin of its own.
 */
#ifndef GPUPROBE_MODEL_FAIL_H
#define GPUPROBE_MODEL_FAIL_H

#include <stddef.h>

/* Formats the reason into err (errlen bytes, always NUL-terminated; nothing
 * when err is NULL or errlen 0) and returns -1. */
int model_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
