/*
 * Running the register-bank probe on a GPU (see banks.h for the method).
 *
 * DESIGN
 * The kernel is compiled once; its layout (the timed FFMAs, the registers
 * safe to write) is read from its own cubin before anything is timed. One
 * measurement = copy the cubin, rewrite the timed FFMAs for the test,
 * re-read the copy (banks_verify: exactly the intended fields changed, or
 * no number), load it, launch it twice and keep the second launch (the
 * first pays instruction-cache and module-load misses), and turn each
 * block's clock64 stamps into warp-FFMAs per SM clock (median over blocks).
 *
 * Order of the run:
 *   1. reference: single-source FFMAs (Ra = r, Rb = Rc = RZ) on several
 *      registers; one register read cannot conflict, so their median rate
 *      is the conflict-free rate the 99.5% rule of the Kepler
 *      microbenchmark method compares with;
 *   2. classes: registers R0 up to the compiler's ceiling (compiler_ceiling:
 *      the highest register the JIT hands out to a 255-register kernel),
 *      in order, each timed as a two-source
 *      FFMA with one representative of each class found so far; the first
 *      conflict (rate < 99.5% of the reference) puts it in that class, no
 *      conflict with any makes it a new class's representative;
 *   3. confirmation: random pairs (fixed seed) not tested in step 2, whose
 *      outcome the classes predict; every disagreement is reported;
 *   4. costs: two same-bank sources in each pair of slots, three sources
 *      in one bank, two in one bank and one in another, one per bank (when
 *      there are three banks or more), and the same-bank tests again with
 *      the reuse flags of the conflicting slots set;
 *   5. reuse cache: the patterns of banks_reuse.h (each question's test
 *      with its conflict-free and flags-cleared controls) on registers
 *      picked from the classes; the analysis compares the conflicts per
 *      period with each candidate cache design's and gives the designs
 *      that fit and the per-question rules ("reuse_cache").
 * Every measurement is counted in "runs".
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probes/banks.h"
#include "probes/banks_reuse.h"
#include "probes/gpu/clock.h"
#include "probes/gpu/cubin.h"
#include "probes/gpu/stats.h"
#include "util/clock.h"

#define NREGS (BANKS_MAX_REG + 1)
#define THRESHOLD 0.995          /* the Kepler method's rule */
#define ITERS 2000               /* loop trips: about 10^6 SM cycles a launch */
#define REF_REGS 8
#define SAMPLE_SEED 0x9e3779b97f4a7c15ULL

struct run {
    struct banks_session S;      /* the GPU, the kernel as compiled, the buffers */
    struct banks_layout L;
    int runs, verified, repeats;
    unsigned top;                /* the highest register tested: compiler_ceiling */
    struct patch_edit edits[BANKS_EDITS_PER_FFMA * BANKS_TIMED];
    double ref;                  /* conflict-free warp-FFMAs per SM clock */
};


/* Rate of a sequence of n steps (n 0: the kernel as compiled, unedited):
 * warp-FFMAs per SM clock; *mhz the SM clock seen. */
