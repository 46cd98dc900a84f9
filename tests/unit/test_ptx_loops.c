/*
 * Unit tests of the PTX loops pd_loops exposes (model/ptx_desc.c) for the
 * SASS side: nesting, trips per entry, one trip's own body per class.
 *
 * DESIGN
 * The validation kernels as captured (tests/fixtures/ptx/capture/, the
 * PTX the model/ cubin fixtures were compiled from) with their launch
 * values: each loop's body is counted by hand from the PTX below. A
 * nested module pins that an inner loop's code is not its parent's, that
 * trips are per entry, that outer loops come first, and that one trip of
 * every body times its trips adds up to pd_describe's total. Refusals are
 * pd_describe's, plus a loop count above the caller's room.
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

#include "model/ptx_desc.h"
#include "tests/unit/support/tmpfile.h"

static char err[512];

static struct pd_launch launch(unsigned bx, unsigned by, const char *param, long long value)
{
    struct pd_launch l;
    memset(&l, 0, sizeof l);
    l.grid[0] = l.grid[1] = l.grid[2] = 1;
    l.block[0] = bx;
    l.block[1] = by;
    l.block[2] = 1;
    if (param) {
        l.nparams = 1;
        snprintf(l.params[0].name, sizeof l.params[0].name, "%s", param);
        l.params[0].value = value;
    }
    return l;
}

static int loops_of(const char *fixture, const struct pd_launch *l, struct pd_loop *out, int max)
{
    char path[256];
    int n;
    snprintf(path, sizeof path, "tests/fixtures/ptx/capture/%s.ptx", fixture);
    char *ptx = must_read_file(path, NULL);
    if (pd_loops(ptx, NULL, l, out, max, &n, err, sizeof err) != 0)
        fail_msg("%s: %s", fixture, err);
    free(ptx);
    return n;
}

static void expect_body(const struct pd_loop *q, double fp32, double in, double shared,
                        double global, double sync)
{
    assert_true(q->body[MC_FP32] == fp32 && q->body[MC_INT] == in &&
                q->body[MC_SHARED] == shared && q->body[MC_GLOBAL] == global && q->sync == sync);
    assert_true(q->body[MC_FP64] == 0 && q->body[MC_SFU] == 0 && q->body[MC_CONV] == 0);
}

static void test_validation_loops(void **state)
{
    (void)state;
    struct pd_loop q[4];
    /* copy and reduce have no p_iters: a parameter the entry lacks is refused */
    struct pd_launch l = launch(256, 1, NULL, 0);
    assert_int_equal(loops_of("validation_copy", &l, q, 4), 0);
    assert_int_equal(loops_of("validation_reduce", &l, q, 4), 0);
    l = launch(256, 1, "p_iters", 16);
    /* mixed: 4 fma; add, setp, bra */
    assert_int_equal(loops_of("validation_mixed", &l, q, 4), 1);
    assert_string_equal(q[0].label, "$L_loop");
    assert_int_equal(q[0].trips, 16);
    assert_int_equal(q[0].parent, -1);
    assert_int_equal(q[0].depth, 1);
    expect_body(&q[0], 4, 3, 0, 0, 0);
    /* strided: ld.global, add.f32; mul.wide, add.u64, 2 add.u32, setp, bra */
    assert_int_equal(loops_of("validation_strided", &l, q, 4), 1);
    expect_body(&q[0], 1, 6, 0, 1, 0);
    /* ffma: 32 fma; add, setp, bra; 512 trips */
    l.params[0].value = 512;
    assert_int_equal(loops_of("validation_ffma", &l, q, 4), 1);
    assert_int_equal(q[0].trips, 512);
    expect_body(&q[0], 32, 3, 0, 0, 0);
    /* the matrix products, n = 2048, 16 x 16 blocks */
    l = launch(16, 16, "p_n", 2048);
    /* naive: 2 ld.global, fma; 2 add.u64, add.u32, setp, bra; k < n by 1 */
    assert_int_equal(loops_of("validation_matmul_naive", &l, q, 4), 1);
    assert_string_equal(q[0].label, "$L_k");
    assert_int_equal(q[0].trips, 2048);
    expect_body(&q[0], 1, 5, 0, 2, 0);
    /* tiled: 2 ld.global, 2 st.shared + 32 ld.shared, 16 fma, 2 bar.sync;
     * 2 add.u64, add.u32, setp, bra; k < n by 16 */
    assert_int_equal(loops_of("validation_matmul_tiled", &l, q, 4), 1);
    assert_int_equal(q[0].trips, 128);
    expect_body(&q[0], 16, 5, 34, 2, 2);
}

