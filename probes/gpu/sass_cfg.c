/*
 * SASS control flow (see sass_cfg.h for the method and its limits).
 *
 * DESIGN
 * Stages over the decoded text, each a function: leaders -> blocks ->
 * successors -> a depth-first walk (reachability and back edges) ->
 * predecessors -> loops (natural loops of the back edges, then their
 * nesting) -> skips -> groups and counts. Per-block and per-loop scratch
 * (back-edge marks, loop bodies as one byte per block) lives in struct
 * build and is freed at the end; struct sass_cfg keeps only the answer.
 */
#include "probes/gpu/sass_cfg.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "probes/gpu/sass.h"
#include "probes/gpu/sass_branch.h"
#include "util/errf.h"

struct build {
    struct sass_cfg *cfg;
    const uint8_t *text;
    size_t size;
    char *leader;                    /* per instruction */
    int *block_of;                   /* per instruction */
    int *pred, *pred_at;             /* predecessors of block b: pred[pred_at[b] .. pred_at[b+1]) */
    char *retreat;                   /* per block and successor: 1 for a back edge */
    char *body;                      /* loop l's body: body[l * nblocks + b] */
    size_t *body_size;
    unsigned loads_pending;          /* scoreboards a global load set, not yet waited on */
    char *err;
    size_t errlen;
};

static struct sass_insn insn(const struct build *b, size_t i)
{
    return sass_decode(b->text, i * SASS_INSN_BYTES);
}

static int is_op(const struct sass_insn *in, const char *mnemonic)
{
    char buf[SASS_MNEMONIC_MAX];
    return strcmp(sass_mnemonic(in, buf), mnemonic) == 0;
}

static int guarded(const struct sass_insn *in)
{
    return sass_field(in, SASS_PRED) != SASS_PT || sass_field(in, SASS_PRED_NEG);
}

static int oom(struct build *b) { return errf(b->err, b->errlen, "out of memory"); }

/* The branch target of instruction i as an instruction index; -1 with err. */
static long target_index(struct build *b, size_t i, const struct sass_insn *in)
{
    int64_t t;
    if (sass_branch_target(in, b->cfg->sm, &t) < 0)
        return errf(b->err, b->errlen, "branch at 0x%x: no branch layout for sm_%u", in->offset,
                    b->cfg->sm);
    if (t < 0 || (uint64_t)t >= b->size)
        return errf(b->err, b->errlen, "branch at 0x%zx goes to %lld, outside the %zu-byte text",
                    i * SASS_INSN_BYTES, (long long)t, b->size);
    if (t % SASS_INSN_BYTES)
        return errf(b->err, b->errlen, "branch at 0x%zx goes to 0x%llx, between instructions",
                    i * SASS_INSN_BYTES, (long long)t);
    return (long)(t / SASS_INSN_BYTES);
}

/* ---- blocks ---------------------------------------------------------------------- */

static int find_leaders(struct build *b)
{
    size_t n = b->cfg->ninsns;
    b->leader[0] = 1;
    for (size_t i = 0; i < n; i++) {
        struct sass_insn in = insn(b, i);
        int ends = is_op(&in, "EXIT") || is_op(&in, "RET");
        if (is_op(&in, "BRA")) {
            long t = target_index(b, i, &in);
            if (t < 0)
                return -1;
            b->leader[t] = 1;
            ends = 1;
        }
        if (ends && i + 1 < n)
            b->leader[i + 1] = 1;
    }
    return 0;
}

static int make_blocks(struct build *b)
{
    struct sass_cfg *c = b->cfg;
    for (size_t i = 0; i < c->ninsns; i++)
        c->nblocks += b->leader[i] != 0;
    c->blocks = calloc(c->nblocks, sizeof *c->blocks);
    if (!c->blocks)
        return oom(b);
    int k = -1;
    for (size_t i = 0; i < c->ninsns; i++) {
        if (b->leader[i]) {
            c->blocks[++k] = (struct sass_block){.start = (uint32_t)(i * SASS_INSN_BYTES),
                                                 .succ = {-1, -1}, .loop = -1, .skip = -1};
        }
        c->blocks[k].end = (uint32_t)((i + 1) * SASS_INSN_BYTES);
        b->block_of[i] = k;
    }
    return 0;
}

