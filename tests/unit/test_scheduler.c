/*
 * Unit tests of the pure scheduling decision, sched_may_start
 * (server/jobs/scheduler.c): a job that needs no GPU may start exactly while
 * fewer than cpu_workers CPU jobs run, whatever the GPUs are doing; a GPU
 * job may not start on a device that runs a job or that is blocked (an older
 * job for it still waits), may start on any other device, and does not care
 * how many CPU slots are taken. Devices are compared by their text, not by
 * pointer, so views built from separate copies of a UUID agree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "server/jobs/scheduler.h"

#define GPU_A "GPU-0a0a0a0a-0000-4000-8000-00000000000a"
#define GPU_B "GPU-0b0b0b0b-0000-4000-8000-00000000000b"
#define GPU_C "GPU-0c0c0c0c-0000-4000-8000-00000000000c"

static void test_cpu_slots(void **state)
{
    (void)state;
    struct sched_view v;
    memset(&v, 0, sizeof v);
    for (int workers = 0; workers <= 4; workers++) {
        for (int running = 0; running <= 6; running++) {
            v.cpu_workers = workers;
            v.cpu_running = running;
            if (sched_may_start(&v, NULL) != (running < workers))
                fail_msg("cpu_running %d of %d workers: got %d", running, workers,
                         sched_may_start(&v, NULL));
        }
    }
}

/* Busy or blocked GPUs do not take CPU slots. */
static void test_cpu_ignores_gpus(void **state)
{
    (void)state;
    const char *busy[] = {GPU_A, GPU_B};
    const char *blocked[] = {GPU_C};
    struct sched_view v = {.busy_devices = busy, .nbusy = 2, .cpu_running = 1, .cpu_workers = 2,
                           .blocked_devices = blocked, .nblocked = 1};
    assert_int_equal(sched_may_start(&v, NULL), 1);
    v.cpu_running = 2;
    assert_int_equal(sched_may_start(&v, NULL), 0);
}

static void test_gpu_busy(void **state)
{
    (void)state;
    const char *busy[] = {GPU_A};
    struct sched_view v = {.busy_devices = busy, .nbusy = 1, .cpu_workers = 2};
    assert_int_equal(sched_may_start(&v, GPU_A), 0);
    assert_int_equal(sched_may_start(&v, GPU_B), 1);
    assert_int_equal(sched_may_start(&v, GPU_C), 1);

    const char *two[] = {GPU_B, GPU_A};
    v.busy_devices = two;
    v.nbusy = 2;
    assert_int_equal(sched_may_start(&v, GPU_A), 0);
    assert_int_equal(sched_may_start(&v, GPU_B), 0);
    assert_int_equal(sched_may_start(&v, GPU_C), 1);

    /* only the first nbusy entries count */
    v.nbusy = 1;
    assert_int_equal(sched_may_start(&v, GPU_A), 1);
    assert_int_equal(sched_may_start(&v, GPU_B), 0);
}

static void test_gpu_blocked(void **state)
{
    (void)state;
    const char *blocked[] = {GPU_B};
    struct sched_view v = {.cpu_workers = 2, .blocked_devices = blocked, .nblocked = 1};
    assert_int_equal(sched_may_start(&v, GPU_B), 0);
    assert_int_equal(sched_may_start(&v, GPU_A), 1);

    const char *busy[] = {GPU_A};
    v.busy_devices = busy;
    v.nbusy = 1;
    assert_int_equal(sched_may_start(&v, GPU_A), 0);
    assert_int_equal(sched_may_start(&v, GPU_B), 0);
    assert_int_equal(sched_may_start(&v, GPU_C), 1);
}

/* A GPU job does not wait for CPU slots. */
static void test_gpu_ignores_cpu_slots(void **state)
{
    (void)state;
    struct sched_view v = {.cpu_running = 8, .cpu_workers = 2};
    assert_int_equal(sched_may_start(&v, GPU_A), 1);
    v.cpu_workers = 0;
    v.cpu_running = 0;
    assert_int_equal(sched_may_start(&v, GPU_A), 1);
    assert_int_equal(sched_may_start(&v, NULL), 0);
}

/* Devices are matched by content, exactly. */
static void test_gpu_compared_by_text(void **state)
{
    (void)state;
    char copy[64];
    strcpy(copy, GPU_A);
    const char *busy[] = {copy};
    struct sched_view v = {.busy_devices = busy, .nbusy = 1, .cpu_workers = 1};
    assert_int_equal(sched_may_start(&v, GPU_A), 0);
    char prefix[64];
    strcpy(prefix, GPU_A);
    prefix[strlen(prefix) - 1] = '\0';
    assert_int_equal(sched_may_start(&v, prefix), 1);
    char longer[72];
    strcpy(longer, GPU_A);
    strcat(longer, "0");
    assert_int_equal(sched_may_start(&v, longer), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_slots),
        cmocka_unit_test(test_cpu_ignores_gpus),
        cmocka_unit_test(test_gpu_busy),
        cmocka_unit_test(test_gpu_blocked),
        cmocka_unit_test(test_gpu_ignores_cpu_slots),
        cmocka_unit_test(test_gpu_compared_by_text),
    };
    return cmocka_run_group_tests_name("scheduler", tests, NULL, NULL);
}
