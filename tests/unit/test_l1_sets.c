/*
 * Unit tests of the L1 set search (probes/l1_sets_search.c,
 * l1_sets_index.c) on simulated caches: the timings are made by a
 * set-associative cache whose mapping the test chose, and the search must
 * find that mapping from them, or say it cannot.
 *
 * DESIGN
 * The simulator is the search's chase operation (struct l1s_ops) done in
 * software, with the GPU's semantics (l1_sets.h): a fresh L1 per chase,
 * mem_chase_steps(n) loads of the ring to warm it and as many timed; a
 * load costs `hit` cycles when its sector is in the cache, `miss` when
 * not (always for .cg), and a chase's mean gets a little noise from a
 * fixed seed. Lines are 128 bytes of four 32-byte sectors, filled by
 * sector, replaced LRU (or at random). The set of a line is the parity of
 * the address under each of the test's masks, or a function the test
 * gives. The caches are small (32 KiB), so the search runs in moments,
 * but nothing in the search knows their size. Cases:
 *   - modulo: 4 sets x 64 ways over address bits 7..8;
 *   - xor: 16 sets x 16 ways, set bit j = address bit 7+j XOR bit 11+j;
 *   - the cache model's own xor function (cache_set_of, 4 sets x 64 ways):
 *     the masks found, given back to the cache model, place every line of
 *     the region where its xor does;
 *   - fully associative: one set;
 * and the inconclusive ones, which must end "not determined" with a reason
 * and no set_index: loads the L1 does not hold, timings drowned in noise,
 * mappings that are no XOR of address bits (a hash of the whole line; a
 * modulo one that two high bits together flip, which only the random
 * addresses of the confirmation can show), random replacement, and one
 * bit whose timings stay between the controls. A chase
 * that fails ends the search with its reason. Every document, whatever its
 * verdict, must pass the store's check of the memory result. L1S_DUMP=1 in the
 * environment prints every document the search wrote.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/geometry.h"
#include "db/results.h"
#include "probes/l1_sets.h"
#include "probes/memory.h"

#define LINE_SHIFT 7
#define SECTOR_SHIFT 5
#define HIT 33.0
#define MISS 280.0

/* ---- the simulated cache -------------------------------------------------- */

struct way {
    uint64_t tag, stamp;
    uint32_t sectors;
    int valid;
};

struct sim {
    uint32_t sets, ways;
    uint64_t masks[8];
    int nmasks;
    uint32_t (*set_fn)(uint64_t addr);     /* overrides the masks when set */
    int random_replacement;
    int uncached;                          /* .ca behaves as .cg */
    double noise;                          /* a chase's mean moves by up to this */
    int fail_after;                        /* > 0: that chase fails */
    uint64_t muddled;                      /* != 0: a list holding it times halfway */
    uint64_t rng, clock;
    long chases;
    struct way *w;
};

static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint32_t set_of(const struct sim *m, uint64_t addr)
{
    uint32_t set = 0;
    if (m->set_fn)
        return m->set_fn(addr) % m->sets;
    for (int j = 0; j < m->nmasks; j++)
        set |= (uint32_t)__builtin_parityll(addr & m->masks[j]) << j;
    return set;
}

/* One load: 1 when its sector was there. */
static int access_line(struct sim *m, uint64_t addr)
{
    struct way *set = &m->w[(size_t)set_of(m, addr) * m->ways];
    uint64_t tag = addr >> LINE_SHIFT;
    uint32_t sector = 1u << ((addr >> SECTOR_SHIFT) & 3);
    struct way *victim = NULL;
    m->clock++;
    for (uint32_t i = 0; i < m->ways; i++) {
        struct way *w = &set[i];
        if (w->valid && w->tag == tag) {
            int hit = (w->sectors & sector) != 0;
            w->sectors |= sector;
            w->stamp = m->clock;
            return hit;
        }
        if (!w->valid && !victim)
            victim = w;
    }
    if (!victim && m->random_replacement)
        victim = &set[next_rand(&m->rng) % m->ways];
    if (!victim) {
        victim = &set[0];
        for (uint32_t k = 1; k < m->ways; k++)
            if (set[k].stamp < victim->stamp)
                victim = &set[k];
    }
    *victim = (struct way){tag, m->clock, sector, 1};
    return 0;
}

