/*
 * Unit tests of the probe-result tables (db/results*.c): the latency, memory
 * and suite savers against a real SQLite file, the reader that serves a
 * device's result from the rows, and the refusal of malformed documents.
 * The tables of banks, control-codes and dual-issue have their own tests
 * (test_results_banks.c, test_results_control.c, test_results_dual.c); the
 * suite that holds them is tested here.
 *
 * DESIGN
 * Each test gets a fresh directory with a store opened on a database file in
 * it. A result is saved the way the daemon saves it: a job for the document's
 * device is inserted and started, then store_job_succeed runs the kind's
 * saver in the job's transaction (tests/unit/support/resultdb.h, shared with
 * the tests of the other probes' tables). Round trips compare the reader's
 * answer with the source document member by member (generic walks over the
 * document, so they hold for any document of the right shape), and look at
 * the tables through a separate plain connection where the API cannot show
 * the fact (row counts after a refusal, a row edited behind the store's back).
 *
 * The latency document: the real one captured on an H200,
 * tests/fixtures/results/latency-h200.json (LATENCY_FIXTURE; run from the
 * repository root, as `make check` does), when it exists, else the
 * hand-written LATENCY_DOC below, shaped exactly like probes/latency_run.c's
 * output; the round trip also runs on LATENCY_DOC itself, for what a good
 * run on a real GPU does not show (refused SASS, errors, null fields). The
 * memory probe likewise: the document captured on an H200 (MEMORY_FIXTURE)
 * when it exists, and two hand-written ones for the forms a failing run
 * takes: MEMORY_DOC (errors as bare strings, shared_cycles wrapped in
 * {"cycles": ...}) and MEMORY_DOC_OBJ_ERRORS (errors as {"error": "..."},
 * whole groups failed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "db/results.h"
#include "db/store.h"
#include "tests/unit/support/storetest.h"
#include "tests/unit/support/resultdb.h"

#define LATENCY_FIXTURE "tests/fixtures/results/latency-h200.json"
#define MEMORY_FIXTURE "tests/fixtures/results/memory-h200.json"

#define UUID "GPU-6f1a2b3c-0d4e-5f60-7182-93a4b5c6d7e8"
#define DEVICE_JSON                                                                            \
    "{\"index\":0,\"uuid\":\"" UUID "\",\"name\":\"NVIDIA H200\",\"compute_capability\":\"9.0\"," \
    "\"sm_count\":132,\"clock_khz\":1980000,\"l2_bytes\":52428800}"

/* Hand-written after probes/latency_run.c: a measured entry, one the SASS
 * check refused, one with a note and two instructions per step. */
