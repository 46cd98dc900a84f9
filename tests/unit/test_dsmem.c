/*
 * Unit tests of the distributed-shared-memory probe (probes/dsmem.h): the
 * ring the chase follows, the PTX of every cluster size, the machine-code
 * check on a cubin ptxas made from it, and the figures made from timings.
 *
 * DESIGN
 * The golden tests/fixtures/ptx/dsmem_4.ptx is dsm_ptx(9, 0, 4) byte for
 * byte (GPUPROBE_UPDATE_GOLDEN=1 rewrites it); dsmem_4.sm_90.cubin is it
 * compiled by ptxas 13.0 (tests/fixtures/ptx/README.md), so the check of
 * the generic LD (sass.c's 0x180) runs without a toolkit; where ptxas
 * exists every size's current text is compiled and checked as well. The
 * analysis is fed made timings whose figures are known by construction.
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
#include <unistd.h>

#include "probes/dsmem.h"
#include "probes/gpu/cubin.h"
#include "probes/gpu/sass.h"
#include "probes/memory.h"
#include "tests/unit/support/ptxas.h"
#include "tests/unit/support/tmpfile.h"

#define GOLDEN "tests/fixtures/ptx/dsmem_4.ptx"
#define CUBIN "tests/fixtures/ptx/dsmem_4.sm_90.cubin"

static size_t count_of(const char *text, const char *needle)
{
    size_t n = 0, len = strlen(needle);
    for (const char *p = text; (p = strstr(p, needle)); p += len)
        n++;
    return n;
}

static int verified(const json_t *o) { return json_is_true(json_object_get(o, "verified")); }

/* ---- the ring ------------------------------------------------------------ */

static void test_next_is_one_cycle(void **state)
{
    (void)state;
    static unsigned char seen[DSM_RING_WORDS];
    memset(seen, 0, sizeof seen);
    unsigned w = 0, steps = 0;
    do {
        unsigned off = dsm_next(w);
        assert_int_equal(off % 4, 0);
        assert_true(off < DSM_RING_WORDS * 4);
        assert_int_equal(seen[w], 0);
        seen[w] = 1;
        w = off / 4;
        steps++;
    } while (w != 0 && steps <= DSM_RING_WORDS);
    /* back at word 0 after visiting every word once: a single cycle */
    assert_int_equal(w, 0);
    assert_int_equal(steps, DSM_RING_WORDS);
    /* a timed pass ends where it began (the kernel's chase end is word 0) */
    assert_int_equal((2 * DSM_CHASE_LOADS) % DSM_RING_WORDS, 0);
}

/* ---- the text ------------------------------------------------------------ */

static void test_golden(void **state)
{
    (void)state;
    char *text = dsm_ptx(9, 0, 4);
    assert_non_null(text);
    if (getenv("GPUPROBE_UPDATE_GOLDEN")) {
        write_file(GOLDEN, text);
    } else {
        char *want = must_read_file(GOLDEN, NULL);
        if (strcmp(text, want) != 0)
            fail_msg(GOLDEN " differs from dsm_ptx(9, 0, 4) (GPUPROBE_UPDATE_GOLDEN=1 rewrites it)");
        free(want);
    }
    free(text);
}

static void test_structure(void **state)
{
    (void)state;
    for (int i = 0; i < DSM_SIZES; i++) {
        char *text = dsm_ptx(9, 0, dsm_sizes[i]), want[64];
        assert_non_null(text);
        assert_non_null(strstr(text, ".target sm_90\n"));
        snprintf(want, sizeof want, ".reqnctapercluster %u, 1, 1\n", dsm_sizes[i]);
        assert_int_equal(count_of(text, want), 2);
        assert_int_equal(count_of(text, ".visible .entry dsm_lat("), 1);
        assert_int_equal(count_of(text, ".visible .entry dsm_bw("), 1);
        /* the chase: DSM_UNROLL loads whose address is the last value */
        assert_int_equal(count_of(text, "\tld.shared::cluster.u32 %x, [%x];\n"), DSM_UNROLL);
        assert_int_equal(count_of(text, "\tld.volatile.shared::cluster.v4.u32 "), DSM_BW_LOADS);
        assert_int_equal(count_of(text, "ld."), DSM_UNROLL + DSM_BW_LOADS + 6); /* + 6 ld.param */
        assert_int_equal(count_of(text, "%clock64"), 4);
        assert_int_equal(count_of(text, ".pragma \"nounroll\""), 3);
        /* the fill is dsm_next: x 97 + 1, mod 1024, bytes */
        assert_int_equal(count_of(text, "\tmad.lo.u32 %v, %i, 97, 1;\n\tand.b32 %v, %v, 1023;\n"
                                        "\tshl.b32 %v, %v, 2;\n"), 2);
        /* no block leaves before the others are done with its ring */
        assert_int_equal(count_of(text, "barrier.cluster.wait;\n\tret;"), 2);
        assert_int_equal(count_of(text, "%cluster_nctarank"), 2);
        assert_int_equal(count_of(text, "%smid"), 2);
        free(text);
    }
}

