/*
 * Unit tests of per-warp counts from the SASS (model/sass_counts.c,
 * sass_input.c, sass_counts_json.c).
 *
 * DESIGN
 * The eight validation kernels as ptxas 13.0 compiled them for sm_90
 * (tests/fixtures/cubins/model/, from tests/fixtures/ptx/capture/): their
 * control flow is read by probes/gpu/sass_cfg.h (a test may include both
 * sides; model/ does not), their loops by pd_loops, at the validation
 * launch. Each kernel's expected counts are a hand count from its
 * cuobjdump text, block by block, in the comments of the table below; the
 * code does not compute them. Then, for every trip count from 0 to 40,
 * what the PTX says grows with the trips must grow the same in the SASS:
 * global accesses and barriers equal the PTX's outright (ptxas drops
 * none), and the FFMAs added by one more trip equal the PTX's fma per trip
 * (so the main loop, the remainder copies and the copies not taken are
 * all counted right, for every remainder). Hand-written SASS objects (the
 * plain data the worker attaches) pin what no fixture shows: a remainder
 * loop, nested loops with a guarded copy, a loop unrolled in full, code
 * behind a branch no trip count decides, remainder trips no copy takes,
 * disagreeing markers, and the refusals of malformed objects.
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

#include "model/predict.h"
#include "model/sass_counts.h"
#include "model/sass_input.h"
#include "probes/gpu/sass_cfg.h"
#include "tests/unit/support/tmpfile.h"

#define CUBINS "tests/fixtures/cubins/model/capture-validation_"
#define PTXS "tests/fixtures/ptx/capture/validation_"

static char err[512];

/* A validation kernel: fixture name, entry, block, its one integer
 * parameter (the trips' source) and its value in the validation table. */
struct kernel {
    const char *name, *entry;
    unsigned bx, by;
    const char *param;
    long long value;
};

static struct pd_launch launch_of(const struct kernel *k, long long value)
{
    struct pd_launch l;
    memset(&l, 0, sizeof l);
    l.grid[0] = l.grid[1] = l.grid[2] = 1;
    l.block[0] = k->bx;
    l.block[1] = k->by;
    l.block[2] = 1;
    if (k->param) {
        l.nparams = 1;
        snprintf(l.params[0].name, sizeof l.params[0].name, "%s", k->param);
        l.params[0].value = value;
    }
    return l;
}

/* The kernel's SASS object, read from its cubin fixture. */
static json_t *sass_of(const struct kernel *k)
{
    char path[256];
    size_t size;
    snprintf(path, sizeof path, CUBINS "%s.cubin", k->name);
    char *cubin = must_read_file(path, &size);
    json_t *s = sass_cfg_describe_cubin(cubin, size, k->entry, err, sizeof err);
    if (!s)
        fail_msg("%s: %s", k->name, err);
    free(cubin);
    return s;
}

static char *ptx_of(const struct kernel *k)
{
    char path[256];
    snprintf(path, sizeof path, PTXS "%s.ptx", k->name);
    return must_read_file(path, NULL);
}

/* sc_count for kernel k with its parameter at value; the PTX's description in *pd. */
static void count(const struct kernel *k, const json_t *sass, const char *ptx, long long value,
                  struct sc_desc *d, struct pd_desc *pd)
{
    struct pd_launch l = launch_of(k, value);
    struct pd_loop q[SC_MAX_LOOPS];
    int n;
    if (pd_describe(ptx, k->entry, &l, pd, err, sizeof err) != 0 ||
        pd_loops(ptx, k->entry, &l, q, SC_MAX_LOOPS, &n, err, sizeof err) != 0 ||
        sc_count(sass, q, n, d, err, sizeof err) != 0)
        fail_msg("%s at %lld: %s", k->name, value, err);
}

/* ---- the validation kernels by hand -------------------------------------------- */

enum { F32 = MC_FP32, INT = MC_INT, SHR = MC_SHARED, GLB = MC_GLOBAL };

struct expect {
    struct kernel k;
    double run[SC_NCLASS], off[SC_NCLASS];
    int loops, unroll;
    double trips;
};

