/*
 * The tables of the probes that edit machine code: banks, control-codes
 * and dual-issue (see probe_table.h).
 *
 * DESIGN
 * Forgiving like the other tables (probe_table.c): any member may be
 * missing or of another type, and prints as "-". The bank map is shown as
 * its classes, each summarised as a range with a step when its registers
 * are evenly spaced (R0..R250 step 2) and listed otherwise, so a two-bank
 * map reads in two lines. The control-code meanings print their "text"
 * only; their figures stay in the JSON document.
 */
#include <string.h>

#include "server/cli/probe_table_internal.h"

#define LISTED_REGS 8            /* registers listed before "..." */

/* ---- pieces ---------------------------------------------------------------- */

static long long int_at(const json_t *o, const char *key)
{
    return (long long)json_integer_value(json_object_get(o, key));
}

/* An integer member as text, or "-". */
static void int_text(const json_t *o, const char *key, char *buf, size_t len)
{
    if (json_is_integer(json_object_get(o, key)))
        snprintf(buf, len, "%lld", int_at(o, key));
    else
        snprintf(buf, len, "-");
}

/* A number member as "97.0%", or "-". */
static void percent_text(const json_t *o, const char *key, char *buf, size_t len)
{
    if (json_is_number(json_object_get(o, key)))
        snprintf(buf, len, "%.1f%%", 100.0 * pt_num(o, key));
    else
        snprintf(buf, len, "-");
}

static const char *yes_no(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_boolean(v) ? (json_is_true(v) ? "yes" : "no") : "-";
}

/* ---- banks ------------------------------------------------------------------ */

static long long reg_at(const json_t *regs, size_t i)
{
    return (long long)json_integer_value(json_array_get(regs, i));
}

/* The step between evenly spaced registers, or 0. */
static long long even_step(const json_t *regs)
{
    size_t n = json_array_size(regs);
    if (n < 3)
        return 0;
    long long step = reg_at(regs, 1) - reg_at(regs, 0);
    for (size_t i = 2; i < n; i++)
        if (reg_at(regs, i) - reg_at(regs, i - 1) != step)
            return 0;
    return step;
}

static void class_row(FILE *f, size_t bank, const json_t *regs)
{
    size_t n = json_array_size(regs);
    long long step = even_step(regs);
    fprintf(f, "  bank %zu (%zu registers): ", bank, n);
    if (step > 0) {
        fprintf(f, "R%lld..R%lld step %lld\n", reg_at(regs, 0), reg_at(regs, n - 1), step);
        return;
    }
    for (size_t i = 0; i < n && i < LISTED_REGS; i++)
        fprintf(f, "%sR%lld", i ? ", " : "", reg_at(regs, i));
    fprintf(f, "%s\n", n > LISTED_REGS ? ", ..." : "");
}

/* The registers the probe could not test, on one line, with the first one's reason. */
static void untested_rows(FILE *f, const json_t *list)
{
    const json_t *u;
    size_t i;
    if (!json_array_size(list))
        return;
    fprintf(f, "  not tested:");
    json_array_foreach(list, i, u)
        fprintf(f, "%sR%lld", i ? ", " : " ", int_at(u, "register"));
    fprintf(f, ": %s\n", pt_text(json_array_get(list, 0), "reason", "no reason given"));
}

/* ["R0", "R2", "RZ"] as "R0 R2 RZ". */
static void sources_text(const json_t *src, char *buf, size_t len)
{
    size_t n = 0, i;
    const json_t *s;
    buf[0] = '\0';
    json_array_foreach(src, i, s) {
        if (n >= len)
            break;
        if (json_is_integer(s))
            n += (size_t)snprintf(buf + n, len - n, "%sR%lld", i ? " " : "",
                                  (long long)json_integer_value(s));
        else
            n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? " " : "",
                                  json_is_string(s) ? json_string_value(s) : "?");
    }
}

static void cost_rows(FILE *f, const json_t *costs)
{
    const char *name;
    const json_t *c;
    char src[48], rate[64], ratio[64];
    fprintf(f, "%-28s %-14s %-5s %-24s %-24s %s\n", "cost test", "sources", "reuse",
            "FFMA/SM clock [min-max]", "ratio [min-max]", "conflict");
    json_object_foreach((json_t *)costs, name, c) {
        sources_text(json_object_get(c, "sources"), src, sizeof src);
        pt_figure_text(json_object_get(c, "ffma_per_sm_clock"), rate, sizeof rate);
        pt_figure_text(json_object_get(c, "ratio"), ratio, sizeof ratio);
        fprintf(f, "%-28s %-14s %-5lld %-24s %-24s %s\n", name, src, int_at(c, "reuse"), rate,
                ratio, yes_no(c, "conflict"));
    }
}

