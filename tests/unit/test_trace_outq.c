/*
 * Unit tests of the output's writer thread (trace/outq.c): items queued by
 * copy (trace_outq_put) and built in place (trace_outq_room +
 * trace_outq_commit), mixed and across many buffers, reach the sink in the
 * order given and complete; room never grants more than the buffer being
 * filled holds; the sink's first failure comes back from every later call,
 * and from trace_outq_free; and a binary sorted file written through a
 * queue of encoded records (trace_bin_out_encode_n, trace_bin_write_encoded)
 * has the same bytes as one written by trace_bin_write_out.
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
#include "trace/binfmt.h"
#include "trace/outq.h"

/* Receives uint64_t items; fails with 7 once `fail_at` items went through. */
struct seen {
    uint64_t *items;
    size_t n, cap, fail_at, calls;
};

static int take(void *ctx, const void *items, size_t n)
{
    struct seen *s = ctx;
    s->calls++;
    if (s->n + n > s->fail_at)
        return 7;
    assert_true(s->n + n <= s->cap);
    memcpy(s->items + s->n, items, n * sizeof *s->items);
    s->n += n;
    return 0;
}

/* n items in place, in pieces as room grants them. */
static int put_in_place(struct trace_outq *q, uint64_t first, size_t n)
{
    while (n) {
        size_t k = n;
        uint64_t *at = trace_outq_room(q, &k);
        assert_true(k >= 1 && k <= n && k <= TRACE_OUTQ_ITEMS);
        for (size_t i = 0; i < k; i++)
            at[i] = first + i;
        int rc = trace_outq_commit(q, k);
        if (rc)
            return rc;
        first += k;
        n -= k;
    }
    return 0;
}

static void test_mixed_puts_in_order(void **state)
{
    (void)state;
    const size_t total = 5 * TRACE_OUTQ_ITEMS + 123;
    struct seen s = {.cap = total, .fail_at = SIZE_MAX};
    s.items = malloc(total * sizeof *s.items);
    assert_non_null(s.items);
    struct trace_outq *q = trace_outq_new(sizeof(uint64_t), take, &s);
    assert_non_null(q);
    uint64_t next = 0;
    while (next < total) {
        size_t n = (size_t)(next * 2654435761u % 3000) + 1; /* uneven pieces, some > a buffer */
        if (n > total - next)
            n = total - next;
        if (next % 2) {
            assert_int_equal(put_in_place(q, next, n), 0);
        } else {
            uint64_t *v = malloc(n * sizeof *v);
            assert_non_null(v);
            for (size_t i = 0; i < n; i++)
                v[i] = next + i;
            assert_int_equal(trace_outq_put(q, v, n), 0);
            free(v);
        }
        next += n;
    }
    assert_int_equal(trace_outq_drain(q), 0);
    assert_int_equal(s.n, total);
    assert_int_equal(trace_outq_free(q), 0);
    for (size_t i = 0; i < total; i++)
        if (s.items[i] != i)
            fail_msg("item %zu is %llu", i, (unsigned long long)s.items[i]);
    assert_true(s.calls >= 5); /* handed on in buffers, not all at the end */
    free(s.items);
}

static void test_failure_comes_back(void **state)
{
    (void)state;
    struct seen s = {.cap = 4 * TRACE_OUTQ_ITEMS, .fail_at = TRACE_OUTQ_ITEMS};
    s.items = malloc(s.cap * sizeof *s.items);
    assert_non_null(s.items);
    struct trace_outq *q = trace_outq_new(sizeof(uint64_t), take, &s);
    assert_non_null(q);
    /* the first buffer goes through; the second fails; later calls say so */
    int rc = put_in_place(q, 0, 3 * TRACE_OUTQ_ITEMS);
    rc = rc ? rc : trace_outq_drain(q);
    assert_int_equal(rc, 7);
    assert_int_equal(put_in_place(q, 0, 1), 7);
    assert_int_equal(trace_outq_free(q), 7);
    assert_int_equal(s.n, TRACE_OUTQ_ITEMS);
    free(s.items);
}

static int setup(void **state)
{
    return tmp_setup(state, "outq", "direct.bin");
}

static int teardown(void **state)
{
    struct tmp *t = *state;
    unlink(tmp_path(t, "queued.bin"));
    return tmp_teardown(state);
}

static int encoded_sink(void *w, const void *items, size_t n)
{
    return trace_bin_write_encoded(w, items, n);
}

static size_t slurp_all(const char *path, uint8_t **buf)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    *buf = malloc((size_t)n + 1);
    assert_non_null(*buf);
    assert_int_equal(fread(*buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return (size_t)n;
}

/* Encoded records through a queue, in pieces small (kept in the writer's
 * buffer) and large (written in place), give trace_bin_write_out's bytes. */
static void test_encoded_binary_same_bytes(void **state)
{
    struct tmp *t = *state;
    const size_t n = 3 * TRACE_OUTQ_ITEMS + 77;
    struct trace_out *o = malloc(n * sizeof *o);
    assert_non_null(o);
    for (size_t i = 0; i < n; i++)
        o[i] = (struct trace_out){(uint32_t)(i / 5000), i % 5000, i * 3, 0x100 + i % 7 * 16,
                                  0xfffffff000ull + i * 40, 1u << (i % 8), (uint32_t)(i % 2),
                                  (uint32_t)(i % 3 == 0)};
    struct trace_params p;
    trace_params_default(&p);
    trace_params_resolve(&p, 0);
    struct trace_bin_header h;
    trace_bin_header_init(&h, TRACE_BIN_SORTED, &p);
    struct trace_err err;
    struct trace_bin_writer *w = trace_bin_writer_open(tmp_path(t, "direct.bin"), &h, &err);
    assert_non_null(w);
    assert_int_equal(trace_bin_write_out(w, o, n), 0);
    trace_bin_writer_set_input(w, 99);
    assert_int_equal(trace_bin_writer_close(w, &err), 0);

    w = trace_bin_writer_open(tmp_path(t, "queued.bin"), &h, &err);
    assert_non_null(w);
    struct trace_outq *q = trace_outq_new(TRACE_BIN_OUT_BYTES, encoded_sink, w);
    assert_non_null(q);
    for (size_t i = 0; i < n;) {
        size_t k = i < 100 ? 3 : n - i; /* a few small pieces, then the rest */
        if (k > n - i)
            k = n - i;
        uint8_t *at = trace_outq_room(q, &k);
        trace_bin_out_encode_n(o + i, k, at);
        assert_int_equal(trace_outq_commit(q, k), 0);
        i += k;
    }
    assert_int_equal(trace_outq_free(q), 0);
    trace_bin_writer_set_input(w, 99);
    assert_int_equal(trace_bin_writer_close(w, &err), 0);

    uint8_t *a, *b;
    size_t na = slurp_all(tmp_path(t, "direct.bin"), &a), nb = slurp_all(tmp_path(t, "queued.bin"), &b);
    assert_int_equal(na, TRACE_BIN_HEADER_BYTES + n * TRACE_BIN_OUT_BYTES);
    assert_int_equal(nb, na);
    assert_memory_equal(a, b, na);
    free(a);
    free(b);
    free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mixed_puts_in_order),
        cmocka_unit_test(test_failure_comes_back),
        cmocka_unit_test_setup_teardown(test_encoded_binary_same_bytes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
