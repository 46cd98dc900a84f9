/*
 * Trace sorter parameters: defaults, architecture presets, name=value
 * parsing, validation and JSON (see params.h; the numbers of the presets are
 * explained in docs/trace-sort.md, "Presets").
 *
 * DESIGN
 * A table of settings (name, bit, kind, field offset, bounds) drives parsing,
 * JSON in and JSON out, so a new setting is one line here. Presets are a
 * second table; applying one writes only fields whose bit is not in p->set.
 */
#include "trace/params.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- presets ---------------------------------------------------------- */

struct preset {
    const char *name;
    uint32_t sms, threads_per_sm, max_blocks, line, mshr, lat_min;
    double lat_sigma;
    enum trace_coalesce coalesce;
};

/* SM counts: GTX 480, Tesla K40, Tesla V100, A100, H100 SXM5.
 * threads_per_sm / max_blocks: the CUDA programming guide's per-compute-
 * capability limits (2.0, 3.5, 7.0, 8.0, 9.0).
 * mshr: fermi 32 and volta 512 are the L1D MSHR entries of GPGPU-Sim's
 * GTX480 and V100 configurations; kepler 64, ampere and hopper 512 are
 * modelling choices. lat_min/lat_sigma: modelling choices, derived in
 * docs/trace-sort.md (miss latency / cycles per transaction at the SM's share
 * of DRAM bandwidth), sigma a quarter of M. */
static const struct preset presets[] = {
    {"fermi", 15, 1536, 8, 128, 32, 40, 10.0, TRACE_COALESCE_LINE128},
    {"kepler", 15, 2048, 16, 128, 64, 60, 15.0, TRACE_COALESCE_LINE128},
    {"volta", 80, 2048, 32, 128, 512, 100, 25.0, TRACE_COALESCE_SECTOR32},
    {"ampere", 108, 2048, 32, 128, 512, 150, 35.0, TRACE_COALESCE_SECTOR32},
    {"hopper", 132, 2048, 32, 128, 512, 200, 50.0, TRACE_COALESCE_SECTOR32},
};
#define NPRESETS (sizeof presets / sizeof presets[0])

const char *const trace_arch_names[] = {"fermi", "kepler", "volta", "ampere", "hopper", NULL};

static void say(char *msg, size_t msglen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *msg, size_t msglen, const char *fmt, ...)
{
    if (!msg || !msglen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, msglen, fmt, ap);
    va_end(ap);
}

static const struct preset *find_preset(const char *name)
{
    for (size_t i = 0; i < NPRESETS; i++)
        if (strcmp(presets[i].name, name) == 0)
            return &presets[i];
    return NULL;
}

int trace_params_preset(struct trace_params *p, const char *arch, char *msg, size_t msglen)
{
    const struct preset *pr = find_preset(arch);
    if (!pr) {
        say(msg, msglen, "arch: unknown architecture '%.32s' (fermi, kepler, volta, ampere, hopper)", arch);
        return -1;
    }
    snprintf(p->arch, sizeof p->arch, "%s", pr->name);
    uint32_t s = p->set;
    if (!(s & TRACE_P_SMS))
        p->sms = pr->sms;
    if (!(s & TRACE_P_THREADS_PER_SM))
        p->threads_per_sm = pr->threads_per_sm;
    if (!(s & TRACE_P_MAX_BLOCKS))
        p->max_blocks_per_sm = pr->max_blocks;
    if (!(s & TRACE_P_LINE))
        p->line_bytes = pr->line;
    if (!(s & TRACE_P_MSHR))
        p->mshr = pr->mshr;
    if (!(s & TRACE_P_LAT_MIN))
        p->lat_min = pr->lat_min;
    if (!(s & TRACE_P_LAT_SIGMA))
        p->lat_sigma = pr->lat_sigma;
    if (!(s & TRACE_P_COALESCE))
        p->coalesce = pr->coalesce;
    return 0;
}