static const char LATENCY_DOC[] =
    "{\"probe\":\"latency\",\"device\":" DEVICE_JSON ",\"driver_version\":\"580.95.05\","
    "\"clock_mhz\":{\"before\":1980.0,\"after\":1965.5},\"repeats\":5,\"n1\":16,\"n2\":48,"
    "\"entries\":["
    "{\"name\":\"ffma\",\"group\":\"fp32\",\"ptx\":\"fma.rn.f32 {x}, {x}, {y}, {z};\","
    " \"sass_opcode\":\"FFMA\",\"per_step\":1,"
    " \"sass\":{\"verified\":true,\"fixed_latency\":true,\"compiler_stall\":4,\"regions\":[]},"
    " \"latency_cycles\":{\"median\":4.0,\"min\":4.0,\"max\":4.03125,"
    "  \"runs\":[4,4,4.03125,4,4]},"
    " \"issue_cycles\":{\"median\":2.0,\"min\":2.0,\"max\":3.0,\"runs\":[2,2,3,2,2]},"
    " \"exec_cycles\":{\"median\":6.0,\"min\":6.0,\"max\":6.0,\"runs\":[6,6,6,6,6]},"
    " \"throughput_per_clock_per_sm\":{\"median\":127.83317,\"min\":126.1,\"max\":128.0,"
    "  \"runs\":[127.83317,126.1,128,127.9,127.2]},"
    " \"throughput_clock_mhz\":{\"median\":1980.2,\"min\":1979.0,\"max\":1981.25,"
    "  \"runs\":[1980.2,1979,1981.25,1980,1980.5]},"
    " \"throughput_sass\":{\"verified\":true},"
    " \"throughput_shape\":{\"blocks\":1056,\"threads\":256,\"chains\":8,\"unroll\":8,"
    "  \"iterations\":64}},"
    "{\"name\":\"hmma_f16_f32\",\"group\":\"tensor\",\"ptx\":\"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {d}, {a}, {b}, {d};\","
    " \"sass_opcode\":\"HMMA\",\"per_step\":1,\"flops_per_step\":4096,"
    " \"sass\":{\"verified\":true,\"fixed_latency\":true,\"compiler_stall\":null,\"regions\":[]},"
    " \"latency_cycles\":{\"median\":24.0,\"min\":24.0,\"max\":24.0,\"runs\":[24,24,24,24,24]},"
    " \"issue_cycles\":{\"median\":2.0,\"min\":2.0,\"max\":2.0,\"runs\":[2,2,2,2,2]},"
    " \"exec_cycles\":{\"median\":26.0,\"min\":26.0,\"max\":26.0,\"runs\":[26,26,26,26,26]},"
    " \"throughput_per_clock_per_sm\":{\"median\":0.6545,\"min\":0.6544,\"max\":0.6546,"
    "  \"runs\":[0.6545,0.6544,0.6546,0.6545,0.6545]},"
    " \"throughput_clock_mhz\":{\"median\":1814.0,\"min\":1813.0,\"max\":1815.0,"
    "  \"runs\":[1814,1813,1815,1814,1814]},"
    " \"tflops\":{\"median\":642.09,\"min\":641.96,\"max\":642.16,"
    "  \"runs\":[642.09,641.96,642.16,642.1,642.0]}},"
    /* a wgmma entry's shape (its figures are made up, no GPU has run it yet) */
    "{\"name\":\"wgmma_f16_ss_n128\",\"group\":\"tensor\",\"ptx\":\"wgmma.mma_async\","
    " \"sass_opcode\":\"HGMMA\",\"per_step\":1,\"flops_per_step\":262144,"
    " \"sass\":{\"verified\":true,\"fixed_latency\":false,\"compiler_stall\":null},"
    " \"latency_cycles\":{\"median\":128.0,\"min\":127.0,\"max\":129.0,\"runs\":[128,127,129]},"
    " \"throughput_per_clock_per_sm\":{\"median\":0.0125,\"min\":0.0124,\"max\":0.0126,"
    "  \"runs\":[0.0125,0.0124,0.0126]},"
    " \"throughput_one_warpgroup_per_clock_per_sm\":{\"median\":0.0110,\"min\":0.0109,"
    "  \"max\":0.0111,\"runs\":[0.0110,0.0109,0.0111]},"
    " \"throughput_clock_mhz\":{\"median\":1755.0,\"min\":1750.0,\"max\":1760.0,"
    "  \"runs\":[1755,1750,1760]},"
    " \"tflops\":{\"median\":760.0,\"min\":755.0,\"max\":765.0,\"runs\":[760,755,765]}},"
    "{\"name\":\"lds\",\"group\":\"shared\",\"ptx\":\"ld.shared.u32 {x}, [{x}];\","
    " \"sass_opcode\":\"LDS\",\"per_step\":1,"
    " \"note\":\"pointer chase on one shared word that holds its own address\","
    " \"sass\":{\"verified\":false,\"fixed_latency\":false,\"compiler_stall\":null},"
    " \"error\":\"the compiled code is not what the probe times; see sass.regions\","
    " \"throughput_error\":\"the compiled loop is not what the probe times\"},"
    "{\"name\":\"f2f\",\"group\":\"conv\",\"ptx\":\"cvt.rn.f32.f64 {t}, {x};\","
    " \"sass_opcode\":\"F2F\",\"per_step\":2,"
    " \"note\":\"a pair f64 -> f32 -> f64; the figure is per conversion\","
    " \"sass\":{\"verified\":true,\"fixed_latency\":null,\"compiler_stall\":null},"
    " \"latency_cycles\":{\"median\":9.34375,\"min\":9.3125,\"max\":9.375,\"runs\":[9.34375]},"
    " \"issue_cycles\":{\"median\":11.0,\"min\":11.0,\"max\":11.0,\"runs\":[11]},"
    " \"exec_cycles\":{\"median\":20.0,\"min\":19.0,\"max\":21.0,\"runs\":[20]},"
    " \"throughput_error\":\"cuLaunchKernel: CUDA_ERROR_LAUNCH_TIMEOUT: the launch timed out\"}"
    "],\"wall_s\":41.25}";

/* Hand-written after probes/memory_run.c (errors as bare strings). */
static const char MEMORY_DOC[] =
    "{\"probe\":\"memory\",\"device\":" DEVICE_JSON ",\"driver_version\":\"580.95.05\","
    "\"repeats\":3,\"stride_bytes\":128,\"seed\":\"0x6770756d656d3031 ^ elements\","
    "\"chase_steps\":{\"min\":4096,\"max\":16384},"
    "\"clock_mhz\":{\"before\":1980.0,\"after\":\"clock64 did not advance\"},"
    "\"shared_cycles\":{\"cycles\":{\"median\":30.5,\"min\":30.0,\"max\":31.25},"
    " \"footprint_bytes\":4096,\"steps\":4096},"
    "\"departure\":{\"cache\":\"cg\",\"loads\":[32,96],"
    " \"coalesced_cycles\":{\"median\":2.125,\"min\":2.0,\"max\":2.25},"
    " \"uncoalesced_cycles\":\"cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS\","
    " \"clock_overhead_cycles\":{\"median\":40.0,\"min\":39.0,\"max\":41.0},"
    " \"l1_hit\":{\"cache\":\"ca\",\"coalesced_cycles\":{\"median\":1.0,\"min\":1.0,\"max\":1.5},"
    "  \"uncoalesced_cycles\":{\"median\":32.0,\"min\":31.0,\"max\":33.0}}},"
    "\"device_memory_cycles\":{\"footprint_bytes\":52428800,\"note\":\"cold\","
    " \"ca\":{\"median\":612.0,\"min\":600.5,\"max\":630.0,\"runs\":[612,600.5,630]},"
    " \"cg\":\"no module\"},"
    "\"curves\":{"
    " \"ca\":[{\"bytes\":1024,\"steps\":4096,\"covered\":true,"
    "   \"cycles\":{\"median\":33.0,\"min\":32.5,\"max\":33.5}},"
    "  {\"bytes\":262144,\"steps\":4096,\"covered\":true,"
    "   \"cycles\":{\"median\":261.75,\"min\":260.0,\"max\":263.0}},"
    "  {\"bytes\":2048,\"steps\":4096,\"covered\":true,\"cycles\":\"ring broken\"}],"
    " \"cg\":\"module build failed: ptxas error\"},"
    "\"levels\":{"
    " \"ca\":[{\"level\":1,\"cycles\":33.0,\"plateau\":true,\"from_bytes\":1024.0,"
    "   \"up_to_bytes\":196608.0,\"next_bytes\":262144.0,\"points\":9,\"l2_fraction\":null},"
    "  {\"level\":2,\"cycles\":261.75,\"plateau\":false,\"from_bytes\":262144.0,"
    "   \"up_to_bytes\":262144.0,\"next_bytes\":null,\"points\":1,\"l2_fraction\":null}],"
    " \"cg\":\"the curve could not be analysed\"},"
    "\"sass\":{\"verified\":false,\"detail\":\"not checked\"},\"wall_s\":12.5}";

