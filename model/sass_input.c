/*
 * Reading the SASS control-flow object (see sass_input.h).
 */
#include "model/sass_input.h"

#include <stdlib.h>
#include <string.h>

#include "util/errf.h"

#define MAX_ITEMS 1000000        /* more groups, loops or skips than any kernel has */

static const char *const extra_classes[] = {"sync", "uniform", "tensor", "other"};

int si_class_parse(const char *name)
{
    int c = mwp_class_parse(name);
    for (int i = 0; c < 0 && i < SC_NCLASS - MC_COUNT; i++)
        if (!strcmp(name, extra_classes[i]))
            c = MC_COUNT + i;
    return c;
}

/* An integer member >= min into *out. */
static int integer(const json_t *o, const char *name, long long min, long long max,
                   const char *where, long long *out, char *err, size_t errlen)
{
    const json_t *v = json_object_get(o, name);
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
        return errf(err, errlen, "sass: %s.%s must be an integer from %lld to %lld", where, name,
                    min, max);
    *out = json_integer_value(v);
    return 0;
}

/* Several integer members, each in [min, max], into ints (name list NULL-ended). */
static int integers(const json_t *o, const char *const *names, long long min, long long max,
                    const char *where, long long *ints, char *err, size_t errlen)
{
    for (int i = 0; names[i]; i++)
        if (integer(o, names[i], min, max, where, &ints[i], err, errlen) < 0)
            return -1;
    return 0;
}

static int counts(const json_t *o, const char *where, double n[SC_NCLASS], char *err,
                  size_t errlen)
{
    const json_t *c = json_object_get(o, "counts"), *v;
    const char *key;
    if (!json_is_object(c))
        return errf(err, errlen, "sass: %s.counts must be an object", where);
    json_object_foreach((json_t *)c, key, v) {
        int k = si_class_parse(key);
        if (k < 0)
            return errf(err, errlen, "sass: %s.counts: unknown class %s", where, key);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return errf(err, errlen, "sass: %s.counts.%s must be a count", where, key);
        n[k] = (double)json_integer_value(v);
    }
    return 0;
}

/* The array member `name` of o, its length in *n; its elements must be objects. */
static const json_t *array(const json_t *o, const char *name, int *n, char *err, size_t errlen)
{
    const json_t *a = json_object_get(o, name), *e;
    size_t i;
    if (!json_is_array(a) || json_array_size(a) > MAX_ITEMS) {
        errf(err, errlen, "sass: %s must be an array", name);
        return NULL;
    }
    json_array_foreach(a, i, e) if (!json_is_object(e)) {
        errf(err, errlen, "sass: %s[%zu] must be an object", name, i);
        return NULL;
    }
    *n = (int)json_array_size(a);
    return a;
}

static int read_loops(const json_t *o, struct si_sass *s, char *err, size_t errlen)
{
    static const char *const names[] = {"head", "latch", "end", "parent", "depth", "skip", NULL};
    const json_t *a = array(o, "loops", &s->nloops, err, errlen);
    if (!a || !(s->loops = calloc((size_t)s->nloops + 1, sizeof *s->loops)))
        return a ? errf(err, errlen, "out of memory") : -1;
    for (int i = 0; i < s->nloops; i++) {
        long long v[6];
        struct si_loop *l = &s->loops[i];
        if (integers(json_array_get(a, (size_t)i), names, -1, UINT32_MAX, "loops[]", v, err,
                     errlen) < 0)
            return -1;
        *l = (struct si_loop){(uint32_t)v[0], (uint32_t)v[1], (uint32_t)v[2], (int)v[3],
                              (int)v[4], (int)v[5], {0}};
        if (counts(json_array_get(a, (size_t)i), "loops[]", l->n, err, errlen) < 0)
            return -1;
        if (l->parent >= i || l->skip >= s->nskips || l->head > l->latch || l->latch >= l->end ||
            (l->skip >= 0 && s->skips[l->skip].loop != l->parent))
            return errf(err, errlen, "sass: loops[%d]: parent, skip or offsets out of order", i);
    }
    return 0;
}

