/*
 * model/'s failure reasons (see fail.h).
 */
#include "model/fail.h"

#include <stdarg.h>
#include <stdio.h>

int model_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}