/* ---- the machine code ---------------------------------------------------- */

/* The instruction index of the n-th instruction of mnemonic op in kernel k. */
static long nth_op(const uint8_t *cubin, size_t size, const char *kernel, const char *op, int n,
                   uint8_t **text)
{
    struct cubin c;
    char err[128], mn[SASS_MNEMONIC_MAX];
    assert_int_equal(cubin_parse(&c, cubin, size, err, sizeof err), 0);
    const struct cubin_kernel *k = cubin_kernel_find(&c, kernel);
    assert_non_null(k);
    long at = -1;
    for (size_t i = 0; at < 0 && i < k->text_size / SASS_INSN_BYTES; i++) {
        struct sass_insn in = sass_decode(k->text, i * SASS_INSN_BYTES);
        if (strcmp(sass_mnemonic(&in, mn), op) == 0 && n-- == 0)
            at = (long)i;
    }
    *text = (uint8_t *)k->text;
    cubin_free(&c);
    return at;
}

static void test_fixture_cubin(void **state)
{
    (void)state;
    size_t n;
    uint8_t *cubin = (uint8_t *)must_read_file(CUBIN, &n);
    json_t *lat = mem_sass_check_kernel(&dsm_lat_kernel, cubin, n);
    json_t *bw = mem_sass_check_kernel(&dsm_bw_kernel, cubin, n);
    if (!verified(lat) || !verified(bw))
        fail_msg("%s / %s", json_dumps(lat, JSON_COMPACT), json_dumps(bw, JSON_COMPACT));
    json_t *r = json_array_get(json_object_get(lat, "regions"), 0);
    assert_int_equal(json_integer_value(json_object_get(r, "found")), DSM_UNROLL);
    json_decref(lat);
    json_decref(bw);

    /* one of the chase's LDs made an LDG: counted as another load, refused */
    uint8_t *copy = malloc(n), *text;
    memcpy(copy, cubin, n);
    long at = nth_op(copy, n, "dsm_lat", "LD", 3, &text);
    assert_true(at >= 0);
    struct sass_insn in = sass_decode(text, (size_t)at * SASS_INSN_BYTES);
    assert_int_equal(sass_field(&in, SASS_OPCODE_BASE), 0x180);
    assert_int_equal(sass_set_field(&in, SASS_OPCODE_BASE, 0x181), 0);
    sass_encode(&in, text, (size_t)at * SASS_INSN_BYTES);
    lat = mem_sass_check_kernel(&dsm_lat_kernel, copy, n);
    assert_false(verified(lat));
    r = json_array_get(json_object_get(lat, "regions"), 0);
    assert_int_equal(json_integer_value(json_object_get(r, "found")), DSM_UNROLL - 1);
    assert_int_equal(json_integer_value(json_object_get(r, "other_loads")), 1);
    json_decref(lat);
    /* a count the chase does not have is refused */
    json_t *wrong = mem_sass_check_kernel(&(struct mem_kernel){"dsm_lat", "dsm_lat", "x", "LD", "LD", 1,
                                                               {2 * DSM_UNROLL, 0, 0}},
                                          cubin, n);
    assert_false(verified(wrong));
    json_decref(wrong);
    free(copy);
    free(cubin);
}

static void test_ptxas_every_size(void **state)
{
    struct tmp *t = *state;
    const char *ptxas = ptxas_find();
    if (!ptxas) {
        print_message("ptxas not found: compiling every cluster size is skipped\n");
        skip();
    }
    char cubin_path[160];
    snprintf(cubin_path, sizeof cubin_path, "%s/k.cubin", t->dir);
    for (int i = 0; i < DSM_SIZES; i++) {
        char *text = dsm_ptx(9, 0, dsm_sizes[i]);
        write_file(t->path, text);
        free(text);
        int rc = ptxas_run(ptxas, t->path, cubin_path);
        if (rc != 0)
            fail_msg("ptxas failed (%d) on the cluster of %u", rc, dsm_sizes[i]);
        size_t n;
        uint8_t *cubin = (uint8_t *)must_read_file(cubin_path, &n);
        json_t *lat = mem_sass_check_kernel(&dsm_lat_kernel, cubin, n);
        json_t *bw = mem_sass_check_kernel(&dsm_bw_kernel, cubin, n);
        if (!verified(lat) || !verified(bw))
            fail_msg("size %u: %s / %s", dsm_sizes[i], json_dumps(lat, JSON_COMPACT),
                     json_dumps(bw, JSON_COMPACT));
        json_decref(lat);
        json_decref(bw);
        free(cubin);
        unlink(cubin_path);
    }
}

/* ---- the analysis -------------------------------------------------------- */

#define REP 3

