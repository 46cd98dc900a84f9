/*
 * Unit tests of the API's JSON forms of jobs (server/api/job_json.c):
 * time_to_json gives JSON null for 0 (and negative) times and RFC 3339 UTC
 * with milliseconds otherwise (1763718600123 ms is 2025-11-21T09:50:00.123Z,
 * checked against `date -u -d @1763718600`); job_to_json gives exactly the
 * JOB members of docs/api.md with the stored params and result text embedded
 * as JSON values (unparsable text as null), device null for a CPU job,
 * duration_s from started and finished (null until both are set), and
 * "result" only in the detail form; job_events_to_json keeps the events'
 * order and gives each exactly at, state and message (NULL as ""). A job or
 * event whose error text is not valid UTF-8 (stderr of a crashed worker may
 * hold any bytes) must still be encoded, not dropped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <string.h>

#include "server/api/job_json.h"

static void time_is(int64_t ms, const char *want)
{
    json_t *j = time_to_json(ms);
    assert_non_null(j);
    if (!want) {
        assert_true(json_is_null(j));
    } else {
        assert_true(json_is_string(j));
        assert_string_equal(json_string_value(j), want);
    }
    json_decref(j);
}

static void test_time_to_json(void **state)
{
    (void)state;
    time_is(0, NULL);
    time_is(-1, NULL);
    time_is(-1763718600123LL, NULL);
    time_is(1763718600123LL, "2025-11-21T09:50:00.123Z");
    time_is(1763718600000LL, "2025-11-21T09:50:00.000Z");
    time_is(1763718600999LL, "2025-11-21T09:50:00.999Z");
    time_is(1763718601000LL, "2025-11-21T09:50:01.000Z");
    time_is(1, "1970-01-01T00:00:00.001Z");
    time_is(86400000LL, "1970-01-02T00:00:00.000Z");
    time_is(951782400000LL, "2000-02-29T00:00:00.000Z");
    time_is(4102444799999LL, "2099-12-31T23:59:59.999Z");
}

/* A finished CPU job: every field set. */
struct filled {
    char kind[8], params[64], error[32], result[64];
    struct job_row j;
};

static void fill(struct filled *f)
{
    memset(f, 0, sizeof *f);
    strcpy(f->kind, "test");
    strcpy(f->params, "{\"mode\":\"sleep\",\"seconds\":2.5}");
    strcpy(f->error, "was slow");
    strcpy(f->result, "{\"pid\":4242,\"echo\":null}");
    f->j.id = 12;
    f->j.kind = f->kind;
    f->j.device = NULL;
    f->j.params_json = f->params;
    f->j.state = JOB_SUCCEEDED;
    f->j.attempt = 2;
    f->j.max_attempts = 3;
    f->j.timeout_s = 600;
    f->j.cancel_requested = 1;
    f->j.created_ms = 1763718600123LL;
    f->j.started_ms = 1763718601000LL;
    f->j.finished_ms = 1763718603500LL;
    f->j.error = f->error;
    f->j.result_json = f->result;
}

static const char *const job_members[] = {
    "id", "kind", "device", "params", "state", "attempt", "max_attempts", "timeout_s",
    "cancel_requested", "created_at", "started_at", "finished_at", "duration_s", "error",
};
#define NMEMBERS (sizeof job_members / sizeof job_members[0])

static void check_members(const json_t *o, int detail)
{
    assert_true(json_is_object(o));
    for (size_t i = 0; i < NMEMBERS; i++)
        if (!json_object_get(o, job_members[i]))
            fail_msg("member %s missing", job_members[i]);
    assert_int_equal(json_object_size(o), NMEMBERS + (detail ? 1 : 0));
    assert_int_equal(json_object_get(o, "result") != NULL, detail);
}

