/*
 * Unit tests of the L2's dense forms (cache/lineid.c, the line map's dense
 * mode, cache_exact_init_dense, cache_reuse_init_dense) and of the reuse
 * engine's pending per-distance counts: line ids against a plain table
 * (first-sight order, stable across the table's growth); the dense map's
 * seen/find/drop; the dense engines against the hashed ones on random
 * streams — set-associative rows and lists, xor indexing, fully
 * associative, latency, MSHRs, stores under both write policies — equal
 * request for request (what goes below) and in every count, histogram and
 * correction; and the distance counts complete once the correction is
 * made, whether fewer or more were made than wait to be added.
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
#include "cache/lineid.h"
#include "cache/linemap.h"
#include "cache/reuse.h"

static struct cache_geom geom(const char *text, enum cache_set_index index, enum cache_write write)
{
    struct cache_geom g = {0};
    char msg[256];
    g.index = index;
    g.write = write;
    assert_int_equal(cache_geom_parse(text, &g, msg, sizeof msg), 0);
    return g;
}

/* xorshift64*: fixed streams. */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* Ids are handed out 0, 1, 2 ... in the order lines are first met, and a
 * line keeps its id while the table doubles many times. */
static void test_lineid_first_sight(void **state)
{
    (void)state;
    enum { UNIVERSE = 60000 };
    uint32_t *ref = malloc(UNIVERSE * sizeof *ref);
    assert_non_null(ref);
    for (uint32_t i = 0; i < UNIVERSE; i++)
        ref[i] = CACHE_NONE;
    struct cache_lineid m;
    assert_int_equal(cache_lineid_init(&m, 0), 0);
    uint64_t seed = 5;
    uint32_t next = 0;
    for (int i = 0; i < 300000; i++) {
        uint32_t k = (uint32_t)(rnd(&seed) % UNIVERSE);
        uint64_t line = (uint64_t)k * 1000003u + (k & 1 ? 0x7f0000000000ull : 0); /* spread, two regions */
        cache_lineid_prefetch(&m, line);
        uint32_t id = cache_lineid_get(&m, line);
        if (ref[k] == CACHE_NONE)
            ref[k] = next++;
        assert_int_equal(id, ref[k]);
        assert_int_equal(m.n, next);
    }
    assert_true(next > UNIVERSE / 2);
    cache_lineid_free(&m);
    free(ref);
}

/* The dense map: a get marks an id seen (fresh once), find sees only seen
 * ids, a drop clears the slot and keeps the rest. */
static void test_dense_map(void **state)
{
    (void)state;
    struct cache_linemap m;
    int fresh;
    assert_int_equal(cache_linemap_init_dense(&m, 1000), 0);
    assert_int_equal(cache_linemap_find(&m, 77), CACHE_NONE);
    assert_int_equal(cache_linemap_get(&m, 77, &fresh), 77);
    assert_int_equal(fresh, 1);
    assert_int_equal(m.lines[77].slot, CACHE_NONE);
    assert_int_equal(m.lines[77].shadow, CACHE_NONE);
    m.lines[77].slot = 5;
    m.lines[77].sectors = 3;
    assert_int_equal(cache_linemap_get(&m, 77, &fresh), 77);
    assert_int_equal(fresh, 0);
    assert_int_equal(cache_linemap_find(&m, 77), 77);
    cache_linemap_drop(&m, 77);
    assert_int_equal(m.lines[77].slot, CACHE_NONE);
    assert_int_equal(m.lines[77].sectors, 3);
    assert_int_equal(cache_linemap_find(&m, 77), 77); /* still seen */
    assert_int_equal(cache_linemap_get(&m, 999, &fresh), 999);
    assert_int_equal(cache_linemap_held(&m), 2);
    cache_linemap_reset(&m);
    assert_int_equal(cache_linemap_find(&m, 77), CACHE_NONE);
    assert_int_equal(cache_linemap_held(&m), 0);
    cache_linemap_free(&m);
}

/* A random skewed request: a line (some far apart, most in a hot range),
 * its sectors, a store one time in five. */