/* Successors from each block's last instruction. */
static void link_blocks(struct build *b)
{
    struct sass_cfg *c = b->cfg;
    for (size_t k = 0; k < c->nblocks; k++) {
        struct sass_block *bl = &c->blocks[k];
        size_t last = bl->end / SASS_INSN_BYTES - 1;
        struct sass_insn in = insn(b, last);
        int next = k + 1 < c->nblocks ? (int)k + 1 : -1, falls = 1;
        if (is_op(&in, "BRA")) {
            int64_t t;
            sass_branch_target(&in, c->sm, &t);   /* checked by find_leaders */
            bl->succ[1] = b->block_of[t / SASS_INSN_BYTES];
            falls = sass_branch_conditional(&in);
        } else if (is_op(&in, "EXIT") || is_op(&in, "RET")) {
            falls = guarded(&in);
        }
        bl->succ[0] = falls ? next : -1;
    }
}

/* A depth-first walk from the entry: marks the reachable blocks and the
 * retreating edges, those to a block still on the walk's path. In a
 * reducible graph they are exactly the loops' back edges; a branch back to
 * a block that is no ancestor (an out-of-line block rejoining) is not one. */
static int walk_blocks(struct build *b)
{
    struct sass_cfg *c = b->cfg;
    int *stack = malloc(c->nblocks * sizeof *stack), *next = calloc(c->nblocks, sizeof *next),
        top = 0;
    char *on_path = calloc(c->nblocks, 1);
    b->retreat = calloc(2 * c->nblocks, 1);
    int rc = stack && next && on_path && b->retreat ? 0 : oom(b);
    if (rc == 0) {
        c->blocks[0].reachable = on_path[0] = 1;
        stack[top++] = 0;
    }
    while (top > 0) {
        int k = stack[top - 1], s = next[k]++;
        if (s == 2) {
            on_path[k] = 0;
            top--;
            continue;
        }
        int t = c->blocks[k].succ[s];
        if (t < 0)
            continue;
        if (on_path[t])
            b->retreat[2 * k + s] = 1;
        else if (!c->blocks[t].reachable) {
            c->blocks[t].reachable = on_path[t] = 1;
            stack[top++] = t;
        }
    }
    free(stack);
    free(next);
    free(on_path);
    return rc;
}

/* Predecessor lists of the reachable blocks, as one array and offsets. */
static int find_predecessors(struct build *b)
{
    struct sass_cfg *c = b->cfg;
    b->pred_at = calloc(c->nblocks + 1, sizeof *b->pred_at);
    b->pred = calloc(2 * c->nblocks, sizeof *b->pred);
    if (!b->pred_at || !b->pred)
        return oom(b);
    for (size_t k = 0; k < c->nblocks; k++)
        for (int s = 0; s < 2; s++)
            if (c->blocks[k].reachable && c->blocks[k].succ[s] >= 0)
                b->pred_at[c->blocks[k].succ[s] + 1]++;
    for (size_t k = 0; k < c->nblocks; k++)
        b->pred_at[k + 1] += b->pred_at[k];
    int *fill = calloc(c->nblocks, sizeof *fill);
    if (!fill)
        return oom(b);
    for (size_t k = 0; k < c->nblocks; k++)
        for (int s = 0; s < 2; s++) {
            int t = c->blocks[k].succ[s];
            if (c->blocks[k].reachable && t >= 0)
                b->pred[b->pred_at[t] + fill[t]++] = (int)k;
        }
    free(fill);
    return 0;
}

/* ---- loops ----------------------------------------------------------------------- */

/* 1 if block k goes back to h by a retreating edge. */
static int back_edge(const struct build *b, size_t k, size_t h)
{
    const struct sass_block *bl = &b->cfg->blocks[k];
    return (b->retreat[2 * k] && bl->succ[0] == (int)h) ||
           (b->retreat[2 * k + 1] && bl->succ[1] == (int)h);
}

