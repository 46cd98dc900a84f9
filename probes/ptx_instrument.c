/*
 * Reading a PTX kernel's global accesses and rewriting the module to
 * record them (see ptx_instrument.h for the design and what is covered).
 *
 * DESIGN
 * Three steps, each a pass over the text: find the entry and its
 * parameter list (find_entry, read_params), cut the body into statements
 * (read_body, ptx_stmt.h), classify the instructions into sites and
 * uncovered accesses (classify). The dependency flags are ptx_deps.c's.
 * The rewrite copies the text and inserts at the offsets found: nothing
 * of the original is reformatted, so line numbers in the sites table stay
 * those of the user's file and ptxas reports on the original lines.
 */
#include "probes/ptx_instrument.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/gpu/ptx.h"
#include "probes/ptx_stmt.h"

#define MAX_STATEMENTS (1u << 22)

static void fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ---- the text --------------------------------------------------------------- */

/* Skips whitespace and comments from i; counts newlines into *line. */
static size_t skip_blank(const char *t, size_t i, unsigned *line)
{
    for (;;) {
        if (t[i] == '\n') {
            (*line)++;
            i++;
        } else if (isspace((unsigned char)t[i])) {
            i++;
        } else if (t[i] == '/' && t[i + 1] == '/') {
            while (t[i] && t[i] != '\n')
                i++;
        } else if (t[i] == '/' && t[i + 1] == '*') {
            i += 2;
            while (t[i] && !(t[i] == '*' && t[i + 1] == '/'))
                *line += t[i++] == '\n';
            if (t[i])
                i += 2;
        } else {
            return i;
        }
    }
}

static int ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '$';
}

static unsigned line_at(const char *t, size_t off)
{
    unsigned line = 1;
    for (size_t i = 0; i < off && t[i]; i++)
        line += t[i] == '\n';
    return line;
}

/* The offset of the next ".entry" keyword from i (outside comments and
 * strings), or (size_t)-1. */
static size_t next_entry(const char *t, size_t i)
{
    unsigned line = 0;
    while (t[i]) {
        size_t j = skip_blank(t, i, &line);
        if (j != i) {
            i = j;
            continue;
        }
        if (t[i] == '"') {
            for (i++; t[i] && t[i] != '"'; i++)
                i += t[i] == '\\' && t[i + 1];
            i += t[i] == '"';
            continue;
        }
        if (strncmp(t + i, ".entry", 6) == 0 && !ident_char(t[i + 6]) &&
            (i == 0 || !ident_char(t[i - 1])))
            return i;
        i++;
    }
    return (size_t)-1;
}

/* The entry's name at e (the ".entry" keyword) into name; the offset after it. */
static size_t entry_name(const char *t, size_t e, char *name, size_t len)
{
    unsigned line = 0;
    size_t i = skip_blank(t, e + 6, &line), n = 0;
    while (ident_char(t[i]) || t[i] == '.') {
        if (n + 1 < len)
            name[n++] = t[i];
        i++;
    }
    name[n] = '\0';
    return i;
}

void ptxi_entries(const char *ptx, char *buf, size_t len)
{
    size_t n = 0;
    char name[256];
    buf[0] = '\0';
    for (size_t e = next_entry(ptx, 0); e != (size_t)-1 && n < len;
         e = next_entry(ptx, e + 6)) {
        entry_name(ptx, e, name, sizeof name);
        n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", name);
    }
}

static int address_size_32(const char *t)
{
    const char *a = strstr(t, ".address_size");
    return a && atoi(a + 13) == 32;
}

/* ---- the entry and its parameters ----------------------------------------------- */

/* Bytes of a PTX fundamental type ("u64" -> 8); 0 if not one. */
static unsigned type_bytes(const char *ty)
{
    static const struct { const char *name; unsigned bytes; } types[] = {
        {"u8", 1},  {"s8", 1},  {"b8", 1},  {"u16", 2},  {"s16", 2},   {"b16", 2},
        {"f16", 2}, {"bf16", 2}, {"u32", 4}, {"s32", 4}, {"b32", 4},   {"f32", 4},
        {"f16x2", 4}, {"bf16x2", 4}, {"u64", 8}, {"s64", 8}, {"b64", 8}, {"f64", 8},
        {"b128", 16}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(ty, types[i].name) == 0)
            return types[i].bytes;
    return 0;
}

