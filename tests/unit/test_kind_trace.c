/*
 * Unit tests of the trace-sort job kind (server/jobs/kind_trace.c), the
 * adapter between a job and the trace pipeline: its descriptor
 * (registered, internal, CPU-only, with a cleanup hook, one schema entry
 * per trace setting); the
 * translation of user settings given as text (CLI options and query
 * arguments, hyphenated) into typed parameters, and of validation errors
 * back into the user's spelling; the file-name rule of daemon runs; a run
 * in daemon mode (names inside upload_dir, default output trace-<id>.out,
 * paths refused), a run on a bad CSV and on a bad binary trace (the error's
 * line and offset in the text and in the job's failure, no output and no
 * part file left), and the finished hook (what it removes and keeps).
 * Each test works in a fresh temporary folder and checks at teardown that
 * nothing but the files it made itself is left there.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/jobs/kind_trace.h"
#include "tests/unit/support/tmpfile.h"
#include "trace/binfmt.h"

static int setup(void **state)
{
    return tmp_setup(state, "kinds-trace", "in.csv");
}

/* Fails unless the folder holds exactly the files named (space separated). */
static void assert_dir_holds(const char *dir, const char *names)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char seen[1024] = "";
    assert_non_null(d);
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        size_t n = strlen(seen);
        snprintf(seen + n, sizeof seen - n, "%s%s", n ? " " : "", e->d_name);
        char word[300];
        snprintf(word, sizeof word, " %s ", e->d_name);
        char padded[1100];
        snprintf(padded, sizeof padded, " %s ", names);
        if (!strstr(padded, word))
            fail_msg("unexpected file %s in %s (holds: %s)", e->d_name, dir, seen);
    }
    closedir(d);
}

static int teardown(void **state)
{
    struct tmp *t = *state;
    assert_dir_holds(t->dir, "in.csv");
    return tmp_teardown(state);
}

static json_t *parse(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j)
        fail_msg("bad test JSON %s: %s", text, e.text);
    return j;
}

/* ---- the descriptor ---------------------------------------------------------- */

static void test_descriptor(void **state)
{
    (void)state;
    const struct job_kind *k = job_kind_find("trace-sort");
    assert_ptr_equal(k, &kind_trace_sort);
    assert_int_equal(k->internal, 1);
    assert_int_equal(k->needs_gpu, 0);
    assert_non_null(k->created_by);
    assert_non_null(k->run);
    assert_non_null(k->finished);
    assert_non_null(k->check_result);
    json_t *j = job_kind_to_json(k);
    assert_true(json_is_true(json_object_get(j, "internal")));
    assert_non_null(json_object_get(json_object_get(j, "params"), "lat_sigma"));
    json_decref(j);
    j = job_kind_to_json(job_kind_find("test"));
    assert_true(json_is_false(json_object_get(j, "internal")));
    json_decref(j);
}

/* ---- settings as text -------------------------------------------------------- */

static void test_param_text_types(void **state)
{
    (void)state;
    json_t *p = json_object();
    char err[512];
    assert_int_equal(trace_sort_param_text(p, "threads-per-block", "128", err, sizeof err), 0);
    assert_int_equal(trace_sort_param_text(p, "lat_sigma", "2.5", err, sizeof err), 0);
    assert_int_equal(trace_sort_param_text(p, "coalesce", "sector32", err, sizeof err), 0);
    assert_int_equal(trace_sort_param_text(p, "seed", "18446744073709551615", err, sizeof err), 0);
    assert_int_equal(trace_sort_param_text(p, "out-format", "bin", err, sizeof err), 0);
    json_t *want = parse("{\"threads_per_block\":128,\"lat_sigma\":2.5,\"coalesce\":\"sector32\","
                         "\"seed\":\"18446744073709551615\",\"out_format\":\"bin\"}");
    assert_true(json_equal(p, want));
    json_decref(want);
    json_decref(p);
}

static void test_param_text_refusals(void **state)
{
    (void)state;
    json_t *p = json_object();
    char err[512];
    assert_int_equal(trace_sort_param_text(p, "sms", "12x", err, sizeof err), -1);
    assert_string_equal(err, "sms: must be an integer from 1 to 4096, not '12x'");
    assert_int_equal(trace_sort_param_text(p, "lat-sigma", "nan", err, sizeof err), -1);
    assert_string_equal(err, "lat-sigma: must be a number from 0 to 1000000, not 'nan'");
    assert_int_equal(trace_sort_param_text(p, "lat-sigma", "", err, sizeof err), -1);
    /* files cannot be given as settings: not from a query, not from an option */
    static const char *const refused[] = {"input", "output", "pc_flags", "pc-flags", "bogus", ""};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        assert_int_equal(trace_sort_param_text(p, refused[i], "x", err, sizeof err), -1);
        assert_non_null(strstr(err, "is not a setting (known: in-format, out-format"));
    }
    assert_int_equal(json_object_size(p), 0);
    json_decref(p);
}

