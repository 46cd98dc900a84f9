/*
 * Unit tests of the probe job kinds (server/jobs/kind_probes.c) and of the
 * terminal table of `gpuprobe probe` (server/cli/probe_table.c): the kinds are
 * registered with their parameter schemas, the instruction list is checked
 * against the latency catalog at validation time, the result checks accept
 * a well-formed document and refuse a suite that lacks a probe, and the
 * table shows medians, spreads and the reasons for missing figures (for the
 * banks, control-codes and dual-issue tables, on the synthetic fixtures of
 * tests/fixtures/results/).
 * No GPU is needed: nothing here runs a probe.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "probes/latency.h"
#include "server/jobs/registry.h"
#include "server/cli/probe_table.h"
#include "tests/unit/support/resultdb.h"

#define DEVICE "{\"uuid\":\"GPU-1\",\"name\":\"NVIDIA H200\",\"compute_capability\":\"9.0\"}"
#define PROV DEVICE ",\"driver_version\":\"580.95.05\",\"clock_mhz\":{\"before\":1980.0," \
                    "\"after\":1965.0},\"repeats\":3,\"wall_s\":2.5"

static const char latency_doc[] =
    "{\"probe\":\"latency\",\"device\":" PROV ",\"entries\":["
    "{\"name\":\"ffma\",\"group\":\"fp32\",\"sass_opcode\":\"FFMA\",\"per_step\":1,"
    " \"sass\":{\"verified\":true,\"fixed_latency\":true,\"compiler_stall\":4},"
    " \"latency_cycles\":{\"median\":4.0,\"min\":4.0,\"max\":4.03125},"
    " \"throughput_per_clock_per_sm\":{\"median\":127.5,\"min\":127.0,\"max\":128.0}},"
    "{\"name\":\"lds\",\"group\":\"shared\",\"sass_opcode\":\"LDS\",\"per_step\":1,"
    " \"sass\":{\"verified\":false},\"error\":\"the compiled code is not what the probe times\"},"
    /* a wgmma entry's shape (made-up figures: no GPU has run one yet) */
    "{\"name\":\"wgmma_f16_ss_n128\",\"group\":\"tensor\",\"sass_opcode\":\"HGMMA\","
    " \"per_step\":1,\"sass\":{\"verified\":true},"
    " \"latency_cycles\":{\"median\":128.0,\"min\":127.0,\"max\":129.0},"
    " \"throughput_per_clock_per_sm\":{\"median\":0.01234,\"min\":0.0123,\"max\":0.0124},"
    " \"throughput_one_warpgroup_per_clock_per_sm\":{\"median\":0.01111,\"min\":0.011,"
    "  \"max\":0.0112},\"tflops\":{\"median\":750.5,\"min\":750.0,\"max\":751.0}}"
    "]}";

static const char memory_doc[] =
    "{\"probe\":\"memory\",\"device\":" PROV ","
    "\"curves\":{\"ca\":[{\"bytes\":1024,\"cycles\":{\"median\":33.0,\"min\":33.0,\"max\":34.0}}],"
    " \"cg\":\"module build failed\"},"
    "\"levels\":{\"ca\":[{\"level\":1,\"cycles\":33.0,\"up_to_bytes\":196608.0},"
    "  {\"level\":2,\"cycles\":600.0,\"up_to_bytes\":null}],"
    " \"cg\":\"the curve could not be analysed\"},"
    "\"shared_cycles\":{\"cycles\":{\"median\":30.0,\"min\":30.0,\"max\":31.0}},"
    "\"departure\":{\"coalesced_cycles\":{\"median\":2.0,\"min\":2.0,\"max\":2.5},"
    " \"uncoalesced_cycles\":\"no module\"},"
    "\"device_memory_cycles\":{\"ca\":{\"median\":684.0,\"min\":683.5,\"max\":685.0},"
    " \"cg\":{\"error\":\"no module\"}}}";

static char err[1280], field[128];

static json_t *parse(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &e);
    if (!j)
        fail_msg("test document: %s", e.text);
    return j;
}

static const struct job_kind *kind(const char *name)
{
    const struct job_kind *k = job_kind_find(name);
    if (!k)
        fail_msg("no job kind '%s'", name);
    return k;
}

