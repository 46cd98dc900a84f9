/*
 * Ties each synthetic-trace pattern (trace/synth_*.c) to the CUDA kernel it
 * describes: the committed PTX of tests/gpu/kernels/synth/NAME.cu
 * (tests/fixtures/ptx/synth/NAME.ptx) must define the entry NAME (dashes as
 * underscores) and hold exactly the pattern's memory instructions, one
 * ld.global or st.global per entry of its table, in the table's order (a
 * st.global where the entry has the store flag), with the width of a float. This is what lets a captured trace's PCs be mapped
 * to the synthesized ones by instruction order
 * (tests/gpu/kernels/synth/README.md). Runs from the repository root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/synth.h"

/* The kinds of the global memory instructions in path, in order ('l' or
 * 's'), into kinds; their count, or -1 if the file cannot be read. Every
 * one must be 4 bytes wide (.f32). Sets *entry if `.entry NAME(` appears. */
static int ptx_memory_ops(const char *path, const char *entry, char *kinds, int cap, int *has_entry)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[512], want[128];
    snprintf(want, sizeof want, ".entry %s(", entry);
    int n = 0;
    *has_entry = 0;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, want))
            *has_entry = 1;
        const char *ld = strstr(line, "ld.global"), *st = strstr(line, "st.global");
        const char *op = ld ? ld : st;
        if (!op)
            continue;
        if (!strstr(op, ".f32"))
            fail_msg("%s: not a 4-byte float access: %s", path, line);
        if (n < cap)
            kinds[n] = ld ? 'l' : 's';
        n++;
    }
    fclose(f);
    return n;
}

static void test_ptx_matches_patterns(void **state)
{
    (void)state;
    for (size_t i = 0; i < synth_pattern_count(); i++) {
        const struct synth_pattern *p = synth_pattern_at(i);
        char path[256], entry[64], kinds[32];
        int has_entry = 0;
        snprintf(path, sizeof path, "tests/fixtures/ptx/synth/%s.ptx", p->name);
        snprintf(entry, sizeof entry, "%s", p->name);
        for (char *c = entry; *c; c++)
            if (*c == '-')
                *c = '_';
        int n = ptx_memory_ops(path, entry, kinds, (int)sizeof kinds, &has_entry);
        if (n < 0)
            fail_msg("%s: cannot read it (run from the repository root)", path);
        if (!has_entry)
            fail_msg("%s: no .entry %s", path, entry);
        if (n != p->ninsns)
            fail_msg("%s: %d global memory instructions, the pattern has %d", path, n, p->ninsns);
        for (int k = 0; k < n; k++) {
            char want = p->insns[k].store ? 's' : 'l'; /* the store flag the trace gets */
            if (kinds[k] != want)
                fail_msg("%s: memory instruction %d is a %s, the pattern's is '%s'", path, k,
                         kinds[k] == 'l' ? "load" : "store", p->insns[k].text);
        }
    }
}

/* The tables themselves: every text starts "ld " or "st ", as its store
 * flag says, and stores carry dependency flag 0 (nothing is loaded). */
static void test_tables(void **state)
{
    (void)state;
    for (size_t i = 0; i < synth_pattern_count(); i++) {
        const struct synth_pattern *p = synth_pattern_at(i);
        assert_true(p->ninsns > 0 && p->ninsns <= SYNTH_MAX_INSNS);
        for (int k = 0; k < p->ninsns; k++) {
            const char *t = p->insns[k].text;
            assert_true(strncmp(t, "ld ", 3) == 0 || strncmp(t, "st ", 3) == 0);
            assert_int_equal(p->insns[k].store, t[0] == 's');
            if (t[0] == 's')
                assert_int_equal(p->insns[k].dep, 0);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ptx_matches_patterns),
        cmocka_unit_test(test_tables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