#define RUN(f32, in, shr, glb, syn, uni, oth) \
    {[MC_FP32] = f32, [MC_INT] = in, [MC_SHARED] = shr, [MC_GLOBAL] = glb, [SC_SYNC] = syn, \
     [SC_UNIFORM] = uni, [SC_OTHER] = oth}

/*
 * Hand counts from tests/fixtures/cubins/model/capture-validation_NAME.sass
 * (offsets hex; LDC, S2R, CS2R, MOV, SEL, PLOP3, ISETP, BRA ... are int;
 * HFMA2 fp32; U* and S2UR uniform; EXIT other):
 *
 * copy: one block. int: LDC x4, S2R, IMAD x3 = 8; LDG, STG; S2UR, ULDC; EXIT.
 *
 * strided (p_iters 16: 16 trips, unrolled 4 by its 4 LDG a trip -> 4 trips):
 *   000-180 int 14 (LDC x4, S2R, ISETP x3, IMAD x3, MOV, IADD3, BRA), HFMA2,
 *           S2UR, ULDC x2; its @!P0 part is the peeled trip (LDC.64,
 *           IMAD.WIDE, LDG, MOV, IADD3, FADD): 16 mod 4 = 0 trips left, so
 *           issued with P0 false: off int 4, fp32 1, global 1
 *   180-1b0 preheader LDC.64, PLOP3, IADD3: int 3, runs (the loop does)
 *   1b0-2e0 the loop x 4: int 11 (IADD3 x4, IMAD.WIDE x4, IMAD.IADD, ISETP,
 *           BRA), LDG x4, FADD x4
 *   2e0-320 int 4; 320-3d0 two trips behind @P1 BRA 3d0: not reached;
 *   3d0-400 int 3; 400-440 one trip behind @!P0 BRA 440: not reached;
 *   440 STG, EXIT.
 *   run: int 14+3+44+4+3 = 68, fp32 1+16 = 17, global 16+1 = 17.
 *
 * ffma (p_iters 512, not unrolled: 32 FFMA a trip in both):
 *   000-110 int 9 (LDC x3, S2R, MOV x4, IMAD), HFMA2 x4, uniform 4
 *   110-340 the loop x 512: UIADD3, 32 FFMA, ISETP, BRA
 *   340-3f0 LDC.64, 7 FADD, IMAD.WIDE, STG, EXIT
 *   run: fp32 4+16384+7, int 9+1024+2, uniform 4+512.
 *
 * mixed (p_iters 16, unrolled 4 by its 16 FFMA for the PTX's 4 -> 4 trips):
 *   000-110 int 13, LDG, uniform 3 (S2UR, ULDC.64, UMOV)
 *   110-190 the trip peeled for p_iters 0, behind @P1 BRA 190: not reached
 *   190-1d0 int 4; 1d0-210 preheader int 3, ULDC: runs
 *   210-340 the loop x 4: UIADD3, 16 FFMA, ISETP, BRA
 *   340-380 int 4; 380-440 two trips behind @P1 BRA 440: not reached
 *   440-520 int 3, 3 FADD, STG, EXIT; its @P0 part (LDC x2, 4 FFMA) is the
 *           last single trip: not needed, issued with P0 false (off)
 *   run: int 13+4+3+8+4+3 = 35, fp32 64+3, uniform 3+1+4 = 8.
 *
 * reduce (no loop; the eight tree steps are predicated on %tid, so every
 * warp issues them): int 18 (LDC x2, LDC.64, S2R x2, LEA x2, IMAD.WIDE x2,
 * ISETP x9), fp32 3 + 8, shared STS + 8 x (2 LDS + STS) + LDS = 26, LDG x4
 * + STG, BAR x9, uniform 4 (ULDC.64, S2UR, UMOV, ULEA), @P0 EXIT and EXIT.
 *
 * matmul_naive (p_n 2048: 2048 trips, unrolled 4 by 8 LDG for the PTX's 2 -> 512):
 *   000-1e0 int 19, HFMA2, ULDC.64; its @!P0 part is the peeled trip (int 6,
 *           LDG x2, FFMA): off
 *   1e0-200 preheader PLOP3, IADD3: runs
 *   200-370 the loop x 512: int 11, LDG x8, FFMA x4
 *   370-510 int 7, STG, EXIT; @!P1 two trips (int 8, LDG x4, FFMA x2) and
 *           @P0 one trip (LDG x2, FFMA): 2048 mod 4 = 0, both off
 *   run: int 19+2+5632+7 = 5660, fp32 1+2048, global 4096+1.
 *   off: int 6+8, fp32 1+2+1, global 2+4+2.
 *
 * matmul_abt: as naive, its loads walking rows of both: prologue int 19,
 *   HFMA2, ULDC, ULDC.64, @!P0 (int 5, LDG x2, FFMA); preheader PLOP3,
 *   UIADD3; loop int 11, LDG x8, FFMA x4; epilogue int 7, STG, EXIT with
 *   @!P1 (int 10, LDG x4, FFMA x2) and @P0 (LDG x2, FFMA).
 *   run: int 19+1+5632+7 = 5659, uniform 3. off: int 15.
 *
 * matmul_tiled (p_n 2048: k += 16, 128 trips, unrolled 4 by 8 LDG for 2 -> 32):
 *   000-1c0 int 20 (LDC x3, S2R x4, ISETP, PLOP3, CS2R, LEA x4, IMAD x2,
 *           IMAD.WIDE x2, SHF, BRA), uniform 8
 *   1c0-4c0 the peeled trip, behind @P1 BRA 4c0: not reached
 *   4c0-500 int 4; 500-520 preheader PLOP3, UIADD3: runs
 *   520-1070 the loop x 32: int 13, LDG x8, STS x8, LDS x64, LDS.128 x16,
 *           BAR x8, FFMA x64
 *   1070-10b0 int 4; 10b0-1670 two trips, 16a0-1940 one trip: not reached
 *   1670-16a0 int 3; 1940 IMAD, IMAD.WIDE, STG, EXIT
 *   run: int 20+4+1+416+4+3+2 = 450, shared 88 x 32 = 2816 (ptxas reads
 *   four A values with one LDS.128: the PTX's 34 a trip become 22),
 *   fp32 2048, global 257, sync 256, uniform 9.
 */
