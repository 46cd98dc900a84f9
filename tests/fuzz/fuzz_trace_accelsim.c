/*
 * libFuzzer target for the Accel-Sim kernel trace reader (trace/accelsim.c).
 *
 * DESIGN
 * Any input is read with caller dims (grid 2,2,1 x block 64,1,1, so traces
 * without a header still make records), all memory spaces kept, a small
 * warp-map limit, and the dependency mode and the cluster and core-id
 * columns picked from the input's length. Checked: the result is 0 or TRACE_EINPUT; an
 * error names a line start whose line number matches its offset; in DERIVE
 * mode an input with an error hands no record to the sink (the first pass
 * checks everything); every record has a valid width and a 0/1 flag, every
 * PC keeps one flag, and the statistics add up.
 */
#include <stdint.h>
#include <stdlib.h>

#include "trace/accelsim.h"

static struct trace_pcflags seen;
static uint64_t nrecs;

static int check_rec(void *ctx, const struct trace_rec *r)
{
    (void)ctx;
    if (!trace_width_valid(r->width) || r->dep > 1)
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct trace_accelsim_opts o;
    struct trace_read_stats st;
    struct trace_err e = {0};
    trace_accelsim_opts_init(&o);
    o.grid = (struct trace_dim3){2, 2, 1};
    o.block = (struct trace_dim3){64, 1, 1};
    o.spaces = TRACE_SPACE_GLOBAL | TRACE_SPACE_ATOMIC | TRACE_SPACE_SHARED | TRACE_SPACE_LOCAL;
    o.dep = size % 2 ? TRACE_ACCELSIM_DEP_DEFAULT : TRACE_ACCELSIM_DEP_DERIVE;
    o.core_ids = size / 2 % 4 == 3;
    o.cluster_ids = size / 8 % 4 == 1;
    o.max_warps = 64;
    o.stats = &st;
    nrecs = 0;
    trace_pcflags_init(&seen, 0);
    int r = trace_accelsim_read((const char *)data, size, &o, check_rec, NULL, &e);
    trace_pcflags_free(&seen);
    if (r == TRACE_EINPUT) {
        check_error(data, size, &e);
        if (o.dep == TRACE_ACCELSIM_DEP_DERIVE && nrecs != 0)
            abort();
    } else if (r != 0) {
        abort();
    }
    if (st.records != nrecs || st.skipped > st.instructions || st.instructions > st.lines)
        abort();
    return 0;
}
