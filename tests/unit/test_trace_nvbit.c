/*
 * Unit tests of the NVBit mem_trace reader and the SASS opcode table
 * (trace/nvbit.c). The opcode table: space, kind and width of every base
 * opcode and size suffix it knows, and what it leaves out. The reader: the
 * hand-made fixture (banners skipped, LAUNCH dims, tids from CTA/warp/lane,
 * synthetic PCs in order of first appearance with their callback, default
 * flags, inactive lanes, statistics), the memory-space filter, dims from the
 * caller and their conflicts, launch selection, both warp policies, both PC
 * policies and an explicit "pc" field, the per-PC table and load_dep, CRLF,
 * the tool's diagnostic lines, the sink's stop value, the warp map limit,
 * and every malformed-line error with its line and byte offset (the bad
 * line's records are never handed on). Inputs are exact-size heap copies.
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
#include "trace/nvbit.h"

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
    return g->stop_after && g->n == g->stop_after ? 5 : 0;
}

/* A growable text the tests append lines to. */
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

#define CTX "0x00005605a1b2c3d0"

static void add_launch(struct text *t, unsigned id, unsigned gx, unsigned gy, unsigned gz,
                       unsigned bx, unsigned by, unsigned bz)
{
    add(t,
        "MEMTRACE: CTX " CTX " - LAUNCH - Kernel pc 0x00007f3a20001000 - Kernel name k(int - x) "
        "- grid launch id %u - grid size %u,%u,%u - block size %u,%u,%u - nregs 16 - shmem 0 "
        "- cuda stream id 0\n",
        id, gx, gy, gz, bx, by, bz);
}

/* An access line; lane l gets base + stride * l, or 0 where (active >> l & 1) is 0. */
static void add_access(struct text *t, unsigned launch, unsigned cx, unsigned cy, unsigned cz,
                       unsigned warp, const char *op, uint64_t base, uint64_t stride,
                       uint32_t active)
{
    add(t, "MEMTRACE: CTX " CTX " - grid_launch_id %u - CTA %u,%u,%u - warp %u - %s - ", launch, cx,
        cy, cz, warp, op);
    for (int l = 0; l < 32; l++)
        add(t, "0x%016llx ",
            (unsigned long long)((active >> l & 1) ? base + stride * (uint64_t)l : 0));
    add(t, "\n");
}

static int read_text(const char *s, size_t len, const struct trace_nvbit_opts *o, struct got *g,
                     struct trace_err *e)
{
    char *b = malloc(len ? len : 1);
    assert_non_null(b);
    memcpy(b, s, len);
    memset(e, 0, sizeof *e);
    int r = trace_nvbit_read(b, len, o, collect, g, e);
    free(b);
    return r;
}

static struct got *new_got(void)
{
    struct got *g = calloc(1, sizeof *g);
    assert_non_null(g);
    return g;
}

/* Expects an input error on `line` whose message holds `msg`. */
static void expect_error(const struct text *t, const struct trace_nvbit_opts *o, uint64_t line,
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
    free(g);
}

/* ---- opcode table ---------------------------------------------------------- */

static void expect_op(const char *op, unsigned space, enum trace_op_kind kind, uint32_t width)
{
    struct trace_sass_op o;
    trace_sass_classify(op, strlen(op), &o);
    if (o.space != space || o.kind != kind || o.width != width)
        fail_msg("%s: space %u kind %d width %u", op, o.space, (int)o.kind, o.width);
}

