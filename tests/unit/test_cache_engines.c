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
 * The L2's bounded structures, each against a plain reference on random
 * streams: the seen set against a bitmap, the bounded map's drops against
 * a table, the ring shadow and the LRU rows against the linked-list LRU;
 * and the engines' bounded forms against their unbounded ones — the exact
 * engine's fetches and counts equal request for request, the capped reuse
 * engine's counts, per-distance counts and correction equal, its histogram
 * equal below the cap and the rest counted beyond it.
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
#include "cache/fifo.h"
#include "cache/geometry.h"
#include "cache/linemap.h"
#include "cache/lru.h"
#include "cache/reuse.h"
#include "cache/seen.h"
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
        below += cache_exact_access(&e, s[i].line, s[i].want, i, 0, &c) != 0;
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
    assert_int_equal(cache_exact_access(&e, 7, 1, 0, 0, &c), 1);
    assert_int_equal(cache_exact_access(&e, 7, 1, 1, 0, &c), 0);
    assert_int_equal(cache_exact_access(&e, 7, 1, 2, 0, &c), 1);
    assert_int_equal(cache_exact_access(&e, 7, 1, 3, 0, &c), 0);
    assert_int_equal(cache_exact_access(&e, 7, 1, 5, 0, &c), 0);
    /* t6: a line in flight asked for a sector it has not: a sector miss that
     * fetches the sector (the latency misses are those whose every sector is
     * on its way: a tag lookup's hits, as ncu counts them) */
    assert_int_equal(cache_exact_access(&e, 8, 1, 6, 0, &c), 1);
    assert_int_equal(cache_exact_access(&e, 8, 2, 7, 0, &c), 2);
    assert_int_equal(c.miss[CACHE_MISS_COMPULSORY], 2);
    assert_int_equal(c.miss[CACHE_MISS_LATENCY], 2);
    assert_int_equal(c.miss[CACHE_MISS_SECTOR], 1);
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
        int64_t be = cache_exact_access(&e, line * 3, want, t, 0, ce);
        int64_t br = cache_reuse_access(&r, line * 3, want, t, 0, cr);
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
    cache_assoc_conflict_prob(&g, p, 0, 8);
    /* X ~ Bin(d, 1/4); P(X >= 2) = 1 - (3/4)^d - d (1/4)(3/4)^(d-1) */
    assert_true(p[0] == 0 && p[1] == 0);
    for (int d = 2; d < 8; d++) {
        double want = 1 - pow(0.75, d) - d * 0.25 * pow(0.75, d - 1);
        assert_true(fabs(p[d] - want) < 1e-12);
    }
    struct cache_geom f = geom("1K,full,128,32");
    assert_int_equal(cache_assoc_span(&f), 8);
    cache_assoc_conflict_prob(&f, p, 0, 8);
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
        cache_exact_access(&e, line, 1, t, 0, &ce);
        cache_reuse_access(&r, line, 1, t, 0, &cr);
    }
    struct cache_conflict p;
    assert_int_equal(cache_conflict_init(&p, &g), 0);
    struct cache_estimate est;
    struct cache_correction k;
    cache_reuse_correction(&r, &p, &k);
    cache_estimate_corrected(&cr, &k, NULL, &est);
    double exact = (double)ce.hits, fa = (double)cr.hits;
    print_message("exact hits %.0f, fully associative %.0f, corrected %.1f\n", exact, fa, est.hits);
    assert_true(fa > exact);
    assert_true(fabs(est.hits - exact) < fabs(fa - exact));
    assert_true(fabs(est.hits - exact) < 0.03 * (double)n);
    assert_true(est.miss[CACHE_MISS_CONFLICT] > 0);
    double moved = est.miss[CACHE_MISS_CONFLICT] - ((double)cr.miss[CACHE_MISS_CAPACITY] - est.miss[CACHE_MISS_CAPACITY]);
    assert_true(fabs(fa - est.hits - moved) < 1e-6 * fa);
    cache_conflict_free(&p);
    cache_exact_free(&e);
    cache_reuse_free(&r);
}

/* A large cache of a small stream: the correction reads P(d) and the
 * distance tables only as far as the stream's distances went (at_end), and
 * gives what the whole table gives; a reset clears that far and leaves the
 * tables all zero. P(d) computed in pieces equals P(d) computed at once. */
