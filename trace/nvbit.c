/*
 * NVBit mem_trace reader, the SASS opcode classifier and the geometry
 * resolution both text readers use.
 *
 * DESIGN
 * See nvbit.h. One pass over the buffer, one line at a time (lines, the
 * cursor and the errors' positions come from scan.h): a line is
 * recognised by its "MEMTRACE: CTX <ctx> - " prefix and then parsed
 * completely into a struct access (32 addresses) before anything is derived
 * from it, so a bad line never yields part of its records. Deriving runs in
 * a fixed order: launch filter, geometry (dims, CTA bounds), warp index,
 * instruction counting, selection by opcode, width, PC, flag, then one record
 * per active lane.
 * The readers' state is three maps: opcode hash -> synthetic PC, PC -> flag
 * (the first flag a PC gets is kept, so the one-flag-per-PC rule holds by
 * construction), and (CTA, warp) -> rank and instruction count, which is only
 * filled when a policy needs it.
 */
#include "trace/nvbit.h"

#include <string.h>

#include "trace/params.h"
#include "trace/scan.h"

/* ---- SASS opcode facts ------------------------------------------------ */

struct op_base {
    const char *name;
    unsigned space;
    enum trace_op_kind kind;
};

/* Base opcodes (the text before the first '.') that access data memory. */
static const struct op_base op_bases[] = {
    {"LDG", TRACE_SPACE_GLOBAL, TRACE_OP_LOAD},    {"STG", TRACE_SPACE_GLOBAL, TRACE_OP_STORE},
    {"LD", TRACE_SPACE_GLOBAL, TRACE_OP_LOAD},     {"ST", TRACE_SPACE_GLOBAL, TRACE_OP_STORE},
    {"ATOM", TRACE_SPACE_ATOMIC, TRACE_OP_ATOMIC}, {"ATOMG", TRACE_SPACE_ATOMIC, TRACE_OP_ATOMIC},
    {"RED", TRACE_SPACE_ATOMIC, TRACE_OP_REDUCE},  {"REDG", TRACE_SPACE_ATOMIC, TRACE_OP_REDUCE},
    {"LDS", TRACE_SPACE_SHARED, TRACE_OP_LOAD},    {"LDSM", TRACE_SPACE_SHARED, TRACE_OP_LOAD},
    {"STS", TRACE_SPACE_SHARED, TRACE_OP_STORE},   {"ATOMS", TRACE_SPACE_SHARED, TRACE_OP_ATOMIC},
    {"LDL", TRACE_SPACE_LOCAL, TRACE_OP_LOAD},     {"STL", TRACE_SPACE_LOCAL, TRACE_OP_STORE},
};

static int all_digits(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

/* Bits named by a suffix like "64", "U16", "F32"; 0 if it names none. */
static unsigned suffix_bits(const char *s, size_t n)
{
    if (n >= 2 && (s[0] == 'U' || s[0] == 'S' || s[0] == 'F' || s[0] == 'B') &&
        all_digits(s + 1, n - 1)) {
        s++;
        n--;
    }
    if (!all_digits(s, n) || n > 4)
        return 0;
    unsigned b = 0;
    for (size_t i = 0; i < n; i++)
        b = b * 10 + (unsigned)(s[i] - '0');
    return b ? b : 1; /* "0" is a size suffix of no valid width */
}

static uint32_t width_from_suffixes(const char *s, const char *end)
{
    while (s < end) {
        const char *dot = memchr(s, '.', (size_t)(end - s));
        const char *te = dot ? dot : end;
        unsigned bits = suffix_bits(s, (size_t)(te - s));
        if (bits)
            return (bits % 8 == 0 && trace_width_valid(bits / 8)) ? bits / 8 : 0;
        s = dot ? dot + 1 : end;
    }
    return 4;
}

void trace_sass_classify(const char *op, size_t len, struct trace_sass_op *out)
{
    const char *end = op + len;
    const char *dot = memchr(op, '.', len);
    size_t blen = (size_t)((dot ? dot : end) - op);
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < sizeof op_bases / sizeof op_bases[0]; i++) {
        if (strlen(op_bases[i].name) == blen && memcmp(op_bases[i].name, op, blen) == 0) {
            out->space = op_bases[i].space;
            out->kind = op_bases[i].kind;
            out->width = width_from_suffixes(dot ? dot + 1 : end, end);
            return;
        }
    }
}

