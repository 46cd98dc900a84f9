/*
 * libFuzzer target for the NVBit mem_trace reader (trace/nvbit.c).
 *
 * DESIGN
 * Any input is read with caller dims (grid 4,2,2 x block 64,2,1, so access
 * lines without a LAUNCH line still make records), all memory spaces kept,
 * a small warp-map limit, and the warp and PC policies picked from the
 * input's length, so every policy is fuzzed. Checked: the result is 0 or
 * TRACE_EINPUT; an error names a line start whose line number matches its
 * offset; every record has a valid width and a 0/1 flag, and every PC keeps
 * one flag; the statistics add up.
 */
#include <stdint.h>
#include <stdlib.h>

#include "trace/nvbit.h"

static struct trace_pcflags seen;
static uint64_t nrecs;

static int check_rec(void *ctx, const struct trace_rec *r)
{
    (void)ctx;
    if (!trace_width_valid(r->width) || r->dep > 1 || r->addr == 0)
        abort();
    if (trace_pcflags_set(&seen, r->pc, r->dep, 0, NULL) == 1)
        abort();
    nrecs++;
    return 0;
}

static void check_error(const uint8_t *d, size_t n, const struct trace_err *e)
{
    if (e->offset > n || (e->offset > 0 && d[e->offset - 1] != '\n'))
        abort();
    uint64_t line = 1;
    for (size_t i = 0; i < e->offset; i++)
        line += d[i] == '\n';
    if (line != e->line || e->msg[0] == '\0')
        abort();
}

static void note_opcode(void *ctx, const char *op, size_t len, uint64_t pc)
{
    (void)ctx;
    if (!trace_sass_is_opcode(op, len) || pc % 16 != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct trace_nvbit_opts o;
    struct trace_read_stats st;
    struct trace_err e = {0};
    trace_nvbit_opts_init(&o);
    o.grid = (struct trace_dim3){4, 2, 2};
    o.block = (struct trace_dim3){64, 2, 1};
    o.spaces = TRACE_SPACE_GLOBAL | TRACE_SPACE_ATOMIC | TRACE_SPACE_SHARED | TRACE_SPACE_LOCAL;
    o.warp = size % 2 ? TRACE_NVBIT_WARP_SLOT : TRACE_NVBIT_WARP_IN_CTA;
    o.pc = size / 2 % 2 ? TRACE_NVBIT_PC_OCCURRENCE : TRACE_NVBIT_PC_OPCODE;
    o.launch = size / 4 % 2 ? 0 : -1;
    o.max_warps = 64;
    o.stats = &st;
    o.opcode_pc = note_opcode;
    nrecs = 0;
    trace_pcflags_init(&seen, 0);
    int r = trace_nvbit_read((const char *)data, size, &o, check_rec, NULL, &e);
    trace_pcflags_free(&seen);
    if (r == TRACE_EINPUT)
        check_error(data, size, &e);
    else if (r != 0)
        abort();
    if (st.records != nrecs || st.skipped > st.instructions || st.instructions > st.lines)
        abort();
    return 0;
}
