/*
 * UTF-8 scrubbing (see utf8.h). Follows the well-formed byte sequences of
 * Unicode (table 3-7): no overlong forms, no surrogates, nothing past U+10FFFF.
 */
#include "util/utf8.h"

#include <stdlib.h>
#include <string.h>

/* Length of the well-formed sequence at p, or 0 if there is none. */
static size_t sequence_length(const unsigned char *p)
{
    unsigned char c = p[0];
    if (c < 0x80)
        return 1;
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        lo = c == 0xE0 ? 0xA0 : 0x80;
        hi = c == 0xED ? 0x9F : 0xBF;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        lo = c == 0xF0 ? 0x90 : 0x80;
        hi = c == 0xF4 ? 0x8F : 0xBF;
    } else
        return 0;
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return n;
}

void utf8_scrub(char *s)
{
    unsigned char *p = (unsigned char *)s;
    while (*p) {
        size_t n = sequence_length(p);
        if (n == 0)
            *p++ = '?';
        else
            p += n;
    }
}

json_t *json_text(const char *s)
{
    if (!s)
        return json_null();
    json_t *j = json_string(s);
    if (j)
        return j;
    char *copy = strdup(s);
    if (!copy)
        return json_null();
    utf8_scrub(copy);
    j = json_string(copy);
    free(copy);
    return j ? j : json_null();
}
