/*
 * Accel-Sim kernel trace reader (kernel-N.trace and kernel-N.traceg).
 *
 * DESIGN
 * See accelsim.h. The reader is one line loop, run once (dep DEFAULT) or
 * twice (dep DERIVE: a checking/deriving pass without a sink, then the
 * emitting pass). Each line is classified (blank, header "-...", comment or
 * TB marker "#...", "thread block =", "warp =", "insts =", instruction),
 * an instruction line is parsed completely into a struct inst, then checked
 * against the geometry, then either fed to the dependency tracker (first
 * pass) or turned into records (emitting pass). Lines, the cursor and the
 * errors' positions come from scan.h, the dims from trace_geom_resolve, as
 * in the NVBit reader.
 * The dependency tracker keeps, per warp, at most one pending load: its PC,
 * its first destination register and how many registers the load writes
 * (width / 4, at most 4), packed into one u64 so the per-warp map of
 * kernel-N.trace stays small; .traceg needs no map (its warps come one after
 * another).
 */
#include "trace/accelsim.h"

#include <string.h>

#include "trace/scan.h"

#define AS_LANES 32
#define AS_MAX_REGS 8
#define AS_RZ 255
#define AS_MAX_WARPS_DEFAULT ((size_t)1 << 22)
#define AS_WARP_KEY_MAX 0xffffu
#define AS_CTA_KEY_MAX (((uint64_t)1 << 47) - 1)

/* Pending-load state: pc (40 bits) | base register << 40 | register mask << 48 | active. */
#define PEND_PC_MAX (((uint64_t)1 << 40) - 1)
#define PEND_ACTIVE ((uint64_t)1 << 52)

/* One parsed instruction line. */
struct inst {
    int has_ids; /* the line carried block and warp ids */
    uint32_t cta[3], warp;
    uint64_t pc;
    uint32_t mask;
    unsigned ndst, nsrc;
    uint32_t dst[AS_MAX_REGS], src[AS_MAX_REGS];
    const char *op;
    size_t oplen;
    uint64_t mem_width;      /* the line's field; 0: not a memory instruction */
    uint64_t addr[AS_LANES]; /* per lane, where mask has the lane */
};

struct as {
    struct trace_text t; /* the line being read */
    const char *buf;     /* the input, read once per pass */
    size_t len;
    const struct trace_accelsim_opts *o;
    trace_sink sink;
    int emitting; /* 0 in the deriving pass */
    void *ctx;
    /* header */
    int have_grid, have_block, lineinfo;
    int64_t version;          /* -1: no "-accelsim tracer version" line */
    struct trace_geom header; /* its grid and block dims */
    int body;                 /* instructions or markers have begun: no more header lines */
    int geom_ok;
    struct trace_geom geom; /* fixed at the first instruction */
    /* .traceg structure */
    int in_tb, have_tbid, have_warp, have_insts;
    uint64_t tb_line, tb_off;
    uint32_t tb[3], warp;
    uint64_t insts, count;
    /* dependency tracking (deriving pass) */
    uint64_t cur_state;        /* of the current .traceg warp */
    struct trace_map warps;    /* kernel-N.trace: cta << 16 | warp -> state */
    struct trace_pcflags dep1; /* PCs found dependent */
    struct trace_map kinds;    /* pc -> line << 3 | access kind, one kind per PC */
    struct trace_read_stats st;
};

void trace_accelsim_opts_init(struct trace_accelsim_opts *o)
{
    memset(o, 0, sizeof *o);
    o->spaces = TRACE_SPACE_GLOBAL;
    o->dep = TRACE_ACCELSIM_DEP_DERIVE;
    o->load_dep = 1;
}

/* ---- tokens ------------------------------------------------------------ */

/* The next blank-separated token; n == 0 at the end of the line. */
static struct trace_tok next_tok(struct trace_cur *c)
{
    trace_cur_skip_blanks(c);
    return trace_cur_word(c);
}