void trace_params_default(struct trace_params *p)
{
    memset(p, 0, sizeof *p);
    p->threads_per_block = 256;
    p->blocks_per_sm = 0;
    p->seed = 1;
    p->schedule = TRACE_SCHEDULE_RR;
    p->delay = TRACE_DELAY_NORMAL;
    p->placement = TRACE_PLACEMENT_RR;
    trace_params_preset(p, "fermi", NULL, 0);
}

/* ---- names of the policies -------------------------------------------- */

static const char *const coalesce_names[] = {"line128", "sector32", NULL};
static const char *const schedule_names[] = {"rr", "gto", NULL};
static const char *const delay_names[] = {"normal", "fixed", NULL};
static const char *const placement_names[] = {"rr", "fill", NULL};

const char *trace_coalesce_name(enum trace_coalesce c)
{
    return (unsigned)c < 2 ? coalesce_names[c] : "?";
}
const char *trace_schedule_name(enum trace_schedule s)
{
    return (unsigned)s < 2 ? schedule_names[s] : "?";
}
const char *trace_delay_name(enum trace_delay d)
{
    return (unsigned)d < 2 ? delay_names[d] : "?";
}
const char *trace_placement_name(enum trace_placement pl)
{
    return (unsigned)pl < 2 ? placement_names[pl] : "?";
}

/* ---- the settings table ----------------------------------------------- */

enum kind { K_U32, K_U64, K_DOUBLE, K_ENUM };

struct setting {
    const char *name;
    uint32_t bit;
    enum kind kind;
    size_t off;
    double min, max;               /* numeric bounds */
    const char *const *names;      /* K_ENUM */
};

#define OFF(f) offsetof(struct trace_params, f)
static const struct setting settings[] = {
    {"threads_per_block", TRACE_P_THREADS_PER_BLOCK, K_U32, OFF(threads_per_block), 1,
     TRACE_MAX_THREADS_PER_BLOCK, NULL},
    {"blocks_per_sm", TRACE_P_BLOCKS_PER_SM, K_U32, OFF(blocks_per_sm), 0, TRACE_MAX_BLOCKS_PER_SM, NULL},
    {"threads_per_sm", TRACE_P_THREADS_PER_SM, K_U32, OFF(threads_per_sm), 32, TRACE_MAX_THREADS_PER_SM,
     NULL},
    {"max_blocks_per_sm", TRACE_P_MAX_BLOCKS, K_U32, OFF(max_blocks_per_sm), 1, TRACE_MAX_BLOCKS_PER_SM,
     NULL},
    {"sms", TRACE_P_SMS, K_U32, OFF(sms), 1, TRACE_MAX_SMS, NULL},
    {"line", TRACE_P_LINE, K_U32, OFF(line_bytes), 32, TRACE_MAX_LINE, NULL},
    {"mshr", TRACE_P_MSHR, K_U32, OFF(mshr), 1, TRACE_MAX_MSHR, NULL},
    {"lat_min", TRACE_P_LAT_MIN, K_U32, OFF(lat_min), 1, TRACE_MAX_LAT_MIN, NULL},
    {"lat_sigma", TRACE_P_LAT_SIGMA, K_DOUBLE, OFF(lat_sigma), 0, TRACE_MAX_LAT_SIGMA, NULL},
    {"seed", TRACE_P_SEED, K_U64, OFF(seed), 0, 0, NULL},
    {"coalesce", TRACE_P_COALESCE, K_ENUM, OFF(coalesce), 0, 0, coalesce_names},
    {"schedule", TRACE_P_SCHEDULE, K_ENUM, OFF(schedule), 0, 0, schedule_names},
    {"delay", TRACE_P_DELAY, K_ENUM, OFF(delay), 0, 0, delay_names},
    {"placement", TRACE_P_PLACEMENT, K_ENUM, OFF(placement), 0, 0, placement_names},
};
#define NSETTINGS (sizeof settings / sizeof settings[0])

static const struct setting *find_setting(const char *name)
{
    for (size_t i = 0; i < NSETTINGS; i++)
        if (strcmp(settings[i].name, name) == 0)
            return &settings[i];
    return NULL;
}

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

