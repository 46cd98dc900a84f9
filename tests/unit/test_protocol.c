/*
 * Unit tests of the worker protocol (server/jobs/protocol.c): an argv built
 * by worker_argv reads back through worker_call_parse as the same call (a
 * job with every option, a job without optional ones, discovery), and
 * parameters never appear in it except as "-"; a reply written by
 * worker_reply_write reads back equal (success, a bare failure, a failure
 * with class, line and offset); worker_reply_read refuses, naming what is
 * wrong, a document that is not JSON, lacks "ok", has an unknown member, a
 * wrong type, a success with more than its result, or a failure without
 * "error"; failure details survive the store's JSON form; job_timeout_s
 * takes the request, then the daemon's setting, then the kind's default;
 * a job call without a kind, and a failure of an unknown class, abort.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/jobs/protocol.h"
#include "tests/unit/support/death.h"

static int argc_of(char **argv)
{
    int n = 0;
    while (argv[n])
        n++;
    return n;
}

/* Builds the argv of call and parses it back (skipping the executable). */
static void round_trip_call(const struct worker_call *call, struct worker_call *back,
                            struct worker_argv *a)
{
    char err[256];
    worker_argv(a, "/proc/self/exe", call);
    assert_string_equal(a->argv[0], "/proc/self/exe");
    assert_string_equal(a->argv[1], "worker");
    char **args = a->argv + 1;
    if (worker_call_parse(argc_of(args), args, back, err, sizeof err) != 0)
        fail_msg("the built argv does not parse: %s", err);
}

static void test_call_round_trip(void **state)
{
    (void)state;
    struct worker_call call = {.mode = WORKER_JOB, .kind = "latency", .job_id = 42,
                               .device = "GPU-1234", .params = "-", .upload_dir = "/u",
                               .cubin_dir = "/c/job-42"}, back;
    struct worker_argv a;
    round_trip_call(&call, &back, &a);
    assert_int_equal(back.mode, WORKER_JOB);
    assert_string_equal(back.kind, "latency");
    assert_int_equal(back.job_id, 42);
    assert_string_equal(back.device, "GPU-1234");
    assert_string_equal(back.params, "-");
    assert_string_equal(back.upload_dir, "/u");
    assert_string_equal(back.cubin_dir, "/c/job-42");
    assert_int_equal(argc_of(a.argv), 2 + 2 * 6);
}

static void test_call_without_options(void **state)
{
    (void)state;
    struct worker_call call = {.mode = WORKER_JOB, .kind = "test"}, back;
    struct worker_argv a;
    round_trip_call(&call, &back, &a);
    assert_int_equal(argc_of(a.argv), 4); /* exe worker --kind test */
    assert_string_equal(back.kind, "test");
    assert_int_equal(back.job_id, 0);
    assert_null(back.device);
    assert_null(back.params);
    assert_null(back.upload_dir);
    assert_null(back.cubin_dir);
}

static void test_call_discover(void **state)
{
    (void)state;
    struct worker_call call = {.mode = WORKER_DISCOVER, .kind = "ignored", .job_id = 3}, back;
    struct worker_argv a;
    round_trip_call(&call, &back, &a);
    assert_int_equal(argc_of(a.argv), 3);
    assert_string_equal(a.argv[2], "--discover");
    assert_int_equal(back.mode, WORKER_DISCOVER);
}

static void test_call_refusals(void **state)
{
    (void)state;
    struct worker_call c;
    char err[256];
    char *no_kind[] = {"worker", "--job", "3", NULL};
    assert_int_equal(worker_call_parse(3, no_kind, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "--kind"));
    char *bad_job[] = {"worker", "--kind", "x", "--job", "seven", NULL};
    assert_int_equal(worker_call_parse(5, bad_job, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "seven"));
    char *extra[] = {"worker", "--kind", "x", "stray", NULL};
    assert_int_equal(worker_call_parse(4, extra, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "stray"));
    char *unknown[] = {"worker", "--kind", "x", "--frobnicate", NULL};
    assert_int_equal(worker_call_parse(4, unknown, &c, err, sizeof err), -1);
    assert_non_null(strstr(err, "--frobnicate"));
    char *help[] = {"worker", "--help", NULL};
    assert_int_equal(worker_call_parse(2, help, &c, err, sizeof err), 1);
}

/* Writes r to a memory stream and returns the text (caller frees). */
static char *written(const struct worker_reply *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(worker_reply_write(f, r), 0);
    fclose(f);
    return buf;
}

static void test_reply_success_round_trip(void **state)
{
    (void)state;
    struct worker_reply r = {.ok = 1, .result = json_pack("{s:i, s:[i]}", "a", 1, "b", 2)}, back;
    char err[256], *text = written(&r);
    assert_int_equal(text[strlen(text) - 1], '\n');
    assert_int_equal(worker_reply_read(text, strlen(text), &back, err, sizeof err), 0);
    assert_true(back.ok);
    assert_true(json_equal(back.result, r.result));
    worker_reply_free(&back);
    worker_reply_free(&r);
    free(text);
}

