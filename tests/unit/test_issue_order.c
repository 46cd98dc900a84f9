/*
 * The issue-order analysis (probes/issue_order_policy.c) on traces
 * simulated cycle by cycle from each scheduling policy:
 * - greedy-then-P after a stall and after a yield is recognised as P, and
 *   only P, where age and warp id order the warps differently;
 * - where they order them alike, youngest and highest... are reported
 *   together (the mask holds both);
 * - a policy drawn at random at each decision, a trace jittered by more
 *   than a segment and a scheduler that interleaves every cycle give
 *   "not determined";
 * - greediness without events is seen, and its absence too;
 * - traces of impossible sizes are skipped; the order is the simulated one;
 * - the kernel's PTX equals the committed fixture, and its cubin (ptxas 13.0)
 *   reads as 8 segments of 16 FFMAs between clock reads; every experiment's
 *   edits apply and verify, touch only the layout's instructions, and a
 *   segment holding anything but its FFMAs is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "probes/control_codes.h"
#include "probes/gpu/patch.h"
#include "probes/issue_order.h"
#include "tests/unit/support/tmpfile.h"

#define FIX "tests/fixtures/cubins/issue_order/"

#define G 16                         /* FFMAs per segment */
#define STALL 15

enum sim_event { EV_NONE, EV_STALL, EV_YIELD };
#define SIM_RANDOM IO_POLICIES       /* a policy drawn at each decision */
#define SIM_CYCLE (IO_POLICIES + 1)  /* no greed: a new warp every cycle */

struct sim {
    int policy;
    enum sim_event ev;
    size_t k, nseg;
    const unsigned *warpid;          /* by index; NULL: 4 * index */
    unsigned seed;
};

static unsigned rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 16) & 0x7fff;
}

/* The ready warp the policy picks (o: the last owner), or -1. */
static int pick(const struct io_trace *t, int policy, const int *ready, int o, unsigned *seed)
{
    int best = -1, n = 0, cands[IO_MAX_WARPS];
    for (int i = 0; i < (int)t->nwarps; i++)
        if (ready[i])
            cands[n++] = i;
    if (!n)
        return -1;
    if (policy == SIM_RANDOM)
        return cands[rnd(seed) % (unsigned)n];
    for (int k = 0; k < n; k++) {
        int c = cands[k], better = best < 0;
        if (best >= 0)
            switch (policy) {
            case IO_YOUNGEST: better = t->w[c].index > t->w[best].index; break;
            case IO_OLDEST: better = t->w[c].index < t->w[best].index; break;
            case IO_LOWEST_ID: better = t->w[c].warpid < t->w[best].warpid; break;
            default: { /* round robin, and the every-cycle scheduler */
                unsigned ow = o < 0 ? 0 : t->w[o].warpid;
                better = (t->w[c].warpid - ow - 1) % 256u < (t->w[best].warpid - ow - 1) % 256u;
            }
            }
        best = better ? c : best;
    }
    return best;
}

/* Runs the warps cycle by cycle: each segment is a start read, G FFMAs
 * and an end read, one instruction per cycle; the owner keeps issuing while
 * it is ready (greedy), except for SIM_CYCLE. */
static void simulate(const struct sim *s, struct io_trace *t)
{
    size_t seg[IO_MAX_WARPS] = {0}, pos[IO_MAX_WARPS] = {0};
    long ready_at[IO_MAX_WARPS] = {0};
    unsigned seed = s->seed;
    int owner = -1, last = -1;
    memset(t, 0, sizeof *t);
    t->nwarps = s->k;
    t->nseg = s->nseg;
    t->event_at_end = s->ev != EV_NONE;
    t->blocked = s->ev == EV_STALL ? STALL : 1;
    for (size_t i = 0; i < s->k; i++) {
        t->w[i].index = (unsigned)i;
        t->w[i].warpid = s->warpid ? s->warpid[i] : 4 * (unsigned)i;
        ready_at[i] = 0;                 /* the barrier before the stream */
    }
    for (long now = 0;; now++) {
        int ready[IO_MAX_WARPS], any = 0;
        for (size_t i = 0; i < s->k; i++)
            any |= ready[i] = seg[i] < s->nseg && ready_at[i] <= now;
        int live = 0;
        for (size_t i = 0; i < s->k; i++)
            live |= seg[i] < s->nseg;
        if (!live)
            break;
        if (!any)
            continue;
        int w = owner >= 0 && ready[owner] && s->policy != SIM_CYCLE
                    ? owner
                    : pick(t, s->policy == SIM_CYCLE ? IO_ROUND_ROBIN : s->policy, ready, last,
                           &seed);
        owner = last = w;
        ready_at[w] = now + 1;
        if (pos[w] == 0)
            t->w[w].start[seg[w]] = (uint32_t)now + 1000u;
        if (pos[w]++ == G + 1) {             /* the end read */
            t->w[w].end[seg[w]++] = (uint32_t)now + 1000u;
            pos[w] = 0;
            if (s->ev == EV_STALL)
                ready_at[w] = now + STALL;
            if (s->ev != EV_NONE) {
                owner = -1;
                /* a yield gives the issue to another warp when one is ready */
                int other = 0;
                for (size_t i = 0; i < s->k; i++)
                    other |= (int)i != w && seg[i] < s->nseg && ready_at[i] <= now + 1;
                if (s->ev == EV_YIELD && other)
                    ready_at[w] = now + 2;
            }
        }
    }
}