static void test_sass_table(void **state)
{
    (void)state;
    expect_op("LDG.E", TRACE_SPACE_GLOBAL, TRACE_OP_LOAD, 4);
    expect_op("LDG", TRACE_SPACE_GLOBAL, TRACE_OP_LOAD, 4);
    expect_op("LDG.E.64", TRACE_SPACE_GLOBAL, TRACE_OP_LOAD, 8);
    expect_op("LDG.E.128.CONSTANT.SYS", TRACE_SPACE_GLOBAL, TRACE_OP_LOAD, 16);
    expect_op("LDG.E.U8", TRACE_SPACE_GLOBAL, TRACE_OP_LOAD, 1);
    expect_op("LDG.E.S16.STRONG.GPU", TRACE_SPACE_GLOBAL, TRACE_OP_LOAD, 2);
    expect_op("LDG.E.LTC128B.64", TRACE_SPACE_GLOBAL, TRACE_OP_LOAD, 8);
    expect_op("STG.E.128.SYS", TRACE_SPACE_GLOBAL, TRACE_OP_STORE, 16);
    expect_op("STG.E.U16", TRACE_SPACE_GLOBAL, TRACE_OP_STORE, 2);
    expect_op("LD.E.64", TRACE_SPACE_GLOBAL, TRACE_OP_LOAD, 8);
    expect_op("ST.E.8", TRACE_SPACE_GLOBAL, TRACE_OP_STORE, 1);
    expect_op("ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU", TRACE_SPACE_ATOMIC, TRACE_OP_ATOMIC, 4);
    expect_op("ATOM.E.CAS.64.STRONG.GPU", TRACE_SPACE_ATOMIC, TRACE_OP_ATOMIC, 8);
    expect_op("ATOMG.E.ADD.F16x2.RN", TRACE_SPACE_ATOMIC, TRACE_OP_ATOMIC, 4);
    expect_op("RED.E.ADD.F64.RN.STRONG.GPU", TRACE_SPACE_ATOMIC, TRACE_OP_REDUCE, 8);
    expect_op("REDG.E.ADD.STRONG.GPU", TRACE_SPACE_ATOMIC, TRACE_OP_REDUCE, 4);
    expect_op("LDS.U.128", TRACE_SPACE_SHARED, TRACE_OP_LOAD, 16);
    expect_op("LDSM.16.M88.4", TRACE_SPACE_SHARED, TRACE_OP_LOAD, 2);
    expect_op("STS.64", TRACE_SPACE_SHARED, TRACE_OP_STORE, 8);
    expect_op("ATOMS.ADD", TRACE_SPACE_SHARED, TRACE_OP_ATOMIC, 4);
    expect_op("LDL.64", TRACE_SPACE_LOCAL, TRACE_OP_LOAD, 8);
    expect_op("STL.128", TRACE_SPACE_LOCAL, TRACE_OP_STORE, 16);
    /* widths that are not 1, 2, 4, 8 or 16 bytes */
    expect_op("LDG.E.24", TRACE_SPACE_GLOBAL, TRACE_OP_LOAD, 0);
    expect_op("LDG.E.256", TRACE_SPACE_GLOBAL, TRACE_OP_LOAD, 0);
    expect_op("LDG.E.0", TRACE_SPACE_GLOBAL, TRACE_OP_LOAD, 0);
    expect_op("STG.E.U4", TRACE_SPACE_GLOBAL, TRACE_OP_STORE, 0);
    /* not data accesses these readers know */
    expect_op("LDGSTS.E.BYPASS.LTC128B.128", 0, TRACE_OP_NONE, 0);
    expect_op("TEX.SCR.LL", 0, TRACE_OP_NONE, 0);
    expect_op("LDC.64", 0, TRACE_OP_NONE, 0);
    expect_op("LDGX", 0, TRACE_OP_NONE, 0);
    expect_op("L", 0, TRACE_OP_NONE, 0);
    expect_op("", 0, TRACE_OP_NONE, 0);
    assert_int_equal(trace_sass_is_opcode("LDG.E_1", 7), 1);
    assert_int_equal(trace_sass_is_opcode("LDG-E", 5), 0);
    assert_int_equal(trace_sass_is_opcode("", 0), 0);
}

/* ---- the fixture ------------------------------------------------------------ */

struct seen_ops {
    char name[8][32];
    uint64_t pc[8];
    int n;
};

