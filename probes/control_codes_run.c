/*
 * Running the control-code probe on a GPU (see control_codes.h).
 *
 * DESIGN
 * The probe reuses the latency probe's two kernels for each instruction
 * (probes/latency_ptx.c), whose machine code the latency probe already
 * knows how to check: "lat", one warp running dependent chains between
 * clock reads, and "tput", eight independent chains per thread in a loop.
 * Both store their final values, which is what makes an edit's effect on
 * correctness visible. For each instruction:
 *   1. build both, check the compiled code (lat_check_*), and run them
 *      unedited: the reference answers, the chain-timed latency, and the
 *      compiler's own stall and yield on the timed instructions;
 *   2. for stall 0..15 x yield 0..1, rewrite those two fields on every
 *      timed instruction (chain regions of "lat"; the loop body of "tput"
 *      run by one warp), re-read the edited code (only those fields of
 *      those instructions changed, or no number), run it `repeats` times,
 *      and record cycles per instruction and whether every run's stored
 *      values equal the reference's, byte for byte.
 * Then three experiments: the wait masks of a variable-latency chain (MUFU
 * and a shared-memory atomic) cleared; reuse flags set on a chain whose
 * first source is the previous result, and cleared on the FFMA stream;
 * the FFMA stream with two warps per scheduler at every stall and yield;
 * and the issue order after a stall or yield (probes/issue_order.h,
 * "scheduler"), which builds its own kernel.
 * An instruction ptxas emits in two SASS forms (variants[]: HFMA2 and
 * HFMA2.MMA for f16x2 FMAs) is swept again once per form, only that form's
 * fields edited ("hfma2:HFMA2.MMA": its own smallest safe stall), and each
 * form is timed alone: every timed instruction of the stream rewritten to
 * it (the opcode field), at each stall, checked against the answer.
 * control_codes_infer.c turns the points into conclusions. A run starts
 * with one launch that is not kept (instruction cache, module load).
 * LOP3 is not swept: one bitwise function of x applied repeatedly has
 * period at most 2, so a chain that read a stale value can still end on
 * the right answer and correctness would say nothing. FMUL is swept with
 * y = 1 + 2^-10 rather than the latency probe's 1.0 for the same reason.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probes/gpu/clock.h"
#include "probes/control_codes.h"
#include "probes/gpu/cubin.h"
#include "probes/latency.h"
#include "probes/latency_check.h"
#include "probes/gpu/patch.h"
#include "probes/gpu/stats.h"
#include "probes/issue_order.h"
#include "util/clock.h"

#define MAX_TARGETS 512
#define STREAM_ITERS 64
#define STREAM_THREADS 32            /* one warp: one scheduler */
#define TWO_WARP_THREADS 256         /* eight warps: two per scheduler */
#define OUT_BYTES 256
#define GLOB_BYTES ((size_t)TPUT_CHAINS * TWO_WARP_THREADS * 8)
#define CHAIN_STEPS (LAT_N2 - LAT_N1)
#define MAX_STEP_CYCLES 100000.0     /* beyond this a stamp is not a time */
#define FMUL_Y 1.0009765625f         /* 1 + 2^-10: every step changes x */

static const char *const swept[] = {"ffma", "fadd", "fmul", "hfma2", "dfma", "dadd", "imad",
                                    "iadd"};
static const char *const waited[] = {"sin", "atoms_add"};

/* Instructions the compiler emits in two SASS forms that one mnemonic and
 * one catalog entry cover: each form is swept alone (only its stalls
 * edited, the other's left as compiled) and timed alone (every timed
 * instruction rewritten to it). f16x2 FMAs: ptxas alternates HFMA2 (the FMA
 * pipe) with HFMA2.MMA (opcode 0x035, the MMA pipe) in one chain. */
static const struct variant {
    const char *entry, *label;
    unsigned base;                   /* SASS_OPCODE_BASE */
} variants[] = {{"hfma2", "HFMA2", 0x031}, {"hfma2", "HFMA2.MMA", 0x035}};

