/*
 * Unit tests of the fleet figures (fleet/metrics.h, fleet/record.h) on the
 * shipped reference H200 bundle (real measurements): the figures each probe
 * yields, named as Prometheus names samples, a label value escaped, every
 * figure's family in the table; a document without a member yields the
 * others; a figures document carries its result's driver; and in a real
 * store, importing the bundle stores the device's figures, with the driver
 * each was measured under, in the import's transaction, an older result
 * imported later changes none of them, a newer result of another kind
 * (under another driver) replaces only the figures it has, and figures
 * derived under other rules (or before drivers were kept) are derived
 * again once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fleet/metrics.h"
#include "fleet/record.h"
#include "server/bundles/bundle.h"
#include "tests/unit/support/resultdb.h"

#define REFERENCE "data/reference/h200.json"
#define REFERENCE_DRIVER "580.159.04" /* every result of it was measured under it */
#define LONG_NAME_20 "abcdefghij0123456789"
/* longer than a figure's name may be (FLEET_NAME_BYTES) */
#define LONG_NAME LONG_NAME_20 LONG_NAME_20 LONG_NAME_20 LONG_NAME_20 LONG_NAME_20 LONG_NAME_20 LONG_NAME_20 LONG_NAME_20

/* The result document of kind in the reference bundle (borrowed from b). */
static const json_t *result_of(const json_t *b, const char *kind)
{
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(json_array_get(json_object_get(b, "devices"), 0),
                                       "results"), i, r)
        if (strcmp(json_string_value(json_object_get(r, "kind")), kind) == 0)
            return json_object_get(r, "result");
    fail_msg("no %s result in %s", kind, REFERENCE);
    return NULL;
}

static const struct fleet_metric *find(const struct fleet_metrics *m, const char *name)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->v[i].name, name) == 0)
            return &m->v[i];
    return NULL;
}

static double value_of(const struct fleet_metrics *m, const char *name)
{
    const struct fleet_metric *f = find(m, name);
    if (!f)
        fail_msg("no figure %s", name);
    return f->value;
}

static size_t count_family(const struct fleet_metrics *m, const char *family)
{
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++)
        if (fleet_family_of(m->v[i].name) == fleet_family_of(family))
            n++;
    return n;
}

static void test_suite_figures(void **state)
{
    (void)state;
    json_t *b = rdb_load(REFERENCE);
    const json_t *suite = result_of(b, "suite");
    struct fleet_metrics m;
    fleet_metrics_init(&m);
    assert_int_equal(fleet_metrics_from_result("suite", suite, &m), 0);
    /* 53 catalog instructions x latency, issue, throughput */
    assert_int_equal(count_family(&m, "gpuprobe_instruction_latency_cycles"), 53);
    assert_int_equal(count_family(&m, "gpuprobe_instruction_throughput_per_sm_clock"), 53);
    /* 15 patterns at 1-4 warps per scheduler */
    assert_int_equal(count_family(&m, "gpuprobe_dual_issue_ffma_per_sm_clock"), 60);
    assert_true(fabs(value_of(&m, "gpuprobe_instruction_latency_cycles{instr=\"ffma\"}") - 4.0) <
                1e-9);
    double l1 = value_of(&m, "gpuprobe_memory_latency_cycles{load=\"ca\",level=\"1\"}");
    assert_true(l1 > 31.9 && l1 < 32.1);
    assert_true(value_of(&m, "gpuprobe_memory_capacity_bytes{load=\"cg\",level=\"1\"}") ==
                43514752.0);
    /* the rising last level has no capacity */
    assert_null(find(&m, "gpuprobe_memory_capacity_bytes{load=\"ca\",level=\"3\"}"));
    assert_true(value_of(&m, "gpuprobe_register_banks") == 2.0);
    const struct fleet_metric *map = find(&m, "gpuprobe_register_bank_map");
    assert_non_null(map);
    assert_true(strncmp(map->text, "2 classes, map ", 15) == 0);
    assert_string_equal(find(&m, "gpuprobe_dual_issue_observed")->text, "no");
    assert_true(value_of(&m, "gpuprobe_min_safe_stall{instr=\"ffma\"}") == 4.0);
    double clock = value_of(&m, "gpuprobe_sm_clock_mhz{probe=\"latency\"}");
    assert_true(clock > 1900 && clock < 2000);
    for (size_t i = 0; i < m.n; i++)
        if (!fleet_family_of(m.v[i].name))
            fail_msg("%s has no family", m.v[i].name);
    fleet_metrics_free(&m);

    fleet_metrics_init(&m);
    assert_int_equal(fleet_metrics_from_result("model-validation", result_of(b, "model-validation"),
                                               &m),
                     0);
    assert_int_equal(count_family(&m, "gpuprobe_validation_kernel_seconds"), 16);
    assert_true(value_of(&m, "gpuprobe_dram_bandwidth_bytes_per_second") > 4e12);
    fleet_metrics_free(&m);
    json_decref(b);
}