static int measure_seq(struct run *R, const struct banks_step *seq, size_t n, double *rate,
                       double *mhz, char *err, size_t errlen)
{
    size_t ne = n ? banks_edits_seq(&R->L, seq, n, R->edits) : 0;
    if (n && ne == 0) {
        snprintf(err, errlen, "no legal edit for R%u R%u R%u -> R%u", seq[0].t.src[0],
                 seq[0].t.src[1], seq[0].t.src[2], seq[0].rd);
        return -1;
    }
    size_t size = R->S.base.cubin_size;
    memcpy(R->S.copy, R->S.base.cubin, size);
    if (n && (patch_apply(R->S.copy, size, BANKS_KERNEL, R->edits, ne, err, errlen) < 0 ||
              banks_verify_seq(R->S.base.cubin, R->S.copy, size, &R->L, seq, n, err, errlen) < 0))
        return -1;
    R->verified += n != 0;
    struct gpu_module m;
    CUfunction fn;
    unsigned iters = ITERS;
    void *params[] = {&R->S.out, &R->S.in, &R->S.sink, &iters};
    struct patch_launch l = {R->S.blocks, BANKS_THREADS, 0, params, 2};
    struct patch_timing tm;
    int rc = gpu_module_load_image(&R->S.g, R->S.copy, size, &m, err, errlen);
    if (rc < 0)
        return -1;
    rc = gpu_module_function(&R->S.g, &m, BANKS_KERNEL, &fn, err, errlen);
    if (rc == 0)
        rc = patch_time_stamped(&R->S.g, fn, &l, R->S.out, &tm, err, errlen);
    if (rc < 0 && n) {       /* say which test */
        size_t used = strlen(err);
        snprintf(err + used, errlen - used, " (first step: sources R%u R%u R%u, reuse %u)",
                 seq[0].t.src[0], seq[0].t.src[1], seq[0].t.src[2], seq[0].t.reuse);
    }
    gpu_module_free(&R->S.g, &m);
    if (rc < 0)
        return -1;
    R->runs++;
    *mhz = tm.mhz;
    *rate = tm.cycles > 0 ? (double)(BANKS_THREADS / 32) * BANKS_TIMED * ITERS / tm.cycles : 0;
    return 0;
}

/* One test on every timed FFMA (t NULL: the kernel unedited). */
static int measure(struct run *R, const struct banks_test *t, double *rate, double *mhz,
                   char *err, size_t errlen)
{
    struct banks_step st = {{{0, 0, 0}, 0}, 0};
    if (t) {
        st.t = *t;
        if (banks_pick_dest(&R->L, t, &st.rd) < 0) {
            snprintf(err, errlen, "no legal edit for R%u R%u R%u", t->src[0], t->src[1],
                     t->src[2]);
            return -1;
        }
    }
    return measure_seq(R, &st, t ? 1 : 0, rate, mhz, err, errlen);
}

static struct banks_test pair(unsigned a, unsigned b)
{
    return (struct banks_test){{a, b, SASS_RZ}, 0};
}

/* One test as JSON: operands, rate, ratio to the reference. */
static json_t *test_json(const struct run *R, const struct banks_test *t, double rate)
{
    json_t *src = json_array();
    for (int s = 0; s < 3; s++)
        json_array_append_new(src, t->src[s] == SASS_RZ ? json_string("RZ")
                                                        : json_integer(t->src[s]));
    return json_pack("{s:o, s:i, s:f, s:f, s:f}", "sources", src, "reuse", t->reuse,
                     "ffma_per_sm_clock", rate, "ratio", rate / R->ref, "sm_cycles_per_warp_ffma",
                     rate > 0 ? 1.0 / rate : 0.0);
}

static int conflict(const struct run *R, double rate)
{
    return rate < THRESHOLD * R->ref;
}

static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

struct classes {
    int of[NREGS];               /* register -> class */
    unsigned rep[NREGS];         /* class -> representative */
    int n;
    unsigned char tested[NREGS][NREGS];
    double max_conflict, min_free;   /* ratios nearest the threshold on each side */
    double same[NREGS * 2], diff[NREGS * 2];
    size_t nsame, ndiff;
};

static void note(struct classes *C, const struct run *R, unsigned a, unsigned b, double rate)
{
    double ratio = rate / R->ref;
    C->tested[a][b] = C->tested[b][a] = 1;
    if (conflict(R, rate)) {
        C->max_conflict = fmax(C->max_conflict, ratio);
        if (C->nsame < NREGS * 2)
            C->same[C->nsame++] = ratio;
    } else {
        C->min_free = fmin(C->min_free, ratio);
        if (C->ndiff < NREGS * 2)
            C->diff[C->ndiff++] = ratio;
    }
}