static int read_skips(const json_t *o, struct si_sass *s, char *err, size_t errlen)
{
    static const char *const names[] = {"branch", "from", "to", "loop", "parent", NULL};
    const json_t *a = array(o, "skips", &s->nskips, err, errlen);
    if (!a || !(s->skips = calloc((size_t)s->nskips + 1, sizeof *s->skips)))
        return a ? errf(err, errlen, "out of memory") : -1;
    for (int i = 0; i < s->nskips; i++) {
        const json_t *e = json_array_get(a, (size_t)i);
        long long v[5];
        if (integers(e, names, -1, UINT32_MAX, "skips[]", v, err, errlen) < 0)
            return -1;
        if (!json_is_boolean(json_object_get(e, "conditional")))
            return errf(err, errlen, "sass: skips[%d].conditional must be true or false", i);
        s->skips[i] = (struct si_skip){(uint32_t)v[0], (uint32_t)v[1], (uint32_t)v[2],
                                       json_is_true(json_object_get(e, "conditional")),
                                       (int)v[3], (int)v[4]};
    }
    return 0;
}

/* Indices of the skips, checked once the loops are read. */
static int check_skips(const struct si_sass *s, char *err, size_t errlen)
{
    for (int i = 0; i < s->nskips; i++) {
        const struct si_skip *k = &s->skips[i], *p = k->parent >= 0 ? &s->skips[k->parent] : NULL;
        if (k->loop >= s->nloops || k->parent >= s->nskips || k->from >= k->to ||
            (p && (k->parent == i || p->loop != k->loop || p->from > k->from || p->to < k->to ||
                   p->to - p->from <= k->to - k->from)))
            return errf(err, errlen, "sass: skips[%d]: loop, parent or range out of order", i);
    }
    return 0;
}

/* A group's optional "waits" (absent from objects written before it was
 * counted): 1 when present, 0 when absent, -1 when malformed. */
static int group_waits(const json_t *e, int i, double *waits, char *err, size_t errlen)
{
    const json_t *w = json_object_get(e, "waits");
    if (!w)
        return 0;
    if (!json_is_integer(w) || json_integer_value(w) < 0)
        return errf(err, errlen, "sass: groups[%d].waits must be a count", i);
    *waits = (double)json_integer_value(w);
    return 1;
}

static int read_groups(const json_t *o, struct si_sass *s, char *err, size_t errlen)
{
    static const char *const names[] = {"at", "loop", "skip", NULL};
    const json_t *a = array(o, "groups", &s->ngroups, err, errlen);
    if (!a || !(s->groups = calloc((size_t)s->ngroups + 1, sizeof *s->groups)))
        return a ? errf(err, errlen, "out of memory") : -1;
    int with_waits = 0;
    for (int i = 0; i < s->ngroups; i++) {
        const json_t *e = json_array_get(a, (size_t)i), *guard = json_object_get(e, "guard");
        struct si_group *g = &s->groups[i];
        long long v[3];
        if (integers(e, names, -1, UINT32_MAX, "groups[]", v, err, errlen) < 0 ||
            counts(e, "groups[]", g->n, err, errlen) < 0)
            return -1;
        if (!json_is_string(guard))
            return errf(err, errlen, "sass: groups[%d].guard must be a string", i);
        int w = group_waits(e, i, &g->waits, err, errlen);
        if (w < 0)
            return -1;
        with_waits += w;
        g->at = (uint32_t)v[0];
        g->loop = (int)v[1];
        g->skip = (int)v[2];
        g->guarded = json_string_length(guard) > 0;
        if (g->loop >= s->nloops || g->skip >= s->nskips ||
            (g->skip >= 0 && s->skips[g->skip].loop != g->loop))
            return errf(err, errlen, "sass: groups[%d]: loop or skip out of range", i);
    }
    if (with_waits && with_waits < s->ngroups)
        return errf(err, errlen, "sass: %d of %d groups say their waits: all or none must",
                    with_waits, s->ngroups);
    s->has_waits = with_waits > 0;
    return 0;
}

int si_read(const json_t *o, struct si_sass *s, char *err, size_t errlen)
{
    static const char *const names[] = {"unreachable", "guarded_exits", "calls", "unknown_ops",
                                        NULL};
    long long v[4];
    memset(s, 0, sizeof *s);
    if (!json_is_object(o))
        return errf(err, errlen, "sass: must be an object");
    if (integers(o, names, 0, INT32_MAX, "sass", v, err, errlen) < 0 ||
        read_skips(o, s, err, errlen) < 0 || read_loops(o, s, err, errlen) < 0 ||
        check_skips(s, err, errlen) < 0 || read_groups(o, s, err, errlen) < 0)
        return -1;
    s->unreachable = (int)v[0];
    s->guarded_exits = (int)v[1];
    s->calls = (int)v[2];
    s->unknown_ops = (int)v[3];
    return 0;
}

void si_free(struct si_sass *s)
{
    free(s->groups);
    free(s->loops);
    free(s->skips);
    memset(s, 0, sizeof *s);
}
