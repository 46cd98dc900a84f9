/*
 * Unit tests of the trace pipeline (trace/pipeline.c), file to file: a sort
 * of a CSV trace writes the sorted CSV and reports the summary, the format
 * read and the output's size; the same sort written as binary converts back
 * to the same CSV; requests survive CSV -> binary -> CSV; standard output
 * as the output; and failures: a bad record (input at fault, its line and
 * offset, the file named), a bad per-PC flag table (the table named), flags
 * on a sorted file (the settings at fault), a missing input. No failure
 * leaves an output or a part file, and none touches an OUTPUT that was
 * there before; a success replaces it, but one that is a device or a FIFO
 * is written into, never replaced. A trace of 120,000 requests (many
 * batches through the output's writer thread) sorts to the bytes the
 * sorter gives when its records go straight to a binary writer, and its CSV
 * form (thread-major: used without spooling) to the same CSV as the binary
 * file; that CSV sorts to the same bytes whether its copy is parsed on one
 * thread or two, with a flag table too, and a bad line fails both ways at
 * the same place. Each test works in a fresh temporary folder.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/support/tmpfile.h"
#include "trace/binfmt.h"
#include "trace/pipeline.h"
#include "trace/rng.h"

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
                                        "flags.txt", "stdout.txt", "ref.bin", "req.csv", "out2.csv",
                                        "out.fifo", "out.fifo.part"};
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
    assert_int_equal(strncmp(text, "sm,seq,tid,pc,addr,width,dep,op\n", 32), 0);
    assert_non_null(strstr(text, ",0x50,0x2000,8,0,st\n")); /* the store kept its kind */
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

/* 24,000 threads of 5 requests (every other one scattered), thread-major. */
static void write_requests(const char *path)
{
    struct trace_bin_header h;
    trace_bin_header_init(&h, TRACE_BIN_REQUESTS, NULL);
    h.threads_per_block = 128;
    struct trace_err err;
    struct trace_bin_writer *w = trace_bin_writer_open(path, &h, &err);
    assert_non_null(w);
    struct trace_rng g;
    trace_rng_seed(&g, 3);
    for (uint64_t tid = 0; tid < 24000; tid++)
        for (uint64_t k = 0; k < 5; k++) {
            uint64_t addr = k % 2 ? (trace_rng_next(&g) % (1u << 20)) * 8 : 0x10000 * (k + 1) + tid * 4;
            struct trace_rec r = {tid, 0x100 + 0x10 * k, addr, k % 2 ? 8 : 4, k == 2, 0, 0};
            assert_int_equal(trace_bin_write_rec(w, &r), 0);
        }
    assert_int_equal(trace_bin_writer_close(w, &err), 0);
}

/* The sorter's records straight into a binary writer, as the pipeline
 * would write them but with no queue, part file or rename. */
static void reference_sort(const char *in_path, const char *out_path, const char *settings)
{
    struct trace_params p = params_with(settings);
    struct trace_input in;
    struct trace_err err;
    struct trace_summary sum;
    assert_int_equal(trace_input_open(&in, in_path, NULL, &err), 0);
    trace_params_resolve(&p, in.bin.h.threads_per_block);
    struct trace_bin_header h;
    trace_bin_header_init(&h, TRACE_BIN_SORTED, &p);
    struct trace_bin_writer *w = trace_bin_writer_open(out_path, &h, &err);
    assert_non_null(w);
    assert_int_equal(trace_sort_input(&in, &p, NULL, trace_bin_write_out, w, &sum, &err), 0);
    trace_bin_writer_set_input(w, sum.records_in);
    assert_int_equal(trace_bin_writer_close(w, &err), 0);
    trace_summary_free(&sum);
    trace_input_close(&in);
}

static void test_large_sort_through_queue(void **state)
{
    struct tmp *t = *state;
    const char *settings = "sms=3 seed=9 out_format=bin";
    write_requests(tmp_path(t, "req.bin"));
    reference_sort(tmp_path(t, "req.bin"), tmp_path(t, "ref.bin"), settings);
    struct trace_files f = {.input = tmp_path(t, "req.bin"), .output = tmp_path(t, "out.bin")};
    struct trace_params p = params_with(settings);
    struct trace_summary sum;
    struct trace_outcome out;
    struct trace_failure fail;
    if (trace_pipeline_sort(&f, &p, &sum, &out, &fail))
        fail_msg("sort failed: %s", fail.msg);
    assert_int_equal(sum.records_in, 120000);
    assert_true(sum.requests_out > 3 * 8192); /* several of the queue's buffers */
    trace_summary_free(&sum);
    assert_same_file(tmp_path(t, "ref.bin"), f.output);

    /* the same requests as thread-major CSV sort to the same CSV */
    struct trace_files to_csv = {.input = tmp_path(t, "req.bin"), .output = tmp_path(t, "req.csv")};
    convert_ok(&to_csv, "");
    struct trace_files from_bin = {.input = tmp_path(t, "req.bin"), .output = tmp_path(t, "out.csv")};
    struct trace_files from_csv = {.input = tmp_path(t, "req.csv"), .output = tmp_path(t, "out2.csv"),
                                   .tmpdir = t->dir};
    p = params_with("sms=3 seed=9 threads_per_block=128"); /* CSV carries no block size */
    assert_int_equal(trace_pipeline_sort(&from_bin, &p, &sum, &out, &fail), 0);
    trace_summary_free(&sum);
    assert_int_equal(trace_pipeline_sort(&from_csv, &p, &sum, &out, &fail), 0);
    assert_int_equal(out.in_format, TRACE_FMT_CSV);
    trace_summary_free(&sum);
    assert_same_file(from_bin.output, from_csv.output);
}

