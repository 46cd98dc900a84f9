/*
 * Unit tests holding every list of trace settings to the one table of
 * trace/params.c: for each setting, the trace-sort kind's schema has an
 * entry of the same name, type, bounds, choices and fixed default and no
 * other besides the files; the query-argument parser (trace_sort_param_text)
 * takes it spelt with '-' and with '_'; `gpuprobe trace --help` lists its
 * option; and the settings table of docs/trace-sort.md is exactly the one
 * the table renders (GPUPROBE_UPDATE_DOCS=1 rewrites it). A setting added to
 * the table and missing anywhere, or a stale row in the docs, fails here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/cli/cli.h"
#include "server/jobs/kind_trace.h"
#include "tests/unit/support/tmpfile.h"
#include "trace/params.h"

#define DOCS "docs/trace-sort.md"
#define BEGIN "<!-- settings: generated from trace/params.c"
#define END "<!-- end of settings -->"

static const struct param_spec *schema_entry(const char *name)
{
    for (size_t i = 0; i < kind_trace_sort.nparams; i++)
        if (strcmp(kind_trace_sort.params[i].name, name) == 0)
            return &kind_trace_sort.params[i];
    return NULL;
}

static void test_schema_is_the_table(void **state)
{
    (void)state;
    static const enum param_type types[] = {
        [TRACE_SETTING_INT] = PARAM_INT, [TRACE_SETTING_U64] = PARAM_STRING,
        [TRACE_SETTING_NUMBER] = PARAM_NUMBER, [TRACE_SETTING_CHOICE] = PARAM_ENUM};
    for (size_t i = 0; i < TRACE_SETTING_COUNT; i++) {
        const struct trace_setting *s = trace_setting_at(i);
        const struct param_spec *p = schema_entry(s->name);
        if (!p)
            fail_msg("setting %s is not in the trace-sort schema", s->name);
        assert_int_equal(p->type, types[s->type]);
        assert_true(p->min == s->min && p->max == s->max);
        /* the table's choices, but placement's dealt (a measured order no
         * setting carries: server/jobs/kind_trace.c) */
        size_t k = 0;
        for (size_t c = 0; s->choices && s->choices[c]; c++) {
            if (strcmp(s->name, "placement") == 0 && strcmp(s->choices[c], "dealt") == 0)
                continue;
            assert_non_null(p->choices[k]);
            assert_string_equal(p->choices[k++], s->choices[c]);
        }
        assert_true(!s->choices ? p->choices == NULL : p->choices[k] == NULL);
        if ((p->default_json == NULL) != (s->fixed_default == NULL) ||
            (p->default_json && strcmp(p->default_json, s->fixed_default) != 0))
            fail_msg("%s: the schema's default differs from the table's", s->name);
        assert_non_null(p->check);
    }
    /* the schema holds the three files and the settings, nothing else */
    assert_int_equal(kind_trace_sort.nparams, 3 + TRACE_SETTING_COUNT);
    for (size_t i = 0; i < kind_trace_sort.nparams; i++) {
        const char *n = kind_trace_sort.params[i].name;
        if (strcmp(n, "input") && strcmp(n, "output") && strcmp(n, "pc_flags") &&
            !trace_setting_find(n))
            fail_msg("schema entry %s is not a trace setting", n);
    }
}

/* A value the setting takes, as text. */
static void sample_value(const struct trace_setting *s, char *buf, size_t len)
{
    if (s->type == TRACE_SETTING_CHOICE)
        snprintf(buf, len, "%s", s->choices[0]);
    else if (s->type == TRACE_SETTING_U64)
        snprintf(buf, len, "1");
    else
        snprintf(buf, len, "%.0f", s->max);
}