static const struct expect expected[] = {
    {{"copy", "copy", 256, 1, NULL, 0}, RUN(0, 8, 0, 2, 0, 2, 1), {0}, 0, 0, 0},
    {{"strided", "strided", 256, 1, "p_iters", 16}, RUN(17, 68, 0, 17, 0, 3, 1),
     RUN(1, 4, 0, 1, 0, 0, 0), 1, 4, 4},
    {{"ffma", "ffma", 256, 1, "p_iters", 512}, RUN(16395, 1035, 0, 1, 0, 516, 1), {0}, 1, 1,
     512},
    {{"mixed", "mixed", 256, 1, "p_iters", 16}, RUN(67, 35, 0, 2, 0, 8, 1),
     RUN(4, 2, 0, 0, 0, 0, 0), 1, 4, 4},
    {{"reduce", "reduce", 256, 1, NULL, 0}, RUN(11, 18, 26, 5, 9, 4, 2), {0}, 0, 0, 0},
    {{"matmul_naive", "mm_naive", 16, 16, "p_n", 2048}, RUN(2049, 5660, 0, 4097, 0, 1, 1),
     RUN(4, 14, 0, 8, 0, 0, 0), 1, 4, 512},
    {{"matmul_tiled", "mm_tiled", 16, 16, "p_n", 2048}, RUN(2048, 450, 2816, 257, 256, 9, 1),
     {0}, 1, 4, 32},
    {{"matmul_abt", "mm_abt", 16, 16, "p_n", 2048}, RUN(2049, 5659, 0, 4097, 0, 3, 1),
     RUN(4, 15, 0, 8, 0, 0, 0), 1, 4, 512},
};
#define N_EXPECTED (sizeof expected / sizeof expected[0])

