/*
 * Route matching (see route.h). Patterns are matched segment by segment;
 * "{name}" captures one segment. Tables are small, so a linear scan is both
 * the simplest and fast enough.
 */
#include "server/http/route.h"

#include <stdio.h>
#include <string.h>

/* Matches path against pattern; captured segments go to params. */
static int path_matches(const char *pattern, const char *path, char params[][128], size_t nparams)
{
    size_t np = 0;
    while (*pattern && *path) {
        if (*pattern != '/' || *path != '/')
            return 0;
        pattern++, path++;
        const char *pe = strchr(pattern, '/'), *se = strchr(path, '/');
        size_t pl = pe ? (size_t)(pe - pattern) : strlen(pattern);
        size_t sl = se ? (size_t)(se - path) : strlen(path);
        if (pl > 2 && pattern[0] == '{' && pattern[pl - 1] == '}') {
            if (sl == 0 || sl >= 128)
                return 0;
            if (np < nparams) {
                memcpy(params[np], path, sl);
                params[np][sl] = '\0';
            }
            np++;
        } else if (pl != sl || memcmp(pattern, path, pl) != 0) {
            return 0;
        }
        pattern += pl, path += sl;
    }
    return *pattern == '\0' && *path == '\0';
}

const struct route *route_match(const struct route *table, size_t n, const char *method,
                                const char *path, int *path_known, char params[][128],
                                size_t nparams)
{
    *path_known = 0;
    for (size_t i = 0; i < n; i++) {
        if (!path_matches(table[i].pattern, path, params, nparams))
            continue;
        *path_known = 1;
        if (strcmp(table[i].method, method) == 0)
            return &table[i];
    }
    return NULL;
}

void route_allowed_methods(const struct route *table, size_t count, const char *path, char *buf,
                           size_t len)
{
    char scratch[4][128];
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < count; i++) {
        if (!path_matches(table[i].pattern, path, scratch, 4))
            continue;
        if (strstr(buf, table[i].method))
            continue;
        n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? ", " : "",
                              table[i].method);
    }
}
