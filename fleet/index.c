/*
 * The fleet index: loading it and keeping it current (see index.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/fleet_store.h"
#include "fleet/index_internal.h"
#include "fleet/metrics.h"
#include "util/errf.h"

struct fleet_index *fleet_index_new(void)
{
    struct fleet_index *ix = calloc(1, sizeof *ix);
    if (!ix)
        return NULL;
    pthread_mutex_init(&ix->lock, NULL);
    strtab_init(&ix->names);
    strtab_init(&ix->metrics);
    strtab_init(&ix->texts);
    strtab_init(&ix->dev_ids);
    return ix;
}

void fleet_index_free(struct fleet_index *ix)
{
    if (!ix)
        return;
    for (size_t i = 0; i < ix->ndevs; i++)
        free(ix->devs[i].v);
    for (size_t i = 0; i < ix->nmodels; i++) {
        free(ix->models[i].dists);
        free(ix->models[i].hits);
    }
    for (size_t i = 0; i < ix->nencoded; i++)
        free(ix->encoded[i]);
    free(ix->encoded);
    free(ix->dev_order);
    free(ix->model_order);
    free(ix->devs);
    free(ix->models);
    free(ix->touched);
    strtab_free(&ix->names);
    strtab_free(&ix->metrics);
    strtab_free(&ix->texts);
    strtab_free(&ix->dev_ids);
    pthread_mutex_destroy(&ix->lock);
    free(ix);
}

void fleet_index_touch(struct fleet_index *ix, const char *device, uint64_t gen)
{
    pthread_mutex_lock(&ix->lock);
    size_t i = 0;
    while (i < ix->ntouched && strcmp(ix->touched[i].uuid, device) != 0)
        i++;
    if (i == ix->ntouched && ix->ntouched == ix->captouched) {
        size_t cap = ix->captouched ? ix->captouched * 2 : 16;
        struct touched *t = realloc(ix->touched, cap * sizeof *t);
        if (t) {
            ix->touched = t;
            ix->captouched = cap;
        } else {
            ix->loaded = 0; /* cannot remember it: read everything again */
        }
    }
    if (i < ix->captouched) {
        snprintf(ix->touched[i].uuid, sizeof ix->touched[i].uuid, "%s", device);
        ix->touched[i].gen = gen;
        if (i == ix->ntouched)
            ix->ntouched++;
    }
    pthread_mutex_unlock(&ix->lock);
}

/* ---- devices and models --------------------------------------------------- */

static uint32_t model_of(struct fleet_index *ix, const char *name, const char *cc)
{
    uint32_t n = strtab_intern(&ix->names, name), c = strtab_intern(&ix->names, cc);
    if (n == UINT32_MAX || c == UINT32_MAX)
        return UINT32_MAX;
    for (size_t i = 0; i < ix->nmodels; i++)
        if (ix->models[i].name == n)
            return (uint32_t)i;
    if (ix->nmodels == ix->capmodels) {
        size_t cap = ix->capmodels ? ix->capmodels * 2 : 8;
        struct fmodel *m = realloc(ix->models, cap * sizeof *m);
        if (!m)
            return UINT32_MAX;
        ix->models = m;
        ix->capmodels = cap;
    }
    ix->models[ix->nmodels] = (struct fmodel){.name = n, .cc = c, .stale = 1};
    return (uint32_t)ix->nmodels++;
}

/* The device of row, added or updated; NULL when memory ran out. */
static struct fdev *device_from_row(struct fleet_index *ix, const struct device_row *row)
{
    uint32_t id = strtab_intern(&ix->dev_ids, row->uuid);
    uint32_t uuid = strtab_intern(&ix->names, row->uuid);
    uint32_t host = strtab_intern(&ix->names, row->hostname ? row->hostname : "");
    uint32_t model = model_of(ix, row->name, row->compute_capability);
    if (id == UINT32_MAX || uuid == UINT32_MAX || host == UINT32_MAX || model == UINT32_MAX)
        return NULL;
    if (id >= ix->capdevs) {
        size_t cap = ix->capdevs ? ix->capdevs * 2 : 64;
        while (cap <= id)
            cap *= 2;
        struct fdev *d = realloc(ix->devs, cap * sizeof *d);
        if (!d)
            return NULL;
        memset(d + ix->capdevs, 0, (cap - ix->capdevs) * sizeof *d);
        ix->devs = d;
        ix->capdevs = cap;
    }
    struct fdev *d = &ix->devs[id];
    if (id >= ix->ndevs) {
        ix->ndevs = id + 1;
        d->driver = NO_TEXT;
    }
    if (d->v && d->model != model)
        ix->models[d->model].stale = 1;
    d->uuid = uuid;
    d->host = host;
    d->model = model;
    ix->models[model].stale = 1;
    return d;
}

/* ---- figures ------------------------------------------------------------- */

/* Forgets d's figures and driver, before they are read again. */
static void clear_figures(struct fdev *d)
{
    free(d->v);
    d->v = NULL;
    d->n = 0;
    d->driver = NO_TEXT;
}

