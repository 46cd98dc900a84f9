/*
 * Fleet figures read off result documents (see metrics.h).
 */
#include "fleet/metrics.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/text.h"

static const struct fleet_family families[] = {
    {"gpuprobe_instruction_latency_cycles", "cycles",
     "Dependent-chain latency of one instruction (latency probe)", "instr", 0},
    {"gpuprobe_instruction_issue_cycles", "cycles",
     "Cycles one instruction adds between two clock reads (clock;op;clock less clock;clock): its "
     "marginal cost there, not its issue latency (latency probe)",
     "instr", 0},
    {"gpuprobe_instruction_throughput_per_sm_clock", "per_sm_clock",
     "Results per SM per clock of one instruction (latency probe)", "instr", 0},
    {"gpuprobe_memory_latency_cycles", "cycles",
     "Load-to-use latency of one level of the memory hierarchy as a load kind sees it "
     "(memory probe; level 1 is the nearest)", "load,level", 0},
    {"gpuprobe_memory_capacity_bytes", "bytes",
     "Largest footprint a memory level holds at its latency (memory probe)", "load,level", 0},
    {"gpuprobe_shared_memory_latency_cycles", "cycles", "Shared-memory load latency (memory probe)",
     "", 0},
    {"gpuprobe_device_memory_latency_cycles", "cycles",
     "Latency of a load that misses every cache (memory probe)", "load", 0},
    {"gpuprobe_departure_delay_cycles", "cycles",
     "Cycles between the departures of a warp's successive loads (memory probe)",
     "access,hit", 0},
    {"gpuprobe_register_banks", "", "Register bank classes found (banks probe)", "", 0},
    {"gpuprobe_register_bank_conflict_ratio", "",
     "FFMA rate of an operand case over the conflict-free rate (banks probe)", "case", 0},
    {"gpuprobe_register_bank_map", "",
     "Which bank each register is in, as the class count and a digest of the map (banks probe)",
     "", 1},
    {"gpuprobe_min_safe_stall", "cycles",
     "Smallest stall count that keeps a dependent chain correct (control-codes probe)", "instr",
     0},
    {"gpuprobe_dual_issue_ffma_per_sm_clock", "per_sm_clock",
     "FFMA per SM per clock of an issue pattern (dual-issue probe)",
     "pattern,operands,warps_per_scheduler", 0},
    {"gpuprobe_dual_issue_observed", "",
     "Whether one warp was seen to issue two instructions in one cycle (dual-issue probe)", "",
     1},
    {"gpuprobe_sm_clock_mhz", "mhz",
     "SM clock achieved while the probe ran: the lower of the readings before and after", "probe",
     0},
    {"gpuprobe_validation_kernel_seconds", "seconds",
     "Time of one launch of a model-validation kernel (model-validation)", "kernel", 0},
    {"gpuprobe_dram_bandwidth_bytes_per_second", "bytes_per_second",
     "Device-memory read bandwidth (model-validation)", "", 0},
    {"gpuprobe_host_link_bandwidth_bytes_per_second", "bytes_per_second",
     "Host-to-device copy bandwidth (model-validation)", "", 0},
};
#define NFAMILIES (sizeof families / sizeof families[0])

size_t fleet_family_count(void)
{
    return NFAMILIES;
}

const struct fleet_family *fleet_family_at(size_t i)
{
    return i < NFAMILIES ? &families[i] : NULL;
}

const struct fleet_family *fleet_family_of(const char *metric)
{
    size_t len = strcspn(metric, "{");
    for (size_t i = 0; i < NFAMILIES; i++)
        if (strlen(families[i].name) == len && strncmp(families[i].name, metric, len) == 0)
            return &families[i];
    return NULL;
}

/* ---- the list ------------------------------------------------------------- */

void fleet_metrics_init(struct fleet_metrics *m)
{
    memset(m, 0, sizeof *m);
}

void fleet_metrics_free(struct fleet_metrics *m)
{
    free(m->v);
    fleet_metrics_init(m);
}

static struct fleet_metric *slot(struct fleet_metrics *m)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        struct fleet_metric *v = realloc(m->v, cap * sizeof *v);
        if (!v) {
            m->out_of_memory = 1;
            return NULL;
        }
        m->v = v;
        m->cap = cap;
    }
    struct fleet_metric *f = &m->v[m->n++];
    memset(f, 0, sizeof *f);
    return f;
}