/* The whole token as a number: kind 'd' decimal, 'x' hex (0x optional). */
static int tok_u64(struct trace_tok t, int kind, uint64_t *v)
{
    const char *q;
    int r = kind == 'x' ? trace_scan_hex(t.s, t.s + t.n, v, &q)
                        : trace_scan_u64(t.s, t.s + t.n, 0, v, &q);
    return t.n > 0 && r == TRACE_SCAN_OK && q == t.s + t.n;
}

static int tok_i64(struct trace_tok t, int64_t *v)
{
    const char *q;
    return t.n > 0 && trace_scan_i64(t.s, t.s + t.n, v, &q) == TRACE_SCAN_OK && q == t.s + t.n;
}

static int tok_u32(struct trace_tok t, uint32_t *v)
{
    uint64_t x;
    if (!tok_u64(t, 'd', &x) || x > UINT32_MAX)
        return 0;
    *v = (uint32_t)x;
    return 1;
}

static int tok_reg(struct trace_tok t, uint32_t *r)
{
    uint64_t x;
    struct trace_tok d = {t.s + 1, t.n - 1};
    if (t.n < 2 || t.s[0] != 'R' || !tok_u64(d, 'd', &x) || x > AS_RZ)
        return 0;
    *r = (uint32_t)x;
    return 1;
}

/* ---- instruction lines ------------------------------------------------- */

static int parse_ids(struct as *a, struct trace_cur *c, struct inst *in)
{
    uint32_t *v[4] = {&in->cta[0], &in->cta[1], &in->cta[2], &in->warp};
    for (int i = 0; i < 4; i++) {
        struct trace_tok t = next_tok(c);
        if (!tok_u32(t, v[i]))
            return trace_text_bad(&a->t, t.s,
                                  "expected the thread block x y z and warp ids (decimal)");
    }
    in->has_ids = 1;
    return 0;
}

static int skip_decimals(struct as *a, struct trace_cur *c, int k, const char *what)
{
    for (int i = 0; i < k; i++) {
        struct trace_tok t = next_tok(c);
        uint64_t x;
        if (!tok_u64(t, 'd', &x))
            return trace_text_bad(&a->t, t.s, "expected %s (decimal)", what);
    }
    return 0;
}

static int parse_regs(struct as *a, struct trace_cur *c, unsigned *n, uint32_t *regs,
                      const char *what)
{
    struct trace_tok t = next_tok(c);
    uint64_t k;
    if (!tok_u64(t, 'd', &k) || k > AS_MAX_REGS)
        return trace_text_bad(&a->t, t.s, "expected the number of %s registers (0..%d)", what,
                              AS_MAX_REGS);
    *n = (unsigned)k;
    for (unsigned i = 0; i < *n; i++) {
        t = next_tok(c);
        if (!tok_reg(t, &regs[i]))
            return trace_text_bad(&a->t, t.s, "expected a %s register R0..R255", what);
    }
    return 0;
}

static int lanes_contiguous(uint32_t m)
{
    if (!m)
        return 1;
    m >>= __builtin_ctz(m);
    return (m & (m + 1)) == 0;
}

