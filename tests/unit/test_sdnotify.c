/*
 * Unit tests of util/sdnotify.c: the datagram sent to a socket bound here
 * as $NOTIFY_SOCKET (a path and the abstract namespace), nothing sent and
 * success without the variable, a malformed variable refused, the
 * watchdog's interval read only for this process, and pets sent once per
 * half interval.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "tests/unit/support/tmpfile.h"
#include "util/sdnotify.h"

static int setup(void **state)
{
    return tmp_setup(state, "sdnotify", "notify.sock");
}

static int teardown(void **state)
{
    unsetenv("NOTIFY_SOCKET");
    unsetenv("WATCHDOG_USEC");
    unsetenv("WATCHDOG_PID");
    return tmp_teardown(state);
}

/* A datagram socket bound at name ('@' first: abstract), non-blocking. */
static int bind_notify(const char *name)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t len = strlen(name);
    memcpy(sa.sun_path, name, len);
    if (name[0] == '@')
        sa.sun_path[0] = '\0';
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    socklen_t salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (name[0] != '@'));
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, salen), 0);
    return fd;
}

/* The next datagram on fd, NUL-terminated in buf; "" when none waits. */
static const char *next_datagram(int fd, char *buf, size_t len)
{
    ssize_t n = recv(fd, buf, len - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static void test_sends_to_a_path(void **state)
{
    struct tmp *t = *state;
    char buf[128];
    int fd = bind_notify(t->path);
    setenv("NOTIFY_SOCKET", t->path, 1);
    assert_int_equal(sdnotify_send("READY=1\nSTATUS=serving"), 0);
    assert_string_equal(next_datagram(fd, buf, sizeof buf), "READY=1\nSTATUS=serving");
    assert_int_equal(sdnotify_send("STOPPING=1"), 0);
    assert_string_equal(next_datagram(fd, buf, sizeof buf), "STOPPING=1");
    assert_string_equal(next_datagram(fd, buf, sizeof buf), "");
    close(fd);
    unlink(t->path);
}

static void test_sends_to_the_abstract_namespace(void **state)
{
    (void)state;
    char name[64], buf[64];
    snprintf(name, sizeof name, "@gpuprobe-test-sdnotify-%d", (int)getpid());
    int fd = bind_notify(name);
    setenv("NOTIFY_SOCKET", name, 1);
    assert_int_equal(sdnotify_send("READY=1"), 0);
    assert_string_equal(next_datagram(fd, buf, sizeof buf), "READY=1");
    close(fd);
}

static void test_without_the_variable_nothing_is_sent(void **state)
{
    struct tmp *t = *state;
    char buf[64];
    int fd = bind_notify(t->path);
    unsetenv("NOTIFY_SOCKET");
    assert_int_equal(sdnotify_send("READY=1"), 0);
    assert_string_equal(next_datagram(fd, buf, sizeof buf), "");
    close(fd);
    unlink(t->path);
}

static void test_bad_variable_or_absent_socket_fails(void **state)
{
    struct tmp *t = *state;
    setenv("NOTIFY_SOCKET", "relative/path", 1);
    errno = 0;
    assert_int_equal(sdnotify_send("READY=1"), -1);
    assert_int_equal(errno, EINVAL);
    setenv("NOTIFY_SOCKET", t->path, 1); /* nothing bound there */
    assert_int_equal(sdnotify_send("READY=1"), -1);
}

static void test_watchdog_interval_is_for_this_process(void **state)
{
    (void)state;
    char pid[32];
    assert_int_equal(sdnotify_watchdog_usec(), 0);
    setenv("WATCHDOG_USEC", "30000000", 1);
    assert_int_equal(sdnotify_watchdog_usec(), 30000000);
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    setenv("WATCHDOG_PID", pid, 1);
    assert_int_equal(sdnotify_watchdog_usec(), 30000000);
    snprintf(pid, sizeof pid, "%d", (int)getpid() + 1);
    setenv("WATCHDOG_PID", pid, 1);
    assert_int_equal(sdnotify_watchdog_usec(), 0);
    unsetenv("WATCHDOG_PID");
    setenv("WATCHDOG_USEC", "soon", 1);
    assert_int_equal(sdnotify_watchdog_usec(), 0);
}

static void test_pets_once_per_half_interval(void **state)
{
    struct tmp *t = *state;
    char buf[64];
    int fd = bind_notify(t->path);
    setenv("NOTIFY_SOCKET", t->path, 1);
    unsetenv("WATCHDOG_USEC");
    assert_int_equal(sdnotify_watchdog_pet(1000), 0); /* no watchdog: nothing */
    assert_string_equal(next_datagram(fd, buf, sizeof buf), "");
    setenv("WATCHDOG_USEC", "2000000", 1); /* 2 s: a pet per second at most */
    assert_int_equal(sdnotify_watchdog_pet(1000), 1);
    assert_string_equal(next_datagram(fd, buf, sizeof buf), "WATCHDOG=1");
    assert_int_equal(sdnotify_watchdog_pet(1500), 0);
    assert_int_equal(sdnotify_watchdog_pet(1999), 0);
    assert_string_equal(next_datagram(fd, buf, sizeof buf), "");
    assert_int_equal(sdnotify_watchdog_pet(2000), 1);
    assert_string_equal(next_datagram(fd, buf, sizeof buf), "WATCHDOG=1");
    close(fd);
    unlink(t->path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sends_to_a_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sends_to_the_abstract_namespace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_without_the_variable_nothing_is_sent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_variable_or_absent_socket_fails, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watchdog_interval_is_for_this_process, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pets_once_per_half_interval, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