/* One ".param ..." declaration of text [a, b) into p. */
static int read_param(const char *t, size_t a, size_t b, struct ptxi_param *p, char *err,
                      size_t errlen)
{
    char decl[512], *save = NULL;
    size_t n = b - a < sizeof decl - 1 ? b - a : sizeof decl - 1;
    unsigned count = 1;
    memcpy(decl, t + a, n);
    decl[n] = '\0';
    memset(p, 0, sizeof *p);
    for (char *tok = strtok_r(decl, " \t\r\n", &save); tok; tok = strtok_r(NULL, " \t\r\n", &save)) {
        if (strcmp(tok, ".align") == 0) {
            char *v = strtok_r(NULL, " \t\r\n", &save);
            p->align = v ? (unsigned)atoi(v) : 0;
        } else if (tok[0] == '.' && type_bytes(tok + 1)) {
            snprintf(p->type, sizeof p->type, "%s", tok + 1);
        } else if (tok[0] == '[') {
            count = (unsigned)atoi(tok + 1);
            p->is_array = 1;
        } else if (tok[0] != '.') {
            char *br = strchr(tok, '[');
            if (br) {
                *br = '\0';
                count = (unsigned)atoi(br + 1);
                p->is_array = 1;
            }
            snprintf(p->name, sizeof p->name, "%s", tok);
        }
    }
    if (!p->name[0] || !p->type[0]) {
        fail(err, errlen, "line %u: cannot read the parameter '%.*s'", line_at(t, a),
             (int)(n > 80 ? 80 : n), t + a);
        return -1;
    }
    p->bytes = type_bytes(p->type) * (count ? count : 1);
    if (!p->align)
        p->align = type_bytes(p->type);
    return 0;
}

/* The parameter list from i (just after the name); sets params_at and the
 * offset after the list into *after. */
static int read_params(const char *t, size_t i, struct ptxi_kernel *k, size_t *after, char *err,
                       size_t errlen)
{
    unsigned line = 0;
    size_t j = skip_blank(t, i, &line);
    if (t[j] != '(') {
        k->params_at = i;
        *after = i;
        return 0;
    }
    k->params_paren = 1;
    size_t start = j + 1, cap = 8;
    k->params = calloc(cap, sizeof *k->params);
    if (!k->params)
        return fail(err, errlen, "out of memory"), -1;
    for (j = start;; j++) {
        size_t s = j;
        j = skip_blank(t, j, &line);
        if (j != s) {
            j--;
            continue;
        }
        if (!t[j])
            return fail(err, errlen, "the parameter list of %s is not closed", k->entry), -1;
        if (t[j] != ',' && t[j] != ')')
            continue;
        unsigned l2 = 0;
        size_t a = skip_blank(t, start, &l2);
        if (a < j) {
            if (k->nparams == cap) {
                struct ptxi_param *more = realloc(k->params, 2 * cap * sizeof *more);
                if (!more)
                    return fail(err, errlen, "out of memory"), -1;
                k->params = more;
                cap *= 2;
            }
            if (read_param(t, a, j, &k->params[k->nparams++], err, errlen) < 0)
                return -1;
        }
        start = j + 1;
        if (t[j] == ')') {
            k->params_at = j;
            *after = j + 1;
            return 0;
        }
    }
}

/* ---- the body's statements --------------------------------------------------------- */