static struct io_counts run(const struct sim *s, size_t launches)
{
    struct io_counts c;
    struct io_trace t;
    memset(&c, 0, sizeof c);
    for (size_t l = 0; l < launches; l++) {
        struct sim one = *s;
        one.seed = s->seed + (unsigned)l;
        simulate(&one, &t);
        assert_int_equal(io_count(&t, &c), 0);
    }
    return c;
}

/* Age and id orders that differ: oldest is index 0 (id 4), lowest id index 2. */
static const unsigned shuffled[4] = {4, 12, 0, 8};

static void test_each_policy(void **state)
{
    (void)state;
    for (int ev = EV_STALL; ev <= EV_YIELD; ev++)
        for (int p = 0; p < IO_POLICIES; p++) {
            struct sim s = {p, (enum sim_event)ev, 4, 8, shuffled, 1};
            struct io_counts c = run(&s, 3);
            assert_true(c.decisions >= IO_MIN_DECISIONS);
            assert_int_equal(c.overlapped, 0);
            assert_int_equal(c.hits[p], c.decisions);
            if (io_verdict(&c) != 1u << p)
                fail_msg("event %d policy %s: mask 0x%x (hits %zu %zu %zu %zu of %zu)", ev,
                         io_policy_name((enum io_policy)p), io_verdict(&c), c.hits[0],
                         c.hits[1], c.hits[2], c.hits[3], c.decisions);
            json_t *j = io_counts_json(&c);
            assert_string_equal(json_string_value(json_array_get(json_object_get(j, "rule"), 0)),
                                io_policy_name((enum io_policy)p));
            json_decref(j);
        }
}

static void test_alike_orders(void **state)
{
    (void)state;
    struct sim s = {IO_YOUNGEST, EV_STALL, 4, 8, NULL, 1};
    struct io_counts c = run(&s, 2);
    assert_true(io_verdict(&c) & 1u << IO_YOUNGEST);
    assert_int_equal(c.age_is_id, c.decisions);
    s.policy = IO_OLDEST;
    c = run(&s, 2);
    /* oldest is lowest id when ages follow ids */
    assert_int_equal(io_verdict(&c), 1u << IO_OLDEST | 1u << IO_LOWEST_ID);
    json_t *j = io_counts_json(&c);
    assert_non_null(strstr(json_string_value(json_object_get(j, "text")), "ordered the warps alike"));
    json_decref(j);
}

static void test_not_determined(void **state)
{
    (void)state;
    struct sim s = {SIM_RANDOM, EV_STALL, 4, 8, shuffled, 7};
    struct io_counts c = run(&s, 4);
    assert_true(c.decisions >= IO_MIN_DECISIONS);
    assert_int_equal(io_verdict(&c), 0);
    json_t *j = io_counts_json(&c);
    assert_true(json_is_null(json_object_get(j, "rule")));
    assert_non_null(strstr(json_string_value(json_object_get(j, "text")), "not determined"));
    json_decref(j);

    /* jitter of more than a segment: the order is no order */
    struct io_trace t;
    struct sim y = {IO_YOUNGEST, EV_STALL, 4, 8, shuffled, 3};
    unsigned seed = 5;
    memset(&c, 0, sizeof c);
    simulate(&y, &t);
    for (size_t i = 0; i < t.nwarps; i++)
        for (size_t k = 0; k < t.nseg; k++) {
            uint32_t d = rnd(&seed) % (4 * G);
            t.w[i].start[k] += d;
            t.w[i].end[k] += d;
        }
    assert_int_equal(io_count(&t, &c), 0);
    assert_true(c.overlapped > 0);
    assert_int_equal(io_verdict(&c), 0);

    /* interleaving every cycle: every neighbour overlaps, and no greed */
    struct sim cyc = {SIM_CYCLE, EV_NONE, 4, 8, NULL, 1};
    c = run(&cyc, 1);
    assert_true(c.overlapped * 2 > c.pairs);
    assert_int_equal(io_verdict(&c), 0);
    j = io_counts_json(&c);
    assert_non_null(strstr(json_string_value(json_object_get(j, "text")), "overlapped"));
    assert_true(json_is_false(json_object_get(j, "greedy")));   /* switched inside segments */
    json_decref(j);
    /* too few decisions */
    memset(&c, 0, sizeof c);
    assert_int_equal(io_verdict(&c), 0);
}

