/*
 * Unit tests of util/outfile.c: a new file and a replaced one appear whole
 * at commit and not before, a failure leaves nothing, and a device
 * (/dev/null) is written in place, never replaced by a regular file; a
 * link planted as the part file is never written through.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/outfile.h"

static char dir[] = "/tmp/gpuprobe-outfile-XXXXXX";

static void path_in_dir(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
}

static void write_all(int fd, const char *text)
{
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
}

static void assert_content(const char *path, const char *text)
{
    char buf[64] = "";
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    assert_string_equal(buf, text);
}

static void test_new_then_replaced(void **state)
{
    (void)state;
    char path[256], part[300], err[512];
    struct outfile o;
    path_in_dir(path, sizeof path, "out.bin");
    snprintf(part, sizeof part, "%s.part", path);
    int fd = outfile_open(&o, path, err, sizeof err);
    assert_true(fd >= 0);
    write_all(fd, "first");
    close(fd);
    assert_int_equal(access(path, F_OK), -1); /* nothing at OUT before the commit */
    assert_int_equal(outfile_commit(&o, err, sizeof err), 0);
    assert_content(path, "first");
    assert_int_equal(access(part, F_OK), -1);
    assert_true(outfile_bytes(&o) == 5);
    /* an existing file is swapped out whole */
    fd = outfile_open(&o, path, err, sizeof err);
    write_all(fd, "second!");
    close(fd);
    assert_content(path, "first");
    assert_int_equal(outfile_commit(&o, err, sizeof err), 0);
    assert_content(path, "second!");
    assert_int_equal(access(part, F_OK), -1);
    unlink(path);
}

static void test_discard(void **state)
{
    (void)state;
    char path[256], part[300], err[512];
    struct outfile o;
    path_in_dir(path, sizeof path, "failed.bin");
    snprintf(part, sizeof part, "%s.part", path);
    int fd = outfile_open(&o, path, err, sizeof err);
    write_all(fd, "half");
    close(fd);
    outfile_discard(&o);
    assert_int_equal(access(part, F_OK), -1);
    assert_int_equal(access(path, F_OK), -1);
    /* a failure after the commit (a later step of the run) removes OUT too */
    fd = outfile_open(&o, path, err, sizeof err);
    close(fd);
    assert_int_equal(outfile_commit(&o, err, sizeof err), 0);
    outfile_discard(&o);
    assert_int_equal(access(path, F_OK), -1);
}

static void test_device_written_in_place(void **state)
{
    (void)state;
    char err[512];
    struct outfile o;
    int fd = outfile_open(&o, "/dev/null", err, sizeof err);
    assert_true(fd >= 0);
    assert_true(o.direct);
    write_all(fd, "gone");
    close(fd);
    assert_int_equal(outfile_commit(&o, err, sizeof err), 0);
    outfile_discard(&o);
    struct stat st;
    assert_int_equal(stat("/dev/null", &st), 0);
    assert_true(S_ISCHR(st.st_mode)); /* still the device */
    assert_true(outfile_bytes(&o) == -1);
    assert_string_equal(outfile_name(&o), "/dev/null");
}

static void test_missing_folder(void **state)
{
    (void)state;
    char path[256], err[512];
    struct outfile o;
    path_in_dir(path, sizeof path, "no/such/folder/out.bin");
    assert_int_equal(outfile_open(&o, path, err, sizeof err), -1);
    assert_non_null(strstr(err, "out.bin.part"));
}

/* A link planted as OUT.part (a shared directory) is replaced, not
 * written through; a part file left by a killed run is started afresh. */
static void test_planted_part(void **state)
{
    (void)state;
    char path[256], part[300], victim[256], err[512];
    struct outfile o;
    struct stat st;
    path_in_dir(path, sizeof path, "out.bin");
    path_in_dir(victim, sizeof victim, "victim");
    snprintf(part, sizeof part, "%s.part", path);
    FILE *f = fopen(victim, "w");
    assert_non_null(f);
    fputs("precious", f);
    fclose(f);
    assert_int_equal(symlink(victim, part), 0);
    int fd = outfile_open(&o, path, err, sizeof err);
    assert_true(fd >= 0);
    write_all(fd, "new");
    close(fd);
    assert_int_equal(outfile_commit(&o, err, sizeof err), 0);
    assert_content(victim, "precious");
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_content(path, "new");
    f = fopen(part, "w"); /* a killed run's part file, longer than what comes */
    assert_non_null(f);
    fputs("stale and longer", f);
    fclose(f);
    fd = outfile_open(&o, path, err, sizeof err);
    assert_true(fd >= 0);
    write_all(fd, "x");
    close(fd);
    assert_int_equal(outfile_commit(&o, err, sizeof err), 0);
    assert_content(path, "x");
    unlink(path);
    unlink(victim);
}

static void test_empty_path(void **state)
{
    (void)state;
    char err[512];
    struct outfile o;
    assert_int_equal(outfile_open(&o, "", err, sizeof err), -1);
    assert_non_null(strstr(err, "empty"));
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_then_replaced),
        cmocka_unit_test(test_discard),
        cmocka_unit_test(test_device_written_in_place),
        cmocka_unit_test(test_missing_folder),
        cmocka_unit_test(test_planted_part),
        cmocka_unit_test(test_empty_path),
    };
    return cmocka_run_group_tests_name("outfile", tests, setup, teardown);
}