static int build_classes(struct run *R, struct classes *C, char *err, size_t errlen)
{
    double mhz, rate;
    C->n = 0;
    for (unsigned r = 0; r < NREGS; r++)
        C->of[r] = -1;
    for (unsigned r = 0; r <= R->top; r++) {
        for (int k = 0; k < C->n && C->of[r] < 0; k++) {
            struct banks_test t = pair(r, C->rep[k]);
            if (measure(R, &t, &rate, &mhz, err, errlen) < 0)
                return -1;
            note(C, R, r, C->rep[k], rate);
            if (conflict(R, rate))
                C->of[r] = k;
        }
        if (C->of[r] < 0) {
            C->rep[C->n] = r;
            C->of[r] = C->n++;
        }
    }
    return 0;
}

/* Random untested pairs: does the outcome match the classes? */
static json_t *confirm(struct run *R, struct classes *C, int sample, char *err, size_t errlen)
{
    uint64_t s = SAMPLE_SEED;
    int agree = 0, done = 0;
    double rate, mhz;
    json_t *bad = json_array();
    for (int tries = 0; done < sample && tries < sample * 100; tries++) {
        unsigned a = (unsigned)(next_rand(&s) % (R->top + 1)),
                 b = (unsigned)(next_rand(&s) % (R->top + 1));
        if (a == b || C->tested[a][b])
            continue;
        struct banks_test t = pair(a, b);
        if (measure(R, &t, &rate, &mhz, err, errlen) < 0) {
            json_decref(bad);
            return NULL;
        }
        note(C, R, a, b, rate);
        done++;
        if (conflict(R, rate) == (C->of[a] == C->of[b]))
            agree++;
        else
            json_array_append_new(bad, test_json(R, &t, rate));
    }
    return json_pack("{s:i, s:i, s:s, s:o, s:s}", "pairs", done, "agree", agree, "seed",
                     "0x9e3779b97f4a7c15", "disagreements", bad, "generator",
                     "xorshift64 (13, 7, 17)");
}

/* Costs and the reuse experiment, each test one measurement. */
static json_t *costs(struct run *R, const struct classes *C, char *err, size_t errlen)
{
    unsigned m0[3], m1 = SASS_RZ, m2 = SASS_RZ;
    int k0 = 0;
    size_t n0 = 0;
    for (unsigned r = 0; r < NREGS && n0 < 3; r++)
        if (C->of[r] == k0)
            m0[n0++] = r;
    if (n0 < 3) {
        snprintf(err, errlen, "class 0 has fewer than 3 registers");
        return NULL;
    }
    if (C->n > 1)
        m1 = C->rep[1];
    if (C->n > 2)
        m2 = C->rep[2];
    struct {
        const char *name;
        struct banks_test t;
    } tests[] = {
        {"two_same_bank_a_b", {{m0[0], m0[1], SASS_RZ}, 0}},
        {"two_same_bank_a_c", {{m0[0], SASS_RZ, m0[1]}, 0}},
        {"two_same_bank_b_c", {{SASS_RZ, m0[0], m0[1]}, 0}},
        {"same_register_a_b", {{m0[0], m0[0], SASS_RZ}, 0}},
        {"three_same_bank", {{m0[0], m0[1], m0[2]}, 0}},
        {"three_two_same_bank", {{m0[0], m0[1], m1}, 0}},
        {"three_different_banks", {{m0[0], m1, m2}, 0}},
        {"reuse_two_same_bank_a_b", {{m0[0], m0[1], SASS_RZ}, 3}},
        {"reuse_two_same_bank_a_only", {{m0[0], m0[1], SASS_RZ}, 1}},
        {"reuse_three_same_bank", {{m0[0], m0[1], m0[2]}, 7}},
        {"reuse_three_same_bank_a_b", {{m0[0], m0[1], m0[2]}, 3}},
    };
    json_t *o = json_object();
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        double rate, mhz;
        if (tests[i].t.src[1] == SASS_RZ && tests[i].t.src[2] == SASS_RZ)
            continue;
        if ((tests[i].t.src[2] == SASS_RZ && strstr(tests[i].name, "three")) ||
            (tests[i].t.src[1] == SASS_RZ && strstr(tests[i].name, "three")))
            continue;        /* fewer banks than the test needs */
        double rates[PROBE_MAX_REPEATS], ratios[PROBE_MAX_REPEATS];
        for (int k = 0; k < R->repeats; k++) {
            if (measure(R, &tests[i].t, &rates[k], &mhz, err, errlen) < 0) {
                json_decref(o);
                return NULL;
            }
            ratios[k] = rates[k] / R->ref;
        }
        rate = spread_of(rates, (size_t)R->repeats).median;
        json_t *j = test_json(R, &tests[i].t, rate);
        json_object_set_new(j, "ffma_per_sm_clock", spread_json(rates, (size_t)R->repeats));
        json_object_set_new(j, "ratio", spread_json(ratios, (size_t)R->repeats));
        json_object_set_new(j, "conflict", json_boolean(conflict(R, rate)));
        json_object_set_new(o, tests[i].name, j);
    }
    return o;
}