/* Addresses in mode 0 (list), 1 (base, stride) or 2 (base, deltas). */
static int parse_addrs(struct as *a, struct trace_cur *c, struct inst *in)
{
    struct trace_tok t = next_tok(c);
    uint64_t mode, x;
    int64_t d = 0;
    if (!tok_u64(t, 'd', &mode) || mode > 2)
        return trace_text_bad(&a->t, t.s, "expected the address mode 0, 1 or 2");
    int active = __builtin_popcount(in->mask), k = 0;
    if (mode == 1 && !lanes_contiguous(in->mask))
        return trace_text_bad(&a->t, t.s, "base+stride addresses need contiguous active lanes");
    uint64_t prev = 0;
    if (mode != 0 || active > 0) {
        t = next_tok(c);
        if (!tok_u64(t, 'x', &prev))
            return trace_text_bad(&a->t, t.s, "expected %s address (hex)",
                                  mode == 0 ? "an" : "the base");
    }
    if (mode == 1) {
        t = next_tok(c);
        if (!tok_i64(t, &d))
            return trace_text_bad(&a->t, t.s, "expected the stride (signed decimal)");
    }
    for (int lane = 0; lane < AS_LANES; lane++) {
        if (!(in->mask >> lane & 1))
            continue;
        if (k > 0 && mode == 0) {
            t = next_tok(c);
            if (!tok_u64(t, 'x', &x))
                return trace_text_bad(&a->t, t.s, "expected address %d of %d (hex)", k + 1, active);
            prev = x;
        } else if (k > 0) {
            if (mode == 2) {
                t = next_tok(c);
                if (!tok_i64(t, &d))
                    return trace_text_bad(&a->t, t.s, "expected delta %d of %d (signed decimal)", k,
                                          active - 1);
            }
            prev += (uint64_t)d;
        }
        in->addr[lane] = prev;
        k++;
    }
    return 0;
}

static int is_tma(const struct inst *in)
{
    return in->oplen >= 4 && (memcmp(in->op, "UTMA", 4) == 0 || memcmp(in->op, "UBLK", 4) == 0);
}

/* What may follow the last field: an optional immediate (tracer 5), then nothing. */
static int parse_tail(struct as *a, struct trace_cur *c)
{
    struct trace_tok t = next_tok(c);
    int64_t imm;
    if (t.n == 0)
        return 0;
    if (!tok_i64(t, &imm))
        return trace_text_bad(&a->t, t.s, "unexpected text after the instruction");
    t = next_tok(c);
    if (t.n != 0)
        return trace_text_bad(&a->t, t.s, "unexpected text after the immediate");
    return 0;
}

/* [ids] [cluster] [core ids] [line] PC mask ndst dst... opcode nsrc src... width [mode addrs] [imm]
 */
static int parse_inst(struct as *a, struct trace_cur *c, int with_ids, struct inst *in)
{
    memset(in, 0, sizeof *in);
    if (with_ids && parse_ids(a, c, in) != 0)
        return TRACE_EINPUT;
    if (with_ids && a->o->cluster_ids && skip_decimals(a, c, 7, "the 7 cluster fields") != 0)
        return TRACE_EINPUT;
    if (with_ids && a->o->core_ids && skip_decimals(a, c, 2, "the SM and warp-in-SM ids") != 0)
        return TRACE_EINPUT;
    if (a->lineinfo && skip_decimals(a, c, 1, "the source line number") != 0)
        return TRACE_EINPUT;
    struct trace_tok t = next_tok(c);
    uint64_t m;
    if (!tok_u64(t, 'x', &in->pc))
        return trace_text_bad(&a->t, t.s, "expected the PC (hex)");
    t = next_tok(c);
    if (!tok_u64(t, 'x', &m) || m > UINT32_MAX)
        return trace_text_bad(&a->t, t.s, "expected the active mask (hex, 32 bits)");
    in->mask = (uint32_t)m;
    if (parse_regs(a, c, &in->ndst, in->dst, "destination") != 0)
        return TRACE_EINPUT;
    t = next_tok(c);
    if (!trace_sass_is_opcode(t.s, t.n))
        return trace_text_bad(&a->t, t.s, "expected the opcode");
    in->op = t.s;
    in->oplen = t.n;
    if (parse_regs(a, c, &in->nsrc, in->src, "source") != 0)
        return TRACE_EINPUT;
    t = next_tok(c);
    if (!tok_u64(t, 'd', &in->mem_width))
        return trace_text_bad(&a->t, t.s, "expected the memory width (decimal, 0 if none)");
    if (in->mem_width && is_tma(in))
        return 0; /* tensor-memory transfers: another layout, never records */
    if (in->mem_width && parse_addrs(a, c, in) != 0)
        return TRACE_EINPUT;
    return parse_tail(a, c);
}

