/*
 * Result documents as tables (see probe_table.h).
 *
 * DESIGN
 * Read-only and forgiving: the document was already checked, but a table
 * must not crash on a member it does not expect, so every accessor tolerates
 * absence and prints "-" or the member's error instead. A figure prints as
 * "median [min-max]"; an error prints shortened to fit its row. The pieces
 * every table uses are here (probe_table_internal.h), with the latency and
 * memory tables; the tables of the probes that edit machine code are in
 * probe_table_edits.c.
 */
#include "server/cli/probe_table.h"

#include <math.h>
#include <string.h>

#include "server/cli/probe_table_internal.h"

/* ---- pieces ---------------------------------------------------------------- */

double pt_num(const json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

const char *pt_error_of(const json_t *v)
{
    if (json_is_string(v))
        return json_string_value(v);
    return json_string_value(json_object_get(v, "error"));
}

void pt_figure_text(const json_t *fig, char *buf, size_t len)
{
    if (json_is_object(fig) && !json_object_get(fig, "median") && json_object_get(fig, "cycles"))
        fig = json_object_get(fig, "cycles");
    if (pt_error_of(fig))
        snprintf(buf, len, "error: %.*s", ERR_WIDTH, pt_error_of(fig));
    else if (json_is_number(json_object_get(fig, "median")))
        snprintf(buf, len, "%.2f [%.2f-%.2f]", pt_num(fig, "median"), pt_num(fig, "min"),
                 pt_num(fig, "max"));
    else
        snprintf(buf, len, "-");
}

const char *pt_text(const json_t *o, const char *key, const char *dflt)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v ? v : dflt;
}

/* 1536 -> "1.5 KiB". */
static void bytes_text(double b, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    size_t u = 0;
    while (b >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
        b /= 1024;
        u++;
    }
    snprintf(buf, len, "%.4g %s", b, units[u]);
}

static void clock_text(const json_t *v, char *buf, size_t len)
{
    if (json_is_number(v))
        snprintf(buf, len, "%.0f", json_number_value(v));
    else
        snprintf(buf, len, "?");
}

void pt_header(FILE *f, const json_t *doc)
{
    const json_t *dev = json_object_get(doc, "device"), *clk = json_object_get(doc, "clock_mhz");
    const char *name = json_string_value(json_object_get(dev, "name"));
    const char *uuid = json_string_value(json_object_get(dev, "uuid"));
    const char *cc = json_string_value(json_object_get(dev, "compute_capability"));
    const char *drv = json_string_value(json_object_get(doc, "driver_version"));
    char before[32], after[32];
    clock_text(json_object_get(clk, "before"), before, sizeof before);
    clock_text(json_object_get(clk, "after"), after, sizeof after);
    fprintf(f, "%s on %s (%s), compute capability %s, driver %s\n",
            json_string_value(json_object_get(doc, "probe")), name ? name : "?",
            uuid ? uuid : "?", cc ? cc : "?", drv ? drv : "?");
    fprintf(f, "SM clock %s -> %s MHz, %lld repeats, %.1f s\n\n", before, after,
            (long long)json_integer_value(json_object_get(doc, "repeats")),
            pt_num(doc, "wall_s"));
}

/* ---- latency ------------------------------------------------------------------- */

/* A rate: two decimals, or four significant digits below 1 (a wgmma step
 * is a few hundredths of an operation a clock an SM); "-" when absent. */
static void rate_text(const json_t *fig, char *buf, size_t len)
{
    if (!json_is_number(json_object_get(fig, "median")))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, pt_num(fig, "median") < 1 ? "%.4g" : "%.2f", pt_num(fig, "median"));
}

