/*
 * Unit tests of the L2 partition probe's analysis (probes/l2_parts.h) and
 * its kernel's text.
 *
 * DESIGN
 * The analysis runs on real H100 timings (tests/fixtures/l2parts/README.md
 * says how they were taken): it must group SMs 0-23 as the GPU did (the
 * grouping was read off all 132 SMs' timings by hand: near to every line,
 * or far from half of them) and find the 4 KiB home granule. Then on
 * timings made here: a unified L2 (every SM near to every line) must read
 * "one partition"; an SM far from too few lines to be the other
 * partition's, "not determined"; and a home function of known bits
 * (parity of address bits 12 and 14, per page a constant) must be found
 * bit for bit, with copies kept or not as the second reads say. Every
 * document, whatever its verdict, must pass the store's check of the
 * memory result it is part of.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "db/results.h"
#include "probes/l2_parts.h"
#include "tests/unit/support/resultdb.h"
#include "tests/unit/support/tmpfile.h"

#define FIX "tests/fixtures/l2parts/h100-sm0-23.bin"

/* The verdict of o, once o has passed the store's check inside a memory
 * result (the smallest the memory walk accepts). */
static const char *verdict_of(json_t *o)
{
    char err[256];
    json_t *doc = rdb_memory_with("l2_partitions", NULL);
    json_object_set(doc, "l2_partitions", o);
    if (results_memory_check(doc, err, sizeof err) != 0)
        fail_msg("the store refuses the search's document: %s", err);
    json_decref(doc);
    return json_string_value(json_object_get(o, "verdict"));
}

static void test_h100_timings(void **state)
{
    (void)state;
    size_t len;
    char *buf = must_read_file(FIX, &len);
    uint32_t head[4];
    memcpy(head, buf, sizeof head);
    int nsm = (int)head[0], n = (int)head[1];
    assert_int_equal(len, 16 + (size_t)n * 8 + (size_t)nsm * L2P_PASSES * n * 4);
    uint64_t *addr = malloc((size_t)n * sizeof *addr);
    uint32_t *t = malloc((size_t)nsm * L2P_PASSES * n * sizeof *t);
    unsigned char measured[64];
    memcpy(addr, buf + 16, (size_t)n * 8);
    memcpy(t, buf + 16 + (size_t)n * 8, (size_t)nsm * L2P_PASSES * n * 4);
    memset(measured, 1, sizeof measured);
    struct l2p_input in = {nsm, n, head[2], addr, t, measured};
    json_t *o = l2p_analyze(&in);
    assert_string_equal(verdict_of(o), "two partitions");
    static const int want[24] = {0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1};
    json_t *part = json_object_get(o, "sm_partition");
    assert_int_equal(json_array_size(part), 24);
    for (int s = 0; s < 24; s++)
        assert_int_equal(json_integer_value(json_array_get(part, s)), want[s]);
    json_t *home = json_object_get(o, "home");
    assert_int_equal(json_integer_value(json_object_get(home, "granule_bytes")), 4096);
    assert_true(json_is_true(json_object_get(o, "copies_kept")));
    double ff = json_real_value(json_object_get(o, "far_fraction"));
    assert_true(ff > 0.4 && ff < 0.6);
    json_t *cy = json_object_get(o, "cycles");
    double near = json_real_value(json_object_get(cy, "near")), far = json_real_value(json_object_get(cy, "far"));
    assert_true(near > 250 && near < 320);
    assert_true(far > 1.3 * near);
    /* a miss homed away from the warmer crosses the fabric first */
    assert_true(json_real_value(json_object_get(cy, "memory_home_far")) >
                json_real_value(json_object_get(cy, "memory_home_near")));
    json_decref(o);
    free(addr);
    free(t);
    free(buf);
}

/* Timings made here: SM s is in partition part(s); line j is homed by
 * parity(addr & home_mask) ^ (page & 1); near 280, far 430, memory 700; the
 * second read near if copies, else as the first. far_only: SM 6 finds only
 * this share of its far lines far (the rest near). */
struct made {
    int nsm, n;
    uint64_t home_mask;
    int unified, copies;
    double far_only;
    uint64_t *addr;
    uint32_t *t;
    unsigned char measured[32];
};

static int part_of(int s) { return (s / 2) % 2; }

static int homed_at(const struct made *m, uint64_t a)
{
    return (__builtin_popcountll(a & m->home_mask) + (int)(a >> L2P_PAGE_BITS)) & 1;
}

