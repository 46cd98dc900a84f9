/*
 * Unit tests of util/fdio.c: whole writes at the file offset (which
 * advances) and at a given offset (which leaves it alone), whole reads at a
 * given offset, a read that meets the end of the file first, and a failing
 * descriptor reported with errno.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/support/tmpfile.h"
#include "util/fdio.h"

static int setup(void **state)
{
    return tmp_setup(state, "fdio", "f.bin");
}

static void test_write_then_read(void **state)
{
    struct tmp *t = *state;
    int fd = open(t->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(fd_write_all(fd, "hello ", 6, FD_CURRENT), 0);
    assert_int_equal(fd_write_all(fd, "world", 5, FD_CURRENT), 0);
    assert_int_equal(lseek(fd, 0, SEEK_CUR), 11);
    assert_int_equal(fd_write_all(fd, "W", 1, 6), 0); /* at an offset: the file offset stays */
    assert_int_equal(lseek(fd, 0, SEEK_CUR), 11);
    assert_int_equal(fd_write_all(fd, "", 0, FD_CURRENT), 0);

    char b[16] = {0};
    assert_int_equal(fd_read_all(fd, b, 5, 6), 0);
    assert_string_equal(b, "World");
    assert_int_equal(lseek(fd, 0, SEEK_CUR), 11);
    assert_int_equal(fd_read_all(fd, b, 6, 6), 1); /* one byte past the end */
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    memset(b, 0, sizeof b);
    assert_int_equal(fd_read_all(fd, b, 11, FD_CURRENT), 0);
    assert_string_equal(b, "hello World");
    assert_int_equal(fd_read_all(fd, b, 1, FD_CURRENT), 1);
    close(fd);
}

static void test_bad_descriptor(void **state)
{
    (void)state;
    char b[4];
    errno = 0;
    assert_int_equal(fd_write_all(-1, "x", 1, FD_CURRENT), -1);
    assert_int_equal(errno, EBADF);
    errno = 0;
    assert_int_equal(fd_read_all(-1, b, 1, 0), -1);
    assert_int_equal(errno, EBADF);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_write_then_read, setup, tmp_teardown),
        cmocka_unit_test(test_bad_descriptor),
    };
    return cmocka_run_group_tests_name("trace_fdio", tests, NULL, NULL);
}
