/*
 * Unit tests of the store under injected faults (db/fault_vfs.h): every
 * write, then every sync, of a job's life made to fail in turn; the write
 * health and its probe; the failure's class (the disk's, or the content's);
 * and an operator's stop that gives the attempt back (store_job_stopped).
 *
 * DESIGN
 * The shim VFS is installed once, before any store opens, and stays the
 * default for the whole program (as in the daemon); each test arms it for
 * the stretch it aims at and disarms it after. The loop over a job's life
 * runs N = 1, 2, ... until a pass meets no fault, so it covers every write
 * the code does, however many that is. After each pass the job must be
 * where the failed step left it (the step is all or nothing), the same step
 * must succeed once the fault is gone, and integrity_check must be ok.
 * Each test has its own database in a fresh directory (removed with
 * whatever SQLite left in it).
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "db/fault_vfs.h"
#include "db/store.h"
#include "tests/unit/support/storetest.h"

static char err[512];

#define OK STORE_OK

static int setup(void **state)
{
    fault_vfs_disarm();
    return store_fixture_setup(state, "faults");
}

static int teardown(void **state)
{
    fault_vfs_disarm();
    return store_fixture_teardown(state);
}

/* The file whose existence means "the disk is full". */
static const char *hold_path(const struct store_fixture *fx)
{
    static char p[160];
    snprintf(p, sizeof p, "%s/disk-full", fx->dir);
    return p;
}

static enum job_state state_of(store *s, int64_t id)
{
    struct job_row j;
    OK(store_job_get(s, id, &j, err, sizeof err));
    enum job_state st = j.state;
    job_row_free(&j);
    return st;
}

/* ---- the spec -------------------------------------------------------------- */