/* The reuse cache: one row per question (test, free, cleared, the
 * conflicts per period they give, outcome), then the rules and the cache
 * designs that fit; nothing for a result stored before it. */
static void reuse_rows(FILE *f, const json_t *rc)
{
    const json_t *q, *r;
    size_t i;
    if (!json_is_object(rc))
        return;
    if (json_object_get(rc, "not_run")) {
        fprintf(f, "\nreuse cache not run: %s\n", pt_text(rc, "not_run", ""));
        return;
    }
    fprintf(f, "\n%-18s %-7s %-7s %-7s %-9s %s\n", "reuse question", "test", "free", "cleared",
            "conflicts", "outcome");
    json_array_foreach(json_object_get(rc, "questions"), i, q) {
        const json_t *x = json_object_get(q, "ratios"), *c = json_object_get(q, "conflicts");
        char conf[16] = "-";
        if (json_is_number(c))
            snprintf(conf, sizeof conf, "%.2f", json_number_value(c));
        fprintf(f, "%-18s %-7.3f %-7.3f %-7.3f %-9s %s\n", pt_text(q, "question", "?"),
                pt_num(x, "test"), pt_num(x, "free"), pt_num(x, "cleared"), conf,
                pt_text(q, "outcome", "?"));
    }
    json_array_foreach(json_object_get(rc, "rules"), i, r)
        fprintf(f, "  rule: %s\n", json_string_value(r) ? json_string_value(r) : "?");
    if (json_object_get(rc, "answer"))
        fprintf(f, "  cache design (conflicts within %.2f of its prediction on every question): "
                   "%s\n",
                pt_num(rc, "tolerance_conflicts"), pt_text(rc, "answer", "?"));
}

void pt_banks_table(FILE *f, const json_t *doc)
{
    const json_t *ref = json_object_get(doc, "reference"), *runs = json_object_get(doc, "runs");
    const json_t *conf = json_object_get(doc, "confirmation"), *regs;
    char rate[64];
    size_t k;
    pt_header(f, doc);
    pt_figure_text(json_object_get(ref, "ffma_per_sm_clock"), rate, sizeof rate);
    fprintf(f, "%lld banks over R0..R%lld; a conflict is below %.1f%% of %s FFMA per SM clock\n",
            int_at(doc, "bank_count"),
            int_at(json_object_get(doc, "kernel"), "highest_tested_register"),
            100.0 * pt_num(doc, "threshold"), rate);
    json_array_foreach(json_object_get(doc, "classes"), k, regs)
        class_row(f, k, regs);
    untested_rows(f, json_object_get(doc, "untested_registers"));
    fprintf(f, "confirmation: %lld of %lld random pairs agree with the classes\n\n",
            int_at(conf, "agree"), int_at(conf, "pairs"));
    cost_rows(f, json_object_get(doc, "costs"));
    reuse_rows(f, json_object_get(doc, "reuse_cache"));
    fprintf(f, "\nruns: %lld (class building %lld, confirmation %lld; all pairs would be %lld), "
               "every edited kernel re-read: %s, %.2f s\n",
            int_at(runs, "total"), int_at(runs, "class_building"), int_at(runs, "confirmation"),
            int_at(runs, "all_pairs_would_be"), yes_no(json_object_get(doc, "sass_check"),
                                                       "verified"),
            pt_num(json_object_get(doc, "seconds"), "total"));
}

/* ---- control codes ---------------------------------------------------------- */

/* "1.000/stall +0.02 (max 0.03)", or "-". */
static void fit_text(const json_t *fit, char *buf, size_t len)
{
    if (!json_is_object(fit))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.3f/stall %+.2f (max %.2f)", pt_num(fit, "slope"),
                 pt_num(fit, "intercept"), pt_num(fit, "max_residual"));
}

static void instr_row(FILE *f, const json_t *e)
{
    const json_t *fit = json_object_get(e, "fit");
    char stall[16], yield[16], safe[16], lat[64], chain[48], stream[48];
    if (json_is_string(json_object_get(e, "error"))) {
        fprintf(f, "%-10s %-8s not measured: %.*s\n", pt_text(e, "name", "?"),
                pt_text(e, "sass", "?"), ERR_WIDTH, pt_text(e, "error", ""));
        return;
    }
    int_text(e, "compiler_stall", stall, sizeof stall);
    int_text(e, "compiler_yield", yield, sizeof yield);
    int_text(e, "min_safe_stall", safe, sizeof safe);
    if (!strcmp(safe, "-"))
        snprintf(safe, sizeof safe, "none");
    pt_figure_text(json_object_get(e, "chain_latency_cycles"), lat, sizeof lat);
    fit_text(json_object_get(fit, "chain"), chain, sizeof chain);
    fit_text(json_object_get(fit, "stream"), stream, sizeof stream);
    fprintf(f, "%-10s %-8s %5s/%-5s %-24s %-9s %-30s %s\n", pt_text(e, "name", "?"),
            pt_text(e, "sass", "?"), stall, yield, lat, safe, chain, stream);
}