static void test_greedy(void **state)
{
    (void)state;
    /* no events: a greedy scheduler runs each warp to its end */
    struct sim s = {IO_YOUNGEST, EV_NONE, 4, 8, NULL, 1};
    struct io_counts c = run(&s, 1);
    assert_true(c.quiet > 0);
    assert_int_equal(c.breaks, 0);
    json_t *j = io_counts_json(&c);
    assert_true(json_is_true(json_object_get(j, "greedy")));
    json_decref(j);
    /* a scheduler that switches at every end read although nothing asked it */
    struct sim y = {IO_YOUNGEST, EV_YIELD, 4, 8, NULL, 1};
    struct io_trace t;
    simulate(&y, &t);
    t.event_at_end = 0;
    memset(&c, 0, sizeof c);
    io_count(&t, &c);
    j = io_counts_json(&c);
    assert_true(json_is_false(json_object_get(j, "greedy")));
    json_decref(j);
    /* a scheduler that ignores the edited ends: it kept the issue at each of them */
    struct sim ignore = {IO_YOUNGEST, EV_NONE, 4, 8, NULL, 1};
    simulate(&ignore, &t);
    t.event_at_end = 1;
    memset(&c, 0, sizeof c);
    io_count(&t, &c);
    assert_true(c.events > 0);
    assert_int_equal(c.held, c.events);
    j = io_counts_json(&c);
    assert_non_null(strstr(json_string_value(json_object_get(j, "text")), "the warp kept the issue"));
    json_decref(j);
    /* events at every end: no quiet ends, greed not judged, every edit obeyed */
    c = run(&y, 1);
    assert_true(c.events > 0);
    assert_int_equal(c.held, 0);
    j = io_counts_json(&c);
    assert_true(json_is_null(json_object_get(j, "greedy")));
    json_decref(j);
}

static void test_sizes_and_order(void **state)
{
    (void)state;
    struct io_trace t;
    struct io_counts c;
    unsigned order[IO_MAX_WARPS * IO_MAX_SEGS];
    memset(&c, 0, sizeof c);
    struct sim s = {IO_YOUNGEST, EV_STALL, 3, 2, NULL, 1};
    simulate(&s, &t);
    size_t n = io_order(&t, order, sizeof order / sizeof order[0]);
    assert_int_equal(n, 6);
    /* the youngest starts; when it stalls the youngest ready warp follows */
    assert_int_equal(order[0], 2);
    assert_int_equal(order[1], 1);
    assert_int_equal(io_order(&t, order, 2), 2);
    t.nwarps = 0;
    assert_int_equal(io_count(&t, &c), -1);
    assert_int_equal(io_order(&t, order, 4), 0);
    t.nwarps = IO_MAX_WARPS + 1;
    assert_int_equal(io_count(&t, &c), -1);
    t.nwarps = 2;
    t.nseg = IO_MAX_SEGS + 1;
    assert_int_equal(io_count(&t, &c), -1);
    assert_int_equal(c.traces, 0);
    assert_string_equal(io_policy_name(IO_POLICIES), "?");
    /* counts add up: two launches counted apart and summed are one count of both */
    struct sim two = {IO_ROUND_ROBIN, EV_YIELD, 4, 8, shuffled, 1};
    struct io_counts both = run(&two, 2), one = run(&two, 1), sum;
    memset(&sum, 0, sizeof sum);
    io_counts_add(&sum, &one);
    io_counts_add(&sum, &one);
    assert_memory_equal(&sum, &both, sizeof sum);
    /* and read back from their JSON unchanged */
    json_t *j = io_counts_json(&both);
    struct io_counts back;
    io_counts_from_json(j, &back);
    assert_memory_equal(&back, &both, sizeof back);
    json_decref(j);
}

