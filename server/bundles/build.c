/*
 * Building a bundle from the store (see bundle.h), and the digest and counts
 * both directions share.
 */
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/bundles/bundle.h"
#include "server/jobs/registry.h"
#include "util/rfc3339.h"
#include "util/version.h"

/* ---- the digest ------------------------------------------------------------ */

static int hash_chunk(const char *buffer, size_t size, void *data)
{
    sha256_update(data, size, (const uint8_t *)buffer);
    return 0;
}

/* The canonical form goes straight into the hash: a bundle's text is never
 * held whole. */
int bundle_digest(const json_t *bundle, char hex[65])
{
    json_t *copy = json_copy((json_t *)bundle);
    if (!copy)
        return -1;
    json_object_del(copy, "sha256");
    struct sha256_ctx ctx;
    uint8_t d[SHA256_DIGEST_SIZE];
    sha256_init(&ctx);
    int rc = json_dump_callback(copy, hash_chunk, &ctx,
                                JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    json_decref(copy);
    if (rc != 0)
        return -1;
    sha256_digest(&ctx, sizeof d, d);
    for (size_t i = 0; i < sizeof d; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    return 0;
}

json_t *bundle_counts_json(const struct bundle_counts *c)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I}", "devices", (json_int_t)c->devices,
                     "devices_added", (json_int_t)c->devices_added, "results",
                     (json_int_t)c->results, "results_added", (json_int_t)c->results_added,
                     "results_held", (json_int_t)c->results_held);
}

/* ---- building ----------------------------------------------------------------- */

static json_t *parsed(const char *text)
{
    json_t *j = text ? json_loads(text, 0, NULL) : NULL;
    return j ? j : json_object();
}

/* One result: where it was measured (its origin, kept through exports),
 * its job and its document. */
static json_t *result_json(const struct job_row *j, const char *here)
{
    const char *host = j->origin_host ? j->origin_host : here;
    int64_t id = j->origin_host ? j->origin_job : j->id;
    json_t *job = json_pack("{s:s, s:I, s:o, s:i, s:o, s:o, s:o, s:o}", "host", host, "id",
                            (json_int_t)id, "params", parsed(j->params_json), "timeout_s",
                            j->timeout_s, "created_at", time_to_json(j->created_ms),
                            "started_at", time_to_json(j->started_ms), "finished_at",
                            time_to_json(j->finished_ms), "gpuprobe_version",
                            j->gpuprobe_version ? json_string(j->gpuprobe_version)
                                                : json_null());
    return json_pack("{s:s, s:o, s:o}", "kind", j->kind, "job", job, "result",
                     parsed(j->result_json));
}

/* The device with the results of rows that bundles carry. */
static json_t *device_with(const struct device_row *d, const struct job_row *rows, size_t n,
                           const char *publish_host)
{
    const char *host = publish_host ? publish_host : d->hostname;
    json_t *results = json_array();
    for (size_t i = 0; i < n; i++)
        if (job_kind_keeps_results(rows[i].kind))
            json_array_append_new(results, result_json(&rows[i], host));
    return json_pack("{s:s, s:s, s:s, s:s, s:o, s:o}", "uuid", d->uuid, "name", d->name, "compute_capability",
                     d->compute_capability, "host", host, "info", parsed(d->info_json), "results",
                     results);
}

/* The device with its results; NULL with err. An empty result list is
 * left to the caller. */
static json_t *device_json(store *s, const struct device_row *d, const char *publish_host,
                           char *err, size_t errlen)
{
    struct job_row *rows = NULL;
    size_t n = 0;
    if (store_device_results(s, d->uuid, &rows, &n, err, errlen) < 0)
        return NULL;
    json_t *j = device_with(d, rows, n, publish_host);
    job_rows_free(rows, n);
    return j;
}

static int wanted(const char *uuid, const char *const *uuids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(uuids[i], uuid) == 0)
            return 1;
    return n == 0;
}

/* The first UUID asked for that the store does not have, or NULL. */
static const char *missing(const struct device_row *rows, size_t nrows,
                           const char *const *uuids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < nrows && strcmp(rows[k].uuid, uuids[i]) != 0)
            k++;
        if (k == nrows)
            return uuids[i];
    }
    return NULL;
}

/* The devices wanted, each with its results, into list. */
static int add_devices(store *s, json_t *list, const struct device_row *rows, size_t nrows,
                       const char *const *uuids, size_t n, const char *publish_host, char *err,
                       size_t errlen)
{
    for (size_t i = 0; i < nrows; i++) {
        if (!wanted(rows[i].uuid, uuids, n))
            continue;
        json_t *d = device_json(s, &rows[i], publish_host, err, errlen);
        if (!d)
            return -1;
        /* every device asked for goes out; unasked, only those with results */
        if (n == 0 && json_array_size(json_object_get(d, "results")) == 0)
            json_decref(d);
        else
            json_array_append_new(list, d);
    }
    return 0;
}

/* The bundle of the devices in list, stamped and digested; NULL with err. */
static json_t *envelope(json_t *list, char *err, size_t errlen)
{
    char now[RFC3339_LEN], hex[65];
    rfc3339_format(store_now_ms(), now);
    json_t *b = json_pack("{s:s, s:i, s:s, s:s, s:O}", "format", BUNDLE_FORMAT, "version",
                          BUNDLE_VERSION, "exported_at", now, "exported_by", gpuprobe_version(),
                          "devices", list);
    if (b && bundle_digest(b, hex) == 0) {
        json_object_set_new(b, "sha256", json_string(hex));
        return b;
    }
    snprintf(err, errlen, "out of memory");
    json_decref(b);
    return NULL;
}

json_t *bundle_build(store *s, const char *const *uuids, size_t n, const char *publish_host,
                     int *unknown, char *err, size_t errlen)
{
    struct device_row *rows = NULL;
    size_t nrows = 0;
    *unknown = 0;
    if (store_device_list(s, &rows, &nrows, err, errlen) < 0)
        return NULL;
    const char *absent = missing(rows, nrows, uuids, n);
    json_t *list = json_array(), *b = NULL;
    if (absent) {
        *unknown = 1;
        snprintf(err, errlen, "no device %s in this store", absent);
    } else if (add_devices(s, list, rows, nrows, uuids, n, publish_host, err, errlen) == 0) {
        b = envelope(list, err, errlen);
    }
    json_decref(list);
    device_rows_free(rows, nrows);
    return b;
}

json_t *bundle_build_job(store *s, int64_t job_id, int *gone, char *err, size_t errlen)
{
    struct job_row job;
    struct device_row dev;
    json_t *b = NULL;
    *gone = 0;
    int rc = store_job_get(s, job_id, &job, err, errlen);
    if (rc == 0 && (job.state != JOB_SUCCEEDED || !job.device || !job_kind_keeps_results(job.kind)))
        rc = 1;
    int drc = rc == 0 ? store_device_get(s, job.device, &dev, err, errlen) : 1;
    if (rc == 1 || (rc == 0 && drc == 1)) {
        *gone = 1;
        snprintf(err, errlen, "job %lld is no result of a device that bundles carry",
                 (long long)job_id);
    } else if (rc == 0 && drc == 0) {
        json_t *list = json_array();
        json_t *d = device_with(&dev, &job, 1, NULL);
        if (d && json_array_append_new(list, d) == 0)
            b = envelope(list, err, errlen);
        else
            snprintf(err, errlen, "out of memory");
        json_decref(list);
    }
    if (drc == 0)
        device_row_free(&dev);
    job_row_free(&job);
    return b;
}
