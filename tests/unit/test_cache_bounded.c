/*
 * Unit tests of the L2's bounded structures (cache/seen.c, the bounded
 * cache/linemap.c, cache/fifo.c, the row mode of cache/lru.c, the capped
 * stack of cache/stackdist.c and cache/reuse.c): each against a plain
 * reference on random streams — the seen set against a bitmap, the bounded
 * map's drops against a table, the ring shadow and the LRU rows against the
 * linked-list LRU — and the engines' bounded forms against their unbounded
 * ones: the exact engine's counts and fetches equal request for request,
 * the capped reuse engine's counts, per-distance counts and correction
 * equal, its histogram equal below the cap and the rest counted beyond it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cache/exact.h"
#include "cache/fifo.h"
#include "cache/geometry.h"
#include "cache/linemap.h"
#include "cache/lru.h"
#include "cache/reuse.h"
#include "cache/seen.h"

static struct cache_geom geom(const char *text)
{
    struct cache_geom g = {0};
    char msg[256];
    assert_int_equal(cache_geom_parse(text, &g, msg, sizeof msg), 0);
    return g;
}

/* xorshift64*, so the streams are fixed. */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
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
            assert_true(m.lines[id].line == line);
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
                assert_int_equal(cache_exact_access(&u, line, want, t, &cu),
                                 cache_exact_access(&b, line, want, t, &cb));
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
            assert_int_equal(cache_reuse_access(&u, line, want, t, &cu),
                             cache_reuse_access(&c, line, want, t, &cc));
            assert_true(c.st.live <= c.track);
        }
        assert_memory_equal(&cu, &cc, sizeof cu);
        assert_memory_equal(u.n_at, c.n_at, u.span * sizeof *u.n_at);
        assert_memory_equal(u.sectors_at, c.sectors_at, u.span * sizeof *u.sectors_at);
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
        double *p = malloc(u.span * sizeof *p);
        struct cache_correction ku, kc;
        cache_assoc_conflict_prob(&g, p, u.span);
        cache_reuse_correction(&u, p, &ku);
        cache_reuse_correction(&c, p, &kc);
        assert_memory_equal(&ku, &kc, sizeof ku);
        free(p);
        cache_reuse_free(&u);
        cache_reuse_free(&c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seen_set),
        cmocka_unit_test(test_bounded_map_drop),
        cmocka_unit_test(test_ring_shadow_is_lru),
        cmocka_unit_test(test_lru_rows_match_lists),
        cmocka_unit_test(test_exact_bounded_equals_unbounded),
        cmocka_unit_test(test_reuse_capped_equals_uncapped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