static void test_query_arguments_take_every_setting(void **state)
{
    (void)state;
    for (size_t i = 0; i < TRACE_SETTING_COUNT; i++) {
        const struct trace_setting *s = trace_setting_at(i);
        char value[64], hyphened[64], err[512];
        sample_value(s, value, sizeof value);
        snprintf(hyphened, sizeof hyphened, "%s", s->name);
        for (char *c = hyphened; *c; c++)
            *c = *c == '_' ? '-' : *c;
        json_t *p = json_object();
        if (trace_sort_param_text(p, s->name, value, err, sizeof err) < 0)
            fail_msg("query argument %s=%s refused: %s", s->name, value, err);
        json_object_clear(p);
        if (trace_sort_param_text(p, hyphened, value, err, sizeof err) < 0)
            fail_msg("query argument %s=%s refused: %s", hyphened, value, err);
        assert_non_null(json_object_get(p, s->name));
        /* the setting once more, under either spelling, is refused */
        if (trace_sort_param_text(p, s->name, value, err, sizeof err) == 0 || !strstr(err, "more than once"))
            fail_msg("%s given twice: '%s'", s->name, err);
        /* and the schema takes what the parser made */
        json_object_set_new(p, "input", json_string("x"));
        json_t *ok = trace_sort_params_check(p, err, sizeof err, hyphened, sizeof hyphened);
        if (!ok)
            fail_msg("the schema refused %s=%s: %s", s->name, value, err);
        json_decref(ok);
        json_decref(p);
    }
}

static void test_help_lists_every_setting(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    cli_trace_usage(f);
    fclose(f);
    for (size_t i = 0; i < TRACE_SETTING_COUNT; i++) {
        char opt[80];
        int n = snprintf(opt, sizeof opt, "\n  --%s ", trace_setting_at(i)->name);
        for (int k = 5; k < n; k++)
            opt[k] = opt[k] == '_' ? '-' : opt[k];
        if (!strstr(text, opt))
            fail_msg("gpuprobe trace --help does not list%s", opt + 2);
    }
    free(text);
}

/* The docs table as the settings table renders it. */
static char *render_docs_table(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    fprintf(f, "| setting | meaning | default | values |\n|---|---|---|---|\n");
    for (size_t i = 0; i < TRACE_SETTING_COUNT; i++) {
        const struct trace_setting *s = trace_setting_at(i);
        char bounds[200];
        trace_setting_bounds(s, bounds, sizeof bounds);
        fprintf(f, "| `%s` | %s | %s | %s |\n", s->name, s->meaning, s->default_text, bounds);
    }
    fclose(f);
    return text;
}

/* Rewrites the generated part of the docs with table (GPUPROBE_UPDATE_DOCS=1). */
static void update_docs(const char *docs, const char *start, const char *end, const char *table)
{
    FILE *f = fopen(DOCS, "w");
    assert_non_null(f);
    fprintf(f, "%.*s%s%s", (int)(start - docs), docs, table, end);
    fclose(f);
}

static void test_docs_table_is_the_table(void **state)
{
    (void)state;
    char *docs = must_read_file(DOCS, NULL), *table = render_docs_table();
    char *begin = strstr(docs, BEGIN);
    if (!begin)
        fail_msg("%s lacks the marker '%s'", DOCS, BEGIN);
    char *start = strchr(begin, '\n') + 1, *end = strstr(start, END);
    if (!end)
        fail_msg("%s lacks the marker '%s'", DOCS, END);
    size_t n = (size_t)(end - start);
    if (getenv("GPUPROBE_UPDATE_DOCS"))
        update_docs(docs, start, end, table);
    else if (n != strlen(table) || memcmp(start, table, n) != 0)
        fail_msg("the settings table of %s is not trace/params.c's; expected:\n%s(run the test "
                 "with GPUPROBE_UPDATE_DOCS=1 to rewrite it)", DOCS, table);
    free(table);
    free(docs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema_is_the_table),
        cmocka_unit_test(test_query_arguments_take_every_setting),
        cmocka_unit_test(test_help_lists_every_setting),
        cmocka_unit_test(test_docs_table_is_the_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