static void note_op(void *ctx, const char *op, size_t len, uint64_t pc)
{
    struct seen_ops *s = ctx;
    assert_true(s->n < 8 && len < 32);
    memcpy(s->name[s->n], op, len);
    s->name[s->n][len] = '\0';
    s->pc[s->n++] = pc;
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

static void test_fixture(void **state)
{
    (void)state;
    size_t n;
    char *text = must_read_file("tests/fixtures/traces/nvbit_memtrace.txt", &n);
    struct trace_nvbit_opts o;
    struct trace_read_stats st;
    struct seen_ops ops = {0};
    trace_nvbit_opts_init(&o);
    o.stats = &st;
    o.opcode_pc = note_op;
    o.opcode_pc_ctx = &ops;
    struct got *g = new_got();
    struct trace_err e;
    assert_int_equal(read_text(text, n, &o, g, &e), 0);
    /* 4 warps x (LDG.E 32 + LDG.E.64 32 + STG.E 16); LDS is shared: left out */
    assert_int_equal(g->n, 320);
    assert_int_equal(st.instructions, 16);
    assert_int_equal(st.skipped, 4);
    assert_int_equal(st.records, 320);
    assert_int_equal(st.lines, 25);
    assert_int_equal(st.threads_per_block, 64);
    assert_int_equal(st.grid.x, 2);
    assert_int_equal(st.block.x, 64);
    assert_int_equal(st.block.y, 1);
    assert_int_equal(ops.n, 3);
    assert_string_equal(ops.name[0], "LDG.E");
    assert_string_equal(ops.name[1], "LDG.E.64");
    assert_string_equal(ops.name[2], "STG.E");
    assert_int_equal(ops.pc[0], 0x0);
    assert_int_equal(ops.pc[1], 0x10);
    assert_int_equal(ops.pc[2], 0x20);
    /* order: LDG.E of CTA 0 warp 0, CTA 0 warp 1, CTA 1 warp 0, CTA 1 warp 1, then LDG.E.64 ... */
    expect_rec(&g->r[0], 0, 0x0, 0x7f3a40000000, 4, 1);
    expect_rec(&g->r[33], 33, 0x0, 0x7f3a40000084, 4, 1);
    expect_rec(&g->r[64], 64, 0x0, 0x7f3a40000100, 4, 1);
    expect_rec(&g->r[127], 127, 0x0, 0x7f3a400001fc, 4, 1);
    expect_rec(&g->r[128 + 97], 97, 0x10, 0x7f3a40100000 + 8 * 97, 8, 1);
    /* STG.E: lanes 0..15 only, dep 0 */
    expect_rec(&g->r[256], 0, 0x20, 0x7f3a40200000, 4, 0);
    expect_rec(&g->r[256 + 16], 32, 0x20, 0x7f3a40200080, 4, 0);
    expect_rec(&g->r[319], 96 + 15, 0x20, 0x7f3a40200000 + 4 * 111, 4, 0);
    /* the store flag is the opcode's: the loads 0, STG.E 1 */
    for (size_t i = 0; i < g->n; i++)
        assert_int_equal(g->r[i].store, g->r[i].pc == 0x20);
    free(g);

    /* with shared accesses kept too, LDS gets the next synthetic PC */
    o.spaces = TRACE_SPACE_GLOBAL | TRACE_SPACE_SHARED;
    o.opcode_pc = NULL;
    g = new_got();
    assert_int_equal(read_text(text, n, &o, g, &e), 0);
    assert_int_equal(g->n, 448);
    expect_rec(&g->r[320], 0, 0x30, 0x7f3a00000000, 4, 1);
    assert_int_equal(st.skipped, 0);
    free(g);
    free(text);
}

/* ---- dims, launches -------------------------------------------------------- */

static void test_dims(void **state)
{
    (void)state;
    struct text t = {0};
    struct trace_nvbit_opts o;
    trace_nvbit_opts_init(&o);
    add(&t, "app banner\n");
    add_access(&t, 0, 1, 1, 0, 0, "LDG.E", 0x1000, 4, 0x3);
    expect_error(&t, &o, 2, "no grid/block dims");
    /* the caller's dims: grid 2,2,1 block 16,2,1 (32 threads, 1 warp) */
    o.grid = (struct trace_dim3){2, 2, 1};
    o.block = (struct trace_dim3){16, 2, 1};
    struct got *g = new_got();
    struct trace_err e;
    assert_int_equal(read_text(t.p, t.n, &o, g, &e), 0);
    assert_int_equal(g->n, 2);
    expect_rec(&g->r[1], 3 * 32 + 1, 0, 0x1004, 4, 1); /* CTA (1,1,0) is block 3 */
    free(g);
    /* a LAUNCH line that agrees is fine, one that differs is refused */
    struct text u = {0};
    add_launch(&u, 0, 2, 2, 1, 16, 2, 1);
    add(&u, "%s", t.p);
    g = new_got();
    assert_int_equal(read_text(u.p, u.n, &o, g, &e), 0);
    assert_int_equal(g->n, 2);
    free(g);
    o.block.x = 32;
    expect_error(&u, &o, 3, "differ from the ones given");
    /* zero and overflowing dims */
    struct trace_nvbit_opts z;
    trace_nvbit_opts_init(&z);
    struct text v = {0};
    add_launch(&v, 0, 1, 0, 1, 32, 1, 1);
    add_access(&v, 0, 0, 0, 0, 0, "LDG.E", 0x1000, 4, 1);
    expect_error(&v, &z, 2, "at least 1");
    v.n = 0;
    add_launch(&v, 0, 4294967295u, 65535, 65535, 1024, 1, 1);
    add_access(&v, 0, 0, 0, 0, 0, "LDG.E", 0x1000, 4, 1);
    expect_error(&v, &z, 2, "more than 2^64 threads");
    /* a second LAUNCH line for the same id with other dims */
    v.n = 0;
    add_launch(&v, 0, 1, 1, 1, 32, 1, 1);
    add_launch(&v, 0, 1, 1, 1, 64, 1, 1);
    expect_error(&v, &z, 2, "a second LAUNCH line");
    free(t.p);
    free(u.p);
    free(v.p);
}

static void test_launches(void **state)
{
    (void)state;
    struct text t = {0};
    add_launch(&t, 0, 1, 1, 1, 32, 1, 1);
    add_access(&t, 0, 0, 0, 0, 0, "LDG.E", 0x1000, 4, 0x1);
    add_launch(&t, 1, 1, 1, 1, 64, 1, 1);
    add_access(&t, 1, 0, 0, 0, 1, "LDG.E", 0x2000, 4, 0x3);
    add_access(&t, 1, 0, 0, 0, 0, "STG.E", 0x3000, 4, 0x1);
    struct trace_nvbit_opts o;
    trace_nvbit_opts_init(&o);
    expect_error(&t, &o, 4, "more than one kernel launch (grid launch ids 0 and 1)");
    struct trace_read_stats st;
    o.launch = 1;
    o.stats = &st;
    struct got *g = new_got();
    struct trace_err e;
    assert_int_equal(read_text(t.p, t.n, &o, g, &e), 0);
    assert_int_equal(g->n, 3);
    expect_rec(&g->r[0], 32, 0x0, 0x2000, 4, 1); /* launch 1's block has 64 threads */
    expect_rec(&g->r[2], 0, 0x10, 0x3000, 4, 0);
    assert_int_equal(st.instructions, 3);
    assert_int_equal(st.skipped, 1);
    free(g);
    o.launch = 7; /* a launch the trace does not hold: nothing */
    g = new_got();
    assert_int_equal(read_text(t.p, t.n, &o, g, &e), 0);
    assert_int_equal(g->n, 0);
    free(g);
    free(t.p);
}

/* ---- policies ------------------------------------------------------------- */

static void test_warp_policies(void **state)
{
    (void)state;
    struct text t = {0};
    add_launch(&t, 0, 2, 1, 1, 64, 1, 1);
    add_access(&t, 0, 0, 0, 0, 9, "LDG.E", 0x1000, 4, 0x1);
    add_access(&t, 0, 0, 0, 0, 8, "LDG.E", 0x2000, 4, 0x1);
    add_access(&t, 0, 1, 0, 0, 8, "LDG.E", 0x3000, 4, 0x1);
    add_access(&t, 0, 0, 0, 0, 9, "LDG.E", 0x4000, 4, 0x1);
    struct trace_nvbit_opts o;
    trace_nvbit_opts_init(&o);
    expect_error(&t, &o, 2, "warp 9 is not below the block's 2 warps");
    o.warp = TRACE_NVBIT_WARP_SLOT;
    struct got *g = new_got();
    struct trace_err e;
    assert_int_equal(read_text(t.p, t.n, &o, g, &e), 0);
    assert_int_equal(g->n, 4);
    assert_int_equal(g->r[0].tid, 0);  /* slot 9: first seen in CTA 0 -> warp 0 */
    assert_int_equal(g->r[1].tid, 32); /* slot 8 -> warp 1 */
    assert_int_equal(g->r[2].tid, 64); /* CTA 1 ranks its own slots */
    assert_int_equal(g->r[3].tid, 0);
    free(g);
    add_access(&t, 0, 0, 0, 0, 3, "LDG.E", 0x5000, 4, 0x1);
    expect_error(&t, &o, 6, "CTA 0,0,0 shows more than 2 distinct warps");
    o.max_warps = 3; /* two warps and CTA 0's counter */
    t.n = 0;
    add_launch(&t, 0, 2, 1, 1, 64, 1, 1);
    add_access(&t, 0, 0, 0, 0, 9, "LDG.E", 0x1000, 4, 0x1);
    add_access(&t, 0, 0, 0, 0, 8, "LDG.E", 0x2000, 4, 0x1);
    add_access(&t, 0, 1, 0, 0, 8, "LDG.E", 0x3000, 4, 0x1);
    expect_error(&t, &o, 4, "more than the allowed number of warps");
    free(t.p);
}

static void test_pc_policies(void **state)
{
    (void)state;
    struct text t = {0};
    add_launch(&t, 0, 1, 1, 1, 64, 1, 1);
    add_access(&t, 0, 0, 0, 0, 0, "LDG.E", 0x1000, 4, 0x1);
    add_access(&t, 0, 0, 0, 0, 0, "LDS", 0x10, 4, 0x1);
    add_access(&t, 0, 0, 0, 0, 1, "LDG.E", 0x2000, 4, 0x1);
    add_access(&t, 0, 0, 0, 0, 0, "LDG.E", 0x3000, 4, 0x1);
    add_access(&t, 0, 0, 0, 0, 0, "STG.E.64", 0x4000, 8, 0x1);
    struct trace_nvbit_opts o;
    trace_nvbit_opts_init(&o);
    struct got *g = new_got();
    struct trace_err e;
    assert_int_equal(read_text(t.p, t.n, &o, g, &e), 0);
    assert_int_equal(g->n, 4);
    assert_int_equal(g->r[0].pc, 0x0);
    assert_int_equal(g->r[2].pc, 0x0);
    assert_int_equal(g->r[3].pc, 0x10);
    free(g);
    o.pc = TRACE_NVBIT_PC_OCCURRENCE; /* position in the warp's stream, LDS counted */
    g = new_got();
    assert_int_equal(read_text(t.p, t.n, &o, g, &e), 0);
    assert_int_equal(g->n, 4);
    assert_int_equal(g->r[0].pc, 0x0);
    assert_int_equal(g->r[1].pc, 0x0);  /* warp 1's first */
    assert_int_equal(g->r[2].pc, 0x20); /* warp 0's third */
    assert_int_equal(g->r[3].pc, 0x30);
    assert_int_equal(g->r[3].dep, 0);
    free(g);
    /* occurrence PCs of divergent warps meet several opcodes: the first flag is kept */
    t.n = 0;
    add_launch(&t, 0, 1, 1, 1, 64, 1, 1);
    add_access(&t, 0, 0, 0, 0, 0, "LDG.E", 0x1000, 4, 0x1);
    add_access(&t, 0, 0, 0, 0, 1, "STG.E", 0x2000, 4, 0x1);
    g = new_got();
    assert_int_equal(read_text(t.p, t.n, &o, g, &e), 0);
    assert_int_equal(g->n, 2);
    expect_rec(&g->r[1], 32, 0x0, 0x2000, 4, 1);
    free(g);
    /* an explicit pc field wins over both policies; such a PC must be one kind of access */
    t.n = 0;
    add_launch(&t, 0, 1, 1, 1, 32, 1, 1);
    add(&t,
        "MEMTRACE: CTX " CTX " - grid_launch_id 0 - CTA 0,0,0 - warp 0 - pc 0x1a0 - LDG.E - 0x10");
    for (int l = 1; l < 32; l++)
        add(&t, " 0x0");
    add(&t, "\nMEMTRACE: CTX " CTX
            " - grid_launch_id 0 - CTA 0,0,0 - warp 0 - PC 416 - LDG.E.64 - 0x20");
    for (int l = 1; l < 32; l++)
        add(&t, " 0x0");
    add(&t, "\n");
    g = new_got();
    assert_int_equal(read_text(t.p, t.n, &o, g, &e), 0);
    assert_int_equal(g->n, 2);
    expect_rec(&g->r[0], 0, 0x1a0, 0x10, 4, 1);
    expect_rec(&g->r[1], 0, 0x1a0, 0x20, 8, 1);
    free(g);
    add(&t,
        "MEMTRACE: CTX " CTX " - grid_launch_id 0 - CTA 0,0,0 - warp 0 - pc 0x1a0 - STG.E - 0x10");
    for (int l = 1; l < 32; l++)
        add(&t, " 0x0");
    add(&t, "\n");
    expect_error(&t, &o, 4, "pc 0x1a0 is a store here but another kind of access on line 2");
    free(t.p);
}

static void test_flags(void **state)
{
    (void)state;
    struct text t = {0};
    add_launch(&t, 0, 1, 1, 1, 32, 1, 1);
    add_access(&t, 0, 0, 0, 0, 0, "LDG.E", 0x1000, 4, 0x1);
    add_access(&t, 0, 0, 0, 0, 0, "ATOMG.E.ADD.STRONG.GPU", 0x2000, 4, 0x1);
    add_access(&t, 0, 0, 0, 0, 0, "RED.E.ADD.STRONG.GPU", 0x3000, 4, 0x1);
    add_access(&t, 0, 0, 0, 0, 0, "STG.E", 0x4000, 4, 0x1);
    struct trace_nvbit_opts o;
    trace_nvbit_opts_init(&o);
    struct got *g = new_got();
    struct trace_err e;
    assert_int_equal(read_text(t.p, t.n, &o, g, &e), 0);
    assert_int_equal(g->n, 2); /* atomics and reductions are not kept by default */
    free(g);
    o.spaces = TRACE_SPACE_GLOBAL | TRACE_SPACE_ATOMIC;
    g = new_got();
    assert_int_equal(read_text(t.p, t.n, &o, g, &e), 0);
    assert_int_equal(g->n, 4);
    assert_int_equal(g->r[0].dep, 1);
    assert_int_equal(g->r[1].dep, 1);
    assert_int_equal(g->r[2].dep, 0);
    assert_int_equal(g->r[3].dep, 0);
    /* atomics and reductions write memory: stores for the caches */
    assert_int_equal(g->r[0].store, 0);
    assert_int_equal(g->r[1].store, 1);
    assert_int_equal(g->r[2].store, 1);
    assert_int_equal(g->r[3].store, 1);
    free(g);
    o.load_dep = 0;
    struct trace_pcflags tab;
    trace_pcflags_init(&tab, 0);
    assert_int_equal(trace_pcflags_set(&tab, 0x30, 1, 1, NULL), 0); /* STG.E's synthetic PC */
    o.flags = &tab;
    g = new_got();
    assert_int_equal(read_text(t.p, t.n, &o, g, &e), 0);
    assert_int_equal(g->r[0].dep, 0);
    assert_int_equal(g->r[1].dep, 0);
    assert_int_equal(g->r[3].dep, 1);
    free(g);
    trace_pcflags_free(&tab);
    free(t.p);
}

/* ---- lines that are not records, line ends, the sink ---------------------- */

static void test_skipped_lines_and_crlf(void **state)
{
    (void)state;
    struct text t = {0};
    add(&t, "------------- NVBit (NVidia Binary Instrumentation Tool v1.7) Loaded ----\r\n");
    add(&t, "MEMTRACE: STARTING CONTEXT 0x5605a1b2c3d0\r\n");
    add(&t, "MEMTRACE: CTX 0x5605a1b2c3d0, Inspecting CUfunction 0x1 name k at address 0x2\r\n");
    add(&t, "MEMTRACE:\r\n\r\n");
    add(&t, "the app says: MEMTRACE: CTX 0x1 - grid_launch_id nonsense\r\n");
    add(&t, "Kernel k - grid size 1,1,1 - block size 32,1,1\r\n");
    add_launch(&t, 0, 1, 1, 1, 32, 1, 1);
    t.p[t.n - 1] = '\r';
    add(&t, "\n");
    add_access(&t, 0, 0, 0, 0, 0, "LDG.E", 0x1000, 4, 0x80000001u);
    t.p[t.n - 1] = '\r';
    add(&t, "\n");
    struct got *g = new_got();
    struct trace_err e;
    assert_int_equal(read_text(t.p, t.n, NULL, g, &e), 0);
    assert_int_equal(g->n, 2);
    expect_rec(&g->r[1], 31, 0, 0x1000 + 4 * 31, 4, 1);
    free(g);
    /* the last line may lack its newline; addresses may be separated by several blanks */
    t.n = 0;
    add_launch(&t, 0, 1, 1, 1, 32, 1, 1);
    add(&t, "MEMTRACE: CTX " CTX " - grid_launch_id 0 - CTA 0,0,0 - warp 0 - LDG.E - 0x10");
    for (int l = 1; l < 32; l++)
        add(&t, " \t 0x%x", l == 5 ? 0x50 : 0);
    g = new_got();
    assert_int_equal(read_text(t.p, t.n, NULL, g, &e), 0);
    assert_int_equal(g->n, 2);
    expect_rec(&g->r[1], 5, 0, 0x50, 4, 1);
    g->n = 0;
    g->stop_after = 1;
    assert_int_equal(read_text(t.p, t.n, NULL, g, &e), 5);
    assert_int_equal(g->n, 1);
    free(g);
    free(t.p);
}

/* ---- malformed lines -------------------------------------------------------- */

static void test_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *rest; /* after "MEMTRACE: CTX <ctx> - " */
        const char *msg;
    } cases[] = {
        {"grid_launch_id x - CTA 0,0,0 - warp 0 - LDG.E - ", "expected the grid launch id"},
        {"grid_launch_id 0 - CTA 0,0 - warp 0 - LDG.E - ", "expected \" - CTA x,y,z\""},
        {"grid_launch_id 0 - CTA -1,0,0 - warp 0 - LDG.E - ", "expected \" - CTA x,y,z\""},
        {"grid_launch_id 0 - CTA 0,0,4294967296 - warp 0 - LDG.E - ", "expected \" - CTA x,y,z\""},
        {"grid_launch_id 0 - CTA 0,0,0 - warp w - LDG.E - ", "expected \" - warp w - \""},
        {"grid_launch_id 0 - CTA 0,0,0 - warp 0 -  - ", "expected an opcode"},
        {"grid_launch_id 0 - CTA 0,0,0 - warp 0 - LDG-E - ", "expected an opcode"},
        {"grid_launch_id 0 - CTA 0,0,0 - warp 0 - LDG.E 0x1", "expected \" - \" after the opcode"},
        {"grid_launch_id 0 - CTA 0,0,0 - warp 0 - pc zz - LDG.E - ", "expected \"pc N - \""},
        {"grid_launch_id 0 - CTA 0,0,0 - warp 0 - LDG.E - 0x1 0x2",
         "expected 32 addresses, found 2"},
        {"grid_launch_id 0 - CTA 0,0,0 - warp 0 - LDG.E - 0x1 12", "address 1: expected a 0x-hex"},
        {"grid_launch_id 0 - CTA 0,0,0 - warp 0 - LDG.E - 0x10x2", "separated by spaces"},
        {"grid_launch_id 0 - CTA 0,0,0 - warp 0 - LDG.E - 0x1 0x", "address 1: expected a 0x-hex"},
        {"grid_launch_id 0 - CTA 0,0,0 - warp 0 - LDG.E - 0x10000000000000000",
         "address 0: expected a 0x-hex number of at most 64 bits"},
        {"LAUNCH - Kernel pc 0x1 - Kernel name k", "LAUNCH line without"},
        {"LAUNCH - grid launch id 0 - grid size 1,1 - block size 32,1,1",
         "expected \"grid launch id N"},
        {"LAUNCHED", "unknown MEMTRACE record"},
        {"grid_launch_idx 0", "unknown MEMTRACE record"},
        {"", "unknown MEMTRACE record"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct text t = {0};
        add_launch(&t, 0, 1, 1, 1, 32, 1, 1);
        add_access(&t, 0, 0, 0, 0, 0, "LDG.E", 0x1000, 4, 0x1);
        add(&t, "MEMTRACE: CTX " CTX " - %s\n", cases[i].rest);
        add_access(&t, 0, 0, 0, 0, 0, "LDG.E", 0x1000, 4, 0x1);
        struct got *g = new_got();
        struct trace_err e;
        int r = read_text(t.p, t.n, NULL, g, &e);
        if (r != TRACE_EINPUT || e.line != 3 || e.offset != line_offset(t.p, 3) ||
            !strstr(e.msg, cases[i].msg) || g->n != 1)
            fail_msg("case %zu: result %d line %llu offset %llu msg '%s' records %zu", i, r,
                     (unsigned long long)e.line, (unsigned long long)e.offset, e.msg, g->n);
        free(g);
        free(t.p);
    }
    /* 33 addresses */
    struct text t = {0};
    add_launch(&t, 0, 1, 1, 1, 32, 1, 1);
    add_access(&t, 0, 0, 0, 0, 0, "LDG.E", 0x1000, 4, 0x1);
    t.n--;
    add(&t, "0x5\n");
    expect_error(&t, NULL, 2, "more than 32 addresses");
    free(t.p);
}

