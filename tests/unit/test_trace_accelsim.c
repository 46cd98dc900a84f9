/*
 * Unit tests of the Accel-Sim kernel trace reader (trace/accelsim.c).
 * The hand-made fixtures in both layouts (kernel-1.trace with ids on every
 * line and warps interleaved, kernel-1.traceg grouped under #BEGIN_TB) give
 * the same records and the same derived flags; the three address modes
 * (list, base+stride with negative strides, base+deltas with negative
 * deltas, empty masks, and u64 wrap-around); the optional immediate; the
 * lineinfo, cluster and core-id columns and .traceg cluster lines; the old
 * grouped layout with ids; every rule
 * of the register-based dependency derivation (use, window closed by the
 * next memory instruction, pointer chasing, stored value, overwritten
 * register, 64- and 128-bit destinations, RZ, other warps, shared loads not
 * closing the window, one dependent execution making the PC dependent);
 * DEFAULT flags, the per-PC table, the memory-space filter; and every
 * structural and line error with its line and byte offset, with nothing
 * handed to the sink when the trace has an error (DERIVE reads twice).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/support/tmpfile.h"
#include "trace/accelsim.h"

/* ---- helpers ------------------------------------------------------------ */

#define MAX_RECS 4096

struct got {
    struct trace_rec r[MAX_RECS];
    size_t n;
    size_t stop_after;
};

static int collect(void *ctx, const struct trace_rec *r)
{
    struct got *g = ctx;
    assert_true(g->n < MAX_RECS);
    g->r[g->n++] = *r;
    return g->stop_after && g->n == g->stop_after ? 9 : 0;
}

static struct got *new_got(void)
{
    struct got *g = calloc(1, sizeof *g);
    assert_non_null(g);
    return g;
}

struct text {
    char *p;
    size_t n, cap;
};

__attribute__((format(printf, 2, 3))) static void add(struct text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    assert_true(k >= 0);
    if (t->n + (size_t)k + 1 > t->cap) {
        t->cap = (t->n + (size_t)k + 1) * 2;
        t->p = realloc(t->p, t->cap);
        assert_non_null(t->p);
    }
    va_start(ap, fmt);
    vsnprintf(t->p + t->n, (size_t)k + 1, fmt, ap);
    va_end(ap);
    t->n += (size_t)k;
}

/* A header for grid (gx,1,1) and block (bx,1,1), tracer version 5. */
static void add_header(struct text *t, unsigned gx, unsigned bx)
{
    add(t,
        "-kernel name = _Z1kPf\n-kernel id = 1\n-grid dim = (%u,1,1)\n-block dim = (%u,1,1)\n"
        "-shmem = 0\n-nregs = 8\n-binary version = 80\n-accelsim tracer version = 5\n"
        "-enable lineinfo = 0\n\n#traces format = [line_num] PC mask dest_num [reg_dests] opcode "
        "src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses] immediate\n\n",
        gx, bx);
}

static int read_text(const char *s, size_t len, const struct trace_accelsim_opts *o, struct got *g,
                     struct trace_err *e)
{
    char *b = malloc(len ? len : 1);
    assert_non_null(b);
    memcpy(b, s, len);
    memset(e, 0, sizeof *e);
    int r = trace_accelsim_read(b, len, o, collect, g, e);
    free(b);
    return r;
}

static void expect_error(const struct text *t, const struct trace_accelsim_opts *o, uint64_t line,
                         const char *msg)
{
    struct got *g = new_got();
    struct trace_err e;
    int r = read_text(t->p, t->n, o, g, &e);
    if (r != TRACE_EINPUT || e.line != line || e.offset != line_offset(t->p, line) ||
        !strstr(e.msg, msg))
        fail_msg("result %d line %llu offset %llu msg '%s' (wanted line %llu, '%s')", r,
                 (unsigned long long)e.line, (unsigned long long)e.offset, e.msg,
                 (unsigned long long)line, msg);
    /* DERIVE checks the whole trace first: nothing is handed on */
    if (!o || o->dep == TRACE_ACCELSIM_DEP_DERIVE)
        assert_int_equal(g->n, 0);
    free(g);
}

static void expect_rec(const struct trace_rec *r, uint64_t tid, uint64_t pc, uint64_t addr,
                       uint32_t width, uint32_t dep)
{
    if (r->tid != tid || r->pc != pc || r->addr != addr || r->width != width || r->dep != dep)
        fail_msg("record %llu,0x%llx,0x%llx,%u,%u; wanted %llu,0x%llx,0x%llx,%u,%u",
                 (unsigned long long)r->tid, (unsigned long long)r->pc, (unsigned long long)r->addr,
                 r->width, r->dep, (unsigned long long)tid, (unsigned long long)pc,
                 (unsigned long long)addr, width, dep);
}