struct run {
    struct gpu g;
    int opened, repeats, runs, verified;
    CUdeviceptr in, out, glob;
    unsigned char *copy, *got, *want;
    size_t copy_size;
};

/* One compiled module and the instructions an edit rewrites. */
struct kernel {
    const struct lat_entry *e;
    const char *name;                /* "lat" or "tput" */
    int stream;
    struct gpu_module m;
    size_t target[MAX_TARGETS], ntarget;
    unsigned variant;                /* a SASS_OPCODE_BASE targets must have; 0: any */
    size_t want_bytes;               /* the reference answer's size */
};

/* What one configuration measured. */
struct outcome {
    double v[PROBE_MAX_REPEATS];     /* cycles per instruction */
    int n, correct;
};


/* ---- running ------------------------------------------------------------------ */

static int launch_once(struct run *R, struct kernel *k, CUfunction fn, unsigned threads,
                       double *cycles, char *err, size_t errlen)
{
    struct gpu *g = &R->g;
    unsigned iters = STREAM_ITERS;
    void *lat_params[] = {&R->out, &R->in, &R->glob};
    void *tput_params[] = {&R->out, &R->in, &R->glob, &iters};
    unsigned long long w[LAT_REGIONS + 1];
    if (gpu_check(g, g->cu->cuMemsetD32(R->glob, 0xffffffffu, GLOB_BYTES / 4), "cuMemsetD32", err, errlen) < 0 ||
        gpu_launch(g, fn, 1, threads, 0, k->stream ? tput_params : lat_params, err, errlen) < 0 ||
        gpu_check(g, g->cu->cuMemcpyDtoH(w, R->out, sizeof w), "cuMemcpyDtoH", err, errlen) < 0)
        return -1;
    if (k->stream) {                 /* clock at start, timer, clock at end, timer */
        double per_warp = (double)STREAM_ITERS * TPUT_CHAINS * TPUT_UNROLL * k->e->per_step;
        *cycles = (double)(w[2] - w[0]) / per_warp;
        k->want_bytes = (size_t)TPUT_CHAINS * threads * 8;
        return gpu_check(g, g->cu->cuMemcpyDtoH(R->got, R->glob, k->want_bytes), "cuMemcpyDtoH",
                         err, errlen);
    }
    *cycles = (double)(w[4] - w[3]) / (double)(CHAIN_STEPS * k->e->per_step);
    k->want_bytes = 8;
    return gpu_check(g, g->cu->cuMemcpyDtoH(R->got, R->out + 64, 8), "cuMemcpyDtoH", err, errlen);
}

/* Applies the edits to a copy of k's cubin, checks them, loads the copy and
 * runs it once unkept and R->repeats times kept. reference: record the
 * answer as the one later runs must equal (no edits expected). */
static int measure(struct run *R, struct kernel *k, const struct patch_edit *e, size_t n,
                   unsigned threads, int reference, struct outcome *o, char *err, size_t errlen)
{
    size_t size = k->m.cubin_size;
    if (size > R->copy_size) {
        unsigned char *c = realloc(R->copy, size);
        if (!c) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        R->copy = c;
        R->copy_size = size;
    }
    memcpy(R->copy, k->m.cubin, size);
    if (n && (patch_apply(R->copy, size, k->name, e, n, err, errlen) < 0 ||
              patch_verify(k->m.cubin, R->copy, size, k->name, e, n, err, errlen) < 0))
        return -1;
    R->verified++;
    struct gpu_module m;
    CUfunction fn;
    double c;
    if (gpu_module_load_image(&R->g, R->copy, size, &m, err, errlen) < 0)
        return -1;
    int rc = gpu_module_function(&R->g, &m, k->name, &fn, err, errlen);
    o->n = 0;
    o->correct = 1;
    for (int i = 0; rc == 0 && i <= R->repeats; i++) {
        rc = launch_once(R, k, fn, threads, &c, err, errlen);
        if (rc < 0 || i == 0)
            continue;
        o->v[o->n++] = c;
        if (reference && i == 1)
            memcpy(R->want, R->got, k->want_bytes);
        else
            o->correct = o->correct && memcmp(R->want, R->got, k->want_bytes) == 0;
    }
    gpu_module_free(&R->g, &m);
    R->runs += rc == 0;
    return rc;
}

