/*
 * Unit tests of the trace pipeline (trace/pipeline.c), file to file: a sort
 * of a CSV trace writes the sorted CSV and reports the summary, the format
 * read and the output's size; the same sort written as binary converts back
 * to the same CSV; requests survive CSV -> binary -> CSV; standard output
 * as the output; and failures: a bad record (input at fault, its line and
 * offset, the file named), a bad per-PC flag table (the table named), flags
 * on a sorted file (the settings at fault), a missing input. No failure
 * leaves an output or a part file, and none touches an OUTPUT that was
 * there before. Each test works in a fresh temporary folder.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/support/tmpfile.h"
#include "trace/pipeline.h"

static int setup(void **state)
{
    return tmp_setup(state, "pipeline", "in.csv");
}

/* Removes every file the test made, then the folder. */
static int teardown(void **state)
{
    struct tmp *t = *state;
    static const char *const names[] = {"out.csv", "out.csv.part", "out.bin", "out.bin.part",
                                        "back.csv", "back.csv.part", "req.bin", "req.bin.part",
                                        "flags.txt", "stdout.txt"};
    char path[256];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", t->dir, names[i]);
        unlink(path);
    }
    return tmp_teardown(state);
}

static struct trace_params params_with(const char *settings)
{
    struct trace_params p;
    char msg[200], copy[200];
    trace_params_default(&p);
    snprintf(copy, sizeof copy, "%s", settings);
    for (char *tok = strtok(copy, " "); tok; tok = strtok(NULL, " "))
        if (trace_params_parse(&p, tok, msg, sizeof msg))
            fail_msg("%s: %s", tok, msg);
    return p;
}

static void sort_ok(const struct trace_files *f, const char *settings, struct trace_outcome *out)
{
    struct trace_params p = params_with(settings);
    struct trace_summary sum;
    struct trace_failure fail;
    if (trace_pipeline_sort(f, &p, &sum, out, &fail) != 0)
        fail_msg("sort failed: %s", fail.msg);
    assert_int_equal(sum.records_in, 4);
    trace_summary_free(&sum);
}

static void convert_ok(const struct trace_files *f, const char *settings)
{
    struct trace_params p = params_with(settings);
    struct trace_outcome out;
    struct trace_failure fail;
    if (trace_pipeline_convert(f, &p, &out, &fail) != 0)
        fail_msg("convert failed: %s", fail.msg);
}

static void assert_same_file(const char *a, const char *b)
{
    size_t na, nb;
    char *x = must_read_file(a, &na), *y = must_read_file(b, &nb);
    assert_int_equal(na, nb);
    assert_memory_equal(x, y, na);
    free(x);
    free(y);
}

static void test_sort_csv(void **state)
{
    struct tmp *t = *state;
    struct trace_outcome out;
    struct stat st;
    write_file(t->path, sample_csv);
    struct trace_files f = {.input = t->path, .output = tmp_path(t, "out.csv"), .tmpdir = t->dir};
    sort_ok(&f, "sms=2", &out);
    assert_int_equal(out.in_format, TRACE_FMT_CSV);
    assert_int_equal(stat(f.output, &st), 0);
    assert_int_equal(out.output_bytes, st.st_size);
    assert_false(file_exists(tmp_path(t, "out.csv.part")));
    char *text = must_read_file(f.output, NULL);
    assert_int_equal(strncmp(text, "sm,seq,tid,pc,addr,width,dep\n", 29), 0);
    free(text);
}

static void test_sort_binary_converts_back(void **state)
{
    struct tmp *t = *state;
    struct trace_outcome out;
    write_file(t->path, sample_csv);
    struct trace_files csv = {.input = t->path, .output = tmp_path(t, "out.csv")};
    struct trace_files bin = {.input = t->path, .output = tmp_path(t, "out.bin")};
    sort_ok(&csv, "sms=2 seed=5", &out);
    sort_ok(&bin, "sms=2 seed=5 out_format=bin", &out);
    struct trace_files back = {.input = bin.output, .output = tmp_path(t, "back.csv")};
    convert_ok(&back, "");
    assert_same_file(csv.output, back.output);
}

static void test_convert_round_trip(void **state)
{
    struct tmp *t = *state;
    write_file(t->path, sample_csv);
    struct trace_files to_bin = {.input = t->path, .output = tmp_path(t, "req.bin")};
    struct trace_files to_csv = {.input = to_bin.output, .output = tmp_path(t, "back.csv")};
    convert_ok(&to_bin, "out_format=bin");
    convert_ok(&to_csv, "in_format=bin");
    assert_same_file(t->path, to_csv.output);
    assert_false(file_exists(tmp_path(t, "req.bin.part")));
}