/* The issue-order experiment's decisions per edit (the "scheduler" meaning,
 * probes/issue_order.h): each policy's hits, the overlapping neighbours,
 * the rule the counts support. Nothing when the meaning has no data. */
static void issue_order_rows(FILE *f, const json_t *sched)
{
    static const char *const policies[] = {"youngest", "oldest", "round-robin", "lowest-id"};
    const json_t *by = json_object_get(json_object_get(sched, "data"), "by_experiment"), *c;
    const char *name;
    if (!json_is_object(by))
        return;
    fprintf(f, "\nissue order (%s)\n%-12s %9s %9s %9s %11s %9s %13s  %s\n",
            pt_text(sched, "rule", "-"), "experiment", "decisions", "youngest", "oldest",
            "round-robin", "lowest-id", "overlapping", "rule");
    json_object_foreach((json_t *)by, name, c) {
        const json_t *hits = json_object_get(c, "hits"), *rule = json_object_get(c, "rule");
        char overlap[32];
        snprintf(overlap, sizeof overlap, "%lld/%lld", int_at(c, "overlapped"), int_at(c, "pairs"));
        fprintf(f, "%-12s %9lld", name, int_at(c, "decisions"));
        for (size_t p = 0; p < sizeof policies / sizeof policies[0]; p++)
            fprintf(f, " %*lld", p == 2 ? 11 : 9, int_at(hits, policies[p]));
        fprintf(f, " %13s  ", overlap);
        if (json_is_array(rule) && json_array_size(rule)) {
            for (size_t i = 0; i < json_array_size(rule); i++) {
                const char *r = json_string_value(json_array_get(rule, i));
                fprintf(f, "%s%s", i ? " or " : "", r ? r : "?");
            }
            fputc('\n', f);
        } else {
            fprintf(f, "not determined\n");
        }
    }
}

void pt_control_codes_table(FILE *f, const json_t *doc)
{
    const json_t *e, *m;
    const char *name;
    size_t i;
    pt_header(f, doc);
    fprintf(f, "%-10s %-8s %11s %-24s %-9s %-30s %s\n", "instr", "SASS", "stall/yield",
            "latency cycles [min-max]", "safe stall", "chain fit (cycles/stall)", "stream fit");
    json_array_foreach(json_object_get(doc, "instructions"), i, e)
        instr_row(f, e);
    fprintf(f, "\nmeanings\n");
    json_object_foreach(json_object_get(doc, "meanings"), name, m)
        fprintf(f, "  %s: %s\n", name, pt_text(m, "text", "-"));
    issue_order_rows(f, json_object_get(json_object_get(doc, "meanings"), "scheduler"));
}

/* ---- dual issue ----------------------------------------------------------- */

static void result_row(FILE *f, const json_t *r)
{
    char rate[64], nominal[16], peak[16], nom[16];
    pt_figure_text(json_object_get(r, "ffma_per_sm_clock"), rate, sizeof rate);
    if (json_is_number(json_object_get(r, "nominal_ffma_per_sm_clock")))
        snprintf(nominal, sizeof nominal, "%.0f", pt_num(r, "nominal_ffma_per_sm_clock"));
    else
        snprintf(nominal, sizeof nominal, "-");
    percent_text(r, "efficiency_vs_peak", peak, sizeof peak);
    percent_text(r, "efficiency_vs_nominal", nom, sizeof nom);
    fprintf(f, "%-14s %-14s %5lld  %-28s %8s %8s %8s\n", pt_text(r, "pattern", "?"),
            pt_text(r, "operands", "?"), int_at(r, "warps_per_scheduler"), rate, nominal, peak,
            nom);
}

void pt_dual_issue_table(FILE *f, const json_t *doc)
{
    const json_t *r;
    char peak[32] = "unknown";
    size_t i;
    pt_header(f, doc);
    if (json_is_number(json_object_get(doc, "peak_ffma_per_sm_clock")))
        snprintf(peak, sizeof peak, "%.1f", pt_num(doc, "peak_ffma_per_sm_clock"));
    fprintf(f, "verdict: %s\n", pt_text(doc, "verdict", "-"));
    fprintf(f, "dual issue observed: %s; peak %s FFMA per SM clock (%s)\n\n",
            yes_no(doc, "dual_issue_observed"), peak, pt_text(doc, "peak_source", "no source"));
    fprintf(f, "%-14s %-14s %5s  %-28s %8s %8s %8s\n", "pattern", "operands", "warps",
            "FFMA/SM clock [min-max]", "nominal", "vs peak", "vs nom.");
    json_array_foreach(json_object_get(doc, "results"), i, r)
        result_row(f, r);
}
