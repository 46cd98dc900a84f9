/*
 * Trace sort parameters: defaults, architecture presets, the settings
 * table, parsing, validation and JSON (see params.h; the numbers of the
 * presets are explained in docs/trace-sort.md, "Presets").
 *
 * DESIGN
 * One table of settings drives everything a setting needs: what users see
 * (name, type, bounds, choices, meaning, default) and where it lives (its
 * bit and the offset of its field), so parsing, validation, JSON in and out
 * and every list derived elsewhere follow from one line here. Presets are a
 * second table; applying one writes only fields whose bit is not in p->set.
 */
#include "trace/params.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/errf.h"

const char *const trace_arch_names[] = {"fermi", "kepler", "volta", "ampere", "hopper", NULL};

void trace_params_default(struct trace_params *p)
{
    memset(p, 0, sizeof *p);
    p->in_format = TRACE_FMT_AUTO;
    p->out_format = TRACE_OUT_CSV;
    p->threads_per_block = 256;
    p->blocks_per_sm = 0;
    p->seed = 1;
    p->schedule = TRACE_SCHEDULE_RR;
    p->delay = TRACE_DELAY_NORMAL;
    p->placement = TRACE_PLACEMENT_RR;
    trace_params_preset(p, "fermi", NULL, 0);
}

/* ---- names of the choices -------------------------------------------- */

static const char *const coalesce_names[] = {"line128", "sector32", NULL};
static const char *const schedule_names[] = {"rr", "gto", NULL};
static const char *const delay_names[] = {"normal", "fixed", NULL};
static const char *const placement_names[] = {"rr", "fill", "dealt", NULL};
static const char *const out_format_names[] = {"csv", "bin", NULL};

/* names[i] for an in-range i, "?" otherwise. */
static const char *name_of(const char *const *names, unsigned i)
{
    for (unsigned k = 0; names[k]; k++)
        if (k == i)
            return names[k];
    return "?";
}

const char *trace_coalesce_name(enum trace_coalesce c) { return name_of(coalesce_names, c); }
const char *trace_schedule_name(enum trace_schedule s) { return name_of(schedule_names, s); }
const char *trace_delay_name(enum trace_delay d) { return name_of(delay_names, d); }
const char *trace_placement_name(enum trace_placement pl) { return name_of(placement_names, pl); }
const char *trace_out_format_name(enum trace_out_format f) { return name_of(out_format_names, f); }

/* ---- the settings table ----------------------------------------------- */

/* How a setting's field is stored (the users' type is in the public part). */
enum store { S_U32, S_U64, S_DOUBLE, S_ENUM, S_ARCH };

struct setting {
    struct trace_setting pub;
    enum store store;
    uint32_t bit;
    size_t off;
};