/* ---- the meaning ----------------------------------------------------------- */

/* A scheduler document as issue_order_run writes its "by_experiment". */
static json_t *doc_of(int stall_policy, int greedy)
{
    struct sim quiet = {greedy ? IO_YOUNGEST : SIM_CYCLE, EV_NONE, 4, 8, shuffled, 1};
    struct sim st = {stall_policy, EV_STALL, 4, 8, shuffled, 1};
    struct sim y = {IO_ROUND_ROBIN, EV_YIELD, 4, 8, shuffled, 1};
    struct io_counts q = run(&quiet, 2), s = run(&st, 2), yc = run(&y, 2);
    return json_pack("{s:{s:o, s:o, s:o}}", "by_experiment", "quiet", io_counts_json(&q),
                     "stall_ends", io_counts_json(&s), "yield1_ends", io_counts_json(&yc));
}

static void test_meaning(void **state)
{
    (void)state;
    json_t *d = doc_of(IO_YOUNGEST, 1), *m = io_meaning(d);
    assert_string_equal(json_string_value(json_object_get(m, "rule")), "greedy, then youngest");
    assert_true(json_is_true(json_object_get(m, "greedy")));
    const char *text = json_string_value(json_object_get(m, "text"));
    assert_non_null(strstr(text, "after a stall (end reads stall 11): the next warp was the "
                                 "youngest (32) ready one in 32 decisions;"));
    assert_non_null(strstr(text, "after yield field 1 on the end reads: the next warp was the "
                                 "round-robin"));
    assert_non_null(strstr(text, "Rule: greedy, then youngest."));
    /* the verdicts are recomputed: a stored rule that the counts do not carry is ignored */
    json_object_set_new(json_object_get(json_object_get(d, "by_experiment"), "stall_ends"), "rule",
                        json_pack("[s]", "oldest"));
    json_t *again = io_meaning(d);
    assert_string_equal(json_string_value(json_object_get(again, "rule")), "greedy, then youngest");
    /* through the control-code probe's meanings */
    json_t *none_instr = json_array(), *exp = json_pack("{s:O}", "scheduler", d);
    json_t *all = cc_meanings(none_instr, exp);
    assert_string_equal(json_string_value(json_object_get(json_object_get(all, "scheduler"), "rule")),
                        "greedy, then youngest");
    json_decref(all);
    json_decref(exp);
    json_decref(again);
    json_decref(m);
    json_decref(d);

    /* interleaving scheduler: not greedy, so no rule */
    d = doc_of(IO_YOUNGEST, 0);
    m = io_meaning(d);
    assert_string_equal(json_string_value(json_object_get(m, "rule")), "not determined");
    assert_true(json_is_false(json_object_get(m, "greedy")));
    assert_non_null(strstr(json_string_value(json_object_get(m, "text")),
                           "Rule: not determined (greediness not shown)."));
    json_decref(m);
    json_decref(d);
    /* stalls the scheduler ignored: the decisions rest on warps finishing */
    d = doc_of(IO_YOUNGEST, 1);
    json_t *st = json_object_get(json_object_get(d, "by_experiment"), "stall_ends");
    json_object_set_new(st, "events", json_integer(40));
    json_object_set_new(st, "held", json_integer(30));
    m = io_meaning(d);
    assert_string_equal(json_string_value(json_object_get(m, "rule")), "not determined");
    assert_non_null(strstr(json_string_value(json_object_get(m, "text")),
                           "(the stalled warps kept the issue)"));
    json_decref(m);
    json_decref(d);
    /* a random policy after stalls: not determined */
    d = doc_of(SIM_RANDOM, 1);
    m = io_meaning(d);
    assert_string_equal(json_string_value(json_object_get(m, "rule")), "not determined");
    json_decref(m);
    json_decref(d);
    /* a failed experiment, and none */
    d = json_pack("{s:s}", "error", "cuModuleLoadData: CUDA_ERROR_X");
    m = io_meaning(d);
    assert_non_null(strstr(json_string_value(json_object_get(m, "text")), "did not run"));
    json_decref(m);
    json_decref(d);
    assert_null(io_meaning(NULL));
    json_t *no_exp = json_object(), *none = cc_meanings(none_instr, no_exp);
    assert_null(json_object_get(none, "scheduler"));
    json_decref(none);
    json_decref(no_exp);
    json_decref(none_instr);
}

