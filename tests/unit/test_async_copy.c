/*
 * Unit tests of the asynchronous-copy probe without a GPU (probes/async_copy.h):
 * its PTX, the check of its machine code, and its analysis.
 *
 * DESIGN
 * The PTX the generator writes must be the committed fixtures' byte for
 * byte (tests/fixtures/cubins/async: what ptxas 13.0 compiled for sm_90),
 * so the cubins there are the code the probe's check was tried on. The
 * check must accept each latency cubin, refuse a copy instruction changed
 * into a NOP, a kernel checked as another method, and a plain load added
 * to the timed region. The analysis runs on made timings whose answers are
 * worked by hand; its documents must pass the store's check of the memory
 * result they are part of.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/results.h"
#include "probes/async_copy.h"
#include "probes/gpu/cubin.h"
#include "probes/gpu/sass.h"
#include "tests/unit/support/resultdb.h"
#include "tests/unit/support/tmpfile.h"

#define FIX "tests/fixtures/cubins/async/"

static const struct {
    const char *name;
    enum acp_method m;
    unsigned size;
    int lat;
} fixtures[] = {
    {"ld16_lat", ACP_LD, 16, 1},          {"ca16_lat", ACP_CA, 16, 1},
    {"cg16_lat", ACP_CG, 16, 1},          {"bulk1024_lat", ACP_BULK, 1024, 1},
    {"tensor2048_lat", ACP_TENSOR, 2048, 1}, {"ca16_bw", ACP_CA, 16, 0},
    {"bulk4096_bw", ACP_BULK, 4096, 0},   {"tensor4096_bw", ACP_TENSOR, 4096, 0},
};
#define N_FIX (sizeof fixtures / sizeof fixtures[0])

static char *fixture(const char *name, const char *ext, size_t *len)
{
    char path[128];
    snprintf(path, sizeof path, FIX "%s.%s", name, ext);
    return must_read_file(path, len);
}

static void test_ptx_is_the_fixtures(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_FIX; i++) {
        size_t len;
        char *want = fixture(fixtures[i].name, "ptx", &len);
        char *got = acp_ptx(fixtures[i].m, fixtures[i].size, fixtures[i].lat, 9, 0);
        assert_non_null(got);
        if (strcmp(want, got) != 0)
            fail_msg("%s: the generator's PTX is not the fixture's (remake the fixture, README.md)",
                     fixtures[i].name);
        free(want);
        free(got);
    }
    /* sizes a method has no kernel for */
    assert_null(acp_ptx(ACP_CG, 4, 1, 9, 0));
    assert_null(acp_ptx(ACP_CA, 12, 1, 9, 0));
    assert_null(acp_ptx(ACP_BULK, 24, 1, 9, 0));          /* not a multiple of 16 */
    assert_null(acp_ptx(ACP_BULK, 48, 0, 9, 0));          /* does not divide a chunk */
    assert_null(acp_ptx(ACP_BULK, 2 * ACP_BULK_MAX, 1, 9, 0));
    assert_null(acp_ptx(ACP_TENSOR, 64, 1, 9, 0));        /* not whole rows */
    assert_null(acp_ptx(ACP_METHODS, 0, 1, 9, 0));
    /* the bulk forms' size is the kernel's constant, never read from p_bytes */
    char *k = acp_ptx(ACP_TENSOR, 2048, 1, 9, 0);
    assert_non_null(strstr(k, "mov.u32 %bytes, 2048;"));
    assert_null(strstr(k, "[p_bytes]"));
    free(k);
}

static int verified(json_t *o)
{
    int v = json_is_true(json_object_get(o, "verified"));
    json_decref(o);
    return v;
}

static void test_sass_check_accepts_fixtures(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_FIX; i++) {
        size_t len;
        char *bin = fixture(fixtures[i].name, "cubin", &len);
        json_t *o = acp_sass_check(fixtures[i].m, fixtures[i].lat, bin, len);
        if (!json_is_true(json_object_get(o, "verified")))
            fail_msg("%s not verified", fixtures[i].name);
        if (fixtures[i].lat) {
            assert_int_equal(json_integer_value(json_object_get(o, "found")), 1);
            assert_int_equal(json_integer_value(json_object_get(o, "syncs")),
                             acp_per_thread(fixtures[i].m) ? 0 : 2);
            assert_int_equal(json_integer_value(json_object_get(o, "lds_rz")),
                             fixtures[i].m == ACP_CA || fixtures[i].m == ACP_CG ? 3 : 0);
        }
        json_decref(o);
        free(bin);
    }
}

/* The index (in the cubin file) of the first instruction of kernel acp with
 * mnemonic op, or -1. */
static long find_insn(const char *bin, size_t len, const char *op)
{
    struct cubin c;
    char err[128], mn[SASS_MNEMONIC_MAX];
    long at = -1;
    assert_int_equal(cubin_parse(&c, bin, len, err, sizeof err), 0);
    const struct cubin_kernel *k = cubin_kernel_find(&c, "acp");
    assert_non_null(k);
    for (size_t off = 0; at < 0 && off + SASS_INSN_BYTES <= k->text_size; off += SASS_INSN_BYTES) {
        struct sass_insn in = sass_decode(k->text, off);
        if (strcmp(sass_mnemonic(&in, mn), op) == 0)
            at = (long)((const char *)k->text - bin + (long)off);
    }
    cubin_free(&c);
    return at;
}