/* The brief's form: errors as {"error": ...}, figures bare, no optional extras. */
static const char MEMORY_DOC_OBJ_ERRORS[] =
    "{\"probe\":\"memory\",\"device\":" DEVICE_JSON ",\"driver_version\":\"580.95.05\","
    "\"repeats\":5,\"clock_mhz\":{\"before\":1755.0,\"after\":1980.0},"
    "\"shared_cycles\":{\"error\":\"shared chase did not follow the ring\"},"
    "\"departure\":{\"error\":\"no module\"},"
    "\"device_memory_cycles\":{\"error\":\"out of memory\"},"
    "\"curves\":{\"ca\":{\"error\":\"out of memory\"},"
    " \"cg\":[{\"bytes\":4096,\"cycles\":{\"median\":200.0,\"min\":199.0,\"max\":201.0}}]},"
    "\"levels\":{\"ca\":{\"error\":\"out of memory\"},"
    " \"cg\":[{\"level\":1,\"cycles\":200.0,\"up_to_bytes\":4096}]},"
    "\"wall_s\":3.0}";

static char err[512];

#define OK STORE_OK

/* ---- helpers ------------------------------------------------------------------- */

static json_t *latency_doc(void)
{
    return rdb_load_or(LATENCY_FIXTURE, LATENCY_DOC);
}

/* ---- comparing ------------------------------------------------------------------- */

static void check_latency_entry(const json_t *w, const json_t *g, size_t i)
{
    static const char *const texts[] = {"name", "group", "sass_opcode", "note", "error",
                                        "throughput_error"};
    static const char *const figures[] = {"latency_cycles", "issue_cycles", "exec_cycles",
                                          "throughput_per_clock_per_sm", "throughput_clock_mhz", "tflops",
                                          "throughput_one_warpgroup_per_clock_per_sm"};
    const json_t *ws = json_object_get(w, "sass"), *gs = json_object_get(g, "sass");
    char what[96];
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
        snprintf(what, sizeof what, "entries[%zu].%s", i, texts[k]);
        rdb_check_text(json_object_get(w, texts[k]), json_object_get(g, texts[k]), what);
    }
    snprintf(what, sizeof what, "entries[%zu].per_step", i);
    rdb_check_number(json_object_get(w, "per_step"), json_object_get(g, "per_step"), what);
    for (size_t k = 0; k < sizeof figures / sizeof figures[0]; k++) {
        snprintf(what, sizeof what, "entries[%zu].%s", i, figures[k]);
        rdb_check_figure(json_object_get(w, figures[k]), json_object_get(g, figures[k]), what);
    }
    if (!ws) {
        assert_true(json_is_null(gs));
        return;
    }
    rdb_check_same(json_object_get(ws, "verified"), json_object_get(gs, "verified"), "verified");
    rdb_check_same(json_object_get(ws, "fixed_latency"), json_object_get(gs, "fixed_latency"),
                   "fixed_latency");
    rdb_check_same(json_object_get(ws, "compiler_stall"), json_object_get(gs, "compiler_stall"),
                   "compiler_stall");
}

static void check_latency(const json_t *doc, const json_t *got, int64_t job)
{
    const json_t *we = json_object_get(doc, "entries"), *ge = json_object_get(got, "entries");
    rdb_check_provenance(doc, got, job);
    assert_int_equal(json_array_size(ge), json_array_size(we));
    for (size_t i = 0; i < json_array_size(we); i++)
        check_latency_entry(json_array_get(we, i), json_array_get(ge, i), i);
}

/* The point of got's curve with this many bytes. */
static const json_t *point_at(const json_t *curve, json_int_t bytes)
{
    const json_t *p;
    size_t i;
    json_array_foreach(curve, i, p)
        if (json_integer_value(json_object_get(p, "bytes")) == bytes)
            return p;
    return NULL;
}

static void check_curve(const json_t *want, const json_t *got, const char *load)
{
    const json_t *p;
    size_t i;
    char what[64];
    if (rdb_error_member(want)) {
        rdb_check_figure(want, got, load);
        return;
    }
    assert_int_equal(json_array_size(got), json_array_size(want));
    json_array_foreach(want, i, p) {
        const json_t *g = point_at(got, json_integer_value(json_object_get(p, "bytes")));
        snprintf(what, sizeof what, "curves.%s[%zu].cycles", load, i);
        assert_non_null(g);
        rdb_check_figure(json_object_get(p, "cycles"), json_object_get(g, "cycles"), what);
    }
    for (i = 1; i < json_array_size(got); i++) /* served by size */
        assert_true(json_integer_value(json_object_get(json_array_get(got, i), "bytes")) >
                    json_integer_value(json_object_get(json_array_get(got, i - 1), "bytes")));
}

static void check_levels(const json_t *want, const json_t *got, const char *load)
{
    const json_t *l;
    size_t i;
    if (rdb_error_member(want)) {
        rdb_check_figure(want, got, load);
        return;
    }
    assert_int_equal(json_array_size(got), json_array_size(want));
    json_array_foreach(want, i, l) {
        const json_t *g = json_array_get(got, i);
        rdb_check_number(json_object_get(l, "level"), json_object_get(g, "level"), "level");
        rdb_check_number(json_object_get(l, "cycles"), json_object_get(g, "cycles"), "cycles");
        rdb_check_number(json_object_get(l, "up_to_bytes"), json_object_get(g, "up_to_bytes"),
                         "up_to_bytes");
    }
}