#define OFF(f) offsetof(struct trace_params, f)
#define INT(lo, hi) TRACE_SETTING_INT, lo, hi, 0, NULL
#define POW2(lo, hi) TRACE_SETTING_INT, lo, hi, 1, NULL
#define NUMBER(lo, hi) TRACE_SETTING_NUMBER, lo, hi, 0, NULL
#define CHOICE(names) TRACE_SETTING_CHOICE, 0, 0, 0, names
static const struct setting settings[] = {
    {{"in_format", CHOICE(trace_format_names), 1,
      "the input's format; auto tells it from the content (the binary magic, the CSV header, "
      "MEMTRACE: lines, Accel-Sim's -grid dim/#BEGIN_TB lines)", "auto", "\"auto\""},
     S_ENUM, TRACE_P_IN_FORMAT, OFF(in_format)},
    {{"out_format", CHOICE(out_format_names), 1,
      "the output's format: csv or bin (docs/trace-format.md); on the command line, bin for an "
      "OUT named *.bin", "csv", "\"csv\""},
     S_ENUM, TRACE_P_OUT_FORMAT, OFF(out_format)},
    {{"arch", CHOICE(trace_arch_names), 0, "preset for every setting not given, wherever it appears",
      "fermi", NULL},
     S_ARCH, TRACE_P_ARCH, OFF(arch)},
    {{"threads_per_block", INT(1, TRACE_MAX_THREADS_PER_BLOCK), 0,
      "block size of the traced kernel", "the input's, else 256", NULL},
     S_U32, TRACE_P_THREADS_PER_BLOCK, OFF(threads_per_block)},
    {{"blocks_per_sm", INT(0, TRACE_MAX_BLOCKS_PER_SM), 0,
      "resident blocks per SM; 0 derives it from the two limits below (step 1b)", "0", NULL},
     S_U32, TRACE_P_BLOCKS_PER_SM, OFF(blocks_per_sm)},
    {{"threads_per_sm", INT(32, TRACE_MAX_THREADS_PER_SM), 0,
      "hardware limit used to derive blocks_per_sm", "preset", NULL},
     S_U32, TRACE_P_THREADS_PER_SM, OFF(threads_per_sm)},
    {{"max_blocks_per_sm", INT(1, TRACE_MAX_BLOCKS_PER_SM), 0,
      "hardware limit used to derive blocks_per_sm", "preset", NULL},
     S_U32, TRACE_P_MAX_BLOCKS, OFF(max_blocks_per_sm)},
    {{"sms", INT(1, TRACE_MAX_SMS), 0, "SM count", "preset", NULL},
     S_U32, TRACE_P_SMS, OFF(sms)},
    {{"line", POW2(32, TRACE_MAX_LINE), 0, "L1 line size in bytes (the line128 key)", "128", NULL},
     S_U32, TRACE_P_LINE, OFF(line_bytes)},
    {{"mshr", INT(1, TRACE_MAX_MSHR), 0,
      "requests in flight per SM before the LSU stalls (step 6d)", "preset", NULL},
     S_U32, TRACE_P_MSHR, OFF(mshr)},
    {{"lat_min", INT(1, TRACE_MAX_LAT_MIN), 0, "M: the shortest delay, in requests", "preset",
      NULL},
     S_U32, TRACE_P_LAT_MIN, OFF(lat_min)},
    {{"lat_sigma", NUMBER(0, TRACE_MAX_LAT_SIGMA), 0,
      "sigma of the delay's normal part, in requests", "preset", NULL},
     S_DOUBLE, TRACE_P_LAT_SIGMA, OFF(lat_sigma)},
    {{"seed", TRACE_SETTING_U64, 0, 0, 0, NULL, 0, "random seed", "1", NULL},
     S_U64, TRACE_P_SEED, OFF(seed)},
    {{"coalesce", CHOICE(coalesce_names), 0,
      "one request per 128 bytes of data (line128) or per 32-byte sector (sector32)", "preset",
      NULL},
     S_ENUM, TRACE_P_COALESCE, OFF(coalesce)},
    {{"schedule", CHOICE(schedule_names), 0,
      "warp scheduling: round-robin (rr) or greedy-then-oldest (gto)", "rr", NULL},
     S_ENUM, TRACE_P_SCHEDULE, OFF(schedule)},
    {{"delay", CHOICE(delay_names), 0,
      "a request's delay: lat_min + abs(N(0, lat_sigma)) (normal) or lat_min (fixed)", "normal",
      NULL},
     S_ENUM, TRACE_P_DELAY, OFF(delay)},
    {{"placement", CHOICE(placement_names), 0,
      "blocks to SMs: round-robin (rr), filling one SM before the next (fill), or in the order "
      "the device's memory probe measured (dealt; trace sort --device)", "rr", NULL},
     S_ENUM, TRACE_P_PLACEMENT, OFF(placement)},
};
#define NSETTINGS (sizeof settings / sizeof settings[0])
_Static_assert(NSETTINGS == TRACE_SETTING_COUNT, "TRACE_SETTING_COUNT is the table's length");

const struct trace_setting *trace_setting_at(size_t i)
{
    assert(i < NSETTINGS);
    return &settings[i].pub;
}

/* The table entry behind a public pointer from this table. */
static const struct setting *entry(const struct trace_setting *s)
{
    const struct setting *e = (const struct setting *)s;
    assert(e >= settings && e < settings + NSETTINGS);
    return e;
}