static void test_validation_kernels_by_hand(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_EXPECTED; i++) {
        const struct expect *e = &expected[i];
        json_t *sass = sass_of(&e->k);
        char *ptx = ptx_of(&e->k);
        struct sc_desc d;
        struct pd_desc pd;
        count(&e->k, sass, ptx, e->k.value, &d, &pd);
        for (int c = 0; c < SC_NCLASS; c++)
            if (d.run[c] != e->run[c] || d.off[c] != e->off[c])
                fail_msg("%s %s: run %g off %g, by hand %g and %g", e->k.name, sc_class_name(c),
                         d.run[c], d.off[c], e->run[c], e->off[c]);
        assert_int_equal(d.nloops, e->loops);
        if (e->loops) {
            assert_int_equal(d.loops[0].unroll, e->unroll);
            assert_true(d.loops[0].trips == e->trips);
            assert_int_equal(d.loops[0].remainder, 0);
        }
        /* ptxas drops no global access and no barrier */
        assert_true(d.run[MC_GLOBAL] == pd.coal + pd.uncoal);
        assert_true(d.run[SC_SYNC] == pd.sync);
        json_decref(sass);
        free(ptx);
    }
}

/* For trips 0..40: globals and barriers equal the PTX's; each further trip
 * adds the PTX's fp32 to the SASS's (the FFMAs: main loop, copies and all). */
static void test_every_trip_count(void **state)
{
    (void)state;
    size_t checked = 0;
    for (size_t i = 0; i < N_EXPECTED; i++) {
        const struct kernel *k = &expected[i].k;
        if (!k->param)
            continue;
        json_t *sass = sass_of(k);
        char *ptx = ptx_of(k);
        struct sc_desc d0, d;
        struct pd_desc p0, pd;
        /* the matrix kernels' trips come from n (tiled: 16 a trip), the others' are p_iters */
        long long step = strcmp(k->name, "matmul_tiled") == 0 ? 16 : 1, first = step;
        count(k, sass, ptx, first, &d0, &p0);
        for (long long t = 0; t <= 40; t++, checked++) {
            count(k, sass, ptx, t * step, &d, &pd);
            if (d.run[MC_GLOBAL] != pd.coal + pd.uncoal || d.run[SC_SYNC] != pd.sync ||
                d.run[MC_SHARED] - d0.run[MC_SHARED] !=
                    (pd.insts[MC_SHARED] - p0.insts[MC_SHARED]) * 22 / 34 ||
                d.run[MC_FP32] - d0.run[MC_FP32] != pd.insts[MC_FP32] - p0.insts[MC_FP32])
                fail_msg("%s at %s = %lld: global %g/%g, sync %g/%g, fp32 %+g/%+g", k->name,
                         k->param, t * step, d.run[MC_GLOBAL], pd.coal + pd.uncoal,
                         d.run[SC_SYNC], pd.sync, d.run[MC_FP32] - d0.run[MC_FP32],
                         pd.insts[MC_FP32] - p0.insts[MC_FP32]);
        }
        json_decref(sass);
        free(ptx);
    }
    print_message("sass_counts: %zu launches of 6 kernels agree with the PTX trip by trip\n",
                  checked);
}

