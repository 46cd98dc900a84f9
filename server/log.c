/*
 * key=value logging to stderr (see log.h). The level is a process-wide
 * setting read without a lock: it is set once at start-up.
 */
#include "server/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static enum log_level min_level = LOG_INFO;
static const char *const level_names[] = {"debug", "info", "warn", "error"};

void log_set_level(enum log_level level) { min_level = level; }

int log_level_parse(const char *name)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(name, level_names[i]) == 0)
            return i;
    return -1;
}

static size_t format_time(char *buf, size_t len)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    int m = snprintf(buf + n, len - n, ".%03ldZ", ts.tv_nsec / 1000000);
    return n + (m > 0 ? (size_t)m : 0);
}

void log_kv(enum log_level level, const char *msg, const char *fmt, ...)
{
    if (level < min_level)
        return;
    char line[4096];
    size_t n = 0;
    n += (size_t)snprintf(line, sizeof line, "ts=");
    n += format_time(line + n, sizeof line - n);
    n += (size_t)snprintf(line + n, sizeof line - n, " level=%s msg=%s", level_names[level], msg);
    if (fmt && *fmt && n < sizeof line - 1) {
        line[n++] = ' ';
        va_list ap;
        va_start(ap, fmt);
        int m = vsnprintf(line + n, sizeof line - n, fmt, ap);
        va_end(ap);
        if (m > 0)
            n += (size_t)m;
    }
    if (n > sizeof line - 2)
        n = sizeof line - 2;
    line[n++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, n);
    (void)w;
}

static int is_plain(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s <= ' ' || *s == '"' || *s == '=' || *s == '\\' || *s == 0x7f)
            return 0;
    return 1;
}

const char *log_quote(char *buf, size_t len, const char *s)
{
    if (len == 0)
        return buf;
    if (!s)
        s = "";
    if (is_plain(s)) {
        snprintf(buf, len, "%s", s);
        return buf;
    }
    if (len < 3) { /* no room for two quotes and a NUL */
        buf[0] = '\0';
        return buf;
    }
    size_t o = 0;
    buf[o++] = '"';
    /* room is kept for an escape of up to 4 bytes, the closing quote and NUL */
    for (; *s && o + 6 <= len; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            buf[o++] = '\\';
            buf[o++] = (char)c;
        } else if (c < ' ' || c == 0x7f) {
            o += (size_t)snprintf(buf + o, len - o, "\\x%02x", c);
        } else {
            buf[o++] = (char)c;
        }
    }
    buf[o++] = '"';
    buf[o] = '\0';
    return buf;
}