const struct trace_setting *trace_setting_find(const char *name)
{
    for (size_t i = 0; name && i < NSETTINGS; i++) {
        const char *a = settings[i].pub.name, *b = name;
        while (*a && (*a == *b || (*a == '_' && *b == '-')))
            a++, b++;
        if (!*a && !*b)
            return &settings[i].pub;
    }
    return NULL;
}

/* ---- presets ---------------------------------------------------------- */

/* The settings a preset gives (the others it leaves alone). */
#define PRESET_BITS                                                                          \
    (TRACE_P_SMS | TRACE_P_THREADS_PER_SM | TRACE_P_MAX_BLOCKS | TRACE_P_LINE | TRACE_P_MSHR | \
     TRACE_P_LAT_MIN | TRACE_P_LAT_SIGMA | TRACE_P_COALESCE)

struct preset {
    const char *name;
    struct trace_params v; /* the PRESET_BITS fields */
};

/* SM counts: GTX 480, Tesla K40, Tesla V100, A100, H100 SXM5.
 * threads_per_sm / max_blocks: the CUDA programming guide's per-compute-
 * capability limits (2.0, 3.5, 7.0, 8.0, 9.0).
 * mshr: fermi 32 and volta 512 are the L1D MSHR entries of GPGPU-Sim's
 * GTX480 and V100 configurations; kepler 64, ampere and hopper 512 are
 * modelling choices. lat_min/lat_sigma: modelling choices, derived in
 * docs/trace-sort.md (miss latency / cycles per transaction at the SM's share
 * of DRAM bandwidth), sigma a quarter of M. */
