/*
 * GET /metrics (see metrics.h): which devices' figures it serves, and the
 * page. metrics_devices = local (the default) serves the devices of this
 * host, attached or not, since each node's Prometheus target then carries
 * its own GPUs and a fleet's series are not counted once per node that
 * holds a copy of them; all serves every device the store holds (a central
 * daemon, or the reference data on a machine without a GPU).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/api/handlers.h"
#include "server/api/metrics.h"
#include "server/api/routes.h"
#include "server/app.h"

/* The index of the attached device uuid, or -1. */
static int attached_index(struct app *app, const char *uuid)
{
    int index = -1;
    pthread_mutex_lock(&app->inv_lock);
    for (size_t i = 0; i < app->inv.count && index < 0; i++)
        if (strcmp(app->inv.devices[i].uuid, uuid) == 0)
            index = app->inv.devices[i].index;
    pthread_mutex_unlock(&app->inv_lock);
    return index;
}

/* The devices whose figures the page carries, out of the stored ones. */
static size_t pick_devices(struct app *app, const struct device_row *rows, size_t n,
                           struct metrics_device *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *host = rows[i].hostname ? rows[i].hostname : "";
        if (app->cfg.metrics_devices == METRICS_DEVICES_LOCAL && strcmp(host, app->hostname) != 0)
            continue;
        out[k++] = (struct metrics_device){rows[i].uuid, rows[i].name ? rows[i].name : "", host,
                                           attached_index(app, rows[i].uuid)};
    }
    return k;
}

static int write_page(struct app *app, struct prom_page *p, char *err, size_t errlen)
{
    struct device_row *rows = NULL;
    size_t n = 0;
    if (store_device_list(app->db, &rows, &n, err, errlen) < 0)
        return -1;
    struct metrics_device *devs = n ? calloc(n, sizeof *devs) : NULL;
    int rc = n && !devs ? -1 : 0;
    if (rc != 0)
        snprintf(err, errlen, "out of memory");
    metrics_write_build_and_store(app->cfg.db, p);
    if (rc == 0)
        rc = metrics_write_jobs(app->db, p, err, errlen);
    if (rc == 0) {
        metrics_write_worker_failures(p);
        metrics_write_http(app->req_stats, routes, p);
        metrics_write_connections(app->http, p);
        rc = metrics_write_figures(app->db, devs, pick_devices(app, rows, n, devs), p, err,
                                   errlen);
    }
    free(devs);
    device_rows_free(rows, n);
    return rc;
}

void h_metrics(struct http_req *rq, struct http_resp *rs)
{
    struct prom_page p = {0};
    char err[512];
    size_t len = 0;
    if (write_page(rq->app, &p, err, sizeof err) != 0) {
        prom_free(&p);
        problem(rq, rs, 503, "unavailable", "the metrics could not be read: %s", err);
        return;
    }
    char *text = prom_take(&p, &len);
    if (!text) {
        problem(rq, rs, 500, "internal", "out of memory writing the metrics");
        return;
    }
    rs->status = 200;
    rs->content_type = PROM_TEXT_CONTENT_TYPE;
    rs->body = text;
    rs->len = len;
}
