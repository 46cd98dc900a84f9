/*
 * Unit tests of the validation kernels' inputs and answers
 * (probes/validation_data.c), the host side of every kernel's check.
 *
 * DESIGN
 * Each kernel is emulated here on the CPU from its definition
 * (validation.h's table, the comments of validation_ptx.c), on the buffers
 * val_bindings binds and val_input_fill fills, array by array: that output
 * must pass val_output_check, and the same output with one word changed
 * (a boundary point, a transposed pair, a bin) must fail naming that word.
 * The emulations index the input arrays; the checker recomputes each answer
 * from the pattern's formula, so the two are independent. The permutation
 * is checked to be one, and to scatter a warp's 32 lanes over distinct
 * 32-byte sectors (what makes gather uncoalesced on the GPU).
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

#include "probes/validation.h"
#include "probes/validation_data.h"

static char err[256];

static float as_float(uint32_t w)
{
    float f;
    memcpy(&f, &w, sizeof f);
    return f;
}

static uint32_t as_word(float f)
{
    uint32_t w;
    memcpy(&w, &f, sizeof w);
    return w;
}

static uint32_t *input(enum val_input in)
{
    uint32_t *w = malloc((size_t)VAL_INPUT_WORDS * sizeof *w);
    assert_non_null(w);
    val_input_fill(in, w);
    return w;
}

/* The output words of kernel id, zeroed as the run zeroes them. */
static uint32_t *output(enum val_kernel_id id)
{
    uint32_t *w = calloc(val_check_words(id), sizeof *w);
    assert_non_null(w);
    return w;
}

/* out must pass, and fail at word i once that word is changed to bad. */
static void passes_then_fails_at(enum val_kernel_id id, uint32_t *out, size_t i, uint32_t bad)
{
    char want[64];
    if (val_output_check(id, out, err, sizeof err) != 0)
        fail_msg("%s: %s", val_kernels[id].name, err);
    out[i] = bad;
    assert_int_equal(val_output_check(id, out, err, sizeof err), -1);
    snprintf(want, sizeof want, id == VK_HISTOGRAM ? "bin %zu " : "out[%zu]", i);
    if (!strstr(err, want))
        fail_msg("%s: '%s' does not name %s", val_kernels[id].name, err, want);
}

static void test_permutation(void **state)
{
    (void)state;
    uint32_t *perm = input(VI_PERM);
    unsigned char *seen = calloc(VAL_INPUT_WORDS, 1);
    assert_non_null(seen);
    for (size_t i = 0; i < VAL_INPUT_WORDS; i++) {
        assert_true(perm[i] < VAL_INPUT_WORDS);
        if (seen[perm[i]]++)
            fail_msg("%u appears twice (index %zu)", perm[i], i);
        if (i + 1 < VAL_INPUT_WORDS)
            assert_int_equal(perm[i + 1], val_perm_next(perm[i]));
    }
    /* every warp of the first 4096: 32 lanes on (nearly) 32 different sectors of 8 floats */
    size_t distinct = 0;
    for (size_t w = 0; w < 4096; w++)
        for (size_t l = 0; l < 32; l++) {
            int dup = 0;
            for (size_t k = 0; k < l && !dup; k++)
                dup = perm[32 * w + k] / 8 == perm[32 * w + l] / 8;
            distinct += !dup;
        }
    assert_true(distinct > 4096 * 31);
    free(seen);
    free(perm);
}

static void test_patterns(void **state)
{
    (void)state;
    uint32_t *seq = input(VI_SEQ), *grid = input(VI_GRID), *bytes = input(VI_BYTES);
    for (size_t i = 0; i < VAL_INPUT_WORDS; i++) {
        if (as_float(seq[i]) != (float)i)
            fail_msg("seq[%zu] = %g", i, as_float(seq[i]));
        float g = as_float(grid[i]);
        if (!(g >= 0 && g < 1024 && g == floorf(g)))
            fail_msg("grid[%zu] = %g is not an integer below 1024", i, g);
    }
    /* the bytes spread over all 256 values, none more than twice its share */
    size_t count[256] = {0};
    for (size_t i = 0; i < VAL_INPUT_WORDS; i++)
        for (int b = 0; b < 4; b++)
            count[bytes[i] >> (8 * b) & 255]++;
    for (int b = 0; b < 256; b++)
        assert_true(count[b] > 0 && count[b] < 2 * (VAL_HIST_BYTES / 256));
    free(seq);
    free(grid);
    free(bytes);
}

static void test_bindings(void **state)
{
    (void)state;
    /* every pattern has its buffer, and a kernel that reads one names that buffer */
    for (int in = 0; in < VI_COUNT; in++)
        assert_true(val_input_buffer((enum val_input)in) >= VB_SEQ);
    assert_int_equal(val_bindings[VK_GATHER][1], val_input_buffer(VI_SEQ));
    assert_int_equal(val_bindings[VK_GATHER][2], val_input_buffer(VI_PERM));
    assert_int_equal(val_bindings[VK_STENCIL][1], val_input_buffer(VI_GRID));
    assert_int_equal(val_bindings[VK_HISTOGRAM][1], val_input_buffer(VI_BYTES));
    /* the bandwidth kernels are not checked; every validated kernel is */
    assert_int_equal(val_check_words(VK_BW_READ), 0);
    assert_int_equal(val_check_words(VK_L2_READ), 0);
    for (int id = 0; id < VK_COUNT; id++)
        assert_true(val_check_words((enum val_kernel_id)id) >= 2);
}