static void latency_row(FILE *f, const json_t *e)
{
    char lat[128], tp[32], one[32], tf[32];
    if (json_object_get(e, "latency_cycles"))
        pt_figure_text(json_object_get(e, "latency_cycles"), lat, sizeof lat);
    else
        snprintf(lat, sizeof lat, "not measured: %.*s", ERR_WIDTH,
                 pt_text(e, "error", "no figure"));
    rate_text(json_object_get(e, "throughput_per_clock_per_sm"), tp, sizeof tp);
    rate_text(json_object_get(e, "throughput_one_warpgroup_per_clock_per_sm"), one, sizeof one);
    rate_text(json_object_get(e, "tflops"), tf, sizeof tf);
    fprintf(f, "%-21s %-8s %-8s %-24s %-14s %-10s %s\n", pt_text(e, "name", "?"),
            pt_text(e, "group", ""), pt_text(e, "sass_opcode", "?"), lat, tp, one, tf);
}

static void latency_table(FILE *f, const json_t *doc)
{
    const json_t *e;
    size_t i;
    pt_header(f, doc);
    fprintf(f, "%-21s %-8s %-8s %-24s %-14s %-10s %s\n", "instruction", "group", "SASS",
            "latency cycles [min-max]", "results/clk/SM", "1 wg/SM", "TFLOP/s");
    json_array_foreach(json_object_get(doc, "entries"), i, e)
        latency_row(f, e);
}

/* ---- memory -------------------------------------------------------------------- */

static void curve_rows(FILE *f, const char *load, const json_t *curve)
{
    const json_t *p;
    size_t i;
    char b[32], fig[128];
    if (pt_error_of(curve)) {
        fprintf(f, "%s curve: error: %.*s\n", load, ERR_WIDTH, pt_error_of(curve));
        return;
    }
    fprintf(f, "%s curve\n  %-12s %s\n", load, "footprint", "cycles [min-max]");
    json_array_foreach(curve, i, p) {
        bytes_text(pt_num(p, "bytes"), b, sizeof b);
        pt_figure_text(json_object_get(p, "cycles"), fig, sizeof fig);
        fprintf(f, "  %-12s %s\n", b, fig);
    }
}

static void level_rows(FILE *f, const char *load, const json_t *levels)
{
    const json_t *l;
    size_t i;
    char b[32];
    if (pt_error_of(levels)) {
        fprintf(f, "%s levels: error: %.*s\n", load, ERR_WIDTH, pt_error_of(levels));
        return;
    }
    json_array_foreach(levels, i, l) {
        if (json_is_number(json_object_get(l, "up_to_bytes")))
            bytes_text(pt_num(l, "up_to_bytes"), b, sizeof b);
        fprintf(f, "%s level %lld: %.1f cycles, %s%s\n", load,
                (long long)json_integer_value(json_object_get(l, "level")), pt_num(l, "cycles"),
                json_is_number(json_object_get(l, "up_to_bytes")) ? "holds up to " : "",
                json_is_number(json_object_get(l, "up_to_bytes")) ? b
                                                                   : "still rising at the end");
    }
}

static void figure_row(FILE *f, const char *label, const json_t *fig)
{
    char text[128];
    if (!fig)
        return;
    pt_figure_text(fig, text, sizeof text);
    fprintf(f, "%-32s %s\n", label, text);
}

/* The cold chase's figures, per load, or the reason for none. */
static void figure_rows_dram(FILE *f, const json_t *dm)
{
    if (!dm || json_is_null(dm))
        return;
    if (pt_error_of(dm)) {
        figure_row(f, "device memory (cold)", dm);
        return;
    }
    figure_row(f, "device memory (cold), ca", json_object_get(dm, "ca"));
    figure_row(f, "device memory (cold), cg", json_object_get(dm, "cg"));
}