/* ---- geometry ---------------------------------------------------------- */

/* Fixes the dims at the first instruction: the header's, else the caller's. */
static int resolve_geom(struct as *a, const char *at)
{
    if (a->geom_ok)
        return 0;
    const struct trace_geom given = {.grid = a->o->grid, .block = a->o->block};
    const struct trace_geom *traced = a->have_grid && a->have_block ? &a->header : NULL;
    int r = trace_geom_resolve(&a->geom, traced, &given, "the header's", &a->t, at, &a->st);
    if (r == 1)
        return trace_text_bad(
            &a->t, at,
            "no grid/block dims: no \"-grid dim\" and \"-block dim\" header lines and none given");
    a->geom_ok = r == 0;
    return r;
}

/* Block and warp of in (from the line or the .traceg markers), checked. */
static int place(struct as *a, const char *at, struct inst *in)
{
    if (a->in_tb) {
        if (in->has_ids && (in->cta[0] != a->tb[0] || in->cta[1] != a->tb[1] ||
                            in->cta[2] != a->tb[2] || in->warp != a->warp))
            return trace_text_bad(
                &a->t, at,
                "the line's block/warp ids differ from its thread block and warp markers");
        memcpy(in->cta, a->tb, sizeof in->cta);
        in->warp = a->warp;
    }
    if (in->cta[0] >= a->geom.grid.x || in->cta[1] >= a->geom.grid.y ||
        in->cta[2] >= a->geom.grid.z)
        return trace_text_bad(&a->t, at, "thread block %u,%u,%u is outside the grid %u,%u,%u",
                              in->cta[0], in->cta[1], in->cta[2], a->geom.grid.x, a->geom.grid.y,
                              a->geom.grid.z);
    if (in->warp >= a->geom.warps)
        return trace_text_bad(&a->t, at, "warp %u is not below the block's %llu warps", in->warp,
                              (unsigned long long)a->geom.warps);
    return 0;
}

/* ---- dependency tracking ------------------------------------------------ */

static int pend_has(uint64_t s, uint32_t r)
{
    uint32_t base = (uint32_t)(s >> 40) & 0xff, mask = (uint32_t)(s >> 48) & 0xf;
    return r >= base && r < base + 4 && (mask >> (r - base) & 1);
}

static uint64_t pend_kill(uint64_t s, uint32_t r)
{
    if (!pend_has(s, r))
        return s;
    uint32_t base = (uint32_t)(s >> 40) & 0xff;
    s &= ~((uint64_t)1 << (48 + r - base));
    return ((s >> 48) & 0xf) ? s : 0;
}

static uint64_t pend_new(uint64_t pc, uint32_t base, uint32_t width)
{
    uint32_t nregs = width >= 16 ? 4 : width >= 8 ? 2 : 1, mask = 0;
    for (uint32_t i = 0; i < nregs; i++)
        if (base + i < AS_RZ)
            mask |= 1u << i;
    return PEND_ACTIVE | pc | (uint64_t)base << 40 | (uint64_t)mask << 48;
}

/* Feeds one instruction of a warp to its pending-load state *s. */
static int track(struct as *a, uint64_t *s, const struct inst *in, const struct trace_sass_op *op,
                 int kept)
{
    if (*s) {
        int used = 0;
        for (unsigned i = 0; i < in->nsrc && !used; i++)
            used = pend_has(*s, in->src[i]);
        if (used) {
            int r = trace_pcflags_force(&a->dep1, *s & PEND_PC_MAX, 1, a->t.line);
            if (r != 0)
                return trace_text_put_result(&a->t, r, "dependent PCs");
            *s = 0;
        }
        for (unsigned i = 0; i < in->ndst && *s; i++)
            *s = pend_kill(*s, in->dst[i]);
    }
    if (!kept)
        return 0;
    *s = 0; /* the warp's next memory instruction closes the window */
    if ((op->kind == TRACE_OP_LOAD || op->kind == TRACE_OP_ATOMIC) && in->ndst > 0 &&
        in->dst[0] != AS_RZ) {
        if (in->pc > PEND_PC_MAX)
            return trace_text_bad(&a->t, a->t.ls,
                                  "PC 0x%llx is too large to derive its dependency flag",
                                  (unsigned long long)in->pc);
        *s = pend_new(in->pc, in->dst[0], op->width);
    }
    return 0;
}

