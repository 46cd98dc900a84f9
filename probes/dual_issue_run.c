/*
 * Running the dual-issue probe on a GPU (see dual_issue.h for the method).
 *
 * DESIGN
 * The bank probe runs first, in the same job, and its classes choose the
 * operands; the control-code probe runs next (one repeat) and its answer
 * to whether one warp ever issues two instructions in one cycle leads the
 * verdict, as the method asks; then the dual kernel is compiled once and its layout read
 * from its own cubin before anything is timed. A configuration is a
 * pattern with an operand choice (or the unedited kernel): its cubin is
 * patched in a copy, re-read by dual_verify (no number from an edit that
 * is not exactly the intended one), loaded once, and timed at 1..4 warps
 * per scheduler, each `repeats` times; one measurement is two launches of
 * which the second is timed (patch_time_stamped), the rate is warp lanes x
 * FFMAs over the median block's SM cycles. The patterns' part of the
 * verdict is read back from the rows (dual_verdict), so a stored document
 * can be judged again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probes/gpu/clock.h"
#include "probes/control_codes.h"
#include "probes/dual_issue.h"
#include "probes/gpu/stats.h"
#include "util/clock.h"

#define ITERS 2000                   /* loop trips: 0.3..6 million SM cycles a launch */
#define LAUNCHES 2                   /* per measurement; the last is timed */
#define BANKS_SAMPLE 16              /* the bank probe's confirmation pairs */

struct run {
    struct banks_session S;          /* the GPU, the kernel as compiled, the buffers */
    struct dual_layout L;
    int repeats;
    int runs, verified, unedited;
    struct dual_edits edits;
    double rate[PROBE_MAX_REPEATS];  /* one configuration's repeats */
    double mhz[PROBE_MAX_REPEATS];
    double peak;                     /* FFMA per SM per clock; 0 unknown */
};

/* One configuration: a pattern with operands, or the kernel as compiled. */
struct config {
    const char *pattern;             /* "compiled" for the unedited kernel */
    const char *operands;            /* "conflict_free", "naive" or "compiled" */
    const struct dual_operands *o;   /* NULL when compiled */
};


/* The cubin a configuration runs: patched and verified, or the original. */
static const void *image(struct run *R, const struct config *c, char *err, size_t errlen)
{
    size_t size = R->S.base.cubin_size;
    if (!c->o)
        return R->S.base.cubin;
    memcpy(R->S.copy, R->S.base.cubin, size);
    if (dual_edits(&R->L, c->pattern, c->o, &R->edits) < 0) {
        snprintf(err, errlen, "no legal edit for pattern %s", c->pattern);
        return NULL;
    }
    if (patch_rewrite(R->S.copy, size, DUAL_KERNEL, R->edits.nop, R->edits.nnop, R->edits.ed,
                      R->edits.ned, err, errlen) < 0 ||
        dual_verify(R->S.base.cubin, R->S.copy, size, &R->L, c->pattern, c->o, err, errlen) < 0)
        return NULL;
    return R->S.copy;
}

/* The configuration's nominal rate: its pattern's, or the compiled stalls'. */
static double nominal(const struct run *R, const struct config *c)
{
    struct dual_slot g[DUAL_GROUP];
    if (!c->o)
        return dual_nominal(DUAL_TIMED, R->L.stall_sum);
    return dual_group(c->pattern, g) == 0 ? dual_nominal(DUAL_GROUP_FFMA, dual_group_cycles(g))
                                          : 0;
}

static json_t *row_json(const struct run *R, const struct config *c, int w, double nom)
{
    double *sorted = malloc(sizeof *sorted * (size_t)R->repeats);
    if (!sorted)
        return NULL;
    memcpy(sorted, R->rate, sizeof *sorted * (size_t)R->repeats);
    double med = spread_of(sorted, (size_t)R->repeats).median;
    memcpy(sorted, R->mhz, sizeof *sorted * (size_t)R->repeats);
    double mhz = spread_of(sorted, (size_t)R->repeats).median;
    free(sorted);
    return json_pack("{s:s, s:s, s:i, s:f, s:o, s:o, s:o, s:f}", "pattern", c->pattern,
                     "operands", c->operands, "warps_per_scheduler", w,
                     "nominal_ffma_per_sm_clock", nom, "ffma_per_sm_clock",
                     spread_json(R->rate, (size_t)R->repeats), "efficiency_vs_peak",
                     dual_ratio_json(med, R->peak), "efficiency_vs_nominal",
                     dual_ratio_json(med, nom), "sm_clock_mhz", mhz);
}