/* Sorts f with GPUPROBE_TRACE_THREADS=threads (the CSV copy parsed on that
 * many threads): the pipeline's result, *fail filled on failure. */
static int sort_with_threads(const struct trace_files *f, const char *settings, const char *threads,
                             struct trace_failure *fail)
{
    struct trace_params p = params_with(settings);
    struct trace_summary sum;
    struct trace_outcome out;
    setenv("GPUPROBE_TRACE_THREADS", threads, 1);
    int rc = trace_pipeline_sort(f, &p, &sum, &out, fail);
    unsetenv("GPUPROBE_TRACE_THREADS");
    if (rc == 0 && out.in_format != TRACE_FMT_CSV)
        fail_msg("read as %s", trace_format_name(out.in_format));
    if (rc == 0)
        trace_summary_free(&sum);
    return rc;
}

/* A CSV of several 1 MiB chunks, copied by one parser and a writer thread
 * or by two parsing threads: the same sorted bytes, with a per-PC flag
 * table too, and a bad line near the end fails both ways on its own line
 * and offset. */
static void test_csv_copy_on_two_threads(void **state)
{
    struct tmp *t = *state;
    const char *settings = "sms=3 seed=9 threads_per_block=128 out_format=bin";
    char req[256], out1[256], out2[256], flags[256]; /* tmp_path's buffers are reused */
    snprintf(req, sizeof req, "%s", tmp_path(t, "req.csv"));
    snprintf(out1, sizeof out1, "%s", tmp_path(t, "out.bin"));
    snprintf(out2, sizeof out2, "%s", tmp_path(t, "ref.bin"));
    snprintf(flags, sizeof flags, "%s", tmp_path(t, "flags.txt"));
    write_requests(tmp_path(t, "req.bin"));
    struct trace_files to_csv = {.input = tmp_path(t, "req.bin"), .output = req};
    convert_ok(&to_csv, "");
    struct trace_failure fail;
    struct trace_files one = {.input = req, .output = out1, .tmpdir = t->dir};
    struct trace_files two = {.input = req, .output = out2, .tmpdir = t->dir};
    assert_int_equal(sort_with_threads(&one, settings, "1", &fail), 0);
    assert_int_equal(sort_with_threads(&two, settings, "2", &fail), 0);
    assert_same_file(one.output, two.output);
    size_t plain_n, flagged_n;
    char *plain = must_read_file(one.output, &plain_n);

    write_file(flags, "0x100,1\n0x120,0\n");
    one.pc_flags = two.pc_flags = flags;
    for (int k = 0; k < 2; k++)
        if (sort_with_threads(k ? &two : &one, settings, k ? "2" : "1", &fail))
            fail_msg("%d thread(s), with flags: %s: %s", k + 1, fail.file ? fail.file : "-", fail.msg);
    assert_same_file(one.output, two.output);
    char *flagged = must_read_file(one.output, &flagged_n); /* the table changed the order */
    assert_true(plain_n != flagged_n || memcmp(plain, flagged, plain_n) != 0);
    free(plain);
    free(flagged);

    size_t n;
    char *text = must_read_file(req, &n);
    FILE *f = fopen(req, "a");
    assert_non_null(f);
    fputs("24000,0x100,0x10,3,1,ld\n24001,0x100,0x10,4,1,ld\n", f); /* width 3 */
    assert_int_equal(fclose(f), 0);
    unsigned long long lines = 0;
    for (size_t i = 0; i < n; i++)
        lines += text[i] == '\n';
    free(text);
    long long line[2], offset[2];
    for (int k = 0; k < 2; k++) {
        assert_int_equal(sort_with_threads(k ? &two : &one, settings, k ? "2" : "1", &fail), -1);
        assert_int_equal(fail.fault, TRACE_FAULT_INPUT);
        assert_non_null(strstr(fail.msg, "width must be"));
        line[k] = fail.line;
        offset[k] = fail.offset;
    }
    assert_int_equal(line[0], (long long)lines + 1);
    assert_int_equal(offset[0], (long long)n);
    assert_int_equal(line[1], line[0]);
    assert_int_equal(offset[1], offset[0]);
}

