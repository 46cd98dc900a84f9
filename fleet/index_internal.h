/*
 * The fleet index's insides, shared by index.c (loading and keeping it
 * current) and view.c (distributions, outliers, the JSON views).
 */
#ifndef GPUPROBE_FLEET_INDEX_INTERNAL_H
#define GPUPROBE_FLEET_INDEX_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "fleet/index.h"
#include "fleet/strtab.h"

#define NO_TEXT UINT32_MAX

/* One figure of one device. */
struct fval {
    uint32_t metric;      /* id in ix->metrics */
    uint32_t text;        /* id in ix->texts for a category, else NO_TEXT */
    double value;
    int64_t job_id;
};

struct fdev {
    uint32_t uuid;        /* id in ix->names, also this device's index */
    uint32_t host;        /* id in ix->names */
    uint32_t model;       /* index in ix->models */
    /* the driver of its newest result that names one (id in ix->names, NO_TEXT
     * if none does), measured at driver_ms: a driver change can move figures,
     * so the views show it beside them */
    uint32_t driver;
    int64_t driver_ms;
    struct fval *v;       /* sorted by metric id */
    size_t n;
};

/* One figure's distribution over one model. */
struct fdist {
    int present;          /* some device of the model has it */
    int categorical;
    struct fleet_dist d;  /* numbers */
    uint32_t mode;        /* categories: the most common text, NO_TEXT if none holds > half */
    size_t mode_count, n_text;
};

/* An outlier: device index and the place of the value in its v[]. */
struct fhit {
    uint32_t dev, k;
};

struct fmodel {
    uint32_t name;        /* id in ix->names */
    uint32_t cc;          /* id in ix->names */
    int stale;            /* a device changed since dists were computed */
    struct fdist *dists;  /* by metric id, ndists of them */
    size_t ndists;
    /* the outliers under `rule`, valid while `judged` (cleared with the
     * dists): a view after a push judges the changed model alone */
    int judged;
    struct fleet_rule rule;
    struct fhit *hits;
    size_t nhits;
};

/* A device whose figures a transaction may have changed. */
struct touched {
    char uuid[48];
    uint64_t gen;
};

struct fleet_index {
    pthread_mutex_t lock;
    int loaded;
    uint64_t version;        /* moves whenever devices are (re)read: what views depend on */
    char **encoded;          /* names[id] as JSON text, made on first use (view.c) */
    size_t nencoded;
    /* the order views list things in, whatever order they were loaded in:
     * devices by model name, host and UUID, models by name (view.c) */
    uint32_t *dev_order, *model_order;
    uint64_t order_version;  /* the version they were made at; 0: never */
    struct strtab names;     /* uuids, hosts, model names, capabilities, drivers */
    struct strtab metrics;   /* figure names */
    struct strtab texts;     /* categories */
    struct fdev *devs;       /* devs[i] for device id i of dev_ids */
    struct strtab dev_ids;   /* uuid -> device index */
    size_t ndevs, capdevs;
    struct fmodel *models;
    size_t nmodels, capmodels;
    struct touched *touched;
    size_t ntouched, captouched;
};

/* Computes the distributions of every stale model. 0, or -1 (memory). */
int fleet_models_refresh(struct fleet_index *ix);

#endif