int trace_pc_kind_check(struct trace_map *m, uint64_t pc, enum trace_op_kind kind, uint64_t line,
                        uint64_t *first_line)
{
    uint64_t v;
    if (trace_map_get(m, pc, &v)) {
        if ((v & 7) == (uint64_t)kind)
            return 0;
        *first_line = v >> 3;
        return 1;
    }
    int r = trace_map_put(m, pc, line << 3 | (uint64_t)kind);
    return r == 1 ? 2 : r;
}

static const char *kind_name(enum trace_op_kind k)
{
    switch (k) {
    case TRACE_OP_LOAD:
        return "a load";
    case TRACE_OP_STORE:
        return "a store";
    case TRACE_OP_ATOMIC:
        return "an atomic";
    case TRACE_OP_REDUCE:
        return "a reduction";
    default:
        return "not a memory access";
    }
}

int trace_sass_is_opcode(const char *op, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        char ch = op[i];
        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
              ch == '.' || ch == '_'))
            return 0;
    }
    return len > 0;
}

/* ---- geometry (both readers) -------------------------------------------- */

static int dims_zero(const struct trace_dim3 *d)
{
    return d->x == 0 && d->y == 0 && d->z == 0;
}

static int dims_equal(const struct trace_dim3 *a, const struct trace_dim3 *b)
{
    return a->x == b->x && a->y == b->y && a->z == b->z;
}

/* Threads per block, checking that no dim is 0 and that grid x block has
 * fewer than 2^64 threads. 0: done; -1: a dim is 0; -2: too many. */
static int dims_threads(const struct trace_dim3 *grid, const struct trace_dim3 *block,
                        uint64_t *threads_per_block)
{
    uint64_t blocks, threads, total;
    if (!grid->x || !grid->y || !grid->z || !block->x || !block->y || !block->z)
        return -1;
    if (__builtin_mul_overflow((uint64_t)grid->x * grid->y, (uint64_t)grid->z, &blocks) ||
        __builtin_mul_overflow((uint64_t)block->x * block->y, (uint64_t)block->z, &threads) ||
        __builtin_mul_overflow(blocks, threads, &total))
        return -2;
    *threads_per_block = threads;
    return 0;
}

int trace_geom_resolve(struct trace_geom *g, const struct trace_geom *traced,
                       const struct trace_geom *given, const char *whose,
                       const struct trace_text *t, const char *at, struct trace_read_stats *st)
{
    int gave = !dims_zero(&given->grid) || !dims_zero(&given->block);
    if (traced && gave &&
        !(dims_equal(&given->grid, &traced->grid) && dims_equal(&given->block, &traced->block)))
        return trace_text_bad(t, at, "%s grid/block dims differ from the ones given", whose);
    if (!traced && !gave)
        return 1;
    g->grid = (traced ? traced : given)->grid;
    g->block = (traced ? traced : given)->block;
    int r = dims_threads(&g->grid, &g->block, &g->threads);
    if (r == -1)
        return trace_text_bad(t, at, "grid and block dims must all be at least 1");
    if (r == -2)
        return trace_text_bad(t, at, "grid x block has more than 2^64 threads");
    if (g->threads > TRACE_MAX_THREADS_PER_BLOCK)
        return trace_text_bad(t, at, "a block of %llu threads: a CUDA block has at most %u",
                              (unsigned long long)g->threads, TRACE_MAX_THREADS_PER_BLOCK);
    g->warps = (g->threads + 31) / 32;
    st->grid = g->grid;
    st->block = g->block;
    st->threads_per_block = g->threads;
    return 0;
}

/* ---- reader state ------------------------------------------------------ */

#define NV_ADDRS 32
#define NV_MAX_OPCODES ((size_t)1 << 16)
#define NV_MAX_WARPS_DEFAULT ((size_t)1 << 22)
#define NV_WARP_KEY_MAX 0xfffeu                  /* largest warp number the warp map can key */
#define NV_CTA_KEY_MAX (((uint64_t)1 << 47) - 1) /* largest CTA index the warp map can key */

/* One parsed MEMTRACE access line. */
struct access {
    uint64_t launch;
    uint32_t cta[3];
    uint32_t warp;
    int has_pc;
    uint64_t pc;
    const char *op;
    size_t oplen;
    uint64_t addr[NV_ADDRS];
};

