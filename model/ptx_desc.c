/*
 * PTX -> kernel description (see ptx_desc.h for the method and its limits).
 *
 * DESIGN
 * Three stages over one parsed list of instructions:
 *   parse    check that the text is a PTX module (.version, then .target),
 *            then the entry's body into instructions (guard, opcode,
 *            operands) and labels; directives are skipped;
 *   values   one forward pass: per register, a constant (only for registers
 *            written once, or at the point of a given write) and the affine
 *            coefficients on the thread index; the value each instruction
 *            writes is kept, so a loop can ask for its induction variable's
 *            value before the loop;
 *   loops    backward branches -> [label, branch] ranges with trip counts;
 *            an instruction's multiplicity is the product over the ranges
 *            holding it;
 * then every instruction adds its multiplicity to its class, and global
 * accesses are classified by their address's coefficients.
 */
#include "model/ptx_desc.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/errf.h"

#define MAX_OPS 8
/* an operand: a parameter's name as long as PD_PARAM_LEN allows, with its
 * brackets and an offset ("[name+8]"); a shorter one cut such names and
 * lost the parameter a loop bound was loaded from */
#define OP_LEN (PD_PARAM_LEN + 32)
#define NAME_LEN 64
#define MAX_TRIPS 1000000000LL
#define WARP 32

struct insn {
    char guard[NAME_LEN];
    int guard_neg;
    char op[NAME_LEN];
    char arg[MAX_OPS][OP_LEN];
    int nargs;
};

struct label {
    char name[NAME_LEN];
    int at;                     /* index of the instruction it precedes */
};

/* A value: a constant, and/or affine in the thread index with coefficients
 * (bytes or units per thread step) on x, y, z; and the entry's parameters
 * whose values were not given that it was computed from (bit i: parameter
 * i, the first 64), so a loop that cannot be counted can say which value
 * is missing. */
struct val {
    int is_const;
    long long c;
    int affine;
    long long coef[3];
    unsigned long long needs;
    /* lin: exactly lc + lt . tid + lb . ctaid (a grid-stride loop's start) */
    int lin;
    long long lc, lt[3], lb[3];
};

struct reg {
    char name[NAME_LEN];
    int defs;
    int *at;                    /* the instructions writing it, in program order */
    struct val v;
};

/* A branch: where it is and the instruction its label precedes. */
struct branch {
    int at, target;
};

struct loop {
    int from, to;               /* instruction indices, inclusive */
    long long trips;
    char label[NAME_LEN];
};

/* A parameter of the entry, in declaration order, and the value given for it. */
struct eparam {
    char name[PD_PARAM_LEN];
    int given;
    long long value;
};

struct pd {
    const struct pd_launch *launch;
    struct insn *in;
    int n, cap;
    struct label *lb;
    int nlb, caplb;
    struct reg *regs;
    int nregs, capregs;
    struct val *written;        /* per instruction: the value it wrote */
    int cur;                    /* the instruction whose operands are being read; -1: none */
    struct branch *br;
    int nbr;
    unsigned char *dead;        /* per instruction: skipped by a branch the launch decides */
    struct loop *loops;
    int nloops;
    long long smem;             /* static shared bytes laid out so far (the entry's own,
                                   then the module's it names) */
    int shared_vars;
    struct eparam *ep;          /* the entry's parameters */
    int nep, capep;
    char entry[PD_PARAM_LEN];   /* the entry's name */
    struct pd_desc *out;
    char *err;
    size_t errlen;
    int forward_branches, decided_branches, generic_access, local_access, nonaffine, macro_ops;
};

static void *grow(void *ptr, int *cap, size_t elem)
{
    int ncap = *cap ? *cap * 2 : 64;
    void *q = realloc(ptr, (size_t)ncap * elem);
    if (q)
        *cap = ncap;
    return q;
}

/* ---- parsing ------------------------------------------------------------------ */

/* Copies s[0..n) into dst (at most len-1 bytes), trimmed. */
static void copy_trim(char *dst, size_t len, const char *s, size_t n)
{
    while (n && isspace((unsigned char)*s))
        s++, n--;
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    if (n >= len)
        n = len - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

/* Splits operands at commas outside braces. */
static void split_args(struct insn *in, const char *s)
{
    int depth = 0;
    const char *start = s;
    in->nargs = 0;
    for (const char *q = s;; q++) {
        if (*q == '{')
            depth++;
        else if (*q == '}')
            depth--;
        if ((*q == ',' && depth == 0) || *q == '\0') {
            if (in->nargs < MAX_OPS && q > start)
                copy_trim(in->arg[in->nargs++], OP_LEN, start, (size_t)(q - start));
            if (*q == '\0')
                return;
            start = q + 1;
        }
    }
}

static int add_label(struct pd *p, const char *name, size_t n)
{
    if (p->nlb == p->caplb) {
        struct label *q = grow(p->lb, &p->caplb, sizeof *q);
        if (!q)
            return errf(p->err, p->errlen, "out of memory");
        p->lb = q;
    }
    copy_trim(p->lb[p->nlb].name, NAME_LEN, name, n);
    p->lb[p->nlb++].at = p->n;
    return 0;
}

static int add_insn(struct pd *p, const char *s)
{
    struct insn in;
    memset(&in, 0, sizeof in);
    if (*s == '@') {
        s++;
        in.guard_neg = *s == '!';
        s += in.guard_neg;
        size_t g = strcspn(s, " \t\n");
        copy_trim(in.guard, NAME_LEN, s, g);
        s += g;
    }
    while (isspace((unsigned char)*s))
        s++;
    size_t o = strcspn(s, " \t\n");
    copy_trim(in.op, NAME_LEN, s, o);
    split_args(&in, s + o);
    if (p->n == p->cap) {
        struct insn *q = grow(p->in, &p->cap, sizeof *q);
        if (!q)
            return errf(p->err, p->errlen, "out of memory");
        p->in = q;
    }
    p->in[p->n++] = in;
    return 0;
}

static int type_bytes(const char *op);
static void strip_comments(char *s);

/* ---- static shared memory -------------------------------------------------------- */

/* Whether the declaration s (a statement, without its ';') is of the shared
 * state space: ".shared" as a word among its leading directives. */
static int is_shared_decl(const char *s)
{
    for (const char *q = strstr(s, ".shared"); q; q = strstr(q + 1, ".shared"))
        if ((q == s || isspace((unsigned char)q[-1])) &&
            (isspace((unsigned char)q[7]) || q[7] == '\0'))
            return 1;
    return 0;
}

static int ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '$' || c == '%';
}

/* Whether text names the variable name as a whole word. */
static int names_var(const char *text, const char *name)
{
    size_t len = strlen(name);
    for (const char *q = strstr(text, name); q && len; q = strstr(q + 1, name))
        if ((q == text || !ident_char(q[-1])) && !ident_char(q[len]))
            return 1;
    return 0;
}

/* The bytes of the declarator at s ("name", "name[16]", "name[16][33]"), elem
 * bytes each, its name into name; -1 when it is not sized (name[]: dynamic). */
static long long declarator(const char *s, long long elem, char *name, size_t len)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strcspn(s, " \t\n[=");
    copy_trim(name, len, s, n);
    long long bytes = elem;
    for (const char *q = strchr(s + n, '['); q; q = strchr(q, '[')) {
        char *end;
        long long dim = strtoll(q + 1, &end, 0);
        if (end == q + 1 || dim < 0 || (dim && bytes > (1LL << 40) / dim))
            return -1;
        bytes *= dim;
        q = end;
    }
    return name[0] ? bytes : -1;
}

/* Lays out one shared declaration (".shared .align 4 .b8 name[1024]", ".shared
 * .f32 tile[32][33]", ".extern .shared ... dyn[]": dynamic, not static) after
 * what p->smem holds, at its alignment (declared, else its element's size);
 * only when want names a variable it declares, if want is not NULL (the
 * module's variables count for the entries that use them). */