/* Validates params text for kind; NULL (with err/field) when refused. */
static json_t *validate(const char *name, const char *params)
{
    json_t *given = params ? parse(params) : NULL;
    err[0] = field[0] = '\0';
    json_t *out = job_params_validate(kind(name), given, err, sizeof err, field, sizeof field);
    json_decref(given);
    return out;
}

/* ---- kinds ------------------------------------------------------------------------ */

static void test_kinds_are_registered(void **state)
{
    static const char *const names[] = {"latency", "memory", "banks", "control-codes",
                                        "dual-issue", "suite"};
    (void)state;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const struct job_kind *k = kind(names[i]);
        assert_true(k->needs_gpu);
        assert_true(k->default_timeout_s >= 600);
        assert_non_null(k->run);
        assert_non_null(k->check_result);
        assert_non_null(k->save);
        assert_true(strlen(k->summary) > 10);
    }
}

static void test_latency_schema(void **state)
{
    (void)state;
    json_t *j = job_kind_to_json(kind("latency"));
    json_t *rep = json_object_get(json_object_get(j, "params"), "repeats");
    json_t *ins = json_object_get(json_object_get(j, "params"), "instructions");
    assert_string_equal(json_string_value(json_object_get(rep, "type")), "integer");
    assert_int_equal(json_integer_value(json_object_get(rep, "minimum")), 1);
    assert_int_equal(json_integer_value(json_object_get(rep, "maximum")), 50);
    assert_int_equal(json_integer_value(json_object_get(rep, "default")), 5);
    assert_string_equal(json_string_value(json_object_get(ins, "type")), "string");
    assert_string_equal(json_string_value(json_object_get(ins, "default")), "all");
    assert_int_equal(json_integer_value(json_object_get(j, "default_timeout_s")), 600);
    json_decref(j);
}

/* The probes that edit machine code: 3 repeats by default; banks samples. */
static void test_edit_probe_schemas(void **state)
{
    static const char *const names[] = {"banks", "control-codes", "dual-issue"};
    (void)state;
    for (size_t i = 0; i < 3; i++) {
        json_t *j = job_kind_to_json(kind(names[i]));
        json_t *rep = json_object_get(json_object_get(j, "params"), "repeats");
        assert_int_equal(json_integer_value(json_object_get(rep, "minimum")), 1);
        assert_int_equal(json_integer_value(json_object_get(rep, "maximum")), 50);
        assert_int_equal(json_integer_value(json_object_get(rep, "default")), 3);
        assert_int_equal(json_object_size(json_object_get(j, "params")), i == 0 ? 2 : 1);
        json_decref(j);
    }
    json_t *p = validate("banks", NULL);
    assert_int_equal(json_integer_value(json_object_get(p, "sample")), 64);
    assert_int_equal(json_integer_value(json_object_get(p, "repeats")), 3);
    json_decref(p);
    p = validate("banks", "{\"sample\":0}");
    assert_non_null(p);
    json_decref(p);
    assert_null(validate("banks", "{\"sample\":10001}"));
    assert_string_equal(field, "params.sample");
    assert_null(validate("control-codes", "{\"sample\":5}"));
    assert_string_equal(field, "params.sample");
    assert_null(validate("dual-issue", "{\"repeats\":0}"));
    assert_string_equal(field, "params.repeats");
}

static void test_defaults_filled(void **state)
{
    (void)state;
    json_t *p = validate("latency", NULL);
    assert_non_null(p);
    assert_int_equal(json_integer_value(json_object_get(p, "repeats")), 5);
    assert_string_equal(json_string_value(json_object_get(p, "instructions")), "all");
    json_decref(p);
    p = validate("memory", "{\"repeats\":7}");
    assert_non_null(p);
    assert_int_equal(json_integer_value(json_object_get(p, "repeats")), 7);
    json_decref(p);
}

