/*
 * How a function reports why it failed: a one-line reason written into the
 * caller's (err, errlen) buffer and -1 returned, so a failing step reads
 * `return errf(err, errlen, "...", ...)`. One formatter for every layer
 * that reports this way (the store, the model, the trace settings).
 */
#ifndef GPUPROBE_UTIL_ERRF_H
#define GPUPROBE_UTIL_ERRF_H

#include <stddef.h>

/* Formats the reason into err (errlen bytes, always NUL-terminated; nothing
 * when err is NULL or errlen is 0) and returns -1. */
int errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
