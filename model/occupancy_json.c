/*
 * Occupancy requests and answers as JSON (see occupancy_json.h).
 *
 * DESIGN
 * A table of the request's integer members (name, where it goes, bounds,
 * required?) drives the parser, so every member is checked the same way.
 */
#include "model/occupancy_json.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

struct int_member {
    const char *name;
    size_t offset;          /* in struct occ_input */
    long long min, max;
    int required;
    int nullable;           /* null keeps the default */
};

#define IN_OFF(f) offsetof(struct occ_input, f)

static const struct int_member members[] = {
    {"block", IN_OFF(block_threads), 1, OCC_MAX_BLOCK, 1, 0},
    {"regs", IN_OFF(regs_per_thread), 0, OCC_MAX_REGS, 1, 0},
    {"smem", IN_OFF(dynamic_smem), 0, OCC_MAX_SMEM, 0, 0},
    {"static_smem", IN_OFF(static_smem), 0, OCC_MAX_SMEM, 0, 0},
    {"max_dynamic_smem", IN_OFF(max_dynamic_smem), 0, OCC_MAX_SMEM, 0, 1},
    {"carveout", IN_OFF(carveout_pct), 0, 100, 0, 1},
    {"barriers", IN_OFF(barriers), 0, 16, 0, 0},
};
#define NMEMBERS (sizeof members / sizeof members[0])

/* 1 or 2 decimal digits at *p (no sign, no blank), moved past. -1 if none. */
static int small_number(const char **p)
{
    const char *s = *p;
    if (!isdigit((unsigned char)s[0]))
        return -1;
    int v = s[0] - '0', n = 1;
    if (isdigit((unsigned char)s[1]))
        v = v * 10 + (s[n++] - '0');
    *p = s + n;
    return v;
}

int occ_parse_cc(const char *s, int *major, int *minor)
{
    int a, b;
    if (!s || (a = small_number(&s)) < 1 || *s++ != '.' || (b = small_number(&s)) < 0 || *s != '\0')
        return -1;
    *major = a;
    *minor = b;
    return 0;
}

static int fail(char *err, size_t errlen, char *field, size_t fieldlen, const char *name,
                const char *why)
{
    snprintf(err, errlen, "%s: %s", name, why);
    snprintf(field, fieldlen, "%s", name);
    return -1;
}

static int known_member(const char *key)
{
    if (strcmp(key, "compute_capability") == 0 || strcmp(key, "device") == 0 ||
        strcmp(key, "curves") == 0)
        return 1;
    for (size_t i = 0; i < NMEMBERS; i++)
        if (strcmp(members[i].name, key) == 0)
            return 1;
    return 0;
}

static int parse_int_member(const json_t *req, const struct int_member *m, struct occ_input *in,
                            char *err, size_t errlen, char *field, size_t fieldlen)
{
    const json_t *v = json_object_get(req, m->name);
    char why[96];
    if (!v || (json_is_null(v) && m->nullable)) {
        if (m->required)
            return fail(err, errlen, field, fieldlen, m->name, "is required");
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < m->min || json_integer_value(v) > m->max) {
        snprintf(why, sizeof why, "must be an integer from %lld to %lld", m->min, m->max);
        return fail(err, errlen, field, fieldlen, m->name, why);
    }
    *(int *)((char *)in + m->offset) = (int)json_integer_value(v);
    return 0;
}

static int parse_target(const json_t *req, struct occ_request *out, char *err, size_t errlen,
                        char *field, size_t fieldlen)
{
    const json_t *cc = json_object_get(req, "compute_capability");
    const json_t *dev = json_object_get(req, "device");
    if (dev && json_is_null(dev))
        dev = NULL;
    if (cc && json_is_null(cc))
        cc = NULL;
    if (cc && dev)
        return fail(err, errlen, field, fieldlen, "device",
                    "give compute_capability or device, not both");
    if (!cc && !dev)
        return fail(err, errlen, field, fieldlen, "compute_capability",
                    "is required (\"9.0\"), or name a device instead");
    if (dev && !json_is_string(dev) && !json_is_integer(dev))
        return fail(err, errlen, field, fieldlen, "device", "must be a GPU UUID or index");
    out->device = dev;
    if (dev)
        return 0;
    if (!json_is_string(cc) ||
        occ_parse_cc(json_string_value(cc), &out->cc_major, &out->cc_minor) < 0)
        return fail(err, errlen, field, fieldlen, "compute_capability",
                    "must be a string \"MAJOR.MINOR\" such as \"9.0\"");
    return 0;
}

int occ_request_parse(const json_t *req, struct occ_request *out, char *err, size_t errlen,
                      char *field, size_t fieldlen)
{
    const char *key;
    const json_t *v;
    memset(out, 0, sizeof *out);
    out->cc_major = out->cc_minor = -1;
    occ_input_init(&out->in, 0, 0);
    if (!json_is_object(req))
        return fail(err, errlen, field, fieldlen, "", "the request must be a JSON object");
    json_object_foreach((json_t *)req, key, v)
        if (!known_member(key))
            return fail(err, errlen, field, fieldlen, key,
                        "is not a member of an occupancy request");
    for (size_t i = 0; i < NMEMBERS; i++)
        if (parse_int_member(req, &members[i], &out->in, err, errlen, field, fieldlen) < 0)
            return -1;
    const json_t *curves = json_object_get(req, "curves");
    if (curves && !json_is_boolean(curves))
        return fail(err, errlen, field, fieldlen, "curves", "must be true or false");
    out->curves = json_is_true(curves);
    return parse_target(req, out, err, errlen, field, fieldlen);
}

