/*
 * Unit tests of the capture's PTX rewriter (probes/ptx_instrument.c,
 * probes/ptx_deps.c) and of its parameter syntax (probes/capture_args.c).
 *
 * DESIGN
 * The inputs are committed PTX: nvcc's output for the kernels of
 * tests/gpu/kernels/capture/ and the model-validation kernels
 * (tests/fixtures/ptx/capture/), and corners.ptx, written by hand with a
 * comment above each access saying its pc, width, flag and kind — the
 * expected values below were read off those comments and the CUDA sources,
 * not off the rewriter's output (is_store: st, atom and red). The set of sites is also checked against an
 * independent count: the lines of the entry's body holding "ld.global" or
 * "st.global" outside comments. The rewrite must keep every original line
 * in order (it only inserts), add one sequence per site, and count-only
 * mode must not store records. That the rewritten text assembles is
 * tests/unit/ptxas_capture.sh's check (it needs NVIDIA's ptxas).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/capture.h"
#include "probes/ptx_instrument.h"
#include "probes/validation.h"
#include "util/textfile.h"

#define FIX "tests/fixtures/ptx/capture/"

static char *load(const char *name)
{
    char path[256], err[256];
    snprintf(path, sizeof path, FIX "%s", name);
    char *t = text_file_read(path, 1 << 24, err, sizeof err);
    if (!t)
        fail_msg("%s", err);
    return t;
}

struct want {
    int is_store;
    unsigned width, dep;
};

static void check_sites(const char *file, const char *entry, const struct want *w, size_t n)
{
    char *ptx = load(file), err[512];
    struct ptxi_kernel k;
    if (ptxi_analyze(ptx, entry, &k, err, sizeof err) != 0)
        fail_msg("%s: %s", file, err);
    assert_int_equal(k.nsites, n);
    for (size_t i = 0; i < n; i++) {
        if (k.sites[i].is_store != w[i].is_store || k.sites[i].width != w[i].width ||
            k.sites[i].dep != w[i].dep)
            fail_msg("%s pc %zu (%s): store %d width %u dep %u, want %d %u %u", file, i,
                     k.sites[i].text, k.sites[i].is_store, k.sites[i].width, k.sites[i].dep,
                     w[i].is_store, w[i].width, w[i].dep);
        assert_int_equal(k.sites[i].pc, i);
    }
    ptxi_kernel_free(&k);
    free(ptx);
}

/* ---- sites, widths and flags on hand-checked kernels ------------------------------- */

static void test_corners(void **state)
{
    (void)state;
    /* from the comments of corners.ptx */
    static const struct want w[] = {{0, 4, 1}, {1, 4, 0}, {0, 4, 0}, {0, 4, 1}, {0, 4, 1}, {1, 8, 0},
                                    {0, 4, 1}, {1, 4, 0}, {0, 2, 1}, {0, 1, 0}, {1, 4, 1}, {1, 4, 0}};
    check_sites("corners.ptx", "corners", w, sizeof w / sizeof w[0]);
    char *ptx = load("corners.ptx"), err[512];
    struct ptxi_kernel k;
    assert_int_equal(ptxi_analyze(ptx, "corners", &k, err, sizeof err), 0);
    /* the global atomic and reduction are sites (stores for the trace), the
     * generic atomic is not */
    assert_int_equal(k.sites[10].kind, PTXI_ATOMIC);
    assert_int_equal(k.sites[11].kind, PTXI_REDUCE);
    assert_int_equal(k.sites[1].kind, PTXI_STORE);
    assert_int_equal(k.sites[0].kind, PTXI_LOAD);
    assert_int_equal(k.sites[11].offset, 8);
    assert_string_equal(k.sites[10].base, "%rd1");
    assert_int_equal(k.atomics, 1);
    assert_int_equal(k.generic, 2);
    assert_int_equal(k.async_copies, 0);
    assert_int_equal(k.nparams, 3);
    assert_string_equal(k.params[2].name, "corners_param_2");
    assert_int_equal(k.params[2].is_array, 1);
    assert_int_equal(k.params[2].bytes, 16);
    assert_string_equal(k.sites[0].guard, "%p1");
    assert_string_equal(k.sites[1].guard, "!%p1");
    assert_int_equal(k.sites[1].offset, -4);
    assert_string_equal(k.sites[2].base, "gcount");
    assert_int_equal(k.sites[2].offset, 4);
    assert_int_equal(k.sites[0].line, 41);
    ptxi_kernel_free(&k);
    /* the other kernel of the module */
    static const struct want other[] = {{0, 4, 1}, {1, 4, 0}};
    check_sites("corners.ptx", "other", other, 2);
    /* two kernels: naming none is refused, naming them all */
    assert_int_equal(ptxi_analyze(ptx, NULL, &k, err, sizeof err), -1);
    assert_non_null(strstr(err, "other, corners"));
    assert_int_equal(ptxi_analyze(ptx, "nope", &k, err, sizeof err), -1);
    assert_non_null(strstr(err, "no kernel named 'nope'"));
    free(ptx);
}