/* The natural loop of header h into body (one byte a block); its latch offset. */
static uint32_t natural_loop(struct build *b, size_t h, char *body, int *stack)
{
    const struct sass_cfg *c = b->cfg;
    int top = 0;
    uint32_t latch = 0;
    body[h] = 1;
    for (size_t k = 0; k < c->nblocks; k++)
        if (back_edge(b, k, h)) {
            latch = c->blocks[k].end - SASS_INSN_BYTES;
            if (!body[k]) {
                body[k] = 1;
                stack[top++] = (int)k;
            }
        }
    while (top > 0) {
        int x = stack[--top];
        for (int p = b->pred_at[x]; p < b->pred_at[x + 1]; p++)
            if (!body[b->pred[p]]) {
                body[b->pred[p]] = 1;
                stack[top++] = b->pred[p];
            }
    }
    return latch;
}

static int add_loop(struct build *b, size_t h, uint32_t latch, const char *body)
{
    struct sass_cfg *c = b->cfg;
    struct sass_loop *l = &c->loops[c->nloops];
    if (body[0] && h != 0)
        return errf(b->err, b->errlen, "loop at 0x%x is irreducible (entered other than through "
                    "its header)", c->blocks[h].start);
    memset(l, 0, sizeof *l);
    l->head = c->blocks[h].start;
    l->latch = latch;
    l->parent = l->skip = -1;
    size_t size = 0;
    for (size_t k = 0; k < c->nblocks; k++)
        if (body[k]) {
            size++;
            if (c->blocks[k].end > l->end)
                l->end = c->blocks[k].end;
        }
    b->body_size[c->nloops++] = size;
    return 0;
}

/* 1 if some block goes back to block h. */
static int is_header(const struct build *b, size_t h)
{
    for (size_t k = 0; k < b->cfg->nblocks; k++)
        if (back_edge(b, k, h))
            return 1;
    return 0;
}

static int find_loops(struct build *b)
{
    struct sass_cfg *c = b->cfg;
    size_t nb = c->nblocks, headers = 0;
    for (size_t h = 0; h < nb; h++)
        headers += is_header(b, h);
    if (headers == 0)
        return 0;
    c->loops = calloc(headers, sizeof *c->loops);
    b->body = calloc(headers * nb, 1);
    b->body_size = calloc(headers, sizeof *b->body_size);
    int *stack = malloc(nb * sizeof *stack);
    int rc = c->loops && b->body && b->body_size && stack ? 0 : oom(b);
    for (size_t h = 0; h < nb && rc == 0; h++) {
        if (!is_header(b, h))
            continue;
        char *body = b->body + c->nloops * nb;
        uint32_t latch = natural_loop(b, h, body, stack);
        rc = add_loop(b, h, latch, body);
    }
    free(stack);
    return rc;
}

static int holds(const struct build *b, size_t outer, size_t block)
{
    return b->body[outer * b->cfg->nblocks + block] != 0;
}

/* Parents and depths, and each block's innermost loop. Once no loop is
 * irreducible (add_loop), two natural loops with different headers are
 * disjoint or one holds the other, so holding a loop's header is holding
 * the loop. */
static void nest_loops(struct build *b)
{
    struct sass_cfg *c = b->cfg;
    for (size_t i = 0; i < c->nloops; i++) {
        size_t hi = (size_t)b->block_of[c->loops[i].head / SASS_INSN_BYTES];
        for (size_t o = 0; o < c->nloops; o++) {
            if (o == i || !holds(b, o, hi))
                continue;
            int p = c->loops[i].parent;
            if (p < 0 || b->body_size[o] < b->body_size[p])
                c->loops[i].parent = (int)o;
        }
    }
    for (size_t i = 0; i < c->nloops; i++)
        for (int p = (int)i; p >= 0; p = c->loops[p].parent)
            c->loops[i].depth++;
    for (size_t k = 0; k < c->nblocks; k++)
        for (size_t l = 0; l < c->nloops; l++)
            if (holds(b, l, k) &&
                (c->blocks[k].loop < 0 || b->body_size[l] < b->body_size[c->blocks[k].loop]))
                c->blocks[k].loop = (int)l;
}

/* ---- skips ----------------------------------------------------------------------- */

/* 1 if no block of [from, to) is entered from code at or after `to` (an
 * out-of-line block rejoining): then the range runs only when something
 * before it leads there, and jumping over it means it does not run. */
