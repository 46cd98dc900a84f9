/*
 * The latency probe's kernels, without a GPU:
 * - every generated module equals its golden file (tests/fixtures/ptx/);
 *   GPUPROBE_UPDATE_GOLDEN=1 rewrites them after a deliberate change;
 * - where ptxas is installed, every module compiles for sm_90 (sm_90a for
 *   wgmma), and the
 *   machine-code check accepts what ptxas produced;
 * - always: the machine-code check accepts the committed sm_90 cubins of
 *   every entry (tests/fixtures/cubins/latency/, made by ptxas 13.0 from the
 *   golden PTX) and refuses an entry's check against another entry's code;
 * - facts read from the machine code: FP32 chains are fixed-latency with the
 *   compiler's stall of 4, MUFU and LDS are variable-latency.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/support/tmpfile.h"
#include "probes/latency.h"
#include "probes/latency_check.h"

#define PTXAS "/usr/local/cuda/bin/ptxas"


static void spit(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static char *generate(const struct lat_entry *e, int tput)
{
    return tput ? lat_ptx_throughput(e, 9, 0) : lat_ptx_latency(e, 9, 0);
}

static void test_golden(void **state)
{
    (void)state;
    int update = getenv("GPUPROBE_UPDATE_GOLDEN") != NULL;
    for (size_t i = 0; i < lat_catalog_count; i++)
        for (int tput = 0; tput < 2; tput++) {
            char path[256];
            size_t len;
            snprintf(path, sizeof path, "tests/fixtures/ptx/latency_%s_%s.ptx",
                     lat_catalog[i].name, tput ? "tput" : "lat");
            char *got = generate(&lat_catalog[i], tput);
            assert_non_null(got);
            if (update)
                spit(path, got);
            char *want = read_file(path, &len);
            if (!want)
                fail_msg("%s missing (GPUPROBE_UPDATE_GOLDEN=1 writes it)", path);
            if (strcmp(got, want) != 0)
                fail_msg("%s differs from what the generator emits now", path);
            free(got);
            free(want);
        }
}

static json_t *check_file(const struct lat_entry *e, const char *cubin_path, int tput)
{
    size_t len;
    char *cubin = read_file(cubin_path, &len);
    if (!cubin)
        fail_msg("cannot read %s", cubin_path);
    json_t *j = tput ? lat_check_throughput(e, cubin, len) : lat_check_latency(e, cubin, len);
    free(cubin);
    return j;
}

static void test_committed_cubins_verify(void **state)
{
    (void)state;
    for (size_t i = 0; i < lat_catalog_count; i++)
        for (int tput = 0; tput < 2; tput++) {
            char path[256];
            snprintf(path, sizeof path, "tests/fixtures/cubins/latency/%s_%s.cubin",
                     lat_catalog[i].name, tput ? "tput" : "lat");
            json_t *j = check_file(&lat_catalog[i], path, tput);
            if (!json_is_true(json_object_get(j, "verified")))
                fail_msg("%s: machine-code check refused it", path);
            json_decref(j);
        }
}

static void test_check_refuses_other_code(void **state)
{
    (void)state;
    /* fmul's kernel holds FMULs, not the FADDs the fadd entry times */
    json_t *j = check_file(lat_find("fadd"), "tests/fixtures/cubins/latency/fmul_lat.cubin", 0);
    assert_false(json_is_true(json_object_get(j, "verified")));
    assert_non_null(json_object_get(j, "listing"));
    json_decref(j);
    j = check_file(lat_find("ffma"), "tests/fixtures/cubins/latency/dfma_tput.cubin", 1);
    assert_false(json_is_true(json_object_get(j, "verified")));
    json_decref(j);
    j = lat_check_latency(lat_find("ffma"), "not an ELF file", 15);
    assert_false(json_is_true(json_object_get(j, "verified")));
    assert_non_null(json_string_value(json_object_get(j, "error")));
    json_decref(j);
}