static void check_device_memory(const json_t *want, const json_t *got)
{
    static const char *const loads[] = {"ca", "cg"};
    for (int i = 0; i < 2; i++)
        rdb_check_figure(rdb_error_member(want) ? want : json_object_get(want, loads[i]),
                         json_object_get(got, loads[i]), loads[i]);
}

static void check_memory(const json_t *doc, const json_t *got, int64_t job)
{
    static const char *const loads[] = {"ca", "cg"};
    const json_t *wd = json_object_get(doc, "departure"), *gd = json_object_get(got, "departure");
    rdb_check_provenance(doc, got, job);
    for (int i = 0; i < 2; i++) {
        check_curve(json_object_get(json_object_get(doc, "curves"), loads[i]),
                     json_object_get(json_object_get(got, "curves"), loads[i]), loads[i]);
        check_levels(json_object_get(json_object_get(doc, "levels"), loads[i]),
                      json_object_get(json_object_get(got, "levels"), loads[i]), loads[i]);
    }
    rdb_check_figure(json_object_get(doc, "shared_cycles"), json_object_get(got, "shared_cycles"),
                     "shared_cycles");
    check_device_memory(json_object_get(doc, "device_memory_cycles"),
                        json_object_get(got, "device_memory_cycles"));
    if (rdb_error_member(wd)) {
        rdb_check_figure(wd, json_object_get(gd, "coalesced_cycles"), "departure.coalesced");
        rdb_check_figure(wd, json_object_get(gd, "uncoalesced_cycles"), "departure.uncoalesced");
        assert_null(json_object_get(gd, "l1_hit"));
        return;
    }
    rdb_check_figure(json_object_get(wd, "coalesced_cycles"), json_object_get(gd, "coalesced_cycles"),
                     "departure.coalesced_cycles");
    rdb_check_figure(json_object_get(wd, "uncoalesced_cycles"),
                     json_object_get(gd, "uncoalesced_cycles"), "departure.uncoalesced_cycles");
    rdb_check_figure(json_object_get(wd, "clock_overhead_cycles"),
                     json_object_get(gd, "clock_overhead_cycles"), "departure.clock_overhead_cycles");
    for (int i = 0; i < 2; i++) {
        const char *k = i ? "uncoalesced_cycles" : "coalesced_cycles";
        rdb_check_figure(json_object_get(json_object_get(wd, "l1_hit"), k),
                         json_object_get(json_object_get(gd, "l1_hit"), k), k);
    }
}

/* ---- latency --------------------------------------------------------------------- */

/* Saves doc as a new job and reads it back, newest and by job. */
static void latency_round_trip(struct rdb *f, json_t *doc)
{
    OK(results_latency_check(doc, err, sizeof err));
    int64_t id = rdb_saved_job(f->s, "latency", doc, results_latency_save);
    json_t *got = rdb_read(f->s, rdb_uuid(doc), "latency", 0);
    check_latency(doc, got, id);
    assert_int_equal(json_integer_value(json_object_get(
                         json_array_get(json_object_get(got, "history"), 0), "job_id")),
                     id);
    json_decref(got);
    got = rdb_read(f->s, rdb_uuid(doc), "latency", id);
    check_latency(doc, got, id);
    json_decref(got);
    json_decref(doc);
}

static void test_latency_round_trip(void **state)
{
    struct rdb *f = *state;
    json_t *doc = latency_doc();
    size_t n = json_array_size(json_object_get(doc, "entries"));
    latency_round_trip(f, doc);
    assert_int_equal(query_int(f->t->path, "SELECT count(*) FROM latency_results"), (int64_t)n);
    assert_int_equal(query_int(f->t->path, "SELECT count(*) FROM probe_runs"), 1);
}

static void test_latency_round_trip_edge_cases(void **state)
{
    struct rdb *f = *state;
    latency_round_trip(f, rdb_parse(LATENCY_DOC));
    assert_int_equal(query_int(f->t->path, "SELECT count(*) FROM latency_results"
                                           " WHERE latency_median IS NULL AND error IS NOT NULL"),
                     1);
    assert_int_equal(query_int(f->t->path, "SELECT count(*) FROM latency_results"
                                           " WHERE fixed_latency IS NULL"), 1);
}

/* The answer comes from the rows, not from the stored result document. */
static void test_reader_uses_the_tables(void **state)
{
    struct rdb *f = *state;
    json_t *doc = latency_doc();
    rdb_saved_job(f->s, "latency", doc, results_latency_save);
    exec_plain(f->t->path, "UPDATE latency_results SET latency_median = 99.5 WHERE seq = 0");
    exec_plain(f->t->path, "UPDATE probe_runs SET driver_version = 'edited'");
    json_t *got = rdb_read(f->s, rdb_uuid(doc), "latency", 0);
    const json_t *e0 = json_array_get(json_object_get(got, "entries"), 0);
    assert_true(json_number_value(json_object_get(json_object_get(e0, "latency_cycles"),
                                                  "median")) == 99.5);
    assert_string_equal(json_string_value(json_object_get(got, "driver_version")), "edited");
    json_decref(got);
    json_decref(doc);
}