/* The description the worker attaches: pd_desc_json's shape, and the model reads it. */
static void test_description(void **state)
{
    (void)state;
    const struct kernel *mixed = &expected[3].k, *strided = &expected[1].k;
    json_t *sass = sass_of(mixed);
    char *ptx = ptx_of(mixed);
    struct pd_launch l = launch_of(mixed, 16);
    json_t *d = sc_describe(sass, ptx, "mixed", &l, err, sizeof err);
    if (!d)
        fail_msg("%s", err);
    const json_t *pw = json_object_get(d, "per_warp");
    /* issued: what runs and what is issued with a false guard */
    assert_true(json_number_value(json_object_get(pw, "fp32")) == 67 + 4);
    /* integer: 35 run, 2 off, and the 8 uniform-datapath and 1 other instructions, each
     * an issue slot at the integer rate */
    assert_true(json_number_value(json_object_get(pw, "int")) == 35 + 2 + 8 + 1);
    /* one store; the load waits once (the SASS's wait at the FADD), the store once */
    assert_true(json_number_value(json_object_get(pw, "stores")) == 1);
    assert_true(json_number_value(json_object_get(pw, "mem_periods")) == 2);
    assert_true(json_number_value(json_object_get(pw, "coalesced")) == 2);
    assert_true(json_number_value(json_object_get(pw, "uncoalesced")) == 0);
    assert_string_equal(json_string_value(json_object_get(d, "source")), "sass");
    assert_true(json_number_value(json_object_get(json_object_get(d, "run"), "uniform")) == 8);
    assert_true(json_number_value(json_object_get(json_object_get(d, "predicated_off"),
                                                  "fp32")) == 4);
    const json_t *sl = json_array_get(json_object_get(d, "sass_loops"), 0);
    assert_string_equal(json_string_value(json_object_get(sl, "ptx_loop")), "$L_loop");
    assert_string_equal(json_string_value(json_object_get(sl, "role")), "main");
    assert_string_equal(json_string_value(json_object_get(sl, "marker")), "fp32");
    assert_int_equal(json_integer_value(json_object_get(sl, "unroll")), 4);
    assert_int_equal(json_integer_value(json_object_get(d, "copies")), 3);
    assert_int_equal(json_integer_value(json_object_get(d, "copies_run")), 0);
    /* the model takes it as it takes the PTX's */
    struct mwp_kernel k;
    char field[64];
    memset(&k, 0, sizeof k);
    assert_int_equal(model_counts_from_json(d, 32, &k, err, sizeof err, field, sizeof field), 0);
    assert_true(k.insts[MC_FP32] == 71 && k.coal == 2);
    json_decref(d);
    json_decref(sass);
    free(ptx);
    /* strided keeps the PTX's split: 1 coalesced store, 16 loads of 32 sectors */
    sass = sass_of(strided);
    ptx = ptx_of(strided);
    l = launch_of(strided, 16);
    d = sc_describe(sass, ptx, "strided", &l, err, sizeof err);
    assert_non_null(d);
    pw = json_object_get(d, "per_warp");
    assert_true(json_number_value(json_object_get(pw, "coalesced")) == 1);
    assert_true(json_number_value(json_object_get(pw, "uncoalesced")) == 16);
    assert_true(json_number_value(json_object_get(d, "uncoal_per_access")) == 32);
    json_decref(d);
    /* a PTX the SASS did not come from, and a bad SASS object: reasons, no description */
    l.params[0].value = 16;
    json_t *bad = json_loads("{}", 0, NULL);
    assert_null(sc_describe(bad, ptx, "strided", &l, err, sizeof err));
    assert_non_null(strstr(err, "sass: "));
    json_decref(bad);
    const struct kernel *ffma = &expected[2].k;
    char *other = ptx_of(ffma);
    l = launch_of(ffma, 16);
    assert_null(sc_describe(sass, other, "ffma", &l, err, sizeof err));
    assert_non_null(strstr(err, "matches no PTX loop"));
    free(other);
    json_decref(sass);
    free(ptx);
}

/* ---- hand-written objects ------------------------------------------------------------ */

/* JSON with ' for " (readable in C). */
static json_t *object(const char *text)
{
    char buf[4096];
    json_error_t e;
    snprintf(buf, sizeof buf, "%s", text);
    for (char *p = buf; *p; p++)
        if (*p == '\'')
            *p = '"';
    json_t *j = json_loads(buf, 0, &e);
    if (!j)
        fail_msg("test object: %s at %d", e.text, e.position);
    return j;
}

#define HEAD                                                                                   \
    "'sm':90,'instructions':0,'unreachable':0,'guarded_exits':0,'calls':0,'unknown_ops':0,"    \
    "'straight':{},"

static struct pd_loop ptx_loop(const char *label, int parent, long long trips, double fp32,
                               double global)
{
    struct pd_loop q;
    memset(&q, 0, sizeof q);
    snprintf(q.label, sizeof q.label, "%s", label);
    q.parent = parent;
    q.depth = parent < 0 ? 1 : 2;
    q.trips = trips;
    q.body[MC_FP32] = fp32;
    q.body[MC_GLOBAL] = global;
    q.body[MC_INT] = 2;
    return q;
}

static void count_object(const char *text, const struct pd_loop *q, int n, struct sc_desc *d)
{
    json_t *o = object(text);
    if (sc_count(o, q, n, d, err, sizeof err) != 0)
        fail_msg("%s", err);
    json_decref(o);
}

static int has_note(const struct sc_desc *d, const char *part)
{
    for (int i = 0; i < d->nnotes; i++)
        if (strstr(d->notes[i], part))
            return 1;
    return 0;
}