static const char nested[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry k(.param .u64 p_a, .param .u32 p_n)\n{\n"
    "\t.reg .u32 %i, %j, %m, %n;\n\t.reg .u64 %a;\n\t.reg .f32 %v;\n\t.reg .pred %q, %r, %s;\n"
    "\tld.param.u64 %a, [p_a];\n\tld.param.u32 %n, [p_n];\n"
    "\tmov.u32 %i, 0;\n"
    "$O:\n"
    "\tld.global.f32 %v, [%a];\n"
    "\tmov.u32 %j, 10;\n"
    "$I:\n"
    "\tadd.f32 %v, %v, %v;\n\tsub.u32 %j, %j, 1;\n\tsetp.ne.u32 %q, %j, 0;\n\t@%q bra $I;\n"
    "\tmov.u32 %m, 0;\n"
    "$J:\n"
    "\tmul.f32 %v, %v, %v;\n\tadd.u32 %m, %m, 1;\n\tsetp.lt.u32 %s, %m, 3;\n\t@%s bra $J;\n"
    "\tadd.u32 %i, %i, 2;\n\tsetp.lt.u32 %r, %i, %n;\n\t@%r bra $O;\n"
    "\tst.global.f32 [%a], %v;\n\tret;\n}\n";

static void test_nested(void **state)
{
    (void)state;
    struct pd_loop q[4];
    struct pd_launch l = launch(32, 1, "p_n", 10);
    struct pd_desc d;
    int n;
    assert_int_equal(pd_loops(nested, "k", &l, q, 4, &n, err, sizeof err), 0);
    assert_int_equal(n, 3);
    /* outer first: i = 0, 2 .. 8 */
    assert_string_equal(q[0].label, "$O");
    assert_int_equal(q[0].trips, 5);
    assert_int_equal(q[0].depth, 1);
    assert_int_equal(q[0].parent, -1);
    /* its own trip: ld.global, mov, mov, add, setp, bra; not the inner loops' code */
    expect_body(&q[0], 0, 5, 0, 1, 0);
    assert_string_equal(q[1].label, "$I");
    assert_int_equal(q[1].trips, 10);           /* per entry, not 50 */
    assert_int_equal(q[1].parent, 0);
    assert_int_equal(q[1].depth, 2);
    expect_body(&q[1], 1, 3, 0, 0, 0);
    assert_string_equal(q[2].label, "$J");
    assert_int_equal(q[2].trips, 3);
    assert_int_equal(q[2].parent, 0);
    expect_body(&q[2], 1, 3, 0, 0, 0);
    /* one trip of each body times its trips, plus the straight code (2
     * ld.param are no instructions; mov; st.global), is pd_describe's total */
    assert_int_equal(pd_describe(nested, "k", &l, &d, err, sizeof err), 0);
    double fp32 = 5 * (10 * q[1].body[MC_FP32] + 3 * q[2].body[MC_FP32]);
    double in = 1 + 5 * (q[0].body[MC_INT] + 10 * q[1].body[MC_INT] + 3 * q[2].body[MC_INT]);
    assert_true(d.insts[MC_FP32] == fp32 && d.insts[MC_INT] == in);
    assert_true(d.coal + d.uncoal == 1 + 5 * q[0].body[MC_GLOBAL]);
    /* room for fewer loops than there are: refused, nothing claimed */
    assert_int_equal(pd_loops(nested, "k", &l, q, 2, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "3 loops"));
    assert_int_equal(n, 0);
    /* pd_describe's refusals: a bound it cannot know */
    l.nparams = 0;
    assert_int_equal(pd_loops(nested, "k", &l, q, 4, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "$O"));
    assert_int_equal(pd_loops(NULL, "k", &l, q, 4, &n, err, sizeof err), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validation_loops),
        cmocka_unit_test(test_nested),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