static int set_enum(const struct setting *st, struct trace_params *p, const char *value, char *msg,
                    size_t msglen)
{
    for (int i = 0; st->names[i]; i++)
        if (strcmp(st->names[i], value) == 0) {
            *(int *)((char *)p + st->off) = i;
            return 0;
        }
    say(msg, msglen, "%s: '%.32s' is not one of %s|%s", st->name, value, st->names[0], st->names[1]);
    return -1;
}

static int set_number(const struct setting *st, struct trace_params *p, const char *value, char *msg,
                      size_t msglen)
{
    char *field = (char *)p + st->off;
    if (st->kind == K_DOUBLE) {
        double v;
        if (parse_double(value, &v) || v < st->min || v > st->max) {
            say(msg, msglen, "%s: '%.32s' is not a number from %g to %g", st->name, value, st->min, st->max);
            return -1;
        }
        memcpy(field, &v, sizeof v);
        return 0;
    }
    uint64_t v;
    if (parse_u64(value, &v) || (st->kind == K_U32 && (v < st->min || v > st->max))) {
        if (st->kind == K_U64)
            say(msg, msglen, "%s: '%.32s' is not an unsigned 64-bit integer", st->name, value);
        else
            say(msg, msglen, "%s: '%.32s' is not an integer from %.0f to %.0f", st->name, value, st->min,
                st->max);
        return -1;
    }
    if (st->kind == K_U64) {
        memcpy(field, &v, sizeof v);
    } else {
        uint32_t v32 = (uint32_t)v;
        memcpy(field, &v32, sizeof v32);
    }
    return 0;
}

int trace_params_set(struct trace_params *p, const char *name, const char *value, char *msg, size_t msglen)
{
    if (!name || !value) {
        say(msg, msglen, "missing setting name or value");
        return -1;
    }
    if (strcmp(name, "arch") == 0)
        return trace_params_preset(p, value, msg, msglen);
    const struct setting *st = find_setting(name);
    if (!st) {
        say(msg, msglen, "unknown setting '%.40s'", name);
        return -1;
    }
    int rc = st->kind == K_ENUM ? set_enum(st, p, value, msg, msglen) : set_number(st, p, value, msg, msglen);
    if (rc == 0)
        p->set |= st->bit;
    return rc;
}