static void test_instructions_checked_against_catalog(void **state)
{
    (void)state;
    json_t *p = validate("latency", "{\"instructions\":\"ffma,dfma,lds\"}");
    assert_non_null(p);
    json_decref(p);
    p = validate("latency", "{\"instructions\":\"ffma,nosuch\"}");
    assert_null(p);
    assert_string_equal(field, "params.instructions");
    assert_non_null(strstr(err, "'nosuch'"));
    for (size_t i = 0; i < lat_catalog_count; i++) /* the list of known names */
        assert_non_null(strstr(err, lat_catalog[i].name));
    static const char *const bad[] = {"{\"instructions\":\"\"}", "{\"instructions\":\"ffma,\"}",
                                      "{\"instructions\":\",ffma\"}",
                                      "{\"instructions\":\"ffma,,dfma\"}",
                                      "{\"instructions\":\"FFMA\"}",
                                      "{\"instructions\":3}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (validate("latency", bad[i]))
            fail_msg("%s was accepted", bad[i]);
        assert_string_equal(field, "params.instructions");
    }
}

static void test_repeats_range_and_unknown(void **state)
{
    (void)state;
    static const char *const bad[] = {"{\"repeats\":0}", "{\"repeats\":51}", "{\"repeats\":2.5}"};
    for (size_t i = 0; i < 3; i++) {
        assert_null(validate("latency", bad[i]));
        assert_string_equal(field, "params.repeats");
    }
    assert_null(validate("memory", "{\"instructions\":\"ffma\"}"));
    assert_string_equal(field, "params.instructions");
    assert_null(validate("suite", "{\"repeats\":100}"));
}

static void test_result_checks(void **state)
{
    (void)state;
    json_t *lat = parse(latency_doc), *mem = parse(memory_doc);
    assert_int_equal(kind("latency")->check_result(lat, err, sizeof err), 0);
    assert_int_equal(kind("memory")->check_result(mem, err, sizeof err), 0);
    assert_int_equal(kind("latency")->check_result(mem, err, sizeof err), -1);
    assert_non_null(strstr(err, "probe"));
    json_t *suite = json_pack("{s:O}", "latency", lat);
    assert_int_equal(kind("suite")->check_result(suite, err, sizeof err), -1);
    assert_non_null(strstr(err, "memory"));
    json_object_set(suite, "memory", mem);
    assert_int_equal(kind("suite")->check_result(suite, err, sizeof err), -1);
    assert_non_null(strstr(err, "banks"));
    /* every member is there; those that failed say why */
    json_object_set_new(suite, "banks", json_pack("{s:s}", "error", "no GPU"));
    json_object_set_new(suite, "control-codes", json_pack("{s:s}", "error", "no GPU"));
    json_object_set_new(suite, "dual-issue", json_pack("{s:s}", "error", "no GPU"));
    assert_int_equal(kind("suite")->check_result(suite, err, sizeof err), 0);
    json_decref(suite);
    json_decref(lat);
    json_decref(mem);
}

/* ---- the table -------------------------------------------------------------------- */

static char *table_of(const char *text)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    json_t *doc = parse(text);
    assert_non_null(f);
    probe_table_print(f, doc);
    fclose(f);
    json_decref(doc);
    return buf;
}

static void test_latency_table(void **state)
{
    (void)state;
    char *t = table_of(latency_doc);
    assert_non_null(strstr(t, "NVIDIA H200"));
    assert_non_null(strstr(t, "1980 -> 1965 MHz"));
    assert_non_null(strstr(t, "ffma"));
    assert_non_null(strstr(t, "FFMA"));
    assert_non_null(strstr(t, "4.00 [4.00-4.03]"));
    assert_non_null(strstr(t, "127.50"));
    assert_non_null(strstr(t, "not measured: the compiled code is not what the probe times"));
    /* a wgmma row: its small rates with four digits, one warpgroup's, TFLOP/s */
    assert_non_null(strstr(t, "wgmma_f16_ss_n128"));
    assert_non_null(strstr(t, "0.01234"));
    assert_non_null(strstr(t, "0.01111"));
    assert_non_null(strstr(t, "750.50"));
    free(t);
}