static int track_raw(struct as *a, const struct inst *in, const struct trace_sass_op *op, int kept)
{
    uint64_t cta = in->cta[0] +
                   (uint64_t)a->geom.grid.x * (in->cta[1] + (uint64_t)a->geom.grid.y * in->cta[2]);
    if (cta > AS_CTA_KEY_MAX || in->warp > AS_WARP_KEY_MAX)
        return trace_text_bad(&a->t, a->t.ls, "grid too large to derive dependency flags");
    uint64_t key = cta << 16 | in->warp, s = 0;
    int had = trace_map_get(&a->warps, key, &s);
    uint64_t before = s;
    int r = track(a, &s, in, op, kept);
    if (r != 0 || (s == before && (had || !s)))
        return r;
    return trace_text_put_result(&a->t, trace_map_put(&a->warps, key, s), "warps");
}

/* ---- records ------------------------------------------------------------ */

static uint32_t flag_of(struct as *a, uint64_t pc, const struct trace_sass_op *op)
{
    uint32_t dep;
    if (trace_pcflags_get(a->o->flags, pc, &dep, NULL))
        return dep;
    if (a->o->dep == TRACE_ACCELSIM_DEP_DERIVE)
        return trace_pcflags_get(&a->dep1, pc, &dep, NULL) ? dep : 0;
    return (op->kind == TRACE_OP_LOAD || op->kind == TRACE_OP_ATOMIC) && a->o->load_dep ? 1 : 0;
}

static int emit(struct as *a, const struct inst *in, const struct trace_sass_op *op)
{
    uint64_t cta = in->cta[0] +
                   (uint64_t)a->geom.grid.x * (in->cta[1] + (uint64_t)a->geom.grid.y * in->cta[2]);
    struct trace_rec rec = {.pc = in->pc, .width = op->width, .dep = (uint8_t)flag_of(a, in->pc, op),
                            .store = trace_op_writes(op->kind)};
    for (int lane = 0; lane < AS_LANES; lane++) {
        if (!(in->mask >> lane & 1))
            continue;
        rec.tid = cta * a->geom.threads + (uint64_t)in->warp * 32 + (uint64_t)lane;
        rec.addr = in->addr[lane];
        a->st.records++;
        int r = a->sink(a->ctx, &rec);
        if (r != 0)
            return r;
    }
    return 0;
}

/* Checks what a kept memory instruction must satisfy to become records. */
static int check_kept(struct as *a, const struct inst *in, const struct trace_sass_op *op)
{
    if (!op->width)
        return trace_text_bad(&a->t, in->op,
                              "opcode %.*s names a width that is not 1, 2, 4, 8 or 16 bytes",
                              (int)in->oplen, in->op);
    for (int lane = 0; lane < AS_LANES; lane++) {
        if (!(in->mask >> lane & 1))
            continue;
        if ((uint64_t)in->warp * 32 + (uint64_t)lane >= a->geom.threads)
            return trace_text_bad(
                &a->t, a->t.ls, "lane %d of warp %u is active but the block has only %llu threads",
                lane, in->warp, (unsigned long long)a->geom.threads);
        struct trace_rec rec = {.addr = in->addr[lane], .width = op->width};
        if (trace_text_rec_check(&a->t, in->op, &rec))
            return TRACE_EINPUT;
    }
    return 0;
}