/* ---- the kernels and what an edit targets ---------------------------------------- */

static void upload_inputs(struct run *R, const struct lat_entry *e, char *err, size_t errlen,
                          int *rc)
{
    unsigned char in[LAT_INPUT_BYTES];
    lat_fill_inputs(e, in);
    if (e->xt == LT_F32) {
        float y = FMUL_Y;
        memcpy(in + 8, &y, sizeof y);
    }
    if (*rc == 0)
        *rc = gpu_check(&R->g, R->g.cu->cuMemcpyHtoD(R->in, in, sizeof in), "cuMemcpyHtoD", err,
                        errlen);
}

static const struct cubin_kernel *open_text(struct cubin *c, const struct kernel *k, char *err,
                                            size_t errlen)
{
    if (cubin_parse(c, k->m.cubin, k->m.cubin_size, err, errlen) < 0)
        return NULL;
    const struct cubin_kernel *ck = cubin_kernel_find(c, k->name);
    if (!ck)
        snprintf(err, errlen, "no kernel %s in the cubin", k->name);
    return ck;
}

static int add_target(struct kernel *k, size_t i, char *err, size_t errlen)
{
    if (k->ntarget == MAX_TARGETS) {
        snprintf(err, errlen, "more than %d instructions to edit", MAX_TARGETS);
        return -1;
    }
    k->target[k->ntarget++] = i;
    return 0;
}

/* 1 if an ISETP of the region compares register reg (the loop's counter:
 * its first source is always a register). */
static int counter_register(const uint8_t *text, const struct sass_region *r, unsigned reg)
{
    char mn[SASS_MNEMONIC_MAX];
    for (size_t i = r->first; i < r->end; i++) {
        struct sass_insn in = sass_decode(text, i * SASS_INSN_BYTES);
        if (strcmp(sass_mnemonic(&in, mn), "ISETP") == 0 && sass_field(&in, SASS_RA) == reg)
            return 1;
    }
    return 0;
}

/* Targets: the timed instructions of the chain regions ("lat") or of the
 * loop body ("tput", less any that counts the loop); wait: instead every
 * instruction of the chain regions that waits on a scoreboard. */
static int find_targets(struct kernel *k, int wait, char *err, size_t errlen)
{
    struct cubin c;
    const struct cubin_kernel *ck = open_text(&c, k, err, errlen);
    struct sass_region r[LAT_REGIONS * 4];
    size_t nr = 0;
    int rc = ck ? 0 : -1;
    char mn[SASS_MNEMONIC_MAX];
    k->ntarget = 0;
    if (rc == 0) {
        nr = k->stream ? (size_t)(sass_clock_region(ck->text, ck->text_size, 0, r) == 0)
                       : lat_find_regions(ck->text, ck->text_size, r, LAT_REGIONS * 4);
        if (nr < (k->stream ? 1u : (size_t)LAT_REGIONS) || (!k->stream && nr % LAT_REGIONS)) {
            snprintf(err, errlen, "the %s kernel has no timed regions", k->name);
            rc = -1;
        }
    }
    /* ptxas unrolls the latency kernel's two passes, so each chain region
     * appears once per pass: edit them all (region 0 of each pass is empty) */
    for (size_t q = 0; rc == 0 && q < nr; q++) {
        if (!k->stream && q % LAT_REGIONS == 0)
            continue;
        for (size_t i = r[q].first; rc == 0 && i < r[q].end; i++) {
            struct sass_insn in = sass_decode(ck->text, i * SASS_INSN_BYTES);
            int pick = wait ? sass_field(&in, SASS_WAIT) != 0 && !sass_is_clock_read(&in)
                            : lat_is_timed(sass_mnemonic(&in, mn), k->e->sass) &&
                                  (!k->variant || sass_field(&in, SASS_OPCODE_BASE) == k->variant) &&
                                  !(k->stream &&
                                    counter_register(ck->text, &r[q], sass_field(&in, SASS_RD)));
            if (pick)
                rc = add_target(k, i, err, errlen);
        }
    }
    if (rc == 0 && k->ntarget == 0) {
        snprintf(err, errlen, "nothing to edit in the %s kernel", k->name);
        rc = -1;
    }
    cubin_free(&c);
    return rc;
}

