/*
 * The validation kernels' bindings, input patterns and answers (see
 * validation_data.h).
 *
 * DESIGN
 * One checker per kind of answer: a value everywhere (the all-ones
 * kernels), a value per index from a formula (transposes, stencil), a walk
 * of the permutation (gather), the byte counts (histogram), and the SFU
 * iteration computed in double (saxpy_sfu, within VAL_SFU_TOLERANCE). Each
 * reports the first word that differs.
 */
#include "probes/validation_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/errf.h"

#define PERM_MASK (VAL_INPUT_WORDS - 1)

const enum val_buffer val_bindings[VK_ALL][3] = {
    [VK_COPY] = {VB_OUT, VB_BIG},        [VK_STRIDED] = {VB_OUT, VB_BIG},
    [VK_FFMA] = {VB_OUT},                [VK_MIXED] = {VB_OUT, VB_BIG},
    [VK_REDUCE] = {VB_OUT, VB_BIG},      [VK_MM_NAIVE] = {VB_MC, VB_MA, VB_MB},
    [VK_MM_TILED] = {VB_MC, VB_MA, VB_MB}, [VK_MM_ABT] = {VB_MC, VB_MA, VB_MB},
    [VK_TR_NAIVE] = {VB_OUT, VB_SEQ},    [VK_TR_TILED] = {VB_OUT, VB_SEQ},
    [VK_STENCIL] = {VB_OUT, VB_GRID},    [VK_GATHER] = {VB_OUT, VB_SEQ, VB_PERM},
    [VK_HISTOGRAM] = {VB_OUT, VB_BYTES}, [VK_MM_TILED32] = {VB_MC, VB_MA, VB_MB},
    [VK_SFU] = {VB_OUT, VB_BIG},         [VK_SGEMV] = {VB_OUT, VB_BIG, VB_MB},
    [VK_BW_READ] = {VB_OUT, VB_BIG},     [VK_L2_READ] = {VB_OUT, VB_BIG},
};

uint64_t val_buffer_bytes(enum val_buffer b)
{
    static const uint64_t bytes[VB_COUNT] = {
        [VB_OUT] = 512ull << 20,
        [VB_BIG] = VAL_BIG_BYTES,
        [VB_MA] = (uint64_t)VAL_MM_N * VAL_MM_N * 4,
        [VB_MB] = (uint64_t)VAL_MM_N * VAL_MM_N * 4,
        [VB_MC] = (uint64_t)VAL_MM_N * VAL_MM_N * 4,
        [VB_SEQ] = (uint64_t)VAL_INPUT_WORDS * 4,
        [VB_PERM] = (uint64_t)VAL_INPUT_WORDS * 4,
        [VB_GRID] = (uint64_t)VAL_INPUT_WORDS * 4,
        [VB_BYTES] = (uint64_t)VAL_INPUT_WORDS * 4,
    };
    return (unsigned)b < VB_COUNT ? bytes[b] : 0;
}

const char *val_buffer_fill(enum val_buffer b)
{
    return b == VB_PERM ? "perm:1" : b == VB_BYTES ? "rand:1" : "f32:1";
}

enum val_buffer val_input_buffer(enum val_input in)
{
    static const enum val_buffer buffers[VI_COUNT] = {VB_SEQ, VB_PERM, VB_GRID, VB_BYTES};
    return buffers[in];
}

/* ---- the patterns ------------------------------------------------------------- */

/* A 32-bit mixing function (multiply, xor-shift): neighbouring i give
 * unrelated values. */
static uint32_t hash(uint32_t x)
{
    x *= 0x9E3779B1u;
    x ^= x >> 15;
    x *= 0x85EBCA77u;
    x ^= x >> 13;
    return x;
}

static uint32_t float_bits(float f)
{
    uint32_t w;
    memcpy(&w, &f, sizeof w);
    return w;
}

static float bits_float(uint32_t w)
{
    float f;
    memcpy(&f, &w, sizeof f);
    return f;
}

/* Full period modulo 2^24 (Hull-Dobell: c odd, a - 1 a multiple of 4). */
uint32_t val_perm_next(uint32_t x)
{
    return (1664525u * x + 1013904223u) & PERM_MASK;
}

static float grid_value(uint32_t i)
{
    return (float)(hash(i) >> 22);
}

static uint32_t byte_at(uint32_t j)
{
    return hash(j) >> 24;
}

void val_input_fill(enum val_input in, uint32_t *w)
{
    uint32_t x = 0;
    for (uint32_t i = 0; i < VAL_INPUT_WORDS; i++) {
        switch (in) {
        case VI_SEQ: w[i] = float_bits((float)i); break;
        case VI_PERM: w[i] = x; x = val_perm_next(x); break;
        case VI_GRID: w[i] = float_bits(grid_value(i)); break;
        default:
            w[i] = byte_at(4 * i) | byte_at(4 * i + 1) << 8 | byte_at(4 * i + 2) << 16 |
                   byte_at(4 * i + 3) << 24;
        }
    }
}