static void shared_decl(struct pd *p, const char *s, const char *want)
{
    char mods[NAME_LEN * 2] = "", name[PD_PARAM_LEN];
    long long align = 0;
    const char *q = s;
    if (strstr(s, ".extern"))
        return;
    for (;;) { /* the directives: ".shared", ".align N", ".v4", ".f32"... */
        while (isspace((unsigned char)*q))
            q++;
        size_t n = strcspn(q, " \t\n");
        if (*q != '.')
            break;
        if (n == 6 && !strncmp(q, ".align", 6)) {
            char *end;
            align = strtoll(q + 6, &end, 0);
            q = end;
            continue;
        }
        if (strlen(mods) + n < sizeof mods)
            strncat(mods, q, n);
        q += n;
    }
    long long elem = type_bytes(mods);
    if (align <= 0)
        align = elem;
    for (const char *d = q; d && *d; d = strchr(d, ',') ? strchr(d, ',') + 1 : NULL) {
        long long bytes = declarator(d, elem, name, sizeof name);
        if (bytes < 0 || (want && !names_var(want, name)))
            continue;
        p->smem = (p->smem + align - 1) / align * align + bytes;
        p->shared_vars++;
    }
}

/* The module's own shared variables (declared outside every function) that
 * the entry's body names: they are the entry's too. */
static void module_shared(struct pd *p, const char *ptx, const char *body)
{
    char *t = strdup(ptx);
    if (!t)
        return;
    strip_comments(t);
    int depth = 0;
    char *start = t;
    for (char *q = t; *q; q++) {
        if (*q == '{')
            depth++;
        else if (*q == '}' && depth > 0 && --depth == 0)
            start = q + 1;
        else if (*q == ';' && depth == 0) {
            *q = '\0';
            if (is_shared_decl(start)) {
                /* from its line's start: the module's header directives before
                 * it (.version, .target) end with no ';' */
                char *decl = strstr(start, ".shared");
                while (decl > start && decl[-1] != '\n')
                    decl--;
                shared_decl(p, decl, body);
            }
            start = q + 1;
        }
    }
    free(t);
}

/* One statement (text between semicolons): labels, then a directive or an instruction. */
static int statement(struct pd *p, char *s)
{
    for (;;) {
        while (isspace((unsigned char)*s) || *s == '{' || *s == '}')
            s++;
        size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$%.");
        if (n == 0 || s[n] != ':' || *s == '%' || *s == '.')
            break;
        if (add_label(p, s, n) < 0)
            return -1;
        s += n + 1;
    }
    if (*s == '.' && is_shared_decl(s))
        shared_decl(p, s, NULL);
    if (*s == '\0' || *s == '.')
        return 0;
    return add_insn(p, s);
}

/* Where the comment that starts at q ends (its newline stays, or the end of
 * the text when it is not closed); NULL when no comment starts at q. */
static const char *comment_end(const char *q)
{
    if (q[0] == '/' && q[1] == '/')
        return q + strcspn(q, "\n");
    if (q[0] == '/' && q[1] == '*') {
        const char *e = strstr(q + 2, "*/");
        return e ? e + 2 : q + strlen(q);
    }
    return NULL;
}

/* Removes comments in place. */
static void strip_comments(char *s)
{
    for (char *q = s; *q; q++) {
        const char *e = comment_end(q);
        if (e)
            memset(q, ' ', (size_t)(e - q));
    }
}

/* s past blanks and comments. */
static const char *skip_blank(const char *s)
{
    for (const char *e;; s = e) {
        while (isspace((unsigned char)*s))
            s++;
        if (!(e = comment_end(s)))
            return s;
    }
}

/* s past "MAJOR.MINOR", or NULL when s does not start with one. */
static const char *after_version_number(const char *s)
{
    size_t major = strspn(s, "0123456789");
    if (!major || s[major] != '.')
        return NULL;
    size_t minor = strspn(s + major + 1, "0123456789");
    return minor ? s + major + 1 + minor : NULL;
}

/* The text after directive name at s and its blanks, or NULL when s does
 * not start with that directive. */
static const char *after_directive(const char *s, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(s, name, n) != 0 || !isspace((unsigned char)s[n]))
        return NULL;
    return skip_blank(s + n);
}

/* PTX says what it is in its first two directives: a module begins with
 * .version MAJOR.MINOR, then .target (PTX ISA, "PTX Module Directives";
 * nvcc -ptx writes both). Text that does not begin so is not PTX whatever
 * it holds, and is refused here rather than described: a word the parser
 * does not know would count as an integer instruction, and a prediction
 * of a text file would look like one of a kernel. 0, or -1 after errf(). */
static int check_module(struct pd *p, const char *ptx)
{
    const char *s = after_directive(skip_blank(ptx), ".version");
    if (!s || !(s = after_version_number(s)))
        return errf(p->err, p->errlen,
                    "not PTX: a PTX module begins with '.version MAJOR.MINOR' (as nvcc -ptx "
                    "writes it), and this text does not");
    s = after_directive(skip_blank(s), ".target");
    if (!s || !isalpha((unsigned char)s[0]))
        return errf(p->err, p->errlen,
                    "not PTX: '.version' must be followed by '.target' and the target "
                    "(such as '.target sm_90')");
    return 0;
}

static int add_param(struct pd *p, const char *decl, size_t n)
{
    /* ".param .u64 .ptr .align 8 NAME" or ".param .align 4 .b8 NAME[16]": the last word */
    while (n && (isspace((unsigned char)decl[n - 1])))
        n--;
    const char *open = memchr(decl, '[', n);
    if (open)
        n = (size_t)(open - decl);
    while (n && isspace((unsigned char)decl[n - 1]))
        n--;
    size_t start = n;
    while (start && !isspace((unsigned char)decl[start - 1]))
        start--;
    if (start == n)
        return 0;
    if (p->nep == p->capep) {
        struct eparam *q = grow(p->ep, &p->capep, sizeof *q);
        if (!q)
            return errf(p->err, p->errlen, "out of memory");
        p->ep = q;
    }
    struct eparam *e = &p->ep[p->nep++];
    memset(e, 0, sizeof *e);
    copy_trim(e->name, sizeof e->name, decl + start, n - start);
    return 0;
}

/* The entry's parameter list, "(.param ..., .param ...)", when s (just after
 * the entry's name) starts with one. */
static int entry_params(struct pd *p, const char *s)
{
    s = skip_blank(s);
    if (*s != '(')
        return 0;
    const char *start = ++s;
    for (const char *e; *s && *s != ')'; s++)
        if ((e = comment_end(s)) != NULL)
            s = e - 1;
    if (*s != ')')
        return errf(p->err, p->errlen, "the parameter list of %s is not closed", p->entry);
    char *list = malloc((size_t)(s - start) + 1);
    if (!list)
        return errf(p->err, p->errlen, "out of memory");
    memcpy(list, start, (size_t)(s - start));
    list[s - start] = '\0';
    strip_comments(list);
    int rc = 0;
    for (char *q = list, *comma; rc == 0 && q; q = comma ? comma + 1 : NULL) {
        comma = strchr(q, ',');
        rc = add_param(p, q, comma ? (size_t)(comma - q) : strlen(q));
    }
    free(list);
    return rc;
}

/* Finds the entry; returns its body (malloc'd) or NULL after errf(). */
static char *entry_body(struct pd *p, const char *ptx, const char *entry)
{
    const char *e = ptx;
    for (;;) {
        e = strstr(e, ".entry");
        if (!e)
            break;
        const char *name = e + 6;
        while (isspace((unsigned char)*name))
            name++;
        size_t n = strcspn(name, " \t\n(");
        if (!entry || (strlen(entry) == n && strncmp(name, entry, n) == 0))
            break;
        e = name + n;
    }
    if (!e) {
        errf(p->err, p->errlen,
                   entry ? "the PTX has no entry '%s'" : "the PTX has no entry%s",
                   entry ? entry : "");
        return NULL;
    }
    const char *name = e + 6;
    while (isspace((unsigned char)*name))
        name++;
    size_t n = strcspn(name, " \t\n(");
    copy_trim(p->entry, sizeof p->entry, name, n);
    if (entry_params(p, name + n) < 0)
        return NULL;
    const char *open = strchr(e, '{');
    if (!open) {
        errf(p->err, p->errlen, "the entry has no body");
        return NULL;
    }
    int depth = 0;
    const char *q = open;
    for (; *q; q++) {
        depth += *q == '{';
        depth -= *q == '}';
        if (depth == 0)
            break;
    }
    if (!*q) {
        errf(p->err, p->errlen, "the entry's body is not closed");
        return NULL;
    }
    size_t len = (size_t)(q - open - 1);
    char *body = malloc(len + 1);
    if (!body) {
        errf(p->err, p->errlen, "out of memory");
        return NULL;
    }
    memcpy(body, open + 1, len);
    body[len] = '\0';
    return body;
}

/* The index of the entry's parameter name, or -1. */
static int entry_param(const struct pd *p, const char *name)
{
    for (int i = 0; i < p->nep; i++)
        if (!strcmp(p->ep[i].name, name))
            return i;
    return -1;
}