static void test_latency_class_from_machine_code(void **state)
{
    (void)state;
    json_t *j = check_file(lat_find("ffma"), "tests/fixtures/cubins/latency/ffma_lat.cubin", 0);
    assert_true(json_is_true(json_object_get(j, "fixed_latency")));
    assert_int_equal(json_integer_value(json_object_get(j, "compiler_stall")), 4);
    json_decref(j);
    const char *variable[] = {"rsqrt", "lds", "atomg_add"};
    for (size_t i = 0; i < 3; i++) {
        char path[256];
        snprintf(path, sizeof path, "tests/fixtures/cubins/latency/%s_lat.cubin", variable[i]);
        j = check_file(lat_find(variable[i]), path, 0);
        assert_true(json_is_false(json_object_get(j, "fixed_latency")));
        assert_true(json_is_null(json_object_get(j, "compiler_stall")));
        json_decref(j);
    }
    /* sin's step carries a range-reducing FMUL, and the check says so */
    j = check_file(lat_find("sin"), "tests/fixtures/cubins/latency/sin_lat.cubin", 0);
    assert_true(json_number_value(json_object_get(json_object_get(j, "extra_per_step"), "FMUL")) ==
                1.0);
    json_decref(j);
}

static void test_ptxas_compiles_and_verifies(void **state)
{
    (void)state;
    if (access(PTXAS, X_OK) != 0) {
        print_message("ptxas not installed at %s: compile check skipped\n", PTXAS);
        skip();
    }
    char dir[] = "/tmp/gpuprobe-test-ptx-XXXXXX";
    assert_non_null(mkdtemp(dir));
    for (size_t i = 0; i < lat_catalog_count; i++)
        for (int tput = 0; tput < 2; tput++) {
            char ptx[300], cubin[300], cmd[1000];
            snprintf(ptx, sizeof ptx, "%s/k.ptx", dir);
            snprintf(cubin, sizeof cubin, "%s/k.cubin", dir);
            char *text = generate(&lat_catalog[i], tput);
            spit(ptx, text);
            free(text);
            snprintf(cmd, sizeof cmd, "%s -arch=sm_90%s -O3 %s -o %s", PTXAS,
                     lat_is_warpgroup(&lat_catalog[i]) ? "a" : "", ptx, cubin);
            if (system(cmd) != 0)
                fail_msg("ptxas refused %s (%s)", lat_catalog[i].name, tput ? "tput" : "lat");
            json_t *j = check_file(&lat_catalog[i], cubin, tput);
            if (!json_is_true(json_object_get(j, "verified")))
                fail_msg("%s (%s): check refused ptxas's code", lat_catalog[i].name,
                         tput ? "tput" : "lat");
            json_decref(j);
            unlink(ptx);
            unlink(cubin);
        }
    rmdir(dir);
}

static void test_catalog_shape(void **state)
{
    (void)state;
    assert_true(lat_catalog_count >= 24);
    for (size_t i = 0; i < lat_catalog_count; i++) {
        assert_ptr_equal(lat_find(lat_catalog[i].name), &lat_catalog[i]);
        assert_non_null(strstr(lat_catalog[i].ptx, lat_catalog[i].mma ? "{d}" : "{x}"));
        assert_true(lat_catalog[i].per_step >= 1);
    }
    assert_null(lat_find("nosuch"));
    assert_int_equal(lat_region_expect(lat_find("f2f"), 4), LAT_N2 * 2);
}

/* The wgmma kernels' structure, without ptxas: an sm_90a module, the
 * operands zero-filled and fenced for the async proxy, descriptors with
 * 128/256-byte leading/stride offsets and no swizzle, a latency step that
 * waits for its own result, a throughput loop that keeps one group in
 * flight; an mma.sync entry stays on plain sm_90. */
