/*
 * Unit tests of the job-kind registry and the parameter validator
 * (server/jobs/registry.c), on the test-only kinds of tests/kinds/test_kinds.c:
 * lookup by name and by index; job_params_validate fills every default for
 * NULL or {} params, keeps given values, and refuses an unknown parameter,
 * out-of-range numbers and integers, values of the wrong JSON type, enum
 * values outside the list (the reason listing the choices) and params that
 * are not an object, each time returning NULL with "params.NAME" in field
 * and "params.NAME: reason" in err; job_kind_to_json gives the served shape
 * (name, summary, needs_gpu, internal, default_timeout_s, and per parameter its type,
 * bounds, enum list, default and description).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "server/jobs/registry.h"

static const struct job_kind *test_kind(void)
{
    const struct job_kind *k = job_kind_find("test");
    assert_non_null(k);
    return k;
}

/* Validates the JSON text (NULL = no params) and returns the result. */
static json_t *validate(const struct job_kind *k, const char *text, char *err, size_t errlen,
                        char *field, size_t fieldlen)
{
    json_t *in = NULL;
    if (text) {
        json_error_t je;
        in = json_loads(text, JSON_DECODE_ANY, &je);
        if (!in)
            fail_msg("bad test JSON %s: %s", text, je.text);
    }
    err[0] = field[0] = '\0';
    json_t *out = job_params_validate(k, in, err, errlen, field, fieldlen);
    if (out)
        assert_ptr_not_equal(out, in);
    json_decref(in);
    return out;
}

/* Asserts that text is refused with field and the reason. */
static void refused(const char *text, const char *want_field, const char *want_err)
{
    char err[512], field[128];
    json_t *out = validate(test_kind(), text, err, sizeof err, field, sizeof field);
    if (out) {
        char *s = json_dumps(out, JSON_COMPACT);
        fail_msg("%s accepted as %s", text, s ? s : "?");
    }
    assert_string_equal(field, want_field);
    assert_string_equal(err, want_err);
}

/* ---- registry --------------------------------------------------------------- */

static void test_find(void **state)
{
    (void)state;
    const struct job_kind *k = job_kind_find("test");
    assert_non_null(k);
    assert_string_equal(k->name, "test");
    assert_int_equal(k->needs_gpu, 0);
    assert_int_equal(k->nparams, 4);
    assert_non_null(k->run);
    const struct job_kind *g = job_kind_find("test-gpu");
    assert_non_null(g);
    assert_int_equal(g->needs_gpu, 1);
    assert_null(job_kind_find("nope"));
    assert_null(job_kind_find(""));
    assert_null(job_kind_find("Test"));
    assert_null(job_kind_find("tes"));
    assert_null(job_kind_find("test "));
}

static void test_enumerate(void **state)
{
    (void)state;
    size_t n = job_kind_count();
    int saw_test = 0, saw_gpu = 0;
    assert_true(n >= 2);
    for (size_t i = 0; i < n; i++) {
        const struct job_kind *k = job_kind_at(i);
        assert_non_null(k);
        assert_ptr_equal(job_kind_find(k->name), k); /* names are unique */
        saw_test += strcmp(k->name, "test") == 0;
        saw_gpu += strcmp(k->name, "test-gpu") == 0;
    }
    assert_int_equal(saw_test, 1);
    assert_int_equal(saw_gpu, 1);
    assert_null(job_kind_at(n));
    assert_null(job_kind_at(n + 5));
}

/* ---- validation: accepted ------------------------------------------------------ */

static void check_defaults(const json_t *out)
{
    assert_true(json_is_object(out));
    assert_int_equal(json_object_size(out), 3); /* echo has no default */
    assert_string_equal(json_string_value(json_object_get(out, "mode")), "ok");
    assert_true(json_is_number(json_object_get(out, "seconds")));
    assert_true(json_number_value(json_object_get(out, "seconds")) == 0.0);
    assert_true(json_is_integer(json_object_get(out, "exit_code")));
    assert_int_equal(json_integer_value(json_object_get(out, "exit_code")), 1);
    assert_null(json_object_get(out, "echo"));
}

static void test_defaults_filled(void **state)
{
    (void)state;
    char err[512], field[128];
    json_t *out = validate(test_kind(), NULL, err, sizeof err, field, sizeof field);
    if (!out)
        fail_msg("NULL params refused: %s", err);
    check_defaults(out);
    json_decref(out);

    out = validate(test_kind(), "{}", err, sizeof err, field, sizeof field);
    if (!out)
        fail_msg("{} refused: %s", err);
    check_defaults(out);
    json_decref(out);
}