/* The value the compiler wrote in field f on most targets. */
static int compiler_value(const struct kernel *k, enum sass_field f)
{
    int count[64] = {0}, best = 0;
    size_t off, tsize;
    char err[128];
    if (patch_find_text(k->m.cubin, k->m.cubin_size, k->name, &off, &tsize, err, sizeof err) < 0)
        return -1;
    for (size_t t = 0; t < k->ntarget; t++) {
        struct sass_insn in =
            sass_decode((const uint8_t *)k->m.cubin + off, k->target[t] * SASS_INSN_BYTES);
        count[sass_field(&in, f) & 63]++;
    }
    for (int v = 1; v < 64; v++)
        best = count[v] > count[best] ? v : best;
    return best;
}

/* Edits setting field f to value on every target (room for MAX_TARGETS). */
static size_t edits_for(const struct kernel *k, enum sass_field f, unsigned value,
                        struct patch_edit *e)
{
    for (size_t t = 0; t < k->ntarget; t++)
        e[t] = (struct patch_edit){k->target[t], f, value};
    return k->ntarget;
}

static int build(struct run *R, struct kernel *k, const struct lat_entry *e, int stream,
                 char *err, size_t errlen)
{
    char name[64];
    memset(k, 0, sizeof *k);
    k->e = e;
    k->stream = stream;
    k->name = stream ? "tput" : "lat";
    char *ptx = stream ? lat_ptx_throughput(e, R->g.info.cc_major, R->g.info.cc_minor)
                       : lat_ptx_latency(e, R->g.info.cc_major, R->g.info.cc_minor);
    snprintf(name, sizeof name, "control_%s_%s", e->name, k->name);
    if (gpu_module_build_generated(&R->g, ptx, name, &k->m, err, errlen) < 0)
        return -1;
    json_t *chk = stream ? lat_check_throughput(e, k->m.cubin, k->m.cubin_size)
                         : lat_check_latency(e, k->m.cubin, k->m.cubin_size);
    int ok = json_is_true(json_object_get(chk, "verified"));
    json_decref(chk);
    if (!ok) {
        snprintf(err, errlen, "the compiled %s kernel is not what the probe times (the latency "
                 "probe's check refused it)", k->name);
        return -1;
    }
    return 0;
}

static void release(struct run *R, struct kernel *k)
{
    if (k->m.cubin || k->m.mod)
        gpu_module_free(&R->g, &k->m);
    memset(k, 0, sizeof *k);
}

/* ---- the sweep ---------------------------------------------------------------------- */

static json_t *outcome_json(const struct outcome *o)
{
    return spread_json(o->v, (size_t)o->n);
}

/* Stall and yield set on every target of k. */
static int measure_stall(struct run *R, struct kernel *k, int stall, int yield, unsigned threads,
                         struct outcome *o, char *err, size_t errlen)
{
    struct patch_edit e[2 * MAX_TARGETS];
    size_t n = edits_for(k, SASS_STALL, (unsigned)stall, e);
    n += edits_for(k, SASS_YIELD, (unsigned)yield, e + n);
    return measure(R, k, e, n, threads, 0, o, err, errlen);
}

/* The reference answers must be taken again before each kernel's runs:
 * R->want holds one kernel's answer at a time. */
