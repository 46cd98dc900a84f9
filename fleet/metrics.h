/*
 * Fleet figures: the scalars and categories a result document holds that
 * make sense to compare across GPUs of one model (docs/fleet.md lists them).
 *
 * DESIGN
 * A figure is named the way Prometheus names a sample: a family and its
 * labels, `gpuprobe_instruction_latency_cycles{instr="ffma"}`, so /metrics
 * prints the name as it is (adding the GPU's labels) and the fleet view
 * keys its distributions by it. The families are a table (name, unit, help,
 * the labels they take, numeric or categorical); each probe's document is
 * read by one small function that emits figures of those families. A number
 * is a median of the probe's repeats where the document has repeats. A
 * figure the document lacks is simply not emitted: a probe that could not
 * measure something says so in its document, and the fleet never compares
 * a guess. Reading is strict about types but not about presence, so a result
 * of an older gpuprobe yields the figures it has.
 * Pure C over jansson: no store, no server.
 */
#ifndef GPUPROBE_FLEET_METRICS_H
#define GPUPROBE_FLEET_METRICS_H

#include <jansson.h>
#include <stddef.h>

/* Bumped whenever what a document yields changes: stored figures derived
 * under another version are derived again (fleet/record.h). 2: the driver
 * a result was measured under is kept with its figures. */
#define FLEET_METRICS_VERSION "2"

#define FLEET_NAME_BYTES 160
#define FLEET_TEXT_BYTES 72

struct fleet_family {
    const char *name;        /* gpuprobe_... */
    const char *unit;        /* "cycles", "bytes", "per_sm_clock", "seconds", "mhz", "" */
    const char *help;
    const char *labels;      /* the labels it takes, comma-separated ("" for none) */
    int categorical;         /* a category compared by equality, not a number */
};

/* The families, in a fixed order. */
size_t fleet_family_count(void);
const struct fleet_family *fleet_family_at(size_t i);
/* The family of a figure's name ("fam{...}" or "fam"), or NULL. */
const struct fleet_family *fleet_family_of(const char *metric);

struct fleet_metric {
    char name[FLEET_NAME_BYTES];  /* family{label="value",...} */
    double value;
    char text[FLEET_TEXT_BYTES];  /* the category; "" for a number */
};

struct fleet_metrics {
    struct fleet_metric *v;
    size_t n, cap;
    int out_of_memory;
};

void fleet_metrics_init(struct fleet_metrics *m);
void fleet_metrics_free(struct fleet_metrics *m);

/* Appends the figures of one result document of a job kind (latency,
 * memory, banks, control-codes, dual-issue, suite, model-validation, and
 * fleet-figures); other kinds yield none. 0, or -1 when memory ran out. */
int fleet_metrics_from_result(const char *kind, const json_t *result, struct fleet_metrics *out);

/* The driver a result document was measured under: its driver_version, or
 * the first suite member's (a figures document's own); NULL when it says
 * none. Borrowed from result. */
const char *fleet_driver_of(const json_t *result);

/* ---- figures alone -------------------------------------------------------
 * A node may send a central the figures of a result instead of the result
 * (upstream_content = figures): a document of the job kind "fleet-figures",
 * {"probe":"fleet-figures","kind":KIND,"device":{..},"driver_version":TEXT,
 * "figures":{NAME: number | "category", ...}}, about 15 kB where a suite's
 * result is 250 kB. The central compares it like any result; it has no
 * result rows to show. driver_version is optional (a node before it sent
 * none). */
#define FLEET_FIGURES_KIND "fleet-figures"

/* The figures document of a result of kind (a new reference; NULL when the
 * result yields no figure or memory ran out). */
json_t *fleet_figures_doc(const char *kind, const json_t *result);
/* 0 when doc is a figures document whose every figure is of a known family
 * and of its type; -1 with the first fault in err. */
int fleet_figures_check(const json_t *doc, char *err, size_t errlen);

#endif