#define PRESET(n, s, tps, mb, m, lm, ls, c)                                                   \
    {                                                                                         \
        n, {.sms = s, .threads_per_sm = tps, .max_blocks_per_sm = mb, .line_bytes = 128,     \
            .mshr = m, .lat_min = lm, .lat_sigma = ls, .coalesce = TRACE_COALESCE_##c }        \
    }
static const struct preset presets[] = {
    PRESET("fermi", 15, 1536, 8, 32, 40, 10.0, LINE128),
    PRESET("kepler", 15, 2048, 16, 64, 60, 15.0, LINE128),
    PRESET("volta", 80, 2048, 32, 512, 100, 25.0, SECTOR32),
    PRESET("ampere", 108, 2048, 32, 512, 150, 35.0, SECTOR32),
    PRESET("hopper", 132, 2048, 32, 512, 200, 50.0, SECTOR32),
};
#define NPRESETS (sizeof presets / sizeof presets[0])

static size_t store_size(enum store st)
{
    return st == S_U64 ? sizeof(uint64_t) : st == S_DOUBLE ? sizeof(double) : sizeof(uint32_t);
}

int trace_params_preset(struct trace_params *p, const char *arch, char *msg, size_t msglen)
{
    const struct preset *pr = NULL;
    char names[160];
    for (size_t i = 0; i < NPRESETS && !pr; i++)
        pr = strcmp(presets[i].name, arch) == 0 ? &presets[i] : NULL;
    if (!pr) {
        trace_setting_bounds(trace_setting_find("arch"), names, sizeof names);
        errf(msg, msglen, "arch: must be one of %s, not '%.32s'", names, arch);
        return -1;
    }
    snprintf(p->arch, sizeof p->arch, "%s", pr->name);
    for (size_t i = 0; i < NSETTINGS; i++) {
        const struct setting *e = &settings[i];
        if ((e->bit & PRESET_BITS) && !(p->set & e->bit))
            memcpy((char *)p + e->off, (const char *)&pr->v + e->off, store_size(e->store));
    }
    return 0;
}

/* ---- applying a setting ----------------------------------------------- */

/* All of s as an unsigned decimal integer: digits only. */
static int parse_u64(const char *s, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

static int parse_double(const char *s, double *out)
{
    if (!s || !*s || *s == ' ')
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static int is_pow2(uint64_t v)
{
    return v && !(v & (v - 1));
}

void trace_setting_bounds(const struct trace_setting *s, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    switch (s->type) {
    case TRACE_SETTING_INT:
        snprintf(buf, len, "%s%.0f-%.0f", s->pow2 ? "power of two, " : "", s->min, s->max);
        break;
    case TRACE_SETTING_NUMBER:
        snprintf(buf, len, "%.10g-%.10g", s->min, s->max);
        break;
    case TRACE_SETTING_U64:
        snprintf(buf, len, "0 to 2^64-1");
        break;
    case TRACE_SETTING_CHOICE:
        for (const char *const *c = s->choices; *c && n < len; c++)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", *c);
        break;
    }
}

/* Why text is not a value of s. */
static int refuse(const struct trace_setting *s, const char *text, char *why, size_t whylen)
{
    char bounds[160];
    trace_setting_bounds(s, bounds, sizeof bounds);
    switch (s->type) {
    case TRACE_SETTING_INT:
        errf(why, whylen, "must be %s from %.0f to %.0f, not '%.32s'",
            s->pow2 ? "a power of two" : "an integer", s->min, s->max, text);
        break;
    case TRACE_SETTING_NUMBER:
        errf(why, whylen, "must be a number from %.10g to %.10g, not '%.32s'", s->min, s->max, text);
        break;
    case TRACE_SETTING_U64:
        errf(why, whylen, "must be a decimal integer from 0 to %llu, not '%.32s'",
            (unsigned long long)UINT64_MAX, text);
        break;
    case TRACE_SETTING_CHOICE:
        errf(why, whylen, "must be one of %s, not '%.32s'", bounds, text);
        break;
    }
    return -1;
}

/* The index of text among the choices, or -1. */
static int choice_index(const struct trace_setting *s, const char *text)
{
    for (int i = 0; s->choices[i]; i++)
        if (strcmp(s->choices[i], text) == 0)
            return i;
    return -1;
}

/* Checks text against s; the parsed value goes to the out parameter its type uses. */
static int parse_value(const struct trace_setting *s, const char *text, uint64_t *u, double *d,
                       int *choice, char *why, size_t whylen)
{
    int ok = 0;
    switch (s->type) {
    case TRACE_SETTING_INT:
        ok = parse_u64(text, u) == 0 && *u >= s->min && *u <= s->max && (!s->pow2 || is_pow2(*u));
        break;
    case TRACE_SETTING_U64:
        ok = parse_u64(text, u) == 0;
        break;
    case TRACE_SETTING_NUMBER:
        ok = parse_double(text, d) == 0 && *d >= s->min && *d <= s->max;
        break;
    case TRACE_SETTING_CHOICE:
        ok = (*choice = choice_index(s, text)) >= 0;
        break;
    }
    return ok ? 0 : refuse(s, text, why, whylen);
}

int trace_setting_apply(struct trace_params *p, const struct trace_setting *s, const char *text,
                        char *why, size_t whylen)
{
    const struct setting *e = entry(s);
    char *field = (char *)p + e->off;
    uint64_t u = 0;
    double d = 0;
    int choice = 0;
    if (!text || parse_value(s, text, &u, &d, &choice, why, whylen))
        return text ? -1 : refuse(s, "", why, whylen);
    switch (e->store) {
    case S_ARCH:
        return trace_params_preset(p, text, why, whylen);
    case S_U32: {
        uint32_t v = (uint32_t)u;
        memcpy(field, &v, sizeof v);
        break;
    }
    case S_U64:
        memcpy(field, &u, sizeof u);
        break;
    case S_DOUBLE:
        memcpy(field, &d, sizeof d);
        break;
    case S_ENUM:
        memcpy(field, &choice, sizeof choice);
        break;
    }
    p->set |= e->bit;
    return 0;
}

json_t *trace_setting_json(const struct trace_setting *s, const char *text, char *why,
                           size_t whylen)
{
    uint64_t u = 0;
    double d = 0;
    int choice = 0;
    if (!text || parse_value(s, text, &u, &d, &choice, why, whylen))
        return text ? NULL : (refuse(s, "", why, whylen), NULL);
    switch (s->type) {
    case TRACE_SETTING_INT:
        return json_integer((json_int_t)u);
    case TRACE_SETTING_NUMBER:
        return json_real(d);
    case TRACE_SETTING_U64:
    case TRACE_SETTING_CHOICE:
        return json_string(text);
    }
    return NULL;
}

int trace_params_set(struct trace_params *p, const char *name, const char *value, char *msg, size_t msglen)
{
    char why[200];
    if (!name || !value) {
        errf(msg, msglen, "missing setting name or value");
        return -1;
    }
    const struct trace_setting *s = strchr(name, '-') ? NULL : trace_setting_find(name);
    if (!s) {
        errf(msg, msglen, "unknown setting '%.40s'", name);
        return -1;
    }
    if (trace_setting_apply(p, s, value, why, sizeof why) == 0)
        return 0;
    errf(msg, msglen, "%s: %s", s->name, why);
    return -1;
}

int trace_params_parse(struct trace_params *p, const char *assignment, char *msg, size_t msglen)
{
    const char *eq = assignment ? strchr(assignment, '=') : NULL;
    if (!eq || eq == assignment) {
        errf(msg, msglen, "'%.40s' is not name=value", assignment ? assignment : "");
        return -1;
    }
    char name[40];
    size_t n = (size_t)(eq - assignment);
    if (n >= sizeof name) {
        errf(msg, msglen, "unknown setting '%.*s'", (int)(n > 40 ? 40 : n), assignment);
        return -1;
    }
    memcpy(name, assignment, n);
    name[n] = '\0';
    return trace_params_set(p, name, eq + 1, msg, msglen);
}

/* ---- derived values and validation ------------------------------------ */

void trace_params_resolve(struct trace_params *p, uint32_t input_tpb)
{
    if (!(p->set & TRACE_P_THREADS_PER_BLOCK) && input_tpb)
        p->threads_per_block = input_tpb;
    if (p->blocks_per_sm == 0 && p->threads_per_block) {
        uint32_t by_threads = p->threads_per_sm / p->threads_per_block;
        uint32_t b = by_threads < p->max_blocks_per_sm ? by_threads : p->max_blocks_per_sm;
        p->blocks_per_sm = b ? b : 1;
    }
}

uint32_t trace_params_warps_per_block(const struct trace_params *p)
{
    return (p->threads_per_block + 31) / 32;
}

static json_t *setting_to_json(const struct trace_params *p, const struct setting *e);

/* A numeric field against its setting's bounds. */
static int field_ok(const struct trace_params *p, const struct setting *e)
{
    const char *field = (const char *)p + e->off;
    if (e->store == S_DOUBLE) {
        double v;
        memcpy(&v, field, sizeof v);
        return v >= e->pub.min && v <= e->pub.max;
    }
    uint32_t v;
    memcpy(&v, field, sizeof v);
    /* once resolved, blocks_per_sm is at least 1: 0 only asks to derive it */
    double lo = e->bit == TRACE_P_BLOCKS_PER_SM ? 1 : e->pub.min;
    return v >= lo && v <= e->pub.max && (!e->pub.pow2 || is_pow2(v));
}

/* A choice field holds one of its choices. */
static int choice_ok(const struct trace_params *p, const struct setting *e)
{
    int v;
    memcpy(&v, (const char *)p + e->off, sizeof v);
    return v >= 0 && strcmp(name_of(e->pub.choices, (unsigned)v), "?") != 0;
}

int trace_params_validate(const struct trace_params *p, char *msg, size_t msglen)
{
    char bounds[160];
    for (size_t i = 0; i < NSETTINGS; i++) {
        const struct setting *e = &settings[i];
        if (e->store == S_ENUM && !choice_ok(p, e)) {
            errf(msg, msglen, "%s: the policy has an unknown value", e->pub.name);
            return -1;
        }
        if ((e->store != S_U32 && e->store != S_DOUBLE) || field_ok(p, e))
            continue;
        trace_setting_bounds(&e->pub, bounds, sizeof bounds);
        json_t *v = setting_to_json(p, e);
        char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(12));
        if (e->bit == TRACE_P_BLOCKS_PER_SM)
            errf(msg, msglen, "blocks_per_sm: %s is not from 1 to %u (resolve the parameters first)",
                text ? text : "?", TRACE_MAX_BLOCKS_PER_SM);
        else
            errf(msg, msglen, "%s: %s does not fit (%s)", e->pub.name, text ? text : "?", bounds);
        free(text);
        json_decref(v);
        return -1;
    }
    return 0;
}

/* ---- JSON --------------------------------------------------------------- */

static json_t *setting_to_json(const struct trace_params *p, const struct setting *e)
{
    const char *field = (const char *)p + e->off;
    switch (e->store) {
    case S_U32: {
        uint32_t v;
        memcpy(&v, field, sizeof v);
        return json_integer(v);
    }
    case S_U64: {
        uint64_t v; /* JSON integers are signed 64-bit: large seeds go as strings */
        memcpy(&v, field, sizeof v);
        if (v > (uint64_t)INT64_MAX) {
            char buf[24];
            snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
            return json_string(buf);
        }
        return json_integer((json_int_t)v);
    }
    case S_DOUBLE: {
        double v;
        memcpy(&v, field, sizeof v);
        return json_real(v);
    }
    case S_ENUM: {
        int v;
        memcpy(&v, field, sizeof v);
        return json_string(name_of(e->pub.choices, (unsigned)v));
    }
    case S_ARCH:
        return json_string(p->arch);
    }
    return NULL;
}

json_t *trace_params_to_json(const struct trace_params *p)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    for (size_t i = 0; i < NSETTINGS; i++)
        if (!settings[i].pub.io &&
            json_object_set_new(o, settings[i].pub.name, setting_to_json(p, &settings[i])))
            goto fail;
    return o;
fail:
    json_decref(o);
    return NULL;
}

/* A JSON value of s's type as the text trace_setting_apply takes; -1 if v
 * has the wrong JSON type. */
static int json_value_text(const struct trace_setting *s, const json_t *v, char *buf, size_t len)
{
    int ok = s->type == TRACE_SETTING_CHOICE ? json_is_string(v)
             : s->type == TRACE_SETTING_U64  ? (json_is_integer(v) || json_is_string(v))
                                             : json_is_number(v);
    if (!ok)
        return -1;
    if (json_is_string(v))
        return snprintf(buf, len, "%s", json_string_value(v)) < (int)len ? 0 : -1;
    if (json_is_integer(v))
        return snprintf(buf, len, "%lld", (long long)json_integer_value(v)) < (int)len ? 0 : -1;
    return snprintf(buf, len, "%.17g", json_real_value(v)) < (int)len ? 0 : -1;
}

/* Applies one member of a settings object. */
static int apply_member(struct trace_params *p, const char *key, const json_t *v, char *msg,
                        size_t msglen)
{
    char buf[64];
    const struct trace_setting *s = strchr(key, '-') ? NULL : trace_setting_find(key);
    if (!s) {
        errf(msg, msglen, "unknown setting '%.40s'", key);
        return -1;
    }
    if (json_value_text(s, v, buf, sizeof buf)) {
        errf(msg, msglen, "%s: wrong JSON type", s->name);
        return -1;
    }
    return trace_params_set(p, key, buf, msg, msglen);
}

int trace_params_from_json(struct trace_params *p, const json_t *obj, char *msg, size_t msglen)
{
    if (!json_is_object(obj)) {
        errf(msg, msglen, "parameters must be a JSON object");
        return -1;
    }
    const json_t *arch = json_object_get(obj, "arch");
    /* arch first: a preset never overrides what the object sets; "" is no preset */
    if (arch && !(json_is_string(arch) && json_string_value(arch)[0] == '\0') &&
        apply_member(p, "arch", arch, msg, msglen))
        return -1;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v)
        if (strcmp(key, "arch") != 0 && apply_member(p, key, v, msg, msglen))
            return -1;
    return 0;
}