struct loading {
    struct fleet_index *ix;
    struct fdev *dev;          /* the device the rows are of, while they are */
    size_t cap;
    int failed;
};

static struct fdev *device_by_uuid(struct fleet_index *ix, const char *uuid)
{
    uint32_t id = strtab_find(&ix->dev_ids, uuid);
    return id == UINT32_MAX || id >= ix->ndevs ? NULL : &ix->devs[id];
}

static int take_figure(void *ctx, const struct store_metric_row *r)
{
    struct loading *l = ctx;
    struct fleet_index *ix = l->ix;
    if (!l->dev || strcmp(strtab_str(&ix->names, l->dev->uuid), r->device) != 0) {
        l->dev = device_by_uuid(ix, r->device);
        if (!l->dev)
            return 0; /* figures of a device the store no longer lists */
        clear_figures(l->dev);
        l->cap = 0;
    }
    struct fdev *d = l->dev;
    uint32_t metric = strtab_intern(&ix->metrics, r->metric);
    uint32_t text = r->text ? strtab_intern(&ix->texts, r->text) : NO_TEXT;
    if (metric == UINT32_MAX || (r->text && text == UINT32_MAX))
        return l->failed = -1;
    if (r->driver && (d->driver == NO_TEXT || r->measured_ms > d->driver_ms)) {
        if ((d->driver = strtab_intern(&ix->names, r->driver)) == UINT32_MAX)
            return l->failed = -1;
        d->driver_ms = r->measured_ms;
    }
    if (d->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        struct fval *v = realloc(d->v, cap * sizeof *v);
        if (!v)
            return l->failed = -1;
        d->v = v;
        l->cap = cap;
    }
    d->v[d->n++] = (struct fval){metric, text, r->value, r->job_id};
    return 0;
}

static int by_metric(const void *a, const void *b)
{
    uint32_t x = ((const struct fval *)a)->metric, y = ((const struct fval *)b)->metric;
    return (x > y) - (x < y);
}

/* Reads the figures of one device (every device when uuid is NULL). */
static int read_figures(struct fleet_index *ix, store *s, const char *uuid, char *err,
                        size_t errlen)
{
    struct loading l = {ix, NULL, 0, 0};
    if (uuid) {
        struct fdev *d = device_by_uuid(ix, uuid);
        if (d) /* a device whose figures all went stays, with none */
            clear_figures(d);
    }
    int rc = store_device_metrics_each(s, uuid, take_figure, &l, err, errlen);
    if (l.failed)
        return errf(err, errlen, "loading the fleet figures: out of memory");
    /* the store orders by name; a device's figures are looked up by id */
    struct fdev *one = uuid ? device_by_uuid(ix, uuid) : NULL;
    for (size_t i = 0; i < ix->ndevs; i++)
        if ((!uuid || &ix->devs[i] == one) && ix->devs[i].n > 1)
            qsort(ix->devs[i].v, ix->devs[i].n, sizeof *ix->devs[i].v, by_metric);
    return rc;
}

static int load_all(struct fleet_index *ix, store *s, char *err, size_t errlen)
{
    struct device_row *rows = NULL;
    size_t n = 0;
    if (store_device_list(s, &rows, &n, err, errlen) != 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        if (!device_from_row(ix, &rows[i]))
            rc = errf(err, errlen, "loading the fleet: out of memory");
    device_rows_free(rows, n);
    if (rc == 0)
        rc = read_figures(ix, s, NULL, err, errlen);
    return rc;
}

/* Re-reads one touched device: its row (it may be new) and its figures. */
static int reload_device(struct fleet_index *ix, store *s, const char *uuid, char *err,
                         size_t errlen)
{
    struct device_row row;
    int rc = store_device_get(s, uuid, &row, err, errlen);
    if (rc != 0)
        return rc < 0 ? -1 : 0; /* rolled back before the device existed */
    struct fdev *d = device_from_row(ix, &row);
    device_row_free(&row);
    if (!d)
        return errf(err, errlen, "loading the fleet: out of memory");
    return read_figures(ix, s, uuid, err, errlen);
}

int fleet_index_sync(struct fleet_index *ix, store *s, uint64_t *version, char *err,
                     size_t errlen)
{
    pthread_mutex_lock(&ix->lock);
    uint64_t gen = store_generation(s);
    int rc = 0;
    if (!ix->loaded) {
        ix->ntouched = 0;
        rc = load_all(ix, s, err, errlen);
        ix->loaded = rc == 0;
        ix->version++;
    } else {
        size_t keep = 0;
        ix->version += ix->ntouched > 0;
        for (size_t i = 0; i < ix->ntouched && rc == 0; i++) {
            rc = reload_device(ix, s, ix->touched[i].uuid, err, errlen);
            /* committed or rolled back once the generation moved on */
            if (ix->touched[i].gen >= gen)
                ix->touched[keep++] = ix->touched[i];
        }
        if (rc == 0)
            ix->ntouched = keep;
    }
    if (version)
        *version = ix->version;
    pthread_mutex_unlock(&ix->lock);
    return rc;
}
