/*
 * Times as the API and the result bundles write them: RFC 3339 in UTC with
 * milliseconds, "2026-11-23T23:34:05.123Z".
 */
#ifndef GPUPROBE_UTIL_RFC3339_H
#define GPUPROBE_UTIL_RFC3339_H

#include <jansson.h>
#include <stdint.h>

#define RFC3339_LEN 32

/* ms since the epoch as RFC 3339 UTC with milliseconds, into buf. */
void rfc3339_format(int64_t ms, char buf[RFC3339_LEN]);
/* The same as a JSON string; JSON null for 0 or less ("not yet"). */
json_t *time_to_json(int64_t ms);
/* Reads "YYYY-MM-DDTHH:MM:SS[.fff]Z" (the form rfc3339_format writes, the
 * fraction optional, up to milliseconds) into *ms. 0, or -1 for anything
 * else. */
int rfc3339_parse(const char *s, int64_t *ms);

#endif
