/*
 * The capture's same-answer check of one buffer (probes/capture_compare.c):
 * byte for byte, except elements that float atomic adds alone wrote, let
 * through within 2 (m - 1) u max(|a|, |b|) for m adds.
 *
 * DESIGN
 * The kernel is a small hand-written module whose four sites are one of
 * each kind the check tells apart: a float atomic add (pc 0), a plain
 * store (pc 1), an f64 reduction (pc 2), an integer atomic add (pc 3),
 * and a load (pc 4). The records are made here, as the recording pass
 * leaves them ({u64 addr, u32 tid, u32 pc}); the bounds below are worked
 * out by hand from u = 2^-24 (f32) and 2^-53 (f64).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "probes/capture.h"
#include "probes/ptx_instrument.h"

#define BASE 0x7f0000000000ull

static const char module[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry k(.param .u64 p)\n{\n"
    "\t.reg .f32 %f<4>;\n\t.reg .f64 %fd<2>;\n\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<3>;\n"
    "\tld.param.u64 %rd1, [p];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
    "\tatom.global.add.f32 %f1, [%rd2], %f2;\n"
    "\tst.global.f32 [%rd2+4], %f1;\n"
    "\tred.global.add.f64 [%rd2+8], %fd1;\n"
    "\tatom.global.add.u32 %r1, [%rd2+16], %r2;\n"
    "\tld.global.f32 %f3, [%rd2+20];\n"
    "\tret;\n}\n";

struct fixture {
    struct ptxi_kernel k;
    unsigned char *recs;
    uint64_t n;
};

static void add(struct fixture *f, uint32_t pc, uint64_t offset, uint64_t times)
{
    f->recs = realloc(f->recs, (f->n + times) * PTXI_RECORD_BYTES);
    for (uint64_t i = 0; i < times; i++, f->n++) {
        uint64_t addr = BASE + offset;
        uint32_t tid = (uint32_t)i;
        memcpy(f->recs + f->n * PTXI_RECORD_BYTES, &addr, 8);
        memcpy(f->recs + f->n * PTXI_RECORD_BYTES + 8, &tid, 4);
        memcpy(f->recs + f->n * PTXI_RECORD_BYTES + 12, &pc, 4);
    }
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    char err[256];
    assert_int_equal(ptxi_analyze(module, NULL, &f->k, err, sizeof err), 0);
    assert_int_equal(f->k.nsites, 5);
    /* the analyser tells float adds (their element's bytes) from the rest */
    const unsigned float_add[5] = {4, 0, 8, 0, 0};
    for (int i = 0; i < 5; i++)
        assert_int_equal(f->k.sites[i].float_add, float_add[i]);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    ptxi_kernel_free(&f->k);
    free(f->recs);
    free(f);
    return 0;
}

/* A 24-byte buffer: f32 at 0 and 4, f64 at 8, u32 at 16, f32 at 20. */
struct buf {
    float a, b;
    double c;
    uint32_t d;
    float e;
};

static void run(struct fixture *f, const struct buf *x, const struct buf *y,
                struct capture_diff *d)
{
    assert_int_equal(capture_compare((const unsigned char *)x, (const unsigned char *)y,
                                     sizeof *x, BASE, &f->k, f->recs, f->n, d),
                     0);
}

static void test_equal_buffers_read_no_records(void **state)
{
    struct fixture *f = *state;
    struct buf x = {1, 2, 3, 4, 5}, y = x;
    struct capture_diff d;
    run(f, &x, &y, &d); /* no records at all: equal bytes need none */
    assert_int_equal(d.first, sizeof x);
    assert_int_equal(d.rounded, 0);
}

static void test_float_adds_let_through_within_the_bound(void **state)
{
    struct fixture *f = *state;
    add(f, 0, 0, 1000);  /* 1000 float adds into a */
    add(f, 2, 8, 1u << 20); /* 2^20 f64 adds into c */
    struct buf x = {1000.0f, 2, 1.0, 4, 5}, y = x;
    /* a: bound 2 x 999 x 2^-24 x 1000 = 0.119; 3 ulps of 1000 (6.1e-5 each) */
    y.a = nextafterf(nextafterf(nextafterf(x.a, 2000.0f), 2000.0f), 2000.0f);
    /* c: bound 2 x (2^20 - 1) x 2^-53 x 1 = 2.3e-10; one ulp of 1.0 */
    y.c = nextafter(1.0, 2.0);
    struct capture_diff d;
    run(f, &x, &y, &d);
    assert_int_equal(d.first, sizeof x);
    assert_int_equal(d.rounded, 2);
    assert_true(d.worst > 0 && d.worst < 0.01);
    /* past the bound: 1000 against 1000.2 */
    y.a = 1000.2f;
    run(f, &x, &y, &d);
    assert_int_equal(d.first, 0);
    /* a difference in c's second word is still c's */
    y.a = x.a;
    y.c = 1.0 + 1e-3;
    run(f, &x, &y, &d);
    assert_true(d.first >= 8 && d.first < 16);
}

static void test_other_writers_are_exact(void **state)
{
    struct fixture *f = *state;
    struct buf x = {7, 2, 3, 4, 5}, y = x;
    struct capture_diff d;
    /* b: a plain store, however close */
    add(f, 1, 4, 3);
    y.b = nextafterf(2.0f, 3.0f);
    run(f, &x, &y, &d);
    assert_int_equal(d.first, 4);
    /* d: integer atomics are exact whatever the order */
    y.b = x.b;
    add(f, 3, 16, 100);
    y.d = 5;
    run(f, &x, &y, &d);
    assert_int_equal(d.first, 16);
    /* e: only loaded, never written by the kernel */
    y.d = x.d;
    add(f, 4, 20, 100);
    y.e = nextafterf(5.0f, 6.0f);
    run(f, &x, &y, &d);
    assert_int_equal(d.first, 20);
    /* a: float adds and a store to the same element */
    y.e = x.e;
    add(f, 0, 0, 50);
    add(f, 1, 0, 1);
    y.a = nextafterf(7.0f, 8.0f);
    run(f, &x, &y, &d);
    assert_int_equal(d.first, 0);
}

static void test_one_add_is_exact(void **state)
{
    struct fixture *f = *state;
    add(f, 0, 0, 1); /* one add: one rounding, the same in any run */
    struct buf x = {1, 2, 3, 4, 5}, y = x;
    y.a = nextafterf(1.0f, 2.0f);
    struct capture_diff d;
    run(f, &x, &y, &d);
    assert_int_equal(d.first, 0);
}

static void test_first_failure_after_a_rounded_element(void **state)
{
    struct fixture *f = *state;
    add(f, 0, 0, 64);
    add(f, 1, 4, 1);
    struct buf x = {64, 2, 3, 4, 5}, y = x;
    y.a = nextafterf(64.0f, 0.0f);
    y.b = 2.5f;
    struct capture_diff d;
    run(f, &x, &y, &d);
    assert_int_equal(d.rounded, 1);
    assert_true(d.first >= 4 && d.first < 8); /* b's first differing byte */
    /* NaN is never rounding */
    y.b = x.b;
    y.a = NAN;
    run(f, &x, &y, &d);
    assert_true(d.first < 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_equal_buffers_read_no_records, setup, teardown),
        cmocka_unit_test_setup_teardown(test_float_adds_let_through_within_the_bound, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_other_writers_are_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_add_is_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_first_failure_after_a_rounded_element, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
