/*
 * The plain-data form of a kernel's SASS control flow (sass_cfg.h): what
 * the worker attaches to a kernel's description and model/sass_counts.h
 * reads, so the model never includes probes/.
 */
#include <stdio.h>

#include "probes/gpu/cubin.h"
#include "probes/gpu/sass_cfg.h"
#include "util/errf.h"

/* {class: n} with the zero classes left out. */
static json_t *counts_json(const unsigned count[SASS_CLASS_COUNT])
{
    json_t *o = json_object();
    for (int k = 0; k < SASS_CLASS_COUNT && o; k++)
        if (count[k])
            json_object_set_new(o, sass_class_name((enum sass_class)k), json_integer(count[k]));
    return o;
}

static json_t *loops_json(const struct sass_cfg *c)
{
    json_t *a = json_array();
    for (size_t i = 0; i < c->nloops && a; i++) {
        const struct sass_loop *l = &c->loops[i];
        json_array_append_new(a, json_pack("{s:I, s:I, s:I, s:i, s:i, s:i, s:o, s:I}", "head",
                                           (json_int_t)l->head, "latch", (json_int_t)l->latch,
                                           "end", (json_int_t)l->end, "parent", l->parent,
                                           "depth", l->depth, "skip", l->skip, "counts",
                                           counts_json(l->count), "waits", (json_int_t)l->waits));
    }
    return a;
}

static json_t *skips_json(const struct sass_cfg *c)
{
    json_t *a = json_array();
    for (size_t i = 0; i < c->nskips && a; i++) {
        const struct sass_skip *s = &c->skips[i];
        json_array_append_new(a, json_pack("{s:I, s:I, s:I, s:b, s:i, s:i}", "branch",
                                           (json_int_t)s->branch, "from", (json_int_t)s->from,
                                           "to", (json_int_t)s->to, "conditional",
                                           s->conditional, "loop", s->loop, "parent",
                                           s->parent));
    }
    return a;
}

static json_t *groups_json(const struct sass_cfg *c)
{
    json_t *a = json_array();
    for (size_t i = 0; i < c->ngroups && a; i++) {
        const struct sass_group *g = &c->groups[i];
        char guard[16] = "";
        if (g->guard >= 0)
            snprintf(guard, sizeof guard, "%sP%d", g->guard_neg ? "!" : "", g->guard);
        json_array_append_new(a, json_pack("{s:I, s:i, s:i, s:s, s:o, s:I}", "at",
                                           (json_int_t)g->at, "loop", g->loop, "skip", g->skip,
                                           "guard", guard, "counts", counts_json(g->count),
                                           "waits", (json_int_t)g->waits));
    }
    return a;
}

json_t *sass_cfg_json(const struct sass_cfg *c)
{
    return json_pack("{s:i, s:I, s:i, s:i, s:i, s:i, s:o, s:I, s:o, s:o, s:o}", "sm",
                     (int)c->sm, "instructions", (json_int_t)c->ninsns, "unreachable",
                     (int)c->unreachable, "guarded_exits", (int)c->guarded_exits, "calls",
                     (int)c->calls, "unknown_ops", (int)c->unknown, "straight",
                     counts_json(c->straight), "straight_waits", (json_int_t)c->straight_waits,
                     "loops", loops_json(c), "skips", skips_json(c), "groups", groups_json(c));
}

json_t *sass_cfg_describe_cubin(const void *cubin, size_t size, const char *name, char *err,
                                size_t errlen)
{
    struct cubin c;
    struct sass_cfg cfg = {0};
    json_t *out = NULL;
    char why[256];
    if (cubin_parse(&c, cubin, size, why, sizeof why) < 0) {
        errf(err, errlen, "cubin: %s", why);
    } else {
        const struct cubin_kernel *k = cubin_kernel_find(&c, name);
        if (!k)
            errf(err, errlen, "cubin has no kernel %s", name);
        else if (sass_cfg_build(&cfg, k->text, k->text_size, c.sm, why, sizeof why) < 0)
            errf(err, errlen, "kernel %s: %s", name, why);
        else if (!(out = sass_cfg_json(&cfg)))
            errf(err, errlen, "out of memory");
        sass_cfg_free(&cfg);
    }
    cubin_free(&c);
    return out;
}
