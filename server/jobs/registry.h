/*
 * The registry of job kinds: what a job may be, which parameters it takes,
 * whether it needs a GPU, and how the worker process runs it.
 *
 * DESIGN
 * A kind is data (a descriptor) plus one run function executed in the worker
 * child, never in the daemon. Parameters are declared as a schema, so one
 * generic validator checks every submission and the same schema is served at
 * /api/v1/job-kinds. Kinds compiled only into the test build (tests/kinds/)
 * are appended when GPUPROBE_TEST_BUILD is defined; the shipped binary has
 * none of them.
 */
#ifndef GPUPROBE_SERVER_JOBS_REGISTRY_H
#define GPUPROBE_SERVER_JOBS_REGISTRY_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "db/store.h"

enum param_type { PARAM_INT, PARAM_NUMBER, PARAM_STRING, PARAM_BOOL, PARAM_ENUM };

struct param_spec {
    const char *name;
    enum param_type type;
    int required;
    double min, max;                 /* INT and NUMBER: inclusive bounds */
    const char *const *choices;      /* ENUM: NULL-terminated */
    const char *default_json;        /* JSON text of the default, or NULL */
    const char *description;
    /* Optional check of a value that has the right type (e.g. names against a
     * catalog), given this spec: 0 if acceptable, else -1 with the reason
     * (without the name). */
    int (*check)(const struct param_spec *p, const json_t *v, char *why, size_t len);
};

/* What a failing run may say besides its reason: whether the input or the
 * parameters were at fault (or the disk was full), and where in the input (line of a text format,
 * byte offset; -1 where it does not apply). The worker protocol carries it
 * to the daemon, which stores it with the job. */
enum job_error_class { JOB_ERROR_OTHER, JOB_ERROR_INPUT, JOB_ERROR_PARAMS, JOB_ERROR_STORAGE };
struct job_failure {
    enum job_error_class cls;
    long long line, offset;
};
#define JOB_FAILURE_NONE ((struct job_failure){JOB_ERROR_OTHER, -1, -1})

/* What the worker knows about the job it runs. */
struct job_ctx {
    int64_t job_id;                  /* 0 when run from the command line */
    const char *device_uuid;         /* NULL for CPU kinds */
    const char *upload_dir;          /* set when the daemon started the worker: file
                                        parameters are then names inside this folder;
                                        NULL from the command line (paths) */
    struct job_failure *failure;     /* may be NULL; a failing run may describe its
                                        failure here (starts as JOB_FAILURE_NONE) */
};

struct job_kind {
    const char *name;
    const char *summary;
    int needs_gpu;
    int internal;                    /* created only by the daemon (its parameters name
                                        files): POST /api/v1/jobs refuses it */
    const char *created_by;          /* internal kinds: the endpoint that creates their
                                        jobs, named in that refusal */
    int default_timeout_s;
    const struct param_spec *params;
    size_t nparams;
    /* Runs in the worker process; returns the result object (new reference),
     * or NULL with the reason in err. */
    json_t *(*run)(const struct job_ctx *ctx, const json_t *params, char *err, size_t errlen);
    /* Run in the daemon on what the worker sent; 0 if well formed. May be NULL. */
    int (*check_result)(const json_t *result, char *err, size_t errlen);
    /* Writes the kind's result rows in the job's transaction. May be NULL. */
    store_result_saver save;
    /* Run in the daemon once the job has ended (succeeded or not, including a
     * queued job cancelled), with the stored parameters: removes the files the
     * job owned. May be NULL. */
    void (*finished)(const char *upload_dir, int64_t job_id, const char *params_json,
                     int succeeded);
};

/* A descriptor's parameter fields from one array of param_spec, so that the
 * count cannot disagree with the array: JOB_PARAMS(latency_params). */
#define JOB_PARAMS(array) .params = (array), .nparams = sizeof(array) / sizeof((array)[0])

const struct job_kind *job_kind_find(const char *name);
size_t job_kind_count(void);
/* 1 if jobs of the kind called name measure a GPU and leave result rows:
 * the results that bundles carry and that a node pushes upstream. */
int job_kind_keeps_results(const char *name);
const struct job_kind *job_kind_at(size_t i);

/* Checks params (an object, or NULL for "all defaults") against the kind's
 * schema and returns a new object with defaults filled in; NULL with
 * "params.NAME: reason" in err, and the offending field's path in field. */
json_t *job_params_validate(const struct job_kind *k, const json_t *params,
                            char *err, size_t errlen, char *field, size_t fieldlen);

/* The kind's description as served at /api/v1/job-kinds. */
json_t *job_kind_to_json(const struct job_kind *k);

#ifdef GPUPROBE_TEST_BUILD
/* Defined in tests/kinds/: NULL-terminated. */
extern const struct job_kind *const test_job_kinds[];
#endif

#endif