/* The flag the records of pc carry (all the same), or -1 if none has pc. */
static int flag_of(const struct got *g, uint64_t pc)
{
    int f = -1;
    for (size_t i = 0; i < g->n; i++) {
        if (g->r[i].pc != pc)
            continue;
        if (f >= 0)
            assert_int_equal(f, (int)g->r[i].dep);
        f = (int)g->r[i].dep;
    }
    return f;
}


static int rec_cmp(const void *x, const void *y)
{
    const struct trace_rec *a = x, *b = y;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->pc != b->pc)
        return a->pc < b->pc ? -1 : 1;
    return 0;
}

/* ---- fixtures ------------------------------------------------------------ */

static void test_fixtures(void **state)
{
    (void)state;
    size_t n1, n2;
    char *raw = must_read_file("tests/fixtures/traces/kernel-1.trace", &n1);
    char *grp = must_read_file("tests/fixtures/traces/kernel-1.traceg", &n2);
    struct got *a = new_got(), *b = new_got();
    struct trace_err e;
    struct trace_read_stats st;
    struct trace_accelsim_opts o;
    trace_accelsim_opts_init(&o);
    o.stats = &st;
    assert_int_equal(read_text(raw, n1, &o, a, &e), 0);
    /* 4 warps x (LDG.E 32 + LDG.E.64 32 + STG.E 16); the LDS is shared: left out */
    assert_int_equal(a->n, 320);
    assert_int_equal(st.instructions, 16);
    assert_int_equal(st.skipped, 4);
    assert_int_equal(st.records, 320);
    assert_int_equal(st.threads_per_block, 64);
    assert_int_equal(st.grid.x, 2);
    assert_int_equal(st.grid.z, 1);
    assert_int_equal(read_text(grp, n2, &o, b, &e), 0);
    assert_int_equal(b->n, 320);
    /* grouped order: block 0 warp 0's instructions first */
    expect_rec(&b->r[0], 0, 0x40, 0x7f3a40000000, 4, 0);
    expect_rec(&b->r[32], 0, 0x50, 0x7f3a40100000, 8, 1);
    expect_rec(&b->r[63], 31, 0x50, 0x7f3a40100000 + 8 * 31, 8, 1);
    expect_rec(&b->r[79], 15, 0x80, 0x7f3a40200000 + 4 * 15, 4, 0);
    expect_rec(&b->r[80], 32, 0x40, 0x7f3a40000080, 4, 0);
    /* raw order: instruction by instruction over the 4 warps */
    expect_rec(&a->r[0], 0, 0x40, 0x7f3a40000000, 4, 0);
    expect_rec(&a->r[32], 32, 0x40, 0x7f3a40000080, 4, 0);
    expect_rec(&a->r[96], 96, 0x40, 0x7f3a40000180, 4, 0);
    /* 0x40's value is read only after 0x50, the warp's next load: 0; 0x50's before the store: 1 */
    assert_int_equal(flag_of(a, 0x40), 0);
    assert_int_equal(flag_of(a, 0x50), 1);
    assert_int_equal(flag_of(a, 0x80), 0);
    for (size_t i = 0; i < a->n; i++) /* the STG.E at 0x80 is the one store */
        assert_int_equal(a->r[i].store, a->r[i].pc == 0x80);
    qsort(a->r, a->n, sizeof a->r[0], rec_cmp);
    qsort(b->r, b->n, sizeof b->r[0], rec_cmp);
    assert_memory_equal(a->r, b->r, a->n * sizeof a->r[0]);
    /* with shared accesses kept, the LDS adds 4 x 32 records */
    o.spaces = TRACE_SPACE_GLOBAL | TRACE_SPACE_SHARED;
    a->n = 0;
    assert_int_equal(read_text(raw, n1, &o, a, &e), 0);
    assert_int_equal(a->n, 448);
    assert_int_equal(flag_of(a, 0x90), 0);
    free(raw);
    free(grp);
    free(a);
    free(b);
}

/* ---- address modes --------------------------------------------------------- */

