/*
 * The dependency flag of each global load, from the PTX (the rule is in
 * ptx_instrument.h: is a destination register read before the thread's
 * next global access, on any path?).
 *
 * DESIGN
 * A depth-first walk over the statements from the load, one per load,
 * with a visited mark per statement so loops end: labels, directives and
 * braces fall through; a site ends the path (after its own operands are
 * checked: the next access may read the loaded value, a pointer chase);
 * ret and exit end it when unguarded; bra goes to its label, and a guarded
 * bra to its label and the next statement. A bra whose label is not found
 * (an indirect branch through brx.idx, say) ends the path. Registers are
 * matched as whole tokens (%r1 is not %r10). Cost: statements x loads.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "probes/ptx_stmt.h"

#define MAX_DEST 8

struct dests {
    const char *name[MAX_DEST];
    size_t len[MAX_DEST];
    size_t n;
};

static int reg_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '$';
}

/* 1 if text [a, b) mentions one of d's registers as a whole token. */
static int mentions(const char *t, size_t a, size_t b, const struct dests *d)
{
    for (size_t i = a; i < b; i++) {
        if (t[i] != '%')
            continue;
        size_t n = 1;
        while (i + n < b && reg_char(t[i + n]))
            n++;
        for (size_t k = 0; k < d->n; k++)
            if (d->len[k] == n && memcmp(t + i, d->name[k], n) == 0)
                return 1;
        i += n - 1;
    }
    return 0;
}

/* Instructions whose first operand is read, not written. */
static int first_operand_read(const char *t, const struct ptxs *s)
{
    static const char *const no_dest[] = {"st", "red", "bar", "barrier", "bra", "ret", "exit",
                                          "membar", "fence", "prefetch", "prefetchu", "call",
                                          "trap", "brkpt", "cp", "mbarrier", "wmma"};
    if (s->nops == 0 || t[s->op_at[0]] == '[')
        return 1;
    for (size_t i = 0; i < sizeof no_dest / sizeof no_dest[0]; i++)
        if (ptxs_op_is(s, no_dest[i]))
            return 1;
    return 0;
}

/* 1 if instruction s reads one of d's registers. */
static int reads(const char *t, const struct ptxs *s, const struct dests *d)
{
    struct dests g = *d;
    if (s->guard[0] && mentions(s->guard, 0, strlen(s->guard), &g))
        return 1;
    for (size_t i = first_operand_read(t, s) ? 0 : 1; i < s->nops; i++)
        if (mentions(t, s->op_at[i], s->op_at[i] + s->op_len[i], d))
            return 1;
    return 0;
}

/* The registers written by load s (its first operand, a vector's too). */
static void dests_of(const char *t, const struct ptxs *s, struct dests *d)
{
    d->n = 0;
    if (s->nops == 0)
        return;
    for (size_t i = s->op_at[0], e = i + s->op_len[0]; i < e && d->n < MAX_DEST; i++) {
        if (t[i] != '%')
            continue;
        size_t n = 1;
        while (i + n < e && reg_char(t[i + n]))
            n++;
        d->name[d->n] = t + i;
        d->len[d->n++] = n;
        i += n - 1;
    }
}

/* 1 if some path from statement `from` reads d before the next site. */
static int used_before_next(const char *t, const struct ptxs *st, size_t n, size_t from,
                            const struct dests *d, uint8_t *seen, size_t *stack)
{
    size_t top = 0;
    memset(seen, 0, n);
    stack[top++] = from;
    while (top) {
        size_t i = stack[--top];
        if (i >= n || seen[i])
            continue;
        seen[i] = 1;
        const struct ptxs *s = &st[i];
        if (s->kind != PTXS_INSN) {
            stack[top++] = i + 1;
            continue;
        }
        if (reads(t, s, d))
            return 1;
        if (s->site >= 0)
            continue;
        int guarded = s->guard[0] != '\0';
        if (ptxs_op_is(s, "ret") || ptxs_op_is(s, "exit")) {
            if (guarded)
                stack[top++] = i + 1;
        } else if (ptxs_op_is(s, "bra") || ptxs_op_is(s, "brx")) {
            if (s->target >= 0)
                stack[top++] = (size_t)s->target;
            if (guarded)
                stack[top++] = i + 1;
        } else {
            stack[top++] = i + 1;
        }
    }
    return 0;
}

void ptxi_dependency_flags(const char *ptx, const struct ptxs *st, size_t n,
                           struct ptxi_kernel *k)
{
    uint8_t *seen = malloc(n ? n : 1);
    size_t *stack = malloc((2 * n + 2) * sizeof *stack);
    for (size_t i = 0; i < n; i++) {
        const struct ptxs *s = &st[i];
        /* loads and atoms return a value; stores and reductions have no flag */
        if (s->site < 0 || k->sites[s->site].kind == PTXI_STORE || k->sites[s->site].kind == PTXI_REDUCE)
            continue;
        struct dests d;
        dests_of(ptx, s, &d);
        /* without memory for the walk, every load is taken as used (the safe side) */
        k->sites[s->site].dep =
            !seen || !stack || used_before_next(ptx, st, n, i + 1, &d, seen, stack);
    }
    free(seen);
    free(stack);
}