static void test_wgmma_ptx_structure(void **state)
{
    (void)state;
    const struct lat_entry *e = lat_find("wgmma_f16_ss_n128");
    assert_non_null(e);
    assert_true(lat_is_warpgroup(e));
    assert_int_equal(lat_block_threads(e, 0), 128);
    assert_int_equal(lat_block_threads(e, 1), 128);
    assert_int_equal(lat_tput_steps(e), WG_TPUT_UNROLL);
    char *lat = lat_ptx_latency(e, 9, 0), *tput = lat_ptx_throughput(e, 9, 0);
    assert_non_null(strstr(lat, ".target sm_90a\n"));
    assert_non_null(strstr(lat, "fence.proxy.async.shared::cta;"));
    assert_non_null(strstr(lat, "or.b64 %da, %da, 0x0000001000080000;"));
    assert_non_null(strstr(lat, "{%x0, %x0_1, "));
    assert_non_null(strstr(lat, "%x0_63}, %da, %db, %scd, 1, 1, 0, 0;\n"
                                "\twgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 0;"));
    assert_null(strstr(lat, "wait_group.sync.aligned 1;"));
    assert_non_null(strstr(tput, "wgmma.wait_group.sync.aligned 1;"));
    /* a commit group of WG_TPUT_UNROLL wgmmas a loop iteration */
    size_t n = 0;
    for (const char *q = tput; (q = strstr(q, "wgmma.mma_async")); q++)
        n++;
    assert_int_equal(n, WG_TPUT_UNROLL);
    free(lat);
    free(tput);
    /* A from registers: the four A registers in place of A's descriptor */
    char *rs = lat_ptx_latency(lat_find("wgmma_f16_rs_n64"), 9, 0);
    assert_non_null(strstr(rs, "%x0_31}, {%fa0, %fa1, %fa2, %fa3}, %db, %scd, 1, 1, 0;"));
    free(rs);
    const struct lat_entry *m = lat_find("hmma_f16_f32");
    assert_false(lat_is_warpgroup(m));
    assert_int_equal(lat_block_threads(m, 0), 32);
    assert_int_equal(lat_tput_steps(m), TPUT_CHAINS * TPUT_UNROLL);
    char *h = lat_ptx_latency(m, 9, 0);
    assert_non_null(strstr(h, ".target sm_90\n"));
    free(h);
}

/* What ptxas 13.0 made of the committed wgmma and fp8 cubins: each type's
 * own opcode (the check of one type refuses another's code), and fp8
 * mma.sync as two f16 HMMAs a step with its conversions in the chain. */
static void test_wgmma_and_fp8_machine_code(void **state)
{
    (void)state;
    json_t *j = check_file(lat_find("wgmma_s8_ss_n128"),
                           "tests/fixtures/cubins/latency/wgmma_f16_ss_n128_tput.cubin", 1);
    assert_false(json_is_true(json_object_get(j, "verified")));
    json_decref(j);
    j = check_file(lat_find("wgmma_e4m3_ss_n128"),
                   "tests/fixtures/cubins/latency/wgmma_bf16_ss_n128_lat.cubin", 0);
    assert_false(json_is_true(json_object_get(j, "verified")));
    json_decref(j);
    j = check_file(lat_find("wgmma_f16_ss_n256"),
                   "tests/fixtures/cubins/latency/wgmma_f16_ss_n256_tput.cubin", 1);
    assert_true(json_is_true(json_object_get(j, "verified")));
    assert_int_equal(json_integer_value(json_object_get(j, "found")), WG_TPUT_UNROLL);
    json_decref(j);
    /* the latency step: the wait (WARPGROUP.DEPBAR) after each HGMMA */
    j = check_file(lat_find("wgmma_f16_ss_n64"),
                   "tests/fixtures/cubins/latency/wgmma_f16_ss_n64_lat.cubin", 0);
    assert_true(json_is_true(json_object_get(j, "verified")));
    assert_true(json_number_value(json_object_get(json_object_get(j, "extra_per_step"),
                                                  "WARPGROUP")) >= 1.0);
    /* no scoreboard on HGMMA, yet not fixed latency: the DEPBAR waits */
    assert_true(json_is_false(json_object_get(j, "fixed_latency")));
    assert_true(json_is_null(json_object_get(j, "compiler_stall")));
    json_decref(j);
    j = check_file(lat_find("mma_e4m3"), "tests/fixtures/cubins/latency/mma_e4m3_lat.cubin", 0);
    assert_true(json_is_true(json_object_get(j, "verified")));
    assert_int_equal(lat_find("mma_e4m3")->per_step, 2);
    assert_true(json_number_value(json_object_get(json_object_get(j, "extra_per_step"), "F2FP")) >=
                1.0);
    json_decref(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_catalog_shape),
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_committed_cubins_verify),
        cmocka_unit_test(test_check_refuses_other_code),
        cmocka_unit_test(test_latency_class_from_machine_code),
        cmocka_unit_test(test_ptxas_compiles_and_verifies),
        cmocka_unit_test(test_wgmma_ptx_structure),
        cmocka_unit_test(test_wgmma_and_fp8_machine_code),
    };
    return cmocka_run_group_tests_name("latency_ptx", tests, NULL, NULL);
}
