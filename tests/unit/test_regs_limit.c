/*
 * The register-limit experiment's pure half (probes/regs_limit.h), no GPU:
 * - the variant list: unique names, each found by name, the controls
 *   first, no variant that would name R255 (RZ) in the 255-register kernel;
 * - on the committed banks cubin (255 registers): a wide variant edits the
 *   first FFMA's field to R252..R254 and nothing else;
 * - where ptxas is installed, on the small kernel compiled here: the edit
 *   lands on its only FFMA / IADD3, the count edit rewrites
 *   EIATTR_REGCOUNT (read back through the cubin reader), and the
 *   observation behind hypothesis (a): the count ptxas reports is the
 *   highest destination the code names + 3;
 * - refusals leave the buffer untouched: a kernel with several FFMAs for a
 *   small variant, a register above R254, an unknown kernel.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/support/tmpfile.h"
#include "probes/banks.h"
#include "probes/gpu/cubin.h"
#include "probes/gpu/patch.h"
#include "probes/regs_limit.h"


static void test_variants(void **state)
{
    (void)state;
    struct regs_variant v[REGS_VARIANTS_MAX], one;
    size_t n = regs_limit_variants(v);
    assert_true(n > 40 && n < REGS_VARIANTS_MAX);
    assert_string_equal(v[0].name, "wide.none");
    assert_string_equal(v[1].name, "small.none");
    for (size_t i = 0; i < n; i++) {
        for (size_t k = i + 1; k < n; k++)
            assert_string_not_equal(v[i].name, v[k].name);
        assert_int_equal(regs_limit_find(v[i].name, &one), 0);
        assert_string_equal(one.name, v[i].name);
        if (v[i].kernel == REGS_WIDE)
            assert_true(v[i].where <= REGS_COUNT_1);
    }
    assert_int_equal(regs_limit_find("wide.ffma.ra.count-2", &one), 0);
    assert_int_equal(one.field, SASS_RA);
    assert_int_equal(regs_limit_find("small.iadd3.rd.alloc", &one), 0);
    assert_int_equal(regs_limit_find("small-c255.ffma.rd.count-1", &one), 0);
    assert_int_equal(regs_limit_find("wide.ffma.ra.count", &one), -1);
}

static void test_wide(void **state)
{
    (void)state;
    size_t size;
    char *cub = read_file("tests/fixtures/cubins/banks/banks.cubin", &size), err[256];
    assert_non_null(cub);
    char *copy = malloc(size);
    assert_non_null(copy);
    static const char *const names[] = {"wide.ffma.ra.count-3", "wide.ffma.rb.count-2",
                                        "wide.ffma.rd.count-1"};
    static const unsigned want[] = {252, 253, 254};
    for (int i = 0; i < 3; i++) {
        struct regs_variant v;
        struct regs_plan p;
        assert_int_equal(regs_limit_find(names[i], &v), 0);
        memcpy(copy, cub, size);
        assert_int_equal(regs_limit_patch(copy, size, BANKS_KERNEL, &v, &p, err, sizeof err), 0);
        assert_int_equal(p.compiled_count, 255);
        assert_int_equal(p.declared_count, 255);
        assert_int_equal(p.reg, want[i]);
        assert_int_equal(p.other_uses, i == 0 ? p.other_uses : 0);   /* R253/R254: unnamed */
        struct patch_edit e = {p.index, v.field, want[i]};
        assert_int_equal(patch_verify(cub, copy, size, BANKS_KERNEL, &e, 1, err, sizeof err), 0);
        long first = patch_find_mnemonic(cub, size, BANKS_KERNEL, "FFMA", 0, err, sizeof err);
        assert_int_equal((long)p.index, first);
    }
    /* a small variant on a kernel with 256 FFMAs: refused, nothing written */
    struct regs_variant v;
    struct regs_plan p;
    assert_int_equal(regs_limit_find("small.ffma.ra.count-2", &v), 0);
    memcpy(copy, cub, size);
    assert_int_equal(regs_limit_patch(copy, size, BANKS_KERNEL, &v, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "exactly one"));
    assert_memory_equal(copy, cub, size);
    /* R255 is RZ: a place above R254 is refused */
    v.kernel = REGS_WIDE;
    v.where = REGS_COUNT;
    assert_int_equal(regs_limit_patch(copy, size, BANKS_KERNEL, &v, &p, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a register"));
    assert_int_equal(regs_limit_patch(copy, size, "nope", &v, &p, err, sizeof err), -1);
    assert_memory_equal(copy, cub, size);
    free(copy);
    free(cub);
}

static int regs_of(const void *cub, size_t size)
{
    struct cubin c;
    char err[128];
    assert_int_equal(cubin_parse(&c, cub, size, err, sizeof err), 0);
    const struct cubin_kernel *k = cubin_kernel_find(&c, REGS_SMALL_KERNEL);
    int r = k ? k->regs : -1;
    cubin_free(&c);
    return r;
}

static void test_small(void **state)
{
    (void)state;
    size_t size;
    char *ptx = regs_limit_small_ptx(9, 0), err[256];
    char *cub = ptxas_cubin(ptx, "sm_90", &size);
    free(ptx);
    if (!cub) {
        skip();
        return;
    }
    char *copy = malloc(size);
    assert_non_null(copy);
    struct regs_variant v;
    struct regs_plan p;
    /* the control: nothing changes */
    assert_int_equal(regs_limit_find("small.none", &v), 0);
    memcpy(copy, cub, size);
    assert_int_equal(regs_limit_patch(copy, size, REGS_SMALL_KERNEL, &v, &p, err, sizeof err), 0);
    assert_memory_equal(copy, cub, size);
    /* hypothesis (a)'s observation: two registers more than the code names */
    assert_int_equal(p.compiled_count, (int)p.highest_destination + 3);
    int n = p.compiled_count;
    /* the IADD3's destination at count-2 */
    assert_int_equal(regs_limit_find("small.iadd3.rd.count-2", &v), 0);
    memcpy(copy, cub, size);
    assert_int_equal(regs_limit_patch(copy, size, REGS_SMALL_KERNEL, &v, &p, err, sizeof err), 0);
    assert_int_equal(p.reg, (unsigned)(n - 2));
    struct patch_edit e = {p.index, SASS_RD, p.reg};
    assert_int_equal(patch_verify(cub, copy, size, REGS_SMALL_KERNEL, &e, 1, err, sizeof err), 0);
    assert_int_equal(regs_of(copy, size), n);
    /* alloc: the first register past the granule */
    assert_int_equal(regs_limit_find("small.ffma.ra.alloc", &v), 0);
    memcpy(copy, cub, size);
    assert_int_equal(regs_limit_patch(copy, size, REGS_SMALL_KERNEL, &v, &p, err, sizeof err), 0);
    assert_int_equal(p.reg % REGS_GRANULE, 0);
    assert_true(p.reg >= (unsigned)n && p.reg < (unsigned)n + REGS_GRANULE);
    /* the declared count edited to 255, then R253 named */
    assert_int_equal(regs_limit_find("small-c255.ffma.ra.count-2", &v), 0);
    memcpy(copy, cub, size);
    assert_int_equal(regs_limit_patch(copy, size, REGS_SMALL_KERNEL, &v, &p, err, sizeof err), 0);
    assert_int_equal(p.declared_count, 255);
    assert_int_equal(p.reg, 253);
    assert_int_equal(regs_of(copy, size), 255);
    assert_int_equal(regs_limit_find("small-c+8.ffma.ra.count-1", &v), 0);
    memcpy(copy, cub, size);
    assert_int_equal(regs_limit_patch(copy, size, REGS_SMALL_KERNEL, &v, &p, err, sizeof err), 0);
    assert_int_equal(regs_of(copy, size), n + REGS_GRANULE);
    assert_int_equal(p.reg, (unsigned)(n + REGS_GRANULE - 1));
    free(copy);
    free(cub);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_variants),
        cmocka_unit_test(test_wide),
        cmocka_unit_test(test_small),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