/* The entry's parameters, by index from 0, as "0 NAME, 1 NAME, ..." (cut short
 * with "..." when they do not fit). */
static void list_params(const struct pd *p, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    if (p->nep == 0)
        snprintf(buf, len, "it has none");
    for (int i = 0; i < p->nep && used < len; i++) {
        int n = snprintf(buf + used, len - used, "%s%d %s", i ? ", " : "", i, p->ep[i].name);
        if (n < 0 || (size_t)n >= len - used) {
            snprintf(buf + used, len - used, "%s...", i ? ", " : "");
            break;
        }
        used += (size_t)n;
    }
}

/* The values the launch gives, on the entry's parameters: a name is the
 * parameter's, or its index from 0 (as trace capture takes them); one the
 * entry does not have, or one given twice, is refused (out->param names it). */
static int bind_params(struct pd *p)
{
    char list[200];
    for (int k = 0; k < p->launch->nparams; k++) {
        const char *name = p->launch->params[k].name;
        int i = entry_param(p, name);
        char *end;
        long idx = strtol(name, &end, 10);
        if (i < 0 && isdigit((unsigned char)name[0]) && !*end && idx < p->nep)
            i = (int)idx;
        if (i < 0 || p->ep[i].given) {
            snprintf(p->out->param, sizeof p->out->param, "%s", name);
            list_params(p, list, sizeof list);
            if (i >= 0)
                return errf(p->err, p->errlen, "parameter %d (%s) of %s is given twice", i,
                            p->ep[i].name, p->entry);
            return errf(p->err, p->errlen,
                        "'%s' is not a parameter of %s (give one by name or by index from 0: %s)",
                        name, p->entry, list);
        }
        p->ep[i].given = 1;
        p->ep[i].value = p->launch->params[k].value;
    }
    return 0;
}

static int parse(struct pd *p, const char *ptx, const char *entry)
{
    if (check_module(p, ptx) != 0)
        return -1;
    char *body = entry_body(p, ptx, entry);
    if (!body)
        return -1;
    strip_comments(body);
    module_shared(p, ptx, body);
    int rc = 0;
    char *s = body;
    for (char *semi; rc == 0 && (semi = strchr(s, ';')) != NULL; s = semi + 1) {
        *semi = '\0';
        rc = statement(p, s);
    }
    if (rc == 0) {
        /* labels after the last instruction */
        while (*s && rc == 0) {
            char *colon = strchr(s, ':');
            if (!colon)
                break;
            *colon = '\0';
            char *name = s;
            while (*name && (isspace((unsigned char)*name) || *name == '{' || *name == '}'))
                name++;
            if (*name)
                rc = add_label(p, name, strlen(name));
            s = colon + 1;
        }
    }
    free(body);
    if (rc == 0 && p->n == 0)
        return errf(p->err, p->errlen, "the entry has no instructions");
    return rc == 0 ? bind_params(p) : rc;
}

/* ---- values ------------------------------------------------------------------- */

static const struct val unknown = {0, 0, 0, {0, 0, 0}, 0, 0, 0, {0, 0, 0}, {0, 0, 0}};

static struct val uniform(void)
{
    struct val v = {0, 0, 1, {0, 0, 0}, 0, 0, 0, {0, 0, 0}, {0, 0, 0}};
    return v;
}

static struct val constant(long long c)
{
    struct val v = {1, c, 1, {0, 0, 0}, 0, 1, c, {0, 0, 0}, {0, 0, 0}};
    return v;
}

static struct reg *find_reg(struct pd *p, const char *name)
{
    for (int i = 0; i < p->nregs; i++)
        if (strcmp(p->regs[i].name, name) == 0)
            return &p->regs[i];
    return NULL;
}

static struct reg *get_reg(struct pd *p, const char *name)
{
    struct reg *r = find_reg(p, name);
    if (r)
        return r;
    if (p->nregs == p->capregs) {
        struct reg *q = grow(p->regs, &p->capregs, sizeof *q);
        if (!q)
            return NULL;
        p->regs = q;
    }
    r = &p->regs[p->nregs++];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    r->v = unknown;
    return r;
}

static int parse_int(const char *s, long long *v)
{
    char *end;
    if (!*s || (s[0] == '0' && (s[1] == 'f' || s[1] == 'F' || s[1] == 'd' || s[1] == 'D')))
        return -1;
    *v = strtoll(s, &end, 0);
    if (*end == 'U' || *end == 'u')
        end++;
    return *end == '\0' ? 0 : -1;
}

static long long launch_dim(const unsigned *d, char axis)
{
    return axis == 'x' ? d[0] : axis == 'y' ? d[1] : d[2];
}

static struct val special(struct pd *p, const char *s)
{
    const char *dot = strchr(s, '.');
    char axis = dot ? dot[1] : 'x';
    size_t n = dot ? (size_t)(dot - s) : strlen(s);
    struct val v = uniform();
    if (n == 4 && strncmp(s, "%tid", 4) == 0 && axis >= 'x' && axis <= 'z') {
        v.coef[axis - 'x'] = 1;
        v.lin = 1;
        v.lt[axis - 'x'] = 1;
        return v;
    }
    if (n == 6 && strncmp(s, "%ctaid", 6) == 0 && axis >= 'x' && axis <= 'z') {
        v.lin = 1;
        v.lb[axis - 'x'] = 1;
        return v;
    }
    if (n == 5 && strncmp(s, "%ntid", 5) == 0)
        return constant(launch_dim(p->launch->block, axis));
    if (n == 7 && strncmp(s, "%nctaid", 7) == 0)
        return constant(launch_dim(p->launch->grid, axis));
    if (strncmp(s, "%laneid", 7) == 0)
        return unknown;
    return v; /* %warpid, %smid, %clock...: the same for every lane of a warp */
}

/* Whether the write of r at r->at[k] (its last before instruction i in
 * program order) is the only one that can reach i: it is not predicated,
 * no branch taken after an earlier write lands between it and i (passing
 * it by), and no backward branch after a later write (at i or beyond)
 * lands there either (bringing that write back round a loop). */
static int sole_reaching(const struct pd *p, const struct reg *r, int k, int i)
{
    int d = r->at[k];
    if (p->in[d].guard[0])
        return 0;
    for (int b = 0; b < p->nbr; b++) {
        const struct branch *x = &p->br[b];
        if (x->target <= d || x->target > i)
            continue;
        if (k > 0 && x->at > r->at[0] && x->at < d)
            return 0;
        if (k + 1 < r->defs && x->at >= r->at[k + 1])
            return 0;
    }
    return 1;
}

/* The instruction of r's one write that reaches instruction i, or -1 when
 * none does or more than one can. */
static int sole_write(const struct pd *p, const struct reg *r, int i)
{
    int k = -1;
    for (int j = 0; j < r->defs && r->at[j] < i; j++)
        k = j;
    return k >= 0 && sole_reaching(p, r, k, i) ? r->at[k] : -1;
}

/* A register's value as read at the current instruction: the value its one
 * reaching write gave, constant included; else what the register holds
 * over the whole entry (not a constant once written twice). */
static struct val reaching(const struct pd *p, const struct reg *r)
{
    int d = p->cur >= 0 && r->defs > 1 && r->at ? sole_write(p, r, p->cur) : -1;
    return d >= 0 ? p->written[d] : r->v;
}

static struct val operand(struct pd *p, const char *s);

/* The value of operand s as read by instruction `at`. */
static struct val operand_at(struct pd *p, const char *s, int at)
{
    int was = p->cur;
    p->cur = at;
    struct val v = operand(p, s);
    p->cur = was;
    return v;
}

/* The value of an operand as read (at p->cur). */
static struct val operand(struct pd *p, const char *s)
{
    long long c;
    if (*s == '-' && parse_int(s + 1, &c) == 0)
        return constant(-c);
    if (parse_int(s, &c) == 0)
        return constant(c);
    if (*s == '%' && strchr(s, '.'))
        return special(p, s);
    if (*s == '%') {
        struct reg *r = find_reg(p, s);
        return r ? reaching(p, r) : unknown;
    }
    return uniform(); /* a symbol: parameter or variable address */
}

