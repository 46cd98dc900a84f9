/*
 * The L1 set search, reasoning half (see l1_sets.h): from the index bits
 * to the set-index function, its confirmation on random addresses, the
 * checks, and the verdict with the document's summary members.
 *
 * DESIGN
 * A set-associative cache with 2^r sets maps an address to r set-index
 * bits. If each of them is the XOR of some address bits (modulo indexing
 * is the case of one bit each), the set of an address is a linear function
 * f over GF(2), and two lines share a set exactly when f of their XOR is 0;
 * the bit tests already found the index bits, those b with f(2^b) != 0.
 * Taking them from the lowest up, a bit whose image is the XOR of the
 * images of some bits kept so far is a relation (found by timing line 0
 * against 2^b XOR those bits: they collide), any other is kept: the kept
 * bits are a basis, their count r, and set-index bit j is the parity of
 * the address ANDed with mask j = the kept bit j and every related bit
 * whose relation names it. That is one representative of f: sets are
 * named up to a renaming, which changes no collision. Subsets are tried
 * by size, so a modulo mapping costs one test per pair of index bits at
 * most. Nothing here measures except through l1s_same_set.
 * The confirmation draws CONFIRM_COUNT addresses from a fixed seed, half
 * of them forced into line 0's set by the masks, and times each.
 */
#include "probes/l1_sets_internal.h"

#include <stdio.h>
#include <string.h>

#define CONFIRM_COUNT 32
#define CONFIRM_SEED 0x6c3173657473ull   /* "l1sets" */
#define CAPACITY_TOL 0.10                /* sets x ways against the lines that fit */

/* ---- the basis ---------------------------------------------------------------- */

/* The address bits of basis positions t (a bit set of positions). */
static uint64_t basis_bits(const struct l1s *s, uint32_t t)
{
    uint64_t d = 0;
    for (int j = 0; j < s->nbasis; j++)
        if (t >> j & 1)
            d |= (uint64_t)1 << s->basis[j];
    return d;
}

/* Looks for the basis positions whose XOR image equals bit b's, smallest
 * sets first: *found 1 and *t those positions, or 0. */
static int find_relation(struct l1s *s, int b, int *found, uint32_t *t, json_t *tests)
{
    uint32_t all = (1u << s->nbasis) - 1;
    *found = 0;
    for (int size = 1; size <= s->nbasis; size++)
        for (uint32_t sub = 1; sub <= all; sub++) {
            enum l1s_verdict v;
            json_t *test;
            if (__builtin_popcount(sub) != size)
                continue;
            uint64_t d = ((uint64_t)1 << b) ^ basis_bits(s, sub);
            if (l1s_same_set(s, d, &v, &test) < 0)
                return -1;
            json_object_set_new(test, "offset", json_integer((json_int_t)d));
            json_array_append_new(tests, test);
            if (v == L1S_UNCLEAR)
                return l1s_undetermined(s, "index bit %d against 0x%llx: the timing lies "
                                           "between the controls (see relations)", b,
                                        (unsigned long long)d);
            if (v == L1S_COLLIDES) {
                *found = 1, *t = sub;
                return 0;
            }
        }
    return 0;
}

static json_t *bits_json(const struct l1s *s, uint32_t t)
{
    json_t *a = json_array();
    for (int j = 0; j < s->nbasis; j++)
        if (t >> j & 1)
            json_array_append_new(a, json_integer(s->basis[j]));
    return a;
}

int l1s_index_find(struct l1s *s)
{
    json_t *rels = json_array();
    json_object_set_new(s->doc, "relations", rels);
    for (int b = s->line_shift; b <= L1S_TOP_BIT; b++) {
        int found;
        uint32_t t = 0;
        json_t *tests = json_array();
        if (s->role[b] != L1S_INDEX) {
            json_decref(tests);
            continue;
        }
        if (find_relation(s, b, &found, &t, tests) < 0) {
            json_array_append_new(rels, json_pack("{s:i,s:n,s:o}", "bit", b, "equals", "tests",
                                                  tests));
            return -1;
        }
        if (found) {
            s->rel[b] = t;
            json_array_append_new(rels, json_pack("{s:i,s:o,s:o}", "bit", b, "equals",
                                                  bits_json(s, t), "tests", tests));
            continue;
        }
        json_decref(tests);
        if (s->nbasis == L1S_MAX_INDEX_BITS)
            return l1s_undetermined(s, "more than %d independent set-index bits: more sets "
                                       "than the search follows", L1S_MAX_INDEX_BITS);
        s->rel[b] = 1u << s->nbasis;
        s->basis[s->nbasis++] = b;
    }
    return 0;
}

/* Mask j: the address bits whose image has set-index bit j. */
static uint64_t mask_of(const struct l1s *s, int j)
{
    uint64_t m = 0;
    for (int b = 0; b < L1S_BITS; b++)
        if (s->role[b] == L1S_INDEX && (s->rel[b] >> j & 1))
            m |= (uint64_t)1 << b;
    return m;
}

