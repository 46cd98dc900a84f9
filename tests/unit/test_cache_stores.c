/*
 * Unit tests of the cache model's write policies (cache/counts.c,
 * cache/exact.c, cache/reuse.c, cache/lru.c): a store-then-load stream
 * worked by hand under both policies — the L1's (written through, not
 * allocated, a resident line discarded: the load after a store misses as
 * "invalidated", a store to a line never loaded leaves it unseen so its
 * first load is compulsory) and the L2's (written back, allocated: the load
 * after a store hits) — with both engines giving the same counts; a store
 * finding its line in flight (a latency miss: a lookup hit, the sectors on
 * their way); the way a discarded line frees, which the exact engine gives
 * to the next fill and the reuse engine's stack does not (the documented
 * difference, on a 3-line cache); the LRU's removal in both of its forms
 * against a plain recency list; and random streams with stores on a fully
 * associative cache that never fills, where the two engines must count
 * alike, request for request, loads and stores each.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cache/exact.h"
#include "cache/geometry.h"
#include "cache/lru.h"
#include "cache/reuse.h"

static struct cache_geom geom(const char *text, enum cache_write w)
{
    struct cache_geom g = {.write = w};
    char msg[256];
    assert_int_equal(cache_geom_parse(text, &g, msg, sizeof msg), 0);
    return g;
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* One request: line, sectors, store. */
struct req {
    uint64_t line;
    uint32_t want;
    int store;
};

/* Runs s through a fresh exact engine and a fresh reuse engine on g (time
 * = position); both counts out, and each request's result below. */
static void run_both(const struct cache_geom *g, const struct cache_timing *tm, const struct req *s, size_t n,
                     struct cache_counts *ce, struct cache_counts *cr, int64_t *below_e, int64_t *below_r)
{
    struct cache_exact e;
    struct cache_reuse r;
    memset(ce, 0, sizeof *ce);
    memset(cr, 0, sizeof *cr);
    assert_int_equal(cache_exact_init(&e, g, tm, 0), 0);
    assert_int_equal(cache_reuse_init(&r, g, tm, 0), 0);
    for (size_t i = 0; i < n; i++) {
        int64_t be = cache_exact_access(&e, s[i].line, s[i].want, i, s[i].store, ce);
        int64_t br = cache_reuse_access(&r, s[i].line, s[i].want, i, s[i].store, cr);
        if (below_e)
            below_e[i] = be;
        if (below_r)
            below_r[i] = br;
    }
    cache_exact_free(&e);
    cache_reuse_free(&r);
}

/* The same stream under the L1's policy and the L2's. */
static const struct req by_hand[] = {
    {1, 1, 1}, /* t0 store, line never loaded */
    {1, 1, 0}, /* t1 load */
    {1, 1, 0}, /* t2 load */
    {1, 1, 1}, /* t3 store, the line resident with its sector */
    {1, 1, 0}, /* t4 load */
    {1, 2, 1}, /* t5 store of sector 1, which the line has not */
    {1, 2, 0}, /* t6 load of sector 1 */
    {2, 1, 0}, /* t7 load of another line */
    {2, 1, 1}, /* t8 store to it */
};
#define BY_HAND (sizeof by_hand / sizeof by_hand[0])

static void test_write_through_by_hand(void **state)
{
    (void)state;
    struct cache_geom g = geom("1K,full,128,32", CACHE_WRITE_THROUGH_NO_ALLOCATE);
    struct cache_timing tm = {0, 0, 8};
    struct cache_counts c[2];
    int64_t below[2][BY_HAND];
    run_both(&g, &tm, by_hand, BY_HAND, &c[0], &c[1], below[0], below[1]);
    for (int k = 0; k < 2; k++) {
        /* t0: no allocation, so t1 is the line's first load: compulsory
         * twice; t2 hits; t3 hits and discards the line, so t4 misses as
         * invalidated; t5 lacks sector 1 (a sector miss) and discards the
         * line t4 refilled, so t6 misses as invalidated; t7 compulsory;
         * t8 hits and discards */
        assert_int_equal(c[k].requests, 9);
        assert_int_equal(c[k].hits, 3);
        assert_int_equal(c[k].miss[CACHE_MISS_COMPULSORY], 3);
        assert_int_equal(c[k].miss[CACHE_MISS_INVALIDATED], 2);
        assert_int_equal(c[k].miss[CACHE_MISS_SECTOR], 1);
        assert_int_equal(c[k].miss[CACHE_MISS_CAPACITY] + c[k].miss[CACHE_MISS_CONFLICT], 0);
        assert_int_equal(c[k].stores.requests, 4);
        assert_int_equal(c[k].stores.hits, 2);   /* t3, t8 */
        assert_int_equal(c[k].invalidations, 3); /* t3, t5, t8 */
        /* every store goes below, and each load that missed: t1, t4, t6, t7 */
        assert_int_equal(c[k].below, 8);
        static const int64_t want_below[BY_HAND] = {1, 1, 0, 1, 1, 2, 2, 1, 1};
        assert_memory_equal(below[k], want_below, sizeof want_below);
    }
}