static void test_memory_and_suite_table(void **state)
{
    (void)state;
    char *t = table_of(memory_doc);
    assert_non_null(strstr(t, "1 KiB"));
    assert_non_null(strstr(t, "33.00 [33.00-34.00]"));
    assert_non_null(strstr(t, "cg curve: error: module build failed"));
    assert_non_null(strstr(t, "ca level 1: 33.0 cycles, holds up to 192 KiB"));
    assert_non_null(strstr(t, "ca level 2: 600.0 cycles, still rising at the end"));
    assert_non_null(strstr(t, "684.00 [683.50-685.00]"));
    assert_non_null(strstr(t, "30.00 [30.00-31.00]"));
    assert_non_null(strstr(t, "error: no module"));
    free(t);
    char suite[2048];
    snprintf(suite, sizeof suite, "{\"latency\":%s,\"memory\":{\"error\":\"no GPU\"}}",
             latency_doc);
    t = table_of(suite);
    assert_non_null(strstr(t, "FFMA"));
    assert_non_null(strstr(t, "memory: failed: no GPU"));
    free(t);
}

/* The memory table with l1 (JSON text) as the document's l1_sets. */
static char *memory_table_with(const char *l1)
{
    json_t *doc = parse(memory_doc);
    json_object_set_new(doc, "l1_sets", parse(l1));
    char *text = json_dumps(doc, 0), *t = table_of(text);
    free(text);
    json_decref(doc);
    return t;
}

static void test_memory_table_l1_sets(void **state)
{
    (void)state;
    char *t = memory_table_with(
        "{\"status\":\"determined\",\"line_bytes\":128,\"sets\":4,\"ways\":496,"
        "\"set_index\":{\"function\":\"modulo\",\"masks\":[128,256],"
        "\"text\":\"modulo: the set is address bits 7..8 (line mod 4)\","
        "\"option\":\"mask:0x80,0x100\"}}");
    assert_non_null(strstr(t, "L1 sets: 128-byte lines, 4 sets x 496 ways; modulo: the set is "
                              "address bits 7..8"));
    assert_non_null(strstr(t, "gpuprobe trace cache --set-index mask:0x80,0x100"));
    free(t);
    t = memory_table_with("{\"status\":\"not determined\",\"reason\":\"no floor of one set\","
                          "\"set_index\":null}");
    assert_non_null(strstr(t, "L1 sets: not determined: no floor of one set"));
    free(t);
    t = memory_table_with("{\"error\":\"cuMemAlloc(region): out of memory\"}");
    assert_non_null(strstr(t, "L1 sets: error: cuMemAlloc(region): out of memory"));
    free(t);
}

/* The block placement: the order's launch and its check, why it was not
 * determined, an error alone. */
static void test_memory_table_placement(void **state)
{
    (void)state;
    static const char *const members[][2] = {
        {"{\"status\":\"determined\",\"blocks\":4224,\"sms\":132,\"launches\":3,\"same_as_first\":2,"
         "\"order\":[0],\"check\":{\"threads_per_block\":1024,\"blocks\":264,\"predicted\":264}}",
         "block placement: 4224 blocks dealt to 132 SMs in the order measured (2 of 3 launches dealt as the first, itself included); "
         "check: 264 of 264 blocks of 1024 threads where the order predicts"},
        {"{\"status\":\"not determined\",\"reason\":\"the launch was not one wave\"}",
         "block placement: not determined: the launch was not one wave"},
        {"{\"error\":\"cuMemAlloc(out): out of memory\"}", "block placement: error: cuMemAlloc(out)"},
    };
    for (size_t i = 0; i < sizeof members / sizeof members[0]; i++) {
        json_t *doc = parse(memory_doc);
        json_object_set_new(doc, "block_placement", parse(members[i][0]));
        char *text = json_dumps(doc, 0), *t = table_of(text);
        if (!strstr(t, members[i][1]))
            fail_msg("case %zu: no '%s' in:\n%s", i, members[i][1], t);
        free(text);
        free(t);
        json_decref(doc);
    }
}

static void expect_in(const char *table, const char *const *want, size_t n);

/* Distributed shared memory: a line per cluster size, the medians of one
 * that launched, the reason of one that did not, an error alone. */
