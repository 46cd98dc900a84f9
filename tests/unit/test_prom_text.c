/*
 * Unit tests of the Prometheus text format writer (server/http/prom_text.c):
 * HELP and TYPE lines once per family, HELP text escaped (backslash,
 * newline); label values escaped (backslash, double quote, newline) and
 * UTF-8 passed through; labels spliced as they are, and a spliced empty set
 * left out; a sample without labels; numbers in their shortest exact form,
 * with NaN, +Inf and -Inf spelled as Prometheus reads them; a histogram's
 * buckets cumulative, le ascending and +Inf last, equal to _count, with
 * _sum; an empty page is an empty string.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "server/http/prom_text.h"

/* The page's text; the test owns it. */
static char *take(struct prom_page *p)
{
    size_t len = 0;
    char *text = prom_take(p, &len);
    assert_non_null(text);
    assert_int_equal(strlen(text), len);
    return text;
}

static void test_help_and_type_then_samples(void **state)
{
    (void)state;
    struct prom_page p = {0};
    prom_family(&p, "gpuprobe_x_cycles", "gauge", "Cycles of x: a \\ b\nsecond line \"q\"");
    prom_sample(&p, NULL, 0, 3);
    char *text = take(&p);
    assert_string_equal(text,
                        "# HELP gpuprobe_x_cycles Cycles of x: a \\\\ b\\nsecond line \"q\"\n"
                        "# TYPE gpuprobe_x_cycles gauge\n"
                        "gpuprobe_x_cycles 3\n");
    free(text);
}

static void test_label_values_escaped(void **state)
{
    (void)state;
    struct prom_page p = {0};
    struct prom_label l[] = {
        {"model_name", "NVIDIA \"H200\" \\ rev\nB"},
        {"Hostname", "n\xc3\xb6" "de"}, /* UTF-8 stays as it is */
        {"empty", ""},
    };
    prom_family(&p, "gpuprobe_y", "counter", "y");
    prom_sample(&p, l, 3, 1);
    char *text = take(&p);
    assert_non_null(strstr(text, "gpuprobe_y{model_name=\"NVIDIA \\\"H200\\\" \\\\ rev\\nB\","
                                 "Hostname=\"n\xc3\xb6" "de\",empty=\"\"} 1\n"));
    free(text);
}

static void test_spliced_labels(void **state)
{
    (void)state;
    struct prom_page p = {0};
    struct prom_label own[] = {{"UUID", "GPU-1"}, {NULL, "load=\"ca\",level=\"1\""}};
    struct prom_label none[] = {{"UUID", "GPU-1"}, {NULL, ""}};
    struct prom_label only_none[] = {{NULL, ""}};
    prom_family(&p, "gpuprobe_z", "gauge", "z");
    prom_sample(&p, own, 2, 32.1);
    prom_sample(&p, none, 2, 2);
    prom_sample(&p, only_none, 1, 7);
    char *text = take(&p);
    assert_non_null(strstr(text, "\ngpuprobe_z{UUID=\"GPU-1\",load=\"ca\",level=\"1\"} 32.1\n"));
    assert_non_null(strstr(text, "\ngpuprobe_z{UUID=\"GPU-1\"} 2\n"));
    assert_non_null(strstr(text, "\ngpuprobe_z 7\n"));
    free(text);
}

static void test_numbers(void **state)
{
    (void)state;
    char b[40];
    prom_number(b, sizeof b, 32.1);
    assert_string_equal(b, "32.1");
    prom_number(b, sizeof b, 0.1 + 0.2); /* needs 17 digits to read back */
    assert_string_equal(b, "0.30000000000000004");
    assert_true(strtod(b, NULL) == 0.1 + 0.2);
    prom_number(b, sizeof b, 4563229520399.079);
    assert_true(strtod(b, NULL) == 4563229520399.079);
    prom_number(b, sizeof b, 1e21);
    assert_string_equal(b, "1e+21");
    prom_number(b, sizeof b, 9007199254740992.0); /* 2^53: a counter stays exact */
    assert_string_equal(b, "9007199254740992");
    prom_number(b, sizeof b, 0);
    assert_string_equal(b, "0");
    prom_number(b, sizeof b, -2.5);
    assert_string_equal(b, "-2.5");
    prom_number(b, sizeof b, NAN);
    assert_string_equal(b, "NaN");
    prom_number(b, sizeof b, INFINITY);
    assert_string_equal(b, "+Inf");
    prom_number(b, sizeof b, -INFINITY);
    assert_string_equal(b, "-Inf");
}

