/*
 * Unit tests of util/textfile.c's writer: a text file appears whole, and a
 * device or FIFO named as the output is written in place, never replaced
 * by a regular file (`trace capture --emit-ptx /dev/null`).
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

#include "util/textfile.h"

static char dir[] = "/tmp/gpuprobe-textfile-XXXXXX";

static void test_file_written_whole(void **state)
{
    (void)state;
    char path[256], err[512];
    snprintf(path, sizeof path, "%s/out.ptx", dir);
    assert_int_equal(text_file_write(path, "first\n", 6, err, sizeof err), 0);
    assert_int_equal(text_file_write(path, "second\n", 7, err, sizeof err), 0);
    char *text = text_file_read(path, 64, err, sizeof err);
    assert_non_null(text);
    assert_string_equal(text, "second\n");
    free(text);
    unlink(path);
}

/* A FIFO stands for any file that is not a regular one: the text goes to
 * its reader and the FIFO stays a FIFO. */
static void test_fifo_written_in_place(void **state)
{
    (void)state;
    char path[256], err[512], buf[16] = "";
    struct stat st;
    snprintf(path, sizeof path, "%s/fifo", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    int rd = open(path, O_RDONLY | O_NONBLOCK); /* a reader, so the writer's open does not block */
    assert_true(rd >= 0);
    assert_int_equal(text_file_write(path, "ptx", 3, err, sizeof err), 0);
    assert_int_equal(read(rd, buf, sizeof buf - 1), 3);
    assert_string_equal(buf, "ptx");
    close(rd);
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    char part[300];
    snprintf(part, sizeof part, "%s.part", path);
    assert_int_equal(access(part, F_OK), -1);
    unlink(path);
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
        cmocka_unit_test(test_file_written_whole),
        cmocka_unit_test(test_fifo_written_in_place),
    };
    return cmocka_run_group_tests_name("textfile", tests, setup, teardown);
}