static void test_memory_table_dsmem(void **state)
{
    (void)state;
    json_t *doc = parse(memory_doc);
    json_object_set_new(doc, "distributed_shared", parse(
        "{\"chase_loads\":2048,\"sizes\":[{\"asked\":2,\"driver_width\":2,\"ranks_seen\":2,"
        "\"agrees\":true,\"launched\":true,\"latency_cycles\":{\"local\":{\"median\":31.5},"
        "\"neighbour\":{\"median\":201.25},\"farthest\":{\"median\":202}},\"bytes_per_clk_sm\":"
        "{\"local\":{\"median\":120.5},\"remote\":{\"median\":30.125}}},{\"asked\":16,"
        "\"driver_width\":null,\"ranks_seen\":0,\"agrees\":false,\"launched\":false,"
        "\"error\":\"no cluster of 16 blocks fits\"}]}"));
    char *text = json_dumps(doc, 0), *t = table_of(text);
    static const char *const want[] = {
        "distributed shared memory (latency in cycles a load",
        "cluster  2: width 2, ranks 2; latency local 31.5, neighbour 201.2, farthest 202.0; "
        "bandwidth local 120.5, remote 30.1",
        "cluster 16: width ?, ranks 0 (disagree); not launched: no cluster of 16 blocks fits",
    };
    expect_in(t, want, sizeof want / sizeof want[0]);
    free(text);
    free(t);
    json_object_set_new(doc, "distributed_shared", parse("{\"error\":\"thread-block clusters need 9.0\"}"));
    text = json_dumps(doc, 0), t = table_of(text);
    static const char *const err_want[] = {"distributed shared memory: error: thread-block clusters need 9.0"};
    expect_in(t, err_want, 1);
    free(text);
    free(t);
    json_decref(doc);
}

/* The memory table's asynchronous-copy lines: the summary's best per
 * level and method, or the probe's error. */
static void test_memory_table_async_copy(void **state)
{
    (void)state;
    json_t *doc = parse(memory_doc);
    json_object_set_new(doc, "async_copy",
                        parse("{\"summary\":{\"dram\":{\"ld\":{\"best\":20.25,\"at_bytes\":16},"
                              "\"bulk\":{\"best\":31.5,\"at_bytes\":16384}},"
                              "\"l2\":{\"ca\":{\"best\":60.0,\"at_bytes\":16}}}}"));
    char *text = json_dumps(doc, 0), *t = table_of(text);
    assert_non_null(strstr(t, "async copies from device memory, best B/clk/SM: ld 20.2 (16 B) bulk 31.5 (16384 B)"));
    assert_non_null(strstr(t, "async copies from the L2, best B/clk/SM: ca 60.0 (16 B)"));
    free(t);
    free(text);
    json_object_set_new(doc, "async_copy", parse("{\"error\":\"cp.async needs compute capability 8.0\"}"));
    text = json_dumps(doc, 0);
    t = table_of(text);
    assert_non_null(strstr(t, "async copies: error: cp.async needs compute capability 8.0"));
    free(t);
    free(text);
    json_decref(doc);
}

/* A fixture's table, printed into a string. */
static char *fixture_table(const char *path)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    json_t *doc = rdb_load(path);
    assert_non_null(f);
    probe_table_print(f, doc);
    fclose(f);
    json_decref(doc);
    return buf;
}

static void expect_in(const char *table, const char *const *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strstr(table, want[i]))
            fail_msg("the table lacks \"%s\":\n%s", want[i], table);
}