static void test_given_values_kept(void **state)
{
    (void)state;
    char err[512], field[128];
    json_t *out = validate(test_kind(),
                           "{\"mode\":\"sleep\",\"seconds\":2.5,\"exit_code\":7,\"echo\":\"hi\"}",
                           err, sizeof err, field, sizeof field);
    if (!out)
        fail_msg("refused: %s", err);
    json_t *want = json_pack("{s:s, s:f, s:i, s:s}", "mode", "sleep", "seconds", 2.5,
                             "exit_code", 7, "echo", "hi");
    assert_true(json_equal(out, want));
    json_decref(want);
    json_decref(out);

    /* partial: given ones kept, the others defaulted */
    out = validate(test_kind(), "{\"exit_code\":255,\"seconds\":3600}", err, sizeof err, field,
                   sizeof field);
    if (!out)
        fail_msg("refused: %s", err);
    want = json_pack("{s:s, s:i, s:i}", "mode", "ok", "seconds", 3600, "exit_code", 255);
    assert_true(json_equal(out, want));
    json_decref(want);
    json_decref(out);

    /* bounds are inclusive; an integer is a number */
    out = validate(test_kind(), "{\"exit_code\":0,\"seconds\":0,\"echo\":\"\"}", err,
                   sizeof err, field, sizeof field);
    if (!out)
        fail_msg("refused: %s", err);
    assert_int_equal(json_integer_value(json_object_get(out, "exit_code")), 0);
    assert_string_equal(json_string_value(json_object_get(out, "echo")), "");
    json_decref(out);

    /* every choice of the enum is accepted */
    static const char *const modes[] = {"ok", "sleep", "crash", "garbage", "exit", "hang", "big"};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        char text[64];
        snprintf(text, sizeof text, "{\"mode\":\"%s\"}", modes[i]);
        out = validate(test_kind(), text, err, sizeof err, field, sizeof field);
        if (!out)
            fail_msg("%s refused: %s", text, err);
        assert_string_equal(json_string_value(json_object_get(out, "mode")), modes[i]);
        json_decref(out);
    }
}

/* ---- validation: refused --------------------------------------------------------- */

static void test_unknown_param(void **state)
{
    (void)state;
    refused("{\"x\":1}", "params.x", "params.x: unknown parameter for this kind");
    refused("{\"Mode\":\"ok\"}", "params.Mode", "params.Mode: unknown parameter for this kind");

    /* a kind without parameters takes none (the stand-in suite has none) */
    const struct job_kind *g = job_kind_find("suite-standin");
    assert_non_null(g);
    char err[512], field[128];
    json_t *out = validate(g, "{\"mode\":\"ok\"}", err, sizeof err, field, sizeof field);
    assert_null(out);
    assert_string_equal(field, "params.mode");
    assert_string_equal(err, "params.mode: unknown parameter for this kind");
    out = validate(g, NULL, err, sizeof err, field, sizeof field);
    assert_non_null(out);
    assert_int_equal(json_object_size(out), 0);
    json_decref(out);
}

static void test_out_of_range(void **state)
{
    (void)state;
    refused("{\"seconds\":-1}", "params.seconds", "params.seconds: must be a number from 0 to 3600");
    refused("{\"seconds\":3601}", "params.seconds",
            "params.seconds: must be a number from 0 to 3600");
    refused("{\"seconds\":3600.5}", "params.seconds",
            "params.seconds: must be a number from 0 to 3600");
    refused("{\"seconds\":-0.001}", "params.seconds",
            "params.seconds: must be a number from 0 to 3600");
    refused("{\"exit_code\":256}", "params.exit_code",
            "params.exit_code: must be an integer from 0 to 255");
    refused("{\"exit_code\":-1}", "params.exit_code",
            "params.exit_code: must be an integer from 0 to 255");
    refused("{\"exit_code\":9223372036854775807}", "params.exit_code",
            "params.exit_code: must be an integer from 0 to 255");
}

static void test_wrong_types(void **state)
{
    (void)state;
    refused("{\"exit_code\":\"3\"}", "params.exit_code",
            "params.exit_code: must be an integer from 0 to 255");
    refused("{\"exit_code\":1.5}", "params.exit_code",
            "params.exit_code: must be an integer from 0 to 255");
    refused("{\"exit_code\":2.0}", "params.exit_code",
            "params.exit_code: must be an integer from 0 to 255");
    refused("{\"exit_code\":true}", "params.exit_code",
            "params.exit_code: must be an integer from 0 to 255");
    refused("{\"exit_code\":null}", "params.exit_code",
            "params.exit_code: must be an integer from 0 to 255");
    refused("{\"echo\":true}", "params.echo", "params.echo: must be a string");
    refused("{\"echo\":5}", "params.echo", "params.echo: must be a string");
    refused("{\"echo\":[\"a\"]}", "params.echo", "params.echo: must be a string");
    refused("{\"echo\":null}", "params.echo", "params.echo: must be a string");
    refused("{\"seconds\":\"1\"}", "params.seconds",
            "params.seconds: must be a number from 0 to 3600");
    refused("{\"seconds\":false}", "params.seconds",
            "params.seconds: must be a number from 0 to 3600");
}