static void test_correction_bounded_by_stream(void **state)
{
    (void)state;
    struct cache_geom g = geom("64M,4,128,32"); /* 512K lines: a span of ~1.3M distances */
    struct cache_timing tm = {0, 0, 8};
    struct cache_reuse r;
    struct cache_counts c = {0};
    assert_int_equal(cache_reuse_init(&r, &g, &tm, 0), 0);
    uint64_t seed = 5;
    for (uint64_t t = 0; t < 20000; t++)
        cache_reuse_access(&r, rnd(&seed) % 3000, 1, t, t % 7 == 0, &c);
    struct cache_conflict lazy;
    struct cache_correction kl, kf;
    assert_int_equal(cache_conflict_init(&lazy, &g), 0);
    cache_reuse_correction(&r, &lazy, &kl);
    assert_true(r.at_end > 0 && r.at_end <= 3000);
    assert_int_equal(lazy.have, r.at_end);
    /* the whole table, and the sums over the whole span, by hand */
    double *p = malloc(r.span * sizeof *p);
    assert_non_null(p);
    cache_assoc_conflict_prob(&g, p, 0, r.span / 3);
    cache_assoc_conflict_prob(&g, p, r.span / 3, r.span);
    for (uint64_t d = 0; d < lazy.have; d++)
        assert_true(p[d] == lazy.p[d]);
    memset(&kf, 0, sizeof kf);
    for (uint64_t d = 0; d < r.span; d++) {
        double w = d < g.lines ? p[d] : 1 - p[d];
        double *n = d < g.lines ? &kf.all.lost : &kf.all.won;
        double *sec = d < g.lines ? &kf.all.lost_sectors : &kf.all.won_sectors;
        *n += w * (double)r.at[d].n;
        *sec += w * (double)r.at[d].sectors;
    }
    assert_true(fabs(kf.all.lost - kl.all.lost) <= 1e-9 * (1 + kf.all.lost));
    assert_true(fabs(kf.all.lost_sectors - kl.all.lost_sectors) <= 1e-9 * (1 + kf.all.lost_sectors));
    assert_true(kl.stores.lost > 0);
    cache_reuse_reset(&r);
    assert_int_equal(r.at_end, 0);
    for (uint64_t d = 0; d < r.span; d++)
        assert_true(r.at[d].n == 0 && r.st_at[d].n == 0 && r.at[d].sectors == 0);
    free(p);
    cache_conflict_free(&lazy);
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
        cache_reuse_access(&r, lines[t], 1, t, 0, &c);
    assert_int_equal(r.hist.cold, 3);
    assert_int_equal(r.hist.bin[0], 1);
    assert_int_equal(r.hist.bin[1], 1);
    assert_int_equal(c.hits, 2);
    cache_reuse_free(&r);
}

/* Lines from a universe of 50,000, some dense runs and some scattered
 * (multiplied apart), through several doublings: added once, then known. */
static void test_seen_set(void **state)
{
    (void)state;
    struct cache_seen s;
    assert_int_equal(cache_seen_init(&s), 0);
    const uint32_t universe = 50000;
    uint8_t *ref = calloc(universe, 1);
    assert_non_null(ref);
    uint64_t seed = 3, added = 0;
    for (int i = 0; i < 200000; i++) {
        uint32_t u = (uint32_t)(rnd(&seed) % universe);
        uint64_t line = u < universe / 2 ? u : (uint64_t)u * 977 + ((uint64_t)1 << 40);
        int r = cache_seen_add(&s, line);
        assert_int_equal(r, !ref[u]);
        added += !ref[u];
        ref[u] = 1;
    }
    assert_true(added > universe / 2);
    /* dense lines share blocks: fewer blocks than lines */
    assert_true(s.n < added);
    assert_true(cache_seen_bytes(&s) >= s.n * 9);
    cache_seen_reset(&s);
    assert_int_equal(cache_seen_add(&s, 5), 1);
    assert_int_equal(cache_seen_add(&s, 5), 0);
    cache_seen_free(&s);
    free(ref);
}

/* Random gets and drops on a bounded map, against a table of which lines
 * are held and with which index: every held line found at its index, every
 * dropped one added afresh (not fresh: seen), indices reused. */
static void test_bounded_map_drop(void **state)
{
    (void)state;
    struct cache_linemap m;
    assert_int_equal(cache_linemap_init(&m, 1), 0);
    const uint32_t universe = 6000;
    uint32_t *idx = malloc(universe * sizeof *idx);
    uint8_t *seen = calloc(universe, 1);
    assert_non_null(idx);
    assert_non_null(seen);
    for (uint32_t i = 0; i < universe; i++)
        idx[i] = CACHE_NONE;
    uint64_t seed = 11;
    uint32_t held = 0, max_index = 0;
    for (int i = 0; i < 300000; i++) {
        uint64_t v = rnd(&seed);
        uint32_t u = (uint32_t)((v >> 8) % universe);
        uint64_t line = (uint64_t)u * 5 + 1000;
        if ((v & 3) == 0 && idx[u] != CACHE_NONE) {
            cache_linemap_drop(&m, idx[u]);
            idx[u] = CACHE_NONE;
            held--;
            continue;
        }
        int fresh;
        uint32_t id = cache_linemap_get(&m, line, &fresh);
        assert_int_not_equal(id, CACHE_NONE);
        if (idx[u] != CACHE_NONE) {
            assert_int_equal(id, idx[u]);
            assert_int_equal(fresh, 0);
        } else {
            assert_int_equal(fresh, !seen[u]);
            assert_int_equal(m.lines[id].slot, CACHE_NONE);
            assert_true(m.keys[id] == line);
            idx[u] = id;
            held++;
        }
        seen[u] = 1;
        max_index = id > max_index ? id : max_index;
        assert_int_equal(cache_linemap_held(&m), held);
    }
    /* dropped indices were reused: never more indices than lines held at once */
    assert_true(max_index < universe);
    cache_linemap_free(&m);
    free(idx);
    free(seen);
}