static void test_sass_check_refuses(void **state)
{
    (void)state;
    size_t len;
    char *bin = fixture("ca16_lat", "cubin", &len);
    /* checked as another method */
    assert_false(verified(acp_sass_check(ACP_BULK, 1, bin, len)));
    assert_false(verified(acp_sass_check(ACP_LD, 1, bin, len)));
    /* the copy made a NOP: none found */
    long at = find_insn(bin, len, "LDGSTS");
    assert_true(at > 0);
    char keep[SASS_INSN_BYTES];
    memcpy(keep, bin + at, sizeof keep);
    struct sass_insn in = sass_decode((const uint8_t *)bin, (size_t)at);
    sass_set_field(&in, SASS_OPCODE, 0x918);              /* NOP */
    sass_encode(&in, (uint8_t *)bin, (size_t)at);
    json_t *o = acp_sass_check(ACP_CA, 1, bin, len);
    assert_false(json_is_true(json_object_get(o, "verified")));
    assert_int_equal(json_integer_value(json_object_get(o, "found")), 0);
    assert_non_null(json_object_get(o, "listing"));
    json_decref(o);
    memcpy(bin + at, keep, sizeof keep);
    assert_true(verified(acp_sass_check(ACP_CA, 1, bin, len)));
    /* an LDS RZ made a load into a register: another load in the region */
    at = find_insn(bin, len, "LDS");
    in = sass_decode((const uint8_t *)bin, (size_t)at);
    assert_int_equal(sass_field(&in, SASS_RD), SASS_RZ);
    sass_set_field(&in, SASS_RD, 4);
    sass_encode(&in, (uint8_t *)bin, (size_t)at);
    o = acp_sass_check(ACP_CA, 1, bin, len);
    assert_false(json_is_true(json_object_get(o, "verified")));
    assert_int_equal(json_integer_value(json_object_get(o, "other_loads")), 1);
    json_decref(o);
    free(bin);
    /* not a cubin */
    assert_false(verified(acp_sass_check(ACP_CA, 1, "nonsense", 8)));
}

static void test_latency_spread(void **state)
{
    (void)state;
    uint32_t c[5] = {900, 610, 600, 605, 2000};
    json_t *o = acp_latency_json(c, 5);
    assert_true(json_real_value(json_object_get(o, "median")) == 610);
    assert_true(json_real_value(json_object_get(o, "min")) == 600);
    assert_true(json_real_value(json_object_get(o, "max")) == 2000);
    assert_int_equal(json_array_size(json_object_get(o, "runs")), 5);
    json_decref(o);
    assert_null(acp_latency_json(c, 0));
}

static void test_bandwidth(void **state)
{
    (void)state;
    /* three blocks: 16, 8 and 32 bytes/clk; the slowest took 2000 cycles */
    uint64_t t[6] = {100, 1100, 0, 2000, 50, 550}, b[3] = {16000, 16000, 16000};
    json_t *o = acp_bandwidth_json(t, b, 3, 1000);
    assert_true(json_real_value(json_object_get(o, "bytes_per_clk_per_sm")) == 16);
    assert_int_equal(json_integer_value(json_object_get(o, "slowest_cycles")), 2000);
    assert_int_equal(json_integer_value(json_object_get(o, "total_bytes")), 48000);
    /* 48000 bytes in 2000 cycles at 1 GHz: 2 us, 24 GB/s */
    assert_true(fabs(json_real_value(json_object_get(o, "gb_s")) - 24.0) < 1e-9);
    json_decref(o);
    o = acp_bandwidth_json(t, b, 2, 0);        /* even count: mean of the middle two */
    assert_true(json_real_value(json_object_get(o, "bytes_per_clk_per_sm")) == 12);
    assert_true(json_is_null(json_object_get(o, "gb_s")));
    json_decref(o);
    t[3] = 0;                                   /* a clock that did not advance */
    o = acp_bandwidth_json(t, b, 3, 1000);
    assert_non_null(strstr(json_string_value(json_object_get(o, "error")), "block 1"));
    json_decref(o);
}

static json_t *bw_point(const char *m, int bytes, const char *level, double rate)
{
    return json_pack("{s:s,s:i,s:s,s:f}", "method", m, "bytes", bytes, "level", level,
                     "bytes_per_clk_per_sm", rate);
}