/* ---- the answers ---------------------------------------------------------------- */

size_t val_check_words(enum val_kernel_id id)
{
    switch (id) {
    case VK_TR_NAIVE:
    case VK_TR_TILED: return (size_t)VAL_TR_N * VAL_TR_N;
    case VK_STENCIL: return (size_t)VAL_ST_N * VAL_ST_N * VAL_ST_N;
    case VK_GATHER: return VAL_GATHER_N;
    case VK_HISTOGRAM: return VAL_HIST_BINS;
    case VK_MM_TILED32: return (size_t)VAL_MM_N * VAL_MM_N;
    case VK_SFU: return VAL_SFU_N;
    case VK_SGEMV: return VAL_GEMV_N;
    default: return id < VK_COUNT ? 2 : 0;
    }
}

static int wrong(char *err, size_t errlen, size_t i, float got, float want)
{
    return errf(err, errlen, "wrong answer: out[%zu] = %.9g, expected %.9g", i, got, want);
}

/* The all-ones kernels' one value (every element of the output). */
static float uniform_answer(enum val_kernel_id id)
{
    switch (id) {
    case VK_COPY: return 1.0f;
    case VK_STRIDED: return (float)VAL_STRIDED_ITERS;
    case VK_FFMA: return 8.0f;
    case VK_MIXED: return 4.0f;
    case VK_REDUCE: return 1024.0f;
    case VK_SGEMV: return (float)VAL_GEMV_N;
    default: return (float)VAL_MM_N; /* the matrix products */
    }
}

/* out[x][y] = in[y][x] with in = VI_SEQ: out[j] = (j mod n) n + j / n. */
static float transpose_answer(size_t j)
{
    return (float)((j % VAL_TR_N) * VAL_TR_N + j / VAL_TR_N);
}

/* Interior points: the point and its 6 neighbours of VI_GRID, added in the
 * kernel's order (exact: integers below 2^13); boundary points: untouched. */
static float stencil_answer(size_t j)
{
    const uint32_t n = VAL_ST_N, x = (uint32_t)(j % n), y = (uint32_t)(j / n % n),
                   z = (uint32_t)(j / n / n), c = (uint32_t)j;
    if (x == 0 || y == 0 || z == 0 || x == n - 1 || y == n - 1 || z == n - 1)
        return 0.0f;
    const uint32_t at[7] = {c, c - 1, c + 1, c - n, c + n, c - n * n, c + n * n};
    float sum = 0.0f;
    for (int k = 0; k < 7; k++)
        sum += grid_value(at[k]);
    return sum;
}

static float saxpy_sfu_answer(void)
{
    double t = 1.0;   /* x: VB_BIG's 1.0 */
    for (int k = 0; k < VAL_SFU_ITERS; k++)
        t = 0.5 * (sin(t) + exp2(-t));
    return (float)(bits_float(VAL_SFU_A) * 1.0 + t);
}

static int check_histogram(const uint32_t *out, char *err, size_t errlen)
{
    uint32_t *want = calloc(VAL_HIST_BINS, sizeof *want);
    if (!want)
        return errf(err, errlen, "out of memory");
    for (uint32_t j = 0; j < VAL_HIST_BYTES; j++)
        want[byte_at(j)]++;
    int rc = 0;
    for (uint32_t b = 0; b < VAL_HIST_BINS && rc == 0; b++)
        if (out[b] != want[b])
            rc = errf(err, errlen, "wrong answer: bin %u counts %u bytes, expected %u", b, out[b],
                      want[b]);
    free(want);
    return rc;
}

int val_output_check(enum val_kernel_id id, const uint32_t *out, char *err, size_t errlen)
{
    size_t n = val_check_words(id);
    uint32_t perm = 0;
    float sfu = id == VK_SFU ? saxpy_sfu_answer() : 0.0f;
    if (id == VK_HISTOGRAM)
        return check_histogram(out, err, errlen);
    for (size_t i = 0; i < n; i++) {
        float got = bits_float(out[i]), want;
        switch (id) {
        case VK_TR_NAIVE:
        case VK_TR_TILED: want = transpose_answer(i); break;
        case VK_STENCIL: want = stencil_answer(i); break;
        case VK_GATHER: want = (float)perm; perm = val_perm_next(perm); break;
        case VK_SFU:
            if (!(fabs((double)got - sfu) <= VAL_SFU_TOLERANCE))
                return wrong(err, errlen, i, got, sfu);
            continue;
        default: want = uniform_answer(id);
        }
        if (got != want)
            return wrong(err, errlen, i, got, want);
    }
    return 0;
}
