/*
 * Text that crosses into JSON must be valid UTF-8; a worker's stderr need
 * not be (and a tail of it may start or end inside a character). These make
 * any byte string safe without losing the readable part.
 */
#ifndef GPUPROBE_UTIL_UTF8_H
#define GPUPROBE_UTIL_UTF8_H

#include <jansson.h>

/* Replaces, in place, every byte that does not belong to a well-formed UTF-8
 * sequence with '?'. */
void utf8_scrub(char *s);
/* A JSON string of s, scrubbed if it is not valid UTF-8; null for NULL. */
json_t *json_text(const char *s);

#endif
