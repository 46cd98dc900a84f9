/*
 * Unit tests of the store's contracts (db/): the preconditions its functions
 * assert, and the line between a programming error (an abort) and input
 * that reaches the store at run time (an error return).
 *
 * DESIGN
 * Each broken contract is a call made in a forked child (death.h's
 * dies_by_assert), which must die by SIGABRT. The child opens its own store
 * on the fixture's database file, because a SQLite connection must not be
 * used across fork(); the parent's store stays untouched, and the teardown
 * removes the file and whatever WAL files the aborted child left. The
 * transaction's lifetime is an internal contract (store_tx is opaque
 * outside db/), so this test, as the store's own, reaches into
 * db/store_internal.h for it. The other half of each contract is shown on
 * the parent's store: the same kind of value, when a client can send it,
 * is answered with 1 or -1 and a reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/results.h"
#include "db/store.h"
#include "db/store_internal.h"
#include "tests/unit/support/death.h"
#include "tests/unit/support/resultdb.h"

/* A store of its own in the child, on the fixture's file; _exits when it
 * cannot be opened (which the parent reads as "did not abort"). */
static store *child_store(void *arg)
{
    const struct rdb *f = arg;
    char err[256];
    store *s = NULL;
    if (store_open(&s, f->t->path, err, sizeof err) != 0)
        _exit(3);
    return s;
}

/* A job of the child's store, started (so it may succeed or fail). */
static int64_t child_running_job(store *s)
{
    char err[256];
    int64_t id = 0;
    if (store_job_insert(s, "k", NULL, "{}", 60, 1, &id, err, sizeof err) != 0 ||
        store_job_start(s, id, err, sizeof err) != 0)
        _exit(3);
    return id;
}

/* ---- the job state machine ------------------------------------------------------- */

static void start_job_zero(void *arg)
{
    char err[256];
    store_job_start(child_store(arg), 0, err, sizeof err);
}

static void fail_job_negative(void *arg)
{
    char err[256];
    store_job_fail(child_store(arg), -1, "reason", NULL, err, sizeof err);
}

static void succeed_without_result(void *arg)
{
    char err[256];
    store *s = child_store(arg);
    store_job_succeed(s, child_running_job(s), NULL, NULL, err, sizeof err);
}

static void name_of_unknown_state(void *arg)
{
    (void)arg;
    printf("%s\n", job_state_name((enum job_state)JOB_STATE_COUNT));
}

static void terminal_of_negative_state(void *arg)
{
    (void)arg;
    printf("%d\n", job_state_is_terminal((enum job_state)-1));
}

static void counts_into_null(void *arg)
{
    char err[256];
    store_job_counts(child_store(arg), NULL, err, sizeof err);
}

static void test_job_contracts(void **state)
{
    struct rdb *f = *state;
    assert_true(dies_by_assert(start_job_zero, f));
    assert_true(dies_by_assert(fail_job_negative, f));
    assert_true(dies_by_assert(succeed_without_result, f));
    assert_true(dies_by_assert(name_of_unknown_state, f));
    assert_true(dies_by_assert(terminal_of_negative_state, f));
    assert_true(dies_by_assert(counts_into_null, f));
}

/* A job id from a client is input: an unknown one is "no such job" (1). */
static void test_client_job_ids_are_answered(void **state)
{
    struct rdb *f = *state;
    struct job_row j;
    struct job_event *ev;
    size_t n = 9;
    enum job_state st;
    char err[256];
    assert_int_equal(store_job_get(f->s, 0, &j, err, sizeof err), 1);
    assert_int_equal(store_job_get(f->s, -7, &j, err, sizeof err), 1);
    assert_int_equal(store_job_cancel(f->s, -7, &st, err, sizeof err), 1);
    assert_int_equal(store_job_events(f->s, 0, &ev, &n, err, sizeof err), 0);
    assert_int_equal(n, 0);
    json_t *out = NULL;
    assert_int_equal(store_probe_result(f->s, "GPU-x", "latency", -1, &out, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "not valid"));
    assert_int_equal(store_probe_result(f->s, "GPU-x", "nonesuch", 0, &out, err, sizeof err),
                     -1);
    assert_null(out);
}

/* ---- savers -------------------------------------------------------------------------- */