/* A main loop unrolled 4 and a remainder loop of one body each, 11 trips:
 * 2 trips of 4 bodies and 3 of one. */
static void test_remainder_loop(void **state)
{
    (void)state;
    struct pd_loop q = ptx_loop("$L", -1, 11, 2, 0);
    struct sc_desc d;
    count_object("{" HEAD
                 "'loops':[{'head':16,'latch':64,'end':80,'parent':-1,'depth':1,'skip':-1,"
                 "'counts':{'fp32':8,'int':2}},"
                 "{'head':96,'latch':112,'end':128,'parent':-1,'depth':1,'skip':-1,"
                 "'counts':{'fp32':2,'int':2}}],'skips':[],"
                 "'groups':[{'at':16,'loop':0,'skip':-1,'guard':'','counts':{'fp32':8,'int':2}},"
                 "{'at':96,'loop':1,'skip':-1,'guard':'','counts':{'fp32':2,'int':2}}]}",
                 &q, 1, &d);
    assert_int_equal(d.nloops, 2);
    assert_true(d.loops[0].unroll == 4 && d.loops[0].trips == 2 && !d.loops[0].remainder);
    assert_true(d.loops[1].unroll == 1 && d.loops[1].trips == 3 && d.loops[1].remainder);
    assert_true(d.run[MC_FP32] == 2 * 11);
    assert_true(d.run[MC_INT] == 2 * 2 + 2 * 3);
}

/* An outer loop (5 trips, one load) around an inner one (10 or 11 trips, one
 * fp32) unrolled 2, whose last odd trip is a guarded copy in the outer body. */
static void test_nested_with_guarded_copy(void **state)
{
    (void)state;
    static const char text[] =
        "{" HEAD
        "'loops':[{'head':16,'latch':128,'end':144,'parent':-1,'depth':1,'skip':-1,"
        "'counts':{'global':1,'int':3,'fp32':1}},"
        "{'head':48,'latch':80,'end':96,'parent':0,'depth':2,'skip':0,"
        "'counts':{'fp32':2,'int':2}}],"
        "'skips':[{'branch':16,'from':32,'to':96,'conditional':true,'loop':0,'parent':-1}],"
        "'groups':[{'at':0,'loop':-1,'skip':-1,'guard':'','counts':{'other':1}},"
        "{'at':16,'loop':0,'skip':-1,'guard':'','counts':{'global':1,'int':2}},"
        "{'at':32,'loop':0,'skip':0,'guard':'','counts':{'int':1}},"
        "{'at':48,'loop':1,'skip':-1,'guard':'','counts':{'fp32':2,'int':2}},"
        "{'at':112,'loop':0,'skip':-1,'guard':'!P0','counts':{'fp32':1}}]}";
    struct pd_loop q[2] = {ptx_loop("$O", -1, 5, 0, 1), ptx_loop("$I", 0, 10, 1, 0)};
    struct sc_desc d;
    count_object(text, q, 2, &d);
    assert_true(d.loops[0].trips == 5 && d.loops[1].trips == 5 && d.loops[1].unroll == 2);
    assert_int_equal(d.copies, 1);
    /* 10 trips: 5 of 2 bodies, the copy not needed: issued with a false guard */
    assert_true(d.run[MC_FP32] == 5 * 10 && d.off[MC_FP32] == 5);
    assert_true(d.run[MC_GLOBAL] == 5);
    /* the preheader behind the inner loop's branch runs: the loop does */
    assert_true(d.run[MC_INT] == 5 * (2 + 1 + 5 * 2));
    /* 11 trips: the copy runs, once a trip of the outer loop */
    q[1].trips = 11;
    count_object(text, q, 2, &d);
    assert_int_equal(d.copies_run, 1);
    assert_true(d.run[MC_FP32] == 5 * 11 && d.off[MC_FP32] == 0);
    /* 1 trip: the inner loop does not run, nor its preheader */
    q[1].trips = 1;
    count_object(text, q, 2, &d);
    assert_true(d.run[MC_FP32] == 5 * 1 && d.run[MC_INT] == 5 * 2);
}