static void test_write_back_by_hand(void **state)
{
    (void)state;
    struct cache_geom g = geom("1K,full,128,32", CACHE_WRITE_BACK_ALLOCATE);
    struct cache_timing tm = {0, 0, 8};
    struct cache_counts c[2];
    int64_t below[2][BY_HAND];
    run_both(&g, &tm, by_hand, BY_HAND, &c[0], &c[1], below[0], below[1]);
    for (int k = 0; k < 2; k++) {
        /* t0 allocates: t1 .. t4 hit; t5 fetches sector 1 (a sector miss),
         * t6 hits it; t7 compulsory, t8 hits */
        assert_int_equal(c[k].hits, 6);
        assert_int_equal(c[k].miss[CACHE_MISS_COMPULSORY], 2);
        assert_int_equal(c[k].miss[CACHE_MISS_SECTOR], 1);
        assert_int_equal(c[k].miss[CACHE_MISS_INVALIDATED], 0);
        assert_int_equal(c[k].stores.requests, 4);
        assert_int_equal(c[k].stores.hits, 2); /* t3, t8 */
        assert_int_equal(c[k].invalidations, 0);
        static const int64_t want_below[BY_HAND] = {1, 0, 0, 0, 0, 2, 0, 1, 0};
        assert_memory_equal(below[k], want_below, sizeof want_below);
    }
}

/* Latency 3: a store to a line whose fetch is on its way finds its sector
 * there (a lookup hit, counted as a latency miss with its sector pending),
 * is written through all the same and discards the line. */
static void test_store_in_flight(void **state)
{
    (void)state;
    struct cache_geom g = geom("1K,full,128,32", CACHE_WRITE_THROUGH_NO_ALLOCATE);
    struct cache_timing tm = {3, 0, 8};
    static const struct req s[] = {{5, 1, 0}, {5, 1, 1}, {5, 1, 0}, {5, 1, 0}};
    struct cache_counts c[2];
    run_both(&g, &tm, s, 4, &c[0], &c[1], NULL, NULL);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(c[k].stores.latency, 1);
        assert_int_equal(c[k].stores.pending_sectors, 1);
        assert_int_equal(c[k].stores.hits, 0);
        /* t2 misses as invalidated (refetched, ready at 5), t3 merges into that fetch */
        assert_int_equal(c[k].miss[CACHE_MISS_INVALIDATED], 1);
        assert_int_equal(c[k].miss[CACHE_MISS_LATENCY], 2);
        assert_int_equal(c[k].pending_sectors - c[k].stores.pending_sectors, 1);
        assert_int_equal(c[k].invalidations, 1);
        assert_int_equal(c[k].below, 3);
    }
}

/* 3 lines, fully associative: A B C loaded, C discarded by a store, D
 * loaded, then A. The exact engine fills D into C's emptied way, so A is
 * still there (a hit); the reuse engine's stack keeps C's place (A is 3
 * distinct loads deep: a capacity miss). */
static void test_discarded_way(void **state)
{
    (void)state;
    struct cache_geom g = geom("384,full,128,128", CACHE_WRITE_THROUGH_NO_ALLOCATE);
    struct cache_timing tm = {0, 0, 8};
    static const struct req s[] = {{10, 1, 0}, {11, 1, 0}, {12, 1, 0}, {12, 1, 1}, {13, 1, 0}, {10, 1, 0}};
    struct cache_counts ce, cr;
    int64_t be[6], br[6];
    run_both(&g, &tm, s, 6, &ce, &cr, be, br);
    assert_int_equal(be[5], 0);
    assert_int_equal(ce.hits, 2); /* the store, and A */
    assert_int_equal(br[5], 1);
    assert_int_equal(cr.hits, 1);
    assert_int_equal(cr.miss[CACHE_MISS_CAPACITY], 1);
}