/* ---- the records ----------------------------------------------------------- */

/* Four groups simulated apart, written as the kernel writes its records:
 * block warp b is %warpid b, in group b mod 4, the (b / 4)th of its group;
 * the clocks 64-bit, from 2^33 on, so the 32-bit truncation is exercised. */
static void records_of(int policy, uint32_t *words, struct io_trace sim[IO_GROUPS])
{
    for (unsigned g = 0; g < IO_GROUPS; g++) {
        struct sim s = {policy, EV_STALL, 4, IO_SEGS, NULL, g + 1};
        simulate(&s, &sim[g]);
    }
    for (unsigned b = 0; b < 16; b++) {
        uint32_t *r = words + (size_t)b * IO_REC_WORDS;
        const struct io_warp *w = &sim[b % 4].w[b / 4];
        r[0] = b;
        r[1] = 7;
        r[2] = b;
        r[3] = IO_MARK;
        for (size_t k = 0; k < IO_SEGS; k++) {
            uint64_t st = (1ull << 33) + w->start[k], en = (1ull << 33) + w->end[k];
            memcpy(r + 4 + 4 * k, &st, 8);
            memcpy(r + 6 + 4 * k, &en, 8);
        }
    }
}

static void test_records(void **state)
{
    (void)state;
    static uint32_t words[16 * IO_REC_WORDS];
    struct io_trace sim[IO_GROUPS], groups[IO_GROUPS];
    struct io_overlaps ov = {0, 0, 0, 0};
    char err[256];
    const struct io_experiment *stall = NULL;
    for (size_t x = 0; x < io_nexperiments; x++)
        if (strcmp(io_experiments[x].name, "stall_ends") == 0)
            stall = &io_experiments[x];
    assert_non_null(stall);
    records_of(IO_YOUNGEST, words, sim);
    assert_int_equal(io_record_clock(words + 5 * IO_REC_WORDS, 1),
                     (1ull << 33) + sim[1].w[1].end[0]);
    if (io_records(words, 16, stall, groups, &ov, err, sizeof err) != 0)
        fail_msg("%s", err);
    struct io_counts all;
    memset(&all, 0, sizeof all);
    for (unsigned g = 0; g < IO_GROUPS; g++) {
        assert_int_equal(groups[g].nwarps, 4);
        assert_int_equal(groups[g].blocked, stall->blocked);
        assert_int_equal(groups[g].event_at_end, 1);
        for (unsigned i = 0; i < 4; i++) {
            assert_int_equal(groups[g].w[i].warpid, 4 * i + g);
            assert_int_equal(groups[g].w[i].index, 4 * i + g);
            assert_memory_equal(groups[g].w[i].start, sim[g].w[i].start, sizeof sim[g].w[i].start);
        }
        struct io_counts one, direct;
        memset(&one, 0, sizeof one);
        memset(&direct, 0, sizeof direct);
        io_count(&groups[g], &one);
        sim[g].blocked = stall->blocked;
        io_count(&sim[g], &direct);
        assert_int_equal(one.decisions, direct.decisions);
        assert_int_equal(one.hits[IO_YOUNGEST], direct.hits[IO_YOUNGEST]);
        io_counts_add(&all, &one);
    }
    assert_int_equal(io_verdict(&all), 1u << IO_YOUNGEST);
    /* each group issued its warps one at a time; the groups ran side by side */
    assert_int_equal(ov.same_overlapping, 0);
    assert_int_equal(ov.same_pairs, 4 * 6 * IO_SEGS * IO_SEGS);
    assert_int_equal(ov.cross_pairs, (120 - 24) * IO_SEGS * IO_SEGS);
    assert_true(ov.cross_overlapping > 0);
    /* records the kernel did not write */
    words[3 * IO_REC_WORDS + 3] = 0;
    assert_int_equal(io_records(words, 16, stall, groups, &ov, err, sizeof err), -1);
    assert_non_null(strstr(err, "warp 3's record"));
    words[3 * IO_REC_WORDS + 3] = IO_MARK;
    words[9 * IO_REC_WORDS + 1] = 8;         /* another SM */
    assert_int_equal(io_records(words, 16, stall, groups, &ov, err, sizeof err), -1);
    assert_non_null(strstr(err, "SM 8"));
}

/* ---- the kernel ------------------------------------------------------------ */

