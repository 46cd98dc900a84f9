/*
 * Job kinds compiled only into the test build (VARIANT=test and asan). They
 * misbehave on request so the integration tests can drive every way a worker
 * process can end: a good result, a crash, garbage on stdout, a bare exit, a
 * hang past the deadline, an oversized result, and a long sleep to cancel or
 * to kill the daemon under. On a GPU: a job that needs a device, and one
 * whose patched kernel faults the GPU (test-bad-edit, probes/gpu/patch.h).
 * Anywhere: a probe's result document read from a file and stored as that
 * probe's result (test-result), so results can be served without a GPU.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "server/jobs/registry.h"

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

/*
 * test-gpu runs where the scheduler puts it (a stand-in GPU of
 * GPUPROBE_STANDIN_GPUS serves) and answers with the device, its process and
 * its wall-clock start and end (CLOCK_REALTIME, ms), so tests of several GPUs
 * (t_multigpu.sh) can prove which jobs overlapped and in which processes.
 * "seconds" holds it busy; "crash_on" names a device (UUID or index, as
 * given) on which it dies of SIGSEGV instead, for one GPU failing among many.
 */
static const struct param_spec test_gpu_params[] = {
    {.name = "seconds", .type = PARAM_NUMBER, .min = 0, .max = 3600, .default_json = "0",
     .description = "how long the job holds its GPU before answering"},
    {.name = "crash_on", .type = PARAM_STRING,
     .description = "the device (as the job names it) on which the worker crashes"},
};

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static json_t *test_gpu_run(const struct job_ctx *ctx, const json_t *params, char *err,
                            size_t errlen)
{
    if (!ctx->device_uuid) {
        snprintf(err, errlen, "no device given");
        return NULL;
    }
    int64_t started = wall_ms();
    const char *crash_on = param_string(params, "crash_on", NULL);
    if (crash_on && strcmp(crash_on, ctx->device_uuid) == 0)
        die_of_sigsegv();
    sleep_seconds(json_number_value(json_object_get(params, "seconds")));
    return json_pack("{s:s, s:I, s:I, s:I}", "device", ctx->device_uuid, "pid",
                     (json_int_t)getpid(), "started_ms", (json_int_t)started, "ended_ms",
                     (json_int_t)wall_ms());
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
    .summary = "Test-only: needs a GPU, holds it for a while, and answers with its UUID, "
               "its process and its start and end",
    .needs_gpu = 1,
    .default_timeout_s = 60,
    .params = test_gpu_params,
    .nparams = sizeof test_gpu_params / sizeof test_gpu_params[0],
    .run = test_gpu_run,
    .check_result = test_gpu_check_result,
    .save = NULL,
};


/* ---- test-bad-edit: the patch-and-run harness against a faulting edit ---- */

/*
 * A one-store kernel is built, one field of its STG is edited through
 * probes/gpu/patch.h, and the patched cubin is launched. Mode "none" applies no
 * edit and reads the stored value back (the harness itself works); mode
 * "opcode" writes `opcode` into the STG's 12-bit opcode field, which for a
 * value no architecture assigns makes the SM raise an illegal-instruction
 * fault; mode "address" points the STG's address register at RZ, a store
 * to address 0. A fault fails the job with the CUDA error text; the worker
 * process, whose context the fault has spoilt, then exits like any other.
 */
#include "probes/gpu/patch.h"
#include "probes/gpu/ptx.h"

static const char *const bad_edit_modes[] = {"opcode", "address", "none", NULL};

static const struct param_spec bad_edit_params[] = {
    {.name = "edit", .type = PARAM_ENUM, .choices = bad_edit_modes, .default_json = "\"opcode\"",
     .description = "which edit: opcode (the STG's opcode set to `opcode`), address (its address "
                    "register set to RZ) or none"},
    {.name = "opcode", .type = PARAM_INT, .min = 0, .max = 4095, .default_json = "511",
     .description = "the 12-bit opcode value written by edit opcode"},
};

#define BAD_EDIT_VALUE 0x600dcafeu