static int sim_chase(void *ctx, const uint64_t *offs, size_t n, int cached, double *cycles,
                     char *err, size_t errlen)
{
    struct sim *m = ctx;
    unsigned steps = mem_chase_steps(n);
    size_t misses = 0;
    assert_true(n >= 1 && n <= L1S_MAX_LIST);
    for (size_t i = 0; i < n; i++)
        assert_true(offs[i] % 8 == 0 && offs[i] < ((uint64_t)1 << L1S_REGION_BITS));
    if (m->fail_after && ++m->chases >= m->fail_after) {
        snprintf(err, errlen, "simulated launch failure");
        return -1;
    }
    memset(m->w, 0, (size_t)m->sets * m->ways * sizeof *m->w);
    for (size_t i = 0; i < 2 * (size_t)steps; i++) {
        int hit = access_line(m, offs[i % n]);
        if (i >= steps && !(hit && cached && !m->uncached))
            misses++;
    }
    double u = (double)(next_rand(&m->rng) >> 11) / 9007199254740992.0;
    *cycles = HIT + (MISS - HIT) * (double)misses / steps + m->noise * (2 * u - 1);
    for (size_t i = 0; m->muddled && i < n; i++)
        if (offs[i] == m->muddled)
            *cycles = (HIT + MISS) / 2;
    return 0;
}

static void sim_init(struct sim *m, uint32_t sets, uint32_t ways)
{
    memset(m, 0, sizeof *m);
    m->sets = sets, m->ways = ways, m->rng = 42;
    m->noise = 1.0;
    m->w = calloc((size_t)sets * ways, sizeof *m->w);
    assert_non_null(m->w);
}

/* The smallest memory document the store's check takes (every figure an
 * error), to carry an l1_sets member. */
#define MEMORY_DOC                                                                             \
    "{\"probe\":\"memory\",\"device\":{\"index\":0,\"uuid\":\"GPU-0\",\"name\":\"sim\","     \
    "\"compute_capability\":\"9.0\"},\"driver_version\":\"0\",\"repeats\":3,"                  \
    "\"clock_mhz\":{\"before\":1.0,\"after\":1.0},\"shared_cycles\":\"x\",\"departure\":\"x\"," \
    "\"curves\":{\"ca\":\"x\",\"cg\":\"x\"},\"levels\":{\"ca\":\"x\",\"cg\":\"x\"},\"wall_s\":1.0}"

/* Every document the search writes is one the store keeps as the memory
 * result's l1_sets (db/results_memory_l1.c): the two must not disagree. */
static void assert_storable(const json_t *l1)
{
    char err[512];
    json_t *doc = json_loads(MEMORY_DOC, 0, NULL);
    assert_non_null(doc);
    json_object_set(doc, "l1_sets", (json_t *)l1);
    if (results_memory_check(doc, err, sizeof err) != 0)
        fail_msg("the store refuses the search's document: %s", err);
    json_decref(doc);
}

static json_t *search(struct sim *m)
{
    struct l1s_ops ops = {sim_chase, m};
    json_t *doc = l1s_search(&ops, 3);
    assert_non_null(doc);
    if (getenv("L1S_DUMP")) {
        json_dumpf(doc, stdout, JSON_INDENT(1));
        printf("\n");
    }
    assert_storable(doc);
    free(m->w);
    return doc;
}

/* ---- reading the document ----------------------------------------------- */

static json_int_t int_of(const json_t *doc, const char *key)
{
    const json_t *v = json_object_get(doc, key);
    if (!json_is_integer(v))
        fail_msg("%s is not an integer (status %s: %s)", key,
                 json_string_value(json_object_get(doc, "status")),
                 json_string_value(json_object_get(doc, "reason")));
    return json_integer_value(v);
}