static int only_entered_from_above(const struct build *b, uint32_t from, uint32_t to)
{
    const struct sass_cfg *c = b->cfg;
    for (int k = b->block_of[from / SASS_INSN_BYTES]; k < (int)c->nblocks; k++) {
        if (c->blocks[k].start >= to)
            break;
        for (int p = b->pred_at[k]; p < b->pred_at[k + 1]; p++)
            if (c->blocks[b->pred[p]].start >= to)
                return 0;
    }
    return 1;
}

static int find_skips(struct build *b)
{
    struct sass_cfg *c = b->cfg;
    c->skips = calloc(c->nblocks, sizeof *c->skips);   /* at most one a block */
    if (!c->skips)
        return oom(b);
    for (size_t k = 0; k < c->nblocks; k++) {
        const struct sass_block *bl = &c->blocks[k];
        int t = bl->succ[1];
        uint32_t branch = bl->end - SASS_INSN_BYTES;
        if (!bl->reachable || t < 0 || c->blocks[t].start <= bl->end ||
            c->blocks[t].loop != bl->loop ||
            !only_entered_from_above(b, bl->end, c->blocks[t].start))
            continue;
        struct sass_insn in = insn(b, branch / SASS_INSN_BYTES);
        c->skips[c->nskips++] = (struct sass_skip){
            .branch = branch, .from = bl->end, .to = c->blocks[t].start,
            .conditional = sass_branch_conditional(&in), .loop = bl->loop, .parent = -1};
    }
    return 0;
}

/* The smallest skip of region `loop` holding offset at (other than `self`), or -1. */
static int innermost_skip(const struct sass_cfg *c, int loop, uint32_t at, int self)
{
    int best = -1;
    for (size_t s = 0; s < c->nskips; s++) {
        const struct sass_skip *k = &c->skips[s];
        if ((int)s == self || k->loop != loop || at < k->from || at >= k->to)
            continue;
        if (self >= 0 && k->to < c->skips[self].to)
            continue;                                   /* must hold all of self */
        if (best < 0 || k->to - k->from < c->skips[best].to - c->skips[best].from)
            best = (int)s;
    }
    return best;
}

static void place_skips(struct sass_cfg *c)
{
    for (size_t s = 0; s < c->nskips; s++)
        c->skips[s].parent = innermost_skip(c, c->skips[s].loop, c->skips[s].from, (int)s);
    for (size_t k = 0; k < c->nblocks; k++)
        c->blocks[k].skip = innermost_skip(c, c->blocks[k].loop, c->blocks[k].start, -1);
    for (size_t l = 0; l < c->nloops; l++)
        c->loops[l].skip = innermost_skip(c, c->loops[l].parent, c->loops[l].head, -1);
}

/* ---- groups and counts ---------------------------------------------------------- */

static struct sass_group *group_for(struct sass_cfg *c, int block, int guard, int neg,
                                    uint32_t at)
{
    for (size_t g = c->ngroups; g-- > 0 && c->groups[g].block == block;)
        if (c->groups[g].guard == guard && c->groups[g].guard_neg == neg)
            return &c->groups[g];
    struct sass_group *gr = &c->groups[c->ngroups++];
    *gr = (struct sass_group){.at = at, .block = block, .loop = c->blocks[block].loop,
                              .skip = c->blocks[block].skip, .guard = guard, .guard_neg = neg};
    return gr;
}

/* 1 when in waits on a scoreboard of a pending global load (the end of a
 * memory period, sass_cfg.h); then updates what is pending. */
static int waits_on_load(struct build *b, const struct sass_insn *in, const char *mnemonic,
                         enum sass_class cls)
{
    unsigned pending = b->loads_pending, wbar = sass_field(in, SASS_WBAR);
    int waits = pending && ((sass_field(in, SASS_WAIT) & pending) || !strcmp(mnemonic, "DEPBAR"));
    if (waits)
        b->loads_pending = 0;
    /* only loads and returning atomics of the class set one; a scoreboard counts
     * every instruction that set it, so another's setting it too leaves the load
     * pending on it */
    if (wbar != SASS_SCOREBOARD_NONE && cls == SASS_CLASS_GLOBAL)
        b->loads_pending |= 1u << wbar;
    return waits;
}