static void test_address_modes(void **state)
{
    (void)state;
    struct text t = {0};
    add_header(&t, 1, 64);
    add(&t, "0 0 0 0 0010 80000005 1 R2 LDG.E 1 R4 4 0 0x100 0x200 0x300 0\n");
    add(&t, "0 0 0 0 0020 00000ff0 1 R2 LDG.E.64 1 R4 8 1 0x1000 -8 0\n");
    add(&t, "0 0 0 1 0030 0000000f 1 R2 LDG.E.128 1 R4 16 2 0x5000 16 -32 65535 0\n");
    add(&t,
        "0 0 0 1 0040 00000001 0 STG.E.U8 2 R6 R7 1 2 0x7000\n"); /* one lane, no deltas, no imm */
    add(&t, "0 0 0 1 0050 00000000 0 STG.E 2 R6 R7 4 0 0\n");     /* no lane active */
    add(&t, "0 0 0 1 0060 00000000 0 STG.E 2 R6 R7 4 2 0x0 0\n"); /* tracer's empty base+delta */
    add(&t, "0 0 0 1 0070 00000003 0 STG.E 2 R6 R7 4 1 0xfffffffffffffffc 4 0\n"); /* wraps */
    add(&t, "0 0 0 0 0080 00000003 0 STG.E 2 R6 R7 4 2 0x10 -20 0\n");             /* wraps */
    struct got *g = new_got();
    struct trace_err e;
    assert_int_equal(read_text(t.p, t.n, NULL, g, &e), 0);
    assert_int_equal(g->n, 3 + 8 + 4 + 1 + 2 + 2);
    expect_rec(&g->r[0], 0, 0x10, 0x100, 4, 0);
    expect_rec(&g->r[1], 2, 0x10, 0x200, 4, 0);
    expect_rec(&g->r[2], 31, 0x10, 0x300, 4, 0);
    expect_rec(&g->r[3], 4, 0x20, 0x1000, 8, 0);
    expect_rec(&g->r[10], 11, 0x20, 0x1000 - 7 * 8, 8, 0);
    expect_rec(&g->r[11], 32, 0x30, 0x5000, 16, 0);
    expect_rec(&g->r[12], 33, 0x30, 0x5010, 16, 0);
    expect_rec(&g->r[13], 34, 0x30, 0x4ff0, 16, 0);
    expect_rec(&g->r[14], 35, 0x30, 0x4ff0 + 0xffff, 16, 0);
    expect_rec(&g->r[15], 32, 0x40, 0x7000, 1, 0);
    expect_rec(&g->r[16], 32, 0x70, UINT64_MAX - 3, 4, 0);
    expect_rec(&g->r[17], 33, 0x70, 0, 4, 0);
    expect_rec(&g->r[18], 0, 0x80, 0x10, 4, 0);
    expect_rec(&g->r[19], 1, 0x80, UINT64_MAX - 3, 4, 0);
    free(g);
    free(t.p);
}

/* ---- columns: lineinfo, core ids, old grouped layout ---------------------- */

static void test_columns(void **state)
{
    (void)state;
    struct text t = {0};
    add(&t, "-grid dim = (1,1,1)\n-block dim = (32,1,1)\n-enable lineinfo = 1\n");
    add(&t, "0 0 0 0 57 0010 00000001 1 R2 LDG.E 1 R4 4 0 0x100 0\n");
    struct got *g = new_got();
    struct trace_err e;
    assert_int_equal(read_text(t.p, t.n, NULL, g, &e), 0);
    assert_int_equal(g->n, 1);
    expect_rec(&g->r[0], 0, 0x10, 0x100, 4, 0);
    /* core ids: sm and warp-in-sm after the warp id */
    struct trace_accelsim_opts o;
    trace_accelsim_opts_init(&o);
    o.core_ids = 1;
    t.n = 0;
    add(&t, "-grid dim = (1,1,1)\n-block dim = (64,1,1)\n");
    add(&t, "0 0 0 1 7 13 0010 00000001 1 R2 LDG.E 1 R4 4 0 0x100 0\n");
    g->n = 0;
    assert_int_equal(read_text(t.p, t.n, &o, g, &e), 0);
    expect_rec(&g->r[0], 32, 0x10, 0x100, 4, 0);
    /* grouped layout of tracers before version 3 (or without a version line): ids on each line */
    t.n = 0;
    add(&t,
        "-grid dim = (2,1,1)\n-block dim = (64,1,1)\n#BEGIN_TB\nthread block = 1,0,0\nwarp = 1\n"
        "insts = 1\n1 0 0 1 0010 00000001 1 R2 LDG.E 1 R4 4 0 0x100\n#END_TB\n");
    g->n = 0;
    assert_int_equal(read_text(t.p, t.n, NULL, g, &e), 0);
    expect_rec(&g->r[0], 64 + 32, 0x10, 0x100, 4, 0);
    t.n = 0;
    add(&t,
        "-grid dim = (2,1,1)\n-block dim = (64,1,1)\n#BEGIN_TB\nthread block = 1,0,0\nwarp = 1\n"
        "insts = 1\n1 0 0 0 0010 00000001 1 R2 LDG.E 1 R4 4 0 0x100\n#END_TB\n");
    expect_error(&t, NULL, 7, "differ from its thread block and warp markers");
    /* tracers with thread block clusters: 7 more fields on kernel-N.trace lines ... */
    o.core_ids = 0;
    o.cluster_ids = 1;
    t.n = 0;
    add(&t, "-grid dim = (2,1,1)\n-block dim = (64,1,1)\n-accelsim tracer version = 5\n"
            "1 0 0 1 0 0 0 1 0 0 1 0010 00000001 1 R2 LDG.E 1 R4 4 0 0x100 0\n");
    g->n = 0;
    assert_int_equal(read_text(t.p, t.n, &o, g, &e), 0);
    expect_rec(&g->r[0], 64 + 32, 0x10, 0x100, 4, 0);
    t.n = 0;
    add(&t, "-grid dim = (2,1,1)\n-block dim = (64,1,1)\n1 0 0 1 0 0 0 1 0 x 0010 00000001 0 EXIT "
            "0 0\n");
    expect_error(&t, &o, 3, "expected the 7 cluster fields");
    /* ... and cluster lines after "thread block = " in .traceg */
    t.n = 0;
    add(&t, "-grid dim = (2,1,1)\n-block dim = (64,1,1)\n-accelsim tracer version = 5\n#BEGIN_TB\n"
            "thread block = 1,0,0\ncluster id = 0,0,0\ncluster cta = 1,0,0\ncluster rank = 1\n"
            "warp = 0\ninsts = 1\n0010 00000001 1 R2 LDG.E 1 R4 4 0 0x100 0\n#END_TB\n");
    g->n = 0;
    assert_int_equal(read_text(t.p, t.n, NULL, g, &e), 0);
    expect_rec(&g->r[0], 64, 0x10, 0x100, 4, 0);
    free(g);
    free(t.p);
}

