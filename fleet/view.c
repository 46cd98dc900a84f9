/*
 * The fleet's distributions, outliers and views (see index.h).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fleet/index_internal.h"
#include "fleet/metrics.h"
#include "util/errf.h"
#include "util/text.h"

/* ---- distributions --------------------------------------------------------- */

/* A text's count: a category's within one figure of one model, or a
 * driver's within a model (then text is an id in ix->names). */
struct tally {
    uint32_t text;
    size_t count;
};

static int refresh_categories(const struct fleet_index *ix, uint32_t model, struct fdist *dists,
                              size_t nm)
{
    struct tally **t = calloc(nm, sizeof *t);
    size_t *nt = calloc(nm, sizeof *nt);
    int rc = t && nt ? 0 : -1;
    for (size_t i = 0; i < ix->ndevs && rc == 0; i++) {
        const struct fdev *d = &ix->devs[i];
        if (d->model != model)
            continue;
        for (size_t k = 0; k < d->n && rc == 0; k++) {
            const struct fval *v = &d->v[k];
            if (v->text == NO_TEXT)
                continue;
            size_t j = 0;
            while (j < nt[v->metric] && t[v->metric][j].text != v->text)
                j++;
            if (j == nt[v->metric]) {
                struct tally *more = realloc(t[v->metric], (j + 1) * sizeof *more);
                if (!more) {
                    rc = -1;
                    break;
                }
                t[v->metric] = more;
                more[j] = (struct tally){v->text, 0};
                nt[v->metric]++;
            }
            t[v->metric][j].count++;
        }
    }
    for (size_t k = 0; k < nm && rc == 0; k++) {
        if (!nt[k])
            continue;
        struct fdist *f = &dists[k];
        f->present = f->categorical = 1;
        f->mode = NO_TEXT;
        size_t best = 0, total = 0;
        for (size_t j = 0; j < nt[k]; j++) {
            total += t[k][j].count;
            if (t[k][j].count > best) {
                best = t[k][j].count;
                f->mode = t[k][j].text;
            }
        }
        f->n_text = total;
        f->mode_count = best;
        if (2 * best <= total)
            f->mode = NO_TEXT; /* no majority: no norm to differ from */
    }
    for (size_t k = 0; t && k < nm; k++)
        free(t[k]);
    free(t);
    free(nt);
    return rc;
}

/* Gathers the model's numbers figure by figure and computes each
 * distribution. A device holds a figure at most once, so each figure's
 * column has room for every device of the model: one pass fills them. */
static int refresh_numbers(const struct fleet_index *ix, uint32_t model, struct fdist *dists,
                           size_t nm)
{
    size_t ndev = 0;
    for (size_t i = 0; i < ix->ndevs; i++)
        ndev += ix->devs[i].model == model;
    size_t cells = (nm ? nm : 1) * (ndev ? ndev : 1);
    double *vals = malloc(cells * sizeof *vals);
    double *scratch = malloc((ndev ? ndev : 1) * sizeof *scratch);
    size_t *fill = calloc(nm ? nm : 1, sizeof *fill);
    int rc = vals && scratch && fill ? 0 : -1;
    for (size_t i = 0; i < ix->ndevs && rc == 0; i++)
        if (ix->devs[i].model == model)
            for (size_t k = 0; k < ix->devs[i].n; k++) {
                const struct fval *v = &ix->devs[i].v[k];
                if (v->text == NO_TEXT)
                    vals[v->metric * ndev + fill[v->metric]++] = v->value;
            }
    for (size_t k = 0; k < nm && rc == 0; k++) {
        if (!fill[k])
            continue;
        dists[k].present = 1;
        fleet_dist_of(vals + k * ndev, fill[k], scratch, &dists[k].d);
    }
    free(vals);
    free(scratch);
    free(fill);
    return rc;
}