/* Splits instruction s (text [start, end)) into guard, opcode and operands. */
static void split_insn(const char *t, struct ptxs *s)
{
    size_t i = s->start, end = s->end, n;
    if (t[i] == '@') {
        for (n = 0, i++; i < end && !isspace((unsigned char)t[i]); i++)
            if (n + 1 < sizeof s->guard)
                s->guard[n++] = t[i];
        s->guard[n] = '\0';
        while (i < end && isspace((unsigned char)t[i]))
            i++;
    }
    for (n = 0; i < end && !isspace((unsigned char)t[i]); i++)
        if (n + 1 < sizeof s->op)
            s->op[n++] = t[i];
    s->op[n] = '\0';
    int depth = 0;
    size_t a = i;
    for (; i <= end; i++) {
        char c = i < end ? t[i] : ',';
        if (c == '{' || c == '[' || c == '(')
            depth++;
        else if (c == '}' || c == ']' || c == ')')
            depth--;
        else if (c == ',' && depth <= 0) {
            size_t b = i;
            while (a < b && isspace((unsigned char)t[a]))
                a++;
            while (b > a && isspace((unsigned char)t[b - 1]))
                b--;
            if (b > a && s->nops < PTXS_MAX_OPS) {
                s->op_at[s->nops] = a;
                s->op_len[s->nops++] = b - a;
            }
            a = i + 1;
        }
    }
}

struct stmts {
    struct ptxs *v;
    size_t n, cap;
};

static struct ptxs *push(struct stmts *ss, enum ptxs_kind kind, size_t start, unsigned line)
{
    if (ss->n == ss->cap) {
        size_t cap = ss->cap ? 2 * ss->cap : 256;
        struct ptxs *more = cap <= MAX_STATEMENTS ? realloc(ss->v, cap * sizeof *more) : NULL;
        if (!more)
            return NULL;
        ss->v = more;
        ss->cap = cap;
    }
    struct ptxs *s = &ss->v[ss->n++];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->start = start;
    s->line = line;
    s->site = -1;
    s->target = -1;
    return s;
}

/* The statements of the body opened at `open` ('{'), up to its '}'. */
static int read_body(const char *t, size_t open, struct stmts *ss, char *err, size_t errlen)
{
    unsigned line = line_at(t, open);
    size_t i = open + 1;
    int depth = 1;
    for (;;) {
        i = skip_blank(t, i, &line);
        char c = t[i];
        struct ptxs *s;
        if (!c)
            return fail(err, errlen, "the body of the entry is not closed"), -1;
        if (c == '{' || c == '}') {
            if (!(s = push(ss, c == '{' ? PTXS_OPEN : PTXS_CLOSE, i, line)))
                return fail(err, errlen, "out of memory (or over %u statements)", MAX_STATEMENTS), -1;
            s->end = ++i;
            if (c == '}' && --depth == 0)
                return 0;
            depth += c == '{';
            continue;
        }
        size_t j = i;
        while (ident_char(t[j]) || (j == i && t[j] == '.'))
            j++;
        size_t k = j;
        while (t[k] == ' ' || t[k] == '\t')
            k++;
        if (j > i && t[i] != '.' && t[k] == ':' && t[k + 1] != ':') {
            if (!(s = push(ss, PTXS_LABEL, i, line)))
                return fail(err, errlen, "out of memory"), -1;
            snprintf(s->label, sizeof s->label, "%.*s", (int)(j - i), t + i);
            s->end = k + 1;
            i = k + 1;
            continue;
        }
        int to_eol = strncmp(t + i, ".loc", 4) == 0 || strncmp(t + i, ".file", 5) == 0;
        if (!(s = push(ss, c == '.' ? PTXS_DIRECTIVE : PTXS_INSN, i, line)))
            return fail(err, errlen, "out of memory (or over %u statements)", MAX_STATEMENTS), -1;
        for (j = i; t[j] && (to_eol ? t[j] != '\n' : t[j] != ';'); j++)
            line += t[j] == '\n';
        if (!t[j])
            return fail(err, errlen, "line %u: the statement does not end", s->line), -1;
        s->end = j;
        i = j + (t[j] == ';');
        if (s->kind == PTXS_INSN)
            split_insn(t, s);
    }
}

int ptxs_op_is(const struct ptxs *s, const char *base)
{
    size_t n = strlen(base);
    return strncmp(s->op, base, n) == 0 && (s->op[n] == '\0' || s->op[n] == '.');
}

