/*
 * `gpuprobe worker`: the child side of every job (see worker.h). It reads
 * its call with worker_call_parse, runs one job kind (or device discovery)
 * and writes one envelope with worker_reply_write (protocol.h). Parameters
 * are validated again here, so a worker started by hand gets the same
 * checks as one started by the daemon; a call that is wrong before any work
 * starts (usage, unknown kind, bad parameters) exits 2 with a one-line
 * reason on stderr and writes no envelope.
 */
#include "server/jobs/worker.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/gpu/devices.h"
#include "server/jobs/protocol.h"
#include "server/jobs/registry.h"

static int refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int refuse(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gpuprobe worker: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 2;
}

/* Writes the envelope and frees it; the exit status. */
static int answer(struct worker_reply *r)
{
    int rc = worker_reply_write(stdout, r);
    worker_reply_free(r);
    return rc == 0 ? 0 : 1;
}

static int run_discovery(void)
{
    struct gpu_inventory inv;
    struct worker_reply r = {.ok = 1, .failure = JOB_FAILURE_NONE};
    if (gpu_discover(&inv) < 0) {
        r.ok = 0;
        snprintf(r.error, sizeof r.error, "out of memory during discovery");
        return answer(&r);
    }
    r.result = gpu_inventory_to_json(&inv);
    gpu_inventory_free(&inv);
    return answer(&r);
}

/* The call's parameters as JSON (NULL: none given); -1 if they are not JSON. */
static int read_params(const char *text, json_t **given)
{
    json_error_t je;
    *given = NULL;
    if (!text)
        return 0;
    *given = strcmp(text, "-") == 0 ? json_loadf(stdin, JSON_REJECT_DUPLICATES, &je)
                                    : json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (*given)
        return 0;
    refuse("--params is not JSON: %s", je.text);
    return -1;
}

static int run_job(const struct worker_call *call)
{
    const struct job_kind *k = job_kind_find(call->kind);
    char err[512], field[128];
    json_t *given;
    if (!k)
        return refuse("no job kind '%s'", call->kind);
    if (k->needs_gpu && !call->device)
        return refuse("kind '%s' needs --device", call->kind);
    if (read_params(call->params, &given) < 0)
        return 2;
    json_t *params = job_params_validate(k, given, err, sizeof err, field, sizeof field);
    json_decref(given);
    if (!params)
        return refuse("%s", err);
    struct worker_reply r = {.failure = JOB_FAILURE_NONE};
    struct job_ctx ctx = {.job_id = call->job_id, .device_uuid = call->device,
                          .upload_dir = call->upload_dir, .failure = &r.failure};
    r.result = k->run(&ctx, params, r.error, sizeof r.error);
    r.ok = r.result != NULL;
    json_decref(params);
    return answer(&r);
}

int worker_main(int argc, char **argv)
{
    struct worker_call call;
    char err[512];
    int rc = worker_call_parse(argc, argv, &call, err, sizeof err);
    if (rc == 1) {
        fputs(worker_usage, stdout);
        return 0;
    }
    if (rc < 0)
        return refuse("%s", err);
    if (call.cubin_dir)
        setenv("GPUPROBE_CUBIN_DIR", call.cubin_dir, 1); /* read by probes/gpu/gpu.c */
    return call.mode == WORKER_DISCOVER ? run_discovery() : run_job(&call);
}