static void assert_determined(const json_t *doc, int line, int fill, int sets, int ways,
                              const char *function)
{
    const char *status = json_string_value(json_object_get(doc, "status"));
    if (!status || strcmp(status, "determined") != 0)
        fail_msg("not determined: %s", json_string_value(json_object_get(doc, "reason")));
    assert_true(json_is_null(json_object_get(doc, "reason")));
    assert_int_equal(int_of(doc, "line_bytes"), line);
    assert_int_equal(int_of(doc, "fill_bytes"), fill);
    assert_int_equal(int_of(doc, "sets"), sets);
    assert_int_equal(int_of(doc, "ways"), ways);
    assert_int_equal(int_of(doc, "capacity_bytes"), (json_int_t)line * sets * ways);
    assert_string_equal(json_string_value(json_object_get(json_object_get(doc, "set_index"),
                                                          "function")), function);
    assert_true(int_of(doc, "chases") < 8000);
}

/* The masks found, in order. */
static size_t masks_of(const json_t *doc, uint64_t *masks)
{
    size_t n = 0;
    uint32_t line = 0;
    char err[256];
    assert_int_equal(l1s_masks_from_json(doc, masks, 16, &n, &line, err, sizeof err), 0);
    assert_int_equal(line, 1u << LINE_SHIFT);
    return n;
}

static const char *role_of_bit(const json_t *doc, int bit)
{
    size_t i;
    const json_t *b;
    json_array_foreach(json_object_get(doc, "bits"), i, b) {
        if (json_integer_value(json_object_get(b, "bit")) == bit)
            return json_string_value(json_object_get(b, "role"));
    }
    return NULL;
}

static void assert_not_determined(json_t *doc)
{
    char err[256];
    uint64_t masks[16];
    size_t n;
    uint32_t line;
    assert_null(json_object_get(doc, "error"));
    assert_string_equal(json_string_value(json_object_get(doc, "status")), "not determined");
    assert_true(json_is_string(json_object_get(doc, "reason")));
    assert_true(strlen(json_string_value(json_object_get(doc, "reason"))) > 20);
    assert_true(json_is_null(json_object_get(doc, "set_index")));
    assert_true(json_is_null(json_object_get(doc, "sets")));
    assert_int_equal(l1s_masks_from_json(doc, masks, 16, &n, &line, err, sizeof err), -1);
    assert_non_null(strstr(err, "not determined"));
}

/* ---- determined ------------------------------------------------------------ */

static void test_modulo(void **state)
{
    (void)state;
    struct sim m;
    uint64_t masks[16];
    sim_init(&m, 4, 64);
    m.masks[0] = 1u << 7, m.masks[1] = 1u << 8, m.nmasks = 2;
    json_t *doc = search(&m);
    assert_determined(doc, 128, 32, 4, 64, "modulo");
    assert_int_equal(int_of(doc, "collision_stride_bytes"), 512);
    assert_int_equal(masks_of(doc, masks), 2);
    assert_int_equal(masks[0], 0x80);
    assert_int_equal(masks[1], 0x100);
    const json_t *si = json_object_get(doc, "set_index");
    assert_string_equal(json_string_value(json_object_get(si, "option")), "mask:0x80,0x100");
    assert_string_equal(role_of_bit(doc, 5), "offset");
    assert_string_equal(role_of_bit(doc, 6), "offset");
    assert_string_equal(role_of_bit(doc, 7), "index");
    assert_string_equal(role_of_bit(doc, 8), "index");
    assert_string_equal(role_of_bit(doc, 20), "tag");
    const json_t *conf = json_object_get(doc, "confirmation");
    assert_int_equal(json_integer_value(json_object_get(conf, "tested")), 32);
    assert_int_equal(json_integer_value(json_object_get(conf, "agree")), 32);
    json_decref(doc);
}