/* The same random uses through the ring shadow and a 1-set linked-list
 * LRU of the same size: the same hits and the same victims. */
static void test_ring_shadow_is_lru(void **state)
{
    (void)state;
    const uint32_t lines_n = 64, universe = 160;
    struct cache_fa f;
    struct cache_lru l;
    assert_int_equal(cache_fa_init(&f, lines_n), 0);
    assert_int_equal(cache_lru_init(&l, 1, lines_n), 0); /* 64 ways: list mode */
    assert_int_equal(l.rows, 0);
    struct cache_line *st = calloc(universe, sizeof *st);
    uint32_t *slot = malloc(universe * sizeof *slot);
    for (uint32_t i = 0; i < universe; i++) {
        st[i].shadow = CACHE_NONE;
        slot[i] = CACHE_NONE;
    }
    uint64_t seed = 5;
    uint32_t hits = 0;
    for (int i = 0; i < 100000; i++) {
        uint64_t v = rnd(&seed);
        uint32_t id = (uint32_t)((v & 1 ? (v >> 8) % 70 : (v >> 8) % universe));
        uint32_t ev_ring, ev_list;
        int hit = cache_fa_use(&f, st, id, &ev_ring);
        assert_int_equal(hit, slot[id] != CACHE_NONE);
        if (hit) {
            cache_lru_touch(&l, 0, slot[id], id);
            ev_list = CACHE_NONE;
            hits++;
        } else {
            slot[id] = cache_lru_insert(&l, 0, id, &ev_list);
            if (ev_list != CACHE_NONE)
                slot[ev_list] = CACHE_NONE;
        }
        assert_int_equal(ev_ring, ev_list);
    }
    assert_true(hits > 10000 && hits < 90000);
    cache_fa_free(&f);
    cache_lru_free(&l);
    free(st);
    free(slot);
}

/* An LRU of 8 sets of 8 ways in row mode against the same in list mode. */
static void test_lru_rows_match_lists(void **state)
{
    (void)state;
    const uint32_t sets = 8, ways = 8, universe = 200;
    struct cache_lru a, b;
    assert_int_equal(cache_lru_init(&a, sets, ways), 0);
    assert_int_equal(cache_lru_init(&b, sets, ways), 0);
    assert_int_equal(a.rows, 1);
    b.rows = 0; /* the same geometry, kept as lists */
    cache_lru_reset(&b);
    uint32_t sa[200], sb[200];
    for (uint32_t i = 0; i < universe; i++)
        sa[i] = sb[i] = CACHE_NONE;
    uint64_t seed = 8;
    for (int i = 0; i < 100000; i++) {
        uint32_t id = (uint32_t)(rnd(&seed) % universe), set = id % sets, ea, eb;
        assert_int_equal(sa[id] != CACHE_NONE, sb[id] != CACHE_NONE);
        if (sa[id] != CACHE_NONE) {
            cache_lru_touch(&a, set, sa[id], id);
            cache_lru_touch(&b, set, sb[id], id);
            continue;
        }
        assert_int_equal(cache_lru_victim(&a, set), cache_lru_victim(&b, set));
        sa[id] = cache_lru_insert(&a, set, id, &ea);
        sb[id] = cache_lru_insert(&b, set, id, &eb);
        assert_int_equal(ea, eb);
        if (ea != CACHE_NONE)
            sa[ea] = sb[ea] = CACHE_NONE;
    }
    cache_lru_free(&a);
    cache_lru_free(&b);
}

/* A random skewed stream of `n` requests over `universe` lines. */
static void request(uint64_t *seed, uint32_t universe, uint32_t spl, uint64_t *line, uint32_t *want)
{
    uint64_t v = rnd(seed);
    *line = ((v & 1) ? (v >> 8) % (universe / 8 + 1) : (v >> 8) % universe) * 7;
    *want = 1u << ((v >> 4) % spl);
}

/* The exact engine bounded and unbounded: the same fetches and counts, on
 * set-associative geometries in both LRU modes, with latency and MSHRs;
 * the bounded map holding no more than cache and shadow. */