/* The reuse cache (banks_reuse.h): every question's test, free and cleared
 * patterns, each measured R->repeats times, on registers chosen from the
 * classes just found; the analysis turns the medians into rules. A map
 * that does not allow the patterns (one bank) is a result, not an error. */
static json_t *reuse_cache(struct run *R, const struct classes *C, char *err, size_t errlen)
{
    struct reuse_regs rr;
    if (reuse_pick_regs(C->of, R->top, R->L.dest, R->L.ndest, &rr) < 0)
        return json_pack("{s:s}", "not_run",
                         "the bank map has no timed-FFMA destination with three bank-mates "
                         "and another bank beside it");
    double ratio[REUSE_QUESTIONS][REUSE_VARIANTS], range[REUSE_QUESTIONS][REUSE_VARIANTS], mhz;
    json_t *patterns = json_object();
    int r0 = R->runs;
    for (int q = 0; q < REUSE_QUESTIONS; q++) {
        json_t *pj = json_object();
        for (int v = 0; v < REUSE_VARIANTS; v++) {
            static const char *const vname[] = {"test", "free", "cleared"};
            struct banks_step seq[REUSE_PERIOD];
            double rates[PROBE_MAX_REPEATS], ratios[PROBE_MAX_REPEATS];
            reuse_pattern(&rr, (enum reuse_question)q, (enum reuse_variant)v, seq);
            for (int k = 0; k < R->repeats; k++) {
                if (measure_seq(R, seq, REUSE_PERIOD, &rates[k], &mhz, err, errlen) < 0) {
                    json_decref(patterns);
                    json_decref(pj);
                    return NULL;
                }
                ratios[k] = rates[k] / R->ref;
            }
            /* the JSON first: spread_of sorts the runs */
            json_object_set_new(pj, vname[v],
                                json_pack("{s:o, s:o}", "steps", reuse_pattern_json(seq),
                                          "ratio", spread_json(ratios, (size_t)R->repeats)));
            struct spread sp = spread_of(ratios, (size_t)R->repeats);
            ratio[q][v] = sp.median;
            range[q][v] = sp.max - sp.min;
        }
        json_object_set_new(patterns, reuse_question_name((enum reuse_question)q), pj);
    }
    json_t *res = reuse_analyse(ratio, range);
    json_object_set_new(res, "registers",
                        json_pack("{s:i, s:i, s:i, s:i, s:i, s:i}", "a", rr.a, "a2", rr.a2, "c",
                                  rr.c, "f", rr.f, "o", rr.o, "d", rr.d));
    json_object_set_new(res, "patterns", patterns);
    json_object_set_new(res, "runs", json_integer(R->runs - r0));
    /* Other instructions of the loop (its counter, compare, branch) between
     * two FFMAs of one period could read slot a between the flag and the
     * probe; in the compiled kernels seen so far they all fall between
     * periods. Counted here so a JIT that places them otherwise shows. */
    int inside = 0;
    for (size_t i = 1; i < R->L.nffma; i++)
        if (i % REUSE_PERIOD != 0)
            inside += (int)(R->L.ffma[i] - R->L.ffma[i - 1] - 1);
    json_object_set_new(res, "other_instructions_inside_periods", json_integer(inside));
    json_object_set_new(res, "method",
                        json_string("8-FFMA patterns repeated through the timed loop, "
                                    "every FFMA reading a never-flagged register of bank A "
                                    "beside at most one other of bank A, so the cycles per "
                                    "period are 8 + the bank-A reads the cache did not serve; "
                                    "each question's test beside a conflict-free control "
                                    "(free) and a flags-cleared control (cleared), which "
                                    "calibrate one conflict's cost; the measured conflicts "
                                    "per period compared with what each candidate cache "
                                    "design predicts (probes/banks_reuse.h)"));
    return res;
}

