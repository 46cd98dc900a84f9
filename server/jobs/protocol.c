/*
 * The worker protocol (see protocol.h).
 *
 * DESIGN
 * One option table serves both directions of the call: worker_argv walks
 * it to write the options a call has, worker_call_parse builds getopt's
 * table from it to read them. The envelope's failure members live in one
 * table of classes, shared by the writer, the reader and the store's JSON.
 */
#include "server/jobs/protocol.h"

#include <assert.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"

const char worker_usage[] =
    "usage: gpuprobe worker --discover\n"
    "       gpuprobe worker --kind KIND [--params JSON|-] [--device UUID] [--job ID]\n"
    "                       [--cubin-dir DIR] [--upload-dir DIR]\n"
    "Runs one job (or device discovery) in this process and prints the result\n"
    "document on stdout. --params - reads the parameters from stdin, as the\n"
    "daemon passes them. --cubin-dir keeps every compiled module's PTX and cubin\n"
    "there. --upload-dir DIR: file parameters are names inside DIR (the daemon's\n"
    "upload folder). The daemon starts one worker per job.\n";

/* ---- the call ---------------------------------------------------------------- */

/* Every option of a call, in the order worker_argv writes them. A string
 * option carries the call member at `field`; --discover and --job are
 * written from mode and job_id. */
enum opt_id { OPT_DISCOVER = 256, OPT_KIND, OPT_JOB, OPT_PARAMS, OPT_UPLOAD_DIR, OPT_DEVICE,
              OPT_CUBIN_DIR, OPT_HELP };

static const struct call_opt {
    const char *flag;          /* "--kind"; getopt's name is flag + 2 */
    enum opt_id id;
    int has_value;
    size_t field;
} call_opts[] = {
    {"--discover", OPT_DISCOVER, 0, 0},
    {"--kind", OPT_KIND, 1, offsetof(struct worker_call, kind)},
    {"--job", OPT_JOB, 1, 0},
    {"--params", OPT_PARAMS, 1, offsetof(struct worker_call, params)},
    {"--upload-dir", OPT_UPLOAD_DIR, 1, offsetof(struct worker_call, upload_dir)},
    {"--device", OPT_DEVICE, 1, offsetof(struct worker_call, device)},
    {"--cubin-dir", OPT_CUBIN_DIR, 1, offsetof(struct worker_call, cubin_dir)},
};
#define NCALL_OPTS (sizeof call_opts / sizeof call_opts[0])

static const char **string_field(struct worker_call *call, const struct call_opt *o)
{
    return (const char **)((char *)call + o->field);
}

void worker_argv(struct worker_argv *a, const char *exe, const struct worker_call *call)
{
    size_t n = 0;
    assert(exe && call);
    assert(call->mode == WORKER_DISCOVER || call->kind);
    memset(a, 0, sizeof *a);
    a->argv[n++] = (char *)exe;
    a->argv[n++] = "worker";
    if (call->mode == WORKER_DISCOVER) {
        a->argv[n++] = "--discover";
        return;
    }
    snprintf(a->job, sizeof a->job, "%" PRId64, call->job_id);
    for (size_t i = 0; i < NCALL_OPTS; i++) {
        const struct call_opt *o = &call_opts[i];
        const char *value = o->id == OPT_JOB  ? (call->job_id > 0 ? a->job : NULL)
                            : o->has_value   ? *string_field((struct worker_call *)call, o)
                                             : NULL;
        if (!value)
            continue;
        a->argv[n++] = (char *)o->flag;
        a->argv[n++] = (char *)value;
    }
    assert(n < WORKER_ARGV_MAX);
}

int worker_call_parse(int argc, char **argv, struct worker_call *call, char *err, size_t errlen)
{
    struct option opts[NCALL_OPTS + 2];
    long long job;
    int c;
    for (size_t i = 0; i < NCALL_OPTS; i++)
        opts[i] = (struct option){call_opts[i].flag + 2, call_opts[i].has_value, NULL,
                                  (int)call_opts[i].id};
    opts[NCALL_OPTS] = (struct option){"help", no_argument, NULL, OPT_HELP};
    opts[NCALL_OPTS + 1] = (struct option){0, 0, 0, 0};
    memset(call, 0, sizeof *call);
    call->mode = WORKER_JOB;
    opterr = 0; /* our own one-line message instead of getopt's */
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        const struct call_opt *o = NULL;
        for (size_t i = 0; i < NCALL_OPTS && !o; i++)
            o = call_opts[i].id == (enum opt_id)c ? &call_opts[i] : NULL;
        if (c == 'h' || c == OPT_HELP)
            return 1;
        if (!o) {
            snprintf(err, errlen, "unknown option or missing value near '%s'",
                     optind > 0 && optind - 1 < argc ? argv[optind - 1] : "?");
            return -1;
        }
        if (o->id == OPT_DISCOVER) {
            call->mode = WORKER_DISCOVER;
        } else if (o->id == OPT_JOB) {
            if (parse_ll(optarg, 0, INT64_MAX, &job) < 0) {
                snprintf(err, errlen, "--job must be a job id, not '%s'", optarg);
                return -1;
            }
            call->job_id = job;
        } else {
            *string_field(call, o) = optarg;
        }
    }
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    if (call->mode == WORKER_JOB && !call->kind) {
        snprintf(err, errlen, "give --discover or --kind (see gpuprobe worker --help)");
        return -1;
    }
    return 0;
}

/* ---- the reply --------------------------------------------------------------- */

/* The failure classes as the envelope and the store spell them. */
static const char *const class_names[] = {
    [JOB_ERROR_OTHER] = NULL, [JOB_ERROR_INPUT] = "input", [JOB_ERROR_PARAMS] = "params",
    [JOB_ERROR_STORAGE] = "storage"};
