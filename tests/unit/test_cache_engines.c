/*
 * Unit tests of the cache model's engines (cache/exact.c, cache/reuse.c,
 * cache/counts.c, cache/stackdist.c): streams whose every outcome is worked
 * by hand — one request of each miss class (compulsory, capacity,
 * associativity, sector, latency, MSHR), the MSHR-full count; stack
 * distances against a naive LRU stack on random streams; the two engines
 * counting exactly the same on fully associative caches (random streams,
 * with and without latency, merging and sectors); the associativity
 * correction's probabilities worked by hand, and the corrected reuse
 * estimate near the exact simulation on a random set-associative stream.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cache/exact.h"
#include "cache/geometry.h"
#include "cache/reuse.h"
#include "cache/stackdist.h"

static struct cache_geom geom(const char *text)
{
    struct cache_geom g = {0};
    char msg[256];
    assert_int_equal(cache_geom_parse(text, &g, msg, sizeof msg), 0);
    return g;
}

/* A small deterministic generator (xorshift64*), so the streams are fixed. */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* 4 lines of 128 B, 2 ways (2 sets: even lines in set 0), sectors of 32 B. */
static void test_miss_classes_by_hand(void **state)
{
    (void)state;
    struct cache_geom g = geom("512,2,128,32");
    struct cache_timing tm = {0, 0, 8};
    struct cache_exact e;
    struct cache_counts c = {0};
    assert_int_equal(cache_exact_init(&e, &g, &tm, 0), 0);
    /* line, sectors; what the request is, worked by hand */
    static const struct {
        uint64_t line;
        uint32_t want;
    } s[] = {
        {0, 1}, {2, 1}, {4, 1}, /* compulsory x3; set 0 holds 2 lines: 4 evicts 0 */
        {0, 1},                 /* the shadow (4 lines) holds 0: associativity; evicts 2 */
        {1, 1}, {3, 1}, {5, 1}, {7, 1}, {9, 1}, /* compulsory x5 in set 1; shadow now 9 7 5 3 */
        {4, 1},                 /* set 0 holds 0 and 4: hit */
        {2, 1},                 /* neither set 0 nor the shadow: capacity */
        {4, 4},                 /* resident, sector 2 never fetched: sector miss */
        {4, 5},                 /* both sectors there: hit, 2 sector hits */
    };
    uint64_t below = 0;
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        below += cache_exact_access(&e, s[i].line, s[i].want, i, &c) != 0;
    assert_int_equal(c.requests, 13);
    assert_int_equal(c.miss[CACHE_MISS_COMPULSORY], 8);
    assert_int_equal(c.miss[CACHE_MISS_CONFLICT], 1);
    assert_int_equal(c.miss[CACHE_MISS_CAPACITY], 1);
    assert_int_equal(c.miss[CACHE_MISS_SECTOR], 1);
    assert_int_equal(c.hits, 2);
    assert_int_equal(c.sectors, 14);
    assert_int_equal(c.sector_hits, 3); /* {4,1} once, {4,5} twice */
    assert_int_equal(c.below, 11);
    assert_int_equal(below, 11);
    assert_int_equal(c.below_sectors, 11);
    cache_exact_free(&e);
}

/* Latency 3, one merge a fetch, one MSHR. */
static void test_latency_and_mshr_by_hand(void **state)
{
    (void)state;
    struct cache_geom g = geom("1K,full,128,32");
    struct cache_timing tm = {3, 1, 1};
    struct cache_exact e;
    struct cache_counts c = {0};
    assert_int_equal(cache_exact_init(&e, &g, &tm, 0), 0);
    /* t0 fetch (ready 3); t1 merges (latency); t2 cannot merge: MSHR miss,
     * fetches again (ready 5) with the one MSHR still busy (t0 + 3 > 2);
     * t3 merges; t5 hits */
    assert_int_equal(cache_exact_access(&e, 7, 1, 0, &c), 1);
    assert_int_equal(cache_exact_access(&e, 7, 1, 1, &c), 0);
    assert_int_equal(cache_exact_access(&e, 7, 1, 2, &c), 1);
    assert_int_equal(cache_exact_access(&e, 7, 1, 3, &c), 0);
    assert_int_equal(cache_exact_access(&e, 7, 1, 5, &c), 0);
    /* t6: a line in flight asked for a sector it has not: merges, fetches the sector */
    assert_int_equal(cache_exact_access(&e, 8, 1, 6, &c), 1);
    assert_int_equal(cache_exact_access(&e, 8, 2, 7, &c), 2);
    assert_int_equal(c.miss[CACHE_MISS_COMPULSORY], 2);
    assert_int_equal(c.miss[CACHE_MISS_LATENCY], 3);
    assert_int_equal(c.miss[CACHE_MISS_MSHR], 1);
    assert_int_equal(c.hits, 1);
    assert_int_equal(c.below, 4);
    /* fetches at 0, 2, 6, 7: busy at 2 (0+3 > 2) and at 7 (6+3 > 7) */
    assert_int_equal(c.mshr_full, 2);
    cache_exact_free(&e);
}