static struct val add_vals(struct val a, struct val b, int sign)
{
    struct val v = unknown;
    v.needs = a.needs | b.needs;
    if (a.affine && b.affine) {
        v.affine = 1;
        for (int i = 0; i < 3; i++)
            v.coef[i] = a.coef[i] + sign * b.coef[i];
    }
    if (a.is_const && b.is_const) {
        v.is_const = 1;
        v.c = a.c + sign * b.c;
    }
    if (a.lin && b.lin) {
        v.lin = 1;
        v.lc = a.lc + sign * b.lc;
        for (int i = 0; i < 3; i++) {
            v.lt[i] = a.lt[i] + sign * b.lt[i];
            v.lb[i] = a.lb[i] + sign * b.lb[i];
        }
    }
    return v;
}

static int is_uniform(struct val a)
{
    return a.affine && !a.coef[0] && !a.coef[1] && !a.coef[2];
}

static struct val scale(struct val a, long long k)
{
    struct val v = a;
    for (int i = 0; i < 3; i++) {
        v.coef[i] *= k;
        v.lt[i] *= k;
        v.lb[i] *= k;
    }
    v.c *= k;
    v.lc *= k;
    return v;
}

static struct val mul_vals(struct val a, struct val b)
{
    struct val v;
    if (a.is_const && b.is_const)
        v = constant(a.c * b.c);
    else if (b.is_const)
        v = scale(a, b.c);
    else if (a.is_const)
        v = scale(b, a.c);
    else
        v = is_uniform(a) && is_uniform(b) ? uniform() : unknown;
    v.needs = a.needs | b.needs;
    return v;
}

/* Any other operation: uniform if all operands are, else unknown. */
static struct val other_op(struct pd *p, const struct insn *in, int first)
{
    struct val v = uniform();
    for (int i = first; i < in->nargs; i++) {
        struct val a = operand(p, in->arg[i]);
        if (!is_uniform(a))
            v.affine = 0;
        v.needs |= a.needs;
    }
    if (v.affine)
        return v;
    struct val u = unknown;
    u.needs = v.needs;
    return u;
}

static const char *base_of(const char *op, char *buf, size_t len)
{
    size_t n = strcspn(op, ".");
    copy_trim(buf, len, op, n);
    return buf;
}

static int has_mod(const char *op, const char *mod)
{
    size_t m = strlen(mod);
    for (const char *q = strchr(op, '.'); q; q = strchr(q + 1, '.'))
        if (strncmp(q + 1, mod, m) == 0 && (q[1 + m] == '.' || q[1 + m] == '\0'))
            return 1;
    return 0;
}

/* Two constants through a shift, division or logic operation; else `otherwise`. */
static struct val fold(const char *b, long long x, long long y, struct val otherwise)
{
    if (!strcmp(b, "shr") && y >= 0 && y < 63)
        return constant(x >> y);
    if (!strcmp(b, "div") && y != 0)
        return constant(x / y);
    if (!strcmp(b, "rem") && y != 0)
        return constant(x % y);
    if (!strcmp(b, "and"))
        return constant(x & y);
    if (!strcmp(b, "or"))
        return constant(x | y);
    if (!strcmp(b, "xor"))
        return constant(x ^ y);
    if (!strcmp(b, "min"))
        return constant(x < y ? x : y);
    if (!strcmp(b, "max"))
        return constant(x > y ? x : y);
    return otherwise;
}

/* The value an arithmetic instruction writes to its first operand. */
static struct val evaluate(struct pd *p, const struct insn *in)
{
    char b[NAME_LEN];
    base_of(in->op, b, sizeof b);
    struct val x = in->nargs > 1 ? operand(p, in->arg[1]) : unknown;
    struct val y = in->nargs > 2 ? operand(p, in->arg[2]) : unknown;
    if (!strcmp(b, "mov") || !strcmp(b, "cvta") || (!strcmp(b, "cvt") && !has_mod(in->op, "rn") &&
                                                    !has_mod(in->op, "rz") && !has_mod(in->op, "rzi")))
        return x;
    if (!strcmp(b, "add"))
        return add_vals(x, y, 1);
    if (!strcmp(b, "sub"))
        return add_vals(x, y, -1);
    if (!strcmp(b, "mul") && !has_mod(in->op, "hi"))
        return mul_vals(x, y);
    if (!strcmp(b, "mad") && !has_mod(in->op, "hi") && in->nargs > 3)
        return add_vals(mul_vals(x, y), operand(p, in->arg[3]), 1);
    if (!strcmp(b, "shl") && y.is_const && y.c >= 0 && y.c < 62)
        return scale(x, 1LL << y.c);
    if (!strcmp(b, "ld")) {
        if (has_mod(in->op, "param") && in->nargs > 1) {
            char name[OP_LEN];
            copy_trim(name, sizeof name, in->arg[1] + 1, strcspn(in->arg[1] + 1, "+]"));
            struct val v = uniform();
            int i = entry_param(p, name);
            if (i >= 0 && p->ep[i].given)
                return constant(p->ep[i].value);
            if (i >= 0 && i < 64)
                v.needs = 1ULL << i;
            return v;
        }
        return unknown; /* a loaded value may differ per lane */
    }
    if (!strcmp(b, "atom"))
        return unknown; /* the old value at the address: loaded */
    if (x.is_const && y.is_const && in->nargs == 3)
        return fold(b, x.c, y.c, other_op(p, in, 1));
    return other_op(p, in, 1);
}

/* 1 if the instruction writes its first operand (a register). */
static int writes_first(const struct insn *in)
{
    char b[NAME_LEN];
    base_of(in->op, b, sizeof b);
    static const char *const no_dest[] = {"st", "bar", "barrier", "bra", "ret", "exit", "red",
                                          "membar", "fence", "prefetch", "trap", "call", NULL};
    for (const char *const *q = no_dest; *q; q++)
        if (!strcmp(b, *q))
            return 0;
    return in->nargs > 0 && in->arg[0][0] == '%';
}

/* The destination register name (the first of "p|q"). */
static void dest_name(const struct insn *in, char *buf, size_t len)
{
    copy_trim(buf, len, in->arg[0], strcspn(in->arg[0], "|"));
}

/* Every register's writes, in program order (reg.defs, reg.at). */
static int count_defs(struct pd *p)
{
    char name[NAME_LEN];
    int *reg_of = malloc((p->n > 0 ? (size_t)p->n : 1) * sizeof *reg_of);
    if (!reg_of)
        return errf(p->err, p->errlen, "out of memory");
    for (int i = 0; i < p->n; i++) {
        reg_of[i] = -1;
        if (!writes_first(&p->in[i]))
            continue;
        dest_name(&p->in[i], name, sizeof name);
        struct reg *r = get_reg(p, name);
        if (!r) {
            free(reg_of);
            return errf(p->err, p->errlen, "out of memory");
        }
        r->defs++;
        reg_of[i] = (int)(r - p->regs);
    }
    for (int k = 0; k < p->nregs; k++) {
        p->regs[k].at = malloc((size_t)p->regs[k].defs * sizeof *p->regs[k].at);
        if (!p->regs[k].at) {
            free(reg_of);
            return errf(p->err, p->errlen, "out of memory");
        }
        p->regs[k].defs = 0;
    }
    for (int i = 0; i < p->n; i++)
        if (reg_of[i] >= 0) {
            struct reg *r = &p->regs[reg_of[i]];
            r->at[r->defs++] = i;
        }
    free(reg_of);
    return 0;
}

static int label_at(const struct pd *p, const char *name)
{
    for (int i = 0; i < p->nlb; i++)
        if (!strcmp(p->lb[i].name, name))
            return p->lb[i].at;
    return -1;
}

/* Every branch with the instruction its label precedes. */
static int list_branches(struct pd *p)
{
    p->br = malloc((p->n > 0 ? (size_t)p->n : 1) * sizeof *p->br);
    if (!p->br)
        return errf(p->err, p->errlen, "out of memory");
    for (int i = 0; i < p->n; i++) {
        if (strncmp(p->in[i].op, "bra", 3) || p->in[i].nargs < 1)
            continue;
        int at = label_at(p, p->in[i].arg[0]);
        if (at < 0)
            return errf(p->err, p->errlen, "branch to unknown label %s", p->in[i].arg[0]);
        p->br[p->nbr++] = (struct branch){i, at};
    }
    return 0;
}

static int values(struct pd *p)
{
    char name[NAME_LEN];
    if (count_defs(p) < 0 || list_branches(p) < 0)
        return -1;
    p->written = calloc(p->n > 0 ? (size_t)p->n : 1, sizeof *p->written);
    if (!p->written)
        return errf(p->err, p->errlen, "out of memory");
    for (int i = 0; i < p->n; i++) {
        if (!writes_first(&p->in[i]))
            continue;
        p->cur = i;
        struct val v = evaluate(p, &p->in[i]);
        p->written[i] = v;
        dest_name(&p->in[i], name, sizeof name);
        struct reg *r = find_reg(p, name);
        if (r->defs > 1)
            v.is_const = v.lin = 0; /* a register written twice has no one value */
        r->v = v;
    }
    p->cur = -1;
    return 0;
}