static void test_geometry_errors(void **state)
{
    (void)state;
    struct text t = {0};
    add_launch(&t, 0, 2, 1, 1, 48, 1, 1); /* 48 threads: warp 1 has 16 lanes */
    add_access(&t, 0, 1, 0, 0, 1, "LDG.E", 0x1000, 4, 0xffff);
    add_access(&t, 0, 2, 0, 0, 0, "LDG.E", 0x1000, 4, 0x1);
    expect_error(&t, NULL, 3, "CTA 2,0,0 is outside the grid 2,1,1");
    t.n = 0;
    add_launch(&t, 0, 2, 1, 1, 48, 1, 1);
    add_access(&t, 0, 1, 0, 0, 1, "LDG.E", 0x1000, 4, 0x1ffff);
    expect_error(&t, NULL, 2, "lane 16 of warp 1 has an address but the block has only 48 threads");
    t.n = 0;
    add_launch(&t, 0, 2, 1, 1, 48, 1, 1);
    add_access(&t, 0, 1, 0, 0, 1, "LDG.E.24", 0x1000, 4, 0x1);
    expect_error(&t, NULL, 2, "opcode LDG.E.24 names a width");
    /* a record no reader may write: the binary reader refuses it */
    t.n = 0;
    add_launch(&t, 0, 2, 1, 1, 48, 1, 1);
    add_access(&t, 0, 1, 0, 0, 0, "LDG.E.128", 0xfffffffffffffff8ull, 0, 0x1);
    expect_error(&t, NULL, 2, "address 0xfffffffffffffff8 + width 16 passes 2^64");
    t.n = 0;
    add_launch(&t, 0, 2, 1, 1, 1025, 1, 1);
    add_access(&t, 0, 1, 0, 0, 0, "LDG.E", 0x1000, 4, 0x1);
    expect_error(&t, NULL, 2, "a block of 1025 threads: a CUDA block has at most 1024");
    /* lanes past the block are fine when inactive; tids stay dense per block */
    t.n = 0;
    add_launch(&t, 0, 2, 1, 1, 48, 1, 1);
    add_access(&t, 0, 1, 0, 0, 1, "LDG.E", 0x1000, 4, 0xffff);
    struct got *g = new_got();
    struct trace_err e;
    assert_int_equal(read_text(t.p, t.n, NULL, g, &e), 0);
    assert_int_equal(g->n, 16);
    assert_int_equal(g->r[0].tid, 48 + 32);
    assert_int_equal(g->r[15].tid, 95);
    free(g);
    free(t.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sass_table),    cmocka_unit_test(test_fixture),
        cmocka_unit_test(test_dims),          cmocka_unit_test(test_launches),
        cmocka_unit_test(test_warp_policies), cmocka_unit_test(test_pc_policies),
        cmocka_unit_test(test_flags),         cmocka_unit_test(test_skipped_lines_and_crlf),
        cmocka_unit_test(test_malformed),     cmocka_unit_test(test_geometry_errors),
    };
    return cmocka_run_group_tests_name("trace_nvbit", tests, NULL, NULL);
}