struct nv {
    struct trace_text t; /* the line being read */
    const struct trace_nvbit_opts *o;
    trace_sink sink;
    void *ctx;
    int records_seen; /* a MEMTRACE LAUNCH or access line was read */
    int have_ll;    /* a LAUNCH line was read: */
    uint64_t ll_id; /*   its grid launch id and dims */
    struct trace_geom ll;
    int chosen; /* the launch being read is known: */
    uint64_t launch;
    struct trace_map opcodes; /* FNV-1a of the opcode -> synthetic PC */
    struct trace_map
        warps; /* cta << 16 | warp -> rank << 32 | count; cta << 16 | 0xffff -> ranks */
    struct trace_pcflags pcs; /* pc -> the flag its records carry */
    struct trace_map kinds;   /* pc given in the text -> line << 3 | access kind */
    struct trace_read_stats st;
};

void trace_nvbit_opts_init(struct trace_nvbit_opts *o)
{
    memset(o, 0, sizeof *o);
    o->launch = -1;
    o->spaces = TRACE_SPACE_GLOBAL;
    o->load_dep = 1;
}

/* Optional "pc N - " (or "PC N - ") before the opcode. */
static int parse_pc_field(struct nv *n, struct trace_cur *c, struct access *a)
{
    if (!trace_cur_lit(c, "pc ") && !trace_cur_lit(c, "PC "))
        return 0;
    if (!trace_cur_u64(c, 1, &a->pc) || !trace_cur_lit(c, " - "))
        return trace_text_bad(&n->t, c->p, "expected \"pc N - \" with N decimal or 0x-hex");
    a->has_pc = 1;
    return 0;
}

static int parse_addrs(struct nv *n, struct trace_cur *c, struct access *a)
{
    int k = 0;
    for (;;) {
        const char *s = c->p;
        trace_cur_skip_blanks(c);
        if (c->p == c->e)
            break;
        if (k > 0 && c->p == s)
            return trace_text_bad(&n->t, c->p, "addresses must be separated by spaces");
        if (k == NV_ADDRS)
            return trace_text_bad(&n->t, c->p, "more than %d addresses", NV_ADDRS);
        if (c->e - c->p < 2 || c->p[0] != '0' || (c->p[1] != 'x' && c->p[1] != 'X') ||
            !trace_cur_u64(c, 1, &a->addr[k]))
            return trace_text_bad(&n->t, c->p,
                                  "address %d: expected a 0x-hex number of at most 64 bits", k);
        k++;
    }
    if (k != NV_ADDRS)
        return trace_text_bad(&n->t, c->p, "expected %d addresses, found %d", NV_ADDRS, k);
    return 0;
}

/* c is just past "grid_launch_id ". */
static int parse_access(struct nv *n, struct trace_cur *c, struct access *a)
{
    memset(a, 0, sizeof *a);
    if (!trace_cur_u64(c, 0, &a->launch))
        return trace_text_bad(&n->t, c->p, "expected the grid launch id");
    if (!trace_cur_lit(c, " - CTA ") || !trace_cur_triple(c, a->cta))
        return trace_text_bad(&n->t, c->p, "expected \" - CTA x,y,z\"");
    if (!trace_cur_lit(c, " - warp ") || !trace_cur_u32(c, &a->warp) || !trace_cur_lit(c, " - "))
        return trace_text_bad(&n->t, c->p, "expected \" - warp w - \"");
    if (parse_pc_field(n, c, a) != 0)
        return TRACE_EINPUT;
    struct trace_tok op = trace_cur_word(c);
    if (!trace_sass_is_opcode(op.s, op.n))
        return trace_text_bad(&n->t, op.s, "expected an opcode");
    a->op = op.s;
    a->oplen = op.n;
    if (!trace_cur_lit(c, " - "))
        return trace_text_bad(&n->t, c->p, "expected \" - \" after the opcode");
    return parse_addrs(n, c, a);
}

/* ---- LAUNCH lines ------------------------------------------------------ */

/* The last occurrence of needle in [s, e) (the kernel name may hold anything). */
static const char *last_of(const char *s, const char *e, const char *needle)
{
    size_t k = strlen(needle);
    const char *found = NULL;
    for (const char *q = s; (size_t)(e - q) >= k; q++) {
        q = memmem(q, (size_t)(e - q), needle, k);
        if (!q)
            break;
        found = q;
    }
    return found;
}

