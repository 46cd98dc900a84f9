/*
 * The kernel parameters of a capture, from NAME=VALUE texts (see capture.h).
 *
 * DESIGN
 * A value is read against the parameter's declared PTX type, so the bytes
 * passed to the launch have exactly the parameter's size. The fills are
 * deterministic: rand and randf come from trace/rng.h's splitmix64 seeded
 * with SEED (rand: raw bytes; randf: floats in [0, 1), 24 random bits
 * each, so sums of them stay ordinary numbers), iota writes the 32-bit
 * words 0, 1, 2, ... — an index chase over a buffer of n words stays
 * inside it when the kernel takes them modulo n — perm:SEED a random
 * permutation of those words (Fisher-Yates over splitmix64: the indices of
 * a gather, each in range and each once), and f32:V writes V into every
 * 4-byte word.
 */
#include "probes/capture.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/rng.h"
#include "util/text.h"

static int fail(char *err, size_t errlen, const char *what, const char *text, const char *why)
{
    snprintf(err, errlen, "%s: '%.64s' %s", what, text, why);
    return -1;
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    if (!*s || *s == '-')
        return -1;
    int hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    unsigned long long v = strtoull(s, &end, hex ? 16 : 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

static int parse_fill(const char *f, struct capture_value *v)
{
    char *end = NULL;
    if (strcmp(f, "zero") == 0)
        v->fill = FILL_ZERO;
    else if (strcmp(f, "iota") == 0)
        v->fill = FILL_IOTA;
    else if (strncmp(f, "rand:", 5) == 0 && parse_u64(f + 5, &v->seed) == 0)
        v->fill = FILL_RAND;
    else if (strncmp(f, "randf:", 6) == 0 && parse_u64(f + 6, &v->seed) == 0)
        v->fill = FILL_RANDF;
    else if (strncmp(f, "perm:", 5) == 0 && parse_u64(f + 5, &v->seed) == 0)
        v->fill = FILL_PERM;
    else if (strncmp(f, "f32:", 4) == 0 && (v->f32 = strtof(f + 4, &end), end && !*end && end != f + 4))
        v->fill = FILL_F32;
    else
        return -1;
    return 0;
}

/* buf:BYTES[:FILL] */
static int parse_buffer(const struct ptxi_param *p, const char *text, struct capture_value *v,
                        char *err, size_t errlen)
{
    char size[32];
    const char *s = text + 4, *colon = strchr(s, ':');
    size_t n = colon ? (size_t)(colon - s) : strlen(s);
    if (p->bytes != 8 || p->is_array)
        return fail(err, errlen, p->name, text, "is a buffer, but the parameter is not 64-bit");
    if (n == 0 || n >= sizeof size)
        return fail(err, errlen, p->name, text, "needs a size: buf:BYTES[:FILL]");
    memcpy(size, s, n);
    size[n] = '\0';
    if (parse_u64(size, &v->bytes) < 0 || v->bytes == 0 || v->bytes > CAPTURE_MAX_BUFFER_BYTES)
        return fail(err, errlen, p->name, text, "needs a size in bytes from 1 to 16 GiB (a plain integer: buf:4096)");
    v->is_buffer = 1;
    if (colon && parse_fill(colon + 1, v) < 0)
        return fail(err, errlen, p->name, text,
                    "has an unknown fill (zero, iota, perm:SEED, rand:SEED, randf:SEED or "
                    "f32:V)");
    return 0;
}

int capture_value_parse(const struct ptxi_param *p, const char *text, struct capture_value *v,
                        char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    if (strncmp(text, "buf:", 4) == 0)
        return parse_buffer(p, text, v, err, errlen);
    if (p->is_array)
        return fail(err, errlen, p->name, text,
                    "cannot be given: by-value aggregate parameters are not supported");
    v->bytes = p->bytes;
    char *end = NULL;
    if (p->type[0] == 'f') {
        double d = strtod(text, &end);
        if (!*text || *end)
            return fail(err, errlen, p->name, text, "is not a number");
        if (p->bytes == 4) {
            float f = (float)d;
            memcpy(v->scalar, &f, 4);
        } else if (p->bytes == 8) {
            memcpy(v->scalar, &d, 8);
        } else {
            return fail(err, errlen, p->name, text, "is for a floating type this does not pass");
        }
        return 0;
    }
    long long sv;
    uint64_t uv;
    unsigned bits = 8 * p->bytes;
    if (p->type[0] == 's' && parse_ll(text, bits == 64 ? INT64_MIN : -(1ll << (bits - 1)),
                                      bits == 64 ? INT64_MAX : (1ll << (bits - 1)) - 1, &sv) == 0)
        uv = (uint64_t)sv;
    else if (p->type[0] != 's' && parse_u64(text, &uv) == 0 &&
             (bits == 64 || uv < (1ull << bits)))
        ;
    else
        return fail(err, errlen, p->name, text,
                    p->bytes == 8 && p->type[0] != 's'
                        ? "is neither buf:BYTES[:FILL] nor an integer"
                        : "is not an integer that fits the parameter");
    for (unsigned i = 0; i < p->bytes && i < 8; i++)
        v->scalar[i] = (unsigned char)(uv >> (8 * i)); /* little-endian, as the GPU reads */
    return 0;
}

/* The parameter NAME (or index) of arg names, or -1. */
static long find_param(const struct ptxi_kernel *k, const char *name, size_t len)
{
    for (size_t i = 0; i < k->nparams; i++)
        if (strlen(k->params[i].name) == len && strncmp(k->params[i].name, name, len) == 0)
            return (long)i;
    char idx[24];
    long long v;
    if (len == 0 || len >= sizeof idx)
        return -1;
    memcpy(idx, name, len);
    idx[len] = '\0';
    if (parse_ll(idx, 0, (long long)k->nparams - 1, &v) == 0)
        return (long)v;
    return -1;
}

int capture_args_bind(const struct ptxi_kernel *k, const char *const *args, size_t nargs,
                      struct capture_value *values, char *err, size_t errlen)
{
    char *given = calloc(k->nparams + 1, 1);
    int rc = -1;
    if (!given)
        return snprintf(err, errlen, "out of memory"), -1;
    for (size_t a = 0; a < nargs; a++) {
        const char *eq = strchr(args[a], '=');
        long i = eq ? find_param(k, args[a], (size_t)(eq - args[a])) : -1;
        if (!eq) {
            snprintf(err, errlen, "parameter '%.64s': write NAME=VALUE", args[a]);
            goto out;
        }
        if (i < 0) {
            snprintf(err, errlen, "'%.*s' is not a parameter of %s (names or indexes 0-%zu)",
                     (int)(eq - args[a] > 64 ? 64 : eq - args[a]), args[a], k->entry,
                     k->nparams ? k->nparams - 1 : 0);
            goto out;
        }
        if (given[i]) {
            snprintf(err, errlen, "parameter %s is given twice", k->params[i].name);
            goto out;
        }
        given[i] = 1;
        if (capture_value_parse(&k->params[i], eq + 1, &values[i], err, errlen) < 0)
            goto out;
    }
    for (size_t i = 0; i < k->nparams; i++)
        if (!given[i]) {
            snprintf(err, errlen, "parameter %zu (%s, .%s) is not given: --param %s=VALUE", i,
                     k->params[i].name, k->params[i].type, k->params[i].name);
            goto out;
        }
    rc = 0;
out:
    free(given);
    return rc;
}

static void put_word(unsigned char *out, size_t i, uint32_t w)
{
    for (int b = 0; b < 4; b++)
        out[4 * i + (size_t)b] = (unsigned char)(w >> (8 * b));
}

static uint32_t get_word(const unsigned char *out, size_t i)
{
    uint32_t w = 0;
    for (int b = 0; b < 4; b++)
        w |= (uint32_t)out[4 * i + (size_t)b] << (8 * b);
    return w;
}

/* The words 0 .. words-1 in a random order (words < 2^32 by the size cap). */
static void fill_perm(unsigned char *out, size_t n, uint64_t state)
{
    size_t words = n / 4;
    memset(out, 0, n);
    for (size_t i = 0; i < words; i++)
        put_word(out, i, (uint32_t)i);
    for (size_t i = words; i > 1; i--) {
        size_t j = (size_t)(trace_splitmix64(&state) % i);
        uint32_t a = get_word(out, i - 1), b = get_word(out, j);
        put_word(out, i - 1, b);
        put_word(out, j, a);
    }
}

void capture_fill_bytes(const struct capture_value *v, unsigned char *out)
{
    uint64_t state = v->seed;
    size_t n = v->bytes, words = n / 4;
    switch (v->fill) {
    case FILL_ZERO:
        memset(out, 0, n);
        return;
    case FILL_PERM:
        fill_perm(out, n, state);
        return;
    case FILL_RAND:
        for (size_t i = 0; i < n; i += 8) {
            uint64_t x = trace_splitmix64(&state);
            memcpy(out + i, &x, n - i < 8 ? n - i : 8);
        }
        return;
    case FILL_RANDF:
    case FILL_IOTA:
    case FILL_F32:
        memset(out, 0, n);
        for (size_t i = 0; i < words; i++) {
            float f = v->f32;
            uint32_t w = (uint32_t)i;
            if (v->fill == FILL_RANDF)
                f = (float)(trace_splitmix64(&state) >> 40) * 0x1p-24f;
            if (v->fill != FILL_IOTA)
                memcpy(&w, &f, 4);
            put_word(out, i, w);
        }
        return;
    }
}

int capture_dims_parse(const char *text, unsigned d[3], char *err, size_t errlen)
{
    const char *p = text;
    d[0] = d[1] = d[2] = 1;
    for (int i = 0; i < 3; i++) {
        char *end = NULL;
        errno = 0;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p || errno || v == 0 || v > 0x7fffffffUL || *p == '-') {
            snprintf(err, errlen, "'%.40s' is not X[,Y[,Z]] of positive integers", text);
            return -1;
        }
        d[i] = (unsigned)v;
        if (!*end)
            return 0;
        if ((*end != ',' && *end != 'x') || i == 2) {
            snprintf(err, errlen, "'%.40s' is not X[,Y[,Z]] of positive integers", text);
            return -1;
        }
        p = end + 1;
    }
    return 0;
}

int capture_dims_limit(const char *what, const unsigned d[3], char *err, size_t errlen)
{
    /* the CUDA C++ Programming Guide's technical specifications, every
     * compute capability since 3.0 */
    int block = strcmp(what, "block") == 0;
    const unsigned long long max[3] = {block ? 1024u : 0x7fffffffu, block ? 1024u : 65535u,
                                       block ? 64u : 65535u};
    for (int i = 0; i < 3; i++)
        if (d[i] > max[i]) {
            snprintf(err, errlen, "%s %u,%u,%u: its %c is over CUDA's %llu", what, d[0], d[1], d[2],
                     "xyz"[i], max[i]);
            return -1;
        }
    if (block && (unsigned long long)d[0] * d[1] * d[2] > 1024) {
        snprintf(err, errlen, "block %u,%u,%u: %llu threads, over CUDA's 1024", d[0], d[1], d[2],
                 (unsigned long long)d[0] * d[1] * d[2]);
        return -1;
    }
    return 0;
}

int capture_arg_check(const char *item, char *err, size_t errlen)
{
    const char *eq = strchr(item, '=');
    if (!eq || eq == item) {
        snprintf(err, errlen, "'%.64s' is not NAME=VALUE", item);
        return -1;
    }
    if (strncmp(eq + 1, "buf:", 4) != 0)
        return 0; /* a scalar: whether it fits, the PTX's type says */
    struct ptxi_param p = {.type = "u64", .bytes = 8};
    struct capture_value v;
    snprintf(p.name, sizeof p.name, "%.*s", (int)(eq - item), item);
    return parse_buffer(&p, eq + 1, &v, err, errlen);
}