#define NCLASSES (sizeof class_names / sizeof class_names[0])

json_t *job_failure_to_json(const struct job_failure *f)
{
    assert(f && (unsigned)f->cls < NCLASSES);
    json_t *j = json_object();
    if (class_names[f->cls])
        json_object_set_new(j, "error_class", json_string(class_names[f->cls]));
    if (f->line >= 0)
        json_object_set_new(j, "error_line", json_integer(f->line));
    if (f->offset >= 0)
        json_object_set_new(j, "error_offset", json_integer(f->offset));
    if (json_object_size(j) == 0) {
        json_decref(j);
        return NULL;
    }
    return j;
}

/* One failure member: a known class name, or a non-negative integer. */
static int failure_member(const char *key, const json_t *v, struct job_failure *f, char *err,
                          size_t errlen)
{
    if (strcmp(key, "error_class") == 0) {
        const char *name = json_string_value(v);
        for (size_t i = 0; name && i < NCLASSES; i++)
            if (class_names[i] && strcmp(class_names[i], name) == 0) {
                f->cls = (enum job_error_class)i;
                return 0;
            }
        snprintf(err, errlen, "\"error_class\" must be \"input\", \"params\" or \"storage\"");
        return -1;
    }
    long long *slot = strcmp(key, "error_line") == 0 ? &f->line
                      : strcmp(key, "error_offset") == 0 ? &f->offset
                                                           : NULL;
    if (!slot) {
        snprintf(err, errlen, "unknown member \"%.60s\"", key);
        return -1;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        snprintf(err, errlen, "\"%s\" must be a non-negative integer", key);
        return -1;
    }
    *slot = json_integer_value(v);
    return 0;
}

int job_failure_from_json(const json_t *j, struct job_failure *f, char *err, size_t errlen)
{
    const char *key;
    json_t *v;
    *f = JOB_FAILURE_NONE;
    if (!j)
        return 0;
    if (!json_is_object(j)) {
        snprintf(err, errlen, "a failure's details must be an object");
        return -1;
    }
    json_object_foreach((json_t *)j, key, v)
        if (failure_member(key, v, f, err, errlen) < 0)
            return -1;
    return 0;
}

int worker_reply_write(FILE *f, const struct worker_reply *r)
{
    json_t *doc;
    assert(!r->ok || json_is_object(r->result));
    if (r->ok) {
        doc = json_pack("{s:b, s:O}", "ok", 1, "result", r->result);
    } else {
        doc = json_pack("{s:b, s:s}", "ok", 0, "error", r->error[0] ? r->error
                                                                     : "failed without a reason");
        json_t *members = job_failure_to_json(&r->failure);
        if (doc && members)
            json_object_update(doc, members);
        json_decref(members);
    }
    int rc = doc && json_dumpf(doc, f, JSON_COMPACT) == 0 && fputc('\n', f) != EOF ? 0 : -1;
    json_decref(doc);
    return fflush(f) == 0 ? rc : -1;
}

/* The failure document's members into r. */
static int read_failure(json_t *doc, struct worker_reply *r, char *err, size_t errlen)
{
    const char *key;
    json_t *v;
    json_object_foreach(doc, key, v) {
        if (strcmp(key, "ok") == 0)
            continue;
        if (strcmp(key, "error") == 0) {
            if (!json_is_string(v)) {
                snprintf(err, errlen, "\"error\" must be a string");
                return -1;
            }
            snprintf(r->error, sizeof r->error, "%s", json_string_value(v));
        } else if (failure_member(key, v, &r->failure, err, errlen) < 0) {
            return -1;
        }
    }
    if (!json_is_string(json_object_get(doc, "error"))) {
        snprintf(err, errlen, "a failure has no \"error\"");
        return -1;
    }
    return 0;
}

/* The success document's members into r. */
static int read_success(json_t *doc, struct worker_reply *r, char *err, size_t errlen)
{
    json_t *result = json_object_get(doc, "result");
    if (json_object_size(doc) != 2 || !json_is_object(result)) {
        snprintf(err, errlen, "a success must be exactly {\"ok\": true, \"result\": {...}}");
        return -1;
    }
    r->result = json_incref(result);
    return 0;
}

int worker_reply_read(const char *buf, size_t len, struct worker_reply *r, char *err,
                      size_t errlen)
{
    json_error_t je;
    memset(r, 0, sizeof *r);
    r->failure = JOB_FAILURE_NONE;
    json_t *doc = json_loadb(buf ? buf : "", len, JSON_REJECT_DUPLICATES, &je);
    json_t *ok = json_object_get(doc, "ok");
    int rc = -1;
    if (!doc)
        snprintf(err, errlen, "not JSON: %s", je.text);
    else if (!json_is_boolean(ok))
        snprintf(err, errlen, "not an object with a boolean \"ok\"");
    else if (json_is_true(ok))
        rc = read_success(doc, r, err, errlen);
    else
        rc = read_failure(doc, r, err, errlen);
    r->ok = rc == 0 && json_is_true(ok);
    json_decref(doc);
    if (rc < 0)
        worker_reply_free(r);
    return rc;
}

void worker_reply_free(struct worker_reply *r)
{
    json_decref(r->result);
    r->result = NULL;
}

/* ---- jobs -------------------------------------------------------------------- */

int job_timeout_s(const struct config *cfg, const struct job_kind *k, int requested_s)
{
    if (requested_s > 0)
        return requested_s;
    return cfg->job_timeout_s > 0 ? cfg->job_timeout_s : k->default_timeout_s;
}