static void test_stack_distances(void **state)
{
    (void)state;
    uint64_t seed = 42;
    for (int round = 0; round < 4; round++) {
        uint32_t universe = round == 0 ? 3 : round == 1 ? 50 : round == 2 ? 700 : 5000;
        uint32_t n = 30000;
        struct cache_stack st;
        assert_int_equal(cache_stack_init(&st), 0);
        uint32_t *id_of = malloc(universe * sizeof *id_of), *stack = malloc(universe * sizeof *stack);
        struct cache_line *lines = calloc(universe, sizeof *lines);
        uint32_t ids = 0, depth = 0;
        for (uint32_t k = 0; k < universe; k++)
            id_of[k] = UINT32_MAX;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t x = (uint32_t)(rnd(&seed) % universe);
            int fresh = id_of[x] == UINT32_MAX;
            if (fresh)
                id_of[x] = ids++;
            uint64_t d = cache_stack_access(&st, lines, id_of[x], fresh);
            /* the naive LRU stack: position of x from the top */
            uint32_t p = 0;
            while (p < depth && stack[p] != x)
                p++;
            if (fresh) {
                assert_true(d == CACHE_DIST_INF);
                assert_int_equal(p, depth);
                depth++;
            } else {
                assert_int_equal(d, p);
            }
            memmove(stack + 1, stack, p * sizeof *stack);
            stack[0] = x;
        }
        free(id_of);
        free(stack);
        free(lines);
        cache_stack_free(&st);
    }
}

/* Both engines over one random stream; the raw counts must be equal. */
static void run_both(const char *geo, struct cache_timing tm, uint32_t universe, uint64_t seed,
                     struct cache_counts *ce, struct cache_counts *cr)
{
    struct cache_geom g = geom(geo);
    struct cache_exact e;
    struct cache_reuse r;
    assert_int_equal(cache_exact_init(&e, &g, &tm, 0), 0);
    assert_int_equal(cache_reuse_init(&r, &g, &tm, 0), 0);
    memset(ce, 0, sizeof *ce);
    memset(cr, 0, sizeof *cr);
    for (uint64_t t = 0; t < 20000; t++) {
        uint64_t v = rnd(&seed);
        /* a skewed stream: half the requests in a hot eighth of the lines */
        uint64_t line = (v & 1) ? (v >> 8) % (universe / 8 + 1) : (v >> 8) % universe;
        uint32_t want = 1u << ((v >> 4) % g.sectors_per_line);
        int64_t be = cache_exact_access(&e, line * 3, want, t, ce);
        int64_t br = cache_reuse_access(&r, line * 3, want, t, cr);
        assert_int_equal(be, br);
    }
    cache_exact_free(&e);
    cache_reuse_free(&r);
}

static void test_engines_agree_fully_associative(void **state)
{
    (void)state;
    static const char *const geos[] = {"128,full,128,32", "512,full,128,32", "8K,full,128,32",
                                       "64K,full,128,128"};
    static const struct cache_timing tms[] = {{0, 0, 8}, {5, 4, 8}, {40, 32, 0}, {17, 0, 2}};
    uint64_t seed = 7;
    for (size_t i = 0; i < sizeof geos / sizeof geos[0]; i++)
        for (size_t j = 0; j < sizeof tms / sizeof tms[0]; j++) {
            struct cache_counts ce, cr;
            run_both(geos[i], tms[j], 40 + 300 * (uint32_t)i, seed++, &ce, &cr);
            assert_memory_equal(&ce, &cr, sizeof ce);
            uint64_t out = ce.hits;
            for (int m = 0; m < CACHE_MISS_CLASSES; m++)
                out += ce.miss[m];
            assert_int_equal(out, 20000); /* every request has exactly one outcome */
            if (i < 3) /* the last cache holds the whole universe */
                assert_true(ce.miss[CACHE_MISS_CAPACITY] > 0);
            assert_int_equal(ce.miss[CACHE_MISS_CONFLICT], 0);
        }
}