static long long int_member(const json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

/* The L1 set search's verdict (probes/l1_sets.h): the mapping and the
 * --set-index text that gives it to the cache model, or why there is none. */
static void l1_sets_rows(FILE *f, const json_t *l1)
{
    const json_t *si = json_object_get(l1, "set_index");
    const char *status = json_string_value(json_object_get(l1, "status"));
    const char *reason = json_string_value(json_object_get(l1, "reason"));
    if (!l1 || json_is_null(l1))
        return;
    if (pt_error_of(l1)) {
        fprintf(f, "L1 sets: error: %.*s\n", ERR_WIDTH, pt_error_of(l1));
    } else if (!json_is_object(si)) {
        fprintf(f, "L1 sets: %s: %s\n", status ? status : "?", reason ? reason : "");
    } else {
        const char *text = json_string_value(json_object_get(si, "text"));
        const char *option = json_string_value(json_object_get(si, "option"));
        fprintf(f, "L1 sets: %lld-byte lines, %lld sets x %lld ways; %s\n",
                int_member(l1, "line_bytes"), int_member(l1, "sets"), int_member(l1, "ways"),
                text ? text : json_string_value(json_object_get(si, "function")));
        if (option)
            fprintf(f, "         gpuprobe trace cache --set-index %s\n", option);
    }
}

/* The block placement (probes/placement.h): whether the dealing order was
 * found, how well it predicted the launch it did not see, and the command
 * that deals a trace in it (doc_device: the document, for its device). */
static void placement_rows(FILE *f, const json_t *bp, const json_t *doc_device)
{
    const char *status = json_string_value(json_object_get(bp, "status"));
    const json_t *check = json_object_get(bp, "check");
    if (!bp || json_is_null(bp))
        return;
    if (pt_error_of(bp) && !status) {
        fprintf(f, "block placement: error: %.*s\n", ERR_WIDTH, pt_error_of(bp));
    } else if (!status || strcmp(status, "determined") != 0) {
        fprintf(f, "block placement: %s: %s\n", status ? status : "?", pt_text(bp, "reason", ""));
    } else {
        fprintf(f, "block placement: %lld blocks dealt to %lld SMs in the order measured (%lld of %lld "
                   "launches dealt as the first, itself included)",
                int_member(bp, "blocks"), int_member(bp, "sms"), int_member(bp, "same_as_first"),
                int_member(bp, "launches"));
        if (json_is_integer(json_object_get(check, "predicted")))
            fprintf(f, "; check: %lld of %lld blocks of %lld threads where the order predicts",
                    int_member(check, "predicted"), int_member(check, "blocks"),
                    int_member(check, "threads_per_block"));
        fprintf(f, "\n                 gpuprobe trace sort --device %s --db PATH deals in it\n",
                pt_text(json_object_get(doc_device, "device"), "uuid", "UUID"));
    }
}

static double median_of(const json_t *e, const char *group, const char *key)
{
    const json_t *v = json_object_get(json_object_get(json_object_get(e, group), key), "median");
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* Distributed shared memory (probes/dsmem.h): a line per cluster size, the
 * medians or why it did not launch. */
static void dsmem_rows(FILE *f, const json_t *d)
{
    if (!d || json_is_null(d))
        return;
    if (pt_error_of(d) && !json_object_get(d, "sizes")) {
        fprintf(f, "distributed shared memory: error: %.*s\n", ERR_WIDTH, pt_error_of(d));
        return;
    }
    fprintf(f, "distributed shared memory (latency in cycles a load, bandwidth in bytes a clock an SM):\n");
    const json_t *sizes = json_object_get(d, "sizes");
    for (size_t i = 0; i < json_array_size(sizes); i++) {
        const json_t *e = json_array_get(sizes, i);
        char width[24] = "?";
        if (json_is_integer(json_object_get(e, "driver_width")))
            snprintf(width, sizeof width, "%lld", int_member(e, "driver_width"));
        fprintf(f, "  cluster %2lld: width %s, ranks %lld%s", int_member(e, "asked"), width,
                int_member(e, "ranks_seen"), json_is_true(json_object_get(e, "agrees")) ? "" : " (disagree)");
        if (!json_is_true(json_object_get(e, "launched"))) {
            fprintf(f, "; not launched: %.*s\n", ERR_WIDTH, pt_text(e, "error", "?"));
            continue;
        }
        fprintf(f, "; latency local %.1f, neighbour %.1f, farthest %.1f; bandwidth local %.1f, remote %.1f\n",
                median_of(e, "latency_cycles", "local"), median_of(e, "latency_cycles", "neighbour"),
                median_of(e, "latency_cycles", "farthest"), median_of(e, "bytes_per_clk_sm", "local"),
                median_of(e, "bytes_per_clk_sm", "remote"));
    }
}

/* The asynchronous copies' summary (probes/async_copy.h): per level, each
 * method's best bytes per SM clock and the transfer size it came at. */
static void async_copy_rows(FILE *f, const json_t *ac)
{
    static const char *const levels[][2] = {{"dram", "device memory"}, {"l2", "the L2"}};
    static const char *const methods[] = {"ld", "ca", "cg", "bulk", "tensor"};
    if (!ac || json_is_null(ac))
        return;
    if (pt_error_of(ac)) {
        fprintf(f, "async copies: error: %.*s\n", ERR_WIDTH, pt_error_of(ac));
        return;
    }
    const json_t *sum = json_object_get(ac, "summary");
    for (size_t l = 0; l < 2; l++) {
        const json_t *lv = json_object_get(sum, levels[l][0]);
        if (!json_is_object(lv))
            continue;
        fprintf(f, "async copies from %s, best B/clk/SM:", levels[l][1]);
        for (size_t m = 0; m < sizeof methods / sizeof methods[0]; m++) {
            const json_t *b = json_object_get(lv, methods[m]);
            if (b)
                fprintf(f, " %s %.1f (%lld B)", methods[m], pt_num(b, "best"), int_member(b, "at_bytes"));
        }
        fputc('\n', f);
    }
}

static void memory_table(FILE *f, const json_t *doc)
{
    static const char *const loads[] = {"ca", "cg"};
    const json_t *dep = json_object_get(doc, "departure");
    pt_header(f, doc);
    for (size_t i = 0; i < 2; i++) {
        curve_rows(f, loads[i], json_object_get(json_object_get(doc, "curves"), loads[i]));
        fputc('\n', f);
    }
    for (size_t i = 0; i < 2; i++)
        level_rows(f, loads[i], json_object_get(json_object_get(doc, "levels"), loads[i]));
    l1_sets_rows(f, json_object_get(doc, "l1_sets"));
    placement_rows(f, json_object_get(doc, "block_placement"), doc);
    dsmem_rows(f, json_object_get(doc, "distributed_shared"));
    async_copy_rows(f, json_object_get(doc, "async_copy"));
    fputc('\n', f);
    figure_row(f, "shared memory load", json_object_get(doc, "shared_cycles"));
    figure_rows_dram(f, json_object_get(doc, "device_memory_cycles"));
    if (pt_error_of(dep)) {
        figure_row(f, "departure", dep);
        return;
    }
    figure_row(f, "departure, coalesced", json_object_get(dep, "coalesced_cycles"));
    figure_row(f, "departure, uncoalesced", json_object_get(dep, "uncoalesced_cycles"));
    figure_row(f, "departure, L1 hit, coalesced",
               json_object_get(json_object_get(dep, "l1_hit"), "coalesced_cycles"));
    figure_row(f, "departure, L1 hit, uncoalesced",
               json_object_get(json_object_get(dep, "l1_hit"), "uncoalesced_cycles"));
}

/* ---- dispatch ------------------------------------------------------------------ */

/* Each probe's table, by the document's "probe". */
static const struct {
    const char *probe;
    void (*print)(FILE *f, const json_t *doc);
} tables[] = {
    {"latency", latency_table},
    {"memory", memory_table},
    {"banks", pt_banks_table},
    {"control-codes", pt_control_codes_table},
    {"dual-issue", pt_dual_issue_table},
};

static void one(FILE *f, const char *member, const json_t *doc)
{
    const char *probe = json_string_value(json_object_get(doc, "probe"));
    for (size_t i = 0; probe && i < sizeof tables / sizeof tables[0]; i++)
        if (strcmp(probe, tables[i].probe) == 0) {
            tables[i].print(f, doc);
            return;
        }
    if (pt_error_of(doc))
        fprintf(f, "%s: failed: %s\n", member, pt_error_of(doc));
}

void probe_table_print(FILE *f, const json_t *result)
{
    const char *key;
    const json_t *v;
    int n = 0;
    if (json_object_get(result, "probe")) {
        one(f, "result", result);
        return;
    }
    json_object_foreach((json_t *)result, key, v) {
        if (n++)
            fputc('\n', f);
        one(f, key, v);
    }
}