static int reference(struct run *R, struct kernel *k, unsigned threads, struct outcome *o,
                     char *err, size_t errlen)
{
    return measure(R, k, NULL, 0, threads, 1, o, err, errlen);
}

/* One kernel's sweep right after its own reference run (R->want holds one
 * answer at a time): the reference outcome in *ref, each (stall, yield)
 * as {"stall", "yield", key: cycles, "correct"} appended to pts in
 * stall-major order. */
static int sweep(struct run *R, struct kernel *k, unsigned threads, const char *key,
                 struct outcome *ref, json_t *pts, char *err, size_t errlen)
{
    struct outcome o;
    if (reference(R, k, threads, ref, err, errlen) < 0)
        return -1;
    for (int s = 0; s < CC_STALLS; s++)
        for (int y = 0; y <= 1; y++) {
            if (measure_stall(R, k, s, y, threads, &o, err, errlen) < 0)
                return -1;
            json_array_append_new(pts, json_pack("{s:i, s:i, s:o, s:b}", "stall", s, "yield", y,
                                                 key, outcome_json(&o), "correct", o.correct));
        }
    return 0;
}

/* The chain's and the stream's points of one (stall, yield) as one point. */
static json_t *points_of(const json_t *chain, const json_t *stream)
{
    json_t *points = json_array();
    for (size_t i = 0; i < json_array_size(chain); i++) {
        json_t *c = json_array_get(chain, i), *s = json_array_get(stream, i);
        json_array_append_new(points,
                              json_pack("{s:O, s:O, s:O, s:O, s:O, s:O}", "stall",
                                        json_object_get(c, "stall"), "yield",
                                        json_object_get(c, "yield"), "chain_cycles",
                                        json_object_get(c, "cycles"), "chain_correct",
                                        json_object_get(c, "correct"), "stream_cycles",
                                        json_object_get(s, "cycles"), "stream_correct",
                                        json_object_get(s, "correct")));
    }
    return points;
}

/* FFMA's extra experiments, on its built kernels: reuse set on all three
 * sources of the chain (the first is the previous result) and cleared on
 * the stream; the stream with two warps per scheduler at every stall and
 * yield (what yield changes when there is another warp to switch to). */
static void ffma_experiments(struct run *R, struct kernel *chain, struct kernel *stream,
                             json_t *experiments)
{
    char err[512] = "";
    struct patch_edit ed[MAX_TARGETS];
    struct outcome a, b;
    json_t *reuse = NULL, *two = json_array();
    if (reference(R, chain, 32, &a, err, sizeof err) == 0 &&
        measure(R, chain, ed, edits_for(chain, SASS_REUSE, 7, ed), 32, 0, &a, err,
                sizeof err) == 0 &&
        reference(R, stream, STREAM_THREADS, &b, err, sizeof err) == 0) {
        json_t *compiled = outcome_json(&b);
        if (measure(R, stream, ed, edits_for(stream, SASS_REUSE, 0, ed), STREAM_THREADS, 0, &b,
                    err, sizeof err) == 0)
            reuse = json_pack("{s:{s:o, s:b}, s:o, s:o, s:b, s:i}", "chain_reuse_all", "cycles",
                              outcome_json(&a), "correct", a.correct, "stream_compiled",
                              compiled, "stream_no_reuse", outcome_json(&b),
                              "stream_no_reuse_correct", b.correct, "compiler_reuse_on_stream",
                              compiler_value(stream, SASS_REUSE));
        else
            json_decref(compiled);
    }
    json_object_set_new(experiments, "reuse", reuse ? reuse : json_pack("{s:s}", "error", err));
    int ok = sweep(R, stream, TWO_WARP_THREADS, "cycles_per_warp_instruction", &b, two, err,
                   sizeof err) == 0;
    json_object_set_new(experiments, "yield_two_warps",
                        ok ? two : (json_decref(two), json_pack("{s:s}", "error", err)));
}