static void test_missing_members_and_escaping(void **state)
{
    (void)state;
    struct fleet_metrics m;
    fleet_metrics_init(&m);
    json_t *doc = rdb_parse("{\"entries\":[{\"name\":\"we\\\"ird\\\\\",\"latency_cycles\":"
                            "{\"median\":7}},{\"name\":\"nolat\",\"issue_cycles\":1.5}],"
                            "\"clock_mhz\":{\"before\":1500}}");
    assert_int_equal(fleet_metrics_from_result("latency", doc, &m), 0);
    assert_int_equal(m.n, 2); /* no clock without both readings */
    assert_string_equal(m.v[0].name, "gpuprobe_instruction_latency_cycles{instr=\"we\\\"ird\\\\\"}");
    assert_string_equal(m.v[1].name, "gpuprobe_instruction_issue_cycles{instr=\"nolat\"}");
    assert_true(m.v[1].value == 1.5);
    json_decref(doc);
    /* kinds without figures, and a document that is not an object */
    json_t *empty = json_object();
    assert_int_equal(fleet_metrics_from_result("trace-sort", empty, &m), 0);
    json_decref(empty);
    assert_int_equal(m.n, 2);
    fleet_metrics_free(&m);
}

/* A figure's name in a figures document must be written as gpuprobe
 * writes it: any other spelling is refused, since /metrics prints names as
 * they are and the store keeps them on lines (the reviewer's names: a
 * label twice made Prometheus drop the scrape, a newline in a category
 * stopped the daemon). */
static void test_figures_names_refused(void **state)
{
    (void)state;
    json_t *b = rdb_load(REFERENCE);
    json_t *doc = fleet_figures_doc("suite", result_of(b, "suite"));
    json_t *figs = json_object_get(doc, "figures");
    char err[256];
    const char *bad[] = {
        "gpuprobe_instruction_latency_cycles{instr=\"fadd\",instr=\"fmul\"}",
        "gpuprobe_instruction_latency_cycles{instr=\"a\"b\"}",
        "gpuprobe_instruction_latency_cycles{ instr = \"fadd\" }",
        "gpuprobe_instruction_latency_cycles{instr=\"fadd\",foo=\"bar\"}",
        "gpuprobe_instruction_latency_cycles",
        "gpuprobe_instruction_latency_cycles{instr=\"a\"}x",
        "gpuprobe_instruction_latency_cycles{instr=\"a\tb\"}",
        "gpuprobe_instruction_latency_cycles{instr=\"a\\qb\"}",
        "gpuprobe_instruction_latency_cycles{instr=\"open",
        "gpuprobe_memory_latency_cycles{level=\"2\",load=\"ca\"}",
        "gpuprobe_shared_memory_latency_cycles{}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_object_set_new(figs, bad[i], json_real(4.0));
        if (fleet_figures_check(doc, err, sizeof err) != -1 || !strstr(err, "not a figure's name"))
            fail_msg("%s: %s", bad[i], err);
        assert_null(strchr(err, '\t')); /* the message shows no control character */
        json_object_del(figs, bad[i]);
    }
    /* escaped as gpuprobe escapes them, and '?' for what it cannot hold */
    json_object_set_new(figs, "gpuprobe_instruction_latency_cycles{instr=\"we\\\"ird\\\\ \\n?\"}",
                        json_real(4.0));
    json_object_set_new(figs, "gpuprobe_memory_latency_cycles{load=\"ca\",level=\"4\"}", json_real(4.0));
    assert_int_equal(fleet_figures_check(doc, err, sizeof err), 0);
    /* a category is printable text */
    json_object_set_new(figs, "gpuprobe_register_bank_map", json_string("x\ny"));
    assert_int_equal(fleet_figures_check(doc, err, sizeof err), -1);
    assert_string_equal(err, "figures.gpuprobe_register_bank_map: must be a short string (a category)"
                             " of printable characters");
    json_object_set_new(figs, "gpuprobe_register_bank_map", json_string("2 classes"));
    /* the kind is one whose results give figures */
    json_object_set_new(doc, "kind", json_string("made-up"));
    assert_int_equal(fleet_figures_check(doc, err, sizeof err), -1);
    assert_non_null(strstr(err, "kind: "));
    json_object_set_new(doc, "kind", json_string("latency"));
    assert_int_equal(fleet_figures_check(doc, err, sizeof err), 0);
    json_decref(doc);
    json_decref(b);
}