static void test_conflict_probability(void **state)
{
    (void)state;
    struct cache_geom g = geom("1K,2,128,32"); /* 8 lines, 4 sets of 2 */
    double p[8];
    cache_assoc_conflict_prob(&g, p, 8);
    /* X ~ Bin(d, 1/4); P(X >= 2) = 1 - (3/4)^d - d (1/4)(3/4)^(d-1) */
    assert_true(p[0] == 0 && p[1] == 0);
    for (int d = 2; d < 8; d++) {
        double want = 1 - pow(0.75, d) - d * 0.25 * pow(0.75, d - 1);
        assert_true(fabs(p[d] - want) < 1e-12);
    }
    struct cache_geom f = geom("1K,full,128,32");
    assert_int_equal(cache_assoc_span(&f), 8);
    cache_assoc_conflict_prob(&f, p, 8);
    for (int d = 0; d < 8; d++)
        assert_true(p[d] == 0);
    /* the span: where a set-associative cache's reuse stops being a likely hit */
    uint64_t span = cache_assoc_span(&g);
    assert_true(span > 8 && span <= 8 * CACHE_ASSOC_SPAN_MAX);
}

/* Random reuse of 384 lines scattered over the address space (so their
 * sets are as random as the method assumes) in a 256-line 4-way cache: the
 * corrected estimate should sit near the exact simulation, and nearer than
 * the uncorrected fully associative count. */
static void test_correction_near_exact(void **state)
{
    (void)state;
    struct cache_geom g = geom("32K,4,128,128"); /* 256 lines, 64 sets */
    struct cache_timing tm = {0, 0, 8};
    struct cache_exact e;
    struct cache_reuse r;
    struct cache_counts ce = {0}, cr = {0};
    assert_int_equal(cache_exact_init(&e, &g, &tm, 0), 0);
    assert_int_equal(cache_reuse_init(&r, &g, &tm, 0), 0);
    uint64_t seed = 99, pool[384];
    for (int i = 0; i < 384; i++)
        pool[i] = rnd(&seed) >> 20;
    const uint64_t n = 200000;
    for (uint64_t t = 0; t < n; t++) {
        uint64_t line = pool[rnd(&seed) % 384];
        cache_exact_access(&e, line, 1, t, &ce);
        cache_reuse_access(&r, line, 1, t, &cr);
    }
    double *p = malloc(r.span * sizeof *p);
    cache_assoc_conflict_prob(&g, p, r.span);
    struct cache_estimate est;
    struct cache_correction k;
    cache_reuse_correction(&r, p, &k);
    cache_estimate_corrected(&cr, &k, 1.0, &est);
    double exact = (double)ce.hits, fa = (double)cr.hits;
    print_message("exact hits %.0f, fully associative %.0f, corrected %.1f\n", exact, fa, est.hits);
    assert_true(fa > exact);
    assert_true(fabs(est.hits - exact) < fabs(fa - exact));
    assert_true(fabs(est.hits - exact) < 0.03 * (double)n);
    assert_true(est.miss[CACHE_MISS_CONFLICT] > 0);
    double moved = est.miss[CACHE_MISS_CONFLICT] - ((double)cr.miss[CACHE_MISS_CAPACITY] - est.miss[CACHE_MISS_CAPACITY]);
    assert_true(fabs(fa - est.hits - moved) < 1e-6 * fa);
    free(p);
    cache_exact_free(&e);
    cache_reuse_free(&r);
}

static void test_histogram_bins(void **state)
{
    (void)state;
    assert_int_equal(cache_rd_bin(0), 0);
    assert_int_equal(cache_rd_bin(1), 1);
    assert_int_equal(cache_rd_bin(2), 2);
    assert_int_equal(cache_rd_bin(3), 2);
    assert_int_equal(cache_rd_bin(4), 3);
    assert_int_equal(cache_rd_bin(1023), 10);
    assert_int_equal(cache_rd_bin(UINT64_MAX - 5), CACHE_RD_BINS - 1);
    /* a b a: distance 1; a a: 0; c: cold */
    struct cache_geom g = geom("1K,full,128,32");
    struct cache_timing tm = {0, 0, 8};
    struct cache_reuse r;
    struct cache_counts c = {0};
    assert_int_equal(cache_reuse_init(&r, &g, &tm, 0), 0);
    uint64_t lines[] = {10, 11, 10, 10, 12};
    for (uint64_t t = 0; t < 5; t++)
        cache_reuse_access(&r, lines[t], 1, t, &c);
    assert_int_equal(r.hist.cold, 3);
    assert_int_equal(r.hist.bin[0], 1);
    assert_int_equal(r.hist.bin[1], 1);
    assert_int_equal(c.hits, 2);
    cache_reuse_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_miss_classes_by_hand),
        cmocka_unit_test(test_latency_and_mshr_by_hand),
        cmocka_unit_test(test_stack_distances),
        cmocka_unit_test(test_engines_agree_fully_associative),
        cmocka_unit_test(test_conflict_probability),
        cmocka_unit_test(test_correction_near_exact),
        cmocka_unit_test(test_histogram_bins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
