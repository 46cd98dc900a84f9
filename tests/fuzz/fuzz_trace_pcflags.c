/*
 * libFuzzer target for the per-PC flag table parser (trace/pcflags.c).
 *
 * DESIGN
 * Any input is parsed into a table with a small PC limit (so the limit path
 * is reached too). Checked: the result is 0 or TRACE_EINPUT; an error names
 * a line start whose line number matches its offset; a successful parse is
 * deterministic (a second parse of the same bytes gives the same number of
 * PCs and the same flag for every PC the first line names), and the first
 * bytes also drive the number scanners, whose results must stay inside the
 * input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/pcflags.h"

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

static void scanners(const char *p, size_t n)
{
    const char *q = NULL;
    uint64_t v;
    int64_t i;
    for (int hex = 0; hex < 2; hex++) {
        trace_scan_u64(p, p + n, hex, &v, &q);
        if (q < p || q > p + n)
            abort();
    }
    trace_scan_hex(p, p + n, &v, &q);
    if (q < p || q > p + n)
        abort();
    trace_scan_i64(p, p + n, &i, &q);
    if (q < p || q > p + n)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    struct trace_pcflags a, b;
    struct trace_err e = {0};
    scanners(text, size);
    trace_pcflags_init(&a, 64);
    int r = trace_pcflags_parse(&a, text, size, &e);
    if (r == TRACE_EINPUT) {
        check_error(data, size, &e);
    } else if (r != 0) {
        abort();
    } else {
        trace_pcflags_init(&b, 64);
        if (trace_pcflags_parse(&b, text, size, &e) != 0 ||
            trace_pcflags_count(&a) != trace_pcflags_count(&b))
            abort();
        uint64_t pc;
        const char *q;
        uint32_t da, db;
        if (trace_scan_u64(text, text + size, 1, &pc, &q) == TRACE_SCAN_OK) {
            int fa = trace_pcflags_get(&a, pc, &da, NULL),
                fb = trace_pcflags_get(&b, pc, &db, NULL);
            if (fa != fb || (fa && da != db))
                abort();
        }
        trace_pcflags_free(&b);
    }
    trace_pcflags_free(&a);
    return 0;
}
