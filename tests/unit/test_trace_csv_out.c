/*
 * Unit tests of the sorted-output CSV writer's fast paths (trace/csv.c's
 * trace_csv_out_sink and trace/fmtnum.h): the number formatters against
 * snprintf for every digit count and random values, with the bytes past
 * the returned end left alone beyond TRACE_FMT_SLACK; and the batch sink,
 * which makes each line's "sm,seq," from the line before, against
 * snprintf line by line over runs that cross every power of ten of seq
 * (9 -> 10 ... up to 20 digits), SM changes, gaps and repeats in seq, and
 * batches split at any point; the same through the sink of encoded records
 * (trace_csv_out_sink_encoded, what a sort's writer thread formats).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/binfmt.h"
#include "trace/csv.h"
#include "trace/fmtnum.h"

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* v, then values of every bit length and digit count around it */
static void check_one(uint64_t v)
{
    char got[64], want[64];
    memset(got, '#', sizeof got);
    char *e = trace_put_dec(got, v);
    snprintf(want, sizeof want, "%" PRIu64, v);
    assert_int_equal((size_t)(e - got), strlen(want));
    assert_memory_equal(got, want, strlen(want));
    for (size_t i = strlen(want) + TRACE_FMT_SLACK; i < sizeof got; i++)
        assert_int_equal(got[i], '#');
    memset(got, '#', sizeof got);
    e = trace_put_hex(got, v);
    snprintf(want, sizeof want, "0x%" PRIx64, v);
    assert_int_equal((size_t)(e - got), strlen(want));
    assert_memory_equal(got, want, strlen(want));
    for (size_t i = strlen(want) + TRACE_FMT_SLACK; i < sizeof got; i++)
        assert_int_equal(got[i], '#');
    assert_int_equal(trace_dec_digits(v), snprintf(want, sizeof want, "%" PRIu64, v));
}

static void test_numbers(void **state)
{
    (void)state;
    uint64_t p10 = 1;
    for (int i = 0; i < 20; i++, p10 *= 10) {
        check_one(p10);
        check_one(p10 - 1);
        check_one(p10 + 1);
    }
    for (int b = 0; b < 64; b++) {
        check_one((uint64_t)1 << b);
        check_one(((uint64_t)1 << b) - 1);
        check_one(((uint64_t)0xa << b) | 0xf);
    }
    check_one(UINT64_MAX);
    check_one(0xabcdef0123456789ull);
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 100000; i++) {
        uint64_t v = rnd(&s);
        check_one(v >> (v & 63));
    }
}

struct mem {
    char *p;
    size_t n, cap;
};

static int mem_flush(void *ctx, const char *data, size_t n)
{
    struct mem *m = ctx;
    if (m->n + n + 1 > m->cap) {
        m->cap = (m->n + n + 1) * 2;
        m->p = realloc(m->p, m->cap);
        assert_non_null(m->p);
    }
    memcpy(m->p + m->n, data, n);
    m->n += n;
    m->p[m->n] = 0;
    return 0;
}

/* Writes o through the sink in batches of `batch` (encoded: as the
 * sorter's output queue hands them, in the sorted file's encoding) and
 * compares with the lines snprintf makes. */
static void check_sink(const struct trace_out *o, size_t n, size_t batch, int encoded)
{
    char buf[4096];
    struct mem m = {0};
    struct trace_wbuf w;
    trace_wbuf_init(&w, buf, sizeof buf, mem_flush, &m);
    uint8_t *bytes = malloc(n * TRACE_BIN_OUT_BYTES);
    assert_non_null(bytes);
    trace_bin_out_encode_n(o, n, bytes);
    for (size_t i = 0; i < n; i += batch) {
        size_t k = n - i < batch ? n - i : batch;
        assert_int_equal(encoded ? trace_csv_out_sink_encoded(&w, bytes + i * TRACE_BIN_OUT_BYTES, k)
                                 : trace_csv_out_sink(&w, o + i, k),
                         0);
    }
    free(bytes);
    assert_int_equal(trace_wbuf_flush(&w), 0);
    size_t at = 0;
    char want[200];
    for (size_t i = 0; i < n; i++) {
        int k = snprintf(want, sizeof want, "%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",0x%" PRIx64 ",0x%" PRIx64 ",%" PRIu32
                         ",%" PRIu32 ",%s\n", o[i].sm, o[i].seq, o[i].tid, o[i].pc, o[i].addr, o[i].width, o[i].dep,
                         o[i].store ? "st" : "ld");
        assert_true(at + (size_t)k <= m.n);
        if (memcmp(m.p + at, want, (size_t)k) != 0)
            fail_msg("line %zu: got %.*s want %s", i, k, m.p + at, want);
        at += (size_t)k;
    }
    assert_int_equal(at, m.n);
    free(m.p);
}

static void test_sink_seq_runs(void **state)
{
    (void)state;
    enum { N = 4000 };
    struct trace_out *o = calloc(N, sizeof *o);
    assert_non_null(o);
    size_t n = 0;
    uint64_t s = 12345;
    /* a run of 20 across each power of ten, SM by SM; then gaps, repeats,
     * an SM going back, and seq up to the top of 64 bits */
    uint64_t p10 = 1;
    for (uint32_t d = 0; d < 20; d++, p10 *= 10) {
        uint64_t start = p10 > 10 ? p10 - 10 : 0;
        for (uint64_t k = 0; k < 20; k++) {
            uint64_t v = rnd(&s);
            o[n++] = (struct trace_out){.sm = d % 3 == 0 ? 0 : d, .seq = start + k, .tid = v >> 40,
                                        .pc = v & 0xfff0, .addr = v, .width = 1u << (v % 5), .dep = v & 1, .store = (v >> 9) & 1};
        }
    }
    for (uint64_t k = 0; k < 30; k++)
        o[n++] = (struct trace_out){.sm = UINT32_MAX, .seq = UINT64_MAX - 29 + k, .tid = k};
    while (n < N) {
        uint64_t v = rnd(&s);
        struct trace_out prev = o[n - 1];
        uint64_t seq = v % 4 == 0 ? v % 1000 : prev.seq + (v % 8 == 1 ? 0 : 1);
        o[n++] = (struct trace_out){.sm = v % 16 == 3 ? prev.sm + 1 : (v % 32 == 5 ? 0 : prev.sm), .seq = seq,
                                    .tid = v >> 50, .pc = v >> 40, .addr = v, .width = 8, .dep = (v >> 7) & 1};
    }
    size_t batches[] = {1, 2, 3, 7, 64, 1024, N};
    for (size_t b = 0; b < sizeof batches / sizeof *batches; b++)
        for (int encoded = 0; encoded <= 1; encoded++)
            check_sink(o, n, batches[b], encoded);
    free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_sink_seq_runs),
    };
    return cmocka_run_group_tests_name("trace_csv_out", tests, NULL, NULL);
}
