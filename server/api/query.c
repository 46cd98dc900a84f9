/*
 * The query arguments an endpoint takes (see handlers.h, query_only): an
 * argument the endpoint does not know, or one given twice, is refused
 * rather than ignored, so a misspelt filter never silently lists
 * everything.
 */
#include <stdio.h>
#include <string.h>

#include "server/api/handlers.h"

#define MAX_SEEN 16

struct walk {
    const char *const *known;
    const char *seen[MAX_SEEN];
    size_t nseen;
    const char *bad;
    int repeated;
};

static int is_known(const char *const *known, const char *key)
{
    for (; *known; known++)
        if (strcmp(*known, key) == 0)
            return 1;
    return 0;
}

static int look(void *ctx, const char *key, const char *value)
{
    struct walk *w = ctx;
    (void)value;
    if (!is_known(w->known, key)) {
        w->bad = key;
        return 1;
    }
    for (size_t i = 0; i < w->nseen; i++)
        if (strcmp(w->seen[i], key) == 0) {
            w->bad = key;
            w->repeated = 1;
            return 1;
        }
    if (w->nseen < MAX_SEEN)
        w->seen[w->nseen++] = key;
    return 0;
}

int query_only(struct http_req *rq, struct http_resp *rs, const char *const *known)
{
    struct walk w = {.known = known};
    char list[300] = "";
    size_t n = 0;
    if (!http_query_each(rq, look, &w))
        return 0;
    for (const char *const *k = known; *k && n < sizeof list; k++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", *k);
    if (w.repeated)
        problem_field(rq, rs, 400, "invalid-request", w.bad,
                      "query argument '%s' is given more than once", w.bad);
    else
        problem_field(rq, rs, 400, "invalid-request", w.bad,
                      "unknown query argument '%.64s' (this endpoint takes %s)", w.bad,
                      n ? list : "none");
    return -1;
}