static double num(const json_t *o, const char *a, const char *b, const char *c)
{
    const json_t *v = json_object_get(json_object_get(o, a), b);
    if (c)
        v = json_object_get(v, c);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

/* Latency (cycles a load) local 30, neighbour 190, farthest 200, each
 * repeat k off by k; the slowest block of a bandwidth launch takes
 * `slow` cycles locally and 4 x that remotely. */
static void made(struct dsm_raw *r, uint64_t *lat, uint64_t *bw, unsigned asked, uint64_t slow)
{
    const unsigned per[DSM_TARGETS] = {30, 190, 200};
    for (int t = 0; t < DSM_TARGETS; t++)
        for (int k = 0; k < REP; k++)
            lat[t * REP + k] = (uint64_t)(per[t] + (unsigned)k) * DSM_CHASE_LOADS;
    for (int d = 0; d < DSM_DISTS; d++)
        for (int k = 0; k < REP; k++)
            for (unsigned b = 0; b < asked; b++)
                bw[((size_t)d * REP + (size_t)k) * asked + b] = (b == asked - 1 ? slow : slow / 2) * (d ? 4 : 1);
    *r = (struct dsm_raw){.asked = asked, .driver_width = (int)asked, .max_clusters = 7, .launched = 1,
                          .repeats = REP, .ranks_seen = asked, .distinct_sms = asked, .lat = lat, .bw = bw};
}

static void test_analysis_figures(void **state)
{
    (void)state;
    uint64_t lat[DSM_TARGETS * REP], bw[DSM_DISTS * REP * 4];
    struct dsm_raw r;
    made(&r, lat, bw, 4, 100000);
    json_t *e = dsm_analyze(&r, 1500.0);
    assert_non_null(e);
    assert_true(json_is_true(json_object_get(e, "agrees")));
    assert_true(json_is_true(json_object_get(e, "launched")));
    assert_int_equal(json_integer_value(json_object_get(e, "max_active_clusters")), 7);
    assert_null(json_object_get(e, "error"));
    assert_true(num(e, "latency_cycles", "local", "median") == 31.0);
    assert_true(num(e, "latency_cycles", "local", "min") == 30.0);
    assert_true(num(e, "latency_cycles", "neighbour", "max") == 192.0);
    assert_true(num(e, "latency_cycles", "farthest", "median") == 201.0);
    /* the slowest block sets the time: bytes per block / slowest */
    double local = DSM_BW_BLOCK_BYTES / 100000.0;
    assert_true(num(e, "bytes_per_clk_sm", "local", "median") == local);
    assert_true(num(e, "bytes_per_clk_sm", "remote", "median") == local / 4);
    assert_true(fabs(num(e, "gb_s_sm", "local", NULL) - local * 1.5) < 1e-9);
    json_decref(e);

    /* two blocks on one SM: the SMs' share is larger */
    r.distinct_sms = 2;
    e = dsm_analyze(&r, 0);
    assert_true(num(e, "bytes_per_clk_sm", "local", "median") == local * 2);
    assert_null(json_object_get(e, "gb_s_sm"));   /* no clock, no GB/s */
    json_decref(e);
}

static void test_analysis_disagreement_and_errors(void **state)
{
    (void)state;
    uint64_t lat[DSM_TARGETS * REP], bw[DSM_DISTS * REP * 16];
    struct dsm_raw r;
    made(&r, lat, bw, 16, 50000);
    r.driver_width = 8;                  /* the driver read another width */
    json_t *e = dsm_analyze(&r, 1000);
    assert_false(json_is_true(json_object_get(e, "agrees")));
    assert_int_equal(json_integer_value(json_object_get(e, "driver_width")), 8);
    json_decref(e);
    r.driver_width = 16;
    r.ranks_seen = 0;                    /* the blocks saw different sizes */
    e = dsm_analyze(&r, 1000);
    assert_false(json_is_true(json_object_get(e, "agrees")));
    json_decref(e);

    /* a size that did not launch keeps its reason and no figures */
    r = (struct dsm_raw){.asked = 16, .driver_width = -1, .max_clusters = 0, .error = "no cluster fits"};
    e = dsm_analyze(&r, 1000);
    assert_false(json_is_true(json_object_get(e, "launched")));
    assert_true(json_is_null(json_object_get(e, "driver_width")));
    assert_string_equal(json_string_value(json_object_get(e, "error")), "no cluster fits");
    assert_null(json_object_get(e, "latency_cycles"));
    assert_null(json_object_get(e, "bytes_per_clk_sm"));
    json_decref(e);
}

static int setup_tmp(void **state) { return tmp_setup(state, "dsmem", "k.ptx"); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_next_is_one_cycle),
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_structure),
        cmocka_unit_test(test_fixture_cubin),
        cmocka_unit_test_setup_teardown(test_ptxas_every_size, setup_tmp, tmp_teardown),
        cmocka_unit_test(test_analysis_figures),
        cmocka_unit_test(test_analysis_disagreement_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