/* Writes `family{k="v",...}` from pairs of label names and values (NULL
 * ends them); a value's backslash, quote and newline are escaped as the
 * Prometheus text format wants, and any other control character (which
 * the store's lines and a log line cannot hold) is written as '?'. 0, or
 * -1 when the name does not fit in len (a cut name would not be one). */
static int name_with_labels(char *out, size_t len, const char *family, va_list ap)
{
    size_t used = (size_t)snprintf(out, len, "%s", family);
    int first = 1;
    for (const char *k; (k = va_arg(ap, const char *)) != NULL;) {
        const char *v = va_arg(ap, const char *);
        used += (size_t)snprintf(out + used, used < len ? len - used : 0, "%s%s=\"",
                                 first ? "{" : ",", k);
        for (; *v && used + 3 < len; v++) {
            unsigned char c = (unsigned char)*v;
            if (c == '\\' || c == '"' || c == '\n')
                out[used++] = '\\';
            out[used++] = c == '\n' ? 'n' : char_is_control(c) ? '?' : (char)c;
        }
        if (*v)
            return -1;
        used += (size_t)snprintf(out + used, used < len ? len - used : 0, "\"");
        first = 0;
    }
    if (!first)
        used += (size_t)snprintf(out + used, used < len ? len - used : 0, "}");
    return used < len ? 0 : -1;
}

/* A number of `family` with its labels (name, value pairs ending in NULL);
 * none when its name would not fit. */
static void number(struct fleet_metrics *m, double value, const char *family, ...)
{
    char name[FLEET_NAME_BYTES];
    va_list ap;
    va_start(ap, family);
    int fits = name_with_labels(name, sizeof name, family, ap) == 0;
    va_end(ap);
    struct fleet_metric *f = fits ? slot(m) : NULL;
    if (!f)
        return;
    memcpy(f->name, name, sizeof name);
    f->value = value;
}

static void category(struct fleet_metrics *m, const char *text, const char *family)
{
    struct fleet_metric *f = slot(m);
    if (!f)
        return;
    snprintf(f->name, sizeof f->name, "%s", family);
    snprintf(f->text, sizeof f->text, "%s", text);
}

/* ---- reading documents --------------------------------------------------- */

/* The median of a {"median":..} statistic, or a plain number; 0 if neither. */
static int stat(const json_t *v, double *out)
{
    if (json_is_object(v))
        v = json_object_get(v, "median");
    if (!json_is_number(v))
        return 0;
    *out = json_number_value(v);
    return 1;
}

static const char *text_of(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

static void clock_figure(const json_t *doc, const char *probe, struct fleet_metrics *m)
{
    const json_t *c = json_object_get(doc, "clock_mhz");
    double before, after;
    if (stat(json_object_get(c, "before"), &before) && stat(json_object_get(c, "after"), &after))
        number(m, before < after ? before : after, "gpuprobe_sm_clock_mhz", "probe", probe, NULL);
}

static void latency(const json_t *doc, struct fleet_metrics *m)
{
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(doc, "entries"), i, e) {
        const char *instr = text_of(e, "name");
        double v;
        if (!*instr)
            continue;
        if (stat(json_object_get(e, "latency_cycles"), &v))
            number(m, v, "gpuprobe_instruction_latency_cycles", "instr", instr, NULL);
        if (stat(json_object_get(e, "issue_cycles"), &v))
            number(m, v, "gpuprobe_instruction_issue_cycles", "instr", instr, NULL);
        if (stat(json_object_get(e, "throughput_per_clock_per_sm"), &v))
            number(m, v, "gpuprobe_instruction_throughput_per_sm_clock", "instr", instr, NULL);
    }
    clock_figure(doc, "latency", m);
}

static void memory_levels(const json_t *levels, const char *load, struct fleet_metrics *m)
{
    size_t i;
    const json_t *l;
    json_array_foreach(levels, i, l) {
        char level[16];
        double v;
        if (!json_is_integer(json_object_get(l, "level")))
            continue;
        snprintf(level, sizeof level, "%" JSON_INTEGER_FORMAT,
                 json_integer_value(json_object_get(l, "level")));
        if (stat(json_object_get(l, "cycles"), &v))
            number(m, v, "gpuprobe_memory_latency_cycles", "load", load, "level", level, NULL);
        if (json_is_true(json_object_get(l, "plateau")) &&
            stat(json_object_get(l, "up_to_bytes"), &v))
            number(m, v, "gpuprobe_memory_capacity_bytes", "load", load, "level", level, NULL);
    }
}