static void test_edit_probe_tables(void **state)
{
    static const char *const banks[] = {
        "banks on NVIDIA H200", "2 banks over R0..R251", "below 99.5% of 3.93 [3.93-3.93]",
        "bank 0 (126 registers): R0..R250 step 2", "bank 1 (126 registers): R1..R251 step 2",
        "not tested: R252, R253, R254: the compiler named no register above R251",
        "confirmation: 64 of 64", "two_same_bank_a_b", "R0 R2 RZ", "1.99 [",
        "runs: 482 (class building 376, confirmation 64; all pairs would be 31626)",
        "re-read: yes, 1.31 s",
    };
    static const char *const control[] = {
        "control-codes on NVIDIA H200", "SM clock 1980 -> ? MHz", "ffma       FFMA",
        "4/1", "4.03 [", "hfma2      HFMA2    not measured: the compiled hfma2 kernel",
        "none", "1.000/stall +0.06", "meanings", "stall: Stall is a linear delay",
        "dual_issue: No encoding issued two instructions",
    };
    static const char *const dual[] = {
        "dual-issue on NVIDIA H200", "verdict: No dual issue", "dual issue observed: no",
        "peak 128.0 FFMA per SM clock (FP32 lanes per SM", "1-2-2-1", "conflict_free",
        "naive", "compiled", "85.5%", "57.0%",
    };
    char *t;
    (void)state;
    expect_in(t = fixture_table("tests/fixtures/results/banks-example.json"), banks,
              sizeof banks / sizeof banks[0]);
    free(t);
    expect_in(t = fixture_table("tests/fixtures/results/control-codes-example.json"), control,
              sizeof control / sizeof control[0]);
    free(t);
    expect_in(t = fixture_table("tests/fixtures/results/dual-issue-example.json"), dual,
              sizeof dual / sizeof dual[0]);
    free(t);
}

/* The issue-order rows under the control-code meanings. */
static void test_issue_order_rows(void **state)
{
    (void)state;
    char *t = table_of("{\"probe\":\"control-codes\",\"meanings\":{\"scheduler\":{\"text\":"
                       "\"Issue order ...\",\"rule\":\"greedy, then youngest\",\"data\":"
                       "{\"by_experiment\":{\"stall_ends\":{\"decisions\":40,\"overlapped\":2,"
                       "\"pairs\":500,\"hits\":{\"youngest\":39,\"oldest\":1,\"round-robin\":"
                       "7,\"lowest-id\":20},\"rule\":[\"youngest\"]},\"quiet\":{\"decisions\":"
                       "3,\"hits\":{},\"rule\":null},\"odd\":{\"rule\":[5]}}}}}}");
    static const char *const want[] = {
        "issue order (greedy, then youngest)", "experiment   decisions",
        "stall_ends          40        39         1           7        20         2/500  youngest",
        "quiet                3         0         0           0         0           0/0  not "
        "determined",
        "odd                  0", "  ?\n",
    };
    expect_in(t, want, sizeof want / sizeof want[0]);
    free(t);
    t = table_of("{\"probe\":\"control-codes\",\"meanings\":{\"scheduler\":{\"text\":\"x\"}}}");
    assert_null(strstr(t, "issue order"));
    free(t);
}

/* Whatever a document lacks prints as "-", never a crash. */
static void test_edit_probe_tables_forgive(void **state)
{
    static const char *const docs[] = {
        "{\"probe\":\"banks\"}", "{\"probe\":\"control-codes\"}", "{\"probe\":\"dual-issue\"}",
        "{\"probe\":\"banks\",\"classes\":[3,[\"x\"]],\"costs\":{\"a\":1},"
        "\"untested_registers\":[1]}",
        "{\"probe\":\"control-codes\",\"instructions\":[1,{\"fit\":3}],\"meanings\":{\"x\":2}}",
        "{\"probe\":\"dual-issue\",\"results\":[null,{\"pattern\":7}]}",
    };
    (void)state;
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        char *t = table_of(docs[i]);
        assert_non_null(t);
        free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kinds_are_registered),
        cmocka_unit_test(test_latency_schema),
        cmocka_unit_test(test_edit_probe_schemas),
        cmocka_unit_test(test_defaults_filled),
        cmocka_unit_test(test_instructions_checked_against_catalog),
        cmocka_unit_test(test_repeats_range_and_unknown),
        cmocka_unit_test(test_result_checks),
        cmocka_unit_test(test_latency_table),
        cmocka_unit_test(test_memory_and_suite_table),
        cmocka_unit_test(test_memory_table_l1_sets),
        cmocka_unit_test(test_memory_table_placement),
        cmocka_unit_test(test_memory_table_dsmem),
        cmocka_unit_test(test_memory_table_async_copy),
        cmocka_unit_test(test_edit_probe_tables),
        cmocka_unit_test(test_edit_probe_tables_forgive),
        cmocka_unit_test(test_issue_order_rows),
    };
    return cmocka_run_group_tests_name("probe kinds", tests, NULL, NULL);
}