static void request(uint64_t *seed, uint32_t universe, uint32_t spl, uint64_t *line, uint32_t *want, int *store)
{
    uint64_t v = rnd(seed);
    *line = ((v & 1) ? (v >> 8) % (universe / 8 + 1) : (v >> 8) % universe) * 5 + ((v >> 40) & 1 ? 1ull << 33 : 0);
    *want = 1u << ((v >> 4) % spl);
    *store = (v >> 50) % 5 == 0;
}

struct variant {
    const char *g;
    enum cache_set_index index;
    enum cache_write write;
};

static const struct variant variants[] = {
    {"16K,4,128,32", CACHE_SET_MODULO, CACHE_WRITE_BACK_ALLOCATE},     /* rows */
    {"32K,16,128,32", CACHE_SET_XOR, CACHE_WRITE_BACK_ALLOCATE},       /* rows, xor */
    {"48K,16,128,32", CACHE_SET_MODULO, CACHE_WRITE_BACK_ALLOCATE},    /* 24 sets: not a power of two */
    {"16K,32,128,32", CACHE_SET_MODULO, CACHE_WRITE_BACK_ALLOCATE},    /* lists */
    {"8K,full,128,32", CACHE_SET_MODULO, CACHE_WRITE_BACK_ALLOCATE},   /* one set, lists */
    {"16K,4,128,32", CACHE_SET_MODULO, CACHE_WRITE_THROUGH_NO_ALLOCATE},
    {"8K,full,128,32", CACHE_SET_MODULO, CACHE_WRITE_THROUGH_NO_ALLOCATE},
};
static const struct cache_timing timings[] = {{0, 0, 8}, {30, 16, 4}};

/* The exact engine over dense ids and over line numbers (bounded, as the
 * L2 was, and unbounded): the same fetches, request for request, and the
 * same counts. */
static void exact_case(const struct cache_geom *g, const struct cache_timing *tm, uint64_t *seed)
{
    struct cache_exact d, b, u;
    struct cache_lineid ids;
    struct cache_counts cd = {0}, cb = {0}, cu = {0};
    enum { N = 40000 };
    assert_int_equal(cache_lineid_init(&ids, 0), 0);
    assert_int_equal(cache_exact_init_dense(&d, g, tm, N), 0);
    assert_int_equal(cache_exact_init(&b, g, tm, 1), 0);
    assert_int_equal(cache_exact_init(&u, g, tm, 0), 0);
    for (uint64_t t = 0; t < N; t++) {
        uint64_t line;
        uint32_t want;
        int store;
        request(seed, g->lines * 4, g->sectors_per_line, &line, &want, &store);
        uint32_t id = cache_lineid_get(&ids, line), set = cache_set_of(g, line);
        for (int s = 0; s < 4; s++)
            cache_exact_prefetch_set(&d, id, set, s); /* reads only */
        int64_t fd = cache_exact_access_set(&d, id, set, want, t, store, &cd);
        assert_int_equal(fd, cache_exact_access(&b, line, want, t, store, &cb));
        assert_int_equal(fd, cache_exact_access(&u, line, want, t, store, &cu));
    }
    assert_memory_equal(&cd, &cb, sizeof cd);
    assert_memory_equal(&cd, &cu, sizeof cd);
    assert_true(cd.miss[CACHE_MISS_CAPACITY] > 0 && cd.miss[CACHE_MISS_COMPULSORY] > 0);
    assert_true(cd.stores.requests > 0);
    if (g->sets > 1)
        assert_true(cd.miss[CACHE_MISS_CONFLICT] > 0);
    if (g->write == CACHE_WRITE_THROUGH_NO_ALLOCATE)
        assert_true(cd.invalidations > 0 && cd.miss[CACHE_MISS_INVALIDATED] > 0);
    cache_exact_free(&d);
    cache_exact_free(&b);
    cache_exact_free(&u);
    cache_lineid_free(&ids);
}

/* The capped reuse engine over dense ids and over line numbers: the same
 * fetches, counts, histogram (beyond included), correction and
 * per-distance counts. */
