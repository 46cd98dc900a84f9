/*
 * The Prometheus text format (see prom_text.h).
 */
#include "server/http/prom_text.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A page has no limit of its own: its size follows the figures stored. */
#define NO_LIMIT ((size_t)-1)

static void put(struct prom_page *p, const char *s, size_t n)
{
    if (!p->failed && buf_append(&p->b, s, n, NO_LIMIT) < 0)
        p->failed = 1;
}

static void put_str(struct prom_page *p, const char *s)
{
    put(p, s, strlen(s));
}

/* s with each byte of `special` preceded by a backslash, and a newline
 * written as \n. */
static void put_escaped(struct prom_page *p, const char *s, const char *special)
{
    for (const char *run = s;; s++) {
        if (*s && *s != '\n' && !strchr(special, *s))
            continue;
        put(p, run, (size_t)(s - run));
        if (!*s)
            return;
        put(p, "\\", 1);
        put(p, *s == '\n' ? "n" : s, 1);
        run = s + 1;
    }
}

static int name_char(char c, int first, int colon)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (colon && c == ':') || (!first && c >= '0' && c <= '9');
}

static int valid_name(const char *s, int colon)
{
    if (!s || !*s)
        return 0;
    for (const char *c = s; *c; c++)
        if (!name_char(*c, c == s, colon))
            return 0;
    return 1;
}

void prom_number(char *buf, size_t len, double v)
{
    if (isnan(v)) {
        snprintf(buf, len, "NaN");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, len, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    /* the fewest digits that read back as v: 32.1, not 32.100000000000001 */
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, len, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

void prom_family(struct prom_page *p, const char *name, const char *type, const char *help)
{
    assert(valid_name(name, 1) && strlen(name) < sizeof p->family);
    assert(strcmp(type, "gauge") == 0 || strcmp(type, "counter") == 0 ||
           strcmp(type, "histogram") == 0);
    snprintf(p->family, sizeof p->family, "%s", name);
    p->histogram = strcmp(type, "histogram") == 0;
    put_str(p, "# HELP ");
    put_str(p, name);
    put_str(p, " ");
    put_escaped(p, help, "\\");
    put_str(p, "\n# TYPE ");
    put_str(p, name);
    put_str(p, " ");
    put_str(p, type);
    put_str(p, "\n");
}

static void put_labels(struct prom_page *p, const struct prom_label *l, size_t n,
                       const char *le)
{
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        if (!l[i].name && !l[i].value[0])
            continue; /* no labels of its own */
        put_str(p, any ? "," : "{");
        any = 1;
        if (!l[i].name) {
            put_str(p, l[i].value);
            continue;
        }
        assert(valid_name(l[i].name, 0) && strncmp(l[i].name, "__", 2) != 0);
        put_str(p, l[i].name);
        put_str(p, "=\"");
        put_escaped(p, l[i].value, "\\\"");
        put_str(p, "\"");
    }
    if (le) {
        put_str(p, any ? ",le=\"" : "{le=\"");
        put_str(p, le);
        put_str(p, "\"");
        any = 1;
    }
    if (any)
        put_str(p, "}");
}

static void put_sample(struct prom_page *p, const char *suffix, const struct prom_label *l,
                       size_t n, const char *le, double value)
{
    char num[40];
    prom_number(num, sizeof num, value);
    put_str(p, p->family);
    put_str(p, suffix);
    put_labels(p, l, n, le);
    put_str(p, " ");
    put_str(p, num);
    put_str(p, "\n");
}

void prom_sample(struct prom_page *p, const struct prom_label *labels, size_t n, double value)
{
    assert(p->family[0] && !p->histogram);
    put_sample(p, "", labels, n, NULL, value);
}

void prom_histogram(struct prom_page *p, const struct prom_label *labels, size_t n,
                    const struct prom_histogram *h)
{
    assert(p->family[0] && p->histogram);
    uint64_t cumulative = 0;
    char le[40];
    for (size_t i = 0; i <= h->nbounds; i++) {
        assert(i == 0 || i == h->nbounds || h->bounds[i] > h->bounds[i - 1]);
        cumulative += h->counts[i];
        prom_number(le, sizeof le, i < h->nbounds ? h->bounds[i] : INFINITY);
        put_sample(p, "_bucket", labels, n, le, (double)cumulative);
    }
    put_sample(p, "_sum", labels, n, NULL, h->sum);
    put_sample(p, "_count", labels, n, NULL, (double)cumulative);
}

char *prom_take(struct prom_page *p, size_t *len)
{
    if (p->failed) {
        prom_free(p);
        return NULL;
    }
    if (!p->b.data)
        put(p, "", 0); /* an empty page is still a string */
    char *text = p->failed ? NULL : p->b.data;
    *len = p->failed ? 0 : p->b.len;
    if (!text)
        prom_free(p);
    else
        p->b = (struct buf){0};
    return text;
}

void prom_free(struct prom_page *p)
{
    buf_free(&p->b);
    p->failed = 0;
}