/* ---- loops ---------------------------------------------------------------------- */

/* The last instruction in [from, to) writing reg, or -1. */
static int last_def(const struct pd *p, const char *reg, int from, int to)
{
    char name[NAME_LEN];
    for (int i = to - 1; i >= from; i--) {
        if (!writes_first(&p->in[i]))
            continue;
        dest_name(&p->in[i], name, sizeof name);
        if (!strcmp(name, reg))
            return i;
    }
    return -1;
}

enum rel { REL_LT, REL_LE, REL_GT, REL_GE, REL_NE, REL_EQ, REL_NONE };

/* The relation a setp's modifiers name (unsigned ones as their signed twins). */
static enum rel relation_of(const char *op)
{
    return has_mod(op, "lt") || has_mod(op, "lo")   ? REL_LT
           : has_mod(op, "le") || has_mod(op, "ls") ? REL_LE
           : has_mod(op, "gt") || has_mod(op, "hi") ? REL_GT
           : has_mod(op, "ge") || has_mod(op, "hs") ? REL_GE
           : has_mod(op, "ne")                      ? REL_NE
           : has_mod(op, "eq")                      ? REL_EQ
                                                    : REL_NONE;
}

static int holds(enum rel r, long long a, long long b)
{
    return r == REL_LT ? a < b : r == REL_LE ? a <= b : r == REL_GT ? a > b
         : r == REL_GE ? a >= b : r == REL_NE ? a != b : a == b;
}

static int compare(const char *op, long long a, long long b, int *ok)
{
    enum rel r = relation_of(op);
    *ok = r != REL_NONE;
    return *ok && holds(r, a, b);
}