/* A PC is one instruction: its executions must be one kind of access. */
static int check_kind(struct as *a, const struct inst *in, const struct trace_sass_op *op)
{
    uint64_t first = 0;
    int r = trace_pc_kind_check(&a->kinds, in->pc, op->kind, a->t.line, &first);
    if (r == 1)
        return trace_text_bad(
            &a->t, in->op, "PC 0x%llx is %.*s here but another kind of access on line %llu",
            (unsigned long long)in->pc, (int)in->oplen, in->op, (unsigned long long)first);
    return trace_text_put_result(&a->t, r, "PCs");
}

static int do_inst(struct as *a, struct trace_cur *c)
{
    struct inst in;
    const char *at = c->p;
    if (a->in_tb && !a->have_insts)
        return trace_text_bad(&a->t, at, "instruction line before \"warp = \" and \"insts = \"");
    int grouped_ids = a->in_tb && a->version < 3;
    if (parse_inst(a, c, !a->in_tb || grouped_ids, &in) != 0 || resolve_geom(a, at) != 0 ||
        place(a, at, &in) != 0)
        return TRACE_EINPUT;
    a->body = 1;
    a->count++;
    if (a->in_tb && a->count > a->insts)
        return trace_text_bad(&a->t, at, "more instruction lines than \"insts = %llu\"",
                              (unsigned long long)a->insts);
    struct trace_sass_op op;
    trace_sass_classify(in.op, in.oplen, &op);
    if (op.kind != TRACE_OP_NONE && !in.mem_width)
        return trace_text_bad(&a->t, in.op, "memory opcode %.*s with memory width 0", (int)in.oplen,
                              in.op);
    int kept = op.kind != TRACE_OP_NONE && (op.space & a->o->spaces);
    if (kept && (check_kept(a, &in, &op) != 0 || check_kind(a, &in, &op) != 0))
        return TRACE_EINPUT;
    if (in.mem_width) {
        a->st.instructions++;
        a->st.skipped += !kept;
    }
    if (a->emitting)
        return kept ? emit(a, &in, &op) : 0;
    if (a->o->dep != TRACE_ACCELSIM_DEP_DERIVE)
        return 0;
    return a->in_tb ? track(a, &a->cur_state, &in, &op, kept) : track_raw(a, &in, &op, kept);
}

/* ---- header and .traceg markers ---------------------------------------- */

static int parse_dim_line(struct as *a, struct trace_cur *c, const char *key, int *have,
                          struct trace_dim3 *d)
{
    uint32_t v[3];
    if (*have)
        return trace_text_bad(&a->t, a->t.ls, "a second \"-%s\" line", key);
    if (!trace_cur_lit(c, "(") || !trace_cur_triple(c, v) || !trace_cur_lit(c, ")") || c->p != c->e)
        return trace_text_bad(&a->t, c->p, "expected \"-%s = (x,y,z)\"", key);
    d->x = v[0];
    d->y = v[1];
    d->z = v[2];
    *have = 1;
    return 0;
}

static int parse_int_value(struct as *a, struct trace_cur *c, const char *key, int64_t *v)
{
    struct trace_tok t = next_tok(c);
    if (!tok_i64(t, v) || *v < 0 || next_tok(c).n != 0)
        return trace_text_bad(&a->t, t.s, "expected \"-%s = N\"", key);
    return 0;
}

static int do_header(struct as *a, struct trace_cur *c)
{
    int64_t v;
    if (a->body)
        return trace_text_bad(&a->t, c->p, "header line after the instructions began");
    if (trace_cur_lit(c, "-grid dim = "))
        return parse_dim_line(a, c, "grid dim", &a->have_grid, &a->header.grid);
    if (trace_cur_lit(c, "-block dim = "))
        return parse_dim_line(a, c, "block dim", &a->have_block, &a->header.block);
    if (trace_cur_lit(c, "-enable lineinfo = ")) {
        if (parse_int_value(a, c, "enable lineinfo", &v) != 0)
            return TRACE_EINPUT;
        a->lineinfo = v != 0;
        return 0;
    }
    if (trace_cur_lit(c, "-accelsim tracer version = "))
        return parse_int_value(a, c, "accelsim tracer version", &a->version);
    return 0; /* -kernel name, -shmem, -nregs, ...: not needed */
}

