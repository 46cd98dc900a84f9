/*
 * The error setter shared by every trace reader and writer (see record.h).
 */
#include "trace/record.h"

#include <stdarg.h>
#include <stdio.h>

void trace_err_set(struct trace_err *err, uint64_t line, uint64_t offset, const char *fmt, ...)
{
    if (!err)
        return;
    err->line = line;
    err->offset = offset;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}