static const char bad_edit_body[] =
    ".visible .entry bad_edit(.param .u64 out, .param .u32 v)\n"
    "{\n"
    "    .reg .b64 %rd<3>;\n"
    "    .reg .b32 %r<2>;\n"
    "    ld.param.u64 %rd1, [out];\n"
    "    ld.param.u32 %r1, [v];\n"
    "    cvta.to.global.u64 %rd2, %rd1;\n"
    "    st.global.u32 [%rd2], %r1;\n"
    "    ret;\n"
    "}\n";

static json_t *bad_edit_patch(struct gpu *g, const char *mode, unsigned opcode, char *err,
                              size_t errlen)
{
    struct ptx p;
    ptx_init(&p);
    ptx_header(&p, g->info.cc_major, g->info.cc_minor);
    ptx_add(&p, "%s", bad_edit_body);
    char *ptx = ptx_take(&p);
    CUdeviceptr out = 0;
    unsigned v = BAD_EDIT_VALUE, back = 0;
    json_t *res = NULL;
    if (!ptx) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    /* Where the STG is: build once unpatched (no launch) to read its cubin. */
    struct gpu_module m;
    long idx = -1;
    unsigned was = 0;
    if (gpu_module_build(g, ptx, "bad_edit_probe", &m, err, errlen) == 0) {
        idx = patch_find_mnemonic(m.cubin, m.cubin_size, "bad_edit", "STG", 0, err, errlen);
        size_t off, len;
        if (idx >= 0 && patch_find_text(m.cubin, m.cubin_size, "bad_edit", &off, &len, err,
                                        errlen) == 0) {
            struct sass_insn in = sass_decode((const uint8_t *)m.cubin + off,
                                              (size_t)idx * SASS_INSN_BYTES);
            was = sass_field(&in, strcmp(mode, "address") == 0 ? SASS_RA : SASS_OPCODE);
        }
    }
    gpu_module_free(g, &m);
    struct patch_edit edit = {(size_t)(idx < 0 ? 0 : idx),
                              strcmp(mode, "address") == 0 ? SASS_RA : SASS_OPCODE,
                              strcmp(mode, "address") == 0 ? SASS_RZ : opcode};
    size_t nedits = strcmp(mode, "none") == 0 ? 0 : 1;
    struct patch_result r;
    void *params[] = {&out, &v};
    struct patch_launch l = {.grid = 1, .block = 1, .params = params, .repeats = 3};
    if (idx >= 0 &&
        gpu_check(g, g->cu->cuMemAlloc(&out, sizeof back), "cuMemAlloc", err, errlen) == 0 &&
        gpu_check(g, g->cu->cuMemsetD32(out, 0, 1), "cuMemsetD32", err, errlen) == 0 &&
        patch_run(g, ptx, "bad_edit", "bad_edit", &edit, nedits, &l, &r, err, errlen) == 0 &&
        gpu_check(g, g->cu->cuMemcpyDtoH(&back, out, sizeof back), "cuMemcpyDtoH", err,
                  errlen) == 0)
        res = json_pack("{s:s, s:{s:I, s:s, s:i, s:i}, s:i, s:I, s:I, s:f, s:f, s:f}", "edit", mode,
                        "instruction", "index", (json_int_t)idx, "field",
                        sass_field_name(edit.field), "from", (int)was, "to",
                        nedits ? (int)edit.value : (int)was, "runs", r.runs, "stored",
                        (json_int_t)back, "expected", (json_int_t)BAD_EDIT_VALUE, "min_ms",
                        r.min_ms, "median_ms", r.median_ms, "jit_ms", r.jit_ms);
    if (out)
        g->cu->cuMemFree(out);
    free(ptx);
    return res;
}

static json_t *bad_edit_run(const struct job_ctx *ctx, const json_t *params, char *err,
                            size_t errlen)
{
    const char *mode = param_string(params, "edit", "opcode");
    unsigned opcode = (unsigned)json_integer_value(json_object_get(params, "opcode"));
    struct gpu g;
    if (!ctx->device_uuid) {
        snprintf(err, errlen, "no device given");
        return NULL;
    }
    json_t *res = NULL;
    if (gpu_open(&g, ctx->device_uuid, err, errlen) == 0)
        res = bad_edit_patch(&g, mode, opcode, err, errlen);
    gpu_close(&g);
    return res;
}

