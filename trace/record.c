/*
 * Error reporting shared by every trace reader and writer (see record.h).
 */
#include "trace/record.h"

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

int trace_err_at(struct trace_err *err, uint64_t line, const char *buf, const char *ls,
                 const char *at, const char *fmt, va_list ap)
{
    char what[200];
    vsnprintf(what, sizeof what, fmt, ap);
    trace_err_set(err, line, (uint64_t)(ls - buf), "%s (column %zu)", what,
                  (size_t)(at - ls) + 1);
    return TRACE_EINPUT;
}