/* The highest register the driver's compiler hands out to a kernel of 255
 * registers: the probe's kernel with one more live value than fits is
 * compiled by the same JIT and the highest destination it names is taken
 * (R252 on an H200 with driver 580.159, above the R251 the probe's own
 * FFMAs reach). Above it lie R253/R254, which sm_90 refuses as register
 * numbers (banks_untested.c has the evidence), so the probe tests up to
 * here and no further. */
static int compiler_ceiling(struct run *R, char *err, size_t errlen)
{
    struct banks_shape sh = banks_probe_shape;
    struct gpu_module m;
    struct cubin c;
    sh.values++;
    sh.regs = 0;
    if (gpu_module_build_generated(&R->S.g,
                                   banks_ptx_shape(&sh, R->S.g.info.cc_major,
                                                   R->S.g.info.cc_minor),
                                   "banks_ceiling", &m, err, errlen) < 0)
        return -1;
    R->top = R->L.max_reg;
    int rc = cubin_parse(&c, m.cubin, m.cubin_size, err, errlen);
    const struct cubin_kernel *k = rc == 0 ? cubin_kernel_find(&c, BANKS_KERNEL) : NULL;
    if (rc == 0 && (!k || k->regs != 255)) {
        snprintf(err, errlen, "the ceiling kernel does not have 255 registers");
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < k->text_size / SASS_INSN_BYTES; i++) {
        struct sass_insn in = sass_decode(k->text, i * SASS_INSN_BYTES);
        if (banks_writes_gpr(&in) && sass_field(&in, SASS_RD) > R->top &&
            sass_field(&in, SASS_RD) <= BANKS_MAX_REG)
            R->top = sass_field(&in, SASS_RD);
    }
    cubin_free(&c);
    gpu_module_free(&R->S.g, &m);
    return rc;
}

/* The session, the kernel's layout and the compiler's ceiling; the
 * session is closed by the caller either way. */
static int setup(struct run *R, const char *device, char *err, size_t errlen)
{
    return banks_session_open(&R->S, device, &banks_probe_shape, err, errlen) < 0 ||
                   banks_layout(R->S.base.cubin, R->S.base.cubin_size, &R->L, err, errlen) < 0 ||
                   compiler_ceiling(R, err, errlen) < 0
               ? -1
               : 0;
}

