/*
 * Unit tests of util/cores.c: the runnable count read from /proc/loadavg's
 * text, text that is not that refused, and the idle cores counting a
 * thread that became runnable a moment ago (which a load average, an
 * average over a minute, would not yet show).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "util/cores.h"

static void test_parse(void **state)
{
    (void)state;
    long n = 0;
    assert_int_equal(cores_parse_loadavg("0.52 0.31 0.20 3/412 9876\n", &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(cores_parse_loadavg("12.00 11.50 9.75 17/2048 1", &n), 0);
    assert_int_equal(n, 17);
}

static void test_parse_refuses(void **state)
{
    (void)state;
    long n = 42;
    const char *bad[] = {"", "0.52 0.31 0.20", "0.52 0.31 0.20 ", "0.52 0.31 0.20 x/412 1",
                         "0.52 0.31 0.20 3 1", "0.52 0.31 0.20 3/ 1", "0.52 0.31 0.20 0/412 1",
                         "0.52 0.31 0.20 -3/412 1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(cores_parse_loadavg(bad[i], &n), -1);
        assert_int_equal(n, 42);
    }
}

static atomic_int spin_stop;

static void *spin(void *arg)
{
    (void)arg;
    while (!atomic_load(&spin_stop))
        ;
    return NULL;
}

/* The caller counts as busy; so does a thread that started spinning just
 * now. */
static void test_idle_counts_runnable_now(void **state)
{
    (void)state;
    double cpus = (double)sysconf(_SC_NPROCESSORS_ONLN);
    assert_true(cores_idle() <= cpus - 1);
    pthread_t t;
    atomic_store(&spin_stop, 0);
    assert_int_equal(pthread_create(&t, NULL, spin, NULL), 0);
    usleep(20000); /* started and running */
    double idle = cores_idle();
    atomic_store(&spin_stop, 1);
    pthread_join(t, NULL);
    assert_true(idle <= cpus - 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_parse_refuses),
        cmocka_unit_test(test_idle_counts_runnable_now),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
