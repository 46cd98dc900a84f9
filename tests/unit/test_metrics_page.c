/*
 * Unit tests of what GET /metrics writes (server/api/metrics*.c over
 * server/http/req_stats.c and server/jobs/worker_failures.c), each part
 * checked as a whole page: every family has one HELP and one TYPE line,
 * before its samples, and its samples are together; a histogram's buckets
 * never fall, end with le="+Inf", and that bucket equals _count.
 * - HTTP: requests counted by route and status code, one series per pair
 *   seen; a request no route took under route="" and method=""; the
 *   duration histogram per route requested, its buckets cumulative, its sum;
 *   counts from several threads at once add up exactly.
 * - worker failures: every kind with every reason from the start, zeros
 *   included; a counted failure shows under its kind and reason.
 * - jobs: every kind of the registry in every state, zeros included, a kind
 *   the registry lacks as the store has it, the queue's length.
 * - probe figures of the reference H200 (real measurements, imported into a
 *   store): 281 figures, the L1 latency with dcgm-exporter's labels and the
 *   figure's own, a categorical figure as 1 with its category in "value",
 *   families in the table's order, a device name with quotes escaped, and
 *   a device not asked for left out.
 * - the build and the store's size (the file and its write-ahead log).
 * - docs/metrics.md has a row for every family written, and names every
 *   label of the figures' families.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fleet/metrics.h"
#include "server/api/metrics.h"
#include "server/http/req_stats.h"
#include "server/http/route.h"
#include "server/jobs/registry.h"
#include "server/jobs/worker_failures.h"
#include "tests/unit/support/resultdb.h"

#define H200 "GPU-5e219d5e-f66e-5b08-5589-0382521f0c7e"
#define H100 "GPU-b7d8e50a-36cc-dc39-0734-d6531eb80b16"

/* ---- reading a page --------------------------------------------------------- */

static char *take(struct prom_page *p)
{
    size_t len = 0;
    char *text = prom_take(p, &len);
    assert_non_null(text);
    return text;
}

/* The name of the sample on line (up to its labels or value) into out. */
static void sample_name(const char *line, char *out, size_t len)
{
    size_t n = strcspn(line, "{ \n");
    assert_true(n < len);
    memcpy(out, line, n);
    out[n] = '\0';
}

static int ends_with(const char *s, const char *family, const char *suffix)
{
    size_t f = strlen(family);
    return strncmp(s, family, f) == 0 && strcmp(s + f, suffix) == 0;
}

/* Checks the page's structure (see the top of this file); the number of
 * families. */
static int check_page(const char *text)
{
    char family[160] = "", type[16] = "", seen[4096] = " ";
    char last_bucket_series[1024] = "";
    double last_bucket = 0, inf_bucket = -1;
    int families = 0, expect_type = 0;
    for (const char *line = text; *line; line = strchr(line, '\n') + 1) {
        char name[160], key[200];
        if (strncmp(line, "# HELP ", 7) == 0) {
            assert_false(expect_type);
            sample_name(line + 7, family, sizeof family);
            snprintf(key, sizeof key, " %s ", family);
            if (strstr(seen, key))
                fail_msg("family %s written twice", family);
            assert_true(strlen(seen) + strlen(family) + 2 < sizeof seen);
            strcat(seen, family);
            strcat(seen, " ");
            families++;
            expect_type = 1;
        } else if (strncmp(line, "# TYPE ", 7) == 0) {
            assert_true(expect_type);
            sample_name(line + 7, name, sizeof name);
            assert_string_equal(name, family);
            sscanf(line + 7 + strlen(name), " %15s", type);
            expect_type = 0;
        } else {
            assert_false(expect_type);
            assert_true(family[0]);
            sample_name(line, name, sizeof name);
            if (strcmp(type, "histogram") != 0) {
                if (strcmp(name, family) != 0)
                    fail_msg("sample %s under family %s", name, family);
                continue;
            }
            const char *labels = line + strlen(name);
            double v = strtod(strchr(line, ' ') + 1, NULL);
            if (ends_with(name, family, "_bucket")) {
                /* the series without its le: buckets of one series never fall */
                const char *le = strstr(labels, "le=\"");
                assert_non_null(le);
                char series[1024];
                snprintf(series, sizeof series, "%.*s", (int)(le - labels), labels);
                if (strcmp(series, last_bucket_series) == 0 && v < last_bucket)
                    fail_msg("bucket falls: %.*s", (int)strcspn(line, "\n"), line);
                snprintf(last_bucket_series, sizeof last_bucket_series, "%s", series);
                last_bucket = v;
                if (strncmp(le, "le=\"+Inf\"", 9) == 0)
                    inf_bucket = v;
            } else if (ends_with(name, family, "_count")) {
                assert_true(inf_bucket >= 0); /* +Inf came before, for this series */
                assert_true(v == inf_bucket);
                inf_bucket = -1;
                last_bucket_series[0] = '\0';
            } else if (!ends_with(name, family, "_sum")) {
                fail_msg("sample %s under histogram %s", name, family);
            }
        }
    }
    assert_false(expect_type);
    return families;
}