static void test_summary(void **state)
{
    (void)state;
    json_t *pts = json_array();
    json_array_append_new(pts, bw_point("ld", 16, "dram", 20));
    json_array_append_new(pts, bw_point("ld", 4, "dram", 10));
    json_array_append_new(pts, bw_point("bulk", 1024, "dram", 30));
    json_array_append_new(pts, bw_point("bulk", 16384, "dram", 40));
    json_array_append_new(pts, bw_point("bulk", 64, "l2", 5));
    json_array_append_new(pts, json_pack("{s:s,s:i,s:s,s:s}", "method", "tensor", "bytes", 128, "level",
                                         "dram", "error", "no map"));
    json_t *s = acp_bandwidth_summary(pts);
    json_t *bulk = json_object_get(json_object_get(s, "dram"), "bulk");
    assert_true(json_real_value(json_object_get(bulk, "best")) == 40);
    assert_int_equal(json_integer_value(json_object_get(bulk, "at_bytes")), 16384);
    assert_true(json_real_value(json_object_get(bulk, "vs_ld")) == 2);
    assert_null(json_object_get(json_object_get(s, "dram"), "tensor"));
    /* no plain loads at l2: no ratio */
    assert_true(json_is_null(json_object_get(json_object_get(json_object_get(s, "l2"), "bulk"), "vs_ld")));
    json_decref(s);
    json_decref(pts);
}

static json_t *lat_point(const char *m, int bytes, int per_copy, double median)
{
    return json_pack("{s:s,s:i,s:i,s:s,s:{s:f,s:f,s:f}}", "method", m, "bytes", bytes, "bytes_per_copy",
                     per_copy, "level", "l2", "cycles", "median", median, "min", median, "max", median);
}

static void test_latency_by_bytes(void **state)
{
    (void)state;
    json_t *pts = json_array();
    json_array_append_new(pts, lat_point("ld", 16, 512, 610));
    json_array_append_new(pts, lat_point("cg", 16, 512, 640));
    json_array_append_new(pts, lat_point("bulk", 512, 512, 700));
    json_array_append_new(pts, lat_point("ld", 8, 256, 600));         /* alone at 256: left out */
    json_array_append_new(pts, json_pack("{s:s,s:i,s:s,s:s}", "method", "tensor", "bytes", 512, "level", "l2",
                                         "error", "no map"));
    json_t *by = acp_latency_by_bytes(pts);
    assert_int_equal(json_object_size(by), 1);
    json_t *g = json_object_get(by, "512");
    assert_int_equal(json_object_size(g), 3);
    assert_true(json_real_value(json_object_get(g, "bulk")) == 700);
    assert_true(json_real_value(json_object_get(g, "ld")) == 610);
    json_decref(by);
    json_decref(pts);
}

/* A document as acp_probe writes it (acp_document), with every kind of
 * point and machine-code check it can hold, must pass the store's check of
 * the memory result it is part of. */
static void test_documents_pass_the_store_check(void **state)
{
    (void)state;
    char err[256];
    uint32_t c[3] = {700, 720, 710};
    uint64_t t[2] = {0, 1000}, b[1] = {16384}, stuck[2] = {5, 5};
    json_t *lat = json_array(), *bw = json_array(), *sass = json_object();
    json_array_append_new(lat, json_pack("{s:s,s:i,s:i,s:s,s:o}", "method", "bulk", "bytes", 1024,
                                         "bytes_per_copy", 1024, "level", "l2", "cycles",
                                         acp_latency_json(c, 3)));
    json_array_append_new(lat, json_pack("{s:s,s:i,s:s,s:s}", "method", "tensor", "bytes", 128, "level",
                                         "l2", "error", "the driver has no cuTensorMapEncodeTiled"));
    const json_t *rates[] = {acp_bandwidth_json(t, b, 1, 1755), acp_bandwidth_json(t, b, 1, 0),
                             acp_bandwidth_json(stuck, b, 1, 1755)};
    for (size_t i = 0; i < 3; i++) {
        json_t *pt = bw_point(i ? "ca" : "bulk", i == 2 ? 4 : 1024, i == 1 ? "l2" : "dram", 0);
        json_object_del(pt, "bytes_per_clk_per_sm");
        json_object_update(pt, (json_t *)rates[i]);
        json_decref((json_t *)rates[i]);
        json_array_append_new(bw, pt);
    }
    size_t len;
    char *bin = fixture("ca16_lat", "cubin", &len);
    json_object_set_new(sass, "ca16_lat", acp_sass_check(ACP_CA, 1, bin, len));
    json_object_set_new(sass, "bulk1024_lat", acp_sass_check(ACP_BULK, 1, bin, len)); /* with a listing */
    free(bin);
    json_t *ac = acp_document(lat, bw, "ok", sass, 200 << 20, 12 << 20);
    json_object_set_new(ac, "wall_s", json_real(0.5));
    assert_non_null(json_object_get(json_object_get(ac, "summary"), "dram"));
    char *text = json_dumps(ac, JSON_COMPACT);
    json_t *doc = rdb_memory_with("async_copy", text);
    if (results_memory_check(doc, err, sizeof err) != 0)
        fail_msg("refused: %s", err);
    json_decref(doc);
    free(text);
    json_decref(ac);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ptx_is_the_fixtures),  cmocka_unit_test(test_sass_check_accepts_fixtures),
        cmocka_unit_test(test_sass_check_refuses),   cmocka_unit_test(test_latency_spread),
        cmocka_unit_test(test_bandwidth),            cmocka_unit_test(test_summary),
        cmocka_unit_test(test_latency_by_bytes),     cmocka_unit_test(test_documents_pass_the_store_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
