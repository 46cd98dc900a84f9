/*
 * The job-kind registry and the one validator of job parameters (see
 * registry.h). Kinds register by being listed in builtin_kinds; the probe,
 * trace and model issues add theirs there.
 */
#include "server/jobs/registry.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "server/jobs/kind_fleet.h"
#include "server/jobs/kind_model.h"
#include "server/jobs/kind_probes.h"
#include "server/jobs/kind_trace.h"
#include "server/jobs/kind_trace_capture.h"

static const struct job_kind *const builtin_kinds[] = {
    &kind_latency,
    &kind_memory,
    &kind_banks,
    &kind_control_codes,
    &kind_dual_issue,
    &kind_suite,
    &kind_model_validation,
    &kind_trace_sort,
    &kind_trace_capture,
    &kind_fleet_figures,
    NULL,
};

static size_t count_list(const struct job_kind *const *list)
{
    size_t n = 0;
    while (list[n])
        n++;
    return n;
}

size_t job_kind_count(void)
{
    size_t n = count_list(builtin_kinds);
#ifdef GPUPROBE_TEST_BUILD
    n += count_list(test_job_kinds);
#endif
    return n;
}

const struct job_kind *job_kind_at(size_t i)
{
    size_t nb = count_list(builtin_kinds);
    if (i < nb)
        return builtin_kinds[i];
#ifdef GPUPROBE_TEST_BUILD
    if (i - nb < count_list(test_job_kinds))
        return test_job_kinds[i - nb];
#endif
    return NULL;
}

const struct job_kind *job_kind_find(const char *name)
{
    for (size_t i = 0, n = job_kind_count(); i < n; i++)
        if (strcmp(job_kind_at(i)->name, name) == 0)
            return job_kind_at(i);
    return NULL;
}

int job_kind_keeps_results(const char *name)
{
    const struct job_kind *k = name ? job_kind_find(name) : NULL;
    return k && k->save && k->needs_gpu;
}

static const char *type_name(enum param_type t)
{
    static const char *const names[] = {"integer", "number", "string", "boolean", "enum"};
    return names[t];
}

static int check_choice(const struct param_spec *p, const json_t *v)
{
    if (!json_is_string(v))
        return -1;
    for (const char *const *c = p->choices; *c; c++)
        if (strcmp(*c, json_string_value(v)) == 0)
            return 0;
    return -1;
}