/* Closes the current .traceg warp, checking its instruction count. */
static int end_warp(struct as *a)
{
    if (a->have_warp && !a->have_insts)
        return trace_text_bad(&a->t, a->t.ls, "warp %u has no \"insts = \" line", a->warp);
    if (a->have_insts && a->count != a->insts)
        return trace_text_bad(&a->t, a->t.ls,
                              "warp %u has %llu instruction lines but \"insts = %llu\"", a->warp,
                              (unsigned long long)a->count, (unsigned long long)a->insts);
    a->have_warp = a->have_insts = 0;
    a->count = 0;
    a->cur_state = 0;
    return 0;
}

static int do_begin_tb(struct as *a)
{
    if (a->in_tb)
        return trace_text_bad(&a->t, a->t.ls, "#BEGIN_TB inside a thread block");
    a->in_tb = 1;
    a->have_tbid = a->have_warp = a->have_insts = 0;
    a->count = 0;
    a->cur_state = 0;
    a->tb_line = a->t.line;
    a->tb_off = (uint64_t)(a->t.ls - a->buf);
    a->body = 1;
    return 0;
}

static int do_end_tb(struct as *a)
{
    if (!a->in_tb)
        return trace_text_bad(&a->t, a->t.ls, "#END_TB outside a thread block");
    if (end_warp(a) != 0)
        return TRACE_EINPUT;
    a->in_tb = 0;
    return 0;
}

static int do_tb_id(struct as *a, struct trace_cur *c)
{
    if (!a->in_tb || a->have_tbid)
        return trace_text_bad(&a->t, a->t.ls,
                              "\"thread block = \" must come once, right after #BEGIN_TB");
    if (!trace_cur_triple(c, a->tb) || c->p != c->e)
        return trace_text_bad(&a->t, c->p, "expected \"thread block = x,y,z\"");
    a->have_tbid = 1;
    return 0;
}

/* "cluster id = x,y,z", "cluster cta = x,y,z", "cluster rank = n" (tracers
 * with cluster support): checked, not needed. c is past "cluster ". */
static int do_cluster(struct as *a, struct trace_cur *c)
{
    int k = trace_cur_lit(c, "id = ") || trace_cur_lit(c, "cta = ") ? 3
            : trace_cur_lit(c, "rank = ")                           ? 1
                                                                    : 0;
    uint64_t v;
    if (!a->in_tb || !a->have_tbid || a->have_warp)
        return trace_text_bad(&a->t, a->t.ls,
                              "cluster lines belong right after \"thread block = \"");
    for (int i = 0; i < k; i++) {
        if ((i > 0 && !trace_cur_lit(c, ",")) || !trace_cur_u64(c, 0, &v))
            break;
        if (i == k - 1 && c->p == c->e)
            return 0;
    }
    return trace_text_bad(&a->t, c->p,
                          "expected \"cluster id|cta = x,y,z\" or \"cluster rank = n\"");
}

static int do_warp(struct as *a, struct trace_cur *c)
{
    struct trace_tok t = next_tok(c);
    if (!a->in_tb || !a->have_tbid)
        return trace_text_bad(&a->t, a->t.ls,
                              "\"warp = \" outside a thread block or before \"thread block = \"");
    if (end_warp(a) != 0)
        return TRACE_EINPUT;
    if (!tok_u32(t, &a->warp) || next_tok(c).n != 0)
        return trace_text_bad(&a->t, t.s, "expected \"warp = N\"");
    a->have_warp = 1;
    return 0;
}

