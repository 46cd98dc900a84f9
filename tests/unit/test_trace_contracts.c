/*
 * Unit tests of the sorter's preconditions (asserted in every build, since
 * a broken one would order requests wrongly rather than fail): ordering an
 * SM the parameters do not have, or with parameters never resolved;
 * coalescing more requests than a warp has lanes, or with a line that is
 * not a power of two; writing sorted records to a requests file; reading a sorted record
 * past the end. Each call is made in a child that must die of SIGABRT.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "tests/unit/support/death.h"
#include "trace/binfmt.h"
#include "trace/coalesce.h"
#include "trace/order.h"

static int no_more_blocks(void *ctx, uint32_t slot, uint64_t *block, uint64_t *records,
                          struct trace_warp *warps)
{
    (void)ctx, (void)slot, (void)block, (void)records, (void)warps;
    return 0;
}

static int swallow(void *ctx, const struct trace_out *o, size_t n)
{
    (void)ctx, (void)o, (void)n;
    return 0;
}

/* Orders SM arg (an index) under resolved fermi parameters (15 SMs). */
static void order_sm(void *arg)
{
    struct trace_params p;
    struct trace_sm_stats st;
    trace_params_default(&p);
    trace_params_resolve(&p, 0);
    struct trace_block_src src = {.next = no_more_blocks};
    struct trace_emit emit = {.sink = swallow};
    trace_order_sm(&p, *(uint32_t *)arg, &src, &emit, &st);
}

static void order_unresolved(void *arg)
{
    (void)arg;
    struct trace_params p;
    struct trace_sm_stats st;
    trace_params_default(&p); /* blocks_per_sm 0: never resolved */
    struct trace_block_src src = {.next = no_more_blocks};
    struct trace_emit emit = {.sink = swallow};
    trace_order_sm(&p, 0, &src, &emit, &st);
}

/* More requests than a warp has lanes. */
static void coalesce_too_many(void *arg)
{
    (void)arg;
    struct trace_params p;
    struct trace_coalescer c;
    struct trace_group g;
    struct trace_rec r = {.tid = 0, .pc = 0x40, .addr = 0x1000, .width = 4, .dep = 0};
    const struct trace_rec *req[TRACE_WARP_SIZE + 1];
    uint8_t lane[TRACE_WARP_SIZE + 1];
    for (unsigned i = 0; i <= TRACE_WARP_SIZE; i++)
        req[i] = &r, lane[i] = (uint8_t)i;
    trace_params_default(&p);
    trace_coalescer_init(&c, &p);
    trace_coalesce(&c, req, lane, TRACE_WARP_SIZE + 1, &g);
}

static void coalescer_odd_line(void *arg)
{
    (void)arg;
    struct trace_params p;
    struct trace_coalescer c;
    trace_params_default(&p);
    p.line_bytes = 96;
    trace_coalescer_init(&c, &p);
}

static void sorted_into_requests(void *arg)
{
    (void)arg;
    struct trace_bin_header h;
    struct trace_err te;
    struct trace_out o;
    memset(&o, 0, sizeof o);
    trace_bin_header_init(&h, TRACE_BIN_REQUESTS, NULL);
    FILE *f = tmpfile();
    struct trace_bin_writer *w = f ? trace_bin_writer_fd(fileno(f), 0, &h, &te) : NULL;
    if (w)
        trace_bin_write_out(w, &o, 1);
}

static void read_past_end(void *arg)
{
    (void)arg;
    struct trace_bin b;
    struct trace_out o;
    memset(&b, 0, sizeof b);
    b.h.kind = TRACE_BIN_SORTED;
    b.count = 2;
    trace_bin_get_out(&b, 2, &o);
}

static void test_sorter_contracts(void **state)
{
    (void)state;
    uint32_t sm = 15, last = 14;
    assert_true(dies_by_assert(order_sm, &sm));
    assert_false(dies_by_assert(order_sm, &last)); /* the control: a real SM is fine */
    assert_true(dies_by_assert(order_unresolved, NULL));
    assert_true(dies_by_assert(coalesce_too_many, NULL));
    assert_true(dies_by_assert(coalescer_odd_line, NULL));
    assert_true(dies_by_assert(sorted_into_requests, NULL));
    assert_true(dies_by_assert(read_past_end, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sorter_contracts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