static void describe_choices(const struct param_spec *p, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = '\0';
    for (const char *const *c = p->choices; *c && n < len; c++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s", c == p->choices ? "" : ", ", *c);
}

/* 0 if v has p's type and range; else -1 with the reason (without the name). */
static int check_type(const struct param_spec *p, const json_t *v, char *why, size_t len)
{
    char choices[256];
    switch (p->type) {
    case PARAM_INT:
        if (!json_is_integer(v) || (double)json_integer_value(v) < p->min ||
            (double)json_integer_value(v) > p->max) {
            snprintf(why, len, "must be an integer from %.0f to %.0f", p->min, p->max);
            return -1;
        }
        return 0;
    case PARAM_NUMBER:
        if (!json_is_number(v) || !isfinite(json_number_value(v)) ||
            json_number_value(v) < p->min || json_number_value(v) > p->max) {
            snprintf(why, len, "must be a number from %g to %g", p->min, p->max);
            return -1;
        }
        return 0;
    case PARAM_STRING:
        if (!json_is_string(v)) {
            snprintf(why, len, "must be a string");
            return -1;
        }
        return 0;
    case PARAM_BOOL:
        if (!json_is_boolean(v)) {
            snprintf(why, len, "must be true or false");
            return -1;
        }
        return 0;
    case PARAM_ENUM:
        if (check_choice(p, v) < 0) {
            describe_choices(p, choices, sizeof choices);
            snprintf(why, len, "must be one of: %s", choices);
            return -1;
        }
        return 0;
    }
    return -1;
}

/* 0 if v is acceptable for p: its type, then the kind's own check. */
static int check_value(const struct param_spec *p, const json_t *v, char *why, size_t len)
{
    if (check_type(p, v, why, len) < 0)
        return -1;
    return p->check ? p->check(p, v, why, len) : 0;
}

static const struct param_spec *find_param(const struct job_kind *k, const char *name)
{
    for (size_t i = 0; i < k->nparams; i++)
        if (strcmp(k->params[i].name, name) == 0)
            return &k->params[i];
    return NULL;
}

static int fail(char *err, size_t errlen, char *field, size_t fieldlen, const char *name,
                const char *why)
{
    snprintf(field, fieldlen, "params.%s", name);
    snprintf(err, errlen, "params.%s: %s", name, why);
    return -1;
}

/* Copies given values into out after checking them and refusing unknown names. */
static int take_given(const struct job_kind *k, const json_t *params, json_t *out, char *err,
                      size_t errlen, char *field, size_t fieldlen)
{
    const char *name;
    json_t *v;
    char why[1200]; /* a refusal may list every known value (the latency catalog's ~50 names) */
    json_object_foreach((json_t *)params, name, v)
    {
        const struct param_spec *p = find_param(k, name);
        if (!p)
            return fail(err, errlen, field, fieldlen, name, "unknown parameter for this kind");
        if (check_value(p, v, why, sizeof why) < 0)
            return fail(err, errlen, field, fieldlen, name, why);
        json_object_set(out, name, v);
    }
    return 0;
}

static int fill_defaults(const struct job_kind *k, json_t *out, char *err, size_t errlen,
                         char *field, size_t fieldlen)
{
    for (size_t i = 0; i < k->nparams; i++) {
        const struct param_spec *p = &k->params[i];
        if (json_object_get(out, p->name))
            continue;
        if (p->required)
            return fail(err, errlen, field, fieldlen, p->name, "is required");
        if (p->default_json)
            json_object_set_new(out, p->name, json_loads(p->default_json, JSON_DECODE_ANY, NULL));
    }
    return 0;
}

json_t *job_params_validate(const struct job_kind *k, const json_t *params, char *err,
                            size_t errlen, char *field, size_t fieldlen)
{
    if (params && !json_is_object(params)) {
        snprintf(field, fieldlen, "params");
        snprintf(err, errlen, "params: must be an object");
        return NULL;
    }
    json_t *out = json_object();
    if ((params && take_given(k, params, out, err, errlen, field, fieldlen) < 0) ||
        fill_defaults(k, out, err, errlen, field, fieldlen) < 0) {
        json_decref(out);
        return NULL;
    }
    return out;
}

static json_t *param_to_json(const struct param_spec *p)
{
    json_t *j = json_pack("{s:s, s:b}", "type", type_name(p->type), "required", p->required);
    if (p->type == PARAM_INT) {
        json_object_set_new(j, "minimum", json_integer((json_int_t)p->min));
        json_object_set_new(j, "maximum", json_integer((json_int_t)p->max));
    } else if (p->type == PARAM_NUMBER) {
        json_object_set_new(j, "minimum", json_real(p->min));
        json_object_set_new(j, "maximum", json_real(p->max));
    }
    if (p->type == PARAM_ENUM) {
        json_t *c = json_array();
        for (const char *const *s = p->choices; *s; s++)
            json_array_append_new(c, json_string(*s));
        json_object_set_new(j, "enum", c);
    }
    if (p->default_json)
        json_object_set_new(j, "default", json_loads(p->default_json, JSON_DECODE_ANY, NULL));
    if (p->description)
        json_object_set_new(j, "description", json_string(p->description));
    return j;
}

json_t *job_kind_to_json(const struct job_kind *k)
{
    json_t *params = json_object();
    for (size_t i = 0; i < k->nparams; i++)
        json_object_set_new(params, k->params[i].name, param_to_json(&k->params[i]));
    return json_pack("{s:s, s:s, s:b, s:b, s:i, s:o}", "name", k->name, "summary", k->summary,
                     "needs_gpu", k->needs_gpu, "internal", k->internal, "default_timeout_s",
                     k->default_timeout_s, "params", params);
}