static void count_insn(struct build *b, int block, const struct sass_insn *in)
{
    struct sass_cfg *c = b->cfg;
    char buf[SASS_MNEMONIC_MAX];
    const char *m = sass_mnemonic(in, buf);
    /* A branch's or EXIT's guard picks the path, not whether it issues: it
     * joins the block's unguarded group. */
    int control = strcmp(m, "BRA") == 0 || strcmp(m, "EXIT") == 0;
    int g = guarded(in) && !control ? (int)sass_field(in, SASS_PRED) : -1;
    int neg = g >= 0 && sass_field(in, SASS_PRED_NEG);
    enum sass_class cls = sass_class_of(m);
    int waits = waits_on_load(b, in, m, cls);
    struct sass_group *gr = group_for(c, block, g, neg, in->offset);
    gr->count[cls]++;
    gr->waits += waits;
    int loop = c->blocks[block].loop;
    if (loop >= 0) {
        c->loops[loop].count[cls]++;
        c->loops[loop].waits += waits;
    } else {
        c->straight[cls]++;
        c->straight_waits += waits;
    }
    c->unknown += !sass_opcode_known(in);
    c->calls += strcmp(m, "CALL") == 0;
    c->guarded_exits += strcmp(m, "EXIT") == 0 && guarded(in);
}

static int count_all(struct build *b)
{
    struct sass_cfg *c = b->cfg;
    c->groups = calloc(c->ninsns, sizeof *c->groups);   /* at most one an instruction */
    if (!c->groups)
        return oom(b);
    for (size_t k = 0; k < c->nblocks; k++) {
        const struct sass_block *bl = &c->blocks[k];
        for (uint32_t off = bl->start; off < bl->end; off += SASS_INSN_BYTES) {
            struct sass_insn in = sass_decode(b->text, off);
            if (bl->reachable)
                count_insn(b, (int)k, &in);
            else
                c->unreachable++;
        }
    }
    return 0;
}

/* ---- the API ---------------------------------------------------------------------- */

static int build_all(struct build *b)
{
    struct sass_cfg *c = b->cfg;
    if (c->ninsns == 0 || b->size % SASS_INSN_BYTES)
        return errf(b->err, b->errlen, "the text is %zu bytes: not a whole number of 16-byte "
                    "instructions, or none", b->size);
    if (!(c->sm == 90 || (c->sm >= 75 && c->sm < 90)))
        return errf(b->err, b->errlen, "sm_%u: no branch layout known (sm_75 to sm_90)", c->sm);
    b->leader = calloc(c->ninsns, 1);
    b->block_of = calloc(c->ninsns, sizeof *b->block_of);
    if (!b->leader || !b->block_of)
        return oom(b);
    if (find_leaders(b) < 0 || make_blocks(b) < 0)
        return -1;
    link_blocks(b);
    if (walk_blocks(b) < 0 || find_predecessors(b) < 0 || find_loops(b) < 0)
        return -1;
    nest_loops(b);
    if (find_skips(b) < 0)
        return -1;
    place_skips(c);
    return count_all(b);
}

int sass_cfg_build(struct sass_cfg *cfg, const uint8_t *text, size_t size, unsigned sm,
                   char *err, size_t errlen)
{
    assert(cfg != NULL && (text != NULL || size == 0));
    memset(cfg, 0, sizeof *cfg);
    cfg->sm = sm;
    cfg->ninsns = size / SASS_INSN_BYTES;
    struct build b = {.cfg = cfg, .text = text, .size = size, .err = err, .errlen = errlen};
    int rc = build_all(&b);
    free(b.leader);
    free(b.block_of);
    free(b.pred);
    free(b.pred_at);
    free(b.retreat);
    free(b.body);
    free(b.body_size);
    if (rc < 0)
        sass_cfg_free(cfg);
    return rc;
}

void sass_cfg_free(struct sass_cfg *cfg)
{
    if (!cfg)
        return;
    free(cfg->blocks);
    free(cfg->loops);
    free(cfg->skips);
    free(cfg->groups);
    memset(cfg, 0, sizeof *cfg);
}
