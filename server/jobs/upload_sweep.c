/*
 * The start-up sweep of upload_dir (see upload_sweep.h).
 *
 * DESIGN
 * The names the queued jobs hold are gathered once (every string member of
 * their parameters), then the folder is read once and each of our names is
 * judged by the rules of the header; a trace-<id>.out costs one job lookup.
 */
#include "server/jobs/upload_sweep.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "util/errf.h"

#define QUEUED_MAX 1000000

static int has_prefix(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static int has_suffix(const char *s, const char *x)
{
    size_t n = strlen(s), m = strlen(x);
    return n >= m && strcmp(s + n - m, x) == 0;
}

/* Whether the daemon makes files of this name (the only ones swept). */
static int ours(const char *name)
{
    return has_prefix(name, "upload-") || has_prefix(name, "trace-") ||
           has_prefix(name, "capture-");
}

/* Whether a queued job's parameters name the file. */
static int held(const json_t *names, const char *name)
{
    return json_object_get(names, name) != NULL;
}

/* Every string member of every queued job's parameters, as a set. */
static json_t *queued_names(store *db, char *err, size_t errlen)
{
    struct job_row *rows = NULL;
    size_t n = 0;
    if (store_jobs_queued(db, QUEUED_MAX, &rows, &n, err, errlen) < 0)
        return NULL;
    json_t *names = json_object();
    for (size_t i = 0; names && i < n; i++) {
        json_t *p = json_loads(rows[i].params_json ? rows[i].params_json : "{}", 0, NULL);
        const char *key;
        json_t *v;
        json_object_foreach(p, key, v)
            if (json_is_string(v))
                json_object_set_new(names, json_string_value(v), json_true());
        json_decref(p);
    }
    job_rows_free(rows, n);
    if (!names)
        errf(err, errlen, "out of memory");
    return names;
}

/* trace-<id>.out: whether job <id> still wants it (queued, or succeeded and
 * served by GET .../output). -1 when the name is not of that form. */
static int output_wanted(store *db, const char *name)
{
    char tail[8];
    long long id = 0;
    if (sscanf(name, "trace-%lld%7s", &id, tail) != 2 || strcmp(tail, ".out") != 0 || id < 1)
        return -1;
    struct job_row j;
    char err[128];
    int rc = store_job_get(db, id, &j, err, sizeof err);
    int want = rc < 0 || (rc == 0 && (j.state == JOB_QUEUED || j.state == JOB_SUCCEEDED));
    if (rc == 0)
        job_row_free(&j);
    return want; /* a store that cannot say keeps the file */
}

static int wanted(store *db, const json_t *names, const char *name)
{
    if (has_prefix(name, "upload-") || has_suffix(name, ".part"))
        return 0;
    int out = output_wanted(db, name);
    return out >= 0 ? out : held(names, name);
}

int upload_sweep(store *db, const char *dir, size_t *removed, char *err, size_t errlen)
{
    size_t count = 0;
    if (removed)
        *removed = 0;
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : errf(err, errlen, "%s: %s", dir, strerror(errno));
    json_t *names = queued_names(db, err, errlen);
    if (!names) {
        closedir(d);
        return -1;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[4200];
        if (e->d_type != DT_REG && e->d_type != DT_UNKNOWN)
            continue;
        if (!ours(e->d_name) || wanted(db, names, e->d_name))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (unlink(path) == 0)
            count++;
    }
    closedir(d);
    json_decref(names);
    if (removed)
        *removed = count;
    return 0;
}