static void test_xor(void **state)
{
    (void)state;
    struct sim m;
    uint64_t masks[16];
    sim_init(&m, 16, 16);
    for (int j = 0; j < 4; j++)
        m.masks[j] = (1u << (7 + j)) | (1u << (11 + j));
    m.nmasks = 4;
    json_t *doc = search(&m);
    assert_determined(doc, 128, 32, 16, 16, "xor");
    assert_int_equal(int_of(doc, "collision_stride_bytes"), 1 << 15);
    assert_int_equal(masks_of(doc, masks), 4);
    for (int j = 0; j < 4; j++)
        assert_int_equal(masks[j], m.masks[j]);
    assert_int_equal(json_array_size(json_object_get(doc, "relations")), 4);
    json_decref(doc);
}

/* The cache model's xor with 4 sets folds line bits 0..5 in pairs. */
static struct cache_geom model_xor;

static uint32_t model_set(uint64_t addr) { return cache_set_of(&model_xor, addr >> LINE_SHIFT); }

static void test_cache_model_xor_round_trip(void **state)
{
    (void)state;
    struct sim m;
    uint64_t masks[16];
    char msg[256];
    model_xor = (struct cache_geom){
        .size = 32u << 10, .assoc = 64, .line = 128, .sector = 32, .index = CACHE_SET_XOR};
    assert_int_equal(cache_geom_check(&model_xor, msg, sizeof msg), 0);
    sim_init(&m, 4, 64);
    m.set_fn = model_set;
    json_t *doc = search(&m);
    assert_determined(doc, 128, 32, 4, 64, "xor");
    size_t n = masks_of(doc, masks);
    assert_int_equal(n, 2);
    assert_int_equal(masks[0], (1u << 7) | (1u << 9) | (1u << 11));
    assert_int_equal(masks[1], (1u << 8) | (1u << 10) | (1u << 12));
    /* same partition: two lines share a set under one iff under the other */
    for (uint64_t a = 0; a < (1u << 16); a += 128) {
        uint32_t found = 0;
        for (size_t j = 0; j < n; j++)
            found |= (uint32_t)__builtin_parityll(a & masks[j]) << j;
        assert_int_equal(found == 0, model_set(a) == model_set(0));
    }
    json_decref(doc);
}

static void test_fully_associative(void **state)
{
    (void)state;
    struct sim m;
    uint64_t masks[16];
    sim_init(&m, 1, 256);
    json_t *doc = search(&m);
    assert_determined(doc, 128, 32, 1, 256, "modulo");
    assert_int_equal(masks_of(doc, masks), 0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(doc, "set_index"),
                                                          "option")), "mask:none");
    json_decref(doc);
}

/* ---- not determined -------------------------------------------------------- */

static void test_uncached_loads(void **state)
{
    (void)state;
    struct sim m;
    sim_init(&m, 4, 64);
    m.masks[0] = 1u << 7, m.masks[1] = 1u << 8, m.nmasks = 2;
    m.uncached = 1;
    json_t *doc = search(&m);
    assert_not_determined(doc);
    assert_non_null(strstr(json_string_value(json_object_get(doc, "reason")), "does not hold"));
    json_decref(doc);
}

static void test_noise_drowns_the_timings(void **state)
{
    (void)state;
    struct sim m;
    sim_init(&m, 4, 64);
    m.masks[0] = 1u << 7, m.masks[1] = 1u << 8, m.nmasks = 2;
    m.noise = 150.0;
    json_t *doc = search(&m);
    assert_not_determined(doc);
    json_decref(doc);
}

/* A multiplicative hash of the line: no XOR of address bits. */
static uint32_t hashed_set(uint64_t addr)
{
    return (uint32_t)(((addr >> LINE_SHIFT) * 0x9e3779b97f4a7c15ull) >> 62);
}

static void test_nonlinear_hash(void **state)
{
    (void)state;
    struct sim m;
    sim_init(&m, 4, 64);
    m.set_fn = hashed_set;
    json_t *doc = search(&m);
    assert_not_determined(doc);
    json_decref(doc);
}

/* Modulo over bits 7..8, flipped when bits 20 and 21 are both set: no
 * single bit shows it, so the bit tests see a modulo mapping and only the
 * random addresses can tell. */
static uint32_t and_set(uint64_t addr)
{
    uint32_t set = (uint32_t)(addr >> 7) & 3;
    return set ^ (uint32_t)((addr >> 20) & (addr >> 21) & 1);
}