json_t *occ_rules_json(const struct occ_rules *r)
{
    json_t *steps = json_array();
    char cc[16];
    for (int i = 0; i < r->ncarveout; i++)
        json_array_append_new(steps, json_integer(r->carveout_kib[i] * 1024));
    snprintf(cc, sizeof cc, "%d.%d", r->cc_major, r->cc_minor);
    return json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i,"
                     " s:i, s:o, s:i}",
                     "compute_capability", cc, "warp_size", r->warp_size,
                     "max_threads_per_block", r->max_threads_per_block, "max_warps_per_sm",
                     r->max_warps_per_sm, "max_blocks_per_sm", r->max_blocks_per_sm,
                     "registers_per_sm", r->regs_per_sm, "registers_per_block",
                     r->regs_per_block, "max_registers_per_thread", r->max_regs_per_thread,
                     "register_allocation_unit", r->reg_alloc_unit, "sub_partitions",
                     r->sub_partitions, "shared_memory_per_sm", r->smem_per_sm,
                     "shared_memory_per_block", r->smem_per_block,
                     "shared_memory_per_block_optin", r->smem_per_block_optin,
                     "reserved_shared_memory_per_block", r->smem_reserved_per_block,
                     "shared_allocation_unit", r->smem_alloc_unit, "carveout_bytes", steps,
                     "barriers_per_block_slot", r->barrier_factor);
}

void occ_known_ccs(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < occ_rules_count() && used < len; i++) {
        const struct occ_rules *r = occ_rules_at(i);
        int n = snprintf(buf + used, len - used, "%s%d.%d", i ? ", " : "", r->cc_major,
                         r->cc_minor);
        used += n > 0 ? (size_t)n : 0;
    }
}

static json_t *bound(int v)
{
    return v == INT_MAX ? json_null() : json_integer(v);
}

static json_t *input_json(const struct occ_input *in)
{
    return json_pack("{s:i, s:i, s:i, s:i, s:o, s:o, s:i}", "block", in->block_threads, "regs",
                     in->regs_per_thread, "smem", in->dynamic_smem, "static_smem",
                     in->static_smem, "max_dynamic_smem",
                     in->max_dynamic_smem == OCC_MAX_DYNAMIC_DEFAULT
                         ? json_null()
                         : json_integer(in->max_dynamic_smem),
                     "carveout",
                     in->carveout_pct == OCC_CARVEOUT_DEFAULT ? json_null()
                                                              : json_integer(in->carveout_pct),
                     "barriers", in->barriers);
}

static json_t *limits_json(const struct occ_result *o, json_t **names)
{
    json_t *lim = json_object();
    *names = json_array();
    for (int l = 0; l < OCC_LIMIT_COUNT; l++) {
        json_object_set_new(lim, occ_limit_name((enum occ_limit)l), bound(o->limit[l]));
        if (o->limiters & (1u << l))
            json_array_append_new(*names, json_string(occ_limit_name((enum occ_limit)l)));
    }
    return lim;
}

json_t *occ_result_json(const struct occ_rules *r, const struct occ_input *in,
                        const struct occ_result *o)
{
    json_t *names, *lim = limits_json(o, &names);
    json_t *rules = occ_rules_json(r);
    json_t *cc = json_incref(json_object_get(rules, "compute_capability"));
    return json_pack(
        "{s:o, s:i, s:s, s:o, s:o, s:o, s:{s:i, s:i}, s:{s:i, s:i, s:i, s:i, s:o},"
        " s:{s:i, s:i, s:i, s:i, s:i}, s:i, s:f, s:o, s:o}",
        "compute_capability", cc, "blocks_per_sm", o->blocks_per_sm, "limiter",
        occ_limit_name(o->limiter), "limiters", names, "refused",
        o->refused[0] ? json_string(o->refused) : json_null(), "limits", lim, "warps",
        "per_block", o->warps_per_block, "max_per_sm", o->max_warps_per_sm, "registers",
        "per_warp_allocated", o->regs_per_warp, "per_block", o->regs_per_block,
        "per_block_checked", o->regs_per_block_checked, "per_sub_partition",
        o->regs_per_sub_partition, "warps_per_sub_partition", bound(o->warps_per_sub_partition),
        "shared_memory", "per_block_allocated", o->smem_per_block, "per_block_limit",
        o->smem_block_limit, "max_dynamic", o->max_dynamic_smem, "carveout_preference",
        o->smem_preference, "per_sm", o->smem_per_sm, "active_warps", o->active_warps,
        "occupancy", o->occupancy, "input", input_json(in), "rules", rules);
}