static void make(struct made *m)
{
    m->addr = malloc((size_t)m->n * sizeof *m->addr);
    m->t = malloc((size_t)m->nsm * L2P_PASSES * m->n * sizeof *m->t);
    memset(m->measured, 1, sizeof m->measured);
    for (int j = 0; j < m->n; j++)
        m->addr[j] = ((uint64_t)3 << 30) + l2p_line_offset((unsigned)j);
    for (int s = 0; s < m->nsm; s++)
        for (int j = 0; j < m->n; j++) {
            uint32_t *t = m->t + (size_t)s * L2P_PASSES * m->n;
            int h = homed_at(m, m->addr[j]); /* the warmer (SM 0) is in partition 0 */
            int far = !m->unified && part_of(s) != 0 && h == 0;
            if (far && s == 6 && (double)(j % 100) >= 100 * m->far_only)
                far = 0;
            uint32_t jitter = (uint32_t)(j * 7 % 13);
            t[j] = (h == 0 ? 650 : 760) + jitter;
            t[m->n + j] = 280 + jitter;
            t[2 * m->n + j] = (far ? 430 : 280) + jitter;
            t[3 * m->n + j] = (far && !m->copies ? 430 : 280) + jitter;
        }
}

static json_t *analyze(struct made *m)
{
    struct l2p_input in = {m->nsm, m->n, 0, m->addr, m->t, m->measured};
    json_t *o = l2p_analyze(&in);
    free(m->addr);
    free(m->t);
    return o;
}

static void test_made_home_function(void **state)
{
    (void)state;
    struct made m = {.nsm = 16, .n = L2P_LINES, .home_mask = (1u << 12) | (1u << 14), .copies = 1, .far_only = 1};
    make(&m);
    json_t *o = analyze(&m);
    assert_string_equal(verdict_of(o), "two partitions");
    json_t *home = json_object_get(o, "home");
    assert_int_equal(json_integer_value(json_object_get(home, "granule_bytes")), 4096);
    json_t *bits = json_object_get(home, "mask_bits");
    assert_int_equal(json_array_size(bits), 2);
    assert_int_equal(json_integer_value(json_array_get(bits, 0)), 12);
    assert_int_equal(json_integer_value(json_array_get(bits, 1)), 14);
    assert_int_equal(json_array_size(json_object_get(home, "unpinned_bits")), 0);
    assert_true(json_is_true(json_object_get(o, "copies_kept")));
    json_t *part = json_object_get(o, "sm_partition");
    for (int s = 0; s < 16; s++)
        assert_int_equal(json_integer_value(json_array_get(part, s)), part_of(s));
    json_decref(o);
}

static void test_made_no_copies(void **state)
{
    (void)state;
    struct made m = {.nsm = 8, .n = L2P_LINES, .home_mask = 1u << 13, .copies = 0, .far_only = 1};
    make(&m);
    json_t *o = analyze(&m);
    assert_string_equal(verdict_of(o), "two partitions");
    assert_true(json_is_false(json_object_get(o, "copies_kept")));
    json_decref(o);
}

static void test_made_unified(void **state)
{
    (void)state;
    struct made m = {.nsm = 8, .n = L2P_LINES, .home_mask = 1u << 12, .unified = 1, .far_only = 1};
    make(&m);
    json_t *o = analyze(&m);
    assert_string_equal(verdict_of(o), "one partition");
    json_decref(o);
}

static void test_made_ambiguous_sm(void **state)
{
    (void)state;
    /* SM 6 (partition 1) finds only 20% of its far lines far: 10% of all */
    struct made m = {.nsm = 8, .n = L2P_LINES, .home_mask = 1u << 12, .copies = 1, .far_only = 0.2};
    make(&m);
    json_t *o = analyze(&m);
    assert_string_equal(verdict_of(o), "not determined");
    assert_non_null(json_object_get(o, "reason"));
    assert_true(json_is_null(json_array_get(json_object_get(o, "sm_partition"), 6)));
    json_decref(o);
}

static void test_kernel_text(void **state)
{
    (void)state;
    char *ptx = l2p_ptx(9, 0);
    assert_non_null(ptx);
    assert_non_null(strstr(ptx, ".visible .entry l2p_time("));
    /* exactly one timed load, of the .cg kind, between the clock reads */
    char *c0 = strstr(ptx, "%clock64"), *c1 = c0 ? strstr(c0 + 1, "%clock64") : NULL;
    assert_non_null(c1);
    char *ld = strstr(c0, "ld.global");
    assert_true(ld && ld < c1 && strncmp(ld, "ld.global.cg.u32", 16) == 0);
    assert_null(strstr(ld + 1, "ld.global") && strstr(ld + 1, "ld.global") < c1 ? ld : NULL);
    free(ptx);
    assert_int_equal(l2p_line_offset(0), 0);
    assert_int_equal(l2p_line_offset(L2P_CONSECUTIVE - 1), (L2P_CONSECUTIVE - 1) * 128);
    assert_int_equal(l2p_line_offset(L2P_CONSECUTIVE + 1), L2P_CONSECUTIVE * 128 + L2P_SPREAD);
    assert_true(l2p_line_offset(L2P_LINES - 1) < L2P_REGION);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_h100_timings),       cmocka_unit_test(test_made_home_function),
        cmocka_unit_test(test_made_no_copies),     cmocka_unit_test(test_made_unified),
        cmocka_unit_test(test_made_ambiguous_sm),  cmocka_unit_test(test_kernel_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
