/*
 * Small text utilities shared by the server: bounded integer and number parsers (for
 * settings and query arguments alike), a path's folder, and a growable byte buffer
 * (for request bodies and worker output alike).
 */
#ifndef GPUPROBE_UTIL_TEXT_H
#define GPUPROBE_UTIL_TEXT_H

#include <stddef.h>

/* Parses all of s as a decimal integer in [min, max]; -1 for anything else
 * (leading blanks and '+' included). */
int parse_ll(const char *s, long long min, long long max, long long *out);
/* Parses all of s as a decimal number ("0.02", "6", "1e-3") in [min, max];
 * -1 for anything else: blanks, '+', hexadecimal, inf, nan. */
int parse_real(const char *s, double min, double max, double *out);

/* A control character: what a line of text (a log line, a store's line,
 * a header) cannot hold as it is. */
static inline int char_is_control(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}
/* 1 when s holds a control character. */
int text_has_control(const char *s);

/* The folder a file at path is (or would be) made in, into dir (len bytes):
 * "a/b.db" -> "a", "b.db" -> ".", "/b.db" -> "/". */
void path_folder(const char *path, char *dir, size_t len);

/* Bytes with a length; data stays NUL-terminated once anything is appended. */
struct buf {
    char *data;
    size_t len, cap;
};

/* Appends n bytes unless len would pass limit or memory runs out (then -1,
 * and nothing is appended). */
int buf_append(struct buf *b, const void *p, size_t n, size_t limit);
void buf_free(struct buf *b);

#endif