/* A result whose entry name holds a tab (a store line's separator) gives
 * a figure with '?' in its place, and one too long for a name none. */
static void test_figures_of_odd_entry_names(void **state)
{
    (void)state;
    json_t *doc = rdb_parse("{\"entries\":[{\"name\":\"a\\tb\",\"latency_cycles\":"
                            "{\"median\":4,\"min\":4,\"max\":4}},"
                            "{\"name\":\"" LONG_NAME "\",\"latency_cycles\":"
                            "{\"median\":5,\"min\":5,\"max\":5}}]}");
    struct fleet_metrics m;
    fleet_metrics_init(&m);
    assert_int_equal(fleet_metrics_from_result("latency", doc, &m), 0);
    assert_int_equal(m.n, 1);
    assert_string_equal(m.v[0].name, "gpuprobe_instruction_latency_cycles{instr=\"a?b\"}");
    fleet_metrics_free(&m);
    json_decref(doc);
}

static void test_figures_alone(void **state)
{
    (void)state;
    json_t *b = rdb_load(REFERENCE);
    const json_t *suite = result_of(b, "suite");
    json_t *doc = fleet_figures_doc("suite", suite);
    assert_non_null(doc);
    char err[256];
    assert_int_equal(fleet_figures_check(doc, err, sizeof err), 0);
    assert_string_equal(json_string_value(json_object_get(doc, "kind")), "suite");
    /* the driver goes along, and comes back as the result's */
    assert_string_equal(json_string_value(json_object_get(doc, "driver_version")),
                        REFERENCE_DRIVER);
    assert_string_equal(fleet_driver_of(suite), REFERENCE_DRIVER);
    assert_string_equal(fleet_driver_of(doc), REFERENCE_DRIVER);
    assert_string_equal(fleet_driver_of(result_of(b, "model-validation")), REFERENCE_DRIVER);
    /* the figures read back from it are the result's own */
    struct fleet_metrics direct, again;
    fleet_metrics_init(&direct);
    fleet_metrics_init(&again);
    assert_int_equal(fleet_metrics_from_result("suite", suite, &direct), 0);
    assert_int_equal(fleet_metrics_from_result(FLEET_FIGURES_KIND, doc, &again), 0);
    assert_int_equal(direct.n, again.n);
    for (size_t i = 0; i < direct.n; i++) {
        const struct fleet_metric *f = find(&again, direct.v[i].name);
        assert_non_null(f);
        assert_true(f->value == direct.v[i].value);
        assert_string_equal(f->text, direct.v[i].text);
    }
    fleet_metrics_free(&direct);
    fleet_metrics_free(&again);
    /* refusals name the figure */
    json_t *figs = json_object_get(doc, "figures");
    json_object_set_new(figs, "gpuprobe_made_up", json_integer(1));
    assert_int_equal(fleet_figures_check(doc, err, sizeof err), -1);
    assert_string_equal(err, "figures.gpuprobe_made_up: not a fleet figure this gpuprobe knows");
    json_object_del(figs, "gpuprobe_made_up");
    json_object_set_new(figs, "gpuprobe_register_banks", json_string("two"));
    assert_int_equal(fleet_figures_check(doc, err, sizeof err), -1);
    assert_string_equal(err, "figures.gpuprobe_register_banks: must be a finite number");
    json_object_set_new(figs, "gpuprobe_register_banks", json_integer(2));
    json_object_set_new(figs, "gpuprobe_dual_issue_observed", json_integer(0));
    assert_int_equal(fleet_figures_check(doc, err, sizeof err), -1);
    json_object_set_new(figs, "gpuprobe_dual_issue_observed", json_string("yes"));
    /* a driver is a short printable text, and may be missing (an older node's) */
    json_object_set_new(doc, "driver_version", json_integer(580));
    assert_int_equal(fleet_figures_check(doc, err, sizeof err), -1);
    assert_string_equal(err, "driver_version: must be a short string of printable characters");
    json_object_set_new(doc, "driver_version", json_string("580\n159"));
    assert_int_equal(fleet_figures_check(doc, err, sizeof err), -1);
    json_object_del(doc, "driver_version");
    assert_int_equal(fleet_figures_check(doc, err, sizeof err), 0);
    assert_null(fleet_driver_of(doc));
    json_object_set_new(doc, "probe", json_string("latency"));
    assert_int_equal(fleet_figures_check(doc, err, sizeof err), -1);
    assert_string_equal(err, "probe: must be \"fleet-figures\"");
    json_decref(doc);
    /* a result with no figures has no figures document */
    json_t *empty = json_object();
    assert_null(fleet_figures_doc("trace-sort", empty));
    json_decref(empty);
    json_decref(b);
}