static void test_all_ones_kernels(void **state)
{
    (void)state;
    /* the first eight and the two all-ones newcomers: one value everywhere */
    static const struct {
        enum val_kernel_id id;
        float v;
    } cases[] = {{VK_COPY, 1},        {VK_STRIDED, VAL_STRIDED_ITERS}, {VK_FFMA, 8},
                 {VK_MIXED, 4},       {VK_REDUCE, 1024},   {VK_MM_NAIVE, VAL_MM_N},
                 {VK_MM_TILED, VAL_MM_N}, {VK_MM_ABT, VAL_MM_N}, {VK_MM_TILED32, VAL_MM_N},
                 {VK_SGEMV, VAL_GEMV_N}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        enum val_kernel_id id = cases[c].id;
        size_t n = val_check_words(id);
        uint32_t *out = output(id);
        for (size_t i = 0; i < n; i++)
            out[i] = as_word(cases[c].v);
        passes_then_fails_at(id, out, n - 1, as_word(cases[c].v + 1));
        free(out);
    }
}

static void test_transposes(void **state)
{
    (void)state;
    const size_t n = VAL_TR_N;
    uint32_t *in = input(VI_SEQ);
    for (int k = 0; k < 2; k++) {
        enum val_kernel_id id = k ? VK_TR_TILED : VK_TR_NAIVE;
        uint32_t *out = output(id);
        for (size_t y = 0; y < n; y++)
            for (size_t x = 0; x < n; x++)
                out[x * n + y] = in[y * n + x];
        /* an element left in place: out[1][2] = in[1][2] */
        passes_then_fails_at(id, out, 1 * n + 2, in[1 * n + 2]);
        free(out);
    }
    free(in);
}

/* The point at c and 6 neighbours at the given offsets from it, added in the kernel's order. */
static float point_sum(const uint32_t *in, size_t c, const long long off[6])
{
    float s = as_float(in[c]);
    for (int k = 0; k < 6; k++)
        s += as_float(in[(size_t)((long long)c + off[k])]);
    return s;
}

static void test_stencil(void **state)
{
    (void)state;
    const long long n = VAL_ST_N;
    const long long right[6] = {-1, 1, -n, n, -n * n, n * n};
    const long long skewed[6] = {-1, 1, -n + 1, n, -n * n, n * n}; /* y - 1 one column off */
    uint32_t *in = input(VI_GRID), *out = output(VK_STENCIL);
    for (long long z = 1; z + 1 < n; z++)
        for (long long y = 1; y + 1 < n; y++)
            for (long long x = 1; x + 1 < n; x++) {
                size_t c = (size_t)((z * n + y) * n + x);
                out[c] = as_word(point_sum(in, c, right));
            }
    uint32_t *copy = malloc(val_check_words(VK_STENCIL) * sizeof *copy);
    assert_non_null(copy);
    memcpy(copy, out, val_check_words(VK_STENCIL) * sizeof *copy);
    /* a boundary point written (the kernel must leave it) */
    passes_then_fails_at(VK_STENCIL, out, (size_t)((5 * n + 0) * n + 7), as_word(1.0f));
    /* an interior point with one neighbour from the wrong column */
    size_t c = (size_t)((9 * n + 9) * n + 9);
    assert_true(point_sum(in, c, skewed) != point_sum(in, c, right));
    passes_then_fails_at(VK_STENCIL, copy, c, as_word(point_sum(in, c, skewed)));
    free(copy);
    free(in);
    free(out);
}

static void test_gather(void **state)
{
    (void)state;
    uint32_t *in = input(VI_SEQ), *idx = input(VI_PERM), *out = output(VK_GATHER);
    for (size_t i = 0; i < VAL_GATHER_N; i++)
        out[i] = in[idx[i]];
    /* in[i] instead of in[idx[i]] */
    passes_then_fails_at(VK_GATHER, out, 12345, in[12345]);
    free(in);
    free(idx);
    free(out);
}

static void test_histogram(void **state)
{
    (void)state;
    uint32_t *in = input(VI_BYTES), *out = output(VK_HISTOGRAM);
    for (size_t i = 0; i < VAL_INPUT_WORDS; i++)
        for (int b = 0; b < 4; b++)
            out[in[i] >> (8 * b) & 255]++;
    /* one byte counted in the wrong bin */
    out[200]--;
    out[201]++;
    assert_int_equal(val_output_check(VK_HISTOGRAM, out, err, sizeof err), -1);
    assert_non_null(strstr(err, "bin 200 "));
    out[200]++;
    out[201]--;
    passes_then_fails_at(VK_HISTOGRAM, out, 255, out[255] + 1);
    free(in);
    free(out);
}

static void test_saxpy_sfu(void **state)
{
    (void)state;
    /* the kernel in single precision with the C library's sin and 2^x (the GPU's approximate
     * ones differ in the last bits: the check allows VAL_SFU_TOLERANCE) */
    const float a = 2.0f, x = 1.0f;
    float t = x;
    for (int k = 0; k < VAL_SFU_ITERS; k++)
        t = (sinf(t) + exp2f(-t)) * 0.5f;
    uint32_t *out = output(VK_SFU);
    for (size_t i = 0; i < VAL_SFU_N; i++)
        out[i] = as_word(a * x + t);
    /* one sin step short of the answer */
    passes_then_fails_at(VK_SFU, out, 77, as_word(a * x + sinf(t)));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_permutation),
        cmocka_unit_test(test_patterns),
        cmocka_unit_test(test_bindings),
        cmocka_unit_test(test_all_ones_kernels),
        cmocka_unit_test(test_transposes),
        cmocka_unit_test(test_stencil),
        cmocka_unit_test(test_gather),
        cmocka_unit_test(test_histogram),
        cmocka_unit_test(test_saxpy_sfu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