static void test_nonlinear_caught_by_confirmation(void **state)
{
    (void)state;
    struct sim m;
    sim_init(&m, 4, 64);
    m.set_fn = and_set;
    json_t *doc = search(&m);
    assert_not_determined(doc);
    assert_non_null(strstr(json_string_value(json_object_get(doc, "reason")), "mispredicts"));
    assert_string_equal(role_of_bit(doc, 20), "tag");
    const json_t *conf = json_object_get(doc, "confirmation");
    assert_true(json_array_size(json_object_get(conf, "disagree")) > 0);
    json_decref(doc);
}

static void test_random_replacement(void **state)
{
    (void)state;
    struct sim m;
    sim_init(&m, 4, 64);
    m.masks[0] = 1u << 7, m.masks[1] = 1u << 8, m.nmasks = 2;
    m.random_replacement = 1;
    json_t *doc = search(&m);
    assert_not_determined(doc);
    json_decref(doc);
}

/* Every list that holds the line at 2^25 (beyond the stride curve's
 * lists, so only the bit tests meet it) times halfway between a hit and a
 * miss, however often it is measured: that bit cannot be told. */
static void test_unclear_bit(void **state)
{
    (void)state;
    struct sim m;
    sim_init(&m, 4, 64);
    m.masks[0] = 1u << 7, m.masks[1] = 1u << 8, m.nmasks = 2;
    m.muddled = 1u << 25;
    json_t *doc = search(&m);
    assert_not_determined(doc);
    assert_non_null(strstr(json_string_value(json_object_get(doc, "reason")), "bit 25"));
    assert_string_equal(role_of_bit(doc, 25), "ambiguous");
    assert_string_equal(role_of_bit(doc, 24), "tag");
    assert_int_equal(int_of(doc, "line_bytes"), 128);   /* what was found stays */
    assert_int_equal(int_of(doc, "ways"), 64);
    json_decref(doc);
}

static void test_failed_chase(void **state)
{
    (void)state;
    struct sim m;
    char err[256];
    uint64_t masks[16];
    size_t n;
    uint32_t line;
    sim_init(&m, 4, 64);
    m.masks[0] = 1u << 7, m.masks[1] = 1u << 8, m.nmasks = 2;
    m.fail_after = 40;
    json_t *doc = search(&m);
    assert_string_equal(json_string_value(json_object_get(doc, "error")),
                        "simulated launch failure");
    assert_int_equal(json_integer_value(json_object_get(doc, "chases")), 40);
    assert_int_equal(l1s_masks_from_json(doc, masks, 16, &n, &line, err, sizeof err), -1);
    assert_non_null(strstr(err, "simulated launch failure"));
    json_decref(doc);
}

/* ---- the link kernel's text ------------------------------------------------ */

static void test_link_ptx(void **state)
{
    (void)state;
    char *p = l1s_link_ptx(9, 0);
    assert_non_null(p);
    assert_non_null(strstr(p, ".target sm_90"));
    assert_non_null(strstr(p, ".visible .entry link(.param .u64 p_base, .param .u64 p_offs, "
                              ".param .u32 p_n)"));
    /* one store of a pointer, two loads of offsets, nothing cached in L1 */
    assert_non_null(strstr(p, "st.global.u64"));
    assert_null(strstr(strstr(p, "st.global.u64") + 1, "st.global"));
    assert_null(strstr(p, ".ca"));
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_modulo),
        cmocka_unit_test(test_xor),
        cmocka_unit_test(test_cache_model_xor_round_trip),
        cmocka_unit_test(test_fully_associative),
        cmocka_unit_test(test_uncached_loads),
        cmocka_unit_test(test_noise_drowns_the_timings),
        cmocka_unit_test(test_nonlinear_hash),
        cmocka_unit_test(test_nonlinear_caught_by_confirmation),
        cmocka_unit_test(test_random_replacement),
        cmocka_unit_test(test_unclear_bit),
        cmocka_unit_test(test_failed_chase),
        cmocka_unit_test(test_link_ptx),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