static int bad_edit_check_result(const json_t *result, char *err, size_t errlen)
{
    if (!json_is_object(json_object_get(result, "instruction")) ||
        !json_is_integer(json_object_get(result, "stored"))) {
        snprintf(err, errlen, "result.instruction or result.stored is missing");
        return -1;
    }
    return 0;
}

static const struct job_kind test_bad_edit_kind = {
    .name = "test-bad-edit",
    .summary = "Test-only: patches a store kernel's machine code (by default to an invalid "
               "opcode), runs it, and fails with the CUDA error it raises",
    .needs_gpu = 1,
    .default_timeout_s = 60,
    .params = bad_edit_params,
    .nparams = sizeof bad_edit_params / sizeof bad_edit_params[0],
    .run = bad_edit_run,
    .check_result = bad_edit_check_result,
    .save = NULL,
};

/* ---- test-result: a probe's result document, stored as a real run would be ---- */

/*
 * The worker answers with the JSON document in the file params.file (a
 * probe result captured or written elsewhere); the daemon checks and saves
 * it with the walk of the probe it names ("probe"), so the integration
 * tests can put a result in the store through the daemon's own path and
 * read it back over HTTP on a machine without a GPU. The job needs no
 * device; the result's device is recorded as the document says.
 */
#include "db/results.h"

static const struct param_spec result_params[] = {
    {.name = "file", .type = PARAM_STRING, .required = 1,
     .description = "path of the result document to answer with"},
};

static const struct {
    const char *probe;
    int (*check)(const json_t *doc, char *err, size_t errlen);
    store_result_saver save;
} result_probes[] = {
    {"latency", results_latency_check, results_latency_save},
    {"memory", results_memory_check, results_memory_save},
    {"banks", results_banks_check, results_banks_save},
    {"control-codes", results_control_codes_check, results_control_codes_save},
    {"dual-issue", results_dual_issue_check, results_dual_issue_save},
};
#define RESULT_PROBES (sizeof result_probes / sizeof result_probes[0])

/* The entry of the probe doc names; -1 with the reason when there is none. */
static int result_probe(const json_t *doc, char *err, size_t errlen)
{
    const char *probe = json_string_value(json_object_get(doc, "probe"));
    for (size_t i = 0; probe && i < RESULT_PROBES; i++)
        if (strcmp(result_probes[i].probe, probe) == 0)
            return (int)i;
    snprintf(err, errlen, "result.probe names no probe that keeps results");
    return -1;
}

static json_t *result_run(const struct job_ctx *ctx, const json_t *params, char *err,
                          size_t errlen)
{
    const char *file = param_string(params, "file", "");
    json_error_t je;
    json_t *doc = json_load_file(file, JSON_REJECT_DUPLICATES, &je);
    (void)ctx;
    if (!doc)
        snprintf(err, errlen, "%s: %s", file, je.text);
    return doc;
}

static int result_check(const json_t *result, char *err, size_t errlen)
{
    int i = result_probe(result, err, errlen);
    return i < 0 ? -1 : result_probes[i].check(result, err, errlen);
}

static int result_save(struct store_tx *tx, int64_t job_id, const json_t *result, char *err,
                       size_t errlen)
{
    int i = result_probe(result, err, errlen);
    return i < 0 ? -1 : result_probes[i].save(tx, job_id, result, err, errlen);
}

static const struct job_kind test_result_kind = {
    .name = "test-result",
    .summary = "Test-only: answers with the probe result document in a file, stored as that "
               "probe's result",
    .needs_gpu = 0,
    .default_timeout_s = 60,
    .params = result_params,
    .nparams = sizeof result_params / sizeof result_params[0],
    .run = result_run,
    .check_result = result_check,
    .save = result_save,
};

/* tests/kinds/standin.c */
extern const struct job_kind test_standin_kind;

const struct job_kind *const test_job_kinds[] = {&test_kind, &test_gpu_kind, &test_bad_edit_kind,
                                                 &test_result_kind, &test_standin_kind, NULL};