/* c is just past "LAUNCH". */
static int parse_launch(struct nv *n, struct trace_cur *c)
{
    const char *f = last_of(c->p, c->e, " - grid launch id ");
    uint32_t g[3], b[3];
    uint64_t id;
    if (!f)
        return trace_text_bad(&n->t, c->p, "LAUNCH line without \" - grid launch id \"");
    c->p = f + strlen(" - grid launch id ");
    if (!trace_cur_u64(c, 0, &id) || !trace_cur_lit(c, " - grid size ") ||
        !trace_cur_triple(c, g) || !trace_cur_lit(c, " - block size ") || !trace_cur_triple(c, b))
        return trace_text_bad(&n->t, c->p,
                              "expected \"grid launch id N - grid size x,y,z - block size x,y,z\"");
    struct trace_dim3 gd = {g[0], g[1], g[2]}, bd = {b[0], b[1], b[2]};
    if (n->have_ll && n->ll_id == id &&
        !(dims_equal(&gd, &n->ll.grid) && dims_equal(&bd, &n->ll.block)))
        return trace_text_bad(&n->t, f,
                              "a second LAUNCH line for grid launch id %llu with other dims",
                              (unsigned long long)id);
    n->have_ll = 1;
    n->ll_id = id;
    n->ll.grid = gd;
    n->ll.block = bd;
    return 0;
}

/* ---- deriving ---------------------------------------------------------- */

/* The dims of launch id: its LAUNCH line, else the caller's. */
static int resolve_geom(struct nv *n, const char *at, uint64_t id, struct trace_geom *g)
{
    const struct trace_geom given = {.grid = n->o->grid, .block = n->o->block};
    const struct trace_geom *traced = n->have_ll && n->ll_id == id ? &n->ll : NULL;
    int r = trace_geom_resolve(g, traced, &given, "the LAUNCH line's", &n->t, at, &n->st);
    if (r == 1)
        return trace_text_bad(&n->t, at,
                              "no grid/block dims: no LAUNCH line for grid launch id %llu and "
                              "none given",
                              (unsigned long long)id);
    return r;
}

/* 1: the line is of the launch being read; 0: skip it; TRACE_EINPUT. */
static int select_launch(struct nv *n, const char *at, uint64_t id)
{
    if (n->o->launch >= 0)
        return id == (uint64_t)n->o->launch;
    if (!n->chosen) {
        n->chosen = 1;
        n->launch = id;
    }
    if (id != n->launch)
        return trace_text_bad(
            &n->t, at,
            "the trace holds more than one kernel launch (grid launch ids %llu and "
            "%llu): choose one",
            (unsigned long long)n->launch, (unsigned long long)id);
    return 1;
}

static int uses_warp_map(const struct nv *n)
{
    return n->o->warp == TRACE_NVBIT_WARP_SLOT || n->o->pc == TRACE_NVBIT_PC_OCCURRENCE;
}

/* Looks up (cta, printed warp) in the warp map: its rank in the CTA (new
 * warps get the next rank) and how many instructions it ran before. */
static int warp_entry(struct nv *n, const char *at, uint64_t cta, const struct access *a,
                      const struct trace_geom *g, uint64_t *rank, uint64_t *count)
{
    if (cta > NV_CTA_KEY_MAX || a->warp > NV_WARP_KEY_MAX)
        return trace_text_bad(&n->t, at, "CTA or warp number too large for this warp/pc policy");
    uint64_t key = cta << 16 | a->warp, v;
    if (!trace_map_get(&n->warps, key, &v)) {
        uint64_t next = 0, ck = cta << 16 | 0xffff;
        trace_map_get(&n->warps, ck, &next);
        if (n->o->warp == TRACE_NVBIT_WARP_SLOT && next >= g->warps)
            return trace_text_bad(&n->t, at, "CTA %u,%u,%u shows more than %llu distinct warps",
                                  a->cta[0], a->cta[1], a->cta[2], (unsigned long long)g->warps);
        if (trace_text_put_result(&n->t, trace_map_put(&n->warps, ck, next + 1), "warps") != 0)
            return TRACE_EINPUT;
        v = next << 32;
    }
    *rank = v >> 32;
    *count = v & 0xffffffffu;
    uint64_t counted = (v >> 32) << 32 | ((*count + 1) & 0xffffffffu);
    return trace_text_put_result(&n->t, trace_map_put(&n->warps, key, counted), "warps");
}

