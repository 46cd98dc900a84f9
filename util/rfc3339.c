/*
 * RFC 3339 times (see rfc3339.h). Only the UTC form with a 'Z' is read:
 * it is the only one gpuprobe writes, and a bundle is read by gpuprobe.
 */
#include "util/rfc3339.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

void rfc3339_format(int64_t ms, char buf[RFC3339_LEN])
{
    time_t sec = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&sec, &tm);
    size_t n = strftime(buf, RFC3339_LEN, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, RFC3339_LEN - n, ".%03dZ", (int)(ms % 1000));
}

json_t *time_to_json(int64_t ms)
{
    char buf[RFC3339_LEN];
    if (ms <= 0)
        return json_null();
    rfc3339_format(ms, buf);
    return json_string(buf);
}

int rfc3339_parse(const char *s, int64_t *ms)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *p = s ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
    int frac = 0, digits = 0;
    if (!p)
        return -1;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++, digits++)
            if (digits < 3)
                frac = frac * 10 + (*p - '0');
    if ((digits == 0 && p[-1] == '.') || strcmp(p, "Z") != 0)
        return -1;
    for (; digits < 3; digits++)
        frac *= 10;
    *ms = (int64_t)timegm(&tm) * 1000 + frac;
    return 0;
}