/* The value of the line that starts with prefix (a sample's name and
 * labels, with the space), or NAN when there is none. */
static double value_of(const char *text, const char *prefix)
{
    for (const char *line = text; *line; line = strchr(line, '\n') + 1)
        if (strncmp(line, prefix, strlen(prefix)) == 0)
            return strtod(line + strlen(prefix), NULL);
    return NAN;
}

static void expect(const char *text, const char *prefix, double want)
{
    double got = value_of(text, prefix);
    if (isnan(got))
        fail_msg("no sample %s", prefix);
    if (fabs(got - want) > 1e-9 * fabs(want))
        fail_msg("%s%.17g, expected %.17g", prefix, got, want);
}

static size_t lines_starting(const char *text, const char *prefix)
{
    size_t n = 0;
    for (const char *line = text; *line; line = strchr(line, '\n') + 1)
        n += strncmp(line, prefix, strlen(prefix)) == 0;
    return n;
}

/* ---- HTTP ------------------------------------------------------------------- */

static void nothing(struct http_req *rq, struct http_resp *rs)
{
    (void)rq;
    (void)rs;
}

static const struct route table[] = {
    {"GET", "/a", nothing, 0, 1, 0},
    {"GET", "/a/{id}", nothing, 0, 1, 0},
    {"POST", "/a", nothing, 1, 1, 0},
};
#define NTABLE (sizeof table / sizeof table[0])

static void test_http_requests_and_durations(void **state)
{
    (void)state;
    struct req_stats *s = req_stats_new(NTABLE);
    assert_non_null(s);
    req_stats_observe(s, 0, 200, 0.0002);
    req_stats_observe(s, 0, 200, 0.0002);
    req_stats_observe(s, 0, 404, 0.02);
    req_stats_observe(s, 2, 202, 5);
    req_stats_observe(s, 2, 202, 700); /* above the last bound: +Inf only */
    req_stats_observe(s, NTABLE, 404, 0.00005);
    req_stats_observe(s, 1, 0, 1); /* no status to count */
    struct prom_page p = {0};
    metrics_write_http(s, table, &p);
    char *text = take(&p);
    assert_int_equal(check_page(text), 2);

    expect(text, "gpuprobe_http_requests_total{method=\"GET\",route=\"/a\",code=\"200\"} ", 2);
    expect(text, "gpuprobe_http_requests_total{method=\"GET\",route=\"/a\",code=\"404\"} ", 1);
    expect(text, "gpuprobe_http_requests_total{method=\"POST\",route=\"/a\",code=\"202\"} ", 2);
    expect(text, "gpuprobe_http_requests_total{method=\"\",route=\"\",code=\"404\"} ", 1);
    assert_int_equal(lines_starting(text, "gpuprobe_http_requests_total{"), 4);

    const char *b = "gpuprobe_http_request_duration_seconds_bucket{method=\"GET\",route=\"/a\",";
    char key[200];
    snprintf(key, sizeof key, "%sle=\"0.0001\"} ", b);
    expect(text, key, 0);
    snprintf(key, sizeof key, "%sle=\"0.00025\"} ", b);
    expect(text, key, 2);
    snprintf(key, sizeof key, "%sle=\"0.01\"} ", b);
    expect(text, key, 2);
    snprintf(key, sizeof key, "%sle=\"0.025\"} ", b);
    expect(text, key, 3);
    snprintf(key, sizeof key, "%sle=\"+Inf\"} ", b);
    expect(text, key, 3);
    expect(text, "gpuprobe_http_request_duration_seconds_count{method=\"GET\",route=\"/a\"} ", 3);
    expect(text, "gpuprobe_http_request_duration_seconds_sum{method=\"GET\",route=\"/a\"} ", 0.0204);
    expect(text, "gpuprobe_http_request_duration_seconds_bucket{method=\"POST\",route=\"/a\","
                 "le=\"600\"} ", 1);
    expect(text, "gpuprobe_http_request_duration_seconds_bucket{method=\"POST\",route=\"/a\","
                 "le=\"+Inf\"} ", 2);
    expect(text, "gpuprobe_http_request_duration_seconds_sum{method=\"POST\",route=\"/a\"} ", 705);
    expect(text, "gpuprobe_http_request_duration_seconds_count{method=\"\",route=\"\"} ", 1);
    /* /a/{id} answered only a status no answer can have: not counted at all */
    assert_null(strstr(text, "route=\"/a/{id}\""));
    assert_int_equal(lines_starting(text, "gpuprobe_http_request_duration_seconds_bucket{"),
                     3 * (REQ_DURATION_NBOUNDS + 1));
    free(text);
    req_stats_free(s);
}