static int64_t count(const struct rdb *f, const char *sql)
{
    return query_int(f->t->path, sql);
}

struct tally {
    size_t figures, fresh;   /* fresh: measured when their job finished */
    int64_t last_job;
};

static int tally_figure(void *ctx, const struct store_metric_row *r)
{
    struct tally *t = ctx;
    t->figures++;
    t->last_job = r->job_id;
    return 0;
}

/* One named figure, as the store hands it out. */
struct pick {
    const char *name;
    double value;
    int64_t job_id;
    char driver[32];         /* "(none)" when the store knows none */
};

static int pick_figure(void *ctx, const struct store_metric_row *r)
{
    struct pick *p = ctx;
    if (strcmp(r->metric, p->name) == 0) {
        p->value = r->value;
        p->job_id = r->job_id;
        snprintf(p->driver, sizeof p->driver, "%s", r->driver ? r->driver : "(none)");
    }
    return 0;
}

/* The device's figures as the store hands them out. */
static struct tally figures_of(const struct rdb *f, const char *uuid)
{
    struct tally t = {0, 0, 0};
    char err[256];
    if (store_device_metrics_each(f->s, uuid, tally_figure, &t, err, sizeof err) != 0)
        fail_msg("%s", err);
    return t;
}

static void test_stored_with_the_import(void **state)
{
    struct rdb *f = *state;
    json_t *b = rdb_load(REFERENCE);
    rdb_import(f->s, b);
    /* the suite's and the validation's figures, each from its own job */
    const char *uuid = json_string_value(
        json_object_get(json_array_get(json_object_get(b, "devices"), 0), "uuid"));
    assert_int_equal(figures_of(f, uuid).figures, 281);
    assert_int_equal(count(f, "SELECT count(*) FROM device_figures"), 2);
    assert_int_equal(count(f, "SELECT count(*) FROM device_figures WHERE measured_ms ="
                              " (SELECT finished_ms FROM jobs WHERE id = job_id)"),
                     2);
    assert_int_equal(count(f, "SELECT count(*) FROM device_figures"
                              " WHERE driver_version = '" REFERENCE_DRIVER "'"),
                     2);

    /* an older measurement of the same device, imported later, changes nothing */
    json_t *older = json_deep_copy(b);
    json_t *res = json_object_get(json_array_get(json_object_get(older, "devices"), 0), "results");
    json_t *job = json_object_get(json_array_get(res, 0), "job");
    json_object_set_new(job, "id", json_integer(999));
    json_object_set_new(job, "finished_at", json_string("2020-01-01T00:00:00.000Z"));
    json_object_del(job, "started_at"); /* (a job starts before it finishes) */
    json_object_del(job, "created_at");
    json_object_set_new(json_object_get(json_object_get(json_array_get(res, 0), "result"),
                                        "latency"),
                        "entries", json_array());
    json_array_remove(res, 1);
    char hex[65];
    assert_int_equal(bundle_digest(older, hex), 0);
    json_object_set_new(older, "sha256", json_string(hex));
    rdb_import(f->s, older);
    assert_int_equal(count(f, "SELECT count(*) FROM jobs"), 3);
    assert_int_equal(count(f, "SELECT count(*) FROM device_figures WHERE job_id ="
                              " (SELECT max(id) FROM jobs)"),
                     0);
    assert_int_equal(figures_of(f, uuid).figures, 281);
    json_decref(older);

    /* a newer latency result replaces the suite's latency figures alone */
    json_t *newer = json_deep_copy(b);
    res = json_object_get(json_array_get(json_object_get(newer, "devices"), 0), "results");
    json_t *lat = json_deep_copy(json_object_get(
        json_object_get(json_array_get(res, 0), "result"), "latency"));
    json_t *e0 = json_array_get(json_object_get(lat, "entries"), 0);
    const char *instr = json_string_value(json_object_get(e0, "name"));
    json_t *fig = json_object_get(e0, "latency_cycles"); /* a spread still: min <= median <= max */
    json_object_set_new(fig, "median", json_real(9.0));
    json_object_set_new(fig, "max", json_real(9.0));
    json_object_set_new(lat, "driver_version", json_string("590.48.01")); /* a newer driver */
    json_t *r0 = json_array_get(res, 0);
    json_object_set_new(r0, "kind", json_string("latency"));
    json_object_set_new(r0, "result", lat);
    job = json_object_get(r0, "job");
    json_object_set_new(job, "id", json_integer(998));
    /* after the reference's measurements (2026-11-24T10:22Z), not to come */
    json_object_set_new(job, "finished_at", json_string("2026-11-24T20:00:00.000Z"));
    json_array_remove(res, 1);
    assert_int_equal(bundle_digest(newer, hex), 0);
    json_object_set_new(newer, "sha256", json_string(hex));
    rdb_import(f->s, newer);
    char name[128];
    snprintf(name, sizeof name, "gpuprobe_instruction_latency_cycles{instr=\"%s\"}", instr);
    struct pick p = {name, -1, 0, ""};
    char err[256];
    assert_int_equal(store_device_metrics_each(f->s, uuid, pick_figure, &p, err, sizeof err), 0);
    assert_true(p.value == 9.0);
    assert_int_equal(p.job_id, count(f, "SELECT max(id) FROM jobs"));
    assert_string_equal(p.driver, "590.48.01");
    /* the memory figures are still the suite's, measured under its driver */
    struct pick mem = {"gpuprobe_shared_memory_latency_cycles", -1, 0, ""};
    assert_int_equal(store_device_metrics_each(f->s, uuid, pick_figure, &mem, err, sizeof err), 0);
    assert_true(mem.value > 20 && mem.job_id < p.job_id);
    assert_string_equal(mem.driver, REFERENCE_DRIVER);
    assert_int_equal(figures_of(f, uuid).figures, 281);
    json_decref(newer);
    json_decref(b);
}

