/*
 * The scheduler's per-GPU slots on an 8-GPU node, through its public
 * decision sched_may_start (server/jobs/scheduler.h) alone.
 *
 * DESIGN
 * test_scheduler.c checks the rule on two or three devices; here every one
 * of the 2^8 x 2^8 combinations of busy and blocked GPUs of a fake 8-GPU
 * node is tried, so a decision that leaks from one GPU to another (a slot
 * shared by index, a count instead of a set, the first GPU's state read for
 * all) fails: a GPU job may start exactly on the GPUs that are neither busy
 * nor blocked, and CPU jobs never see the GPUs. Then a node's queue is
 * replayed with a small stepper over sched_may_start (one job per GPU
 * taken from a FIFO queue at each step, as the scheduler does): all 8 GPUs
 * start at once, and a GPU's second job only after its first has ended.
 * The real scheduler's processes and times are proven over HTTP by
 * tests/integration/t_multigpu.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "server/jobs/scheduler.h"

#define NGPU 8

static char uuids[NGPU][48];

static int setup(void **state)
{
    (void)state;
    for (int i = 0; i < NGPU; i++)
        snprintf(uuids[i], sizeof uuids[i], "GPU-%08x-0000-4000-8000-%012x", 0xa0 + i, i);
    return 0;
}

/* The devices whose bit is set in mask, as a list; returns the count. */
static size_t pick(unsigned mask, const char **list)
{
    size_t n = 0;
    for (int i = 0; i < NGPU; i++)
        if (mask & (1u << i))
            list[n++] = uuids[i];
    return n;
}

static void test_every_busy_and_blocked_set(void **state)
{
    (void)state;
    const char *busy[NGPU], *blocked[NGPU];
    for (unsigned b = 0; b < (1u << NGPU); b++)
        for (unsigned q = 0; q < (1u << NGPU); q++) {
            struct sched_view v = {.busy_devices = busy, .nbusy = pick(b, busy),
                                   .blocked_devices = blocked, .nblocked = pick(q, blocked),
                                   .cpu_running = 0, .cpu_workers = 1};
            for (int i = 0; i < NGPU; i++) {
                int want = !((b | q) & (1u << i));
                if (sched_may_start(&v, uuids[i]) != want)
                    fail_msg("busy %02x blocked %02x: GPU %d gave %d", b, q, i, !want);
            }
            if (sched_may_start(&v, NULL) != 1)
                fail_msg("busy %02x blocked %02x: a CPU job was held back", b, q);
        }
}

/* A copy of a UUID, not the same pointer, is the same GPU. */
static void test_devices_by_text(void **state)
{
    (void)state;
    char copy[48];
    const char *busy[NGPU];
    struct sched_view v = {.busy_devices = busy, .nbusy = pick(0xffu, busy)};
    for (int i = 0; i < NGPU; i++) {
        memcpy(copy, uuids[i], sizeof copy);
        assert_int_equal(sched_may_start(&v, copy), 0);
    }
}

struct qjob {
    int gpu;
    int length;    /* steps it runs */
    int start;     /* the step it started at; -1 while queued */
};

/* Steps the queue: each step ends the jobs whose time is up, then walks the
 * queue oldest first and starts each job that sched_may_start allows,
 * marking a GPU blocked once one of its jobs is passed over (FIFO per GPU). */
static void replay(struct qjob *q, size_t n)
{
    for (int step = 0, left = (int)n; left > 0; step++) {
        assert_true(step < 1000);
        const char *busy[3 * NGPU], *blocked[3 * NGPU]; /* room for every job of q */
        assert_true(n <= 3 * NGPU);
        struct sched_view v = {.busy_devices = busy, .blocked_devices = blocked};
        for (size_t j = 0; j < n; j++)
            if (q[j].start >= 0 && step < q[j].start + q[j].length)
                busy[v.nbusy++] = uuids[q[j].gpu];
        for (size_t j = 0; j < n; j++) {
            if (q[j].start >= 0)
                continue;
            if (sched_may_start(&v, uuids[q[j].gpu])) {
                q[j].start = step;
                busy[v.nbusy++] = uuids[q[j].gpu];
                left--;
            } else
                blocked[v.nblocked++] = uuids[q[j].gpu];
        }
    }
}

static void test_a_node_queue(void **state)
{
    (void)state;
    struct qjob q[3 * NGPU];
    size_t n = 0;
    /* three rounds of one job per GPU, GPU i's jobs i+1 steps long */
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < NGPU; i++)
            q[n++] = (struct qjob){.gpu = i, .length = i + 1, .start = -1};
    replay(q, n);
    for (int i = 0; i < NGPU; i++) {
        /* every GPU's first job at once; each next one as the last ends */
        assert_int_equal(q[i].start, 0);
        assert_int_equal(q[NGPU + i].start, i + 1);
        assert_int_equal(q[2 * NGPU + i].start, 2 * (i + 1));
    }
    /* no two jobs of one GPU overlap; jobs of different GPUs do */
    for (size_t a = 0; a < n; a++)
        for (size_t b = a + 1; b < n; b++) {
            int meet = q[a].start < q[b].start + q[b].length &&
                       q[b].start < q[a].start + q[a].length;
            if (q[a].gpu == q[b].gpu && meet)
                fail_msg("GPU %d: jobs %zu and %zu overlap", q[a].gpu, a, b);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_busy_and_blocked_set),
        cmocka_unit_test(test_devices_by_text),
        cmocka_unit_test(test_a_node_queue),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