/* Set-index bits of offset d as a bit set (0: line 0's set). */
static uint32_t set_of(const struct l1s *s, uint64_t d)
{
    uint32_t set = 0;
    for (int j = 0; j < s->nbasis; j++)
        set |= (uint32_t)__builtin_parityll(d & mask_of(s, j)) << j;
    return set;
}

/* ---- the confirmation ------------------------------------------------------- */

static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Whether offset d is one of the conflict set's lines (not a new line). */
static int in_conflict_set(const struct l1s *s, uint64_t d)
{
    return d % s->stride == 0 && d / s->stride >= 1 && d / s->stride <= s->ways;
}

/* A random line offset above the line bits, in line 0's set (collide) or
 * not, and not one of the conflict set's lines. */
static uint64_t draw(const struct l1s *s, uint64_t *rng, int collide)
{
    uint64_t pool = (((uint64_t)1 << (L1S_TOP_BIT + 1)) - 1) & ~(((uint64_t)1 << s->line_shift) - 1);
    for (;;) {
        uint64_t d = next_random(rng) & pool;
        uint32_t set = set_of(s, d);
        if (collide)
            d ^= basis_bits(s, set);          /* basis bit j moves only set bit j */
        else if (set == 0)
            d ^= (uint64_t)1 << s->basis[next_random(rng) % (uint64_t)s->nbasis];
        if (d != 0 && !in_conflict_set(s, d))
            return d;
    }
}

int l1s_confirm(struct l1s *s)
{
    uint64_t rng = CONFIRM_SEED;
    int agree = 0, unclear = 0, tested = 0;
    json_t *wrong = json_array();
    json_t *o = json_pack("{s:o}", "disagree", wrong);
    json_object_set_new(s->doc, "confirmation", o);
    for (int i = 0; i < CONFIRM_COUNT; i++) {
        int collide = s->nbasis == 0 || i % 2 == 0;
        uint64_t d = draw(s, &rng, collide);
        enum l1s_verdict v;
        json_t *test;
        if (l1s_same_set(s, d, &v, &test) < 0)
            break;
        tested++;
        if (v == L1S_UNCLEAR)
            unclear++;
        else if ((v == L1S_COLLIDES) == collide)
            agree++;
        if (v != L1S_UNCLEAR && (v == L1S_COLLIDES) != collide) {
            json_object_set_new(test, "offset", json_integer((json_int_t)d));
            json_object_set_new(test, "predicted", json_string(collide ? "same set" : "another set"));
            json_array_append_new(wrong, test);
        } else {
            json_decref(test);
        }
    }
    json_object_set_new(o, "tested", json_integer(tested));
    json_object_set_new(o, "agree", json_integer(agree));
    json_object_set_new(o, "ambiguous", json_integer(unclear));
    if (s->fail[0])
        return -1;
    if (agree < tested - unclear)
        return l1s_undetermined(s, "the function found mispredicts %d of %d random addresses "
                                   "(see confirmation): the mapping is not this XOR of address "
                                   "bits", tested - unclear - agree, tested);
    if (unclear)
        return l1s_undetermined(s, "%d of %d random addresses gave timings between the "
                                   "controls (see confirmation)", unclear, tested);
    return 0;
}

/* ---- checks and the verdict ------------------------------------------------------ */

/* Modulo: set-index bit j is address bit line_shift + j alone. */
static int is_modulo(const struct l1s *s)
{
    for (int j = 0; j < s->nbasis; j++)
        if (s->basis[j] != s->line_shift + j ||
            mask_of(s, j) != (uint64_t)1 << (s->line_shift + j))
            return 0;
    return 1;
}

static void add_check(struct l1s *s, json_t *a, const char *name, int ok, const char *detail)
{
    json_array_append_new(a, json_pack("{s:s,s:b,s:s}", "name", name, "ok", ok, "detail", detail));
    if (!ok)
        l1s_undetermined(s, "check %s failed: %s", name, detail);
}

void l1s_checks(struct l1s *s)
{
    char d[256];
    json_t *a = json_array();
    json_object_set_new(s->doc, "checks", a);
    if (l1s_stopped(s))
        return;
    uint64_t sets = (uint64_t)1 << s->nbasis, lines = sets * s->ways;
    int ls = s->line_shift;
    if (ls >= L1S_MIN_STRIDE_BIT && ls <= L1S_MAX_STRIDE_BIT && s->fit[ls].hi) {
        double fit = s->fit[ls].lo;
        snprintf(d, sizeof d, "%llu sets x %u ways = %llu lines; %u lines fit one line apart",
                 (unsigned long long)sets, s->ways, (unsigned long long)lines, s->fit[ls].lo);
        add_check(s, a, "capacity", lines >= fit * (1 - CAPACITY_TOL) &&
                                    lines <= fit * (1 + CAPACITY_TOL), d);
    }
    if (is_modulo(s)) {
        snprintf(d, sizeof d, "the collision stride %llu bytes = %llu sets x %u-byte lines",
                 (unsigned long long)s->stride, (unsigned long long)sets, 1u << ls);
        add_check(s, a, "modulo_stride", s->stride == sets << ls, d);
    }
}