static void test_newest_and_chosen_run(void **state)
{
    struct rdb *f = *state;
    json_t *doc = latency_doc(), *got;
    int64_t first = rdb_saved_job(f->s, "latency", doc, results_latency_save);
    json_object_set_new(doc, "driver_version", json_string("999.1"));
    int64_t second = rdb_saved_job(f->s, "latency", doc, results_latency_save);
    got = rdb_read(f->s, rdb_uuid(doc), "latency", 0);
    assert_int_equal(json_integer_value(json_object_get(got, "job_id")), second);
    assert_string_equal(json_string_value(json_object_get(got, "driver_version")), "999.1");
    const json_t *h = json_object_get(got, "history");
    assert_int_equal(json_array_size(h), 2);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(h, 0), "job_id")), second);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(h, 1), "job_id")), first);
    json_decref(got);
    got = rdb_read(f->s, rdb_uuid(doc), "latency", first);
    assert_int_equal(json_integer_value(json_object_get(got, "job_id")), first);
    assert_string_not_equal(json_string_value(json_object_get(got, "driver_version")), "999.1");
    json_decref(got);
    json_decref(doc);
}

static void test_none_is_1(void **state)
{
    struct rdb *f = *state;
    json_t *doc = latency_doc(), *out = (json_t *)&out;
    int64_t id = rdb_saved_job(f->s, "latency", doc, results_latency_save);
    assert_int_equal(store_probe_result(f->s, "GPU-other", "latency", 0, &out, err, sizeof err),
                     1);
    assert_null(out);
    assert_int_equal(store_probe_result(f->s, rdb_uuid(doc), "latency", id + 1, &out, err,
                                                       sizeof err), 1);
    assert_int_equal(store_probe_result(f->s, rdb_uuid(doc), "memory", 0, &out, err, sizeof err),
                                                       1);
    assert_int_equal(store_probe_result(f->s, rdb_uuid(doc), "memory", id, &out, err, sizeof err),
                                                       1);
    assert_int_equal(store_probe_result(f->s, rdb_uuid(doc), "bogus", 0, &out, err, sizeof err),
                                                       -1);
    assert_non_null(strstr(err, "bogus"));
    assert_int_equal(store_probe_result(f->s, rdb_uuid(doc), "latency", -3, &out, err,
                                                       sizeof err), -1);
    json_decref(doc);
}

/* A broken copy of the document: mutate(doc) damages it; the reason must name field. */
struct damage {
    const char *field;
    void (*mutate)(json_t *doc);
};

static json_t *entry(json_t *doc, size_t i)
{
    return json_array_get(json_object_get(doc, "entries"), i);
}

static void no_entries(json_t *d) { json_object_del(d, "entries"); }
static void entries_object(json_t *d) { json_object_set_new(d, "entries", json_object()); }
static void entry_not_object(json_t *d)
{
    json_array_set_new(json_object_get(d, "entries"), 1, json_integer(7));
}
static void median_text(json_t *d)
{
    json_object_set_new(json_object_get(entry(d, 0), "latency_cycles"), "median",
                        json_string("4"));
}
static void no_max(json_t *d)
{
    json_object_del(json_object_get(entry(d, 0), "exec_cycles"), "max");
}
static void no_name(json_t *d) { json_object_del(entry(d, 0), "name"); }
static void group_number(json_t *d) { json_object_set_new(entry(d, 0), "group", json_real(1)); }
static void verified_text(json_t *d)
{
    json_object_set_new(json_object_get(entry(d, 0), "sass"), "verified", json_string("yes"));
}
static void stall_real(json_t *d)
{
    json_object_set_new(json_object_get(entry(d, 0), "sass"), "compiler_stall", json_real(1.5));
}
static void duplicate_name(json_t *d)
{
    json_object_set_new(entry(d, 1), "name", json_string(json_string_value(
                                                 json_object_get(entry(d, 0), "name"))));
}
static void wrong_probe(json_t *d) { json_object_set_new(d, "probe", json_string("memory")); }
static void no_uuid(json_t *d) { json_object_del(json_object_get(d, "device"), "uuid"); }
static void no_clock(json_t *d) { json_object_del(d, "clock_mhz"); }
static void zero_repeats(json_t *d) { json_object_set_new(d, "repeats", json_integer(0)); }
static void no_driver(json_t *d) { json_object_del(d, "driver_version"); }
/* physics: a spread in order, a latency not negative, a clock, a count */
static void latency_negative(json_t *d)
{
    json_t *f = json_object_get(entry(d, 0), "latency_cycles");
    json_object_set_new(f, "min", json_real(-3.0));
}
static void spread_inverted(json_t *d)
{
    json_t *f = json_object_get(entry(d, 0), "issue_cycles");
    json_object_set_new(f, "min", json_real(1e6));
}
static void clock_zero(json_t *d)
{
    json_object_set_new(json_object_get(d, "clock_mhz"), "before", json_real(0));
}
static void clock_huge(json_t *d)
{
    json_object_set_new(json_object_get(d, "clock_mhz"), "after", json_real(1e300));
}
static void repeats_huge(json_t *d) { json_object_set_new(d, "repeats", json_integer(1ll << 62)); }
static void wall_negative(json_t *d) { json_object_set_new(d, "wall_s", json_real(-1)); }

static const struct damage latency_damage[] = {
    {"entries", no_entries},
    {"entries", entries_object},
    {"entries[1]", entry_not_object},
    {"entries[0].latency_cycles.median", median_text},
    {"entries[0].exec_cycles.max", no_max},
    {"entries[0].name", no_name},
    {"entries[0].group", group_number},
    {"entries[0].sass.verified", verified_text},
    {"entries[0].sass.compiler_stall", stall_real},
    {"entries[1].name", duplicate_name},
    {"probe", wrong_probe},
    {"device.uuid", no_uuid},
    {"clock_mhz", no_clock},
    {"repeats", zero_repeats},
    {"driver_version", no_driver},
    {"entries[0].latency_cycles.min: must not be negative", latency_negative},
    {"entries[0].issue_cycles: min 1e+06, median", spread_inverted},
    {"clock_mhz.before: must be from 1 to 100000, not 0", clock_zero},
    {"clock_mhz.after: must be from 1 to 100000, not 1e+300", clock_huge},
    {"repeats: must be from 1 to 1000000", repeats_huge},
    {"wall_s: must be from 0", wall_negative},
};