/* trace_sort_params_check on text, expecting a refusal naming field. */
static void check_refused(const char *text, const char *field, const char *err_start)
{
    char err[512], f[64];
    json_t *in = parse(text);
    json_t *out = trace_sort_params_check(in, err, sizeof err, f, sizeof f);
    json_decref(in);
    if (out)
        fail_msg("%s accepted", text);
    assert_string_equal(f, field);
    if (strncmp(err, err_start, strlen(err_start)) != 0)
        fail_msg("error '%s' does not start with '%s'", err, err_start);
}

static void test_params_check(void **state)
{
    (void)state;
    char err[512], f[64];
    json_t *in = parse("{\"input\":\"x\",\"threads_per_block\":64}");
    json_t *out = trace_sort_params_check(in, err, sizeof err, f, sizeof f);
    assert_non_null(out);
    json_t *want = parse("{\"input\":\"x\",\"threads_per_block\":64,\"in_format\":\"auto\","
                         "\"out_format\":\"csv\"}");
    assert_true(json_equal(out, want)); /* defaults for the formats only: the preset decides */
    json_decref(want);
    json_decref(out);
    json_decref(in);
    check_refused("{\"input\":\"x\",\"threads_per_block\":2048}", "threads-per-block",
                  "threads-per-block: must be an integer from 1 to 1024");
    check_refused("{\"input\":\"x\",\"line\":96}", "line", "line: must be a power of two");
    check_refused("{\"input\":\"x\",\"seed\":\"-1\"}", "seed", "seed: must be a decimal integer");
    check_refused("{\"input\":\"x\",\"in_format\":\"xml\"}", "in-format",
                  "in-format: must be one of: auto, csv, bin, nvbit, accelsim");
    check_refused("{\"input\":\"x\",\"arch\":\"pascal\"}", "arch", "arch: must be one of");
    check_refused("{\"threads_per_block\":64}", "input", "input: is required");
    check_refused("{\"input\":\"\"}", "input", "input: must not be empty");
}