static int do_insts(struct as *a, struct trace_cur *c)
{
    struct trace_tok t = next_tok(c);
    if (!a->have_warp || a->have_insts)
        return trace_text_bad(&a->t, a->t.ls,
                              "\"insts = \" must come once, right after \"warp = \"");
    if (!tok_u64(t, 'd', &a->insts) || next_tok(c).n != 0)
        return trace_text_bad(&a->t, t.s, "expected \"insts = N\"");
    a->have_insts = 1;
    return 0;
}

static int do_line(struct as *a, struct trace_cur *c)
{
    struct trace_cur blanks = *c;
    trace_cur_skip_blanks(&blanks);
    if (blanks.p == blanks.e)
        return 0;
    if (*c->p == '-')
        return do_header(a, c);
    if (*c->p == '#') {
        struct trace_tok t = next_tok(c);
        int rest = next_tok(c).n != 0;
        if (t.n == 9 && memcmp(t.s, "#BEGIN_TB", 9) == 0 && !rest)
            return do_begin_tb(a);
        if (t.n == 7 && memcmp(t.s, "#END_TB", 7) == 0 && !rest)
            return do_end_tb(a);
        return 0; /* "#traces format = ..." and other comments */
    }
    if (trace_cur_lit(c, "thread block = "))
        return do_tb_id(a, c);
    if (trace_cur_lit(c, "cluster "))
        return do_cluster(a, c);
    if (trace_cur_lit(c, "warp = "))
        return do_warp(a, c);
    if (trace_cur_lit(c, "insts = "))
        return do_insts(a, c);
    return do_inst(a, c);
}

static void reset_pass(struct as *a)
{
    a->have_grid = a->have_block = a->lineinfo = 0;
    a->version = -1;
    a->body = a->geom_ok = 0;
    a->in_tb = a->have_tbid = a->have_warp = a->have_insts = 0;
    a->count = a->insts = 0;
    a->cur_state = 0;
    memset(&a->st, 0, sizeof a->st);
}

static int run_pass(struct as *a, struct trace_err *err)
{
    struct trace_cur c;
    reset_pass(a);
    trace_map_free(&a->kinds); /* empty again; each pass checks on its own */
    trace_text_init(&a->t, a->buf, a->len, err);
    while (trace_text_line(&a->t, &c)) {
        a->st.lines++;
        int r = do_line(a, &c);
        if (r != 0)
            return r;
    }
    if (a->in_tb) {
        trace_err_set(err, a->tb_line, a->tb_off, "#BEGIN_TB without #END_TB");
        return TRACE_EINPUT;
    }
    return 0;
}

int trace_accelsim_read(const char *buf, size_t len, const struct trace_accelsim_opts *o,
                        trace_sink sink, void *ctx, struct trace_err *err)
{
    struct trace_accelsim_opts def;
    trace_accelsim_opts_init(&def);
    if (o && o->spaces == 0) {
        def = *o;
        def.spaces = TRACE_SPACE_GLOBAL;
    }
    struct as a = {
        .buf = buf, .len = len, .o = (o && o->spaces) ? o : &def, .sink = sink, .ctx = ctx};
    trace_map_init(&a.warps, a.o->max_warps ? a.o->max_warps : AS_MAX_WARPS_DEFAULT);
    trace_pcflags_init(&a.dep1, 0);
    trace_map_init(&a.kinds, TRACE_PCFLAGS_MAX_DEFAULT);
    int r = 0;
    if (a.o->dep == TRACE_ACCELSIM_DEP_DERIVE)
        r = run_pass(&a, err);
    trace_map_free(&a.warps);
    if (r == 0) {
        a.emitting = 1;
        r = run_pass(&a, err);
    }
    trace_pcflags_free(&a.dep1);
    trace_map_free(&a.kinds);
    if (a.o->stats)
        *a.o->stats = a.st;
    return r;
}