static void test_reply_failure_round_trip(void **state)
{
    (void)state;
    struct worker_reply r = {.ok = 0, .failure = {JOB_ERROR_INPUT, 3, 40}}, back;
    char err[256];
    snprintf(r.error, sizeof r.error, "line 3 (byte offset 40): width must be 1..16");
    char *text = written(&r);
    assert_non_null(strstr(text, "\"error_class\":\"input\""));
    assert_int_equal(worker_reply_read(text, strlen(text), &back, err, sizeof err), 0);
    assert_false(back.ok);
    assert_null(back.result);
    assert_string_equal(back.error, r.error);
    assert_int_equal(back.failure.cls, JOB_ERROR_INPUT);
    assert_int_equal(back.failure.line, 3);
    assert_int_equal(back.failure.offset, 40);
    worker_reply_free(&back);
    free(text);
    /* a bare failure carries no detail members at all */
    struct worker_reply bare = {.ok = 0, .failure = JOB_FAILURE_NONE};
    snprintf(bare.error, sizeof bare.error, "no GPU");
    text = written(&bare);
    assert_string_equal(text, "{\"ok\":false,\"error\":\"no GPU\"}\n");
    assert_int_equal(worker_reply_read(text, strlen(text), &back, err, sizeof err), 0);
    assert_int_equal(back.failure.cls, JOB_ERROR_OTHER);
    assert_int_equal(back.failure.line, -1);
    assert_int_equal(back.failure.offset, -1);
    free(text);
}

static void test_reply_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *doc, *why;
    } cases[] = {
        {"", "not JSON"},
        {"{\"ok\":true,\"result\":{}", "not JSON"},
        {"[1]", "boolean \"ok\""},
        {"{\"result\":{}}", "boolean \"ok\""},
        {"{\"ok\":1,\"result\":{}}", "boolean \"ok\""},
        {"{\"ok\":true}", "exactly"},
        {"{\"ok\":true,\"result\":[]}", "exactly"},
        {"{\"ok\":true,\"result\":{},\"error\":\"x\"}", "exactly"},
        {"{\"ok\":false}", "no \"error\""},
        {"{\"ok\":false,\"error\":7}", "\"error\" must be a string"},
        {"{\"ok\":false,\"error\":\"x\",\"why\":1}", "unknown member \"why\""},
        {"{\"ok\":false,\"error\":\"x\",\"error_line\":-1}", "non-negative"},
        {"{\"ok\":false,\"error\":\"x\",\"error_offset\":\"9\"}", "non-negative"},
        {"{\"ok\":false,\"error\":\"x\",\"error_class\":\"disk\"}", "\"input\", \"params\" or \"storage\""},
        {"{\"ok\":true,\"ok\":true,\"result\":{}}", "not JSON"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct worker_reply r;
        char err[256] = "";
        if (worker_reply_read(cases[i].doc, strlen(cases[i].doc), &r, err, sizeof err) != -1)
            fail_msg("accepted %s", cases[i].doc);
        if (!strstr(err, cases[i].why))
            fail_msg("%s: reason '%s' lacks '%s'", cases[i].doc, err, cases[i].why);
        assert_null(r.result);
        worker_reply_free(&r);
    }
}

static void test_failure_json(void **state)
{
    (void)state;
    struct job_failure f = {JOB_ERROR_PARAMS, -1, 12}, back;
    char err[128];
    json_t *j = job_failure_to_json(&f);
    assert_non_null(j);
    assert_null(json_object_get(j, "error_line"));
    assert_int_equal(job_failure_from_json(j, &back, err, sizeof err), 0);
    assert_int_equal(back.cls, JOB_ERROR_PARAMS);
    assert_int_equal(back.line, -1);
    assert_int_equal(back.offset, 12);
    json_decref(j);
    f = (struct job_failure){JOB_ERROR_STORAGE, -1, -1};
    j = job_failure_to_json(&f);
    assert_string_equal(json_string_value(json_object_get(j, "error_class")), "storage");
    assert_int_equal(job_failure_from_json(j, &back, err, sizeof err), 0);
    assert_int_equal(back.cls, JOB_ERROR_STORAGE);
    json_decref(j);
    f = JOB_FAILURE_NONE;
    assert_null(job_failure_to_json(&f));
    assert_int_equal(job_failure_from_json(NULL, &back, err, sizeof err), 0);
    assert_int_equal(back.cls, JOB_ERROR_OTHER);
    json_t *bad = json_pack("{s:s}", "error_class", "bogus");
    assert_int_equal(job_failure_from_json(bad, &back, err, sizeof err), -1);
    json_decref(bad);
}

static void test_timeout_rule(void **state)
{
    (void)state;
    struct config cfg;
    struct job_kind k = {.name = "k", .default_timeout_s = 77};
    config_defaults(&cfg);
    cfg.job_timeout_s = 0;
    assert_int_equal(job_timeout_s(&cfg, &k, 0), 77);
    assert_int_equal(job_timeout_s(&cfg, &k, 5), 5);
    cfg.job_timeout_s = 30;
    assert_int_equal(job_timeout_s(&cfg, &k, 0), 30);
    assert_int_equal(job_timeout_s(&cfg, &k, 5), 5);
}

static void argv_without_kind(void *arg)
{
    (void)arg;
    struct worker_call call = {.mode = WORKER_JOB};
    struct worker_argv a;
    worker_argv(&a, "/proc/self/exe", &call);
}

static void failure_of_unknown_class(void *arg)
{
    (void)arg;
    struct job_failure f = {(enum job_error_class)7, -1, -1};
    json_decref(job_failure_to_json(&f));
}

static void test_contracts(void **state)
{
    (void)state;
    assert_true(dies_by_assert(argv_without_kind, NULL));
    assert_true(dies_by_assert(failure_of_unknown_class, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_call_round_trip),
        cmocka_unit_test(test_call_without_options),
        cmocka_unit_test(test_call_discover),
        cmocka_unit_test(test_call_refusals),
        cmocka_unit_test(test_reply_success_round_trip),
        cmocka_unit_test(test_reply_failure_round_trip),
        cmocka_unit_test(test_reply_refusals),
        cmocka_unit_test(test_failure_json),
        cmocka_unit_test(test_timeout_rule),
        cmocka_unit_test(test_contracts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