static void test_plain_names(void **state)
{
    (void)state;
    assert_true(trace_sort_plain_name("upload-AbC123"));
    assert_true(trace_sort_plain_name("trace-x_Y.in"));
    static const char *const bad[] = {"", ".", "..", "../x", "a/b", "/etc/passwd", ".hidden",
                                      "a b", "x\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (trace_sort_plain_name(bad[i]))
            fail_msg("'%s' taken for a plain name", bad[i]);
    char long_name[300];
    memset(long_name, 'a', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    assert_false(trace_sort_plain_name(long_name));
}

/* ---- runs ---------------------------------------------------------------------- */

/* Runs the kind on params_text; returns the result (or NULL with err). */
static json_t *run(const char *upload_dir, int64_t job, const char *params_text,
                   struct job_failure *failure, char *err, size_t errlen)
{
    struct job_ctx ctx = {.job_id = job, .upload_dir = upload_dir, .failure = failure};
    json_t *params = parse(params_text);
    json_t *res = kind_trace_sort.run(&ctx, params, err, errlen);
    json_decref(params);
    return res;
}

static void test_daemon_run_default_output(void **state)
{
    struct tmp *t = *state;
    char err[1024];
    write_file(t->path, sample_csv);
    json_t *res = run(t->dir, 7, "{\"input\":\"in.csv\",\"sms\":2}", NULL, err, sizeof err);
    if (!res)
        fail_msg("run failed: %s", err);
    assert_int_equal(json_integer_value(json_object_get(res, "records_in")), 4);
    assert_string_equal(json_string_value(json_object_get(res, "input_format")), "csv");
    assert_int_equal(json_array_size(json_object_get(res, "sms")), 2);
    assert_int_equal(kind_trace_sort.check_result(res, err, sizeof err), 0);
    char out[300];
    trace_sort_job_output(t->dir, 7, out, sizeof out);
    assert_string_equal(out, tmp_path(t, "trace-7.out"));
    struct stat st;
    assert_int_equal(stat(out, &st), 0);
    assert_int_equal(json_integer_value(json_object_get(res, "output_bytes")), st.st_size);
    assert_false(file_exists(tmp_path(t, "trace-7.out.part")));
    json_decref(res);
    unlink(out);
}

static void test_daemon_run_refuses_paths(void **state)
{
    struct tmp *t = *state;
    char err[1024], text[600];
    write_file(t->path, sample_csv);
    snprintf(text, sizeof text, "{\"input\":\"%s\",\"output\":\"x.out\"}", t->path);
    assert_null(run(t->dir, 1, text, NULL, err, sizeof err));
    assert_non_null(strstr(err, "is not a file name of the upload folder"));
    assert_null(run(t->dir, 1, "{\"input\":\"in.csv\",\"output\":\"../x.out\"}", NULL, err,
                    sizeof err));
    assert_non_null(strstr(err, "output"));
    assert_null(run(t->dir, 1, "{\"input\":\"in.csv\",\"pc_flags\":\"/etc/hosts\"}", NULL, err,
                    sizeof err));
    assert_non_null(strstr(err, "pc_flags"));
    /* from the command line an output is required */
    assert_null(run(NULL, 0, "{\"input\":\"x\"}", NULL, err, sizeof err));
    assert_non_null(strstr(err, "output"));
}

static void test_bad_width_csv(void **state)
{
    struct tmp *t = *state;
    char err[1024];
    struct job_failure f = JOB_FAILURE_NONE;
    write_file(t->path, bad_width_csv);
    json_t *res = run(t->dir, 0, "{\"input\":\"in.csv\",\"output\":\"in.csv.out\"}", &f, err,
                      sizeof err);
    assert_null(res);
    if (strncmp(err, "line 3 (byte offset 40): width must be", 38) != 0)
        fail_msg("unexpected error: %s", err);
    assert_int_equal(f.cls, JOB_ERROR_INPUT);
    assert_int_equal(f.line, 3);
    assert_int_equal(f.offset, 40);
    assert_false(file_exists(tmp_path(t, "in.csv.out")));
    assert_false(file_exists(tmp_path(t, "in.csv.out.part")));
}

/* A binary requests file whose second record has width 3. */
static void write_bad_bin(const char *path)
{
    struct trace_bin_header h;
    struct trace_err te;
    trace_bin_header_init(&h, TRACE_BIN_REQUESTS, NULL);
    struct trace_bin_writer *w = trace_bin_writer_open(path, &h, &te);
    assert_non_null(w);
    struct trace_rec r = {.tid = 0, .pc = 0x40, .addr = 0x1000, .width = 4, .dep = 1};
    assert_int_equal(trace_bin_write_rec(w, &r), 0);
    r.tid = 1;
    r.width = 3;
    assert_int_equal(trace_bin_write_rec(w, &r), 0);
    assert_int_equal(trace_bin_writer_close(w, &te), 0);
}

static void test_bad_binary(void **state)
{
    struct tmp *t = *state;
    char err[1024];
    struct job_failure f = JOB_FAILURE_NONE;
    write_bad_bin(t->path); /* named in.csv: the format comes from the content */
    char text[600];
    snprintf(text, sizeof text, "{\"input\":\"%s\",\"output\":\"%s\"}", t->path,
             tmp_path(t, "out.csv"));
    assert_null(run(NULL, 0, text, &f, err, sizeof err));
    if (strncmp(err, "byte offset 160: record 1: ", 27) != 0)
        fail_msg("unexpected error: %s", err);
    assert_int_equal(f.cls, JOB_ERROR_INPUT);
    assert_int_equal(f.line, -1); /* no line in a binary file */
    assert_int_equal(f.offset, 160);
    assert_false(file_exists(tmp_path(t, "out.csv")));
    assert_false(file_exists(tmp_path(t, "out.csv.part")));
}

/* ---- the finished hook ------------------------------------------------------------ */

static void test_finished_named_output(void **state)
{
    struct tmp *t = *state;
    static const char *const files[] = {"up-1", "up-1.out", "up-1.out.part"};
    const char *params = "{\"input\":\"up-1\",\"output\":\"up-1.out\"}";
    for (int succeeded = 1; succeeded >= 0; succeeded--) {
        for (size_t i = 0; i < 3; i++)
            write_file(tmp_path(t, files[i]), "x");
        kind_trace_sort.finished(t->dir, 0, params, succeeded);
        assert_false(file_exists(tmp_path(t, "up-1")));
        assert_false(file_exists(tmp_path(t, "up-1.out.part")));
        assert_int_equal(file_exists(tmp_path(t, "up-1.out")), succeeded);
        unlink(tmp_path(t, "up-1.out"));
    }
}

static void test_finished_job_output(void **state)
{
    struct tmp *t = *state;
    const char *params = "{\"input\":\"trace-ab.in\"}";
    write_file(tmp_path(t, "trace-ab.in"), "x");
    write_file(tmp_path(t, "trace-12.out"), "x");
    write_file(tmp_path(t, "trace-12.out.part"), "x");
    kind_trace_sort.finished(t->dir, 12, params, 1);
    assert_false(file_exists(tmp_path(t, "trace-ab.in")));
    assert_false(file_exists(tmp_path(t, "trace-12.out.part")));
    assert_true(file_exists(tmp_path(t, "trace-12.out")));
    kind_trace_sort.finished(t->dir, 12, params, 0);
    assert_false(file_exists(tmp_path(t, "trace-12.out")));
    /* stored parameters that are not plain names never reach unlink */
    write_file(t->path, "keep");
    char text[600];
    snprintf(text, sizeof text, "{\"input\":\"%s\",\"output\":\"../x\"}", t->path);
    kind_trace_sort.finished(t->dir, 0, text, 0);
    assert_true(file_exists(t->path));
    kind_trace_sort.finished(t->dir, 0, "not json", 0); /* harmless */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_descriptor),
        cmocka_unit_test(test_param_text_types),
        cmocka_unit_test(test_param_text_refusals),
        cmocka_unit_test(test_params_check),
        cmocka_unit_test(test_plain_names),
        cmocka_unit_test_setup_teardown(test_daemon_run_default_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_daemon_run_refuses_paths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_width_csv, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_binary, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finished_named_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finished_job_output, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