static void test_assumptions_are_noted(void **state)
{
    (void)state;
    struct sc_desc d;
    /* a PTX loop with no SASS loop: unrolled in full, counted as it stands;
     * code behind a branch that decides no trips: counted, an upper bound */
    struct pd_loop q = ptx_loop("$F", -1, 4, 1, 0);
    count_object("{" HEAD "'loops':[],"
                 "'skips':[{'branch':0,'from':16,'to':48,'conditional':true,'loop':-1,"
                 "'parent':-1}],"
                 "'groups':[{'at':0,'loop':-1,'skip':-1,'guard':'','counts':{'fp32':4,'int':1}},"
                 "{'at':16,'loop':-1,'skip':0,'guard':'','counts':{'int':2}}]}",
                 &q, 1, &d);
    assert_true(has_note(&d, "PTX loop $F has no loop in the SASS"));
    assert_true(has_note(&d, "an upper bound"));
    assert_true(d.run[MC_FP32] == 4 && d.run[MC_INT] == 3);
    /* 7 trips unrolled 4 with only a one-trip copy: 2 remainder trips found
     * no copy; markers that disagree (8 global for 4 x 1) are noted */
    q = ptx_loop("$L", -1, 7, 1, 1);
    count_object("{" HEAD
                 "'loops':[{'head':32,'latch':64,'end':80,'parent':-1,'depth':1,'skip':-1,"
                 "'counts':{'global':8,'fp32':4}}],"
                 "'skips':[{'branch':80,'from':96,'to':128,'conditional':true,'loop':-1,"
                 "'parent':-1}],"
                 "'groups':[{'at':32,'loop':0,'skip':-1,'guard':'','counts':{'global':8,'fp32':4}},"
                 "{'at':96,'loop':-1,'skip':0,'guard':'','counts':{'global':8,'fp32':1}}]}",
                 &q, 1, &d);
    assert_int_equal(d.loops[0].unroll, 8);             /* global is tried first */
    assert_true(has_note(&d, "fp32 4 per SASS trip, not 8 x 1"));
    assert_true(d.loops[0].trips == 0);                 /* 7 / 8 */
    /* the copy holds 8 bodies by the marker: a whole unrolled body, chosen for none */
    assert_true(has_note(&d, "7 remainder trip(s) found no copy"));
}

static void expect_refused(const char *text, const char *why)
{
    struct pd_loop q = ptx_loop("$L", -1, 4, 1, 0);
    struct sc_desc d;
    json_t *o = object(text);
    err[0] = '\0';
    assert_int_equal(sc_count(o, &q, 1, &d, err, sizeof err), -1);
    if (!strstr(err, why))
        fail_msg("refused with \"%s\", wanted \"%s\"", err, why);
    json_decref(o);
}

static void test_malformed_objects(void **state)
{
    (void)state;
    expect_refused("[]", "must be an object");
    expect_refused("{'loops':[],'skips':[],'groups':[]}", "sass.unreachable");
    expect_refused("{" HEAD "'loops':[],'skips':[],'groups':[{'at':0,'loop':-1,'skip':-1,"
                   "'guard':'','counts':{'fp33':1}}]}", "unknown class fp33");
    expect_refused("{" HEAD "'loops':[],'skips':[],'groups':[{'at':0,'loop':-1,'skip':-1,"
                   "'guard':'','counts':{'fp32':-1}}]}", "must be a count");
    expect_refused("{" HEAD "'loops':[],'skips':[],'groups':[{'at':0,'loop':2,'skip':-1,"
                   "'guard':'','counts':{}}]}", "out of range");
    expect_refused("{" HEAD "'loops':[{'head':0,'latch':16,'end':32,'parent':0,'depth':1,"
                   "'skip':-1,'counts':{}}],'skips':[],'groups':[]}", "out of order");
    expect_refused("{" HEAD "'loops':[],'skips':[{'branch':0,'from':16,'to':32,'conditional':"
                   "true,'loop':-1,'parent':1},{'branch':32,'from':48,'to':64,'conditional':"
                   "true,'loop':-1,'parent':-1}],'groups':[]}", "skips[0]");
    expect_refused("{" HEAD "'loops':[],'skips':[{'branch':0,'from':16,'to':32,'conditional':1,"
                   "'loop':-1,'parent':-1}],'groups':[]}", "true or false");
    expect_refused("{" HEAD "'loops':{},'skips':[],'groups':[]}", "loops must be an array");
    expect_refused("{" HEAD "'loops':[],'skips':[],'groups':[{'at':0,'loop':-1,'skip':-1,"
                   "'counts':{}}]}", "guard must be a string");
    expect_refused("{" HEAD "'loops':[],'skips':[],'groups':[{'at':0,'loop':-1,'skip':-1,"
                   "'guard':'','counts':{},'waits':-1}]}", "waits must be a count");
    expect_refused("{" HEAD "'loops':[],'skips':[],'groups':[{'at':0,'loop':-1,'skip':-1,"
                   "'guard':'','counts':{},'waits':1},{'at':16,'loop':-1,'skip':-1,"
                   "'guard':'','counts':{}}]}", "1 of 2 groups say their waits");
    /* a loop no PTX loop explains */
    expect_refused("{" HEAD "'loops':[{'head':0,'latch':16,'end':32,'parent':-1,'depth':1,"
                   "'skip':-1,'counts':{'int':3}}],'skips':[],'groups':[]}",
                   "matches no PTX loop");
}