static void test_parse(void **state)
{
    (void)state;
    enum fault_op op;
    long n;
    char hold[64];
    assert_int_equal(fault_vfs_parse("write:3", &op, &n, hold, sizeof hold, err, sizeof err), 0);
    assert_int_equal(op, FAULT_WRITE);
    assert_int_equal(n, 3);
    assert_string_equal(hold, "");
    assert_int_equal(fault_vfs_parse("sync:12:/tmp/x", &op, &n, hold, sizeof hold, err,
                                     sizeof err), 0);
    assert_int_equal(op, FAULT_SYNC);
    assert_int_equal(n, 12);
    assert_string_equal(hold, "/tmp/x");
    const char *bad[] = {"", "read:1", "write:", "write:0", "write:-2", "write:2x", "sync"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(fault_vfs_parse(bad[i], &op, &n, hold, sizeof hold, err, sizeof err),
                         -1);
}

/* ---- a job's life, every write failing in turn ------------------------------- */

/* One step of a job's life: 0 done, -1 failed (the store's answer). */
static int step(store *s, int i, int64_t *id)
{
    switch (i) {
    case 0:
        return store_job_insert(s, "test", NULL, "{\"n\":1}", 60, 3, id, err, sizeof err);
    case 1:
        return store_job_start(s, *id, err, sizeof err);
    case 2:
        return store_job_succeed(s, *id, "{\"answer\":42}", NULL, err, sizeof err);
    default:
        return 0;
    }
}

static const enum job_state after_step[] = {JOB_QUEUED, JOB_RUNNING, JOB_SUCCEEDED};

/* Runs the life with op's nth call failing once; 1 if the fault was met. */
static int life_with_fault(struct store_fixture *fx, enum fault_op op, long n)
{
    int64_t id = 0;
    fault_vfs_arm(op, n, NULL);
    for (int i = 0; i < 3; i++) {
        long before = fault_vfs_injected();
        int rc = step(fx->s, i, &id);
        if (fault_vfs_injected() == before) {
            if (rc != 0)
                fail_msg("step %d failed without a fault: %s", i, err);
            continue;
        }
        /* the fault was met in this step: all or nothing, the disk's fault */
        if (rc == 0) { /* a fault the commit survived (a checkpoint's): fine if it stuck */
            assert_int_equal(state_of(fx->s, id), after_step[i]);
            continue;
        }
        assert_int_equal(rc, -1);
        assert_int_equal(store_write_failed_io(), 1);
        char why[256];
        assert_int_equal(store_write_health(fx->s, why, sizeof why, NULL), -1);
        assert_true(strlen(why) > 0);
        if (i > 0)
            assert_int_equal(state_of(fx->s, id), after_step[i - 1]);
        fault_vfs_disarm();
        OK(step(fx->s, i, &id)); /* the same step succeeds once the fault is gone */
        assert_int_equal(store_write_failed_io(), 0);
        assert_int_equal(store_write_health(fx->s, NULL, 0, NULL), 0);
    }
    fault_vfs_disarm();
    assert_int_equal(state_of(fx->s, id), JOB_SUCCEEDED);
    OK(store_integrity_check(fx->s, err, sizeof err));
    return fault_vfs_injected() > 0;
}

static void loop_over(struct store_fixture *fx, enum fault_op op)
{
    long n = 1;
    while (life_with_fault(fx, op, n))
        n++;
    assert_true(n > 2); /* a life writes more than once */
}

static void test_every_write_fails_in_turn(void **state) { loop_over(*state, FAULT_WRITE); }
static void test_every_sync_fails_in_turn(void **state) { loop_over(*state, FAULT_SYNC); }

/* ---- health, probe, classes ------------------------------------------------- */

static void touch(const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
}

static void test_full_until_space_returns(void **state)
{
    struct store_fixture *fx = *state;
    int64_t id = 0;
    touch(hold_path(fx));
    fault_vfs_arm(FAULT_WRITE, 1, hold_path(fx));
    assert_int_equal(store_job_insert(fx->s, "test", NULL, NULL, 60, 3, &id, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "full"));
    assert_int_equal(store_write_failed_io(), 1);
    int64_t since = 0;
    assert_int_equal(store_write_health(fx->s, NULL, 0, &since), -1);
    assert_true(since > 0);
    for (int i = 0; i < 3; i++) /* still full: every write fails */
        assert_int_equal(store_write_probe(fx->s, err, sizeof err), -1);
    assert_int_equal(store_write_health(fx->s, NULL, 0, NULL), -1);
    unlink(hold_path(fx)); /* space returns */
    OK(store_write_probe(fx->s, err, sizeof err));
    assert_int_equal(store_write_health(fx->s, NULL, 0, NULL), 0);
    OK(store_job_insert(fx->s, "test", NULL, NULL, 60, 3, &id, err, sizeof err));
    OK(store_integrity_check(fx->s, err, sizeof err));
}

static int refuse(struct store_tx *tx, int64_t job_id, const json_t *result, char *e,
                  size_t elen)
{
    (void)tx, (void)job_id, (void)result;
    snprintf(e, elen, "refused by the saver");
    return -1;
}

/* A result the saver refuses is the content's fault: not the disk's, the
 * store stays healthy, and a retry would not help. */
static void test_content_failure_is_not_io(void **state)
{
    struct store_fixture *fx = *state;
    int64_t id = 0;
    OK(store_job_insert(fx->s, "test", NULL, NULL, 60, 3, &id, err, sizeof err));
    OK(store_job_start(fx->s, id, err, sizeof err));
    assert_int_equal(store_job_succeed(fx->s, id, "{}", refuse, err, sizeof err), -1);
    assert_int_equal(store_write_failed_io(), 0);
    assert_int_equal(store_write_health(fx->s, NULL, 0, NULL), 0);
    assert_int_equal(state_of(fx->s, id), JOB_RUNNING);
}

/* ---- an operator's stop ---------------------------------------------------- */

static void test_stopped_gives_the_attempt_back(void **state)
{
    struct store_fixture *fx = *state;
    int64_t id = 0;
    OK(store_job_insert(fx->s, "test", NULL, NULL, 60, 1, &id, err, sizeof err));
    for (int i = 0; i < 4; i++) { /* more stops than max_attempts: still queued */
        OK(store_job_start(fx->s, id, err, sizeof err));
        OK(store_job_stopped(fx->s, id, "daemon stopped", err, sizeof err));
        struct job_row j;
        OK(store_job_get(fx->s, id, &j, err, sizeof err));
        assert_int_equal(j.state, JOB_QUEUED);
        assert_int_equal(j.attempt, 0);
        job_row_free(&j);
    }
    OK(store_job_start(fx->s, id, err, sizeof err));
    OK(store_job_succeed(fx->s, id, "{}", NULL, err, sizeof err));
    assert_int_equal(store_job_stopped(fx->s, id, NULL, err, sizeof err), 1); /* not running */
    /* a cancellation requested before the stop wins */
    OK(store_job_insert(fx->s, "test", NULL, NULL, 60, 3, &id, err, sizeof err));
    OK(store_job_start(fx->s, id, err, sizeof err));
    enum job_state st;
    OK(store_job_cancel(fx->s, id, &st, err, sizeof err));
    OK(store_job_stopped(fx->s, id, "daemon stopped", err, sizeof err));
    assert_int_equal(state_of(fx->s, id), JOB_CANCELLED);
}

static void test_durability_switch(void **state)
{
    struct store_fixture *fx = *state;
    int64_t id = 0;
    fault_vfs_arm(FAULT_SYNC, 1000000, NULL); /* counting only */
    OK(store_job_insert(fx->s, "test", NULL, NULL, 60, 3, &id, err, sizeof err));
    long durable = fault_vfs_count(FAULT_SYNC);
    assert_true(durable >= 1); /* a durable commit syncs the WAL */
    OK(store_set_durability(fx->s, STORE_FAST));
    fault_vfs_arm(FAULT_SYNC, 1000000, NULL);
    OK(store_job_insert(fx->s, "test", NULL, NULL, 60, 3, &id, err, sizeof err));
    assert_int_equal(fault_vfs_count(FAULT_SYNC), 0); /* NORMAL: no sync at commit */
    OK(store_set_durability(fx->s, STORE_DURABLE));
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    if (fault_vfs_install(err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        T(test_every_write_fails_in_turn),
        T(test_every_sync_fails_in_turn),
        T(test_full_until_space_returns),
        T(test_content_failure_is_not_io),
        T(test_stopped_gives_the_attempt_back),
        T(test_durability_switch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