/* ---- dependency derivation ---------------------------------------------- */

struct dep_case {
    const char *body; /* instruction lines of block 0 (ids included) */
    uint64_t pc;
    int want;
};

static void test_derivation(void **state)
{
    (void)state;
    static const struct dep_case cases[] = {
        /* used by the next instruction */
        {"0 0 0 0 0010 00000001 1 R2 LDG.E 1 R4 4 0 0x100\n"
         "0 0 0 0 0020 00000001 1 R3 FADD 2 R2 R2 0\n",
         0x10, 1},
        /* never used */
        {"0 0 0 0 0010 00000001 1 R2 LDG.E 1 R4 4 0 0x100\n"
         "0 0 0 0 0020 00000001 1 R3 FADD 2 R5 R6 0\n",
         0x10, 0},
        /* the next load closes the window before the use */
        {"0 0 0 0 0010 00000001 1 R2 LDG.E 1 R4 4 0 0x100\n"
         "0 0 0 0 0020 00000001 1 R3 LDG.E 1 R4 4 0 0x104\n"
         "0 0 0 0 0030 00000001 1 R5 FADD 2 R2 R3 0\n",
         0x10, 0},
        {"0 0 0 0 0010 00000001 1 R2 LDG.E 1 R4 4 0 0x100\n"
         "0 0 0 0 0020 00000001 1 R3 LDG.E 1 R4 4 0 0x104\n"
         "0 0 0 0 0030 00000001 1 R5 FADD 2 R2 R3 0\n",
         0x20, 1},
        /* pointer chasing: the next load's address is the loaded value */
        {"0 0 0 0 0010 00000001 1 R2 LDG.E.64 1 R2 8 0 0x100\n"
         "0 0 0 0 0020 00000001 1 R4 LDG.E 1 R2 4 0 0x200\n",
         0x10, 1},
        /* stored value */
        {"0 0 0 0 0010 00000001 1 R2 LDG.E 1 R4 4 0 0x100\n"
         "0 0 0 0 0020 00000001 0 STG.E 2 R6 R2 4 0 0x200\n",
         0x10, 1},
        /* overwritten before the read: the read sees the new value */
        {"0 0 0 0 0010 00000001 1 R2 LDG.E 1 R4 4 0 0x100\n"
         "0 0 0 0 0020 00000001 1 R2 MOV 1 R7 0\n"
         "0 0 0 0 0030 00000001 1 R3 FADD 2 R2 R2 0\n",
         0x10, 0},
        /* 64-bit load writes R2 and R3; R2 overwritten, R3 still pending */
        {"0 0 0 0 0010 00000001 1 R2 LDG.E.64 1 R4 8 0 0x100\n"
         "0 0 0 0 0020 00000001 1 R2 MOV 1 R7 0\n"
         "0 0 0 0 0030 00000001 1 R5 FADD 2 R3 R9 0\n",
         0x10, 1},
        /* a 32-bit load does not write R3 */
        {"0 0 0 0 0010 00000001 1 R2 LDG.E 1 R4 4 0 0x100\n"
         "0 0 0 0 0030 00000001 1 R5 FADD 2 R3 R9 0\n",
         0x10, 0},
        /* a 128-bit load writes R8..R11 */
        {"0 0 0 0 0010 00000001 1 R8 LDG.E.128 1 R4 16 0 0x100\n"
         "0 0 0 0 0030 00000001 1 R5 FADD 2 R11 R12 0\n",
         0x10, 1},
        {"0 0 0 0 0010 00000001 1 R8 LDG.E.128 1 R4 16 0 0x100\n"
         "0 0 0 0 0030 00000001 1 R5 FADD 2 R12 R7 0\n",
         0x10, 0},
        /* RZ destination: nothing to use */
        {"0 0 0 0 0010 00000001 1 R255 LDG.E 1 R4 4 0 0x100\n"
         "0 0 0 0 0030 00000001 1 R5 FADD 2 R255 R255 0\n",
         0x10, 0},
        /* another warp's register is another register */
        {"0 0 0 0 0010 00000001 1 R2 LDG.E 1 R4 4 0 0x100\n"
         "0 0 0 1 0030 00000001 1 R5 FADD 2 R2 R2 0\n"
         "0 0 0 0 0040 00000001 0 EXIT 0 0\n",
         0x10, 0},
        /* a shared load is not a kept request: the window stays open */
        {"0 0 0 0 0010 00000001 1 R2 LDG.E 1 R4 4 0 0x100\n"
         "0 0 0 0 0020 00000001 1 R6 LDS 1 R4 4 0 0x10\n"
         "0 0 0 0 0030 00000001 1 R5 FADD 2 R2 R6 0\n",
         0x10, 1},
        /* one dependent execution makes the PC dependent */
        {"0 0 0 0 0010 00000001 1 R2 LDG.E 1 R4 4 0 0x100\n"
         "0 0 0 1 0010 00000001 1 R2 LDG.E 1 R4 4 0 0x100\n"
         "0 0 0 1 0020 00000001 1 R3 FADD 2 R2 R2 0\n"
         "0 0 0 0 0030 00000001 1 R6 LDG.E 1 R4 4 0 0x100\n",
         0x10, 1},
        /* stores never are */
        {"0 0 0 0 0010 00000001 0 STG.E 2 R4 R2 4 0 0x100\n"
         "0 0 0 0 0020 00000001 1 R3 FADD 2 R2 R4 0\n",
         0x10, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct text t = {0};
        add_header(&t, 1, 64);
        add(&t, "%s", cases[i].body);
        struct got *g = new_got();
        struct trace_err e;
        int r = read_text(t.p, t.n, NULL, g, &e);
        if (r != 0)
            fail_msg("case %zu: result %d line %llu '%s'", i, r, (unsigned long long)e.line, e.msg);
        int f = flag_of(g, cases[i].pc);
        if (f != cases[i].want)
            fail_msg("case %zu: pc 0x%llx flag %d, wanted %d", i, (unsigned long long)cases[i].pc,
                     f, cases[i].want);
        free(g);
        free(t.p);
    }
}

static void test_derivation_grouped(void **state)
{
    (void)state;
    struct text t = {0};
    add_header(&t, 1, 64);
    add(&t, "#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 2\n"
            "0010 00000001 1 R2 LDG.E 1 R4 4 0 0x100 0\n"
            "0020 00000001 1 R6 LDG.E 1 R4 4 0 0x100 0\n"
            "warp = 1\ninsts = 1\n"
            "0030 00000001 1 R5 FADD 2 R6 R2 0 0\n"
            "#END_TB\n#BEGIN_TB\nthread block = 0,0,0\nwarp = 1\ninsts = 2\n"
            "0040 00000001 1 R2 LDG.E 1 R4 4 0 0x100 0\n"
            "0050 00000001 1 R5 FADD 2 R2 R4 0 0\n#END_TB\n");
    struct got *g = new_got();
    struct trace_err e;
    assert_int_equal(read_text(t.p, t.n, NULL, g, &e), 0);
    assert_int_equal(g->n, 3);
    assert_int_equal(flag_of(g, 0x10), 0);
    assert_int_equal(flag_of(g, 0x20), 0); /* warp 1 reads its own R6, not warp 0's */
    assert_int_equal(flag_of(g, 0x40), 1);
    free(g);
    free(t.p);
}

static void test_default_flags_and_table(void **state)
{
    (void)state;
    struct text t = {0};
    add_header(&t, 1, 32);
    add(&t, "0 0 0 0 0010 00000001 1 R2 LDG.E 1 R4 4 0 0x100\n"
            "0 0 0 0 0020 00000001 1 R2 ATOMG.E.ADD.STRONG.GPU 2 R4 R5 4 0 0x100\n"
            "0 0 0 0 0030 00000001 0 RED.E.ADD.STRONG.GPU 2 R4 R5 4 0 0x100\n"
            "0 0 0 0 0040 00000001 0 STG.E 2 R4 R5 4 0 0x100\n");
    struct trace_accelsim_opts o;
    trace_accelsim_opts_init(&o);
    o.dep = TRACE_ACCELSIM_DEP_DEFAULT;
    o.spaces = TRACE_SPACE_GLOBAL | TRACE_SPACE_ATOMIC;
    struct got *g = new_got();
    struct trace_err e;
    assert_int_equal(read_text(t.p, t.n, &o, g, &e), 0);
    assert_int_equal(g->n, 4);
    assert_int_equal(flag_of(g, 0x10), 1);
    assert_int_equal(flag_of(g, 0x20), 1);
    assert_int_equal(flag_of(g, 0x30), 0);
    assert_int_equal(flag_of(g, 0x40), 0);
    /* the load reads; the atomic, the reduction and the store write */
    assert_int_equal(g->r[0].store, 0);
    assert_int_equal(g->r[1].store, 1);
    assert_int_equal(g->r[2].store, 1);
    assert_int_equal(g->r[3].store, 1);
    o.load_dep = 0;
    g->n = 0;
    assert_int_equal(read_text(t.p, t.n, &o, g, &e), 0);
    assert_int_equal(flag_of(g, 0x10), 0);
    /* the table wins over DEFAULT and DERIVE */
    struct trace_pcflags tab;
    trace_pcflags_init(&tab, 0);
    assert_int_equal(trace_pcflags_set(&tab, 0x40, 1, 1, NULL), 0);
    assert_int_equal(trace_pcflags_set(&tab, 0x10, 1, 2, NULL), 0);
    o.flags = &tab;
    g->n = 0;
    assert_int_equal(read_text(t.p, t.n, &o, g, &e), 0);
    assert_int_equal(flag_of(g, 0x40), 1);
    o.dep = TRACE_ACCELSIM_DEP_DERIVE;
    g->n = 0;
    assert_int_equal(read_text(t.p, t.n, &o, g, &e), 0);
    assert_int_equal(flag_of(g, 0x10), 1); /* the table; derivation says 0 */
    assert_int_equal(flag_of(g, 0x20), 0); /* derived: the atomic's R2 is never read */
    assert_int_equal(flag_of(g, 0x40), 1);
    trace_pcflags_free(&tab);
    /* the sink's stop value */
    o.flags = NULL;
    g->n = 0;
    g->stop_after = 2;
    assert_int_equal(read_text(t.p, t.n, &o, g, &e), 9);
    assert_int_equal(g->n, 2);
    free(g);
    free(t.p);
}

static void test_skipped_instructions(void **state)
{
    (void)state;
    struct text t = {0};
    add_header(&t, 1, 32);
    add(&t, "0 0 0 0 0010 00000001 1 R2 LDGSTS.E.BYPASS.128 2 R4 R5 16 0 0x100 0\n"
            "0 0 0 0 0020 00000001 0 UTMALDG.2D 2 R4 R5 128 0 3 0x100 0x200 0x300\n"
            "0 0 0 0 0030 00000001 1 R2 LDL.64 1 R1 8 0 0xfffd00\n"
            "0 0 0 0 0040 ffffffff 0 EXIT 0 0 0\n"
            "\t \n"
            "# a comment\n");
    struct trace_read_stats st;
    struct trace_accelsim_opts o;
    trace_accelsim_opts_init(&o);
    o.stats = &st;
    struct got *g = new_got();
    struct trace_err e;
    assert_int_equal(read_text(t.p, t.n, &o, g, &e), 0);
    assert_int_equal(g->n, 0);
    assert_int_equal(st.instructions, 3);
    assert_int_equal(st.skipped, 3);
    o.spaces = TRACE_SPACE_LOCAL;
    assert_int_equal(read_text(t.p, t.n, &o, g, &e), 0);
    assert_int_equal(g->n, 1);
    expect_rec(&g->r[0], 0, 0x30, 0xfffd00, 8, 0);
    free(g);
    free(t.p);
}

/* ---- errors ------------------------------------------------------------- */

struct bad_case {
    const char *body; /* appended after a (1,1,1) x (64,1,1) header */
    uint64_t bline;   /* the line the error names, counted from the body's first */
    const char *msg;
};

static void test_line_errors(void **state)
{
    (void)state;
    static const struct bad_case cases[] = {
        {"0 0 0 0 0010 00000001 1 R2 LDG.E 1 R4 4 0 0x100 0\nX 0 0 0 0020\n", 2,
         "thread block x y z"},
        {"0 0 0\n", 1, "thread block x y z"},
        {"0 0 0 0 zz 00000001 0 EXIT 0 0\n", 1, "expected the PC"},
        {"0 0 0 0 0010 100000000 0 EXIT 0 0\n", 1, "active mask"},
        {"0 0 0 0 0010 ffffffff 9 EXIT 0 0\n", 1, "number of destination registers"},
        {"0 0 0 0 0010 ffffffff 1 X2 EXIT 0 0\n", 1, "destination register R0..R255"},
        {"0 0 0 0 0010 ffffffff 1 R256 EXIT 0 0\n", 1, "destination register"},
        {"0 0 0 0 0010 ffffffff 0 LD-G 0 0\n", 1, "expected the opcode"},
        {"0 0 0 0 0010 ffffffff 0 EXIT 2 R1\n", 1, "source register"},
        {"0 0 0 0 0010 ffffffff 0 EXIT 0\n", 1, "memory width"},
        {"0 0 0 0 0010 ffffffff 0 EXIT 0 0 7 8\n", 1, "unexpected text after the immediate"},
        {"0 0 0 0 0010 ffffffff 0 EXIT 0 0 x\n", 1, "unexpected text after the instruction"},
        {"0 0 0 0 0010 00000001 1 R2 LDG.E 1 R4 4 3 0x100\n", 1, "address mode 0, 1 or 2"},
        {"0 0 0 0 0010 00000003 1 R2 LDG.E 1 R4 4 0 0x100\n", 1, "expected address 2 of 2"},
        {"0 0 0 0 0010 00000003 1 R2 LDG.E 1 R4 4 0 zz 0x100\n", 1, "expected an address"},
        {"0 0 0 0 0010 00000005 1 R2 LDG.E 1 R4 4 1 0x100 4\n", 1, "contiguous active lanes"},
        {"0 0 0 0 0010 00000003 1 R2 LDG.E 1 R4 4 1 0x100\n", 1, "expected the stride"},
        {"0 0 0 0 0010 00000003 1 R2 LDG.E 1 R4 4 1 0x100 9223372036854775808\n", 1, "the stride"},
        {"0 0 0 0 0010 00000003 1 R2 LDG.E 1 R4 4 2\n", 1, "expected the base address"},
        {"0 0 0 0 0010 00000007 1 R2 LDG.E 1 R4 4 2 0x100 4\n", 1, "expected delta 2 of 2"},
        /* base + stride and deltas wrap as the tracer's did, but no record may pass 2^64 */
        {"0 0 0 0 0010 00000003 1 R2 LDG.E 1 R4 4 1 0xfffffffffffffff0 14\n", 1,
         "address 0xfffffffffffffffe + width 4 passes 2^64"},
        {"0 0 0 0 0010 00000003 1 R2 LDG.E 1 R4 4 2 0x4 -6\n", 1,
         "address 0xfffffffffffffffe + width 4 passes 2^64"},
        {"0 0 0 0 0010 00000001 1 R2 LDG.E.64 1 R4 8 0 0xfffffffffffffffc\n", 1,
         "address 0xfffffffffffffffc + width 8 passes 2^64"},
        {"0 0 0 0 0010 00000001 1 R2 LDG.E 1 R4 0 0\n", 1,
         "memory opcode LDG.E with memory width 0"},
        {"0 0 0 0 0010 00000001 1 R2 LDG.E.24 1 R4 3 0 0x100\n", 1, "names a width"},
        {"1 0 0 0 0010 00000001 0 EXIT 0 0\n", 1, "thread block 1,0,0 is outside the grid 1,1,1"},
        {"0 0 0 2 0010 00000001 0 EXIT 0 0\n", 1, "warp 2 is not below the block's 2 warps"},
        {"0 0 0 0 0010 00000001 0 EXIT 0 0\n-grid dim = (1,1,1)\n", 2, "header line after"},
        {"#BEGIN_TB\nthread block = 0,0,0\n#BEGIN_TB\n", 3, "#BEGIN_TB inside"},
        {"#END_TB\n", 1, "#END_TB outside"},
        {"#BEGIN_TB\nwarp = 0\n", 2, "before \"thread block = \""},
        {"warp = 0\n", 1, "outside a thread block"},
        {"thread block = 0,0,0\n", 1, "right after #BEGIN_TB"},
        {"#BEGIN_TB\nthread block = 0,0\n", 2, "expected \"thread block = x,y,z\""},
        {"#BEGIN_TB\nthread block = 0,0,0 x\n", 2, "expected \"thread block = x,y,z\""},
        {"#BEGIN_TB\nthread block = 0,0,0\nthread block = 0,0,0\n", 3, "must come once"},
        {"#BEGIN_TB\nthread block = 0,0,0\nwarp = x\n", 3, "expected \"warp = N\""},
        {"#BEGIN_TB\nthread block = 0,0,0\ninsts = 1\n", 3, "right after \"warp = \""},
        {"#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 1\ninsts = 1\n", 5, "must come once"},
        {"#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = -1\n", 4, "expected \"insts = N\""},
        {"#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\n0010 00000001 0 EXIT 0 0\n", 4,
         "instruction line before"},
        {"#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\nwarp = 1\n", 4, "warp 0 has no \"insts = \""},
        {"#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 2\n0010 00000001 0 EXIT 0 "
         "0\n#END_TB\n",
         6, "has 1 instruction lines but \"insts = 2\""},
        {"#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 1\n0010 00000001 0 EXIT 0 0\n"
         "0020 00000001 0 EXIT 0 0\n",
         6, "more instruction lines than \"insts = 1\""},
        {"#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ninsts = 0\n", 1, "#BEGIN_TB without #END_TB"},
        {"#BEGIN_TB\nthread block = 0,0,0\ncluster id = 0,0\n", 3,
         "expected \"cluster id|cta = x,y,z\""},
        {"#BEGIN_TB\nthread block = 0,0,0\ncluster rank = 1,2\n", 3, "or \"cluster rank = n\""},
        {"#BEGIN_TB\nthread block = 0,0,0\ncluster size = 1\n", 3, "or \"cluster rank = n\""},
        {"#BEGIN_TB\nthread block = 0,0,0\nwarp = 0\ncluster rank = 1\n", 4,
         "right after \"thread block = \""},
        {"cluster rank = 1\n", 1, "right after \"thread block = \""},
        {"0 0 0 0 0010 00000001 1 R2 LDG.E 1 R4 4 0 0x100\n0 0 0 1 0010 00000001 1 R2 LDG.E.64 1 "
         "R4 8 0 0x100\n"
         "0 0 0 0 0010 00000001 0 STG.E 2 R4 R5 4 0 0x100\n",
         3, "PC 0x10 is STG.E here but another kind of access on line"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct text t = {0};
        add_header(&t, 1, 64);
        size_t body_at = t.n;
        add(&t, "%s", cases[i].body);
        uint64_t line = cases[i].bline;
        for (size_t k = 0; k < body_at; k++)
            line += t.p[k] == '\n';
        struct got *g = new_got();
        struct trace_err e;
        int r = read_text(t.p, t.n, NULL, g, &e);
        if (r != TRACE_EINPUT || e.line != line || e.offset != line_offset(t.p, line) ||
            !strstr(e.msg, cases[i].msg) || g->n != 0)
            fail_msg("case %zu: result %d line %llu offset %llu msg '%s' (wanted line %llu '%s') "
                     "records %zu",
                     i, r, (unsigned long long)e.line, (unsigned long long)e.offset, e.msg,
                     (unsigned long long)line, cases[i].msg, g->n);
        free(g);
        free(t.p);
    }
}

static void test_header_and_dims(void **state)
{
    (void)state;
    struct text t = {0};
    add(&t, "-kernel name = k\n0 0 0 0 0010 00000001 1 R2 LDG.E 1 R4 4 0 0x100\n");
    expect_error(&t, NULL, 2, "no grid/block dims");
    struct trace_accelsim_opts o;
    trace_accelsim_opts_init(&o);
    o.grid = (struct trace_dim3){1, 1, 1};
    o.block = (struct trace_dim3){32, 1, 1};
    struct got *g = new_got();
    struct trace_err e;
    assert_int_equal(read_text(t.p, t.n, &o, g, &e), 0);
    assert_int_equal(g->n, 1);
    free(g);
    t.n = 0;
    add(&t, "-grid dim = (1,1,1)\n-block dim = (64,1,1)\n0 0 0 0 0010 00000001 1 R2 LDG.E 1 R4 4 0 "
            "0x100\n");
    expect_error(&t, &o, 3, "differ from the ones given");
    t.n = 0;
    add(&t, "-grid dim = (1,1,1)\n-grid dim = (1,1,1)\n");
    expect_error(&t, NULL, 2, "a second \"-grid dim\" line");
    t.n = 0;
    add(&t, "-grid dim = (1,1)\n");
    expect_error(&t, NULL, 1, "expected \"-grid dim = (x,y,z)\"");
    t.n = 0;
    add(&t, "-block dim = (1,1,1) \n");
    expect_error(&t, NULL, 1, "expected \"-block dim = (x,y,z)\"");
    t.n = 0;
    add(&t, "-block dim = (4294967296,1,1)\n");
    expect_error(&t, NULL, 1, "expected \"-block dim = (x,y,z)\"");
    t.n = 0;
    add(&t, "-enable lineinfo = yes\n");
    expect_error(&t, NULL, 1, "expected \"-enable lineinfo = N\"");
    t.n = 0;
    add(&t, "-accelsim tracer version = -3\n");
    expect_error(&t, NULL, 1, "expected \"-accelsim tracer version = N\"");
    t.n = 0;
    add(&t, "-grid dim = (0,1,1)\n-block dim = (64,1,1)\n0 0 0 0 0010 00000001 0 EXIT 0 0\n");
    expect_error(&t, NULL, 3, "at least 1");
    t.n = 0;
    add(&t, "-grid dim = (4294967295,65535,65535)\n-block dim = (1024,1,1)\n0 0 0 0 0010 00000001 "
            "0 EXIT 0 0\n");
    expect_error(&t, NULL, 3, "more than 2^64 threads");
    t.n = 0;
    add(&t, "-grid dim = (1,1,1)\n-block dim = (33,32,1)\n0 0 0 0 0010 00000001 0 EXIT 0 0\n");
    expect_error(&t, NULL, 3, "a block of 1056 threads: a CUDA block has at most 1024");
    /* a 48-thread block: warp 1 has 16 lanes */
    t.n = 0;
    add(&t, "-grid dim = (1,1,1)\n-block dim = (48,1,1)\n"
            "0 0 0 1 0010 0001ffff 1 R2 LDG.E 1 R4 4 1 0x100 4\n");
    expect_error(&t, NULL, 3, "lane 16 of warp 1 is active but the block has only 48 threads");
    free(t.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures),
        cmocka_unit_test(test_address_modes),
        cmocka_unit_test(test_columns),
        cmocka_unit_test(test_derivation),
        cmocka_unit_test(test_derivation_grouped),
        cmocka_unit_test(test_default_flags_and_table),
        cmocka_unit_test(test_skipped_instructions),
        cmocka_unit_test(test_line_errors),
        cmocka_unit_test(test_header_and_dims),
    };
    return cmocka_run_group_tests_name("trace_accelsim", tests, NULL, NULL);
}