/* Memory periods from the SASS's waits on loads, trips applied as to the
 * counts; the PTX's periods where the object predates waits. */
static double periods_of(const struct kernel *k, json_t *sass, long long value)
{
    char *ptx = ptx_of(k);
    struct pd_launch l = launch_of(k, value);
    json_t *d = sc_describe(sass, ptx, k->entry, &l, err, sizeof err);
    if (!d)
        fail_msg("%s", err);
    double p = json_number_value(json_object_get(json_object_get(d, "per_warp"), "mem_periods"));
    json_decref(d);
    free(ptx);
    return p;
}

static void drop_waits(json_t *sass)
{
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(sass, "groups"), i, g) json_object_del(g, "waits");
}

static void test_periods_from_waits(void **state)
{
    (void)state;
    const struct kernel *strided = &expected[1].k, *naive = &expected[5].k;
    json_t *sass = sass_of(strided);
    /* strided at 16 trips: the loop's four LDG wait once a trip (at the FADD at
     * 280), 4 trips; the peeled trip's LDG at 0d0 is issued with P0 false and
     * waits on nothing; the STG is a period of its own. The PTX adds each load
     * before the next: 16 periods and the store. */
    assert_true(periods_of(strided, sass, 16) == 4 + 1);
    assert_true(periods_of(strided, sass, 64) == 16 + 1);
    drop_waits(sass);
    assert_true(periods_of(strided, sass, 16) == 16 + 1);
    json_decref(sass);
    /* matmul_naive at p_n 2048: the loop's eight LDG wait once a trip (the FFMA
     * at 300), 512 trips, the remainder copies not run; the PTX's two loads a
     * trip wait once: 2048 */
    sass = sass_of(naive);
    assert_true(periods_of(naive, sass, 2048) == 512 + 1);
    drop_waits(sass);
    assert_true(periods_of(naive, sass, 2048) == 2048 + 1);
    json_decref(sass);
}

static void test_class_names(void **state)
{
    (void)state;
    static const char *const names[SC_NCLASS] = {"fp32", "fp64", "int", "sfu", "conv", "shared",
                                                 "global", "sync", "uniform", "tensor", "other"};
    for (int c = 0; c < SC_NCLASS; c++) {
        assert_string_equal(sc_class_name(c), names[c]);
        assert_int_equal(si_class_parse(names[c]), c);
    }
    assert_null(sc_class_name(SC_NCLASS));
    assert_int_equal(si_class_parse("coalesced"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validation_kernels_by_hand),
        cmocka_unit_test(test_every_trip_count),
        cmocka_unit_test(test_description),
        cmocka_unit_test(test_remainder_loop),
        cmocka_unit_test(test_nested_with_guarded_copy),
        cmocka_unit_test(test_assumptions_are_noted),
        cmocka_unit_test(test_malformed_objects),
        cmocka_unit_test(test_periods_from_waits),
        cmocka_unit_test(test_class_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
