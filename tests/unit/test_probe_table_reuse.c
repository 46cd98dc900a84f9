/*
 * The CLI's bank table shows the reuse cache as the second method gives it
 * (server/cli/probe_table_edits.c, probes/banks_reuse.h), no GPU: the
 * stored H200 banks result with a reuse member made from one design's
 * simulated rates prints a row per question with its conflicts per
 * period and the fitting design; a question without contrast prints "-";
 * a result stored before the member prints no reuse rows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/banks_reuse.h"
#include "server/cli/probe_table_internal.h"

static char *table(const json_t *doc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    pt_banks_table(f, doc);
    fclose(f);
    return buf;
}

static void test_reuse_rows(void **state)
{
    (void)state;
    json_error_t je;
    json_t *doc = json_load_file("tests/fixtures/results/banks-h200.json", 0, &je);
    assert_non_null(doc);
    char *out = table(doc);
    assert_null(strstr(out, "reuse question"));
    free(out);
    const struct reuse_design *d = &reuse_designs[1];
    double ratio[REUSE_QUESTIONS][REUSE_VARIANTS];
    for (int q = 0; q < REUSE_QUESTIONS; q++)
        for (int v = 0; v < REUSE_VARIANTS; v++)
            ratio[q][v] = 8.0 / (8 + reuse_predict(d, (enum reuse_question)q,
                                                    (enum reuse_variant)v, NULL));
    ratio[REUSE_Q_WRITE][REUSE_CLEARED] = ratio[REUSE_Q_WRITE][REUSE_FREE];   /* no contrast */
    json_object_set_new(doc, "reuse_cache", reuse_analyse(ratio, NULL));
    out = table(doc);
    assert_non_null(strstr(out, "conflicts"));
    /* distance: 6 conflicts per period, a hit */
    char *row = strstr(out, "\ndistance ");
    assert_non_null(row);
    assert_non_null(strstr(row, " 6.00 "));
    assert_true(strstr(row, "hit") < strchr(row + 1, '\n'));
    row = strstr(out, "\nwrite ");
    assert_non_null(row);
    assert_non_null(strstr(row, " - "));
    /* the write question undetermined: no design fits every question */
    assert_non_null(strstr(out, "cache design"));
    assert_non_null(strstr(out, "not determined: no candidate design fits"));
    free(out);
    json_decref(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reuse_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
