/*
 * Importing a bundle (see bundle.h).
 *
 * DESIGN
 * Reading is separate from writing: one pass over the document checks every
 * member, naming the first fault by its path, and fills the plain structs
 * store_import takes (strings point into the document, the JSON texts of
 * parameters, results and descriptions are made here and freed at the
 * end); only a bundle that passes reaches the store.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fleet/metrics.h"
#include "server/bundles/bundle.h"
#include "server/config.h"
#include "server/jobs/registry.h"
#include "util/rfc3339.h"

struct reader {
    char *err, *field;
    size_t errlen, fieldlen;
    char path[160];            /* the member being read: "devices[0].results[3]" */
    char **texts;              /* JSON texts made for the store, freed at the end */
    size_t ntexts;
};

static int refuse(struct reader *r, const char *member, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int refuse(struct reader *r, const char *member, const char *fmt, ...)
{
    va_list ap;
    snprintf(r->field, r->fieldlen, "%s%s%s", r->path, r->path[0] && member[0] ? "." : "",
             member);
    int n = snprintf(r->err, r->errlen, "%s: ", r->field[0] ? r->field : "bundle");
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < r->errlen)
        vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

/* A JSON text of v kept until the import ends; NULL when out of memory. */
static const char *text_of(struct reader *r, const json_t *v)
{
    char **more = realloc(r->texts, (r->ntexts + 1) * sizeof *more);
    char *t = more ? json_dumps(v, JSON_COMPACT) : NULL;
    if (more)
        r->texts = more;
    if (t)
        r->texts[r->ntexts++] = t;
    return t;
}

static int string_member(struct reader *r, const json_t *obj, const char *key, const char **out)
{
    *out = json_string_value(json_object_get(obj, key));
    if (*out && **out)
        return 0;
    return refuse(r, key, "must be a non-empty string");
}

static int time_member(struct reader *r, const json_t *obj, const char *key, int required,
                       int64_t *ms)
{
    const json_t *v = json_object_get(obj, key);
    *ms = 0;
    if ((!v || json_is_null(v)) && !required)
        return 0;
    if (json_is_string(v) && rfc3339_parse(json_string_value(v), ms) == 0)
        return 0;
    return refuse(r, key, "must be a time as YYYY-MM-DDTHH:MM:SS.mmmZ");
}

/* A job is created, started, then finished, and not after the import: a
 * finish time to come would stay "newest" over every later measurement. */
static int times_in_order(struct reader *r, const struct store_import_result *t)
{
    int64_t now = (int64_t)time(NULL) * 1000, slack = 86400 * 1000LL; /* clocks of other hosts */
    if (t->finished_ms <= 0 || t->finished_ms > now + slack)
        return refuse(r, "finished_at", "must be a time after 1970 and not after today");
    if (t->started_ms && (t->started_ms < 0 || t->started_ms > t->finished_ms))
        return refuse(r, "started_at", "must not be after finished_at");
    if (t->created_ms && (t->created_ms < 0 || (t->started_ms ? t->started_ms : t->finished_ms) < t->created_ms))
        return refuse(r, "created_at", "must not be after started_at (or finished_at)");
    return 0;
}

/* The job a result was measured as. */
static int read_job(struct reader *r, const json_t *job, struct store_import_result *out)
{
    const json_t *id = json_object_get(job, "id"), *t = json_object_get(job, "timeout_s");
    const json_t *v = json_object_get(job, "gpuprobe_version");
    const json_t *params = json_object_get(job, "params");
    if (!json_is_object(job))
        return refuse(r, "job", "must be an object");
    size_t len = strlen(r->path);
    snprintf(r->path + len, sizeof r->path - len, ".job");
    int rc = string_member(r, job, "host", &out->origin_host);
    if (rc == 0 && (!json_is_integer(id) || json_integer_value(id) < 1))
        rc = refuse(r, "id", "must be a positive integer (the job's id where it ran)");
    if (rc == 0 && !bundle_name_ok(out->origin_host))
        rc = refuse(r, "host", "must be 1 to %d bytes without control characters", BUNDLE_NAME_MAX);
    if (rc == 0 && t &&
        (!json_is_integer(t) || json_integer_value(t) < 1 || json_integer_value(t) > CONFIG_JOB_TIMEOUT_MAX_S))
        rc = refuse(r, "timeout_s", "must be an integer from 1 to %d (the longest deadline a job is given)",
                    CONFIG_JOB_TIMEOUT_MAX_S);
    if (rc == 0 && v && !json_is_null(v) && !json_is_string(v))
        rc = refuse(r, "gpuprobe_version", "must be a string or null");
    if (rc == 0 && !json_is_object(params))
        rc = refuse(r, "params", "must be an object");
    if (rc == 0)
        rc = time_member(r, job, "finished_at", 1, &out->finished_ms) ||
             time_member(r, job, "started_at", 0, &out->started_ms) ||
             time_member(r, job, "created_at", 0, &out->created_ms) || times_in_order(r, out);
    r->path[len] = '\0';
    if (rc)
        return -1;
    out->origin_job = json_integer_value(id);
    out->timeout_s = t ? (int)json_integer_value(t) : 1;
    out->gpuprobe_version = json_string_value(v);
    out->params_json = text_of(r, params);
    return out->params_json ? 0 : refuse(r, "job", "out of memory");
}

/* The device one document (at path: "result", "result.latency") says it
 * measured must be dev. */
static int device_matches(struct reader *r, const json_t *doc, const char *path,
                          const struct store_import_device *dev)
{
    char field[96];
    const json_t *d = json_object_get(doc, "device");
    const char *uuid = json_string_value(json_object_get(d, "uuid"));
    const char *cc = json_string_value(json_object_get(d, "compute_capability"));
    if (uuid && strcmp(uuid, dev->uuid) != 0) {
        snprintf(field, sizeof field, "%s.device.uuid", path);
        return refuse(r, field, "the result is for %.80s, not for %.80s, the device it is listed under",
                      uuid, dev->uuid);
    }
    if (cc && strcmp(cc, dev->compute_capability) != 0) {
        snprintf(field, sizeof field, "%s.device.compute_capability", path);
        return refuse(r, field, "the result says %.16s, its device says %.16s", cc, dev->compute_capability);
    }
    return 0;
}

/* The device a result's document says it measured must be the one it is
 * listed under, and so must each of its members' that names one (a
 * suite's parts): the store would refuse it later, as its own failure (a
 * 503, which a pushing node retries for ever). */
static int same_device(struct reader *r, const json_t *doc, const struct store_import_device *dev)
{
    if (device_matches(r, doc, "result", dev) != 0)
        return -1;
    const char *key;
    const json_t *part;
    json_object_foreach((json_t *)doc, key, part) {
        char path[64];
        snprintf(path, sizeof path, "result.%.40s", key);
        if (json_is_object(part) && json_is_object(json_object_get(part, "device")) &&
            device_matches(r, part, path, dev) != 0)
            return -1;
    }
    return 0;
}

/* One result of a device: its kind (one that keeps results), its job, and
 * a document its kind's check accepts. */
static int read_result(struct reader *r, const json_t *res, const struct store_import_device *dev,
                       struct store_import_result *out)
{
    const json_t *doc = json_object_get(res, "result");
    char why[512];
    if (!json_is_object(res))
        return refuse(r, "", "must be an object");
    if (string_member(r, res, "kind", &out->kind) != 0)
        return -1;
    const struct job_kind *k = job_kind_find(out->kind);
    if (!k || !k->save)
        return refuse(r, "kind", "'%.60s' is not a job kind whose results this gpuprobe keeps",
                      out->kind);
    out->save = k->save;
    out->summary = strcmp(out->kind, FLEET_FIGURES_KIND) == 0;
    if (read_job(r, json_object_get(res, "job"), out) != 0)
        return -1;
    if (!json_is_object(doc))
        return refuse(r, "result", "must be an object");
    if (k->check_result && k->check_result(doc, why, sizeof why) < 0)
        return refuse(r, "result", "%s", why);
    if (same_device(r, doc, dev) != 0)
        return -1;
    out->result = doc; /* the bundle outlives the import: the store need not parse it again */
    out->result_json = text_of(r, doc);
    return out->result_json ? 0 : refuse(r, "result", "out of memory");
}

static int read_device(struct reader *r, const json_t *dev, struct store_import_device *out)
{
    const json_t *results = json_object_get(dev, "results"), *info = json_object_get(dev, "info");
    if (!json_is_object(dev))
        return refuse(r, "", "must be an object");
    if (string_member(r, dev, "uuid", &out->uuid) || string_member(r, dev, "name", &out->name) ||
        string_member(r, dev, "compute_capability", &out->compute_capability) ||
        string_member(r, dev, "host", &out->host))
        return -1;
    if (!bundle_uuid_ok(out->uuid))
        return refuse(r, "uuid", "must be 1 to %d letters, digits and '-_.:' (a GPU's UUID, as GPU-8c4d...)",
                      BUNDLE_UUID_MAX);
    if (!bundle_name_ok(out->name))
        return refuse(r, "name", "must be 1 to %d bytes without control characters", BUNDLE_NAME_MAX);
    if (!bundle_name_ok(out->host))
        return refuse(r, "host", "must be 1 to %d bytes without control characters", BUNDLE_NAME_MAX);
    if (!bundle_cc_ok(out->compute_capability))
        return refuse(r, "compute_capability", "must be MAJOR.MINOR, as 9.0");
    if (info && !json_is_object(info))
        return refuse(r, "info", "must be an object");
    if (!json_is_array(results))
        return refuse(r, "results", "must be an array");
    out->info_json = info ? text_of(r, info) : "{}";
    if (!out->info_json)
        return refuse(r, "info", "out of memory");
    struct store_import_result *rs = calloc(json_array_size(results) + 1, sizeof *rs);
    out->results = rs;
    out->nresults = json_array_size(results);
    if (!rs)
        return refuse(r, "results", "out of memory");
    size_t len = strlen(r->path);
    for (size_t i = 0; i < out->nresults; i++) {
        snprintf(r->path + len, sizeof r->path - len, ".results[%zu]", i);
        if (read_result(r, json_array_get(results, i), out, &rs[i]) != 0)
            return -1;
    }
    r->path[len] = '\0';
    return 0;
}

/* Format, version and digest: what must hold before a member is read. */
static int read_envelope(struct reader *r, const json_t *b)
{
    const json_t *format = json_object_get(b, "format"), *version = json_object_get(b, "version");
    const char *sha = json_string_value(json_object_get(b, "sha256"));
    char hex[65];
    if (!json_is_object(b))
        return refuse(r, "", "must be a JSON object");
    if (!json_is_string(format) || strcmp(json_string_value(format), BUNDLE_FORMAT) != 0)
        return refuse(r, "format", "must be \"%s\"", BUNDLE_FORMAT);
    if (!json_is_integer(version))
        return refuse(r, "version", "must be an integer (the bundle format's version)");
    if (json_integer_value(version) != BUNDLE_VERSION)
        return refuse(r, "version", "version %lld is not one this gpuprobe reads (it reads %d)",
                      (long long)json_integer_value(version), BUNDLE_VERSION);
    if (!sha)
        return refuse(r, "sha256", "is missing (the digest of the bundle's content)");
    if (bundle_digest(b, hex) != 0)
        return refuse(r, "", "out of memory");
    if (strcmp(sha, hex) != 0)
        return refuse(r, "sha256", "does not match the content (computed %s): the bundle was "
                      "changed or damaged", hex);
    return 0;
}

static int by_uuid(const void *a, const void *b)
{
    const struct store_import_device *const *x = a, *const *y = b;
    return strcmp((*x)->uuid, (*y)->uuid);
}

/* A device listed twice would be two devices to the store's readers. */
static int distinct_devices(struct reader *r, const struct store_import_device *devs, size_t n)
{
    const struct store_import_device **v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return refuse(r, "devices", "out of memory");
    for (size_t i = 0; i < n; i++)
        v[i] = &devs[i];
    qsort(v, n, sizeof *v, by_uuid);
    int rc = 0;
    for (size_t i = 1; i < n && rc == 0; i++)
        if (strcmp(v[i]->uuid, v[i - 1]->uuid) == 0) {
            size_t a = (size_t)(v[i - 1] - devs), b = (size_t)(v[i] - devs);
            snprintf(r->path, sizeof r->path, "devices[%zu]", a > b ? a : b);
            rc = refuse(r, "uuid", "%.80s is listed twice (also devices[%zu]): give its results in one entry",
                        v[i]->uuid, a < b ? a : b);
        }
    free(v);
    return rc;
}

static void release(struct reader *r, struct store_import_device *devs, size_t n)
{
    for (size_t i = 0; devs && i < n; i++)
        free((void *)devs[i].results);
    free(devs);
    for (size_t i = 0; i < r->ntexts; i++)
        free(r->texts[i]);
    free(r->texts);
}

/* Reads and checks the whole bundle into *devs (n entries; release them
 * whatever the answer), counting its results in c. 0, or -1 after refuse(). */
static int read_bundle(struct reader *r, const json_t *bundle, struct store_import_device **devs, size_t *n,
                       struct bundle_counts *c)
{
    const json_t *list = json_object_get(bundle, "devices");
    *n = json_array_size(list);
    *devs = NULL;
    memset(c, 0, sizeof *c);
    r->field[0] = '\0';
    int rc = read_envelope(r, bundle);
    if (rc == 0 && !json_is_array(list))
        rc = refuse(r, "devices", "must be an array");
    if (rc == 0 && !(*devs = calloc(*n + 1, sizeof **devs)))
        rc = refuse(r, "devices", "out of memory");
    for (size_t i = 0; rc == 0 && i < *n; i++) {
        snprintf(r->path, sizeof r->path, "devices[%zu]", i);
        rc = read_device(r, json_array_get(list, i), &(*devs)[i]);
        c->results += (*devs)[i].nresults;
    }
    return rc == 0 ? distinct_devices(r, *devs, *n) : rc;
}

int bundle_check(const json_t *bundle, char *err, size_t errlen, char *field, size_t fieldlen)
{
    struct reader r = {.err = err, .errlen = errlen, .field = field, .fieldlen = fieldlen};
    struct store_import_device *devs;
    struct bundle_counts c;
    size_t n;
    int rc = read_bundle(&r, bundle, &devs, &n, &c);
    release(&r, devs, n);
    return rc;
}

int bundle_import(store *s, const json_t *bundle, struct bundle_counts *c, char *err,
                  size_t errlen, char *field, size_t fieldlen)
{
    struct reader r = {.err = err, .errlen = errlen, .field = field, .fieldlen = fieldlen};
    struct store_import_device *devs;
    struct store_import_counts ic;
    size_t n;
    int rc = read_bundle(&r, bundle, &devs, &n, c);
    if (rc == 0 && (rc = store_import(s, devs, n, &ic, err, errlen)) == 0) {
        c->devices = n;
        c->devices_added = ic.devices_added;
        c->results_added = ic.results_added;
        c->results_held = ic.results_held;
    }
    release(&r, devs, n);
    return rc;
}