/* Each damaged document is refused by the check and by the saver, with the
 * field named, and the saver's refusal leaves no row and the job running. */
static void test_latency_malformed_refused(void **state)
{
    struct rdb *f = *state;
    for (size_t i = 0; i < sizeof latency_damage / sizeof latency_damage[0]; i++) {
        json_t *doc = latency_doc();
        char uuid[64];
        snprintf(uuid, sizeof uuid, "%s", rdb_uuid(doc));
        latency_damage[i].mutate(doc);
        err[0] = '\0';
        if (results_latency_check(doc, err, sizeof err) != -1 ||
            !strstr(err, latency_damage[i].field))
            fail_msg("damage %zu (%s): check said '%s'", i, latency_damage[i].field, err);
        int64_t id = rdb_running_job(f->s, "latency", uuid);
        assert_int_equal(rdb_save(f->s, id, doc, results_latency_save, err, sizeof err), -1);
        if (!strstr(err, latency_damage[i].field))
            fail_msg("damage %zu (%s): saver said '%s'", i, latency_damage[i].field, err);
        assert_int_equal(rdb_result_rows(f->t->path), 0);
        struct job_row j;
        OK(store_job_get(f->s, id, &j, err, sizeof err));
        assert_int_equal(j.state, JOB_RUNNING);
        assert_null(j.result_json);
        job_row_free(&j);
        json_decref(doc);
    }
}

static void test_not_json_refused(void **state)
{
    struct rdb *f = *state;
    int64_t id = rdb_running_job(f->s, "latency", UUID);
    err[0] = '\0';
    /* text that is not JSON never reaches a saver: the store refuses it */
    assert_int_equal(store_job_succeed(f->s, id, "{not json", results_latency_save, err,
                                       sizeof err),
                     -1);
    assert_int_equal(store_job_succeed(f->s, id, "[1]", results_latency_save, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "must be a JSON object"));
    assert_int_equal(rdb_result_rows(f->t->path), 0);
}

static void test_device_must_be_the_jobs(void **state)
{
    struct rdb *f = *state;
    json_t *doc = latency_doc();
    int64_t id = rdb_running_job(f->s, "latency", "GPU-someone-else");
    assert_int_equal(rdb_save(f->s, id, doc, results_latency_save, err, sizeof err), -1);
    assert_non_null(strstr(err, "device.uuid"));
    assert_non_null(strstr(err, "GPU-someone-else"));
    assert_int_equal(rdb_result_rows(f->t->path), 0);
    /* a job with no device takes the document's */
    id = rdb_running_job(f->s, "latency", NULL);
    OK(rdb_save(f->s, id, doc, results_latency_save, err, sizeof err));
    json_decref(doc);
}

/* ---- memory ---------------------------------------------------------------------- */

static void memory_round_trip(struct rdb *f, json_t *doc)
{
    OK(results_memory_check(doc, err, sizeof err));
    int64_t id = rdb_saved_job(f->s, "memory", doc, results_memory_save);
    json_t *got = rdb_read(f->s, rdb_uuid(doc), "memory", 0);
    check_memory(doc, got, id);
    json_decref(got);
    json_decref(doc);
}

static void test_memory_round_trip(void **state)
{
    struct rdb *f = *state;
    memory_round_trip(f, rdb_parse(MEMORY_DOC));
    assert_int_equal(query_int(f->t->path, "SELECT count(*) FROM memory_curve"), 3);
    assert_int_equal(query_int(f->t->path, "SELECT count(*) FROM memory_levels"), 2);
    assert_int_equal(query_int(f->t->path, "SELECT count(*) FROM memory_scalars"), 10);
    assert_int_equal(query_int(f->t->path, "SELECT count(*) FROM probe_runs"
                                           " WHERE clock_mhz_after IS NULL"), 1);
}

static void test_memory_round_trip_captured(void **state)
{
    struct rdb *f = *state;
    json_t *doc = rdb_load_or(MEMORY_FIXTURE, MEMORY_DOC);
    size_t points = json_array_size(json_object_get(json_object_get(doc, "curves"), "ca")) +
                    json_array_size(json_object_get(json_object_get(doc, "curves"), "cg"));
    memory_round_trip(f, doc);
    assert_int_equal(query_int(f->t->path, "SELECT count(*) FROM memory_curve"), (int64_t)points);
}

static void test_memory_round_trip_error_objects(void **state)
{
    struct rdb *f = *state;
    memory_round_trip(f, rdb_parse(MEMORY_DOC_OBJ_ERRORS));
    assert_int_equal(query_int(f->t->path, "SELECT count(*) FROM memory_scalars"
                                           " WHERE error IS NOT NULL"), 8);
}

static json_t *mem_part(json_t *d, const char *a, const char *b)
{
    return json_object_get(json_object_get(d, a), b);
}

