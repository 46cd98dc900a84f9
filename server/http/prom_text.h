/*
 * The Prometheus text exposition format, version 0.0.4: how GET /metrics
 * writes its page (docs/metrics.md).
 *
 * DESIGN
 * A page is a list of families, each written whole: prom_family writes its
 * HELP and TYPE lines and makes it the current family, and every sample
 * written after it belongs to it (the sample functions take no name), so a
 * family's samples cannot be split or written under another family's TYPE.
 * Label values and HELP text are escaped here, as the format asks
 * (backslash, double quote and newline in a value; backslash and newline in
 * HELP), so a caller hands over plain text. Numbers are written in the
 * shortest form that reads back as the same double, with NaN and +Inf/-Inf
 * spelled as Prometheus parses them. The page grows in one buffer; the
 * first failure to grow it marks the page failed and skips every later
 * write, so the caller checks once, at the end. Names (of families and of
 * labels) are the program's own: a malformed one is a contract breach,
 * asserted.
 * Not done: timestamps on samples (a probe figure measured months ago would
 * fall outside what Prometheus accepts; the time a figure was measured is
 * not a sample's time), and the OpenMetrics format.
 */
#ifndef GPUPROBE_SERVER_HTTP_PROM_TEXT_H
#define GPUPROBE_SERVER_HTTP_PROM_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "util/text.h"

/* The Content-Type of a page in this format. */
#define PROM_TEXT_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct prom_page {
    struct buf b;
    int failed;                /* memory ran out: the page is incomplete */
    char family[128];          /* the family the next samples belong to */
    int histogram;             /* the current family is a histogram */
};

/* One label of a sample. A label with a NULL name is text already in the
 * format (`name="escaped value",...`), spliced as it is: a fleet figure's
 * own labels, which its stored name carries escaped (fleet/metrics.h). */
struct prom_label {
    const char *name;
    const char *value;
};

/* Starts a family: its HELP (plain text, escaped here) and TYPE ("gauge",
 * "counter" or "histogram") lines. Contract: name is a valid metric name. */
void prom_family(struct prom_page *p, const char *name, const char *type, const char *help);

/* A sample of the current (gauge or counter) family with labels[0..n). */
void prom_sample(struct prom_page *p, const struct prom_label *labels, size_t n, double value);

/* A histogram's state: counts[i] observations at most bounds[i] and above
 * bounds[i - 1] (not cumulative), counts[nbounds] those above the last
 * bound; bounds ascend. */
struct prom_histogram {
    const double *bounds;
    size_t nbounds;
    const uint64_t *counts;    /* nbounds + 1 */
    double sum;
};
/* The samples of one histogram of the current (histogram) family with
 * labels[0..n): its cumulative _bucket samples, le="+Inf" last, then _sum
 * and _count. */
void prom_histogram(struct prom_page *p, const struct prom_label *labels, size_t n,
                    const struct prom_histogram *h);

/* Writes v as the format spells it into buf (at least 32 bytes). */
void prom_number(char *buf, size_t len, double v);

/* The page's text (NUL-terminated, *len bytes), handed to the caller, who
 * frees it; NULL when the page failed (then it is freed here). */
char *prom_take(struct prom_page *p, size_t *len);
/* Frees a page not taken. */
void prom_free(struct prom_page *p);

#endif