static void reuse_case(const struct cache_geom *g, const struct cache_timing *tm, uint64_t *seed)
{
    struct cache_reuse d, h;
    struct cache_lineid ids;
    struct cache_counts cd = {0}, ch = {0};
    enum { N = 60000 };
    assert_int_equal(cache_lineid_init(&ids, 0), 0);
    assert_int_equal(cache_reuse_init_dense(&d, g, tm, 1, N), 0);
    assert_int_equal(cache_reuse_init(&h, g, tm, 1), 0);
    for (uint64_t t = 0; t < N; t++) {
        uint64_t line;
        uint32_t want;
        int store;
        request(seed, (uint32_t)h.span * 3, g->sectors_per_line, &line, &want, &store);
        uint32_t id = cache_lineid_get(&ids, line);
        for (int s = 0; s < 4; s++)
            cache_reuse_prefetch(&d, id, s);
        assert_int_equal(cache_reuse_access(&d, id, want, t, store, &cd),
                         cache_reuse_access(&h, line, want, t, store, &ch));
    }
    assert_memory_equal(&cd, &ch, sizeof cd);
    assert_memory_equal(&d.hist, &h.hist, sizeof d.hist);
    if (g->write == CACHE_WRITE_BACK_ALLOCATE)
        assert_true(d.hist.beyond > 0);
    struct cache_conflict p;
    struct cache_correction kd, kh;
    assert_int_equal(cache_conflict_init(&p, g), 0);
    cache_reuse_correction(&d, &p, &kd);
    cache_reuse_correction(&h, &p, &kh);
    assert_memory_equal(&kd, &kh, sizeof kd);
    assert_memory_equal(d.at, h.at, d.span * sizeof *d.at);
    assert_memory_equal(d.st_at, h.st_at, d.span * sizeof *d.st_at);
    cache_conflict_free(&p);
    cache_reuse_free(&d);
    cache_reuse_free(&h);
    cache_lineid_free(&ids);
}

/* Both engines, dense against hashed, under every variant and timing. */
static void test_dense_equals_hashed(void **state)
{
    (void)state;
    uint64_t seed = 11;
    for (size_t i = 0; i < sizeof variants / sizeof *variants; i++)
        for (size_t j = 0; j < sizeof timings / sizeof *timings; j++) {
            struct cache_geom g = geom(variants[i].g, variants[i].index, variants[i].write);
            exact_case(&g, &timings[j], &seed);
            reuse_case(&g, &timings[j], &seed);
        }
}

/* k lines read round and round on a fully associative cache of more
 * lines: every reuse is at distance k - 1, so once the correction has
 * been made at[k-1] holds every reuse — a few (fewer than wait to be
 * added) or many. */
static void test_distance_counts_complete(void **state)
{
    (void)state;
    static const uint32_t reuses[] = {3, 5000};
    struct cache_geom g = geom("8K,full,128,32", CACHE_SET_MODULO, CACHE_WRITE_BACK_ALLOCATE);
    struct cache_timing tm = {0, 0, 8};
    const uint32_t k = 10;
    for (size_t i = 0; i < sizeof reuses / sizeof *reuses; i++) {
        struct cache_reuse r;
        struct cache_counts c = {0};
        assert_int_equal(cache_reuse_init(&r, &g, &tm, 0), 0);
        for (uint64_t t = 0; t < k + reuses[i]; t++)
            cache_reuse_access(&r, t % k, 1, t, 0, &c);
        struct cache_conflict p;
        struct cache_correction kc;
        assert_int_equal(cache_conflict_init(&p, &g), 0);
        cache_reuse_correction(&r, &p, &kc);
        assert_int_equal(c.hits, reuses[i]);
        assert_int_equal(r.at[k - 1].n, reuses[i]);
        assert_int_equal(r.at[k - 1].sectors, reuses[i]);
        uint64_t all = 0;
        for (uint64_t d = 0; d < r.span; d++)
            all += r.at[d].n;
        assert_int_equal(all, reuses[i]);
        /* a second correction adds nothing twice */
        cache_reuse_correction(&r, &p, &kc);
        assert_int_equal(r.at[k - 1].n, reuses[i]);
        cache_conflict_free(&p);
        cache_reuse_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lineid_first_sight),
        cmocka_unit_test(test_dense_map),
        cmocka_unit_test(test_dense_equals_hashed),
        cmocka_unit_test(test_distance_counts_complete),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