/* GPUPROBE_TRACE_THREADS other than 0, 1 or 2 is refused with its value
 * (trace_threads_env_check, and a sort whose caller did not check it, as a
 * fault that is not the trace's or its parameters'), and the output is not
 * written; empty and 0 count as unset. */
static void test_threads_setting_refused(void **state)
{
    struct tmp *t = *state;
    struct trace_failure fail;
    char why[200];
    write_file(t->path, sample_csv);
    struct trace_files f = {.input = t->path, .output = tmp_path(t, "out.csv"), .tmpdir = t->dir};
    const char *const bad[] = {"3", "-1", "two", "1 "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("GPUPROBE_TRACE_THREADS", bad[i], 1);
        assert_int_equal(trace_threads_env_check(why, sizeof why), -1);
        assert_non_null(strstr(why, bad[i]));
        unsetenv("GPUPROBE_TRACE_THREADS");
        assert_int_equal(sort_with_threads(&f, "", bad[i], &fail), -1);
        assert_int_equal(fail.fault, TRACE_FAULT_OTHER);
        assert_non_null(strstr(fail.msg, "GPUPROBE_TRACE_THREADS must be 1 or 2"));
        assert_non_null(strstr(fail.msg, bad[i]));
        assert_int_equal(access(f.output, F_OK), -1);
    }
    const char *const good[] = {"", "0", "1", "2"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        setenv("GPUPROBE_TRACE_THREADS", good[i], 1);
        assert_int_equal(trace_threads_env_check(why, sizeof why), 0);
        unsetenv("GPUPROBE_TRACE_THREADS");
        assert_int_equal(sort_with_threads(&f, "", good[i], &fail), 0);
    }
}

/* A successful sort replaces an OUTPUT that was there (swapped into place),
 * leaving no part file. */
static void test_replaces_output(void **state)
{
    struct tmp *t = *state;
    struct trace_outcome out;
    write_file(t->path, sample_csv);
    struct trace_files fresh = {.input = t->path, .output = tmp_path(t, "out.csv")};
    struct trace_files again = {.input = t->path, .output = tmp_path(t, "out2.csv")};
    sort_ok(&fresh, "sms=2", &out);
    write_file(again.output, "an older output, longer than the new one will be ..................\n"
                             "...................................................................\n"
                             "...................................................................\n");
    sort_ok(&again, "sms=2", &out);
    assert_same_file(fresh.output, again.output);
    assert_false(file_exists(tmp_path(t, "out2.csv.part")));
}

struct drain {
    const char *path;
    size_t bytes;
};

static void *drain_fifo(void *arg)
{
    struct drain *d = arg;
    int fd = open(d->path, O_RDONLY);
    char buf[4096];
    for (ssize_t n; fd >= 0 && (n = read(fd, buf, sizeof buf)) > 0;)
        d->bytes += (size_t)n;
    if (fd >= 0)
        close(fd);
    return NULL;
}

/* An OUTPUT that is not a regular file (here a FIFO, as /dev/null is a
 * device) is written into, not replaced by a renamed part file. */
static void test_output_device(void **state)
{
    struct tmp *t = *state;
    struct trace_outcome out;
    struct stat st;
    write_file(t->path, sample_csv);
    struct trace_files file = {.input = t->path, .output = tmp_path(t, "out.csv")};
    sort_ok(&file, "sms=2", &out);
    assert_int_equal(stat(file.output, &st), 0);
    struct drain d = {.path = tmp_path(t, "out.fifo")};
    assert_int_equal(mkfifo(d.path, 0600), 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, drain_fifo, &d), 0);
    struct trace_files fifo = {.input = t->path, .output = d.path};
    alarm(30); /* a sort that renames instead of writing leaves the reader waiting: fail, not hang */
    sort_ok(&fifo, "sms=2", &out);
    pthread_join(th, NULL);
    alarm(0);
    assert_int_equal(d.bytes, st.st_size);
    assert_int_equal(out.output_bytes, -1);
    struct stat fs;
    assert_int_equal(stat(d.path, &fs), 0);
    assert_true(S_ISFIFO(fs.st_mode));
    assert_false(file_exists(tmp_path(t, "out.fifo.part")));
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
        cmocka_unit_test_setup_teardown(test_large_sort_through_queue, setup, teardown),
        cmocka_unit_test_setup_teardown(test_csv_copy_on_two_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads_setting_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replaces_output, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_device, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
