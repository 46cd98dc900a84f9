/*
 * `gpuprobe trace sort`'s cache feedback options (trace_sort_l1.h).
 */
#include "server/cli/trace_sort_l1.h"

#include <stdlib.h>
#include <string.h>

#include "server/cli/cli.h"

#define CMD "trace"

enum { FEEDBACK, MSHR_MERGE, L1, SET_INDEX, HIT_LATENCY, MERGE };

const struct option trace_sort_l1_options[TRACE_SORT_L1_NOPTS] = {
    {"feedback", no_argument, NULL, TRACE_SORT_L1_OPT + FEEDBACK},
    {"mshr-merge", no_argument, NULL, TRACE_SORT_L1_OPT + MSHR_MERGE},
    {"l1", required_argument, NULL, TRACE_SORT_L1_OPT + L1},
    {"set-index", required_argument, NULL, TRACE_SORT_L1_OPT + SET_INDEX},
    {"hit-latency", required_argument, NULL, TRACE_SORT_L1_OPT + HIT_LATENCY},
    {"merge", required_argument, NULL, TRACE_SORT_L1_OPT + MERGE},
};

void trace_sort_l1_usage(FILE *f)
{
    fputs("cache feedback (sort; off by default, docs/trace-sort.md, \"Cache feedback\"):\n"
          "  --feedback              order with each SM's L1 simulated: a request that hits\n"
          "                          holds no MSHR and its warp only for the hit latency\n"
          "  --mshr-merge            a request to a line whose fetch is in flight merges\n"
          "                          into its MSHR (no new fetch); only fetches wait for a\n"
          "                          free MSHR\n"
          "  --l1 SIZE,ASSOC,LINE,SECTOR\n"
          "                          the L1 of each SM, as trace cache takes it (default:\n"
          "                          the cache model's preset of --arch: hopper or fermi)\n"
          "  --set-index F           modulo (default) or xor\n"
          "  --hit-latency N         ticks a hit is in flight (default lat_min x 32 / 500,\n"
          "                          at least 1; 0: a hit never holds its warp)\n"
          "  --merge N               requests that may merge into one fetch in flight (with\n"
          "                          --mshr-merge; default as trace cache --merge: hopper\n"
          "                          64, others 8)\n",
          f);
}

void trace_sort_l1_take(struct trace_sort_l1 *o, int c, const char *arg)
{
    o->given = 1;
    switch (c - TRACE_SORT_L1_OPT) {
    case FEEDBACK: o->feedback = 1; break;
    case MSHR_MERGE: o->mshr_merge = 1; break;
    case L1: o->l1 = arg; break;
    case SET_INDEX: o->set_index = arg; break;
    case HIT_LATENCY: o->hit_latency = arg; break;
    default: o->merge = arg; break;
    }
}

/* --option's integer in [min, max] into *v (left alone when text is NULL). */
static int number(const char *opt, const char *text, uint32_t min, uint32_t max, uint32_t *v)
{
    char *end;
    if (!text)
        return 0;
    unsigned long long x = strtoull(text, &end, 10);
    if (end == text || *end || text[0] == '-' || x < min || x > max)
        return cli_fail(CMD, 2, "--%s must be an integer from %u to %u, not '%s'", opt, min, max, text);
    *v = (uint32_t)x;
    return 0;
}

/* The L1's geometry: the cache model's preset for the sort's architecture
 * (the fermi preset when none was named: the sort's default), then --l1,
 * then --set-index — `trace cache`'s order. */
static int geometry(const struct trace_sort_l1 *o, const struct trace_params *p, struct cache_geom *g)
{
    char msg[256];
    struct cache_geom l2;
    const char *arch = p->arch[0] ? p->arch : "fermi";
    memset(g, 0, sizeof *g);
    if (cache_arch_geometry(arch, g, &l2, msg, sizeof msg)) {
        if (!o->l1)
            return cli_fail(CMD, 2, "%s: the cache model has no L1 for %s (%s): give --l1 SIZE,ASSOC,LINE,SECTOR",
                            o->feedback ? "--feedback" : "--mshr-merge", arch, msg);
        memset(g, 0, sizeof *g); /* --l1 gives all of it */
    }
    if (o->l1 && cache_geom_parse(o->l1, g, msg, sizeof msg))
        return cli_fail(CMD, 2, "--l1: %s", msg);
    if (o->set_index) {
        int f = cache_set_index_parse(o->set_index);
        if (f < 0)
            return cli_fail(CMD, 2, "--set-index must be modulo or xor, not '%s'", o->set_index);
        g->index = (enum cache_set_index)f;
    }
    return 0;
}

int trace_sort_l1_setup(struct trace_sort_l1 *o, const struct trace_params *p, const struct trace_l1_ops **ops)
{
    *ops = NULL;
    if (!o->feedback && !o->mshr_merge) {
        if (o->given)
            return cli_fail(CMD, 2, "--l1, --set-index, --hit-latency and --merge need --feedback or --mshr-merge");
        return 0;
    }
    if (o->hit_latency && !o->feedback)
        return cli_fail(CMD, 2, "--hit-latency needs --feedback (without it nothing hits)");
    if (o->merge && !o->mshr_merge)
        return cli_fail(CMD, 2, "--merge needs --mshr-merge");
    struct cache_feedback *fb = &o->fb;
    int rc = geometry(o, p, &fb->geom);
    if (rc)
        return rc;
    fb->keep = o->feedback;
    /* as `trace cache --merge`: the architecture's figure */
    fb->max_merge = o->mshr_merge ? cache_arch_merge(p->arch[0] ? p->arch : "fermi") : 0;
    fb->hit_latency = o->feedback ? cache_feedback_hit_latency(p->lat_min) : 0; /* nothing hits without it */
    if (number("hit-latency", o->hit_latency, 0, TRACE_MAX_LAT_MIN, &fb->hit_latency) ||
        number("merge", o->merge, 1, 1000000, &fb->max_merge))
        return 2;
    cache_feedback_ops(fb, &o->ops);
    o->set_up = 1;
    *ops = &o->ops;
    return 0;
}

void trace_sort_l1_free(struct trace_sort_l1 *o)
{
    if (o->set_up)
        cache_feedback_done(&o->fb);
    o->set_up = 0;
}

int trace_sort_l1_describe(const struct trace_sort_l1 *o, json_t *result)
{
    if (!o->feedback && !o->mshr_merge)
        return 0;
    const struct cache_geom *g = &o->fb.geom;
    json_t *l1 = json_object_get(result, "l1");
    json_t *d = json_pack("{sb sb sI sI sI sI sI ss sI sI}", "feedback", o->feedback, "mshr_merge", o->mshr_merge,
                          "size", (json_int_t)g->size, "assoc", (json_int_t)g->assoc, "sets", (json_int_t)g->sets,
                          "line", (json_int_t)g->line, "sector", (json_int_t)g->sector, "set_index",
                          cache_set_index_name(g->index), "hit_latency", (json_int_t)o->fb.hit_latency,
                          "max_merge", (json_int_t)o->fb.max_merge);
    int rc = d && json_is_object(l1) ? json_object_update(l1, d) : -1;
    json_decref(d);
    return rc;
}