/* One form of a two-form instruction timed alone: every timed instruction
 * of the stream kernel rewritten to it, at each stall from 1 up with the
 * compiler's yield, with one warp (the issue of one warp) and with two per
 * scheduler (what the form's pipe accepts), each against its unedited
 * answer. */
static json_t *form_alone(struct run *R, struct kernel *stream, const struct variant *v)
{
    static const unsigned threads[2] = {STREAM_THREADS, TWO_WARP_THREADS};
    static const char *const keys[2] = {"stream", "two_warps"};
    char err[512] = "";
    struct patch_edit e[3 * MAX_TARGETS];
    struct outcome o;
    int yield = compiler_value(stream, SASS_YIELD);
    stream->variant = 0;
    if (find_targets(stream, 0, err, sizeof err) < 0)
        return json_pack("{s:s}", "error", err);
    json_t *res = json_pack("{s:s, s:I}", "form", v->label, "edited_instructions", (json_int_t)stream->ntarget);
    for (int t = 0; t < 2; t++) {
        json_t *pts = json_array();
        int rc = reference(R, stream, threads[t], &o, err, sizeof err);
        for (int s = 1; rc == 0 && s < CC_STALLS; s++) {
            size_t n = edits_for(stream, SASS_OPCODE_BASE, v->base, e);
            n += edits_for(stream, SASS_STALL, (unsigned)s, e + n);
            n += edits_for(stream, SASS_YIELD, (unsigned)yield, e + n);
            rc = measure(R, stream, e, n, threads[t], 0, &o, err, sizeof err);
            if (rc == 0)
                json_array_append_new(pts, json_pack("{s:i, s:o, s:b}", "stall", s, "cycles", outcome_json(&o),
                                                     "correct", o.correct));
        }
        json_object_set_new(res, keys[t], rc == 0 ? pts : (json_decref(pts), json_pack("{s:s}", "error", err)));
    }
    return res;
}

/* One instruction (or one form of it, v): build and check both kernels,
 * sweep each, and read the sweep (cc_infer_instruction); with experiments,
 * FFMA's extra runs; for a form, that form timed alone too. */
static json_t *instruction(struct run *R, const struct lat_entry *e, const struct variant *v,
                           json_t *experiments)
{
    char err[512] = "", name[64];
    struct kernel chain, stream;
    struct outcome ref_chain, ref_stream;
    snprintf(name, sizeof name, "%s%s%s", e->name, v ? ":" : "", v ? v->label : "");
    json_t *o = json_pack("{s:s, s:s}", "name", name, "sass", v ? v->label : e->sass);
    json_t *chain_pts = json_array(), *stream_pts = json_array();
    memset(&chain, 0, sizeof chain);
    memset(&stream, 0, sizeof stream);
    int rc = build(R, &chain, e, 0, err, sizeof err) == 0 &&
                     build(R, &stream, e, 1, err, sizeof err) == 0 ? 0 : -1;
    chain.variant = stream.variant = v ? v->base : 0;
    if (rc == 0 && (find_targets(&chain, 0, err, sizeof err) < 0 || find_targets(&stream, 0, err, sizeof err) < 0))
        rc = -1;
    upload_inputs(R, e, err, sizeof err, &rc);
    if (rc == 0)
        rc = sweep(R, &chain, 32, "cycles", &ref_chain, chain_pts, err, sizeof err);
    if (rc == 0)
        rc = sweep(R, &stream, STREAM_THREADS, "cycles", &ref_stream, stream_pts, err,
                   sizeof err);
    if (rc == 0) {
        json_object_set_new(o, "compiler_stall", json_integer(compiler_value(&chain, SASS_STALL)));
        json_object_set_new(o, "compiler_yield", json_integer(compiler_value(&chain, SASS_YIELD)));
        json_object_set_new(o, "chain_latency_cycles", outcome_json(&ref_chain));
        json_object_set_new(o, "stream_cycles_compiled", outcome_json(&ref_stream));
        json_object_set_new(o, "edited_instructions",
                            json_pack("{s:I, s:I}", "chain", (json_int_t)chain.ntarget, "stream",
                                      (json_int_t)stream.ntarget));
        json_object_set_new(o, "sweep", points_of(chain_pts, stream_pts));
        cc_infer_instruction(o);
        if (strcmp(e->name, "ffma") == 0 && experiments)
            ffma_experiments(R, &chain, &stream, experiments);
        if (v) {
            json_object_set_new(o, "form_of", json_string(e->name));
            json_object_set_new(o, "opcode_base", json_integer(v->base));
            json_object_set_new(o, "alone", form_alone(R, &stream, v));
        }
    } else {
        json_object_set_new(o, "error", json_string(err[0] ? err : "failed"));
    }
    json_decref(chain_pts);
    json_decref(stream_pts);
    release(R, &chain);
    release(R, &stream);
    return o;
}