static void no_curves(json_t *d) { json_object_del(d, "curves"); }
static void bytes_text(json_t *d)
{
    json_object_set_new(json_array_get(mem_part(d, "curves", "ca"), 1), "bytes",
                        json_string("262144"));
}
static void no_levels_cg(json_t *d) { json_object_del(json_object_get(d, "levels"), "cg"); }
static void duplicate_bytes(json_t *d)
{
    json_object_set_new(json_array_get(mem_part(d, "curves", "ca"), 1), "bytes",
                        json_integer(1024));
}
static void curve_number(json_t *d)
{
    json_object_set_new(json_object_get(d, "curves"), "ca", json_integer(3));
}
static void no_shared(json_t *d) { json_object_del(d, "shared_cycles"); }
static void device_memory_number(json_t *d)
{
    json_object_set_new(d, "device_memory_cycles", json_integer(3));
}
static void l1_text(json_t *d)
{
    json_object_set_new(json_object_get(d, "departure"), "l1_hit", json_string("x"));
}
static void no_coalesced(json_t *d)
{
    json_object_del(json_object_get(d, "departure"), "coalesced_cycles");
}
static void level_zero(json_t *d)
{
    json_object_set_new(json_array_get(mem_part(d, "levels", "ca"), 0), "level",
                        json_integer(0));
}

static void curve_negative(json_t *d)
{
    json_t *pt = json_array_get(mem_part(d, "curves", "ca"), 0);
    json_object_set_new(json_object_get(pt, "cycles"), "min", json_real(-1.0));
}
static void device_memory_negative(json_t *d)
{
    json_t *ca = json_object_get(json_object_get(d, "device_memory_cycles"), "ca");
    json_object_set_new(ca, "min", json_real(-600.5));
}

static const struct damage memory_damage[] = {
    {"curves", no_curves},
    {"curves.ca[1].bytes", bytes_text},
    {"levels.cg", no_levels_cg},
    {"curves.ca[1].bytes", duplicate_bytes},
    {"curves.ca", curve_number},
    {"shared_cycles", no_shared},
    {"departure.coalesced_cycles", no_coalesced},
    {"device_memory_cycles", device_memory_number},
    {"departure.l1_hit", l1_text},
    {"levels.ca[0].level", level_zero},
    {"curves.ca[0].cycles.min: must not be negative", curve_negative},
    {"device_memory_cycles.ca.min: must not be negative", device_memory_negative},
};

/* A departure delay is a slope between two launches: noise may take it a
 * little below 0, and the run is kept. */
static void test_memory_departure_may_be_negative(void **state)
{
    (void)state;
    json_t *doc = rdb_parse(MEMORY_DOC);
    json_t *co = json_object_get(json_object_get(doc, "departure"), "coalesced_cycles");
    json_object_set_new(co, "min", json_real(-0.25));
    err[0] = '\0';
    if (results_memory_check(doc, err, sizeof err) != 0)
        fail_msg("refused: %s", err);
    json_decref(doc);
}

static void test_memory_malformed_refused(void **state)
{
    struct rdb *f = *state;
    for (size_t i = 0; i < sizeof memory_damage / sizeof memory_damage[0]; i++) {
        json_t *doc = rdb_parse(MEMORY_DOC);
        memory_damage[i].mutate(doc);
        err[0] = '\0';
        if (results_memory_check(doc, err, sizeof err) != -1 ||
            !strstr(err, memory_damage[i].field))
            fail_msg("damage %zu (%s): check said '%s'", i, memory_damage[i].field, err);
        int64_t id = rdb_running_job(f->s, "memory", rdb_uuid(doc));
        assert_int_equal(rdb_save(f->s, id, doc, results_memory_save, err, sizeof err), -1);
        if (!strstr(err, memory_damage[i].field))
            fail_msg("damage %zu (%s): saver said '%s'", i, memory_damage[i].field, err);
        assert_int_equal(rdb_result_rows(f->t->path), 0);
        json_decref(doc);
    }
}

/* ---- suite ----------------------------------------------------------------------- */

/* {"latency": latency, "memory": memory} (either may be NULL); a memory
 * document is moved to the latency document's device. */
static json_t *suite_of(json_t *latency, json_t *memory)
{
    json_t *s = json_object(), *dev = json_object_get(memory, "device");
    if (rdb_uuid(latency) && json_is_object(dev))
        json_object_set_new(dev, "uuid", json_string(rdb_uuid(latency)));
    if (latency)
        json_object_set_new(s, "latency", latency);
    if (memory)
        json_object_set_new(s, "memory", memory);
    return s;
}

static void test_suite_saves_both(void **state)
{
    struct rdb *f = *state;
    json_t *suite = suite_of(latency_doc(), rdb_load_or(MEMORY_FIXTURE, MEMORY_DOC));
    const json_t *lat = json_object_get(suite, "latency");
    OK(results_suite_check(suite, err, sizeof err));
    int64_t id = rdb_running_job(f->s, "suite", rdb_uuid(lat));
    OK(rdb_save(f->s, id, suite, results_suite_save, err, sizeof err));
    json_t *got = rdb_read(f->s, rdb_uuid(lat), "latency", 0);
    check_latency(lat, got, id);
    json_decref(got);
    got = rdb_read(f->s, rdb_uuid(lat), "memory", 0);
    check_memory(json_object_get(suite, "memory"), got, id);
    json_decref(got);
    assert_int_equal(query_int(f->t->path, "SELECT count(*) FROM probe_runs"), 2);
    json_decref(suite);
}

/* A suite of every probe, the machine-code probes' documents as captured
 * on an H200: each member keeps its own rows under the one job; a
 * member's error is reported with its name. */