static json_t *masks_json(const struct l1s *s, json_t **bits, char *option, size_t len)
{
    json_t *masks = json_array();
    size_t n = (size_t)snprintf(option, len, "mask:%s", s->nbasis ? "" : "none");
    *bits = json_array();
    for (int j = 0; j < s->nbasis; j++) {
        uint64_t m = mask_of(s, j);
        json_t *one = json_array();
        json_array_append_new(masks, json_integer((json_int_t)m));
        for (int b = 0; b < L1S_BITS; b++)
            if (m >> b & 1)
                json_array_append_new(one, json_integer(b));
        json_array_append_new(*bits, one);
        if (n < len)
            n += (size_t)snprintf(option + n, len - n, "%s0x%llx", j ? "," : "",
                                  (unsigned long long)m);
    }
    return masks;
}

static json_t *set_index_json(const struct l1s *s)
{
    char option[256], text[256];
    json_t *bits, *masks = masks_json(s, &bits, option, sizeof option);
    int modulo = is_modulo(s);
    if (s->nbasis == 0)
        snprintf(text, sizeof text, "one set: any line may take any way (fully associative)");
    else if (modulo)
        snprintf(text, sizeof text, "modulo: the set is address bits %d..%d (line mod %d)",
                 s->line_shift, s->line_shift + s->nbasis - 1, 1 << s->nbasis);
    else
        snprintf(text, sizeof text, "xor: set-index bit j is the parity of the address AND "
                                    "masks[j] (%d bits, %d sets)", s->nbasis, 1 << s->nbasis);
    return json_pack("{s:s,s:o,s:o,s:s,s:s}", "function", modulo ? "modulo" : "xor", "masks",
                     masks, "bits", bits, "option", option, "text", text);
}

/* An integer member, or null while unknown (0). */
static json_t *known(uint64_t v) { return v ? json_integer((json_int_t)v) : json_null(); }

void l1s_verdict(struct l1s *s)
{
    int done = !l1s_stopped(s);
    uint64_t line = s->line_shift >= 0 ? (uint64_t)1 << s->line_shift : 0;
    uint64_t sets = done ? (uint64_t)1 << s->nbasis : 0;
    json_object_set_new(s->doc, "status", json_string(done ? "determined" : "not determined"));
    json_object_set_new(s->doc, "reason", done ? json_null() : json_string(s->why));
    json_object_set_new(s->doc, "line_bytes", known(line));
    json_object_set_new(s->doc, "fill_bytes", known(s->fill_bytes));
    json_object_set_new(s->doc, "sets", known(sets));
    json_object_set_new(s->doc, "ways", known(s->ways));
    json_object_set_new(s->doc, "capacity_bytes", known(sets * s->ways * line));
    json_object_set_new(s->doc, "collision_stride_bytes", known(s->stride));
    json_object_set_new(s->doc, "set_index", done ? set_index_json(s) : json_null());
}

/* ---- reading a result back ---------------------------------------------------- */

int l1s_masks_from_json(const json_t *doc, uint64_t *masks, size_t max, size_t *n,
                        uint32_t *line_bytes, char *err, size_t errlen)
{
    const json_t *si = json_object_get(doc, "set_index"), *m = json_object_get(si, "masks");
    const json_t *line = json_object_get(doc, "line_bytes"), *v;
    const char *status = json_string_value(json_object_get(doc, "status"));
    size_t i;
    if (json_is_string(json_object_get(doc, "error"))) {
        snprintf(err, errlen, "the L1 set search failed: %s",
                 json_string_value(json_object_get(doc, "error")));
        return -1;
    }
    if (!status || strcmp(status, "determined") != 0) {
        const char *why = json_string_value(json_object_get(doc, "reason"));
        snprintf(err, errlen, "the L1 set mapping was not determined: %s",
                 why ? why : "no reason given");
        return -1;
    }
    if (!json_is_array(m) || json_array_size(m) > max || !json_is_integer(line) ||
        json_integer_value(line) < 1 || json_integer_value(line) > UINT32_MAX) {
        snprintf(err, errlen, "the L1 set mapping has no usable set_index.masks and line_bytes");
        return -1;
    }
    json_array_foreach(m, i, v) {
        if (!json_is_integer(v) || json_integer_value(v) <= 0) {
            snprintf(err, errlen, "set_index.masks[%zu] is not a positive integer", i);
            return -1;
        }
        masks[i] = (uint64_t)json_integer_value(v);
    }
    *n = json_array_size(m);
    *line_bytes = (uint32_t)json_integer_value(line);
    return 0;
}