static void test_nvcc_kernels(void **state)
{
    (void)state;
    /* vecadd: b[i] then a[i] (the first not read before the second load), c[i] */
    static const struct want vecadd[] = {{0, 4, 0}, {0, 4, 1}, {1, 4, 0}};
    /* naive matmul: per k, B's load then A's (fma reads both: only the second is 1) */
    static const struct want naive[] = {{0, 4, 0}, {0, 4, 1}, {1, 4, 0}};
    /* tiled: both loads are stored to shared memory before the next access */
    static const struct want tiled[] = {{0, 4, 1}, {0, 4, 1}, {1, 4, 0}};
    /* index chase: the loaded index makes the next address */
    static const struct want chase[] = {{0, 4, 1}, {1, 4, 0}};
    /* float4 copy (ld.global.nc.v4), then 16-, 2- and 1-byte stores */
    static const struct want copy4[] = {{0, 16, 1}, {1, 16, 0}, {1, 2, 0}, {1, 1, 0}};
    check_sites("vecadd.ptx", NULL, vecadd, 3);
    check_sites("matmul_naive.ptx", NULL, naive, 3);
    check_sites("matmul_tiled.ptx", NULL, tiled, 3);
    check_sites("chase_vec4.ptx", "chase", chase, 2);
    check_sites("chase_vec4.ptx", "copy4", copy4, 4);
}

/* The line at *p into buf (truncated to fit); *p moves past it. 0 at the end. */
static int next_line(const char **p, char *buf, size_t len)
{
    if (!**p)
        return 0;
    const char *end = strchr(*p, '\n');
    size_t n = end ? (size_t)(end - *p) : strlen(*p);
    snprintf(buf, len, "%.*s", (int)(n < len - 1 ? n : len - 1), *p);
    *p += n + (end != NULL);
    return 1;
}

/* Lines holding a global load, store, atomic or reduction outside comments: an
 * independent count. */
static size_t count_global_lines(const char *ptx)
{
    size_t n = 0;
    const char *at = ptx;
    char buf[512];
    while (next_line(&at, buf, sizeof buf)) {
        char *c = strstr(buf, "//");
        if (c)
            *c = '\0';
        if (strstr(buf, "ld.global") || strstr(buf, "st.global") ||
            strstr(buf, "ld.volatile.global") || strstr(buf, "st.relaxed.gpu.global") ||
            strstr(buf, "atom.global") || strstr(buf, "red.global"))
            n++;
    }
    return n;
}