static void departure(const json_t *d, const char *hit, struct fleet_metrics *m)
{
    double v;
    if (stat(json_object_get(d, "coalesced_cycles"), &v))
        number(m, v, "gpuprobe_departure_delay_cycles", "access", "coalesced", "hit", hit, NULL);
    if (stat(json_object_get(d, "uncoalesced_cycles"), &v))
        number(m, v, "gpuprobe_departure_delay_cycles", "access", "uncoalesced", "hit", hit,
               NULL);
}

static void memory(const json_t *doc, struct fleet_metrics *m)
{
    const json_t *levels = json_object_get(doc, "levels");
    memory_levels(json_object_get(levels, "ca"), "ca", m);
    memory_levels(json_object_get(levels, "cg"), "cg", m);
    double v;
    if (stat(json_object_get(doc, "shared_cycles"), &v))
        number(m, v, "gpuprobe_shared_memory_latency_cycles", NULL);
    const json_t *dev = json_object_get(doc, "device_memory_cycles");
    if (stat(json_object_get(dev, "ca"), &v))
        number(m, v, "gpuprobe_device_memory_latency_cycles", "load", "ca", NULL);
    if (stat(json_object_get(dev, "cg"), &v))
        number(m, v, "gpuprobe_device_memory_latency_cycles", "load", "cg", NULL);
    const json_t *dep = json_object_get(doc, "departure");
    departure(dep, "l2", m);
    departure(json_object_get(dep, "l1_hit"), "l1", m);
    clock_figure(doc, "memory", m);
}

/* FNV-1a over the map's compact text: equal maps, equal digests. */
static uint64_t digest(const json_t *v)
{
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *p = (const unsigned char *)(text ? text : ""); *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    free(text);
    return h;
}

static void banks(const json_t *doc, struct fleet_metrics *m)
{
    const json_t *count = json_object_get(doc, "bank_count");
    if (json_is_integer(count))
        number(m, (double)json_integer_value(count), "gpuprobe_register_banks", NULL);
    const json_t *map = json_object_get(doc, "map");
    if (json_is_array(map) && json_array_size(map) > 0) {
        char text[FLEET_TEXT_BYTES];
        snprintf(text, sizeof text, "%" JSON_INTEGER_FORMAT " classes, map %016" PRIx64,
                 json_is_integer(count) ? json_integer_value(count) : (json_int_t)0,
                 digest(map));
        category(m, text, "gpuprobe_register_bank_map");
    }
    const char *name;
    const json_t *c;
    double v;
    json_object_foreach((json_t *)json_object_get(doc, "costs"), name, c)
        if (stat(json_object_get(c, "ratio"), &v))
            number(m, v, "gpuprobe_register_bank_conflict_ratio", "case", name, NULL);
    clock_figure(doc, "banks", m);
}

static void control_codes(const json_t *doc, struct fleet_metrics *m)
{
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(doc, "instructions"), i, e) {
        const json_t *s = json_object_get(e, "min_safe_stall");
        if (json_is_integer(s) && *text_of(e, "name"))
            number(m, (double)json_integer_value(s), "gpuprobe_min_safe_stall", "instr",
                   text_of(e, "name"), NULL);
    }
    clock_figure(doc, "control-codes", m);
}

static void dual_issue(const json_t *doc, struct fleet_metrics *m)
{
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(doc, "results"), i, r) {
        const json_t *w = json_object_get(r, "warps_per_scheduler");
        double v;
        char warps[16];
        if (!json_is_integer(w) || !stat(json_object_get(r, "ffma_per_sm_clock"), &v))
            continue;
        snprintf(warps, sizeof warps, "%" JSON_INTEGER_FORMAT, json_integer_value(w));
        number(m, v, "gpuprobe_dual_issue_ffma_per_sm_clock", "pattern", text_of(r, "pattern"),
               "operands", text_of(r, "operands"), "warps_per_scheduler", warps, NULL);
    }
    const json_t *seen = json_object_get(doc, "dual_issue_observed");
    if (json_is_boolean(seen))
        category(m, json_is_true(seen) ? "yes" : "no", "gpuprobe_dual_issue_observed");
    clock_figure(doc, "dual-issue", m);
}

