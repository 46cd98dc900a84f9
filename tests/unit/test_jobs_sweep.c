/*
 * Unit tests of the start-up sweep of upload_dir (server/jobs/upload_sweep.h):
 * what goes (spools, partial outputs, outputs of jobs that are gone or did
 * not succeed, inputs no queued job names) and what stays (the output of a
 * succeeded or queued job, an input a queued job names, files that are not
 * the daemon's).
 *
 * DESIGN
 * A real store and a real folder in a fresh directory; jobs are put in the
 * states each rule needs through the store's own transitions, files are
 * made empty, and the folder's listing after the sweep is compared whole.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "db/store.h"
#include "tests/unit/support/storetest.h"
#include "server/jobs/upload_sweep.h"

static char err[512];

#define OK STORE_OK

static void make_file(const char *dir, const char *name)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
}

/* The folder's names, sorted, joined by spaces. */
static void listing(const char *dir, char *out, size_t len)
{
    struct dirent **names = NULL;
    int n = scandir(dir, &names, NULL, alphasort);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (names[i]->d_name[0] != '.') {
            strncat(out, out[0] ? " " : "", len - strlen(out) - 1);
            strncat(out, names[i]->d_name, len - strlen(out) - 1);
        }
        free(names[i]);
    }
    free(names);
}

static int64_t job(store *s, const char *params, enum job_state to)
{
    int64_t id = 0;
    OK(store_job_insert(s, "trace-sort", NULL, params, 60, 3, &id, err, sizeof err));
    if (to == JOB_QUEUED)
        return id;
    OK(store_job_start(s, id, err, sizeof err));
    if (to == JOB_SUCCEEDED)
        OK(store_job_succeed(s, id, "{}", NULL, err, sizeof err));
    if (to == JOB_FAILED)
        OK(store_job_fail(s, id, "bad trace", NULL, err, sizeof err));
    return id;
}

static void test_sweep_rules(void **state)
{
    (void)state;
    char dir[64] = "/tmp/gpuprobe-test-sweep-XXXXXX", db[128], up[128], name[64], got[1024];
    assert_non_null(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/gpuprobe.db", dir);
    snprintf(up, sizeof up, "%s/uploads", dir);
    store *s = NULL;
    OK(store_open(&s, db, err, sizeof err));
    size_t removed = 99;
    OK(upload_sweep(s, up, &removed, err, sizeof err)); /* no folder yet: nothing to do */
    assert_int_equal(removed, 0);
    assert_int_equal(mkdir(up, 0700), 0);

    int64_t ok = job(s, "{\"input\":\"trace-done01.in\"}", JOB_SUCCEEDED);
    int64_t bad = job(s, "{\"input\":\"trace-fail01.in\"}", JOB_FAILED);
    int64_t queued = job(s, "{\"input\":\"trace-wait01.in\"}", JOB_QUEUED);
    snprintf(name, sizeof name, "trace-%lld.out", (long long)ok);
    make_file(up, name);                       /* kept: served by GET .../output */
    snprintf(name, sizeof name, "trace-%lld.out", (long long)bad);
    make_file(up, name);                       /* gone: its job failed */
    snprintf(name, sizeof name, "trace-%lld.out.part", (long long)queued);
    make_file(up, name);                       /* gone: partial */
    make_file(up, "trace-987654.out");         /* gone: no such job */
    make_file(up, "trace-done01.in");          /* gone: its job has ended */
    make_file(up, "trace-fail01.in");          /* gone: its job has ended */
    make_file(up, "trace-wait01.in");          /* kept: a queued job's input */
    make_file(up, "upload-x1Y2z3");            /* gone: a request's spool */
    make_file(up, "capture-a1b2c3.ptx");       /* gone: no job names it */
    make_file(up, "README");                   /* kept: not the daemon's */
    OK(upload_sweep(s, up, &removed, err, sizeof err));
    assert_int_equal(removed, 7);
    listing(up, got, sizeof got);
    char want[256];
    snprintf(want, sizeof want, "README trace-%lld.out trace-wait01.in", (long long)ok);
    assert_string_equal(got, want);
    store_close(s);
    remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