#define THREADS 4
#define PER_THREAD 20000

static void *observe_many(void *arg)
{
    struct req_stats *s = arg;
    for (int i = 0; i < PER_THREAD; i++)
        req_stats_observe(s, (size_t)(i % 2), 200, 0.001);
    return NULL;
}

static void test_http_counts_from_threads(void **state)
{
    (void)state;
    struct req_stats *s = req_stats_new(NTABLE);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, observe_many, s), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(req_stats_requests(s, 0, 200), THREADS * PER_THREAD / 2);
    assert_int_equal(req_stats_requests(s, 1, 200), THREADS * PER_THREAD / 2);
    uint64_t counts[REQ_DURATION_NBOUNDS + 1];
    double sum;
    assert_int_equal(req_stats_durations(s, 0, counts, &sum), THREADS * PER_THREAD / 2);
    assert_true(fabs(sum - THREADS * PER_THREAD / 2 * 0.001) < 1e-6);
    req_stats_free(s);
}

/* ---- worker failures ---------------------------------------------------------- */

static void test_worker_failures(void **state)
{
    (void)state;
    assert_true(job_kind_count() <= WORKER_FAILURE_KINDS);
    worker_failure_count(job_kind_find("test"), WORKER_CRASHED);
    worker_failure_count(job_kind_find("test"), WORKER_CRASHED);
    worker_failure_count(job_kind_find("latency"), WORKER_INVALID_DOCUMENT);
    struct prom_page p = {0};
    metrics_write_worker_failures(&p);
    char *text = take(&p);
    assert_int_equal(check_page(text), 1);
    assert_non_null(strstr(text, "# TYPE gpuprobe_worker_failures_total counter\n"));
    assert_int_equal(lines_starting(text, "gpuprobe_worker_failures_total{"),
                     job_kind_count() * WORKER_FAILURE_COUNT);
    expect(text, "gpuprobe_worker_failures_total{kind=\"test\",reason=\"crash\"} ", 2);
    expect(text, "gpuprobe_worker_failures_total{kind=\"test\",reason=\"timeout\"} ", 0);
    expect(text, "gpuprobe_worker_failures_total{kind=\"latency\",reason=\"invalid_document\"} ",
           1);
    expect(text, "gpuprobe_worker_failures_total{kind=\"suite\",reason=\"exit_status\"} ", 0);
    free(text);
}

/* ---- a store ------------------------------------------------------------------ */

/* A reference bundle (data/reference/) into s. */
static void import_reference(store *s, const char *path)
{
    json_t *b = rdb_load(path);
    rdb_import(s, b);
    json_decref(b);
}

static void test_jobs(void **state)
{
    struct rdb *f = *state;
    char err[512];
    int64_t id;
    import_reference(f->s, "data/reference/h200.json");
    assert_int_equal(store_job_insert(f->s, "test", NULL, "{}", 60, 1, &id, err, sizeof err), 0);
    assert_int_equal(store_job_insert(f->s, "test", NULL, "{}", 60, 1, &id, err, sizeof err), 0);
    assert_int_equal(store_job_start(f->s, id, err, sizeof err), 0);
    assert_int_equal(store_job_insert(f->s, "retired-kind", NULL, "{}", 60, 1, &id, err,
                                      sizeof err), 0);
    struct prom_page p = {0};
    assert_int_equal(metrics_write_jobs(f->s, &p, err, sizeof err), 0);
    char *text = take(&p);
    assert_int_equal(check_page(text), 2);
    expect(text, "gpuprobe_jobs{kind=\"suite\",state=\"succeeded\"} ", 1);
    expect(text, "gpuprobe_jobs{kind=\"model-validation\",state=\"succeeded\"} ", 1);
    expect(text, "gpuprobe_jobs{kind=\"test\",state=\"queued\"} ", 1);
    expect(text, "gpuprobe_jobs{kind=\"test\",state=\"running\"} ", 1);
    expect(text, "gpuprobe_jobs{kind=\"latency\",state=\"failed\"} ", 0);
    expect(text, "gpuprobe_jobs{kind=\"retired-kind\",state=\"queued\"} ", 1);
    assert_int_equal(lines_starting(text, "gpuprobe_jobs{"), job_kind_count() * 5 + 1);
    expect(text, "gpuprobe_job_queue_length ", 2);
    free(text);
}