int ptxs_op_has(const struct ptxs *s, const char *part)
{
    size_t n = strlen(part);
    for (const char *p = strchr(s->op, '.'); p; p = strchr(p + 1, '.'))
        if (strncmp(p + 1, part, n) == 0 && (p[1 + n] == '\0' || p[1 + n] == '.'))
            return 1;
    return 0;
}

/* ---- sites ---------------------------------------------------------------------------- */

/* 1 if the opcode names a state space (other than generic). */
static int has_space(const struct ptxs *s)
{
    static const char *const spaces[] = {"global", "shared", "local", "const", "param", "tex"};
    for (size_t i = 0; i < sizeof spaces / sizeof spaces[0]; i++)
        if (ptxs_op_has(s, spaces[i]) || strstr(s->op, ".shared::"))
            return 1;
    return 0;
}

/* The access's width from its qualifiers; 0 if no type part is found. */
static unsigned access_width(const struct ptxs *s)
{
    unsigned vec = 1, elem = 0;
    char op[96];
    char *save = NULL;
    snprintf(op, sizeof op, "%s", s->op);
    for (char *p = strtok_r(op, ".", &save); p; p = strtok_r(NULL, ".", &save)) {
        if (p[0] == 'v' && isdigit((unsigned char)p[1]))
            vec = (unsigned)atoi(p + 1);
        else if (type_bytes(p))
            elem = type_bytes(p);
    }
    return vec * elem;
}

/* Declared register widths, for an address base that is a 32-bit register. */
static int reg_bits(const char *t, const struct stmts *ss, const char *reg)
{
    size_t rl = strlen(reg);
    for (size_t i = 0; i < ss->n; i++) {
        const struct ptxs *s = &ss->v[i];
        if (s->kind != PTXS_DIRECTIVE || strncmp(t + s->start, ".reg", 4) != 0)
            continue;
        const char *d = t + s->start, *e = t + s->end;
        size_t dl = s->end - s->start;
        int bits = memmem(d, dl, ".b32", 4) || memmem(d, dl, ".u32", 4) || memmem(d, dl, ".s32", 4)
                       ? 32
                       : 64;
        for (const char *p = strchr(d, '%'); p && p < e; p = strchr(p + 1, '%')) {
            size_t n = 1;
            while (ident_char(p[n]))
                n++;
            if (n == rl && strncmp(p, reg, n) == 0 && p[n] != '<')
                return bits;
            if (p[n] == '<' && rl > n && strncmp(p, reg, n) == 0) {
                size_t q = n;
                while (isdigit((unsigned char)reg[q]))
                    q++;
                if (q == rl)
                    return bits;
            }
        }
    }
    return 64;
}