/* The warp's index in its CTA, and its count of earlier instructions. */
static int warp_index(struct nv *n, const char *at, uint64_t cta, const struct access *a,
                      const struct trace_geom *g, uint64_t *w, uint64_t *count)
{
    uint64_t rank = 0;
    *count = 0;
    if (uses_warp_map(n) && warp_entry(n, at, cta, a, g, &rank, count) != 0)
        return TRACE_EINPUT;
    if (n->o->warp == TRACE_NVBIT_WARP_SLOT) {
        *w = rank;
        return 0;
    }
    if (a->warp >= g->warps)
        return trace_text_bad(
            &n->t, at,
            "warp %u is not below the block's %llu warps (hardware slot ids? use the "
            "slot warp policy)",
            a->warp, (unsigned long long)g->warps);
    *w = a->warp;
    return 0;
}

static uint64_t fnv1a(const char *s, size_t k)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < k; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    return h;
}

static int derive_pc(struct nv *n, const struct access *a, uint64_t count, uint64_t *pc)
{
    if (a->has_pc) {
        *pc = a->pc;
        return 0;
    }
    if (n->o->pc == TRACE_NVBIT_PC_OCCURRENCE) {
        *pc = count * 16;
        return 0;
    }
    uint64_t h = fnv1a(a->op, a->oplen);
    if (trace_map_get(&n->opcodes, h, pc))
        return 0;
    *pc = (uint64_t)n->opcodes.count * 16;
    if (trace_text_put_result(&n->t, trace_map_put(&n->opcodes, h, *pc), "opcodes") != 0)
        return TRACE_EINPUT;
    if (n->o->opcode_pc)
        n->o->opcode_pc(n->o->opcode_pc_ctx, a->op, a->oplen, *pc);
    return 0;
}

static int derive_dep(struct nv *n, const struct trace_sass_op *op, uint64_t pc, uint32_t *dep)
{
    if (trace_pcflags_get(n->o->flags, pc, dep, NULL))
        return 0;
    if (trace_pcflags_get(&n->pcs, pc, dep, NULL))
        return 0;
    *dep =
        (op->kind == TRACE_OP_LOAD || op->kind == TRACE_OP_ATOMIC) ? (n->o->load_dep ? 1 : 0) : 0;
    /* pc is new to n->pcs: the set cannot conflict, only find the table full */
    return trace_text_put_result(&n->t, trace_pcflags_set(&n->pcs, pc, *dep, n->t.line, NULL),
                                 "PCs");
}

/* A PC the text gives must be one kind of access on every line. */
static int check_kind(struct nv *n, const struct access *a, const struct trace_sass_op *op)
{
    uint64_t first = 0;
    if (!a->has_pc)
        return 0;
    int r = trace_pc_kind_check(&n->kinds, a->pc, op->kind, n->t.line, &first);
    if (r == 1)
        return trace_text_bad(
            &n->t, a->op, "pc 0x%llx is %s here but another kind of access on line %llu",
            (unsigned long long)a->pc, kind_name(op->kind), (unsigned long long)first);
    return trace_text_put_result(&n->t, r, "PCs");
}

static int emit_lanes(struct nv *n, const char *at, const struct access *a,
                      const struct trace_geom *g, uint64_t base_tid, uint64_t w,
                      struct trace_rec *rec)
{
    for (int lane = 0; lane < NV_ADDRS; lane++) {
        if (a->addr[lane] && w * 32 + (uint64_t)lane >= g->threads)
            return trace_text_bad(
                &n->t, at,
                "lane %d of warp %llu has an address but the block has only %llu threads", lane,
                (unsigned long long)w, (unsigned long long)g->threads);
        struct trace_rec r = *rec;
        r.addr = a->addr[lane];
        if (a->addr[lane] && trace_text_rec_check(&n->t, at, &r))
            return TRACE_EINPUT;
    }
    for (int lane = 0; lane < NV_ADDRS; lane++) {
        if (!a->addr[lane])
            continue;
        rec->tid = base_tid + w * 32 + (uint64_t)lane;
        rec->addr = a->addr[lane];
        n->st.records++;
        int r = n->sink(n->ctx, rec);
        if (r != 0)
            return r;
    }
    return 0;
}