/* A variable-latency chain with the wait masks of its chain regions cleared. */
static json_t *wait_test(struct run *R, const struct lat_entry *e)
{
    char err[512] = "";
    struct kernel k;
    struct outcome with, cleared;
    struct patch_edit ed[MAX_TARGETS];
    json_t *o = json_pack("{s:s, s:s}", "name", e->name, "sass", e->sass);
    int rc = build(R, &k, e, 0, err, sizeof err) == 0 && find_targets(&k, 1, err, sizeof err) == 0
                 ? 0
                 : -1;
    upload_inputs(R, e, err, sizeof err, &rc);
    if (rc == 0)
        rc = reference(R, &k, 32, &with, err, sizeof err);
    if (rc == 0)
        rc = measure(R, &k, ed, edits_for(&k, SASS_WAIT, 0, ed), 32, 0, &cleared, err,
                     sizeof err);
    if (rc == 0) {
        json_object_set_new(o, "instructions_cleared", json_integer((json_int_t)k.ntarget));
        json_object_set_new(o, "cycles_with_wait", outcome_json(&with));
        /* a late result may land in a register the clock read wrote after
         * it (nothing waits for it any more): then the stamps are not times */
        int sane = 1;
        for (int i = 0; i < cleared.n; i++)
            sane = sane && cleared.v[i] > 0 && cleared.v[i] < MAX_STEP_CYCLES;
        json_object_set_new(o, "cycles_cleared", sane ? outcome_json(&cleared) : json_null());
        if (!sane)
            json_object_set_new(o, "timing_note",
                                json_string("the cleared run's clock stamps are not times: a "
                                            "result nothing waited for overwrote a register of "
                                            "the clock reads"));
        json_object_set_new(o, "correct_with_wait", json_true());
        json_object_set_new(o, "correct_cleared", json_boolean(cleared.correct));
    } else {
        json_object_set_new(o, "error", json_string(err[0] ? err : "failed"));
    }
    release(R, &k);
    return o;
}

/* ---- the probe ------------------------------------------------------------------------ */

static int setup(struct run *R, const char *device, char *err, size_t errlen)
{
    if (gpu_open(&R->g, device, err, errlen) < 0)
        return -1;
    R->opened = 1;
    R->got = malloc(GLOB_BYTES);
    R->want = malloc(GLOB_BYTES);
    if (!R->got || !R->want) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    const struct cuda_api *cu = R->g.cu;
    return gpu_check(&R->g, cu->cuMemAlloc(&R->in, LAT_INPUT_BYTES), "cuMemAlloc", err, errlen) < 0 ||
                   gpu_check(&R->g, cu->cuMemAlloc(&R->out, OUT_BYTES), "cuMemAlloc", err, errlen) < 0 ||
                   gpu_check(&R->g, cu->cuMemAlloc(&R->glob, GLOB_BYTES), "cuMemAlloc", err, errlen) < 0
               ? -1
               : 0;
}