static void test_standard_output(void **state)
{
    struct tmp *t = *state;
    struct trace_outcome out;
    write_file(t->path, sample_csv);
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    int fd = open(tmp_path(t, "stdout.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, STDOUT_FILENO);
    close(fd);
    struct trace_files f = {.input = t->path, .output = "-"};
    sort_ok(&f, "sms=1", &out);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    assert_int_equal(out.output_bytes, -1);
    char *text = must_read_file(tmp_path(t, "stdout.txt"), NULL);
    assert_int_equal(strncmp(text, "sm,seq,", 7), 0);
    free(text);
}

/* A sort that must fail: returns the failure; the previous OUTPUT stands. */
static struct trace_failure sort_fails(const struct tmp *t, const struct trace_files *f,
                                       const char *settings)
{
    struct trace_params p = params_with(settings);
    struct trace_summary sum;
    struct trace_outcome out;
    struct trace_failure fail;
    write_file(tmp_path(t, "out.csv"), "what was there before\n");
    assert_int_equal(trace_pipeline_sort(f, &p, &sum, &out, &fail), -1);
    assert_null(sum.sm);
    char *kept = must_read_file(tmp_path(t, "out.csv"), NULL);
    assert_string_equal(kept, "what was there before\n");
    free(kept);
    assert_false(file_exists(tmp_path(t, "out.csv.part")));
    return fail;
}

static void test_bad_record(void **state)
{
    struct tmp *t = *state;
    write_file(t->path, bad_width_csv);
    struct trace_files f = {.input = t->path, .output = tmp_path(t, "out.csv")};
    struct trace_failure fail = sort_fails(t, &f, "");
    assert_int_equal(fail.fault, TRACE_FAULT_INPUT);
    assert_string_equal(fail.file, t->path);
    assert_int_equal(fail.line, 3);
    assert_int_equal(fail.offset, 40);
    if (strncmp(fail.msg, "line 3 (byte offset 40): width must be", 38) != 0)
        fail_msg("unexpected message: %s", fail.msg);
}

static void test_bad_flag_table(void **state)
{
    struct tmp *t = *state;
    write_file(t->path, sample_csv);
    write_file(tmp_path(t, "flags.txt"), "0x40,1\nnonsense\n");
    struct trace_files f = {.input = t->path, .output = tmp_path(t, "out.csv"),
                            .pc_flags = tmp_path(t, "flags.txt")};
    struct trace_failure fail = sort_fails(t, &f, "");
    assert_int_equal(fail.fault, TRACE_FAULT_INPUT);
    assert_string_equal(fail.file, f.pc_flags);
    assert_int_equal(fail.line, 2);
}

static void test_missing_input(void **state)
{
    struct tmp *t = *state;
    struct trace_files f = {.input = tmp_path(t, "nowhere.csv"), .output = tmp_path(t, "out.csv")};
    struct trace_failure fail = sort_fails(t, &f, "");
    assert_int_equal(fail.fault, TRACE_FAULT_OTHER);
    assert_null(fail.file);
    assert_non_null(strstr(fail.msg, "nowhere.csv"));
}

static void test_flags_on_sorted_file(void **state)
{
    struct tmp *t = *state;
    struct trace_outcome out;
    struct trace_failure fail;
    write_file(t->path, sample_csv);
    write_file(tmp_path(t, "flags.txt"), "0x40,1\n");
    struct trace_files bin = {.input = t->path, .output = tmp_path(t, "out.bin")};
    sort_ok(&bin, "out_format=bin", &out);
    struct trace_files f = {.input = bin.output, .output = tmp_path(t, "back.csv"),
                            .pc_flags = tmp_path(t, "flags.txt")};
    struct trace_params p = params_with("");
    assert_int_equal(trace_pipeline_convert(&f, &p, &out, &fail), -1);
    assert_int_equal(fail.fault, TRACE_FAULT_PARAMS);
    assert_false(file_exists(f.output));
    assert_false(file_exists(tmp_path(t, "back.csv.part")));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sort_csv, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sort_binary_converts_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_convert_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_standard_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_record, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_flag_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_input, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flags_on_sorted_file, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