/* floor(a / b) for b > 0. */
static long long floordiv(long long a, long long b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* The step of reg inside [from, to]: "add reg, reg, K" (or sub), K an
 * immediate or a register constant there (a grid-stride loop's ntid x
 * nctaid); its index or -1. */
static int find_step(struct pd *p, const char *reg, int from, int to, long long *step)
{
    for (int i = from; i <= to; i++) {
        const struct insn *in = &p->in[i];
        char b[NAME_LEN];
        base_of(in->op, b, sizeof b);
        if ((strcmp(b, "add") && strcmp(b, "sub")) || in->nargs != 3 || strcmp(in->arg[0], reg))
            continue;
        int other = !strcmp(in->arg[1], reg) ? 2 : !strcmp(in->arg[2], reg) ? 1 : 0;
        if (!other || (other == 1 && b[0] == 's'))
            continue;
        struct val k = operand_at(p, in->arg[other], i);
        if (!k.is_const)
            continue;
        *step = b[0] == 's' ? -k.c : k.c;
        return i;
    }
    return -1;
}

struct counted {
    const char *op;
    int iv_first;               /* the induction variable is setp's first operand */
    long long init, step, bound;
    int step_first;             /* stepped before the comparison */
    int neg;                    /* the branch is taken when the predicate is false */
    struct val start;           /* the start when it differs by thread (lin), else unused */
};

static long long simulate(const struct counted *c, int *ok)
{
    long long iv = c->init, trips = 0;
    for (;;) {
        trips++;
        if (c->step_first)
            iv += c->step;
        int taken = c->iv_first ? compare(c->op, iv, c->bound, ok) : compare(c->op, c->bound, iv, ok);
        if (!c->step_first)
            iv += c->step;
        if (!*ok)
            return -1;
        if (c->neg)
            taken = !taken;
        if (!taken)
            return trips;
        if (trips >= MAX_TRIPS) {
            *ok = 0;
            return -1;
        }
    }
}

static void note(struct pd_desc *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The relation under which the loop goes round again: iv REL bound. */
static enum rel loop_relation(const struct counted *c)
{
    static const enum rel mirror[] = {REL_GT, REL_GE, REL_LT, REL_LE, REL_NE, REL_EQ};
    static const enum rel invert[] = {REL_GE, REL_GT, REL_LE, REL_LT, REL_EQ, REL_NE};
    enum rel r = relation_of(c->op);
    if (r == REL_NONE)
        return r;
    if (!c->iv_first)
        r = mirror[r];
    return c->neg ? invert[r] : r;
}

/* simulate's count for a start of init, in closed form: trip t compares
 * a + t x step, and the first t >= 1 whose comparison fails is the last
 * trip. -1 (ok 0) when the loop never ends. */
static long long closed_trips(const struct counted *c, long long init, int *ok)
{
    long long S = c->step, B = c->bound, a = init - (c->step_first ? 0 : S), t = -1;
    enum rel r = loop_relation(c);
    *ok = 1;
    if (r == REL_NONE || S == 0)
        return *ok = 0, -1;
    if (!holds(r, a + S, B)) /* the first trip's comparison */
        return 1;
    if (r == REL_LT && S > 0)
        t = -floordiv(a - B, S);            /* ceil((B - a) / S) */
    else if (r == REL_LE && S > 0)
        t = floordiv(B - a, S) + 1;
    else if (r == REL_GT && S < 0)
        t = -floordiv(B - a, -S);           /* ceil((a - B) / -S) */
    else if (r == REL_GE && S < 0)
        t = floordiv(a - B, -S) + 1;
    else if (r == REL_NE && (B - a) % S == 0 && (B - a) / S >= 1)
        t = (B - a) / S;
    else if (r == REL_EQ)
        t = 2;                              /* equal once, then stepped past */
    if (t < 1 || t > MAX_TRIPS)
        return *ok = 0, -1;
    return t;
}

#define MAX_SAMPLED_BLOCKS 4096

/* A loop whose start differs by thread (i = blockIdx x blockDim + threadIdx,
 * stepping by the grid): a warp runs as many trips as its longest lane, and
 * the loop is counted at the mean over the launch's warps (its blocks
 * sampled evenly past MAX_SAMPLED_BLOCKS), the spread noted. */
static long long trips_by_warp(struct pd *p, const struct loop *l, const struct counted *c,
                               int *ok)
{
    const unsigned *g = p->launch->grid, *bk = p->launch->block;
    long long blocks = (long long)g[0] * g[1] * g[2], threads = (long long)bk[0] * bk[1] * bk[2];
    long long every = blocks > MAX_SAMPLED_BLOCKS ? blocks / MAX_SAMPLED_BLOCKS : 1;
    long long lo = -1, hi = -1, warps = 0;
    double sum = 0;
    const struct val *v = &c->start;
    *ok = 1;
    for (long long b = 0; b < blocks && *ok; b += every) {
        long long cta[3] = {b % g[0], b / g[0] % g[1], b / ((long long)g[0] * g[1])};
        long long base = v->lc + v->lb[0] * cta[0] + v->lb[1] * cta[1] + v->lb[2] * cta[2];
        for (long long w = 0; w < threads && *ok; w += WARP) {
            long long most = 0;
            for (long long t = w; t < w + WARP && t < threads && *ok; t++) {
                long long tid[3] = {t % bk[0], t / bk[0] % bk[1], t / ((long long)bk[0] * bk[1])};
                long long n = closed_trips(c, base + v->lt[0] * tid[0] + v->lt[1] * tid[1] +
                                                  v->lt[2] * tid[2], ok);
                most = n > most ? n : most;
            }
            lo = lo < 0 || most < lo ? most : lo;
            hi = most > hi ? most : hi;
            sum += (double)most;
            warps++;
        }
    }
    if (!*ok || !warps)
        return *ok = 0, -1;
    long long mean = (long long)(sum / (double)warps + 0.5);
    if (lo != hi)
        note(p->out, "loop at label %s: %lld to %lld trips a warp, as its start differs by thread; "
                     "counted at their mean, %lld", l->label, lo, hi, mean);
    return mean;
}

/* Fills the induction variable's facts from the setp at index s; -1 if it is not counted. */
static int induction(struct pd *p, const struct loop *l, int s, struct counted *c)
{
    const struct insn *st = &p->in[s];
    for (int k = 1; k <= 2; k++) {
        const char *iv = st->arg[k], *bound = st->arg[3 - k];
        int at = find_step(p, iv, l->from, l->to, &c->step);
        if (at < 0)
            continue;
        struct val b = operand_at(p, bound, s);
        int init_at = last_def(p, iv, 0, l->from);
        if (!b.is_const || init_at < 0 ||
            !(p->written[init_at].is_const || p->written[init_at].lin))
            return -1;
        c->start = p->written[init_at];
        c->op = st->op;
        c->iv_first = k == 1;
        c->bound = b.c;
        c->init = p->written[init_at].c;
        c->step_first = at < s;
        return 0;
    }
    return -1;
}

/* The error for a loop whose bound (or start) depends on parameters with no
 * value given (bits of needs): names them; out->param and out->missing too. */
static int missing_params(struct pd *p, const struct loop *l, unsigned long long needs)
{
    char names[200] = "";
    size_t used = 0;
    int n = 0;
    for (int i = 0; i < p->nep && i < 64; i++) {
        if (!(needs & (1ULL << i)))
            continue;
        if (n == 0)
            snprintf(p->out->param, sizeof p->out->param, "%s", p->ep[i].name);
        if (n < PD_MAX_MISSING) {
            snprintf(p->out->missing[n], sizeof p->out->missing[n], "%s", p->ep[i].name);
            p->out->missing_index[n] = i;
        }
        int w = snprintf(names + used, sizeof names - used, "%s%s (index %d)",
                         n ? ", " : "", p->ep[i].name, i);
        used = w > 0 && (size_t)w < sizeof names - used ? used + (size_t)w : used;
        n++;
    }
    p->out->nmissing = n < PD_MAX_MISSING ? n : PD_MAX_MISSING;
    return errf(p->err, p->errlen,
                "loop at label %s: its trip count depends on %s %s of %s, whose value%s %s "
                "not given",
                l->label, n > 1 ? "parameters" : "parameter", names, p->entry, n > 1 ? "s" : "",
                n > 1 ? "are" : "is");
}

static int trip_count(struct pd *p, struct loop *l)
{
    const struct insn *br = &p->in[l->to];
    struct counted c;
    memset(&c, 0, sizeof c);
    int s = br->guard[0] ? last_def(p, br->guard, l->from, l->to) : -1;
    int ok = 0;
    if (p->dead[l->from] && p->dead[l->to]) {
        l->trips = 0; /* skipped whole by a branch the launch decides */
        return 0;
    }
    c.neg = br->guard_neg;
    if (s >= 0 && !strncmp(p->in[s].op, "setp", 4) && p->in[s].nargs == 3 &&
        induction(p, l, s, &c) == 0)
        l->trips = c.start.is_const ? simulate(&c, &ok) : trips_by_warp(p, l, &c, &ok);
    if (ok)
        return 0;
    unsigned long long needs = 0;
    if (s >= 0 && !strncmp(p->in[s].op, "setp", 4) && p->in[s].nargs == 3)
        needs = operand_at(p, p->in[s].arg[1], s).needs | operand_at(p, p->in[s].arg[2], s).needs;
    if (needs)
        return missing_params(p, l, needs);
    return errf(p->err, p->errlen,
                "loop at label %s: its trip count cannot be derived from the PTX and the "
                "launch (a counted loop steps a register by an immediate and compares it with "
                "a bound known from immediates, the launch shape and the values given for "
                "parameters)",
                l->label);
}

/* The outcome of the setp at s where both operands are constants at that
 * point: 1 or 0, compared as its type says; -1 when not known. */
static int setp_outcome(struct pd *p, int s)
{
    const struct insn *st = &p->in[s];
    if (strncmp(st->op, "setp", 4) || st->nargs != 3 || st->guard[0] ||
        has_mod(st->op, "f32") || has_mod(st->op, "f64") || has_mod(st->op, "f16"))
        return -1;
    struct val a = operand_at(p, st->arg[1], s), b = operand_at(p, st->arg[2], s);
    if (!a.is_const || !b.is_const)
        return -1;
    long long x = a.c, y = b.c;
    if (has_mod(st->op, "u32") || has_mod(st->op, "b32")) {
        x = (long long)(uint32_t)x;
        y = (long long)(uint32_t)y;
    } else if (has_mod(st->op, "s32")) {
        x = (int32_t)x;
        y = (int32_t)y;
    } else if ((has_mod(st->op, "u64") || has_mod(st->op, "b64")) && (x < 0 || y < 0)) {
        return -1;
    }
    int ok;
    int v = compare(st->op, x, y, &ok);
    return ok ? v : -1;
}

/* Whether a branch's guard is decided by the launch: 1 taken, 0 not, -1 unknown. */
static int branch_outcome(struct pd *p, int at)
{
    const struct insn *br = &p->in[at];
    struct reg *r = br->guard[0] ? find_reg(p, br->guard) : NULL;
    int d = r && r->defs ? sole_write(p, r, at) : -1;
    int v = d >= 0 ? setp_outcome(p, d) : -1;
    return v < 0 ? -1 : v ^ br->guard_neg;
}

/* The first instruction of (from, to) that a live branch from outside the
 * range lands on; to when none does. */
static int first_entry(const struct pd *p, int from, int to)
{
    int end = to;
    for (int b = 0; b < p->nbr; b++) {
        const struct branch *x = &p->br[b];
        if ((x->at <= from || x->at >= to) && !p->dead[x->at] && x->target > from &&
            x->target < end)
            end = x->target;
    }
    return end;
}

/* Forward branches whose guard the launch's values decide (nvcc's guards
 * around an unrolled loop's remainder, say): the code a taken one skips is
 * marked dead, counted by no warp; the rest stay upper bounds (noted). */
static int decide_branches(struct pd *p)
{
    p->dead = calloc(p->n > 0 ? (size_t)p->n : 1, 1);
    if (!p->dead)
        return errf(p->err, p->errlen, "out of memory");
    for (int b = 0; b < p->nbr; b++) {
        int at = p->br[b].at, to = p->br[b].target;
        if (to <= at || p->dead[at])
            continue;
        int taken = p->in[at].guard[0] ? branch_outcome(p, at) : -1;
        if (taken < 0) {
            p->forward_branches++;
            continue;
        }
        p->decided_branches++;
        if (taken)
            for (int i = at + 1, end = first_entry(p, at, to); i < end; i++)
                p->dead[i] = 1;
    }
    return 0;
}

static int find_loops(struct pd *p)
{
    for (int b = 0; b < p->nbr; b++) {
        int i = p->br[b].at, at = p->br[b].target;
        if (at > i)
            continue;
        struct loop *q = realloc(p->loops, (size_t)(p->nloops + 1) * sizeof *q);
        if (!q)
            return errf(p->err, p->errlen, "out of memory");
        p->loops = q;
        struct loop *l = &p->loops[p->nloops++];
        memset(l, 0, sizeof *l);
        l->from = at;
        l->to = i;
        copy_trim(l->label, sizeof l->label, p->in[i].arg[0], strlen(p->in[i].arg[0]));
        if (trip_count(p, l) < 0)
            return -1;
    }
    for (int a = 0; a < p->nloops; a++)
        for (int b = 0; b < p->nloops; b++) {
            const struct loop *x = &p->loops[a], *y = &p->loops[b];
            if (x->from < y->from && y->from <= x->to && x->to < y->to)
                return errf(p->err, p->errlen,
                                  "loops at %s and %s overlap without nesting", x->label,
                                  y->label);
        }
    return 0;
}

static double multiplicity(const struct pd *p, int i)
{
    if (p->dead[i])
        return 0;
    double m = 1;
    for (int k = 0; k < p->nloops; k++)
        if (p->loops[k].from <= i && i <= p->loops[k].to)
            m *= (double)p->loops[k].trips;
    return m;
}

/* ---- classes and accesses ----------------------------------------------------------- */

static int type_bytes(const char *op)
{
    static const struct {
        const char *t;
        int bytes;
    } types[] = {{"b8", 1},  {"u8", 1},  {"s8", 1},  {"b16", 2}, {"u16", 2}, {"s16", 2},
                 {"f16", 2}, {"bf16", 2}, {"b32", 4}, {"u32", 4}, {"s32", 4}, {"f32", 4},
                 {"f16x2", 4}, {"b64", 8}, {"u64", 8}, {"s64", 8}, {"f64", 8}, {"b128", 16}};
    int bytes = 4, vec = has_mod(op, "v4") ? 4 : has_mod(op, "v2") ? 2 : 1;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (has_mod(op, types[i].t))
            bytes = types[i].bytes;
    return bytes * vec;
}

static int is_float(const char *op)
{
    return has_mod(op, "f32") || has_mod(op, "f16") || has_mod(op, "f16x2") ||
           has_mod(op, "bf16");
}

static enum mwp_class compute_class(struct pd *p, const struct insn *in)
{
    char b[NAME_LEN];
    base_of(in->op, b, sizeof b);
    static const char *const sfu[] = {"rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh",
                                      NULL};
    for (const char *const *q = sfu; *q; q++)
        if (!strcmp(b, *q))
            return has_mod(in->op, "f64") ? MC_FP64 : MC_SFU;
    if (!strcmp(b, "div") || !strcmp(b, "rem"))
        p->macro_ops++;
    if (!strcmp(b, "cvt")) {
        int flt = 0;
        for (const char *q = strchr(in->op, '.'); q; q = strchr(q + 1, '.'))
            flt += q[1] == 'f' || q[1] == 'b';
        return flt ? MC_CONV : MC_INT;
    }
    if (!strcmp(b, "shfl"))
        return MC_SHARED;
    if (has_mod(in->op, "f64"))
        return MC_FP64;
    if (is_float(in->op) && strcmp(b, "ld") && strcmp(b, "st"))
        return MC_FP32;
    return MC_INT;
}

/* Distinct values among n sorted-or-not numbers. */
static int distinct(long long *v, int n)
{
    int d = 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = v[j] == v[i];
        d += !seen;
    }
    return d;
}

/* Distinct 32-byte sectors a warp access of `bytes` per lane touches, for
 * coefficients coef, and how many lanes the block's first warp has. */
static void touched(const struct pd *p, const long long coef[3], int bytes, int *sectors,
                    int *lanes)
{
    const unsigned *bd = p->launch->block;
    long long threads = (long long)bd[0] * bd[1] * bd[2];
    long long sec[WARP * 4];
    int ns = 0;
    *lanes = threads < WARP ? (int)threads : WARP;
    for (int l = 0; l < *lanes; l++) {
        long long tx = l % bd[0], ty = (l / bd[0]) % bd[1], tz = l / ((long long)bd[0] * bd[1]);
        long long off = coef[0] * tx + coef[1] * ty + coef[2] * tz;
        for (long long s = floordiv(off, 32); s <= floordiv(off + bytes - 1, 32) && ns < 4 * WARP;
             s++)
            sec[ns++] = s;
    }
    *sectors = distinct(sec, ns);
}

/* The register of an address operand "[%rd+8]". */
static struct val address(struct pd *p, const char *arg)
{
    char name[NAME_LEN];
    if (arg[0] != '[')
        return unknown;
    copy_trim(name, sizeof name, arg + 1, strcspn(arg + 1, "+-]"));
    return operand(p, name);
}

static void global_access(struct pd *p, const struct insn *in, const char *addr_arg, double m,
                          double *coal_bytes, double *trans)
{
    struct val a = address(p, addr_arg);
    int bytes = type_bytes(in->op), sectors, lanes;
    if (!a.affine) {
        p->nonaffine++;
        p->out->uncoal += m;
        *trans += m * WARP;
        return;
    }
    touched(p, a.coef, bytes, &sectors, &lanes);
    int ideal = (lanes * bytes + 31) / 32;
    if (sectors <= ideal) {
        p->out->coal += m;
        *coal_bytes += m * sectors * 32.0;
    } else {
        p->out->uncoal += m;
        *trans += m * sectors;
    }
}

/* Counts one memory instruction; 1 when it is a global (or generic, or local) load
 * whose value a later barrier may wait for, 0 otherwise. */
static int memory_op(struct pd *p, const struct insn *in, double m, double *cb, double *tr)
{
    char b[NAME_LEN];
    base_of(in->op, b, sizeof b);
    int store = !strcmp(b, "st") || !strcmp(b, "red");
    const char *addr = store ? in->arg[0] : in->nargs > 1 ? in->arg[1] : "";
    if (has_mod(in->op, "param"))
        return 0; /* kernel parameters: constant-bank operands, not instructions */
    if (has_mod(in->op, "const")) {
        p->out->insts[MC_INT] += m;
        return 0;
    }
    if (has_mod(in->op, "shared")) {
        p->out->insts[MC_SHARED] += m;
        return 0;
    }
    if (has_mod(in->op, "local"))
        p->local_access++;
    else if (!has_mod(in->op, "global"))
        p->generic_access++;
    global_access(p, in, addr, m, cb, tr);
    if (store)
        p->out->stores += m;
    return !store;
}

static int is_memory(const char *op)
{
    char b[NAME_LEN];
    base_of(op, b, sizeof b);
    return !strcmp(b, "ld") || !strcmp(b, "st") || !strcmp(b, "ldu") || !strcmp(b, "atom") ||
           !strcmp(b, "red");
}

static void note(struct pd_desc *d, const char *fmt, ...)
{
    va_list ap;
    if (d->nnotes >= PD_MAX_NOTES)
        return;
    va_start(ap, fmt);
    vsnprintf(d->notes[d->nnotes++], PD_NOTE_LEN, fmt, ap);
    va_end(ap);
}

/* Memory periods: the times a warp waits for global memory. Loads issued back
 * to back before any of their values is used overlap and wait once (the
 * period ends at the first instruction reading a loaded register); a store
 * is a period of its own, as the paper charges it. Scanned in program order
 * with each instruction's multiplicity. */
#define MAX_PENDING 64

struct periods {
    char reg[MAX_PENDING][NAME_LEN];
    int n;
    double count;
};

/* Whether text (an operand) names register reg as a whole token. */
static int names_reg(const char *text, const char *reg)
{
    size_t len = strlen(reg);
    for (const char *q = strstr(text, reg); q; q = strstr(q + 1, reg)) {
        char after = q[len];
        if (!(isalnum((unsigned char)after) || after == '_'))
            return 1;
    }
    return 0;
}

static int reads_pending(const struct periods *w, const struct insn *in, int first_src)
{
    for (int a = first_src; a < in->nargs; a++)
        for (int r = 0; r < w->n; r++)
            if (names_reg(in->arg[a], w->reg[r]))
                return 1;
    for (int r = 0; r < w->n; r++)
        if (in->guard[0] && !strcmp(in->guard, w->reg[r]))
            return 1;
    return 0;
}

/* The destination registers of a load ("%f1" or "{%f1, %f2}") become pending. */
static void add_pending(struct periods *w, const char *dst)
{
    for (const char *q = strchr(dst, '%'); q && w->n < MAX_PENDING; q = strchr(q + 1, '%')) {
        size_t len = 1 + strspn(q + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
        copy_trim(w->reg[w->n++], NAME_LEN, q, len);
    }
}

static void period_step(struct periods *w, const struct insn *in, double m, int global_load,
                        int global_store)
{
    if (w->n && reads_pending(w, in, global_store ? 0 : 1)) {
        w->count += m;
        w->n = 0;
    }
    if (global_store)
        w->count += m;
    else if (global_load && in->nargs > 0)
        add_pending(w, in->arg[0]);
}

static void count(struct pd *p)
{
    struct pd_desc *d = p->out;
    double coal_bytes = 0, trans = 0;
    int loaded = 0; /* a global load since the last barrier, in program order */
    struct periods w = {.n = 0};
    for (int i = 0; i < p->n; i++) {
        const struct insn *in = &p->in[i];
        double m = multiplicity(p, i);
        char b[NAME_LEN];
        base_of(in->op, b, sizeof b);
        if (p->dead[i] || !strcmp(b, "ret") || !strcmp(b, "exit"))
            continue;
        p->cur = i;
        if (!strcmp(b, "bar") || !strcmp(b, "barrier")) {
            d->sync += m;
            d->sync_mem += loaded ? m : 0;
            loaded = 0;
            period_step(&w, in, m, 0, 0);
        } else if (is_memory(in->op)) {
            double stores = d->stores, mem = d->coal + d->uncoal;
            int load = memory_op(p, in, m, &coal_bytes, &trans);
            int global = d->coal + d->uncoal > mem;
            loaded |= load;
            period_step(&w, in, m, load, global && d->stores > stores);
        } else {
            d->insts[compute_class(p, in)] += m;
            period_step(&w, in, m, 0, 0);
        }
    }
    p->cur = -1;
    if (w.n)
        w.count += 1; /* loads never used: the warp still waits before it exits */
    d->mem_periods = w.count;
    d->insts[MC_GLOBAL] = d->coal + d->uncoal;
    d->static_smem = p->smem;
    d->shared_vars = p->shared_vars;
    d->coal_bytes = d->coal > 0 ? coal_bytes / d->coal : 128;
    d->uncoal_per_access = d->uncoal > 0 ? trans / d->uncoal : 1;
    d->loops = p->nloops;
}

static void notes(struct pd *p)
{
    struct pd_desc *d = p->out;
    if (p->forward_branches)
        note(d, "%d forward branch(es): the code they skip is counted as executed by every warp "
                "(an upper bound)", p->forward_branches);
    if (p->decided_branches)
        note(d, "%d forward branch(es) decided by the launch's values: the code they skip is "
                "not counted", p->decided_branches);
    if (p->nonaffine)
        note(d, "%d global access(es) with an address not affine in the thread index: counted "
                "uncoalesced, one transaction per lane", p->nonaffine);
    if (p->generic_access)
        note(d, "%d generic-space access(es) counted as global", p->generic_access);
    if (p->local_access)
        note(d, "%d local (spill) access(es) counted as global", p->local_access);
    if (p->macro_ops)
        note(d, "%d division/remainder instruction(s) counted as one instruction each; they "
                "compile to several", p->macro_ops);
}

/* What parse, values and find_loops allocated. */
static void pd_release(struct pd *p)
{
    free(p->ep);
    free(p->in);
    free(p->lb);
    for (int k = 0; k < p->nregs; k++)
        free(p->regs[k].at);
    free(p->regs);
    free(p->written);
    free(p->br);
    free(p->dead);
    free(p->loops);
}

int pd_describe(const char *ptx, const char *entry, const struct pd_launch *launch,
                struct pd_desc *out, char *err, size_t errlen)
{
    struct pd p;
    memset(&p, 0, sizeof p);
    memset(out, 0, sizeof *out);
    p.cur = -1;
    p.launch = launch;
    p.out = out;
    p.err = err;
    p.errlen = errlen;
    int rc = -1;
    if (!ptx || !launch || !launch->block[0] || !launch->block[1] || !launch->block[2])
        errf(err, errlen, "no PTX, or a block with a zero dimension");
    else if (parse(&p, ptx, entry) == 0 && values(&p) == 0 && decide_branches(&p) == 0 &&
             find_loops(&p) == 0) {
        count(&p);
        notes(&p);
        rc = 0;
    }
    pd_release(&p);
    return rc;
}

json_t *pd_desc_json(const struct pd_desc *d)
{
    json_t *pw = json_object(), *nt = json_array();
    for (int c = 0; c < MC_COUNT; c++)
        if (c != MC_GLOBAL)
            json_object_set_new(pw, mwp_class_name((enum mwp_class)c), json_real(d->insts[c]));
    json_object_set_new(pw, "coalesced", json_real(d->coal));
    json_object_set_new(pw, "uncoalesced", json_real(d->uncoal));
    json_object_set_new(pw, "sync", json_real(d->sync));
    json_object_set_new(pw, "sync_mem", json_real(d->sync_mem));
    json_object_set_new(pw, "stores", json_real(d->stores));
    json_object_set_new(pw, "mem_periods", json_real(d->mem_periods));
    for (int i = 0; i < d->nnotes; i++)
        json_array_append_new(nt, json_string(d->notes[i]));
    return json_pack("{s:o, s:f, s:f, s:i, s:I, s:o}", "per_warp", pw, "uncoal_per_access",
                     d->uncoal_per_access, "coal_bytes", d->coal_bytes, "loops", d->loops,
                     "static_smem", (json_int_t)d->static_smem, "notes", nt);
}

/* ---- loops, for the SASS side ---------------------------------------------------------- */

/* 1 if loop k lies inside loop l (and is not l). */
static int nested_in(const struct loop *k, const struct loop *l)
{
    return k != l && l->from <= k->from && k->to <= l->to;
}

/* 1 if instruction i belongs to loop l's own body, not to a loop nested in it. */
static int own_body(const struct pd *p, const struct loop *l, int i)
{
    if (i < l->from || i > l->to)
        return 0;
    for (int k = 0; k < p->nloops; k++)
        if (nested_in(&p->loops[k], l) && p->loops[k].from <= i && i <= p->loops[k].to)
            return 0;
    return 1;
}

/* One trip of loop l's own body, classified as count() classifies. */
static void body_counts(struct pd *p, const struct loop *l, struct pd_loop *out)
{
    struct pd_desc d;
    double cb = 0, tr = 0;
    memset(&d, 0, sizeof d);
    p->out = &d;
    for (int i = l->from; i <= l->to; i++) {
        const struct insn *in = &p->in[i];
        char b[NAME_LEN];
        base_of(in->op, b, sizeof b);
        if (!own_body(p, l, i) || p->dead[i] || !strcmp(b, "ret") || !strcmp(b, "exit"))
            continue;
        p->cur = i;
        if (!strcmp(b, "bar") || !strcmp(b, "barrier"))
            d.sync += 1;
        else if (is_memory(in->op))
            memory_op(p, in, 1, &cb, &tr);
        else
            d.insts[compute_class(p, in)] += 1;
    }
    p->cur = -1;
    memcpy(out->body, d.insts, sizeof out->body);
    out->body[MC_GLOBAL] = d.coal + d.uncoal;
    out->sync = d.sync;
}

/* Loops by label position, outer before inner at one label. */
static int loop_order(const void *a, const void *b)
{
    const struct loop *x = a, *y = b;
    return x->from != y->from ? (x->from > y->from) - (x->from < y->from)
                              : (x->to < y->to) - (x->to > y->to);
}

static void export_loops(struct pd *p, struct pd_loop *loops)
{
    if (p->nloops > 1)
        qsort(p->loops, (size_t)p->nloops, sizeof *p->loops, loop_order);
    for (int i = 0; i < p->nloops; i++) {
        const struct loop *l = &p->loops[i];
        struct pd_loop *o = &loops[i];
        memset(o, 0, sizeof *o);
        snprintf(o->label, sizeof o->label, "%s", l->label);
        o->trips = l->trips;
        o->parent = -1;
        for (int k = 0; k < p->nloops; k++)   /* the smallest loop holding it */
            if (nested_in(l, &p->loops[k]) &&
                (o->parent < 0 || p->loops[k].to - p->loops[k].from <
                                      p->loops[o->parent].to - p->loops[o->parent].from))
                o->parent = k;
        body_counts(p, l, o);
    }
    for (int i = 0; i < p->nloops; i++)
        for (int k = i; k >= 0; k = loops[k].parent)
            loops[i].depth++;
}

int pd_loops(const char *ptx, const char *entry, const struct pd_launch *launch,
             struct pd_loop *loops, int max, int *n, char *err, size_t errlen)
{
    struct pd p;
    struct pd_desc scratch;
    memset(&p, 0, sizeof p);
    memset(&scratch, 0, sizeof scratch);
    p.cur = -1;
    p.launch = launch;
    p.out = &scratch;
    p.err = err;
    p.errlen = errlen;
    *n = 0;
    int rc = -1;
    if (!ptx || !launch || !launch->block[0] || !launch->block[1] || !launch->block[2])
        errf(err, errlen, "no PTX, or a block with a zero dimension");
    else if (parse(&p, ptx, entry) == 0 && values(&p) == 0 && decide_branches(&p) == 0 &&
             find_loops(&p) == 0) {
        if (p.nloops > max) {
            errf(err, errlen, "%d loops: more than the %d asked for", p.nloops, max);
        } else {
            export_loops(&p, loops);
            *n = p.nloops;
            rc = 0;
        }
    }
    pd_release(&p);
    return rc;
}

void pd_launch_from_json(const json_t *k, struct pd_launch *l)
{
    const json_t *g = json_object_get(k, "grid"), *b = json_object_get(k, "block"), *v;
    const char *key;
    memset(l, 0, sizeof *l);
    for (int i = 0; i < 3; i++) {
        const json_t *gi = json_array_get(g, (size_t)i), *bi = json_array_get(b, (size_t)i);
        l->grid[i] = gi ? (unsigned)json_integer_value(gi) : 1;
        l->block[i] = bi ? (unsigned)json_integer_value(bi) : 1;
    }
    json_object_foreach((json_t *)json_object_get(k, "params"), key, v)
        if (l->nparams < PD_MAX_PARAMS && json_is_integer(v) &&
            strlen(key) < sizeof l->params[0].name) {
            snprintf(l->params[l->nparams].name, sizeof l->params[0].name, "%s", key);
            l->params[l->nparams++].value = json_integer_value(v);
        }
}
