/*
 * Shared text utilities (see text.h).
 */
#include "util/text.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int parse_ll(const char *s, long long min, long long max, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max)
        return -1;
    *out = v;
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