static void teardown(struct run *R)
{
    if (R->opened) {
        CUdeviceptr *bufs[] = {&R->in, &R->out, &R->glob};
        gpu_free_buffers(&R->g, bufs, sizeof bufs / sizeof bufs[0]);
        gpu_close(&R->g);
    }
    free(R->copy);
    free(R->got);
    free(R->want);
}

static json_t *clock_json(int ok, double mhz, const char *why)
{
    return ok ? json_real(mhz) : json_pack("{s:s}", "error", why);
}

json_t *control_codes_probe_run(const char *device, int repeats, char *err, size_t errlen)
{
    struct run R;
    double t0 = mono_s(), before = 0, after = 0;
    char why_before[256] = "", why_after[256] = "";
    memset(&R, 0, sizeof R);
    if (repeats < 1 || repeats > PROBE_MAX_REPEATS) {
        snprintf(err, errlen, "repeats must be from 1 to %d", PROBE_MAX_REPEATS);
        return NULL;
    }
    R.repeats = repeats;
    if (setup(&R, device, err, errlen) < 0) {
        teardown(&R);
        return NULL;
    }
    int ok_before = gpu_clock_mhz(&R.g, &before, why_before, sizeof why_before) == 0;
    double t1 = mono_s();
    json_t *instrs = json_array(), *experiments = json_object(), *waits = json_array();
    size_t failed = 0;
    for (size_t i = 0; i < sizeof swept / sizeof swept[0]; i++) {
        json_t *o = instruction(&R, lat_find(swept[i]), NULL, experiments);
        failed += json_object_get(o, "error") != NULL;
        json_array_append_new(instrs, o);
    }
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) /* each form alone */
        json_array_append_new(instrs, instruction(&R, lat_find(variants[i].entry), &variants[i], NULL));
    for (size_t i = 0; i < sizeof waited / sizeof waited[0]; i++)
        json_array_append_new(waits, wait_test(&R, lat_find(waited[i])));
    json_object_set_new(experiments, "wait_mask", waits);
    json_object_set_new(experiments, "scheduler", issue_order_run(&R.g, repeats));
    double t_measure = mono_s() - t1;
    int ok_after = gpu_clock_mhz(&R.g, &after, why_after, sizeof why_after) == 0;
    json_t *res = NULL;
    if (failed == sizeof swept / sizeof swept[0]) {
        snprintf(err, errlen, "no instruction could be swept: %s",
                 json_string_value(json_object_get(json_array_get(instrs, 0), "error")));
    } else {
        res = json_pack(
            "{s:s, s:o, s:s, s:{s:o, s:o}, s:i, s:o, s:o, s:[{s:s, s:s}], s:{s:i, s:i}}",
            "probe", "control-codes", "device", gpu_json(&R.g), "driver_version",
            R.g.driver_version, "clock_mhz", "before", clock_json(ok_before, before, why_before),
            "after", clock_json(ok_after, after, why_after), "repeats", repeats, "instructions",
            json_incref(instrs), "experiments", json_incref(experiments), "not_swept", "name",
            "lop3", "reason",
            "one bitwise function of x applied repeatedly has period at most 2, so a chain that "
            "read a stale value can end on the right answer: correctness cannot tell",
            "runs", "total", R.runs, "verified", R.verified);
        json_object_set_new(res, "meanings", cc_meanings(instrs, experiments));
        json_object_set_new(res, "method",
                            json_string("stall (bits 105-108) and yield (bit 109) rewritten on "
                                        "every timed instruction of the latency probe's chain "
                                        "kernel (one warp) and throughput kernel (one warp per "
                                        "scheduler); each run's stored values compared byte for "
                                        "byte with the unedited run's; cycles per instruction "
                                        "from clock64"));
        json_object_set_new(res, "seconds", json_pack("{s:f, s:f}", "measuring", t_measure,
                                                      "total", mono_s() - t0));
        json_object_set_new(res, "wall_s", json_real(mono_s() - t0));
    }
    json_decref(instrs);
    json_decref(experiments);
    teardown(&R);
    return res;
}