/* The value of the line that starts with prefix, or fails. */
static double value_after(const char *text, const char *prefix)
{
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line += line != NULL) {
        if (strncmp(line, prefix, strlen(prefix)) == 0)
            return strtod(line + strlen(prefix), NULL);
    }
    fail_msg("no line starts with %s in:\n%s", prefix, text);
    return 0;
}

static void test_histogram_cumulative(void **state)
{
    (void)state;
    static const double bounds[] = {0.001, 0.01, 0.1, 1};
    /* per bucket: 2 up to 1 ms, none up to 10 ms, 3 up to 100 ms, 1 up to 1 s, 4 above */
    static const uint64_t counts[] = {2, 0, 3, 1, 4};
    struct prom_histogram h = {bounds, 4, counts, 12.75};
    struct prom_label l[] = {{"method", "GET"}, {"route", "/api/v1/jobs/{id}"}};
    struct prom_page p = {0};
    prom_family(&p, "gpuprobe_h_seconds", "histogram", "h");
    prom_histogram(&p, l, 2, &h);
    char *text = take(&p);
    static const char *const want =
        "# HELP gpuprobe_h_seconds h\n"
        "# TYPE gpuprobe_h_seconds histogram\n"
        "gpuprobe_h_seconds_bucket{method=\"GET\",route=\"/api/v1/jobs/{id}\",le=\"0.001\"} 2\n"
        "gpuprobe_h_seconds_bucket{method=\"GET\",route=\"/api/v1/jobs/{id}\",le=\"0.01\"} 2\n"
        "gpuprobe_h_seconds_bucket{method=\"GET\",route=\"/api/v1/jobs/{id}\",le=\"0.1\"} 5\n"
        "gpuprobe_h_seconds_bucket{method=\"GET\",route=\"/api/v1/jobs/{id}\",le=\"1\"} 6\n"
        "gpuprobe_h_seconds_bucket{method=\"GET\",route=\"/api/v1/jobs/{id}\",le=\"+Inf\"} 10\n"
        "gpuprobe_h_seconds_sum{method=\"GET\",route=\"/api/v1/jobs/{id}\"} 12.75\n"
        "gpuprobe_h_seconds_count{method=\"GET\",route=\"/api/v1/jobs/{id}\"} 10\n";
    assert_string_equal(text, want);
    free(text);
}

static void test_histogram_without_labels(void **state)
{
    (void)state;
    static const double bounds[] = {1};
    static const uint64_t counts[] = {0, 1};
    struct prom_histogram h = {bounds, 1, counts, 3};
    struct prom_page p = {0};
    prom_family(&p, "gpuprobe_h2_seconds", "histogram", "h2");
    prom_histogram(&p, NULL, 0, &h);
    char *text = take(&p);
    assert_true(value_after(text, "gpuprobe_h2_seconds_bucket{le=\"1\"} ") == 0);
    assert_true(value_after(text, "gpuprobe_h2_seconds_bucket{le=\"+Inf\"} ") == 1);
    assert_true(value_after(text, "gpuprobe_h2_seconds_sum ") == 3);
    assert_true(value_after(text, "gpuprobe_h2_seconds_count ") == 1);
    free(text);
}

static void test_empty_page(void **state)
{
    (void)state;
    struct prom_page p = {0};
    char *text = take(&p);
    assert_string_equal(text, "");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_and_type_then_samples),
        cmocka_unit_test(test_label_values_escaped),
        cmocka_unit_test(test_spliced_labels),
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_histogram_cumulative),
        cmocka_unit_test(test_histogram_without_labels),
        cmocka_unit_test(test_empty_page),
    };
    return cmocka_run_group_tests_name("prom_text", tests, NULL, NULL);
}