/* Times the loaded kernel at w warps per scheduler, R->repeats times. */
static int time_warps(struct run *R, CUfunction fn, int w, unsigned ffma, int edited, char *err,
                      size_t errlen)
{
    unsigned iters = ITERS, warps = (unsigned)(DUAL_SCHEDULERS * w);
    void *params[] = {&R->S.out, &R->S.in, &R->S.sink, &iters};
    struct patch_launch l = {R->S.blocks, warps * DUAL_LANES, 0, params, LAUNCHES};
    for (int i = 0; i < R->repeats; i++) {
        struct patch_timing t;
        if (patch_time_stamped(&R->S.g, fn, &l, R->S.out, &t, err, errlen) < 0)
            return -1;
        R->rate[i] = dual_rate(warps, ffma, ITERS, t.cycles);
        R->mhz[i] = t.mhz;
        R->runs++;
        R->verified += edited;
        R->unedited += !edited;
    }
    return 0;
}

/* Measures one configuration at 1..DUAL_MAX_WARPS warps per scheduler and
 * appends its rows to results. */
static int measure(struct run *R, const struct config *c, json_t *results, char *err,
                   size_t errlen)
{
    const void *img = image(R, c, err, errlen);
    if (!img)
        return -1;
    struct gpu_module m;
    CUfunction fn;
    if (gpu_module_load_image(&R->S.g, img, R->S.base.cubin_size, &m, err, errlen) < 0)
        return -1;
    int rc = gpu_module_function(&R->S.g, &m, DUAL_KERNEL, &fn, err, errlen);
    unsigned ffma = c->o ? DUAL_FFMA : DUAL_TIMED;
    double nom = nominal(R, c);
    for (int w = 1; rc == 0 && w <= DUAL_MAX_WARPS; w++) {
        rc = time_warps(R, fn, w, ffma, c->o != NULL, err, errlen);
        json_t *row = rc == 0 ? row_json(R, c, w, nom) : NULL;
        if (rc == 0 && !row)
            rc = (snprintf(err, errlen, "out of memory"), -1);
        if (row)
            json_array_append_new(results, row);
    }
    gpu_module_free(&R->S.g, &m);
    if (rc < 0) {
        size_t used = strlen(err);
        snprintf(err + used, errlen - used, " (pattern %s, %s operands)", c->pattern,
                 c->operands);
    }
    return rc;
}

/* The session and the kernel's layout; the session is closed by the
 * caller either way. */
static int setup(struct run *R, const char *device, char *err, size_t errlen)
{
    if (banks_session_open(&R->S, device, &dual_shape, err, errlen) < 0 ||
        dual_layout(R->S.base.cubin, R->S.base.cubin_size, &R->L, err, errlen) < 0)
        return -1;
    R->peak = dual_peak_lanes(R->S.g.info.cc_major, R->S.g.info.cc_minor);
    return 0;
}

/* ---- the document ------------------------------------------------------------ */

static json_t *op_json(unsigned op, unsigned stall)
{
    struct sass_insn in = {0, 0, 0};
    char mn[SASS_MNEMONIC_MAX], hex[8];
    sass_set_field(&in, SASS_OPCODE, op);
    snprintf(hex, sizeof hex, "0x%03x", op);
    return json_pack("{s:s, s:s, s:i}", "mnemonic", sass_mnemonic(&in, mn), "opcode", hex,
                     "stall", stall);
}