/* Removal from an LRU set, rows (<= 16 ways) and lists, against a plain
 * recency array: random inserts, touches and removals on 2 sets. */
static void test_lru_remove(void **state)
{
    (void)state;
    static const uint32_t ways[] = {2, 16, 17, 40};
    uint64_t seed = 7;
    for (size_t w = 0; w < sizeof ways / sizeof ways[0]; w++) {
        uint32_t assoc = ways[w];
        struct cache_lru c;
        assert_int_equal(cache_lru_init(&c, 2, assoc), 0);
        uint32_t ref[2][64], used[2] = {0, 0}; /* most recent first */
        uint32_t *slot = malloc(20000 * sizeof *slot), owner_next = 0; /* owners never reused */
        assert_non_null(slot);
        for (int step = 0; step < 20000; step++) {
            uint32_t set = (uint32_t)(rnd(&seed) & 1), op = (uint32_t)(rnd(&seed) % 3);
            uint32_t *r = ref[set];
            if (op == 0 || used[set] == 0) { /* a new line */
                uint32_t o = owner_next++, ev;
                slot[o] = cache_lru_insert(&c, set, o, &ev);
                uint32_t want = used[set] == assoc ? r[assoc - 1] : CACHE_NONE;
                assert_int_equal(ev, want);
                if (used[set] < assoc)
                    used[set]++;
                memmove(r + 1, r, (used[set] - 1) * sizeof *r);
                r[0] = o;
            } else {
                uint32_t i = (uint32_t)(rnd(&seed) % used[set]), o = r[i];
                if (op == 1)
                    cache_lru_touch(&c, set, slot[o], o);
                else
                    cache_lru_remove(&c, set, slot[o], o);
                memmove(r + i, r + i + 1, (used[set] - i - 1) * sizeof *r);
                if (op == 1) {
                    memmove(r + 1, r, (used[set] - 1) * sizeof *r);
                    r[0] = o;
                } else {
                    used[set]--;
                }
            }
            /* the next victim is the least recent held line, or none */
            uint32_t v = cache_lru_victim(&c, set);
            assert_int_equal(v, used[set] == assoc ? r[assoc - 1] : CACHE_NONE);
        }
        cache_lru_free(&c);
        free(slot);
    }
}

/* Random loads and stores over fewer lines than the cache holds (so no
 * capacity misses, where the engines' handling of a discarded line's room
 * could differ): with latency, merging, sectors and MSHRs, both policies,
 * the two engines count exactly alike, request for request. */
static void test_engines_agree_with_stores(void **state)
{
    (void)state;
    uint64_t seed = 99;
    for (int round = 0; round < 8; round++) {
        enum cache_write w = round & 1 ? CACHE_WRITE_BACK_ALLOCATE : CACHE_WRITE_THROUGH_NO_ALLOCATE;
        struct cache_geom g = geom("8K,full,128,32", w); /* 64 lines */
        struct cache_timing tm = {(uint32_t)(round / 2) * 5, round >= 4 ? 4u : 0u, 1 + (uint32_t)round % 3};
        enum { N = 20000 };
        struct req *s = malloc(N * sizeof *s);
        assert_non_null(s);
        for (size_t i = 0; i < N; i++)
            s[i] = (struct req){rnd(&seed) % 60, 1u << (rnd(&seed) % 4), rnd(&seed) % 3 == 0};
        struct cache_counts ce, cr;
        int64_t *be = malloc(N * sizeof *be), *br = malloc(N * sizeof *br);
        assert_non_null(be);
        assert_non_null(br);
        run_both(&g, &tm, s, N, &ce, &cr, be, br);
        assert_memory_equal(be, br, N * sizeof *be);
        assert_memory_equal(&ce, &cr, sizeof ce);
        assert_true(ce.stores.requests > N / 4);
        assert_true(w == CACHE_WRITE_BACK_ALLOCATE ? ce.invalidations == 0 : ce.invalidations > 0);
        free(s);
        free(be);
        free(br);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_through_by_hand), cmocka_unit_test(test_write_back_by_hand),
        cmocka_unit_test(test_store_in_flight),       cmocka_unit_test(test_discarded_way),
        cmocka_unit_test(test_lru_remove),            cmocka_unit_test(test_engines_agree_with_stores),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