int fleet_models_refresh(struct fleet_index *ix)
{
    size_t nm = ix->metrics.n;
    for (size_t m = 0; m < ix->nmodels; m++) {
        struct fmodel *model = &ix->models[m];
        if (!model->stale && model->ndists == nm)
            continue;
        struct fdist *dists = calloc(nm ? nm : 1, sizeof *dists);
        if (!dists || refresh_numbers(ix, (uint32_t)m, dists, nm) != 0 ||
            refresh_categories(ix, (uint32_t)m, dists, nm) != 0) {
            free(dists);
            return -1;
        }
        free(model->dists);
        model->dists = dists;
        model->ndists = nm;
        model->stale = 0;
        model->judged = 0;
    }
    return 0;
}

/* ---- outliers ---------------------------------------------------------------- */

/* A model judged under a rule: each figure's half-width (fleet_outlier_half_width)
 * worked out once, so a value costs a subtraction and a comparison. */
struct judge {
    const struct fmodel *m;
    const struct fleet_rule *rule;
    double *half;               /* by figure id; < 0: not judged */
};

static int judge_init(struct judge *j, const struct fmodel *m, const struct fleet_rule *rule)
{
    j->m = m;
    j->rule = rule;
    j->half = malloc((m->ndists ? m->ndists : 1) * sizeof *j->half);
    for (size_t k = 0; j->half && k < m->ndists; k++)
        j->half[k] = m->dists[k].present && !m->dists[k].categorical
                         ? fleet_outlier_half_width(rule, &m->dists[k].d)
                         : -1;
    return j->half ? 0 : -1;
}

/* Whether v of a device is an outlier of its model. */
static int outlying(const struct judge *j, const struct fval *v)
{
    const struct fdist *f = &j->m->dists[v->metric];
    if (v->text != NO_TEXT)
        return f->mode != NO_TEXT && f->n_text >= j->rule->min_devices && v->text != f->mode;
    return j->half[v->metric] >= 0 && fabs(v->value - f->d.median) > j->half[v->metric];
}