static json_t *kernel_json(const struct run *R)
{
    const struct dual_layout *L = &R->L;
    json_t *d = json_array(), *head = json_array();
    for (size_t i = 0; i < L->b.ndest; i++)
        json_array_append_new(d, json_integer(L->b.dest[i]));
    for (int i = 0; i < DUAL_HEAD; i++)
        json_array_append_new(head, op_json(L->head_op[i], L->head_stall[i]));
    json_t *k = json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:o}", "registers",
                          L->b.regs, "highest_source_register", (int)L->b.max_reg,
                          "timed_ffma_compiled", (int)L->b.nffma, "ffma_per_iteration_edited",
                          DUAL_FFMA, "groups", DUAL_GROUPS, "group_slots", DUAL_GROUP,
                          "first_ffma_offset", (int)(L->b.ffma[0] * SASS_INSN_BYTES),
                          "compiled_ffma_stall_sum", (int)L->stall_sum, "destinations", d);
    json_object_set_new(k, "loop_control", json_pack("{s:o, s:o, s:s}", "before_ffma", head,
                        "after_ffma", op_json(L->next_op, L->next_stall), "why",
                        "counter, compare and a select the first FFMAs read: the loop "
                        "control is pinned before the FFMAs, which stay one run"));
    json_object_set_new(k, "launch", json_pack("{s:i, s:s, s:i, s:i}", "blocks",
                        (int)R->S.blocks, "threads_per_block", "128 x warps per scheduler",
                        "iterations", ITERS, "launches_per_run", LAUNCHES));
    return k;
}

static json_t *peak_source(const struct run *R)
{
    char s[200];
    int ma = R->S.g.info.cc_major, mi = R->S.g.info.cc_minor;
    if (R->peak > 0)
        snprintf(s, sizeof s, "FP32 lanes per SM of compute capability %d.%d (NVIDIA's "
                 "published figures), one FFMA per lane per clock", ma, mi);
    else
        snprintf(s, sizeof s, "compute capability %d.%d is not in the table of FP32 lanes per "
                 "SM: no peak, no efficiency against it", ma, mi);
    return json_string(s);
}

/* What the bank probe's document says that this one keeps. */
struct banks_facts {
    int count, bank[SASS_RZ];
    json_t *summary;
};

static int run_banks(const char *device, struct banks_facts *B, char *err, size_t errlen)
{
    char why[512];
    json_t *doc = banks_probe_run(device, BANKS_SAMPLE, 1, why, sizeof why);
    if (!doc) {
        snprintf(err, errlen, "bank probe: %s", why);
        return -1;
    }
    B->count = dual_bank_map(json_object_get(doc, "classes"), B->bank);
    json_t *runs = json_object_get(json_object_get(doc, "runs"), "total");
    json_t *secs = json_object_get(json_object_get(doc, "seconds"), "total");
    B->summary = json_pack("{s:i, s:s, s:O, s:O}", "bank_count", B->count, "classes_from",
                           "the bank probe, run first in this job (16 confirmation pairs, "
                           "1 repeat): its classes choose the operands",
                           "runs", runs ? runs : json_null(), "seconds",
                           secs ? secs : json_null());
    json_decref(doc);
    if (B->count < 1) {
        snprintf(err, errlen, "the bank probe's classes are not usable");
        return -1;
    }
    return 0;
}

/* The control-code probe's answer to "does one warp ever issue two
 * instructions in one cycle" (its meanings.dual_issue), from a one-repeat
 * run in this job: the issue asks the verdict to rest on that evidence,
 * and the patterns here only show what the same streams achieve. */
static json_t *control_code_evidence(const char *device, char *err, size_t errlen)
{
    char why[512];
    json_t *doc = control_codes_probe_run(device, 1, why, sizeof why);
    if (!doc) {
        snprintf(err, errlen, "control-code probe: %s", why);
        return NULL;
    }
    json_t *m = json_object_get(json_object_get(doc, "meanings"), "dual_issue");
    json_t *ev = m ? json_deep_copy(m) : NULL;
    if (ev)
        json_object_set_new(ev, "from", json_string("the control-code probe, run in this job "
                                                     "(1 repeat): every stall and yield on the "
                                                     "independent streams of 8 instructions"));
    else
        snprintf(err, errlen, "the control-code probe gave no dual-issue evidence");
    json_decref(doc);
    return ev;
}