static void test_derived_again_under_new_rules(void **state)
{
    struct rdb *f = *state;
    json_t *b = rdb_load(REFERENCE);
    rdb_import(f->s, b);
    json_decref(b);
    size_t n = 99;
    char err[512];
    assert_int_equal(fleet_record_refresh(f->s, &n, err, sizeof err), 0);
    assert_int_equal(n, 0); /* current: nothing to do */
    /* as if the figures had been derived by other rules */
    exec_plain(f->t->path, "UPDATE store_meta SET value = 'old'"
                           " WHERE name = 'fleet_metrics_version'; DELETE FROM device_figures");
    assert_int_equal(fleet_record_refresh(f->s, &n, err, sizeof err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(count(f, "SELECT count(*) FROM device_figures"), 2);
    /* figures stored before drivers were kept (version 1) get them */
    exec_plain(f->t->path, "UPDATE store_meta SET value = '1'"
                           " WHERE name = 'fleet_metrics_version';"
                           " UPDATE device_figures SET driver_version = NULL");
    assert_int_equal(fleet_record_refresh(f->s, &n, err, sizeof err), 0);
    assert_int_equal(n, 2);
    assert_int_equal(count(f, "SELECT count(*) FROM device_figures"
                              " WHERE driver_version = '" REFERENCE_DRIVER "'"),
                     2);
    assert_int_equal(count(f, "SELECT count(*) FROM device_figures WHERE measured_ms ="
                              " (SELECT finished_ms FROM jobs WHERE id = job_id)"),
                     2);
    assert_int_equal(figures_of(f, "GPU-5e219d5e-f66e-5b08-5589-0382521f0c7e").figures, 281);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_suite_figures),
        cmocka_unit_test(test_missing_members_and_escaping),
        cmocka_unit_test(test_figures_alone),
        cmocka_unit_test(test_figures_names_refused),
        cmocka_unit_test(test_figures_of_odd_entry_names),
        cmocka_unit_test_setup_teardown(test_stored_with_the_import, rdb_setup_gpuprobe, rdb_teardown),
        cmocka_unit_test_setup_teardown(test_derived_again_under_new_rules, rdb_setup_gpuprobe,
                                        rdb_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