static json_t *layout_json(const struct run *R)
{
    json_t *d = json_array();
    for (size_t i = 0; i < R->L.ndest; i++)
        json_array_append_new(d, json_integer(R->L.dest[i]));
    return json_pack("{s:i, s:i, s:i, s:i, s:i, s:o, s:i, s:i, s:i, s:i}", "registers", R->L.regs,
                     "highest_tested_register", (int)R->top, "highest_ffma_register",
                     (int)R->L.max_reg,
                     "timed_ffma", (int)R->L.nffma, "first_ffma_offset",
                     (int)(R->L.ffma[0] * SASS_INSN_BYTES), "destinations", d, "threads",
                     BANKS_THREADS, "blocks", (int)R->S.blocks, "iterations", ITERS,
                     "launches_per_run", 2);
}

json_t *banks_probe_run(const char *device, int sample, int repeats, char *err, size_t errlen)
{
    static struct classes C;     /* 64 KiB of tested-pair flags: not on the stack */
    struct run R;
    double t0 = mono_s(), before = 0, after = 0;
    memset(&R, 0, sizeof R);
    memset(&C, 0, sizeof C);
    C.max_conflict = 0;
    C.min_free = INFINITY;
    R.repeats = repeats;
    if (repeats < 1 || repeats > PROBE_MAX_REPEATS) {
        snprintf(err, errlen, "repeats must be from 1 to %d", PROBE_MAX_REPEATS);
        return NULL;
    }
    if (sample < 0 || sample > 10000) {
        snprintf(err, errlen, "sample must be from 0 to 10000");
        return NULL;
    }
    json_t *res = NULL, *refj = json_array(), *conf = NULL, *cost = NULL, *reuse = NULL;
    unsigned refregs[REF_REGS] = {0, 1, 2, 3, 128, 129, 0, 0};
    double ref[REF_REGS * PROBE_MAX_REPEATS], mhzs[REF_REGS * PROBE_MAX_REPEATS];
    int ok = setup(&R, device, err, errlen) == 0 && gpu_clock_mhz(&R.S.g, &before, err, errlen) == 0;
    refregs[6] = R.top - 1;
    refregs[7] = R.top;
    double t_setup = mono_s() - t0, t1 = mono_s();
    size_t nref = 0;
    for (int i = 0; ok && i < REF_REGS; i++) {
        struct banks_test t = {{refregs[i], SASS_RZ, SASS_RZ}, 0};
        for (int k = 0; ok && k < repeats; k++, nref++)
            ok = measure(&R, &t, &ref[nref], &mhzs[nref], err, errlen) == 0;
        if (ok)
            json_array_append_new(refj, json_pack("{s:i, s:o}", "register", refregs[i],
                                                  "ffma_per_sm_clock",
                                                  spread_json(ref + nref - repeats,
                                                              (size_t)repeats)));
    }
    json_t *ref_spread = NULL;
    if (ok) {
        ref_spread = spread_json(ref, nref);
        R.ref = spread_of(ref, nref).median;
        ok = R.ref > 0 || (snprintf(err, errlen, "the reference rate is 0"), 0);
    }
    int class_runs = 0;
    if (ok) {
        int r0 = R.runs;
        ok = build_classes(&R, &C, err, errlen) == 0;
        class_runs = R.runs - r0;
    }
    int conf_runs = R.runs;
    if (ok)
        ok = (conf = confirm(&R, &C, sample, err, errlen)) != NULL;
    conf_runs = R.runs - conf_runs;
    if (ok)
        ok = (cost = costs(&R, &C, err, errlen)) != NULL;
    int reuse_runs = R.runs;
    if (ok)
        ok = (reuse = reuse_cache(&R, &C, err, errlen)) != NULL;
    reuse_runs = R.runs - reuse_runs;
    double t_measure = mono_s() - t1;
    if (ok)
        ok = gpu_clock_mhz(&R.S.g, &after, err, errlen) == 0;
    if (ok) {
        json_t *map = json_array(), *classes = json_array();
        for (int k = 0; k < C.n; k++) {
            json_t *members = json_array();
            for (unsigned r = 0; r < NREGS; r++)
                if (C.of[r] == k)
                    json_array_append_new(members, json_integer(r));
            json_array_append_new(classes, members);
        }
        for (unsigned r = 0; r <= R.top; r++)
            json_array_append_new(map, json_integer(C.of[r]));
        res = json_pack("{s:s, s:o, s:s, s:f, s:i, s:o, s:o, s:o, s:o, s:o}", "probe", "banks",
                        "device", gpu_json(&R.S.g), "driver_version", R.S.g.driver_version,
                        "threshold", THRESHOLD, "bank_count", C.n, "map", map, "classes",
                        classes, "kernel", layout_json(&R), "confirmation", conf, "costs", cost);
        conf = cost = NULL;
        json_object_set_new(res, "reference",
                            json_pack("{s:o, s:s, s:O}", "ffma_per_sm_clock", ref_spread,
                                      "method",
                                      "median of single-source FFMA (Ra=r, Rb=Rc=RZ), each "
                                      "register measured `repeats` times",
                                      "registers", refj));
        ref_spread = NULL;
        json_object_set_new(res, "untested_registers", banks_untested_json(R.top, R.L.regs));
        json_object_set_new(res, "reuse_cache", reuse);
        reuse = NULL;
        json_object_set_new(res, "repeats", json_integer(repeats));
        json_object_set_new(res, "wall_s", json_real(mono_s() - t0));
        json_object_set_new(
            res, "pairs_during_class_building",
            json_pack("{s:i, s:o, s:o, s:f, s:f}", "runs", class_runs, "conflict_ratio",
                      C.nsame ? spread_json(C.same, C.nsame) : json_null(), "no_conflict_ratio",
                      C.ndiff ? spread_json(C.diff, C.ndiff) : json_null(),
                      "highest_conflict_ratio", C.max_conflict, "lowest_no_conflict_ratio",
                      isfinite(C.min_free) ? C.min_free : 0.0));
        json_object_set_new(
            res, "runs",
            json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i}", "total", R.runs, "reference",
                      (int)nref, "class_building", class_runs, "confirmation", conf_runs,
                      "costs", R.runs - (int)nref - class_runs - conf_runs - reuse_runs,
                      "reuse_cache", reuse_runs, "all_pairs_would_be",
                      (int)((R.top + 1) * R.top / 2)));
        json_object_set_new(res, "sass_check",
                            json_pack("{s:b, s:i, s:s}", "verified", R.verified == R.runs,
                                      "verified_runs", R.verified, "what",
                                      "every run's cubin re-read: each timed FFMA carries the "
                                      "tested Ra/Rb/Rc, reuse and a destination outside them; "
                                      "no other bit of the kernel changed"));
        json_object_set_new(res, "clock_mhz",
                            json_pack("{s:f, s:f, s:f}", "before", before, "after", after,
                                      "during_reference", mhzs[0]));
        json_object_set_new(res, "seconds",
                            json_pack("{s:f, s:f, s:f}", "setup", t_setup, "measuring", t_measure,
                                      "total", mono_s() - t0));
    }
    json_decref(refj);
    json_decref(ref_spread);
    json_decref(conf);
    json_decref(cost);
    json_decref(reuse);
    banks_session_close(&R.S);
    return res;
}

json_t *banks_probe_one(const char *device, const struct banks_test *t, char *err, size_t errlen)
{
    struct run R;
    double rate = 0, mhz = 0;
    memset(&R, 0, sizeof R);
    json_t *res = NULL;
    if (setup(&R, device, err, errlen) == 0 && measure(&R, t, &rate, &mhz, err, errlen) == 0) {
        R.ref = 1;           /* no reference here: ratio is the rate itself */
        res = t ? test_json(&R, t, rate) : json_pack("{s:f}", "ffma_per_sm_clock", rate);
        json_object_set_new(res, "clock_mhz", json_real(mhz));
        json_object_set_new(res, "kernel", layout_json(&R));
    }
    banks_session_close(&R.S);
    return res;
}