/* Every configuration in order: compiled, then each operand choice's patterns. */
static int measure_all(struct run *R, const struct dual_operands ops[2], json_t *results,
                       char *err, size_t errlen)
{
    static const char *const names[2] = {"conflict_free", "naive"};
    struct config c = {"compiled", "compiled", NULL};
    if (measure(R, &c, results, err, errlen) < 0)
        return -1;
    for (int k = 0; k < 2; k++)
        for (int p = 0; p < DUAL_PATTERNS; p++) {
            c = (struct config){dual_patterns[p], names[k], &ops[k]};
            if (measure(R, &c, results, err, errlen) < 0)
                return -1;
        }
    return 0;
}

static json_t *document(struct run *R, struct banks_facts *B, const struct dual_operands ops[2],
                        json_t *evidence, json_t *results, double clk[2], double secs[3])
{
    char verdict[1200];
    const char *cc = json_string_value(json_object_get(evidence, "text"));
    int n = snprintf(verdict, sizeof verdict, "Control codes: %s Patterns: ", cc ? cc : "?");
    int seen = dual_verdict(results, verdict + n, sizeof verdict - (size_t)n) ||
               json_is_true(json_object_get(evidence, "observed"));
    json_t *doc = json_pack(
        "{s:s, s:o, s:s, s:{s:f, s:f}, s:i, s:f, s:o, s:o, s:b, s:s, s:O, s:{s:o, s:o}, s:o}",
        "probe", "dual-issue", "device", gpu_json(&R->S.g), "driver_version", R->S.g.driver_version,
        "clock_mhz", "before", clk[0], "after", clk[1], "repeats", R->repeats, "wall_s",
        secs[2], "peak_ffma_per_sm_clock", R->peak > 0 ? json_real(R->peak) : json_null(),
        "peak_source", peak_source(R), "dual_issue_observed", seen, "verdict", verdict,
        "banks", B->summary, "operands", "conflict_free",
        dual_operands_json(&ops[0], B->bank, DUAL_CONFLICT_FREE), "naive",
        dual_operands_json(&ops[1], B->bank, DUAL_NAIVE), "kernel", kernel_json(R));
    if (!doc)
        return NULL;
    json_object_set(doc, "results", results);
    json_object_set(doc, "control_code_evidence", evidence);
    json_object_set_new(doc, "runs", json_pack("{s:i, s:i, s:i}", "total", R->runs, "verified",
                                               R->verified, "unedited", R->unedited));
    json_object_set_new(doc, "seconds", json_pack("{s:f, s:f, s:f}", "setup", secs[0],
                                                  "measuring", secs[1], "total", secs[2]));
    return doc;
}

json_t *dual_issue_probe_run(const char *device, int repeats, char *err, size_t errlen)
{
    if (repeats < 1 || repeats > PROBE_MAX_REPEATS) {
        snprintf(err, errlen, "repeats must be from 1 to %d", PROBE_MAX_REPEATS);
        return NULL;
    }
    double t0 = mono_s(), clk[2] = {0, 0}, secs[3] = {0, 0, 0};
    struct banks_facts B = {0, {0}, NULL};
    struct dual_operands ops[2];
    struct run R;
    memset(&R, 0, sizeof R);
    R.repeats = repeats;
    json_t *results = json_array(), *doc = NULL, *evidence = NULL;
    int ok = run_banks(device, &B, err, errlen) == 0 &&
             (evidence = control_code_evidence(device, err, errlen)) != NULL &&
             setup(&R, device, err, errlen) == 0 &&
             dual_operands_choose(&R.L, B.bank, B.count, DUAL_CONFLICT_FREE, &ops[0], err,
                                  errlen) == 0 &&
             dual_operands_choose(&R.L, B.bank, B.count, DUAL_NAIVE, &ops[1], err, errlen) == 0 &&
             gpu_clock_mhz(&R.S.g, &clk[0], err, errlen) == 0;
    secs[0] = mono_s() - t0;
    ok = ok && measure_all(&R, ops, results, err, errlen) == 0 &&
         gpu_clock_mhz(&R.S.g, &clk[1], err, errlen) == 0;
    secs[1] = mono_s() - t0 - secs[0];
    secs[2] = mono_s() - t0;
    if (ok && !(doc = document(&R, &B, ops, evidence, results, clk, secs)))
        snprintf(err, errlen, "out of memory building the result document");
    json_decref(results);
    json_decref(evidence);
    json_decref(B.summary);
    banks_session_close(&R.S);
    return doc;
}