static void test_exact_bounded_equals_unbounded(void **state)
{
    (void)state;
    static const char *const geos[] = {"16K,4,128,32", "32K,16,128,32", "16K,32,128,32", "8K,full,128,32"};
    static const struct cache_timing tms[] = {{0, 0, 8}, {30, 16, 4}};
    uint64_t seed = 21;
    for (size_t i = 0; i < sizeof geos / sizeof *geos; i++)
        for (size_t j = 0; j < sizeof tms / sizeof *tms; j++) {
            struct cache_geom g = geom(geos[i]);
            struct cache_exact u, b;
            struct cache_counts cu = {0}, cb = {0};
            assert_int_equal(cache_exact_init(&u, &g, &tms[j], 0), 0);
            assert_int_equal(cache_exact_init(&b, &g, &tms[j], 1), 0);
            for (uint64_t t = 0; t < 40000; t++) {
                uint64_t line;
                uint32_t want;
                request(&seed, g.lines * 4, g.sectors_per_line, &line, &want);
                assert_int_equal(cache_exact_access(&u, line, want, t, 0, &cu),
                                 cache_exact_access(&b, line, want, t, 0, &cb));
                assert_true(cache_linemap_held(&b.map) <= 2 * g.lines);
            }
            assert_memory_equal(&cu, &cb, sizeof cu);
            assert_true(cu.miss[CACHE_MISS_CAPACITY] > 0 && cu.miss[CACHE_MISS_COMPULSORY] > 0);
            assert_true(cache_linemap_held(&b.map) < cache_linemap_held(&u.map));
            cache_exact_free(&u);
            cache_exact_free(&b);
        }
}

/* The reuse engine capped at its span and uncapped: the same fetches,
 * counts, per-distance counts and correction; the histogram the same below
 * the cap and the rest in `beyond`. */
static void test_reuse_capped_equals_uncapped(void **state)
{
    (void)state;
    static const char *const geos[] = {"16K,4,128,32", "8K,full,128,32", "32K,16,128,32"};
    uint64_t seed = 34;
    for (size_t i = 0; i < sizeof geos / sizeof *geos; i++) {
        struct cache_geom g = geom(geos[i]);
        struct cache_timing tm = {12, 8, 4};
        struct cache_reuse u, c;
        struct cache_counts cu = {0}, cc = {0};
        assert_int_equal(cache_reuse_init(&u, &g, &tm, 0), 0);
        assert_int_equal(cache_reuse_init(&c, &g, &tm, 1), 0); /* raised to the span */
        assert_int_equal(c.track, c.span);
        for (uint64_t t = 0; t < 60000; t++) {
            uint64_t line;
            uint32_t want;
            request(&seed, (uint32_t)c.span * 3, g.sectors_per_line, &line, &want);
            assert_int_equal(cache_reuse_access(&u, line, want, t, 0, &cu),
                             cache_reuse_access(&c, line, want, t, 0, &cc));
            assert_true(c.st.live <= c.track);
        }
        assert_memory_equal(&cu, &cc, sizeof cu);
        assert_memory_equal(u.at, c.at, u.span * sizeof *u.at);
        assert_memory_equal(u.st_at, c.st_at, u.span * sizeof *u.st_at);
        assert_int_equal(u.hist.cold, c.hist.cold);
        assert_int_equal(c.hist.beyond_from, c.track);
        uint64_t over = 0;
        for (unsigned k = 0; k < CACHE_RD_BINS; k++) {
            uint64_t lo = k ? (uint64_t)1 << (k - 1) : 0, hi = k ? ((uint64_t)1 << k) - 1 : 0;
            if (hi < c.track)
                assert_int_equal(u.hist.bin[k], c.hist.bin[k]);
            else
                over += u.hist.bin[k] - (lo < c.track ? c.hist.bin[k] : 0);
        }
        assert_true(c.hist.beyond > 0);
        assert_int_equal(over, c.hist.beyond);
        struct cache_conflict p;
        struct cache_correction ku, kc;
        assert_int_equal(cache_conflict_init(&p, &g), 0);
        cache_reuse_correction(&u, &p, &ku);
        cache_reuse_correction(&c, &p, &kc);
        assert_memory_equal(&ku, &kc, sizeof ku);
        cache_conflict_free(&p);
        cache_reuse_free(&u);
        cache_reuse_free(&c);
    }
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
        cmocka_unit_test(test_correction_bounded_by_stream),
        cmocka_unit_test(test_histogram_bins),
        cmocka_unit_test(test_seen_set),
        cmocka_unit_test(test_bounded_map_drop),
        cmocka_unit_test(test_ring_shadow_is_lru),
        cmocka_unit_test(test_lru_rows_match_lists),
        cmocka_unit_test(test_exact_bounded_equals_unbounded),
        cmocka_unit_test(test_reuse_capped_equals_uncapped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