static void test_sites_are_the_global_accesses(void **state)
{
    (void)state;
    /* atomics: the atomics the rewriter does not record (on generic addresses);
     * global atomics and reductions are sites (the histogram's red.global.add) */
    static const struct {
        const char *file;
        size_t atomics;
    } files[] = {
        {"vecadd.ptx", 0}, {"matmul_naive.ptx", 0}, {"matmul_tiled.ptx", 0},
        {"validation_copy.ptx", 0}, {"validation_strided.ptx", 0}, {"validation_ffma.ptx", 0},
        {"validation_mixed.ptx", 0}, {"validation_reduce.ptx", 0},
        {"validation_matmul_naive.ptx", 0}, {"validation_matmul_tiled.ptx", 0},
        {"validation_matmul_abt.ptx", 0}, {"validation_transpose_naive.ptx", 0},
        {"validation_transpose_tiled.ptx", 0}, {"validation_stencil7.ptx", 0},
        {"validation_gather.ptx", 0}, {"validation_histogram.ptx", 0},
        {"validation_matmul_tiled32.ptx", 0}, {"validation_saxpy_sfu.ptx", 0},
        {"validation_sgemv.ptx", 0}};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char *ptx = load(files[i].file), err[512];
        struct ptxi_kernel k;
        if (ptxi_analyze(ptx, NULL, &k, err, sizeof err) != 0)
            fail_msg("%s: %s", files[i].file, err);
        if (k.nsites != count_global_lines(ptx))
            fail_msg("%s: %zu sites, %zu global lines", files[i].file, k.nsites,
                     count_global_lines(ptx));
        assert_int_equal(k.atomics, files[i].atomics);
        assert_int_equal(k.generic + k.async_copies + k.calls, 0);
        ptxi_kernel_free(&k);
        free(ptx);
    }
}

/* Writes val_ptx()'s module of every validated kernel over its fixture
 * (GPUPROBE_REGEN_FIXTURES=1: tests/gpu/kernels/capture/README.md). */
static void regenerate_validation_fixtures(void)
{
    for (int i = 0; i < VK_COUNT; i++) {
        char path[256];
        snprintf(path, sizeof path, FIX "validation_%s.ptx", val_kernels[i].name);
        char *now = val_ptx((enum val_kernel_id)i, 9, 0);
        FILE *f = fopen(path, "w");
        if (!now || !f || fputs(now, f) < 0 || fclose(f) != 0)
            fail_msg("writing %s", path);
        free(now);
    }
}

/* The validation fixtures are what the project's generator writes today. */
static void test_validation_fixtures_current(void **state)
{
    (void)state;
    if (getenv("GPUPROBE_REGEN_FIXTURES"))
        regenerate_validation_fixtures();
    for (int i = 0; i < VK_COUNT; i++) {
        char name[128];
        snprintf(name, sizeof name, "validation_%s.ptx", val_kernels[i].name);
        char *fixture = load(name), *now = val_ptx((enum val_kernel_id)i, 9, 0);
        assert_non_null(now);
        if (strcmp(fixture, now) != 0)
            fail_msg("%s differs from val_ptx(): regenerate it (tests/gpu/kernels/capture/README.md)",
                     name);
        free(fixture);
        free(now);
    }
}

/* ---- the rewrite ---------------------------------------------------------------------- */