static void test_golden_ptx(void **state)
{
    (void)state;
    char *got = io_ptx(9, 0);
    assert_non_null(got);
    if (getenv("GPUPROBE_UPDATE_GOLDEN"))
        write_file(FIX "issue_order.ptx", got);
    char *want = must_read_file(FIX "issue_order.ptx", NULL);
    assert_string_equal(got, want);
    size_t fmas = 0, clocks = 0;
    for (const char *p = got; (p = strstr(p, "fma.rn.f32 %f")); p++)
        fmas++;
    for (const char *p = got; (p = strstr(p, "%clock64;")); p++)
        clocks++;
    assert_int_equal(fmas, IO_SEGS * IO_FFMA);
    assert_int_equal(clocks, 2 * IO_SEGS);
    assert_non_null(strstr(got, "bar.sync 0;\n\tmov.u64 %c0, %clock64;\n"));
    free(got);
    free(want);
}

static void test_layout(void **state)
{
    (void)state;
    size_t size;
    char *cub = must_read_file(FIX "issue_order.cubin", &size), err[256];
    struct io_layout L;
    if (io_layout(cub, size, &L, err, sizeof err) != 0)
        fail_msg("%s", err);
    for (size_t s = 0; s < IO_SEGS; s++) {
        assert_int_equal(L.end[s] - L.start[s], IO_FFMA + 1);
        assert_int_equal(L.ffma[s * IO_FFMA], L.start[s] + 1);
        if (s)
            assert_int_equal(L.start[s], L.end[s - 1] + 1);
    }
    assert_int_equal(L.other_reads, 0);
    assert_int_equal(L.compiled_stall_ffma, 1);
    static struct patch_edit e[IO_MAX_EDITS];
    char *copy = malloc(size);
    assert_non_null(copy);
    for (size_t x = 0; x < io_nexperiments; x++) {
        const struct io_experiment *ex = &io_experiments[x];
        size_t n = io_edits(&L, ex, e);
        assert_true(n <= IO_MAX_EDITS);
        assert_int_equal(n == 0, strcmp(ex->name, "compiled") == 0);
        memcpy(copy, cub, size);
        if (patch_apply(copy, size, IO_KERNEL, e, n, err, sizeof err) != 0 ||
            patch_verify(cub, copy, size, IO_KERNEL, e, n, err, sizeof err) != 0)
            fail_msg("%s: %s", ex->name, err);
        size_t off, tsize;
        assert_int_equal(patch_find_text(copy, size, IO_KERNEL, &off, &tsize, err, sizeof err), 0);
        struct sass_insn end = sass_decode((uint8_t *)copy + off, L.end[3] * SASS_INSN_BYTES);
        struct sass_insn ffma = sass_decode((uint8_t *)copy + off, L.ffma[40] * SASS_INSN_BYTES);
        if (ex->end_stall >= 0)
            assert_int_equal(sass_field(&end, SASS_STALL), (unsigned)ex->end_stall);
        if (ex->end_yield >= 0)
            assert_int_equal(sass_field(&end, SASS_YIELD), (unsigned)ex->end_yield);
        if (ex->ffma_stall >= 0)
            assert_int_equal(sass_field(&ffma, SASS_STALL), (unsigned)ex->ffma_stall);
        /* the layout still reads the same after the edits */
        struct io_layout again;
        assert_int_equal(io_layout(copy, size, &again, err, sizeof err), 0);
        assert_memory_equal(again.ffma, L.ffma, sizeof L.ffma);
    }
    /* an FFMA of segment 2 turned into a NOP: the segment is refused */
    struct patch_bits nop = {L.ffma[2 * IO_FFMA + 5], {0, 0, 0}, {~0ull, ~0ull, 0}};
    sass_make_nop(&nop.value);
    memcpy(copy, cub, size);
    assert_int_equal(patch_rewrite(copy, size, IO_KERNEL, &nop, 1, NULL, 0, err, sizeof err), 0);
    assert_int_equal(io_layout(copy, size, &L, err, sizeof err), -1);
    assert_non_null(strstr(err, "segment 2 holds a NOP"));
    /* a cubin without the kernel */
    assert_int_equal(io_layout("not a cubin", 12, &L, err, sizeof err), -1);
    free(copy);
    free(cub);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_policy),
        cmocka_unit_test(test_alike_orders),
        cmocka_unit_test(test_not_determined),
        cmocka_unit_test(test_greedy),
        cmocka_unit_test(test_sizes_and_order),
        cmocka_unit_test(test_meaning),
        cmocka_unit_test(test_records),
        cmocka_unit_test(test_golden_ptx),
        cmocka_unit_test(test_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
