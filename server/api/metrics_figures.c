/*
 * The probe figures on /metrics (see metrics.h).
 *
 * The store hands a device's figures over ordered by name, and the format
 * wants each family's samples together under one HELP and TYPE, so the
 * figures of every device are gathered first, then sorted by their family's
 * place in the table (and, within it, by the order they came in: device,
 * then name) and written family by family.
 */
#include "server/api/metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/fleet_store.h"
#include "fleet/metrics.h"
#include "util/errf.h"

struct figure {
    size_t family;             /* its place in fleet_family_at */
    size_t device;             /* its place in the devices handed in */
    size_t seq;                /* the order it came in, to keep the sort stable */
    char *labels;              /* its own labels, as stored: `instr="ffma"` or "" */
    double value;
    char *text;                /* a category; NULL for a number */
};

struct gather {
    struct figure *v;
    size_t n, cap;
    size_t device;
};

static void figures_free(struct gather *g)
{
    for (size_t i = 0; i < g->n; i++) {
        free(g->v[i].labels);
        free(g->v[i].text);
    }
    free(g->v);
}

/* The text between the braces of `family{...}`, or "" for a bare family. */
static char *own_labels(const char *metric)
{
    const char *open = strchr(metric, '{');
    size_t len = strlen(metric);
    if (!open || len < 2 || metric[len - 1] != '}')
        return strdup("");
    return strndup(open + 1, (size_t)(metric + len - 1 - (open + 1)));
}

static int take(void *ctx, const struct store_metric_row *r)
{
    struct gather *g = ctx;
    const struct fleet_family *f = fleet_family_of(r->metric);
    if (!f || (f->categorical && !r->text))
        return 0; /* a family without HELP to write, or a category without its text */
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 256;
        struct figure *v = realloc(g->v, cap * sizeof *v);
        if (!v)
            return 1; /* out of memory */
        g->v = v;
        g->cap = cap;
    }
    struct figure *fig = &g->v[g->n];
    *fig = (struct figure){.family = (size_t)(f - fleet_family_at(0)), .device = g->device,
                           .seq = g->n, .labels = own_labels(r->metric), .value = r->value,
                           .text = f->categorical ? strdup(r->text) : NULL};
    g->n++;
    return !fig->labels || (f->categorical && !fig->text) ? 1 : 0;
}

static int by_family(const void *a, const void *b)
{
    const struct figure *x = a, *y = b;
    if (x->family != y->family)
        return x->family < y->family ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void write_family(struct prom_page *p, const struct fleet_family *f)
{
    char help[512];
    if (f->unit[0])
        snprintf(help, sizeof help, "%s; unit: %s", f->help, f->unit);
    else
        snprintf(help, sizeof help, "%s", f->help);
    prom_family(p, f->name, "gauge", help);
}

static void write_figure(struct prom_page *p, const struct fleet_family *f,
                         const struct metrics_device *d, const struct figure *fig)
{
    char index[16] = "";
    if (d->index >= 0)
        snprintf(index, sizeof index, "%d", d->index);
    struct prom_label l[] = {
        {METRICS_LABEL_GPU, index},
        {METRICS_LABEL_UUID, d->uuid},
        {METRICS_LABEL_MODEL, d->name},
        {METRICS_LABEL_HOST, d->host},
        {NULL, fig->labels},
        {METRICS_LABEL_CATEGORY, fig->text ? fig->text : ""},
    };
    /* a category is the label's value, the way *_info series are written */
    prom_sample(p, l, f->categorical ? 6 : 5, f->categorical ? 1.0 : fig->value);
}

int metrics_write_figures(store *db, const struct metrics_device *devs, size_t n,
                          struct prom_page *p, char *err, size_t errlen)
{
    struct gather g = {0};
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        g.device = i;
        rc = store_device_metrics_each(db, devs[i].uuid, take, &g, err, errlen);
        if (rc > 0)
            rc = errf(err, errlen, "reading the figures of %s: out of memory", devs[i].uuid);
    }
    if (rc == 0) {
        if (g.n)
            qsort(g.v, g.n, sizeof *g.v, by_family);
        for (size_t i = 0; i < g.n; i++) {
            const struct fleet_family *f = fleet_family_at(g.v[i].family);
            if (i == 0 || g.v[i].family != g.v[i - 1].family)
                write_family(p, f);
            write_figure(p, f, &devs[g.v[i].device], &g.v[i]);
        }
    }
    figures_free(&g);
    return rc;
}
