/*
 * Test support: probe results in a store (see resultdb.h).
 */
#include "tests/unit/support/resultdb.h"

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
#include "server/bundles/bundle.h"
#include "server/store_open.h"

/* ---- the store ------------------------------------------------------------------- */

int rdb_setup(void **state)
{
    void *t = NULL;
    char err[512];
    struct rdb *f = calloc(1, sizeof *f);
    if (!f || tmp_setup(&t, "results", "gpuprobe.db") != 0) {
        free(f);
        return -1;
    }
    f->t = t;
    if (store_open(&f->s, f->t->path, err, sizeof err) != 0) {
        fprintf(stderr, "setup: %s\n", err);
        tmp_teardown(&t);
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

int rdb_setup_gpuprobe(void **state)
{
    if (rdb_setup(state) != 0)
        return -1;
    struct rdb *f = *state;
    char err[512];
    store_close(f->s);
    if (gpuprobe_store_open(&f->s, f->t->path, NULL, NULL, err, sizeof err) != 0) {
        print_error("%s\n", err);
        return -1;
    }
    return 0;
}

void rdb_import(store *s, const json_t *bundle)
{
    struct bundle_counts c;
    char err[1024], field[200];
    if (bundle_import(s, bundle, &c, err, sizeof err, field, sizeof field) != 0)
        fail_msg("import refused at %s: %s", field, err);
}

int rdb_teardown(void **state)
{
    struct rdb *f = *state;
    char p[200];
    void *t = f->t;
    store_close(f->s);
    snprintf(p, sizeof p, "%s-wal", f->t->path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", f->t->path);
    unlink(p);
    tmp_teardown(&t);
    free(f);
    return 0;
}

/* ---- documents --------------------------------------------------------------------- */

json_t *rdb_parse(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &e);
    if (!j)
        fail_msg("test document: %s at line %d column %d", e.text, e.line, e.column);
    return j;
}

json_t *rdb_load(const char *path)
{
    json_error_t e;
    json_t *j = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
    if (!j)
        fail_msg("%s: %s (run the tests from the repository root)", path, e.text);
    return j;
}

json_t *rdb_load_or(const char *path, const char *text)
{
    return access(path, R_OK) == 0 ? rdb_load(path) : rdb_parse(text);
}

const char *rdb_uuid(const json_t *doc)
{
    return json_string_value(json_object_get(json_object_get(doc, "device"), "uuid"));
}

/* ---- saving and reading ------------------------------------------------------------- */

int64_t rdb_running_job(store *s, const char *kind, const char *device)
{
    int64_t id = 0;
    char err[512];
    if (store_job_insert(s, kind, device, "{}", 600, 1, &id, err, sizeof err) != 0 ||
        store_job_start(s, id, err, sizeof err) != 0)
        fail_msg("a running %s job: %s", kind, err);
    return id;
}

int rdb_save(store *s, int64_t id, const json_t *doc, store_result_saver save, char *err,
             size_t errlen)
{
    char *text = json_dumps(doc, JSON_COMPACT);
    assert_non_null(text);
    err[0] = '\0';
    int rc = store_job_succeed(s, id, text, save, err, errlen);
    free(text);
    return rc;
}

int64_t rdb_saved_job(store *s, const char *kind, const json_t *doc, store_result_saver save)
{
    char err[512];
    int64_t id = rdb_running_job(s, kind, rdb_uuid(doc));
    if (rdb_save(s, id, doc, save, err, sizeof err) != 0)
        fail_msg("saving a %s result: %s", kind, err);
    return id;
}

json_t *rdb_read(store *s, const char *uuid, const char *probe, int64_t job)
{
    json_t *out = NULL;
    char err[512];
    if (store_probe_result(s, uuid, probe, job, &out, err, sizeof err) != 0)
        fail_msg("reading the %s result of %s: %s", probe, uuid, err);
    assert_non_null(out);
    return out;
}

void rdb_add_device(store *s, const json_t *doc, const char *name, const char *cc)
{
    int64_t host;
    char err[256];
    char *info = json_dumps(json_object_get(doc, "device"), JSON_COMPACT);
    if (store_host_upsert(s, "testhost", "", &host, err, sizeof err) != 0 ||
        store_device_upsert(s, host, rdb_uuid(doc), name, cc, info, err, sizeof err) != 0)
        fail_msg("device: %s", err);
    free(info);
}

int64_t rdb_result_rows(const char *path)
{
    static const char *const tables[] = {
        "probe_runs",         "latency_results",       "memory_curve",    "memory_levels",
        "memory_scalars",     "banks_runs",            "banks_map",       "banks_costs",
        "control_code_instr", "control_code_sweep",    "control_code_meanings",
        "dual_issue_runs",    "dual_issue_results",    "memory_l1_sets",  "memory_l1_set_masks",
        "memory_dsmem",       "memory_dsmem_sizes",
        "memory_async_copy",  "memory_async_copy_points",
    };
    char sql[1024];
    size_t n = (size_t)snprintf(sql, sizeof sql, "SELECT 0");
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
        n += (size_t)snprintf(sql + n, sizeof sql - n, " + (SELECT count(*) FROM %s)", tables[i]);
    return query_int(path, sql);
}

void rdb_refused(struct rdb *f, const char *kind, const json_t *doc,
                 int (*check)(const json_t *, char *, size_t), store_result_saver save,
                 const char *field, const char *what)
{
    char err[512] = "";
    if (check(doc, err, sizeof err) != -1 || !strstr(err, field))
        fail_msg("%s (%s): the check said '%s'", what, field, err);
    int64_t id = rdb_running_job(f->s, kind, rdb_uuid(doc));
    if (rdb_save(f->s, id, doc, save, err, sizeof err) != -1 || !strstr(err, field))
        fail_msg("%s (%s): the saver said '%s'", what, field, err);
    if (rdb_result_rows(f->t->path) != 0)
        fail_msg("%s (%s): a refused document left rows", what, field);
}

/* ---- comparing ----------------------------------------------------------------------- */

void rdb_check_number(const json_t *want, const json_t *got, const char *what)
{
    if (!want || json_is_null(want)) {
        if (!json_is_null(got))
            fail_msg("%s: expected null", what);
        return;
    }
    if (!json_is_number(got) || json_number_value(got) != json_number_value(want))
        fail_msg("%s: expected %.17g, got %.17g", what, json_number_value(want),
                 json_number_value(got));
}

void rdb_check_text(const json_t *want, const json_t *got, const char *what)
{
    if (!want || json_is_null(want)) {
        if (!json_is_null(got))
            fail_msg("%s: expected null, got %s", what, json_string_value(got));
        return;
    }
    if (!json_is_string(got) || strcmp(json_string_value(want), json_string_value(got)) != 0)
        fail_msg("%s: expected \"%s\", got \"%s\"", what, json_string_value(want),
                 json_is_string(got) ? json_string_value(got) : "(not a string)");
}

void rdb_check_same(const json_t *want, const json_t *got, const char *what)
{
    if (!json_equal(want ? want : json_null(), got ? got : json_null()))
        fail_msg("%s differs", what);
}

const json_t *rdb_error_member(const json_t *fig)
{
    return json_is_string(fig) ? fig : json_object_get(fig, "error");
}

void rdb_check_figure(const json_t *want, const json_t *got, const char *what)
{
    static const char *const parts[] = {"median", "min", "max"};
    char sub[160];
    if (json_is_object(want) && !json_object_get(want, "median") && json_object_get(want, "cycles"))
        want = json_object_get(want, "cycles");
    if (!want || json_is_null(want)) {
        if (!json_is_null(got))
            fail_msg("%s: expected null", what);
        return;
    }
    if (rdb_error_member(want)) {
        snprintf(sub, sizeof sub, "%s.error", what);
        rdb_check_text(rdb_error_member(want), json_object_get(got, "error"), sub);
        return;
    }
    for (int i = 0; i < 3; i++) {
        snprintf(sub, sizeof sub, "%s.%s", what, parts[i]);
        rdb_check_number(json_object_get(want, parts[i]), json_object_get(got, parts[i]), sub);
    }
}

void rdb_check_provenance(const json_t *doc, const json_t *got, int64_t job)
{
    const json_t *wd = json_object_get(doc, "device"), *gd = json_object_get(got, "device");
    const json_t *wc = json_object_get(doc, "clock_mhz"), *gc = json_object_get(got, "clock_mhz");
    assert_int_equal(json_integer_value(json_object_get(got, "job_id")), job);
    rdb_check_text(json_object_get(doc, "probe"), json_object_get(got, "probe"), "probe");
    rdb_check_text(json_object_get(wd, "uuid"), json_object_get(gd, "uuid"), "device.uuid");
    rdb_check_text(json_object_get(wd, "name"), json_object_get(gd, "name"), "device.name");
    rdb_check_text(json_object_get(wd, "compute_capability"),
                   json_object_get(gd, "compute_capability"), "device.compute_capability");
    rdb_check_text(json_object_get(doc, "driver_version"), json_object_get(got, "driver_version"),
                   "driver_version");
    for (int i = 0; i < 2; i++) {
        const char *k = i ? "after" : "before";
        const json_t *w = json_object_get(wc, k);
        rdb_check_number(json_is_number(w) ? w : NULL, json_object_get(gc, k), k);
    }
    rdb_check_number(json_object_get(doc, "repeats"), json_object_get(got, "repeats"), "repeats");
    rdb_check_number(json_object_get(doc, "wall_s"), json_object_get(got, "wall_s"), "wall_s");
    assert_true(json_integer_value(json_object_get(got, "measured_ms")) > 1600000000000LL);
}

/* ---- memory members ------------------------------------------------------------- */

json_t *rdb_memory_with(const char *key, const char *member)
{
    json_t *doc = rdb_parse(
        "{\"probe\":\"memory\",\"device\":{\"index\":0,\"uuid\":\"" RDB_MEMORY_UUID "\",\"name\":"
        "\"NVIDIA H100 80GB HBM3\",\"compute_capability\":\"9.0\"},\"driver_version\":\"580.95.05\","
        "\"repeats\":5,\"clock_mhz\":{\"before\":1755.0,\"after\":1755.0},"
        "\"shared_cycles\":{\"error\":\"x\"},\"departure\":{\"error\":\"x\"},"
        "\"curves\":{\"ca\":{\"error\":\"x\"},\"cg\":{\"error\":\"x\"}},"
        "\"levels\":{\"ca\":{\"error\":\"x\"},\"cg\":{\"error\":\"x\"}},\"wall_s\":3.0}");
    if (member)
        json_object_set_new(doc, key, member[0] == '{' ? rdb_parse(member) : json_string(member));
    return doc;
}

void rdb_memory_damages_refused(struct rdb *f, const char *key, const char *member,
                                const struct rdb_damage *damages, size_t n)
{
    char what[32];
    for (size_t i = 0; i < n; i++) {
        json_t *doc = rdb_memory_with(key, member);
        damages[i].mutate(doc);
        snprintf(what, sizeof what, "damage %zu", i);
        rdb_refused(f, "memory", doc, results_memory_check, results_memory_save, damages[i].field, what);
        json_decref(doc);
    }
}

json_t *rdb_memory_round_trip(struct rdb *f, json_t *doc, const char *key)
{
    char err[512];
    if (results_memory_check(doc, err, sizeof err) != 0)
        fail_msg("check: %s", err);
    int64_t id = rdb_saved_job(f->s, "memory", doc, results_memory_save);
    json_t *got = rdb_read(f->s, RDB_MEMORY_UUID, "memory", id);
    json_t *m = json_incref(json_object_get(got, key));
    assert_non_null(m);
    json_decref(got);
    json_decref(doc);
    return m;
}