static void test_suite_saves_every_probe(void **state)
{
    static const char *const edits[][2] = {
        {"banks", "tests/fixtures/results/banks-h200.json"},
        {"control-codes", "tests/fixtures/results/control-codes-h200.json"},
        {"dual-issue", "tests/fixtures/results/dual-issue-h200.json"},
    };
    struct rdb *f = *state;
    json_t *suite = suite_of(latency_doc(), rdb_load_or(MEMORY_FIXTURE, MEMORY_DOC));
    const char *uuid = rdb_uuid(json_object_get(suite, "latency"));
    for (size_t i = 0; i < 3; i++) {
        json_t *doc = rdb_load(edits[i][1]);
        json_object_set_new(json_object_get(doc, "device"), "uuid", json_string(uuid));
        json_object_set_new(suite, edits[i][0], doc);
    }
    json_object_set_new(json_object_get(json_object_get(suite, "banks"), "runs"), "total",
                        json_string("many"));
    assert_int_equal(results_suite_check(suite, err, sizeof err), -1);
    assert_non_null(strstr(err, "banks.runs.total"));
    json_object_set_new(json_object_get(json_object_get(suite, "banks"), "runs"), "total",
                        json_integer(482));
    OK(results_suite_check(suite, err, sizeof err));
    int64_t id = rdb_running_job(f->s, "suite", uuid);
    OK(rdb_save(f->s, id, suite, results_suite_save, err, sizeof err));
    assert_int_equal(query_int(f->t->path, "SELECT count(*) FROM probe_runs"), 5);
    for (size_t i = 0; i < 3; i++) {
        json_t *got = rdb_read(f->s, uuid, edits[i][0], 0);
        rdb_check_provenance(json_object_get(suite, edits[i][0]), got, id);
        json_decref(got);
    }
    json_decref(suite);
}

static void test_suite_member_error_skipped(void **state)
{
    struct rdb *f = *state;
    json_t *suite = suite_of(latency_doc(), json_pack("{s:s}", "error", "no module"));
    const char *uuid = rdb_uuid(json_object_get(suite, "latency"));
    json_t *out = NULL;
    OK(results_suite_check(suite, err, sizeof err));
    int64_t id = rdb_running_job(f->s, "suite", uuid);
    OK(rdb_save(f->s, id, suite, results_suite_save, err, sizeof err));
    assert_int_equal(store_probe_result(f->s, uuid, "memory", 0, &out, err, sizeof err), 1);
    json_decref(rdb_read(f->s, uuid, "latency", id));
    json_decref(suite);
}

static void test_suite_malformed_refused(void **state)
{
    struct rdb *f = *state;
    struct {
        json_t *doc;
        const char *why;
    } bad[] = {
        {suite_of(NULL, NULL), "holds no probe"},
        {json_pack("{s:o, s:i}", "latency", latency_doc(), "extra", 1), "extra"},
        {suite_of(json_pack("{s:s}", "error", "a"), json_pack("{s:s}", "error", "b")),
         "no probe of the suite"},
        {suite_of(json_integer(1), NULL), "latency: must be an object"},
        {suite_of(latency_doc(), rdb_parse("{\"probe\":\"memory\"}")), "memory.device"},
                                           };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        if (results_suite_check(bad[i].doc, err, sizeof err) != -1 || !strstr(err, bad[i].why))
            fail_msg("suite %zu: check said '%s', expected '%s'", i, err, bad[i].why);
        int64_t id = rdb_running_job(f->s, "suite", NULL); /* any device */
        assert_int_equal(rdb_save(f->s, id, bad[i].doc, results_suite_save, err, sizeof err), -1);
        assert_non_null(strstr(err, bad[i].why));
        assert_int_equal(rdb_result_rows(f->t->path), 0);
        json_decref(bad[i].doc);
    }
}

/* ---- recording a job run elsewhere -------------------------------------------------- */

static void test_job_record(void **state)
{
    struct rdb *f = *state;
    json_t *doc = latency_doc();
    char *text = json_dumps(doc, JSON_COMPACT);
    int64_t id = 0;
    struct job_row j;
    OK(store_job_record(f->s, "latency", rdb_uuid(doc), "{\"repeats\":5}", 600, text,
                                                  results_latency_save, &id, err, sizeof err));
    OK(store_job_get(f->s, id, &j, err, sizeof err));
    assert_int_equal(j.state, JOB_SUCCEEDED);
    assert_int_equal(j.attempt, 1);
    assert_int_equal(j.max_attempts, 1);
    assert_true(j.started_ms > 0 && j.finished_ms >= j.started_ms);
    job_row_free(&j);
    json_t *got = rdb_read(f->s, rdb_uuid(doc), "latency", 0);
    check_latency(doc, got, id);
    json_decref(got);
    /* a refused document records nothing, not even the job */
    int64_t before = query_int(f->t->path, "SELECT count(*) FROM jobs");
    assert_int_equal(store_job_record(f->s, "latency", rdb_uuid(doc), "{}", 600, "{\"a\":1}",
                                                                results_latency_save, &id, err, sizeof err), -1);
    assert_non_null(strstr(err, "probe"));
    assert_int_equal(query_int(f->t->path, "SELECT count(*) FROM jobs"), before);
    free(text);
    json_decref(doc);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, rdb_setup, rdb_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_latency_round_trip),
        T(test_latency_round_trip_edge_cases),
        T(test_reader_uses_the_tables),
        T(test_newest_and_chosen_run),
        T(test_none_is_1),
        T(test_latency_malformed_refused),
        T(test_not_json_refused),
        T(test_device_must_be_the_jobs),
        T(test_memory_round_trip),
        T(test_memory_round_trip_captured),
        T(test_memory_round_trip_error_objects),
        T(test_memory_malformed_refused),
        T(test_memory_departure_may_be_negative),
        T(test_suite_saves_both),
        T(test_suite_saves_every_probe),
        T(test_suite_member_error_skipped),
        T(test_suite_malformed_refused),
        T(test_job_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