static void validation(const json_t *doc, struct fleet_metrics *m)
{
    size_t i;
    const json_t *k;
    double v;
    json_array_foreach(json_object_get(doc, "kernels"), i, k)
        if (*text_of(k, "name") && stat(json_object_get(k, "measured_s"), &v))
            number(m, v, "gpuprobe_validation_kernel_seconds", "kernel", text_of(k, "name"),
                   NULL);
    const json_t *bw = json_object_get(doc, "bandwidth");
    if (stat(json_object_get(bw, "dram_bytes_per_s"), &v))
        number(m, v, "gpuprobe_dram_bandwidth_bytes_per_second", NULL);
    if (stat(json_object_get(bw, "link_bytes_per_s"), &v))
        number(m, v, "gpuprobe_host_link_bandwidth_bytes_per_second", NULL);
    clock_figure(doc, "model-validation", m);
}

static const struct {
    const char *kind;
    void (*read)(const json_t *doc, struct fleet_metrics *m);
} readers[] = {
    {"latency", latency},
    {"memory", memory},
    {"banks", banks},
    {"control-codes", control_codes},
    {"dual-issue", dual_issue},
    {"model-validation", validation},
};
#define NREADERS (sizeof readers / sizeof readers[0])

/* A figures document's figures, as they are (fleet_figures_check vetted them). */
static void figures(const json_t *doc, struct fleet_metrics *m)
{
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)json_object_get(doc, "figures"), name, v) {
        struct fleet_metric *f = slot(m);
        if (!f)
            return;
        snprintf(f->name, sizeof f->name, "%s", name);
        if (json_is_string(v))
            snprintf(f->text, sizeof f->text, "%s", json_string_value(v));
        else
            f->value = json_number_value(v);
    }
}

/* 1 for the kinds whose result is a suite document: the suite, and the
 * test build's stand-in, which replays a real one (tests/kinds/standin.c). */
static int is_suite(const char *kind)
{
    return strcmp(kind, "suite") == 0 || strcmp(kind, "suite-standin") == 0;
}

int fleet_metrics_from_result(const char *kind, const json_t *result, struct fleet_metrics *out)
{
    if (!json_is_object(result))
        return 0;
    if (strcmp(kind, FLEET_FIGURES_KIND) == 0) {
        figures(result, out);
        return out->out_of_memory ? -1 : 0;
    }
    for (size_t i = 0; i < NREADERS; i++) {
        if (is_suite(kind)) {
            const json_t *part = json_object_get(result, readers[i].kind);
            if (json_is_object(part))
                readers[i].read(part, out);
        } else if (strcmp(kind, readers[i].kind) == 0) {
            readers[i].read(result, out);
        }
    }
    return out->out_of_memory ? -1 : 0;
}

/* ---- figures alone ------------------------------------------------------- */

/* The result's member key of type t, or the first suite member's: a suite
 * document holds the probes' documents, each with its own provenance. */
static const json_t *own_or_member(const json_t *result, const char *key, json_type t)
{
    const json_t *v = json_object_get(result, key);
    const char *name;
    const json_t *part;
    if (v && json_typeof(v) == t)
        return v;
    json_object_foreach((json_t *)result, name, part) {
        v = json_object_get(part, key);
        if (v && json_typeof(v) == t)
            return v;
    }
    return NULL;
}

static const json_t *device_of(const json_t *result)
{
    return own_or_member(result, "device", JSON_OBJECT);
}

const char *fleet_driver_of(const json_t *result)
{
    const char *d = json_string_value(own_or_member(result, "driver_version", JSON_STRING));
    return d && *d ? d : NULL;
}

json_t *fleet_figures_doc(const char *kind, const json_t *result)
{
    struct fleet_metrics m;
    fleet_metrics_init(&m);
    const json_t *dev = device_of(result);
    if (fleet_metrics_from_result(kind, result, &m) != 0 || m.n == 0 || !dev) {
        fleet_metrics_free(&m);
        return NULL;
    }
    json_t *figs = json_object();
    for (size_t i = 0; figs && i < m.n; i++)
        json_object_set_new(figs, m.v[i].name,
                            m.v[i].text[0] ? json_string(m.v[i].text) : json_real(m.v[i].value));
    fleet_metrics_free(&m);
    /* the driver goes along: the central shows which driver each GPU runs */
    const char *driver = fleet_driver_of(result);
    return json_pack("{s:s, s:s, s:{s:O*, s:O*, s:O*}, s:s*, s:o}", "probe", FLEET_FIGURES_KIND,
                     "kind", kind, "device", "uuid", json_object_get(dev, "uuid"), "name",
                     json_object_get(dev, "name"), "compute_capability",
                     json_object_get(dev, "compute_capability"), "driver_version", driver,
                     "figures", figs);
}

