/*
 * Shared text utilities (see text.h).
 */
#include "util/text.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* s starts as a plain decimal number does: a digit, or '-' and a digit
 * (strto* also take leading blanks and '+', which an argument that must be
 * written one way should not). */
static int starts_decimal(const char *s)
{
    const char *d = s[0] == '-' ? s + 1 : s;
    return *d >= '0' && *d <= '9';
}

int parse_ll(const char *s, long long min, long long max, long long *out)
{
    char *end;
    errno = 0;
    if (!starts_decimal(s))
        return -1;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int parse_real(const char *s, double min, double max, double *out)
{
    char *end;
    errno = 0;
    if (!starts_decimal(s) || strpbrk(s, "xXpP")) /* no hexadecimal form */
        return -1;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < min || v > max)
        return -1;
    *out = v == 0 ? 0 : v; /* -0 is 0 */
    return 0;
}

int text_has_control(const char *s)
{
    for (; *s; s++)
        if (char_is_control((unsigned char)*s))
            return 1;
    return 0;
}

int buf_append(struct buf *b, const void *p, size_t n, size_t limit)
{
    if (b->len + n > limit)
        return -1;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d)
            return -1;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

void buf_free(struct buf *b)
{
    free(b->data);
    *b = (struct buf){0};
}

void path_folder(const char *path, char *dir, size_t len)
{
    snprintf(dir, len, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, len, ".");
    else
        slash[slash == dir] = '\0'; /* "/x" -> "/" */
}