int trace_params_parse(struct trace_params *p, const char *assignment, char *msg, size_t msglen)
{
    const char *eq = assignment ? strchr(assignment, '=') : NULL;
    if (!eq || eq == assignment) {
        say(msg, msglen, "'%.40s' is not name=value", assignment ? assignment : "");
        return -1;
    }
    char name[40];
    size_t n = (size_t)(eq - assignment);
    if (n >= sizeof name) {
        say(msg, msglen, "unknown setting '%.*s'", (int)(n > 40 ? 40 : n), assignment);
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

static int is_pow2(uint32_t v)
{
    return v && !(v & (v - 1));
}

int trace_params_validate(const struct trace_params *p, char *msg, size_t msglen)
{
    if (p->threads_per_block < 1 || p->threads_per_block > TRACE_MAX_THREADS_PER_BLOCK) {
        say(msg, msglen, "threads_per_block: %u is not from 1 to %u", p->threads_per_block,
            TRACE_MAX_THREADS_PER_BLOCK);
        return -1;
    }
    if (p->blocks_per_sm < 1 || p->blocks_per_sm > TRACE_MAX_BLOCKS_PER_SM) {
        say(msg, msglen, "blocks_per_sm: %u is not from 1 to %u (resolve the parameters first)",
            p->blocks_per_sm, TRACE_MAX_BLOCKS_PER_SM);
        return -1;
    }
    if (p->sms < 1 || p->sms > TRACE_MAX_SMS) {
        say(msg, msglen, "sms: %u is not from 1 to %u", p->sms, TRACE_MAX_SMS);
        return -1;
    }
    if (!is_pow2(p->line_bytes) || p->line_bytes < 32 || p->line_bytes > TRACE_MAX_LINE) {
        say(msg, msglen, "line: %u is not a power of two from 32 to %u", p->line_bytes, TRACE_MAX_LINE);
        return -1;
    }
    if (p->mshr < 1 || p->mshr > TRACE_MAX_MSHR) {
        say(msg, msglen, "mshr: %u is not from 1 to %u", p->mshr, TRACE_MAX_MSHR);
        return -1;
    }
    if (p->lat_min < 1 || p->lat_min > TRACE_MAX_LAT_MIN) {
        say(msg, msglen, "lat_min: %u is not from 1 to %u", p->lat_min, TRACE_MAX_LAT_MIN);
        return -1;
    }
    if (!(p->lat_sigma >= 0 && p->lat_sigma <= TRACE_MAX_LAT_SIGMA)) {
        say(msg, msglen, "lat_sigma: %g is not from 0 to %g", p->lat_sigma, TRACE_MAX_LAT_SIGMA);
        return -1;
    }
    if ((unsigned)p->coalesce > 1 || (unsigned)p->schedule > 1 || (unsigned)p->delay > 1 ||
        (unsigned)p->placement > 1) {
        say(msg, msglen, "a policy has an unknown value");
        return -1;
    }
    return 0;
}

/* ---- JSON --------------------------------------------------------------- */

static json_t *setting_to_json(const struct trace_params *p, const struct setting *st)
{
    const char *field = (const char *)p + st->off;
    switch (st->kind) {
    case K_U32: {
        uint32_t v;
        memcpy(&v, field, sizeof v);
        return json_integer(v);
    }
    case K_U64: {
        uint64_t v; /* JSON integers are signed 64-bit: large seeds go as strings */
        memcpy(&v, field, sizeof v);
        if (v > (uint64_t)INT64_MAX) {
            char buf[24];
            snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
            return json_string(buf);
        }
        return json_integer((json_int_t)v);
    }
    case K_DOUBLE: {
        double v;
        memcpy(&v, field, sizeof v);
        return json_real(v);
    }
    case K_ENUM: {
        int v;
        memcpy(&v, field, sizeof v);
        return json_string((unsigned)v < 2 ? st->names[v] : "?");
    }
    }
    return NULL;
}

json_t *trace_params_to_json(const struct trace_params *p)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    if (json_object_set_new(o, "arch", json_string(p->arch)))
        goto fail;
    for (size_t i = 0; i < NSETTINGS; i++)
        if (json_object_set_new(o, settings[i].name, setting_to_json(p, &settings[i])))
            goto fail;
    return o;
fail:
    json_decref(o);
    return NULL;
}

/* A JSON value as the text trace_params_set takes. */
static int json_value_text(const json_t *v, char *buf, size_t len)
{
    if (json_is_string(v))
        return snprintf(buf, len, "%s", json_string_value(v)) < (int)len ? 0 : -1;
    if (json_is_integer(v))
        return snprintf(buf, len, "%lld", (long long)json_integer_value(v)) < (int)len ? 0 : -1;
    if (json_is_real(v))
        return snprintf(buf, len, "%.17g", json_real_value(v)) < (int)len ? 0 : -1;
    return -1;
}

int trace_params_from_json(struct trace_params *p, const json_t *obj, char *msg, size_t msglen)
{
    if (!json_is_object(obj)) {
        say(msg, msglen, "parameters must be a JSON object");
        return -1;
    }
    char buf[64];
    const json_t *arch = json_object_get(obj, "arch");
    if (arch && !(json_is_string(arch) && json_string_value(arch)[0] == '\0')) {
        if (!json_is_string(arch)) {
            say(msg, msglen, "arch: must be a string");
            return -1;
        }
        if (trace_params_preset(p, json_string_value(arch), msg, msglen))
            return -1;
    }
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        if (strcmp(key, "arch") == 0)
            continue;
        const struct setting *st = find_setting(key);
        if (!st) {
            say(msg, msglen, "unknown setting '%.40s'", key);
            return -1;
        }
        int ok = st->kind == K_ENUM ? json_is_string(v)
                 : st->kind == K_U64 ? (json_is_integer(v) || json_is_string(v))
                 : json_is_number(v);
        if (!ok || json_value_text(v, buf, sizeof buf)) {
            say(msg, msglen, "%s: wrong JSON type", st->name);
            return -1;
        }
        if (trace_params_set(p, key, buf, msg, msglen))
            return -1;
    }
    return 0;
}
