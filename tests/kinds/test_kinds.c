/*
 * Job kinds compiled only into the test build (VARIANT=test and asan). They
 * misbehave on request so the integration tests can drive every way a worker
 * process can end: a good result, a crash, garbage on stdout, a bare exit, a
 * hang past the deadline, an oversized result, and a long sleep to cancel or
 * to kill the daemon under.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server/jobkinds.h"

/* Size of the string in a "big" result: over any sane result cap. */
#define BIG_RESULT_BYTES (2u * 1024u * 1024u)

static const char *const test_modes[] = {
    "ok", "sleep", "crash", "garbage", "exit", "hang", "big", NULL,
};

static const struct param_spec test_params[] = {
    {.name = "mode", .type = PARAM_ENUM, .choices = test_modes, .default_json = "\"ok\"",
     .description = "what the worker does: ok, sleep, crash, garbage, exit, hang or big"},
    {.name = "seconds", .type = PARAM_NUMBER, .min = 0, .max = 3600, .default_json = "0",
     .description = "how long mode sleep sleeps before answering"},
    {.name = "exit_code", .type = PARAM_INT, .min = 0, .max = 255, .default_json = "1",
     .description = "the exit status of mode exit"},
    {.name = "echo", .type = PARAM_STRING,
     .description = "copied into the result"},
};

/* Sleeps for s seconds (fractions allowed), resuming after signals. */
static void sleep_seconds(double s)
{
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static const char *param_string(const json_t *params, const char *name, const char *dflt)
{
    const char *v = json_string_value(json_object_get(params, name));
    return v ? v : dflt;
}

/* {"echo": <echo or null>, "pid": <this process>} */
static json_t *ok_result(const json_t *params)
{
    json_t *echo = json_object_get(params, "echo");
    return json_pack("{s:O?, s:I}", "echo", json_is_string(echo) ? echo : NULL, "pid",
                     (json_int_t)getpid());
}

/* Dies of SIGSEGV for real: the default action is restored first, so a
 * sanitizer's handler cannot turn the signal into an ordinary exit. */
_Noreturn static void die_of_sigsegv(void)
{
    struct sigaction sa;
    sigset_t set;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigaction(SIGSEGV, &sa, NULL);
    sigemptyset(&set);
    sigaddset(&set, SIGSEGV);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(SIGSEGV);
    _exit(128 + SIGSEGV); /* not reached */
}

static json_t *big_result(const json_t *params, char *err, size_t errlen)
{
    char *blob = malloc(BIG_RESULT_BYTES + 1);
    json_t *res = ok_result(params);
    if (!blob || !res) {
        free(blob);
        json_decref(res);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    memset(blob, 'x', BIG_RESULT_BYTES);
    blob[BIG_RESULT_BYTES] = '\0';
    if (json_object_set_new(res, "blob", json_string(blob)) != 0) {
        free(blob);
        json_decref(res);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    free(blob);
    return res;
}

static json_t *test_run(const struct job_ctx *ctx, const json_t *params, char *err, size_t errlen)
{
    const char *mode = param_string(params, "mode", "ok");
    (void)ctx;

    if (strcmp(mode, "ok") == 0)
        return ok_result(params);
    if (strcmp(mode, "sleep") == 0) {
        sleep_seconds(json_number_value(json_object_get(params, "seconds")));
        return ok_result(params);
    }
    if (strcmp(mode, "crash") == 0)
        die_of_sigsegv();
    if (strcmp(mode, "garbage") == 0) {
        static const char junk[] = "this is not json\n";
        ssize_t w = write(STDOUT_FILENO, junk, sizeof junk - 1);
        _exit(w == (ssize_t)(sizeof junk - 1) ? 0 : 1);
    }
    if (strcmp(mode, "exit") == 0)
        _exit((int)json_integer_value(json_object_get(params, "exit_code")));
    if (strcmp(mode, "hang") == 0) {
        for (;;)
            pause();
    }
    if (strcmp(mode, "big") == 0)
        return big_result(params, err, errlen);
    snprintf(err, errlen, "unknown mode \"%s\"", mode);
    return NULL;
}

static int test_check_result(const json_t *result, char *err, size_t errlen)
{
    if (!json_is_object(result)) {
        snprintf(err, errlen, "result is not an object");
        return -1;
    }
    if (!json_is_integer(json_object_get(result, "pid"))) {
        snprintf(err, errlen, "result.pid is missing or not an integer");
        return -1;
    }
    return 0;
}

static const struct job_kind test_kind = {
    .name = "test",
    .summary = "Test-only: answers, sleeps, crashes, hangs or misbehaves on request",
    .needs_gpu = 0,
    .default_timeout_s = 60,
    .params = test_params,
    .nparams = sizeof test_params / sizeof test_params[0],
    .run = test_run,
    .check_result = test_check_result,
    .save = NULL,
};

static json_t *test_gpu_run(const struct job_ctx *ctx, const json_t *params, char *err,
                            size_t errlen)
{
    (void)params;
    if (!ctx->device_uuid) {
        snprintf(err, errlen, "no device given");
        return NULL;
    }
    return json_pack("{s:s}", "device", ctx->device_uuid);
}

static int test_gpu_check_result(const json_t *result, char *err, size_t errlen)
{
    if (!json_is_string(json_object_get(result, "device"))) {
        snprintf(err, errlen, "result.device is missing or not a string");
        return -1;
    }
    return 0;
}

static const struct job_kind test_gpu_kind = {
    .name = "test-gpu",
    .summary = "Test-only: needs a GPU and answers with its UUID",
    .needs_gpu = 1,
    .default_timeout_s = 60,
    .params = NULL,
    .nparams = 0,
    .run = test_gpu_run,
    .check_result = test_gpu_check_result,
    .save = NULL,
};

const struct job_kind *const test_job_kinds[] = {&test_kind, &test_gpu_kind, NULL};