#define MAX_FIGURES 4096

/* 1 when name is written as name_with_labels writes a figure of fam: the
 * family alone, or `family{k="v",...}` with fam's labels in its order, each
 * value escaped as there and holding no control character. Another
 * spelling of the same figure would be compared as a figure of its own,
 * and a label given twice or a raw quote would make /metrics unreadable. */
static int canonical_name(const struct fleet_family *fam, const char *name)
{
    const char *p = name + strlen(fam->name), *k = fam->labels;
    if (!*k)
        return *p == '\0';
    if (*p++ != '{')
        return 0;
    for (;;) {
        size_t kl = strcspn(k, ",");
        if (strncmp(p, k, kl) != 0 || p[kl] != '=' || p[kl + 1] != '"')
            return 0;
        for (p += kl + 2; *p != '"'; p++) {
            unsigned char c = (unsigned char)*p;
            if (char_is_control(c)) /* the end of the text too */
                return 0;
            if (c == '\\' && (++p, *p != '\\' && *p != '"' && *p != 'n'))
                return 0;
        }
        p++;
        k += kl;
        if (!*k)
            return p[0] == '}' && p[1] == '\0';
        k++;
        if (*p++ != ',')
            return 0;
    }
}

/* 1 for a kind whose results give figures (fleet_metrics_from_result). */
static int figures_kind(const char *kind)
{
    if (is_suite(kind))
        return 1;
    for (size_t i = 0; i < NREADERS; i++)
        if (strcmp(kind, readers[i].kind) == 0)
            return 1;
    return 0;
}

/* The name for a message: at most 120 bytes, a control character as '?'. */
static void printable(char *out, size_t len, const char *name)
{
    size_t i = 0;
    for (; name[i] && i + 1 < len && i < 120; i++)
        out[i] = char_is_control((unsigned char)name[i]) ? '?' : name[i];
    out[i] = '\0';
}

int fleet_figures_check(const json_t *doc, char *err, size_t errlen)
{
    const json_t *figs = json_object_get(doc, "figures");
    const json_t *dev = json_object_get(doc, "device");
    if (!json_is_object(doc) || strcmp(text_of(doc, "probe"), FLEET_FIGURES_KIND) != 0) {
        snprintf(err, errlen, "probe: must be \"%s\"", FLEET_FIGURES_KIND);
        return -1;
    }
    if (!figures_kind(text_of(doc, "kind"))) {
        snprintf(err, errlen, "kind: must be the job kind the figures came from, one whose "
                              "results give figures");
        return -1;
    }
    if (!json_is_object(dev) || !json_is_string(json_object_get(dev, "uuid"))) {
        snprintf(err, errlen, "device.uuid: must be a string");
        return -1;
    }
    /* optional: figures from a node older than it have none */
    const json_t *driver = json_object_get(doc, "driver_version");
    const char *dtext = json_string_value(driver);
    if (driver && (!dtext || strlen(dtext) >= FLEET_TEXT_BYTES || text_has_control(dtext))) {
        snprintf(err, errlen, "driver_version: must be a short string of printable characters");
        return -1;
    }
    if (!json_is_object(figs) || json_object_size(figs) > MAX_FIGURES) {
        snprintf(err, errlen, "figures: must be an object of at most %d figures", MAX_FIGURES);
        return -1;
    }
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)figs, name, v) {
        const struct fleet_family *fam = fleet_family_of(name);
        const char *why = NULL;
        if (!fam)
            why = "not a fleet figure this gpuprobe knows";
        else if (strlen(name) >= FLEET_NAME_BYTES || !canonical_name(fam, name))
            why = "not a figure's name as gpuprobe writes it (the family, then its labels in "
                  "their order, each once, values escaped)";
        else if (fam->categorical ? !json_is_string(v) || strlen(json_string_value(v)) >= FLEET_TEXT_BYTES ||
                                        text_has_control(json_string_value(v))
                                  : !json_is_number(v) || !isfinite(json_number_value(v)))
            why = fam->categorical ? "must be a short string (a category) of printable characters"
                                   : "must be a finite number";
        if (why) {
            char shown[128];
            printable(shown, sizeof shown, name);
            snprintf(err, errlen, "figures.%s: %s", shown, why);
            return -1;
        }
    }
    return 0;
}