static const char latency_doc[] =
    "{\"probe\":\"latency\",\"device\":{\"uuid\":\"GPU-c\",\"name\":\"n\","
    "\"compute_capability\":\"9.0\"},\"driver_version\":\"1\",\"clock_mhz\":{\"before\":1,"
    "\"after\":1},\"repeats\":1,\"wall_s\":1,\"entries\":[]}";

/* A saver that hands the latency saver its transaction but no job. */
static int saver_without_job(struct store_tx *tx, int64_t job_id, const json_t *result,
                             char *err, size_t errlen)
{
    (void)job_id;
    return results_latency_save(tx, 0, result, err, errlen);
}

static void save_without_job(void *arg)
{
    char err[256];
    store *s = child_store(arg);
    store_job_succeed(s, child_running_job(s), latency_doc, saver_without_job, err, sizeof err);
}

static void save_without_transaction(void *arg)
{
    char err[256];
    (void)arg;
    json_t *doc = json_loads(latency_doc, 0, NULL);
    results_latency_save(NULL, 1, doc, err, sizeof err);
    json_decref(doc);
}

static void test_saver_contracts(void **state)
{
    struct rdb *f = *state;
    assert_true(dies_by_assert(save_without_job, f));
    assert_true(dies_by_assert(save_without_transaction, f));
}

/* A document from a worker is input: a wrong one is refused, not an abort. */
static void test_documents_are_answered(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(results_latency_check(NULL, err, sizeof err), -1);
    assert_int_equal(results_suite_check(NULL, err, sizeof err), -1);
    json_t *doc = json_pack("{s:s}", "probe", "memory");
    assert_int_equal(results_latency_check(doc, err, sizeof err), -1);
    assert_non_null(strstr(err, "probe"));
    json_decref(doc);
}

/* ---- transactions and statements ------------------------------------------------------ */

static void exec_after_commit(void *arg)
{
    char err[256];
    struct store_tx tx;
    const char *p[] = {"h", "m"};
    if (store_tx_begin(child_store(arg), &tx, err, sizeof err) != 0 ||
        store_tx_commit(&tx, err, sizeof err) != 0)
        _exit(3);
    store_tx_exec(&tx, "INSERT INTO hosts (hostname, machine_id, first_seen_ms, last_seen_ms)"
                       " VALUES (?, ?, 0, 0)", p, 2, err, sizeof err);
}

static void commit_after_rollback(void *arg)
{
    char err[256];
    struct store_tx tx;
    if (store_tx_begin(child_store(arg), &tx, err, sizeof err) != 0)
        _exit(3);
    store_tx_rollback(&tx);
    store_tx_commit(&tx, err, sizeof err);
}

/* The program's own SQL bound with a count it does not take. */
static void bound_with_wrong_count(void *arg)
{
    char err[256];
    struct store_tx tx;
    if (store_tx_begin(child_store(arg), &tx, err, sizeof err) != 0)
        _exit(3);
    conn_exec(tx.c, "UPDATE hosts SET machine_id = ?1 WHERE id = ?2", DB_ARGS(DB_TEXT("m")),
              "binding", err, sizeof err);
}

static void tx_exec_null(void *arg)
{
    char err[256];
    const char *p[] = {"x"};
    (void)arg;
    store_tx_exec(NULL, "SELECT ?", p, 1, err, sizeof err);
}

static void test_transaction_contracts(void **state)
{
    struct rdb *f = *state;
    assert_true(dies_by_assert(exec_after_commit, f));
    assert_true(dies_by_assert(commit_after_rollback, f));
    assert_true(dies_by_assert(bound_with_wrong_count, f));
    assert_true(dies_by_assert(tx_exec_null, f));
    /* the parent's store is intact after the children's aborts */
    char err[256];
    assert_int_equal(store_integrity_check(f->s, err, sizeof err), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_job_contracts, rdb_setup, rdb_teardown),
        cmocka_unit_test_setup_teardown(test_client_job_ids_are_answered, rdb_setup,
                                        rdb_teardown),
        cmocka_unit_test_setup_teardown(test_saver_contracts, rdb_setup, rdb_teardown),
        cmocka_unit_test(test_documents_are_answered),
        cmocka_unit_test_setup_teardown(test_transaction_contracts, rdb_setup, rdb_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