static void test_job_to_json_filled(void **state)
{
    (void)state;
    struct filled f;
    fill(&f);
    json_t *o = job_to_json(&f.j, 0);
    assert_non_null(o);
    check_members(o, 0);
    assert_int_equal(json_integer_value(json_object_get(o, "id")), 12);
    assert_string_equal(json_string_value(json_object_get(o, "kind")), "test");
    assert_true(json_is_null(json_object_get(o, "device")));
    json_t *want = json_pack("{s:s, s:f}", "mode", "sleep", "seconds", 2.5);
    assert_true(json_is_object(json_object_get(o, "params")));
    assert_true(json_equal(json_object_get(o, "params"), want));
    json_decref(want);
    assert_string_equal(json_string_value(json_object_get(o, "state")), "succeeded");
    assert_int_equal(json_integer_value(json_object_get(o, "attempt")), 2);
    assert_int_equal(json_integer_value(json_object_get(o, "max_attempts")), 3);
    assert_int_equal(json_integer_value(json_object_get(o, "timeout_s")), 600);
    assert_true(json_is_true(json_object_get(o, "cancel_requested")));
    assert_string_equal(json_string_value(json_object_get(o, "created_at")),
                        "2025-11-21T09:50:00.123Z");
    assert_string_equal(json_string_value(json_object_get(o, "started_at")),
                        "2025-11-21T09:50:01.000Z");
    assert_string_equal(json_string_value(json_object_get(o, "finished_at")),
                        "2025-11-21T09:50:03.500Z");
    assert_true(json_is_number(json_object_get(o, "duration_s")));
    assert_true(json_number_value(json_object_get(o, "duration_s")) == 2.5);
    assert_string_equal(json_string_value(json_object_get(o, "error")), "was slow");
    json_decref(o);

    o = job_to_json(&f.j, 1);
    assert_non_null(o);
    check_members(o, 1);
    json_t *result = json_object_get(o, "result");
    assert_true(json_is_object(result));
    want = json_pack("{s:i, s:n}", "pid", 4242, "echo");
    assert_true(json_equal(result, want));
    json_decref(want);
    json_decref(o);
}

static void test_job_to_json_gpu_and_queued(void **state)
{
    (void)state;
    struct filled f;
    fill(&f);
    char dev[] = "GPU-0a0a0a0a-0000-4000-8000-00000000000a";
    f.j.device = dev;
    f.j.state = JOB_QUEUED;
    f.j.attempt = 0;
    f.j.cancel_requested = 0;
    f.j.started_ms = f.j.finished_ms = 0;
    f.j.error = NULL;
    f.j.result_json = NULL;
    json_t *o = job_to_json(&f.j, 1);
    assert_non_null(o);
    check_members(o, 1);
    assert_string_equal(json_string_value(json_object_get(o, "device")), dev);
    assert_string_equal(json_string_value(json_object_get(o, "state")), "queued");
    assert_int_equal(json_integer_value(json_object_get(o, "attempt")), 0);
    assert_true(json_is_false(json_object_get(o, "cancel_requested")));
    assert_true(json_is_string(json_object_get(o, "created_at")));
    assert_true(json_is_null(json_object_get(o, "started_at")));
    assert_true(json_is_null(json_object_get(o, "finished_at")));
    assert_true(json_is_null(json_object_get(o, "duration_s")));
    assert_true(json_is_null(json_object_get(o, "error")));
    assert_true(json_is_null(json_object_get(o, "result")));
    json_decref(o);

    /* running: started, not finished -> still no duration */
    f.j.state = JOB_RUNNING;
    f.j.started_ms = 1763718601000LL;
    o = job_to_json(&f.j, 0);
    assert_non_null(o);
    assert_string_equal(json_string_value(json_object_get(o, "state")), "running");
    assert_true(json_is_string(json_object_get(o, "started_at")));
    assert_true(json_is_null(json_object_get(o, "duration_s")));
    json_decref(o);
}

static void test_job_to_json_states(void **state)
{
    (void)state;
    static const char *const names[] = {"queued", "running", "succeeded", "failed",
                                        "cancelled"};
    struct filled f;
    fill(&f);
    for (int s = 0; s < JOB_STATE_COUNT; s++) {
        f.j.state = (enum job_state)s;
        json_t *o = job_to_json(&f.j, 0);
        assert_non_null(o);
        assert_string_equal(json_string_value(json_object_get(o, "state")), names[s]);
        json_decref(o);
    }
}