static int use_access(struct nv *n, const char *at, const struct access *a)
{
    struct trace_geom g = {0};
    n->st.instructions++;
    int r = select_launch(n, at, a->launch);
    if (r <= 0) {
        n->st.skipped += r == 0;
        return r;
    }
    if (resolve_geom(n, at, a->launch, &g) != 0)
        return TRACE_EINPUT;
    if (a->cta[0] >= g.grid.x || a->cta[1] >= g.grid.y || a->cta[2] >= g.grid.z)
        return trace_text_bad(&n->t, at, "CTA %u,%u,%u is outside the grid %u,%u,%u", a->cta[0],
                              a->cta[1], a->cta[2], g.grid.x, g.grid.y, g.grid.z);
    uint64_t cta = a->cta[0] + (uint64_t)g.grid.x * (a->cta[1] + (uint64_t)g.grid.y * a->cta[2]);
    uint64_t w = 0, count = 0;
    if (warp_index(n, at, cta, a, &g, &w, &count) != 0)
        return TRACE_EINPUT;
    struct trace_sass_op op;
    trace_sass_classify(a->op, a->oplen, &op);
    if (op.kind == TRACE_OP_NONE || !(op.space & n->o->spaces)) {
        n->st.skipped++;
        return 0;
    }
    if (!op.width)
        return trace_text_bad(&n->t, a->op,
                              "opcode %.*s names a width that is not 1, 2, 4, 8 or 16 bytes",
                              (int)a->oplen, a->op);
    struct trace_rec rec = {.width = op.width, .store = trace_op_writes(op.kind)};
    uint32_t dep = 0;
    if (derive_pc(n, a, count, &rec.pc) != 0 || check_kind(n, a, &op) != 0 ||
        derive_dep(n, &op, rec.pc, &dep) != 0)
        return TRACE_EINPUT;
    rec.dep = (uint8_t)dep;
    return emit_lanes(n, at, a, &g, cta * g.threads, w, &rec);
}

/* One line [c->p, c->e). */
static int do_line(struct nv *n, struct trace_cur *c)
{
    if (!trace_cur_lit(c, "MEMTRACE: CTX "))
        return 0;
    if (trace_cur_word(c).n == 0 || !trace_cur_lit(c, " - "))
        return 0; /* the tool's own diagnostics ("CTX 0x..., Inspecting ...") */
    const char *at = c->p;
    n->records_seen = 1;
    if (trace_cur_lit(c, "grid_launch_id ")) {
        struct access a;
        if (parse_access(n, c, &a) != 0)
            return TRACE_EINPUT;
        return use_access(n, at, &a);
    }
    if (trace_cur_lit(c, "LAUNCH") && (c->p == c->e || *c->p == ' '))
        return parse_launch(n, c);
    return trace_text_bad(&n->t, at, "unknown MEMTRACE record (expected grid_launch_id or LAUNCH)");
}

static int read_lines(struct nv *n)
{
    struct trace_cur c;
    while (trace_text_line(&n->t, &c)) {
        n->st.lines++;
        int r = do_line(n, &c);
        if (r != 0)
            return r;
    }
    if (!n->records_seen) { /* any text at all would otherwise read as a trace of nothing */
        trace_err_set(n->t.err, 1, 0, "no \"MEMTRACE: CTX ... - LAUNCH\" or access line: not the "
                                      "output of NVBit's mem_trace tool");
        return TRACE_EINPUT;
    }
    return 0;
}

int trace_nvbit_read(const char *buf, size_t len, const struct trace_nvbit_opts *o, trace_sink sink,
                     void *ctx, struct trace_err *err)
{
    struct trace_nvbit_opts def;
    trace_nvbit_opts_init(&def);
    struct nv n = {.o = o ? o : &def, .sink = sink, .ctx = ctx};
    trace_text_init(&n.t, buf, len, err);
    if (n.o->spaces == 0) {
        def = *n.o;
        def.spaces = TRACE_SPACE_GLOBAL;
        n.o = &def;
    }
    trace_map_init(&n.opcodes, NV_MAX_OPCODES);
    trace_map_init(&n.warps, n.o->max_warps ? n.o->max_warps : NV_MAX_WARPS_DEFAULT);
    trace_pcflags_init(&n.pcs, 0);
    trace_map_init(&n.kinds, TRACE_PCFLAGS_MAX_DEFAULT);
    int r = read_lines(&n);
    trace_map_free(&n.kinds);
    trace_map_free(&n.opcodes);
    trace_map_free(&n.warps);
    trace_pcflags_free(&n.pcs);
    if (n.o->stats)
        *n.o->stats = n.st;
    return r;
}