static size_t occurrences(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* Every line of orig appears in out, in order (the rewrite only inserts). */
static void assert_subsequence(const char *orig, const char *out)
{
    const char *o = orig, *at = out;
    char line[512];
    while (next_line(&o, line, sizeof line)) {
        if (line[0]) {
            const char *hit = strstr(at, line);
            if (!hit)
                fail_msg("original line '%s' is missing or out of order", line);
            at = hit + strlen(line);
        }
    }
}

static void test_rewrite_modes(void **state)
{
    (void)state;
    char *ptx = load("corners.ptx"), err[512];
    struct ptxi_kernel k;
    assert_int_equal(ptxi_analyze(ptx, "corners", &k, err, sizeof err), 0);
    char *rec = ptxi_rewrite(ptx, &k, PTXI_RECORD, err, sizeof err);
    char *cnt = ptxi_rewrite(ptx, &k, PTXI_COUNT, err, sizeof err);
    assert_non_null(rec);
    assert_non_null(cnt);
    assert_subsequence(ptx, rec);
    assert_subsequence(ptx, cnt);
    assert_int_equal(occurrences(rec, "atom.global.add.u64 %gpc_s"), k.nsites);
    assert_int_equal(occurrences(rec, "@%gpc_ok st.global.v2.u32"), k.nsites);
    assert_int_equal(occurrences(cnt, "red.global.add.u64 [%gpc_ctl], 1;"), k.nsites);
    assert_int_equal(occurrences(cnt, "@%gpc_ok st.global"), 0);
    assert_int_equal(occurrences(rec, ".param .u64 " PTXI_PARAM_RECORDS), 1);
    /* threads past the control block's limit skip every site, in both modes */
    assert_int_equal(occurrences(rec, "@%gpc_out bra $gpcap_skip_"), k.nsites);
    assert_int_equal(occurrences(cnt, "@%gpc_out bra $gpcap_skip_"), k.nsites);
    assert_int_equal(occurrences(rec, "ld.global.u64 %gpc_lim, [%gpc_ctl+16];"), 1);
    assert_int_equal(occurrences(rec, "setp.ge.u64 %gpc_out, %gpc_tid, %gpc_lim;"), 1);
    /* the guarded sites are skipped with the inverted guard */
    assert_non_null(strstr(rec, "@!%p1 bra $gpcap_skip_0;"));
    assert_non_null(strstr(rec, "@%p1 bra $gpcap_skip_1;"));
    /* the other kernel of the module is untouched */
    assert_non_null(strstr(rec, ".visible .entry other(.param .u64 p)\n{"));
    /* an instrumented module is not instrumented again */
    struct ptxi_kernel again;
    assert_int_equal(ptxi_analyze(rec, "corners", &again, err, sizeof err), -1);
    assert_non_null(strstr(err, "instrumented already"));
    free(rec);
    free(cnt);
    ptxi_kernel_free(&k);
    free(ptx);
}

static void test_refused_inputs(void **state)
{
    (void)state;
    struct ptxi_kernel k;
    char err[512];
    static const char wide[] =
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry w(.param .u64 p)\n{\n\t.reg .f64 %fd<5>;\n\t.reg .b64 %rd<2>;\n"
        "\tld.param.u64 %rd1, [p];\n\tld.global.v4.f64 {%fd1, %fd2, %fd3, %fd4}, [%rd1];\n"
        "\tret;\n}\n";
    assert_int_equal(ptxi_analyze(wide, NULL, &k, err, sizeof err), -1);
    assert_non_null(strstr(err, "line 9"));
    assert_non_null(strstr(err, "32 bytes"));
    assert_int_equal(ptxi_analyze(".version 8.0\n.target sm_90\n.address_size 32\n", NULL, &k,
                                  err, sizeof err), -1);
    assert_non_null(strstr(err, "64-bit"));
    assert_int_equal(ptxi_analyze(".version 8.0\n.target sm_90\n", NULL, &k, err, sizeof err), -1);
    assert_non_null(strstr(err, "no .entry"));
}

/* ---- parameters ------------------------------------------------------------------------ */

static void test_values(void **state)
{
    (void)state;
    struct ptxi_param u32 = {.name = "n", .type = "u32", .bytes = 4, .align = 4};
    struct ptxi_param s32 = {.name = "s", .type = "s32", .bytes = 4, .align = 4};
    struct ptxi_param f32 = {.name = "x", .type = "f32", .bytes = 4, .align = 4};
    struct ptxi_param u64 = {.name = "p", .type = "u64", .bytes = 8, .align = 8};
    struct capture_value v;
    char err[256];
    assert_int_equal(capture_value_parse(&u32, "1000", &v, err, sizeof err), 0);
    assert_int_equal(v.scalar[0] | v.scalar[1] << 8, 1000);
    assert_int_equal(capture_value_parse(&u32, "4294967296", &v, err, sizeof err), -1);
    assert_int_equal(capture_value_parse(&u32, "-1", &v, err, sizeof err), -1);
    assert_int_equal(capture_value_parse(&s32, "-2", &v, err, sizeof err), 0);
    assert_int_equal(v.scalar[3], 0xff);
    assert_int_equal(capture_value_parse(&f32, "1.5", &v, err, sizeof err), 0);
    float f;
    memcpy(&f, v.scalar, 4);
    assert_true(f == 1.5f);
    assert_int_equal(capture_value_parse(&u64, "buf:4096:randf:7", &v, err, sizeof err), 0);
    assert_true(v.is_buffer && v.bytes == 4096 && v.fill == FILL_RANDF && v.seed == 7);
    assert_int_equal(capture_value_parse(&u64, "buf:0", &v, err, sizeof err), -1);
    assert_int_equal(capture_value_parse(&u64, "buf:64:bogus", &v, err, sizeof err), -1);
    assert_non_null(strstr(err, "unknown fill"));
    assert_int_equal(capture_value_parse(&u32, "buf:64", &v, err, sizeof err), -1);
    assert_non_null(strstr(err, "not 64-bit"));
}

static void test_fills(void **state)
{
    (void)state;
    struct capture_value v = {.is_buffer = 1, .bytes = 4096, .fill = FILL_IOTA};
    unsigned char *b = malloc(v.bytes), *c = malloc(v.bytes);
    uint32_t w;
    capture_fill_bytes(&v, b);
    memcpy(&w, b + 4 * 700, 4);
    assert_int_equal(w, 700);
    v.fill = FILL_RANDF;
    v.seed = 3;
    capture_fill_bytes(&v, b);
    capture_fill_bytes(&v, c);
    assert_memory_equal(b, c, v.bytes); /* deterministic: every pass starts alike */
    for (size_t i = 0; i < v.bytes / 4; i++) {
        float x;
        memcpy(&x, b + 4 * i, 4);
        assert_true(x >= 0.0f && x < 1.0f);
    }
    v.seed = 4; /* another seed, other bytes */
    capture_fill_bytes(&v, c);
    assert_true(memcmp(b, c, v.bytes) != 0);
    /* perm: every word from 0 to 1023 once, not in order */
    v.fill = FILL_PERM;
    capture_fill_bytes(&v, b);
    unsigned char seen[1024] = {0};
    size_t moved = 0;
    for (size_t i = 0; i < v.bytes / 4; i++) {
        memcpy(&w, b + 4 * i, 4);
        assert_true(w < 1024 && !seen[w]);
        seen[w] = 1;
        moved += w != i;
    }
    assert_true(moved > 900);
    free(b);
    free(c);
}

static void test_bind(void **state)
{
    (void)state;
    char *ptx = load("vecadd.ptx"), err[512];
    struct ptxi_kernel k;
    struct capture_value v[4];
    assert_int_equal(ptxi_analyze(ptx, NULL, &k, err, sizeof err), 0);
    const char *ok[] = {"0=buf:64", "vecadd_param_1=buf:64:rand:1", "2=buf:64", "3=16"};
    assert_int_equal(capture_args_bind(&k, ok, 4, v, err, sizeof err), 0);
    assert_true(v[1].is_buffer && v[1].fill == FILL_RAND && !v[3].is_buffer);
    const char *missing[] = {"0=buf:64", "2=buf:64", "3=16"};
    assert_int_equal(capture_args_bind(&k, missing, 3, v, err, sizeof err), -1);
    assert_non_null(strstr(err, "vecadd_param_1"));
    const char *twice[] = {"0=buf:64", "vecadd_param_0=buf:64"};
    assert_int_equal(capture_args_bind(&k, twice, 2, v, err, sizeof err), -1);
    assert_non_null(strstr(err, "twice"));
    const char *unknown[] = {"7=1"};
    assert_int_equal(capture_args_bind(&k, unknown, 1, v, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a parameter"));
    unsigned d[3];
    assert_int_equal(capture_dims_parse("16,16", d, err, sizeof err), 0);
    assert_true(d[0] == 16 && d[1] == 16 && d[2] == 1);
    assert_int_equal(capture_dims_parse("4x2x3", d, err, sizeof err), 0);
    assert_int_equal(d[2], 3);
    assert_int_equal(capture_dims_parse("0", d, err, sizeof err), -1);
    assert_int_equal(capture_dims_parse("1,2,3,4", d, err, sizeof err), -1);
    /* CUDA's launch bounds, and what a NAME=VALUE shows without the PTX */
    const unsigned ok_block[3] = {1024, 1, 1}, wide[3] = {2000, 1, 1}, deep[3] = {1, 1, 65},
                   many[3] = {64, 32, 1}, ok_grid[3] = {0x7fffffffu, 65535, 65535},
                   tall[3] = {1, 65536, 1};
    assert_int_equal(capture_dims_limit("block", ok_block, err, sizeof err), 0);
    assert_int_equal(capture_dims_limit("block", wide, err, sizeof err), -1);
    assert_int_equal(capture_dims_limit("block", deep, err, sizeof err), -1);
    assert_int_equal(capture_dims_limit("block", many, err, sizeof err), -1);
    assert_non_null(strstr(err, "2048 threads"));
    assert_int_equal(capture_dims_limit("grid", ok_grid, err, sizeof err), 0);
    assert_int_equal(capture_dims_limit("grid", tall, err, sizeof err), -1);
    assert_int_equal(capture_arg_check("0=buf:64:rand:7", err, sizeof err), 0);
    assert_int_equal(capture_arg_check("n=-3", err, sizeof err), 0); /* the PTX's type decides */
    const char *bad_args[] = {"nonsense", "=1", "0=buf:-1", "0=buf:0", "0=buf:1K",
                              "0=buf:99999999999999999999", "0=buf:64:rand:x", "0=buf:64:sparkle"};
    for (size_t i = 0; i < sizeof bad_args / sizeof *bad_args; i++)
        if (capture_arg_check(bad_args[i], err, sizeof err) != -1)
            fail_msg("'%s' passed", bad_args[i]);
    ptxi_kernel_free(&k);
    free(ptx);
}

/* ---- the records' order ------------------------------------------------------- */

static const unsigned char *order_recs;

static int by_tid_then_slot(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b, tx, ty;
    memcpy(&tx, order_recs + (size_t)x * PTXI_RECORD_BYTES + 8, 4);
    memcpy(&ty, order_recs + (size_t)y * PTXI_RECORD_BYTES + 8, 4);
    return tx != ty ? (tx > ty) - (tx < ty) : (x > y) - (x < y);
}

static void test_order(void **state)
{
    (void)state;
    /* threads interleaved as a GPU interleaves them, ids over both 16-bit digits */
    enum { N = 200000 };
    unsigned char *recs = calloc(N, PTXI_RECORD_BYTES);
    uint32_t *got = malloc(N * sizeof *got), *want = malloc(N * sizeof *want);
    uint64_t state64 = 42;
    for (uint32_t s = 0; s < N; s++) {
        state64 = state64 * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t tid = (uint32_t)(state64 >> 33) % 5000u * 70001u; /* up to ~3.5e8 */
        memcpy(recs + (size_t)s * PTXI_RECORD_BYTES + 8, &tid, 4);
        want[s] = s;
    }
    order_recs = recs;
    qsort(want, N, sizeof *want, by_tid_then_slot);
    assert_int_equal(capture_order(recs, N, got), 0);
    assert_memory_equal(got, want, N * sizeof *got);
    assert_int_equal(capture_order(recs, 0, got), 0);
    free(recs);
    free(got);
    free(want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corners),
        cmocka_unit_test(test_nvcc_kernels),
        cmocka_unit_test(test_sites_are_the_global_accesses),
        cmocka_unit_test(test_validation_fixtures_current),
        cmocka_unit_test(test_rewrite_modes),
        cmocka_unit_test(test_refused_inputs),
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_fills),
        cmocka_unit_test(test_bind),
        cmocka_unit_test(test_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