static void test_job_to_json_bad_stored_text(void **state)
{
    (void)state;
    struct filled f;
    fill(&f);
    char bad_params[] = "{not json", bad_result[] = "";
    f.j.params_json = bad_params;
    f.j.result_json = bad_result;
    json_t *o = job_to_json(&f.j, 1);
    assert_non_null(o);
    assert_true(json_is_null(json_object_get(o, "params")));
    assert_true(json_is_null(json_object_get(o, "result")));
    json_decref(o);

    /* NULL params text, and a result that is a bare JSON value */
    char scalar[] = "42";
    f.j.params_json = NULL;
    f.j.result_json = scalar;
    o = job_to_json(&f.j, 1);
    assert_non_null(o);
    assert_true(json_is_null(json_object_get(o, "params")));
    assert_int_equal(json_integer_value(json_object_get(o, "result")), 42);
    json_decref(o);
}

/* An error text with bytes that are not UTF-8 (here the tail of a worker's
 * stderr) still gives the JOB, with some string or null as its error. */
static void test_job_to_json_error_not_utf8(void **state)
{
    (void)state;
    struct filled f;
    fill(&f);
    char bad[] = "worker killed by signal 11 (SIGSEGV): caf\xe9 \xff\xfe";
    f.j.state = JOB_FAILED;
    f.j.error = bad;
    json_t *o = job_to_json(&f.j, 0);
    if (!o)
        fail_msg("job_to_json gave NULL for an error text that is not UTF-8");
    assert_int_equal(json_integer_value(json_object_get(o, "id")), 12);
    json_t *e = json_object_get(o, "error");
    assert_true(json_is_string(e) || json_is_null(e));
    json_decref(o);
}

static void test_events_to_json(void **state)
{
    (void)state;
    char m0[] = "submitted", m1[] = "started", m2[] = "exited with status 3: boom";
    struct job_event ev[] = {
        {1763718600123LL, JOB_QUEUED, m0},
        {1763718601000LL, JOB_RUNNING, m1},
        {1763718603500LL, JOB_FAILED, m2},
        {1763718604000LL, JOB_CANCELLED, NULL},
    };
    json_t *a = job_events_to_json(ev, 4);
    assert_true(json_is_array(a));
    assert_int_equal(json_array_size(a), 4);
    static const char *const at[] = {"2025-11-21T09:50:00.123Z", "2025-11-21T09:50:01.000Z",
                                     "2025-11-21T09:50:03.500Z", "2025-11-21T09:50:04.000Z"};
    static const char *const st[] = {"queued", "running", "failed", "cancelled"};
    static const char *const msg[] = {"submitted", "started", "exited with status 3: boom", ""};
    for (size_t i = 0; i < 4; i++) {
        json_t *e = json_array_get(a, i);
        assert_true(json_is_object(e));
        assert_int_equal(json_object_size(e), 3);
        assert_string_equal(json_string_value(json_object_get(e, "at")), at[i]);
        assert_string_equal(json_string_value(json_object_get(e, "state")), st[i]);
        assert_string_equal(json_string_value(json_object_get(e, "message")), msg[i]);
    }
    json_decref(a);

    a = job_events_to_json(NULL, 0);
    assert_true(json_is_array(a));
    assert_int_equal(json_array_size(a), 0);
    json_decref(a);
}

static void test_events_message_not_utf8(void **state)
{
    (void)state;
    char m0[] = "submitted", m1[] = "failed: \xff\xfe", m2[] = "requeued";
    struct job_event ev[] = {
        {1763718600123LL, JOB_QUEUED, m0},
        {1763718601000LL, JOB_FAILED, m1},
        {1763718602000LL, JOB_QUEUED, m2},
    };
    json_t *a = job_events_to_json(ev, 3);
    assert_true(json_is_array(a));
    size_t n = json_array_size(a);
    const char *last = json_string_value(json_object_get(json_array_get(a, n - 1), "message"));
    int last_ok = last && strcmp(last, "requeued") == 0;
    json_decref(a);
    if (n != 3)
        fail_msg("%zu of 3 events encoded: the one with a non-UTF-8 message was dropped", n);
    assert_true(last_ok);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time_to_json),
        cmocka_unit_test(test_job_to_json_filled),
        cmocka_unit_test(test_job_to_json_gpu_and_queued),
        cmocka_unit_test(test_job_to_json_states),
        cmocka_unit_test(test_job_to_json_bad_stored_text),
        cmocka_unit_test(test_job_to_json_error_not_utf8),
        cmocka_unit_test(test_events_to_json),
        cmocka_unit_test(test_events_message_not_utf8),
    };
    return cmocka_run_group_tests_name("jobjson", tests, NULL, NULL);
}