static void test_reference_figures(void **state)
{
    struct rdb *f = *state;
    char err[512];
    import_reference(f->s, "data/reference/h200.json");
    import_reference(f->s, "data/reference/h100.json");
    /* the H200 as if attached here as GPU 3, its name with characters to escape */
    struct metrics_device dev = {H200, "NVIDIA \"H200\"", "node7", 3};
    struct prom_page p = {0};
    assert_int_equal(metrics_write_figures(f->s, &dev, 1, &p, err, sizeof err), 0);
    char *text = take(&p);
    int families = check_page(text);
    assert_true(families >= 15 && (size_t)families <= fleet_family_count());
    assert_int_equal(lines_starting(text, "gpuprobe_"), 281);
    assert_null(strstr(text, H100));

    const char *labels = "{gpu=\"3\",UUID=\"" H200 "\",model_name=\"NVIDIA \\\"H200\\\"\","
                         "Hostname=\"node7\"";
    char key[512];
    snprintf(key, sizeof key, "gpuprobe_memory_latency_cycles%s,load=\"ca\",level=\"1\"} ",
             labels);
    double l1 = value_of(text, key);
    assert_true(l1 > 30 && l1 < 34); /* the H200's L1: about 32 cycles */
    snprintf(key, sizeof key, "gpuprobe_shared_memory_latency_cycles%s} ", labels);
    assert_false(isnan(value_of(text, key)));
    snprintf(key, sizeof key, "gpuprobe_register_bank_map%s,value=\"2 classes, map ", labels);
    assert_int_equal(lines_starting(text, key), 1);
    snprintf(key, sizeof key, "gpuprobe_dual_issue_observed%s,value=\"no\"} ", labels);
    expect(text, key, 1);
    assert_non_null(strstr(text, "# HELP gpuprobe_instruction_latency_cycles Dependent-chain "
                                 "latency of one instruction (latency probe); unit: cycles\n"
                                 "# TYPE gpuprobe_instruction_latency_cycles gauge\n"));

    /* families in the table's order */
    const char *at = text;
    for (size_t i = 0; i < fleet_family_count(); i++) {
        char help[200];
        snprintf(help, sizeof help, "# HELP %s ", fleet_family_at(i)->name);
        const char *found = strstr(text, help);
        if (!found)
            continue;
        assert_true(found >= at);
        at = found;
    }
    free(text);
}

static void test_device_not_attached(void **state)
{
    struct rdb *f = *state;
    char err[512];
    import_reference(f->s, "data/reference/h100.json");
    struct metrics_device devs[] = {{H100, "NVIDIA H100 80GB HBM3", "reference", -1},
                                    {H200, "NVIDIA H200", "reference", -1}};
    struct prom_page p = {0};
    /* the H200 has no figures in this store: it adds nothing */
    assert_int_equal(metrics_write_figures(f->s, devs, 2, &p, err, sizeof err), 0);
    char *text = take(&p);
    check_page(text);
    assert_int_equal(lines_starting(text, "gpuprobe_"), 281);
    assert_null(strstr(text, H200));
    assert_non_null(strstr(text, "gpuprobe_dram_bandwidth_bytes_per_second{gpu=\"\",UUID=\"" H100
                                 "\",model_name=\"NVIDIA H100 80GB HBM3\","
                                 "Hostname=\"reference\"} "));
    free(text);
}

