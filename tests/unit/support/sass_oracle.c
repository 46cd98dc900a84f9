/*
 * Test support: the SASS oracle (see sass_oracle.h).
 */
#include "tests/unit/support/sass_oracle.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/support/tmpfile.h"

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    *cap = *cap ? *cap * 2 : 64;
    p = realloc(p, *cap * elem);
    assert_non_null(p);
    return p;
}

/* The 64-bit word of the first hex comment ("0x0123..." in a C comment)
 * in s, or -1 if none. */
static int hex_comment(const char *s, uint64_t *out)
{
    const char *p = strstr(s, "/* 0x");
    if (!p)
        return -1;
    *out = strtoull(p + 3, NULL, 16);
    return 0;
}

/* An instruction line: offset comment, TEXT, ";", hex comment. */
static int parse_insn_line(const char *line, struct oinsn *in)
{
    const char *p = line;
    while (*p == ' ')
        p++;
    if (sscanf(p, "/*%x*/", &in->offset) != 1)
        return -1;
    p = strstr(p, "*/") + 2;
    while (*p == ' ')
        p++;
    const char *semi = strchr(p, ';');
    if (!semi || hex_comment(semi, &in->lo) != 0)
        return -1;
    size_t n = (size_t)(semi - p);
    while (n && p[n - 1] == ' ')
        n--;
    assert_true(n < sizeof in->text);
    memcpy(in->text, p, n);
    in->text[n] = '\0';
    return 0;
}

/* The function a line opens, or NULL: "Function : NAME" in cuobjdump's
 * listing, the label ".text.NAME:" in nvdisasm's. name gets NAME. */
static const char *function_header(const char *line, char *name, size_t len)
{
    const char *fn = strstr(line, "Function : ");
    if (fn) {
        snprintf(name, len, "%s", fn + strlen("Function : "));
        return name;
    }
    size_t n = strlen(line);
    if (strncmp(line, ".text.", 6) == 0 && n > 7 && line[n - 1] == ':') {
        snprintf(name, len, "%.*s", (int)(n - 7), line + 6);
        return name;
    }
    return NULL;
}

void sass_oracle_load(const char *path, struct oracle *o)
{
    char fname[sizeof o->funcs->name];
    char *text = must_read_file(path, NULL), *save = NULL;
    memset(o, 0, sizeof *o);
    struct ofunc *cur = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (function_header(line, fname, sizeof fname)) {
            o->funcs = grow(o->funcs, &o->cap, o->n + 1, sizeof *o->funcs);
            cur = &o->funcs[o->n++];
            memset(cur, 0, sizeof *cur);
            snprintf(cur->name, sizeof cur->name, "%s", fname);
            continue;
        }
        struct oinsn in;
        if (!cur || parse_insn_line(line, &in) != 0)
            continue;
        char *second = strtok_r(NULL, "\n", &save);
        assert_non_null(second);
        assert_int_equal(hex_comment(second, &in.hi), 0);
        cur->insns = grow(cur->insns, &cur->cap, cur->n + 1, sizeof *cur->insns);
        cur->insns[cur->n++] = in;
    }
    free(text);
}

void sass_oracle_free(struct oracle *o)
{
    for (size_t i = 0; i < o->n; i++)
        free(o->funcs[i].insns);
    free(o->funcs);
}

const struct ofunc *sass_oracle_func(const struct oracle *o, const char *name)
{
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->funcs[i].name, name) == 0)
            return &o->funcs[i];
    return NULL;
}