static void test_enum_not_in_list(void **state)
{
    (void)state;
    static const char *const why =
        "must be one of: ok, sleep, crash, garbage, exit, hang, big";
    char want[256];
    snprintf(want, sizeof want, "params.mode: %s", why);
    refused("{\"mode\":\"fly\"}", "params.mode", want);
    refused("{\"mode\":\"OK\"}", "params.mode", want);
    refused("{\"mode\":\"\"}", "params.mode", want);
    refused("{\"mode\":1}", "params.mode", want);
    refused("{\"mode\":null}", "params.mode", want);
}

static void test_params_not_object(void **state)
{
    (void)state;
    static const char *const bad[] = {"[]", "[1]", "\"ok\"", "1", "true", "null"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        refused(bad[i], "params", "params: must be an object");
}

/* A refusal writes neither err nor field past their sizes. */
static void test_small_error_buffers(void **state)
{
    (void)state;
    char err[12], field[8];
    memset(err, '#', sizeof err);
    memset(field, '#', sizeof field);
    json_t *in = json_loads("{\"mode\":\"fly\"}", 0, NULL);
    assert_non_null(in);
    assert_null(job_params_validate(test_kind(), in, err, 8, field, 4));
    assert_string_equal(err, "params.");
    assert_string_equal(field, "par");
    assert_int_equal(err[8], '#');
    assert_int_equal(field[4], '#');
    json_decref(in);
}

/* ---- job_kind_to_json ------------------------------------------------------------- */

static void test_kind_to_json(void **state)
{
    (void)state;
    json_t *j = job_kind_to_json(test_kind());
    assert_non_null(j);
    assert_int_equal(json_object_size(j), 6);
    assert_string_equal(json_string_value(json_object_get(j, "name")), "test");
    assert_true(json_is_string(json_object_get(j, "summary")));
    assert_true(json_is_false(json_object_get(j, "needs_gpu")));
    assert_true(json_is_false(json_object_get(j, "internal")));
    assert_int_equal(json_integer_value(json_object_get(j, "default_timeout_s")), 60);

    json_t *params = json_object_get(j, "params");
    assert_true(json_is_object(params));
    assert_int_equal(json_object_size(params), 4);

    json_t *mode = json_object_get(params, "mode");
    assert_string_equal(json_string_value(json_object_get(mode, "type")), "enum");
    assert_true(json_is_false(json_object_get(mode, "required")));
    json_t *choices = json_object_get(mode, "enum");
    assert_true(json_is_array(choices));
    json_t *want = json_pack("[s,s,s,s,s,s,s]", "ok", "sleep", "crash", "garbage", "exit",
                             "hang", "big");
    assert_true(json_equal(choices, want));
    json_decref(want);
    assert_string_equal(json_string_value(json_object_get(mode, "default")), "ok");
    assert_true(json_is_string(json_object_get(mode, "description")));
    assert_null(json_object_get(mode, "minimum"));

    json_t *seconds = json_object_get(params, "seconds");
    assert_string_equal(json_string_value(json_object_get(seconds, "type")), "number");
    assert_true(json_is_number(json_object_get(seconds, "minimum")));
    assert_true(json_number_value(json_object_get(seconds, "minimum")) == 0.0);
    assert_true(json_number_value(json_object_get(seconds, "maximum")) == 3600.0);
    assert_true(json_number_value(json_object_get(seconds, "default")) == 0.0);
    assert_null(json_object_get(seconds, "enum"));

    json_t *code = json_object_get(params, "exit_code");
    assert_string_equal(json_string_value(json_object_get(code, "type")), "integer");
    assert_true(json_is_integer(json_object_get(code, "minimum")));
    assert_int_equal(json_integer_value(json_object_get(code, "minimum")), 0);
    assert_true(json_is_integer(json_object_get(code, "maximum")));
    assert_int_equal(json_integer_value(json_object_get(code, "maximum")), 255);
    assert_int_equal(json_integer_value(json_object_get(code, "default")), 1);

    json_t *echo = json_object_get(params, "echo");
    assert_string_equal(json_string_value(json_object_get(echo, "type")), "string");
    assert_true(json_is_false(json_object_get(echo, "required")));
    assert_null(json_object_get(echo, "default"));
    assert_null(json_object_get(echo, "minimum"));
    json_decref(j);

    j = job_kind_to_json(job_kind_find("suite-standin"));
    assert_non_null(j);
    assert_true(json_is_true(json_object_get(j, "needs_gpu")));
    assert_true(json_is_object(json_object_get(j, "params")));
    assert_int_equal(json_object_size(json_object_get(j, "params")), 0);
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_enumerate),
        cmocka_unit_test(test_defaults_filled),
        cmocka_unit_test(test_given_values_kept),
        cmocka_unit_test(test_unknown_param),
        cmocka_unit_test(test_out_of_range),
        cmocka_unit_test(test_wrong_types),
        cmocka_unit_test(test_enum_not_in_list),
        cmocka_unit_test(test_params_not_object),
        cmocka_unit_test(test_small_error_buffers),
        cmocka_unit_test(test_kind_to_json),
    };
    return cmocka_run_group_tests_name("registry", tests, NULL, NULL);
}
