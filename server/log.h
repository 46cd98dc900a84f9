/*
 * Log lines on stderr, one event per line, as key=value pairs:
 *   ts=2026-11-21T09:50:00.123Z level=info msg=job_started job=12 kind=latency
 * Each line is formatted into one buffer and written with a single write(2),
 * so lines from concurrent threads never interleave. Values that may contain
 * spaces or quotes go through log_quote.
 */
#ifndef GPUPROBE_SERVER_LOG_H
#define GPUPROBE_SERVER_LOG_H

#include <stddef.h>

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

void log_set_level(enum log_level level);
/* "debug", "info", "warn", "error" -> level; -1 for anything else. */
int log_level_parse(const char *name);

/* msg is a short event name (no spaces); fmt adds " key=value ..." pairs. */
void log_kv(enum log_level level, const char *msg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* s as a log value: unchanged if it is a plain token, else double-quoted with
 * '"', '\\' and control characters escaped. Returns buf. */
const char *log_quote(char *buf, size_t len, const char *s);

#endif