const char *ptxi_kind_name(enum ptxi_kind k)
{
    static const char *const names[] = {"load", "store", "atomic", "reduction"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

/* The site's address operand "[base+off]" into base/offset: the first
 * operand of st and red, the second (after the destination) of ld and atom. */
static int read_address(const char *t, const struct stmts *ss, const struct ptxs *s,
                        struct ptxi_site *site, char *err, size_t errlen)
{
    size_t idx = site->kind == PTXI_STORE || site->kind == PTXI_REDUCE ? 0 : 1;
    if (s->nops <= idx || t[s->op_at[idx]] != '[' || s->op_len[idx] < 2 ||
        t[s->op_at[idx] + s->op_len[idx] - 1] != ']')
        return fail(err, errlen, "line %u: no [address] operand in '%s'", s->line, site->text), -1;
    char a[160];
    size_t n = s->op_len[idx] - 2 < sizeof a - 1 ? s->op_len[idx] - 2 : sizeof a - 1;
    memcpy(a, t + s->op_at[idx] + 1, n);
    a[n] = '\0';
    char *p = a;
    while (isspace((unsigned char)*p))
        p++;
    if (isdigit((unsigned char)*p) || *p == '-') {
        site->offset = strtoll(p, NULL, 0);
        return 0;
    }
    size_t b = 0;
    while (p[b] && (ident_char(p[b]) || (b == 0 && p[b] == '%')))
        b++;
    snprintf(site->base, sizeof site->base, "%.*s", (int)b, p);
    char *rest = p + b;
    while (isspace((unsigned char)*rest))
        rest++;
    if (*rest == '+' || *rest == '-') {
        int neg = *rest == '-';
        rest++;
        while (isspace((unsigned char)*rest))
            rest++;
        char *end = NULL;
        site->offset = strtoll(rest, &end, 0) * (neg ? -1 : 1);
        if (end == rest)
            return fail(err, errlen, "line %u: cannot read the address '%s'", s->line, a), -1;
    } else if (*rest) {
        return fail(err, errlen, "line %u: cannot read the address '%s'", s->line, a), -1;
    }
    site->base_bits = site->base[0] == '%' ? reg_bits(t, ss, site->base) : 0;
    return 0;
}

/* The statement's text with runs of whitespace squeezed into one space. */
static void squeeze(const char *t, const struct ptxs *s, char *out, size_t len)
{
    size_t n = 0;
    for (size_t i = s->start; i < s->end && n + 1 < len; i++) {
        if (isspace((unsigned char)t[i])) {
            if (n && out[n - 1] != ' ')
                out[n++] = ' ';
        } else {
            out[n++] = t[i];
        }
    }
    out[n] = '\0';
}

static int add_site(const char *t, const struct stmts *ss, struct ptxs *s, enum ptxi_kind kind,
                    struct ptxi_kernel *k, size_t *cap, char *err, size_t errlen)
{
    if (k->nsites == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        struct ptxi_site *more = realloc(k->sites, c * sizeof *more);
        if (!more)
            return fail(err, errlen, "out of memory"), -1;
        k->sites = more;
        *cap = c;
    }
    struct ptxi_site *site = &k->sites[k->nsites];
    memset(site, 0, sizeof *site);
    site->pc = (uint32_t)k->nsites;
    site->kind = kind;
    site->is_store = kind != PTXI_LOAD; /* st, atom and red write memory */
    site->line = s->line;
    site->at = s->start;
    snprintf(site->guard, sizeof site->guard, "%s", s->guard);
    squeeze(t, s, site->text, sizeof site->text);
    site->width = access_width(s);
    if (kind != PTXI_LOAD && kind != PTXI_STORE && ptxs_op_has(s, "add"))
        site->float_add = ptxs_op_has(s, "f32") ? 4 : ptxs_op_has(s, "f64") ? 8 : 0;
    if (site->width != 1 && site->width != 2 && site->width != 4 && site->width != 8 &&
        site->width != 16)
        return fail(err, errlen,
                    "line %u: '%s' accesses %u bytes: a trace record holds 1, 2, 4, 8 or 16",
                    s->line, site->text, site->width), -1;
    if (read_address(t, ss, s, site, err, errlen) < 0)
        return -1;
    s->site = (int)k->nsites++;
    return 0;
}

/* Sites and the uncovered accesses; branch targets resolved. */
static int classify(const char *t, struct stmts *ss, struct ptxi_kernel *k, char *err,
                    size_t errlen)
{
    size_t cap = 0;
    for (size_t i = 0; i < ss->n; i++) {
        struct ptxs *s = &ss->v[i];
        if (s->kind != PTXS_INSN)
            continue;
        if (ptxs_op_is(s, "ld") || ptxs_op_is(s, "ldu") || ptxs_op_is(s, "st")) {
            if (ptxs_op_has(s, "global")) {
                if (add_site(t, ss, s, ptxs_op_is(s, "st") ? PTXI_STORE : PTXI_LOAD, k, &cap, err, errlen) < 0)
                    return -1;
            } else if (!has_space(s) && !ptxs_op_has(s, "async")) {
                k->generic++;
            }
        } else if (ptxs_op_is(s, "atom") || ptxs_op_is(s, "red")) {
            if (ptxs_op_has(s, "global")) {
                if (add_site(t, ss, s, ptxs_op_is(s, "atom") ? PTXI_ATOMIC : PTXI_REDUCE, k, &cap, err, errlen) < 0)
                    return -1;
            } else if (!has_space(s)) {
                k->atomics++;
            }
        } else if (ptxs_op_is(s, "cp")) {
            k->async_copies += ptxs_op_has(s, "global") || strstr(s->op, "bulk") != NULL;
        } else if (ptxs_op_is(s, "call")) {
            k->calls++;
        } else if (ptxs_op_is(s, "bra") && s->nops > 0) {
            for (size_t j = 0; j < ss->n; j++)
                if (ss->v[j].kind == PTXS_LABEL && strlen(ss->v[j].label) == s->op_len[0] &&
                    strncmp(ss->v[j].label, t + s->op_at[0], s->op_len[0]) == 0)
                    s->target = (int)j;
        }
    }
    return 0;
}

/* ---- analysis -------------------------------------------------------------------------- */

static int find_entry(const char *ptx, const char *entry, struct ptxi_kernel *k, size_t *after,
                      char *err, size_t errlen)
{
    size_t found = (size_t)-1, count = 0;
    char name[256], names[1024];
    for (size_t e = next_entry(ptx, 0); e != (size_t)-1; e = next_entry(ptx, e + 6)) {
        size_t end = entry_name(ptx, e, name, sizeof name);
        count++;
        if (entry ? strcmp(name, entry) == 0 : count == 1) {
            found = e;
            *after = end;
            snprintf(k->entry, sizeof k->entry, "%s", name);
        }
    }
    ptxi_entries(ptx, names, sizeof names);
    if (count == 0)
        return fail(err, errlen, "the PTX has no .entry (no kernel)"), -1;
    if (!entry && count > 1)
        return fail(err, errlen, "the PTX has %zu kernels: name one with --entry (%s)", count,
                    names), -1;
    if (found == (size_t)-1)
        return fail(err, errlen, "no kernel named '%s' (the PTX has: %s)", entry, names), -1;
    return 0;
}

int ptxi_analyze(const char *ptx, const char *entry, struct ptxi_kernel *k, char *err,
                 size_t errlen)
{
    struct stmts ss = {0};
    size_t after = 0, open;
    unsigned line = 0;
    memset(k, 0, sizeof *k);
    if (address_size_32(ptx)) {
        fail(err, errlen, "the PTX uses .address_size 32: only 64-bit addresses are captured");
        return -1;
    }
    if (find_entry(ptx, entry, k, &after, err, errlen) < 0 ||
        read_params(ptx, after, k, &after, err, errlen) < 0)
        goto bad;
    for (open = after;; open++) { /* past performance directives (.maxntid ...) */
        open = skip_blank(ptx, open, &line);
        if (!ptx[open] || ptx[open] == '{' || ptx[open] == ';')
            break;
    }
    if (ptx[open] != '{') {
        fail(err, errlen, "%s has no body (a declaration only)", k->entry);
        goto bad;
    }
    k->decls_at = open + 1;
    if (read_body(ptx, open, &ss, err, errlen) < 0 || classify(ptx, &ss, k, err, errlen) < 0)
        goto bad;
    k->prologue_at = ss.v[ss.n - 1].start; /* the closing brace if the body is empty */
    for (size_t i = 0; i < ss.n; i++)
        if (ss.v[i].kind == PTXS_INSN || ss.v[i].kind == PTXS_LABEL ||
            (ss.v[i].kind == PTXS_OPEN)) {
            k->prologue_at = ss.v[i].start;
            break;
        }
    for (size_t i = 0; i < k->nparams; i++)
        if (strcmp(k->params[i].name, PTXI_PARAM_RECORDS) == 0 ||
            strcmp(k->params[i].name, PTXI_PARAM_CONTROL) == 0) {
            fail(err, errlen, "%s already has a parameter %s: is it instrumented already?",
                 k->entry, k->params[i].name);
            goto bad;
        }
    ptxi_dependency_flags(ptx, ss.v, ss.n, k);
    free(ss.v);
    return 0;
bad:
    free(ss.v);
    ptxi_kernel_free(k);
    return -1;
}

void ptxi_kernel_free(struct ptxi_kernel *k)
{
    free(k->params);
    free(k->sites);
    k->params = NULL;
    k->sites = NULL;
    k->nparams = k->nsites = 0;
}

/* ---- the rewrite ------------------------------------------------------------------------ */

static const char decls[] =
    "\n\t// gpuprobe trace capture: added registers\n"
    "\t.reg .b64 %gpc_tid, %gpc_a, %gpc_s, %gpc_q, %gpc_rec, %gpc_ctl, %gpc_cap, %gpc_lim;\n"
    "\t.reg .b32 %gpc_w<8>;\n"
    "\t.reg .pred %gpc_ok, %gpc_out;\n";

/* Loads the parameters; the linear thread id into %gpc_tid (block-linear id
 * times threads per block, plus the thread's index in its block, x fastest);
 * %gpc_out: the thread is at or past the control block's thread limit, so
 * none of its accesses is counted or recorded. */
static const char prologue[] =
    "// gpuprobe trace capture: prologue\n"
    "\tld.param.u64 %gpc_rec, [" PTXI_PARAM_RECORDS "];\n"
    "\tld.param.u64 %gpc_ctl, [" PTXI_PARAM_CONTROL "];\n"
    "\tcvta.to.global.u64 %gpc_rec, %gpc_rec;\n"
    "\tcvta.to.global.u64 %gpc_ctl, %gpc_ctl;\n"
    "\tld.global.u64 %gpc_cap, [%gpc_ctl+8];\n"
    "\tmov.u32 %gpc_w0, %ctaid.z;\n\tcvt.u64.u32 %gpc_a, %gpc_w0;\n"
    "\tmov.u32 %gpc_w0, %nctaid.y;\n\tcvt.u64.u32 %gpc_s, %gpc_w0;\n"
    "\tmul.lo.u64 %gpc_a, %gpc_a, %gpc_s;\n"
    "\tmov.u32 %gpc_w0, %ctaid.y;\n\tcvt.u64.u32 %gpc_s, %gpc_w0;\n"
    "\tadd.u64 %gpc_a, %gpc_a, %gpc_s;\n"
    "\tmov.u32 %gpc_w0, %nctaid.x;\n\tcvt.u64.u32 %gpc_s, %gpc_w0;\n"
    "\tmul.lo.u64 %gpc_a, %gpc_a, %gpc_s;\n"
    "\tmov.u32 %gpc_w0, %ctaid.x;\n\tcvt.u64.u32 %gpc_s, %gpc_w0;\n"
    "\tadd.u64 %gpc_a, %gpc_a, %gpc_s;\n"
    "\tmov.u32 %gpc_w1, %ntid.x;\n\tmov.u32 %gpc_w2, %ntid.y;\n\tmov.u32 %gpc_w3, %ntid.z;\n"
    "\tmul.lo.u32 %gpc_w4, %gpc_w1, %gpc_w2;\n\tmul.lo.u32 %gpc_w4, %gpc_w4, %gpc_w3;\n"
    "\tcvt.u64.u32 %gpc_s, %gpc_w4;\n\tmul.lo.u64 %gpc_tid, %gpc_a, %gpc_s;\n"
    "\tmov.u32 %gpc_w5, %tid.z;\n\tmov.u32 %gpc_w6, %tid.y;\n"
    "\tmad.lo.u32 %gpc_w6, %gpc_w5, %gpc_w2, %gpc_w6;\n"
    "\tmov.u32 %gpc_w5, %tid.x;\n\tmad.lo.u32 %gpc_w6, %gpc_w6, %gpc_w1, %gpc_w5;\n"
    "\tcvt.u64.u32 %gpc_s, %gpc_w6;\n\tadd.u64 %gpc_tid, %gpc_tid, %gpc_s;\n"
    "\tcvt.u32.u64 %gpc_w7, %gpc_tid;\n"
    "\tld.global.u64 %gpc_lim, [%gpc_ctl+16];\n"
    "\tsetp.ge.u64 %gpc_out, %gpc_tid, %gpc_lim;\n";

/* The address of site s into %gpc_a. */
static void emit_address(struct ptx *o, const struct ptxi_site *s)
{
    if (!s->base[0])
        ptx_add(o, "\tmov.u64 %%gpc_a, %lld;\n", s->offset);
    else if (s->base[0] != '%')
        ptx_add(o, "\tmov.u64 %%gpc_a, %s;\n", s->base);
    else if (s->base_bits == 32)
        ptx_add(o, "\tcvt.u64.u32 %%gpc_a, %s;\n", s->base);
    else
        ptx_add(o, "\tmov.b64 %%gpc_a, %s;\n", s->base);
    if (s->base[0] && s->offset)
        ptx_add(o, "\tadd.s64 %%gpc_a, %%gpc_a, %lld;\n", s->offset);
}

static void emit_site(struct ptx *o, const struct ptxi_site *s, enum ptxi_mode mode)
{
    ptx_add(o, "// gpuprobe trace capture: pc %u, %s of %u bytes\n", s->pc, ptxi_kind_name(s->kind), s->width);
    ptx_add(o, "\t@%%gpc_out bra $gpcap_skip_%u;\n", s->pc);
    if (s->guard[0])
        ptx_add(o, "\t@%s%s bra $gpcap_skip_%u;\n", s->guard[0] == '!' ? "" : "!",
                s->guard[0] == '!' ? s->guard + 1 : s->guard, s->pc);
    if (mode == PTXI_COUNT) {
        ptx_add(o, "\tred.global.add.u64 [%%gpc_ctl], 1;\n");
    } else {
        emit_address(o, s);
        ptx_add(o,
                "\tatom.global.add.u64 %%gpc_s, [%%gpc_ctl], 1;\n"
                "\tsetp.lt.u64 %%gpc_ok, %%gpc_s, %%gpc_cap;\n"
                "\tshl.b64 %%gpc_q, %%gpc_s, 4;\n"
                "\tadd.s64 %%gpc_q, %%gpc_q, %%gpc_rec;\n"
                "\tmov.u32 %%gpc_w0, %u;\n"
                "\t@%%gpc_ok st.global.u64 [%%gpc_q], %%gpc_a;\n"
                "\t@%%gpc_ok st.global.v2.u32 [%%gpc_q+8], {%%gpc_w7, %%gpc_w0};\n",
                s->pc);
    }
    ptx_add(o, "$gpcap_skip_%u:\n", s->pc);
    ptx_add(o, "\t");
}

/* Copies ptx[*from, to) into o. */
static void copy_to(struct ptx *o, const char *ptx, size_t *from, size_t to)
{
    if (to > *from)
        ptx_add(o, "%.*s", (int)(to - *from), ptx + *from);
    *from = to;
}

char *ptxi_rewrite(const char *ptx, const struct ptxi_kernel *k, enum ptxi_mode mode, char *err,
                   size_t errlen)
{
    struct ptx o;
    size_t at = 0;
    ptx_init(&o);
    copy_to(&o, ptx, &at, k->params_at);
    ptx_add(&o, "%s\n\t.param .u64 %s,\n\t.param .u64 %s\n%s", k->params_paren ? (k->nparams ? "," : "") : "(",
            PTXI_PARAM_RECORDS, PTXI_PARAM_CONTROL, k->params_paren ? "" : ")");
    copy_to(&o, ptx, &at, k->decls_at);
    ptx_add(&o, "%s", decls);
    copy_to(&o, ptx, &at, k->prologue_at);
    ptx_add(&o, "%s\t", prologue);
    for (size_t i = 0; i < k->nsites; i++) {
        copy_to(&o, ptx, &at, k->sites[i].at);
        emit_site(&o, &k->sites[i], mode);
    }
    copy_to(&o, ptx, &at, strlen(ptx));
    char *text = ptx_take(&o);
    if (!text)
        fail(err, errlen, "out of memory for the instrumented PTX");
    return text;
}