static json_t *number_or_null(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

/* The device's driver, or null when none of its results named one. */
static json_t *driver_json(const struct fleet_index *ix, const struct fdev *d)
{
    return d->driver == NO_TEXT ? json_null() : json_string(strtab_str(&ix->names, d->driver));
}

static json_t *outlier_json(const struct fleet_index *ix, const struct fdev *d,
                            const struct judge *jd, const struct fval *v)
{
    const struct fdist *f = &jd->m->dists[v->metric];
    double mads = 0;
    if (v->text == NO_TEXT)
        fleet_is_outlier(jd->rule, &f->d, v->value, &mads);
    json_t *o = json_pack("{s:s, s:s, s:o, s:s}", "uuid", strtab_str(&ix->names, d->uuid),
                          "host", strtab_str(&ix->names, d->host), "driver_version",
                          driver_json(ix, d), "metric", strtab_str(&ix->metrics, v->metric));
    if (!o)
        return NULL;
    if (v->text != NO_TEXT) {
        json_object_set_new(o, "text", json_string(strtab_str(&ix->texts, v->text)));
        json_object_set_new(o, "mode", json_string(strtab_str(&ix->texts, f->mode)));
    } else {
        json_object_set_new(o, "value", json_real(v->value));
        json_object_set_new(o, "median", json_real(f->d.median));
        json_object_set_new(o, "deviation_mads", number_or_null(mads));
        json_object_set_new(o, "relative", f->d.median != 0
                                               ? json_real((v->value - f->d.median) /
                                                           fabs(f->d.median))
                                               : json_null());
    }
    json_object_set_new(o, "job_id", json_integer(v->job_id));
    return o;
}

/* ---- the view ------------------------------------------------------------------ */

static int matches(const char *want, const char *have)
{
    return !want || !*want || strcmp(want, have) == 0;
}

static int by_name(const void *a, const void *b, void *t)
{
    const struct strtab *tab = t;
    return strcmp(strtab_str(tab, *(const uint32_t *)a), strtab_str(tab, *(const uint32_t *)b));
}

/* Figure ids sorted by name (ids are in order of first sight). */
static uint32_t *metrics_by_name(const struct fleet_index *ix)
{
    uint32_t *ids = malloc((ix->metrics.n ? ix->metrics.n : 1) * sizeof *ids);
    if (!ids)
        return NULL;
    for (uint32_t i = 0; i < ix->metrics.n; i++)
        ids[i] = i;
    qsort_r(ids, ix->metrics.n, sizeof *ids, by_name, (void *)&ix->metrics);
    return ids;
}

static json_t *figure_json(const struct fleet_index *ix, uint32_t id, const struct fdist *f,
                           size_t outliers)
{
    const char *name = strtab_str(&ix->metrics, id);
    const struct fleet_family *fam = fleet_family_of(name);
    json_t *j = json_pack("{s:s, s:s, s:s, s:I}", "metric", name, "family", fam ? fam->name : "",
                          "unit", fam ? fam->unit : "", "outliers", (json_int_t)outliers);
    if (!j)
        return NULL;
    if (f->categorical) {
        json_object_set_new(j, "categorical", json_true());
        json_object_set_new(j, "n", json_integer((json_int_t)f->n_text));
        json_object_set_new(j, "mode", f->mode == NO_TEXT
                                           ? json_null()
                                           : json_string(strtab_str(&ix->texts, f->mode)));
        json_object_set_new(j, "mode_devices", json_integer((json_int_t)f->mode_count));
    } else {
        json_object_set_new(j, "n", json_integer((json_int_t)f->d.n));
        json_object_set_new(j, "median", json_real(f->d.median));
        json_object_set_new(j, "mad", json_real(f->d.mad));
        json_object_set_new(j, "min", json_real(f->d.min));
        json_object_set_new(j, "max", json_real(f->d.max));
    }
    return j;
}

static int model_by_name(const void *a, const void *b, void *ctx)
{
    const struct fleet_index *ix = ctx;
    return strcmp(strtab_str(&ix->names, ix->models[*(const uint32_t *)a].name),
                  strtab_str(&ix->names, ix->models[*(const uint32_t *)b].name));
}

static int device_in_order(const void *a, const void *b, void *ctx)
{
    const struct fleet_index *ix = ctx;
    const struct fdev *x = &ix->devs[*(const uint32_t *)a], *y = &ix->devs[*(const uint32_t *)b];
    int c = x->model == y->model ? 0
                                 : strcmp(strtab_str(&ix->names, ix->models[x->model].name),
                                          strtab_str(&ix->names, ix->models[y->model].name));
    if (!c)
        c = strcmp(strtab_str(&ix->names, x->host), strtab_str(&ix->names, y->host));
    return c ? c : strcmp(strtab_str(&ix->names, x->uuid), strtab_str(&ix->names, y->uuid));
}

/* ix->dev_order and ix->model_order for the index's version. */
static int order_index(struct fleet_index *ix)
{
    if (ix->order_version == ix->version && ix->dev_order)
        return 0;
    uint32_t *d = malloc((ix->ndevs ? ix->ndevs : 1) * sizeof *d);
    uint32_t *m = malloc((ix->nmodels ? ix->nmodels : 1) * sizeof *m);
    if (!d || !m) {
        free(d);
        free(m);
        return -1;
    }
    for (uint32_t i = 0; i < ix->ndevs; i++)
        d[i] = i;
    for (uint32_t i = 0; i < ix->nmodels; i++)
        m[i] = i;
    qsort_r(d, ix->ndevs, sizeof *d, device_in_order, ix);
    qsort_r(m, ix->nmodels, sizeof *m, model_by_name, ix);
    free(ix->dev_order);
    free(ix->model_order);
    ix->dev_order = d;
    ix->model_order = m;
    ix->order_version = ix->version;
    return 0;
}

static int same_rule(const struct fleet_rule *a, const struct fleet_rule *b)
{
    return a->k == b->k && a->min_relative == b->min_relative && a->min_devices == b->min_devices;
}

/* The model's outliers under rule into m->hits, unless they are there. */
static int judge_model(struct fleet_index *ix, uint32_t model, const struct fleet_rule *rule)
{
    struct fmodel *m = &ix->models[model];
    if (m->judged && same_rule(&m->rule, rule))
        return 0;
    struct judge jd;
    if (judge_init(&jd, m, rule) != 0)
        return -1;
    size_t n = 0, cap = 0;
    struct fhit *hits = NULL;
    int rc = 0;
    for (size_t o = 0; o < ix->ndevs && rc == 0; o++) {
        uint32_t i = ix->dev_order[o];
        const struct fdev *d = &ix->devs[i];
        if (d->model != model)
            continue;
        for (size_t k = 0; k < d->n; k++) {
            if (!outlying(&jd, &d->v[k]))
                continue;
            if (n == cap) {
                struct fhit *more = realloc(hits, (cap = cap ? 2 * cap : 64) * sizeof *more);
                if (!more) {
                    rc = -1;
                    break;
                }
                hits = more;
            }
            hits[n++] = (struct fhit){i, (uint32_t)k};
        }
    }
    free(jd.half);
    if (rc != 0) {
        free(hits);
        return -1;
    }
    free(m->hits);
    *m = (struct fmodel){.name = m->name, .cc = m->cc, .stale = m->stale, .dists = m->dists,
                         .ndists = m->ndists, .judged = 1, .rule = *rule, .hits = hits,
                         .nhits = n};
    return 0;
}

/* Counts for one model under the rule: outliers per figure, per device;
 * and its outliers (restricted by host) appended to list. */
static int model_outliers(struct fleet_index *ix, uint32_t model,
                          const struct fleet_query *q, size_t *per_metric, size_t *per_dev,
                          json_t *list)
{
    if (judge_model(ix, model, &q->rule) != 0)
        return -1;
    const struct fmodel *m = &ix->models[model];
    struct judge jd = {m, &q->rule, NULL};
    for (size_t h = 0; h < m->nhits; h++) {
        const struct fdev *d = &ix->devs[m->hits[h].dev];
        const struct fval *v = &d->v[m->hits[h].k];
        per_metric[v->metric]++;
        per_dev[m->hits[h].dev]++;
        if (matches(q->host, strtab_str(&ix->names, d->host)) &&
            json_array_append_new(list, outlier_json(ix, d, &jd, v)))
            return -1;
    }
    return 0;
}

static json_t *rule_json(const struct fleet_rule *r)
{
    return json_pack("{s:f, s:f, s:f, s:I, s:s}", "k", r->k, "mad_scale", FLEET_MAD_SCALE,
                     "min_relative", r->min_relative, "min_devices", (json_int_t)r->min_devices,
                     "text",
                     "a number is an outlier when at least min_devices GPUs of its model have "
                     "it and |x - median| > k x mad_scale x MAD and |x - median| > min_relative "
                     "x |median|; a category is when more than half the GPUs of its model "
                     "share another value");
}

static int by_count_then_name(const void *a, const void *b, void *t)
{
    const struct tally *x = a, *y = b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    if (x->text == NO_TEXT || y->text == NO_TEXT) /* unknown last */
        return (x->text == NO_TEXT) - (y->text == NO_TEXT);
    return strcmp(strtab_str(t, x->text), strtab_str(t, y->text));
}

/* The drivers the model's compared devices run, each with how many run it,
 * most common first: a model split over drivers shows here, since a driver
 * change can move figures. NULL when memory ran out. */
static json_t *drivers_json(const struct fleet_index *ix, uint32_t model)
{
    struct tally *t = NULL;
    size_t n = 0;
    for (size_t i = 0; i < ix->ndevs; i++) {
        const struct fdev *d = &ix->devs[i];
        if (d->model != model || !d->n)
            continue;
        size_t j = 0;
        while (j < n && t[j].text != d->driver)
            j++;
        if (j == n) {
            struct tally *more = realloc(t, (n + 1) * sizeof *more);
            if (!more) {
                free(t);
                return NULL;
            }
            t = more;
            t[n++] = (struct tally){d->driver, 0};
        }
        t[j].count++;
    }
    qsort_r(t, n, sizeof *t, by_count_then_name, (void *)&ix->names);
    json_t *list = json_array();
    for (size_t j = 0; list && j < n; j++) {
        json_t *e = json_pack("{s:o, s:I}", "driver_version",
                              t[j].text == NO_TEXT ? json_null()
                                                   : json_string(strtab_str(&ix->names, t[j].text)),
                              "devices", (json_int_t)t[j].count);
        if (json_array_append_new(list, e) != 0) {
            json_decref(list);
            list = NULL;
        }
    }
    free(t);
    return list;
}

static json_t *model_json(struct fleet_index *ix, uint32_t model,
                          const struct fleet_query *q, const uint32_t *order, size_t *per_dev)
{
    const struct fmodel *m = &ix->models[model];
    size_t nm = ix->metrics.n;
    size_t *per_metric = calloc(nm ? nm : 1, sizeof *per_metric);
    json_t *outliers = json_array(), *figures = json_array();
    if (!per_metric || !outliers || !figures ||
        model_outliers(ix, model, q, per_metric, per_dev, outliers) != 0) {
        free(per_metric);
        json_decref(outliers);
        json_decref(figures);
        return NULL;
    }
    size_t devices = 0, with_outliers = 0;
    struct strtab hosts;
    strtab_init(&hosts);
    for (size_t i = 0; i < ix->ndevs; i++)
        if (ix->devs[i].model == model && ix->devs[i].n) {
            devices++;
            with_outliers += per_dev[i] > 0;
            strtab_intern(&hosts, strtab_str(&ix->names, ix->devs[i].host));
        }
    for (size_t k = 0; k < nm; k++)
        if (order[k] < m->ndists && m->dists[order[k]].present)
            json_array_append_new(figures,
                                  figure_json(ix, order[k], &m->dists[order[k]],
                                              per_metric[order[k]]));
    json_t *j = json_pack("{s:s, s:s, s:I, s:I, s:o, s:I, s:o, s:o}", "model",
                          strtab_str(&ix->names, m->name), "compute_capability",
                          strtab_str(&ix->names, m->cc), "devices", (json_int_t)devices,
                          "hosts", (json_int_t)hosts.n, "drivers", drivers_json(ix, model),
                          "devices_with_outliers", (json_int_t)with_outliers, "figures", figures,
                          "outliers", outliers);
    strtab_free(&hosts);
    free(per_metric);
    return j;
}

/* names[id] as JSON text, encoded on first use and kept; NULL (memory). */
static const char *encoded_name(struct fleet_index *ix, uint32_t id)
{
    if (id >= ix->nencoded) {
        size_t n = ix->names.n > id ? ix->names.n : id + 1;
        char **more = realloc(ix->encoded, n * sizeof *more);
        if (!more)
            return NULL;
        memset(more + ix->nencoded, 0, (n - ix->nencoded) * sizeof *more);
        ix->encoded = more;
        ix->nencoded = n;
    }
    if (!ix->encoded[id]) {
        json_t *j = json_string(strtab_str(&ix->names, id));
        ix->encoded[id] = j ? json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
        json_decref(j);
    }
    return ix->encoded[id];
}

static int append_str(struct buf *b, const char *s)
{
    return s ? buf_append(b, s, strlen(s), SIZE_MAX) : -1;
}

/* The devices matching q with their outlier counts, a JSON array into b. */
static int devices_text(struct fleet_index *ix, const struct fleet_query *q,
                        const size_t *per_dev, struct buf *b)
{
    int rc = append_str(b, "[");
    const char *sep = "";
    for (size_t o = 0; rc == 0 && o < ix->ndevs; o++) {
        uint32_t i = ix->dev_order[o];
        const struct fdev *d = &ix->devs[i];
        uint32_t model = ix->models[d->model].name;
        if (!d->n || !matches(q->model, strtab_str(&ix->names, model)) ||
            !matches(q->host, strtab_str(&ix->names, d->host)))
            continue;
        char counts[64];
        snprintf(counts, sizeof counts, ",\"figures\":%zu,\"outliers\":%zu}", d->n, per_dev[i]);
        rc = append_str(b, sep) | append_str(b, "{\"uuid\":") |
             append_str(b, encoded_name(ix, d->uuid)) | append_str(b, ",\"host\":") |
             append_str(b, encoded_name(ix, d->host)) | append_str(b, ",\"model\":") |
             append_str(b, encoded_name(ix, model)) | append_str(b, ",\"driver_version\":") |
             append_str(b, d->driver == NO_TEXT ? "null" : encoded_name(ix, d->driver)) |
             append_str(b, counts);
        sep = ",";
    }
    return rc | append_str(b, "]");
}

/* The rule and the models (jansson), then the device list spliced in
 * before the closing brace. */
static char *view_text(struct fleet_index *ix, const struct fleet_query *q, json_t *models,
                       const size_t *per_dev, size_t *len)
{
    json_t *head = json_pack("{s:o, s:O}", "rule", rule_json(&q->rule), "models", models);
    char *text = head ? json_dumps(head, JSON_COMPACT) : NULL;
    json_decref(head);
    struct buf b = {0};
    size_t n = text ? strlen(text) : 0;
    int rc = n >= 2 && text[n - 1] == '}' ? 0 : -1;
    if (rc == 0)
        rc = buf_append(&b, text, n - 1, SIZE_MAX) | append_str(&b, ",\"devices\":") |
             devices_text(ix, q, per_dev, &b) | append_str(&b, "}");
    free(text);
    if (rc != 0) {
        buf_free(&b);
        return NULL;
    }
    *len = b.len;
    return b.data;
}

char *fleet_index_view(struct fleet_index *ix, const struct fleet_query *q, size_t *len)
{
    pthread_mutex_lock(&ix->lock);
    char *out = NULL;
    json_t *models = json_array();
    uint32_t *order = NULL;
    size_t *per_dev = calloc(ix->ndevs ? ix->ndevs : 1, sizeof *per_dev);
    if (!models || !per_dev || fleet_models_refresh(ix) != 0 || order_index(ix) != 0 ||
        !(order = metrics_by_name(ix)))
        goto done;
    for (size_t o = 0; o < ix->nmodels; o++) {
        uint32_t m = ix->model_order[o];
        if (!matches(q->model, strtab_str(&ix->names, ix->models[m].name)))
            continue;
        json_t *mj = model_json(ix, m, q, order, per_dev);
        if (!mj)
            goto done;
        /* a model none of whose devices has a figure is no comparison */
        if (json_integer_value(json_object_get(mj, "devices")) == 0)
            json_decref(mj);
        else if (json_array_append_new(models, mj) != 0)
            goto done;
    }
    out = view_text(ix, q, models, per_dev, len);
done:
    pthread_mutex_unlock(&ix->lock);
    json_decref(models);
    free(order);
    free(per_dev);
    return out;
}

/* ---- one figure's distribution -------------------------------------------------- */

static const struct fval *value_of(const struct fdev *d, uint32_t metric)
{
    size_t lo = 0, hi = d->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (d->v[mid].metric < metric)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < d->n && d->v[lo].metric == metric ? &d->v[lo] : NULL;
}

/* One device's value of the figure, for sorting. */
struct point {
    const struct fdev *d;
    const struct fval *v;
    const char *text;
    int outlier;
};

static int by_value(const void *a, const void *b)
{
    const struct point *x = a, *y = b;
    if (x->text || y->text)
        return strcmp(x->text ? x->text : "", y->text ? y->text : "");
    return (x->v->value > y->v->value) - (x->v->value < y->v->value);
}

static json_t *point_json(const struct fleet_index *ix, const struct point *p)
{
    json_t *e = json_pack("{s:s, s:s, s:o, s:I, s:b}", "uuid",
                          strtab_str(&ix->names, p->d->uuid), "host",
                          strtab_str(&ix->names, p->d->host), "driver_version",
                          driver_json(ix, p->d), "job_id", (json_int_t)p->v->job_id, "outlier",
                          p->outlier);
    if (e)
        json_object_set_new(e, p->text ? "text" : "value",
                            p->text ? json_string(p->text) : json_real(p->v->value));
    return e;
}

/* The points of figure fid over model mid, sorted; *n of them. */
static struct point *points_of(const struct fleet_index *ix, uint32_t mid, uint32_t fid,
                               const struct fleet_rule *rule, size_t *n)
{
    struct judge jd;
    struct point *p = malloc((ix->ndevs ? ix->ndevs : 1) * sizeof *p);
    *n = 0;
    if (!p || judge_init(&jd, &ix->models[mid], rule) != 0) {
        free(p);
        return NULL;
    }
    for (size_t i = 0; i < ix->ndevs; i++) {
        const struct fdev *d = &ix->devs[i];
        const struct fval *v = d->model == mid ? value_of(d, fid) : NULL;
        if (v)
            p[(*n)++] = (struct point){d, v,
                                       v->text != NO_TEXT ? strtab_str(&ix->texts, v->text)
                                                          : NULL,
                                       outlying(&jd, v)};
    }
    free(jd.half);
    qsort(p, *n, sizeof *p, by_value);
    return p;
}

json_t *fleet_index_distribution(struct fleet_index *ix, const char *model, const char *metric,
                                 const struct fleet_rule *rule, int *unknown, char *err,
                                 size_t errlen)
{
    *unknown = 0;
    pthread_mutex_lock(&ix->lock);
    json_t *out = NULL, *values = NULL;
    struct point *p = NULL;
    size_t n = 0, outliers = 0;
    uint32_t mid = UINT32_MAX, fid = strtab_find(&ix->metrics, metric);
    for (size_t m = 0; m < ix->nmodels; m++)
        if (strcmp(strtab_str(&ix->names, ix->models[m].name), model) == 0)
            mid = (uint32_t)m;
    if (fleet_models_refresh(ix) != 0) {
        errf(err, errlen, "out of memory");
        goto done;
    }
    if (mid == UINT32_MAX || fid == UINT32_MAX || !ix->models[mid].dists[fid].present) {
        *unknown = 1;
        errf(err, errlen, mid == UINT32_MAX ? "no GPU of model '%s' has fleet figures"
                                            : "no GPU of model '%s' has the figure '%s'",
             model, metric);
        goto done;
    }
    const struct fdist *f = &ix->models[mid].dists[fid];
    if (!(p = points_of(ix, mid, fid, rule, &n)) || !(values = json_array())) {
        errf(err, errlen, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        outliers += p[i].outlier;
        json_array_append_new(values, point_json(ix, &p[i]));
    }
    out = figure_json(ix, fid, f, outliers);
    if (out) {
        json_object_set_new(out, "model", json_string(model));
        if (!f->categorical) {
            double low, high; /* none where the rule does not apply (too few GPUs) */
            int bounded = fleet_outlier_bounds(rule, &f->d, &low, &high) == 0;
            json_object_set_new(out, "low", bounded ? json_real(low) : json_null());
            json_object_set_new(out, "high", bounded ? json_real(high) : json_null());
        }
        json_object_set(out, "values", values);
    }
done:
    pthread_mutex_unlock(&ix->lock);
    json_decref(values);
    free(p);
    return out;
}