static void test_build_and_store(void **state)
{
    struct rdb *f = *state;
    char wal[200];
    struct stat db_st, wal_st;
    import_reference(f->s, "data/reference/h100.json");
    snprintf(wal, sizeof wal, "%s-wal", f->t->path);
    struct prom_page p = {0};
    metrics_write_build_and_store(f->t->path, &p);
    char *text = take(&p);
    assert_int_equal(check_page(text), 2);
    assert_int_equal(stat(f->t->path, &db_st), 0);
    double want = (double)db_st.st_size + (stat(wal, &wal_st) == 0 ? (double)wal_st.st_size : 0);
    assert_true(want > 100000);
    expect(text, "gpuprobe_store_size_bytes ", want);
    char build[200];
    snprintf(build, sizeof build, "gpuprobe_build_info{version=\"%s\",revision=\"",
             GPUPROBE_VERSION);
    assert_int_equal(lines_starting(text, build), 1);
    free(text);

    /* no database file: no size to tell, and no family for it */
    p = (struct prom_page){0};
    metrics_write_build_and_store("/nonexistent/gpuprobe.db", &p);
    text = take(&p);
    assert_int_equal(check_page(text), 1);
    assert_null(strstr(text, "gpuprobe_store_size_bytes"));
    free(text);
}

/* ---- the page's documentation ---------------------------------------------------- */

/* The line of docs/metrics.md's table that starts with `name` (a copy), or
 * NULL. */
static char *doc_row(const char *doc, const char *name)
{
    char key[200];
    snprintf(key, sizeof key, "| `%s` |", name);
    const char *at = strstr(doc, key);
    return at ? strndup(at, strcspn(at, "\n")) : NULL;
}

/* docs/metrics.md has a row for every family the code writes, the figures'
 * with each of their labels. */
static void test_docs_list_every_family(void **state)
{
    struct rdb *f = *state;
    char err[512];
    char *doc = must_read_file("docs/metrics.md", NULL);
    import_reference(f->s, "data/reference/h200.json");
    struct req_stats *s = req_stats_new(NTABLE);
    req_stats_observe(s, 0, 200, 0.01);
    struct metrics_device dev = {H200, "NVIDIA H200", "reference", -1};
    struct prom_page p = {0};
    metrics_write_build_and_store(f->t->path, &p);
    assert_int_equal(metrics_write_jobs(f->s, &p, err, sizeof err), 0);
    metrics_write_worker_failures(&p);
    metrics_write_http(s, table, &p);
    assert_int_equal(metrics_write_figures(f->s, &dev, 1, &p, err, sizeof err), 0);
    char *text = take(&p);
    assert_true(check_page(text) >= 20);
    for (const char *t = strstr(text, "# TYPE "); t; t = strstr(t + 1, "# TYPE ")) {
        char name[160];
        sample_name(t + 7, name, sizeof name);
        char *row = doc_row(doc, name);
        if (!row)
            fail_msg("docs/metrics.md has no row for %s", name);
        free(row);
    }
    for (size_t i = 0; i < fleet_family_count(); i++) {
        const struct fleet_family *fam = fleet_family_at(i);
        char *row = doc_row(doc, fam->name);
        if (!row)
            fail_msg("docs/metrics.md has no row for %s", fam->name);
        char labels[200];
        snprintf(labels, sizeof labels, "%s", fam->labels);
        for (char *save, *l = strtok_r(labels, ",", &save); l; l = strtok_r(NULL, ",", &save)) {
            char quoted[64];
            snprintf(quoted, sizeof quoted, "`%s`", l);
            if (!strstr(row, quoted))
                fail_msg("docs/metrics.md's row of %s does not name its label %s", fam->name, l);
        }
        if (fam->categorical && !strstr(row, "`" METRICS_LABEL_CATEGORY "`"))
            fail_msg("docs/metrics.md's row of %s does not name the label value", fam->name);
        free(row);
    }
    free(text);
    req_stats_free(s);
    free(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http_requests_and_durations),
        cmocka_unit_test(test_http_counts_from_threads),
        cmocka_unit_test(test_worker_failures),
        cmocka_unit_test_setup_teardown(test_jobs, rdb_setup_gpuprobe, rdb_teardown),
        cmocka_unit_test_setup_teardown(test_reference_figures, rdb_setup_gpuprobe, rdb_teardown),
        cmocka_unit_test_setup_teardown(test_device_not_attached, rdb_setup_gpuprobe, rdb_teardown),
        cmocka_unit_test_setup_teardown(test_build_and_store, rdb_setup_gpuprobe, rdb_teardown),
        cmocka_unit_test_setup_teardown(test_docs_list_every_family, rdb_setup_gpuprobe, rdb_teardown),
    };
    return cmocka_run_group_tests_name("metrics_page", tests, NULL, NULL);
}
