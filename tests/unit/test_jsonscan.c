/*
 * Unit tests of the JSON pre-scan (util/jsonscan.h) and of the request
 * bodies it guards (server/http/json_body.h): values are counted by kind,
 * members and the bytes of strings and keys too; brackets, quotes, colons
 * and commas inside strings (escaped quotes and backslashes among them)
 * count for nothing; a text fed in pieces split anywhere, a byte at a time
 * included, counts as when fed whole; nesting is followed to the limit and
 * refused one bracket past it, where it is. The estimate is above what
 * jansson really allocates, measured through its allocator hooks, for every
 * shape of small values and for the real H200 bundle, and real content
 * (that bundle, the densest real result document) stays well inside the
 * factor json_body allows. json_body takes a body whose estimate is exactly
 * the factor times the limit and refuses one byte more with 413 naming the
 * limit, refuses nesting past JSON_BODY_DEPTH_MAX with 400 and its offset,
 * from memory and from a spooled file alike.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/http/json_body.h"
#include "util/jsonscan.h"

static struct json_scan scan_of(const char *text, int depth_limit, int *rc)
{
    struct json_scan s;
    json_scan_init(&s, depth_limit);
    *rc = json_scan_feed(&s, text, strlen(text));
    return s;
}

static void counts_values_by_kind(void **state)
{
    (void)state;
    int rc;
    struct json_scan s =
        scan_of("{\"a\": [1, 2.5e3, true, null, -0], \"bc\" :\"xyz\",\"d\":{}}\n", 8, &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(s.objects, 2);
    assert_int_equal(s.arrays, 1);
    assert_int_equal(s.scalars, 5);
    assert_int_equal(s.strings, 1);
    assert_int_equal(s.values, 9);
    assert_int_equal(s.members, 3);
    assert_int_equal(s.text, 1 + 2 + 3 + 1); /* a, bc, xyz, d */
    assert_int_equal(s.max_depth, 2);
    assert_int_equal(s.key_text, 1 + 2 + 1);
    assert_int_equal(s.longest, 5);  /* "xyz" and 2.5e3 */
    assert_int_equal(s.largest[0], 5); /* the array's values */
    assert_int_equal(s.largest[1], 3); /* the outer object's members */
    assert_int_equal(json_scan_cost(&s),
                     JSON_SCAN_COST_PARSE + 2 * JSON_SCAN_COST_LEVEL + 5 * JSON_SCAN_COST_TOKEN +
                         5 * JSON_SCAN_COST_GROWTH_ARRAY + 3 * JSON_SCAN_COST_GROWTH_OBJECT +
                         2 * JSON_SCAN_COST_OBJECT + JSON_SCAN_COST_ARRAY +
                         5 * JSON_SCAN_COST_SCALAR + JSON_SCAN_COST_STRING +
                         3 * JSON_SCAN_COST_MEMBER + 7 + 4);
    s = scan_of("[0,0,10]", 8, &rc);
    assert_int_equal(json_scan_cost(&s),
                     JSON_SCAN_COST_PARSE + JSON_SCAN_COST_LEVEL + 2 * JSON_SCAN_COST_TOKEN +
                         3 * JSON_SCAN_COST_GROWTH_ARRAY + JSON_SCAN_COST_ARRAY +
                         3 * JSON_SCAN_COST_SCALAR);
    s = scan_of("{\"a\":[0,0", 8, &rc); /* containers still open count as they stand */
    assert_int_equal(s.largest[0] + s.largest[1], 0);
    assert_int_equal(json_scan_cost(&s), JSON_SCAN_COST_PARSE + 2 * JSON_SCAN_COST_LEVEL +
                                             3 * JSON_SCAN_COST_TOKEN +
                                             2 * JSON_SCAN_COST_GROWTH_ARRAY +
                                             JSON_SCAN_COST_GROWTH_OBJECT +
                                             JSON_SCAN_COST_OBJECT + JSON_SCAN_COST_MEMBER + 2 +
                                             JSON_SCAN_COST_ARRAY + 2 * JSON_SCAN_COST_SCALAR);
    s = scan_of("123456", 8, &rc); /* a token that ends with the text */
    assert_int_equal(json_scan_cost(&s), JSON_SCAN_COST_PARSE + 6 * JSON_SCAN_COST_TOKEN +
                                             JSON_SCAN_COST_SCALAR);
    s = scan_of("", 8, &rc);
    assert_int_equal(s.values, 0);
    assert_int_equal(json_scan_cost(&s), JSON_SCAN_COST_PARSE);
}

/* The texts of the next two tests and what they hold. */
static const struct {
    const char *text;
    unsigned long long values, strings, members, text_bytes;
    int depth;
} tricky[] = {
    /* brackets and an escaped quote inside a string, a backslash ending one */
    {"[\"[{\\\"}]\", \"a\\\\\", \"]]]}}}\"]", 4, 3, 0, 6 + 3 + 6, 1},
    /* a key holding what would end it or open a member */
    {"{\"k,:{[\\\"\":\"v\\\"}\",\"x\":[\"\\\\\\\"[\"]}", 4, 2, 2, 7 + 4 + 1 + 5, 2},
    /* escapes of every kind, \u among them */
    {"[\"\\u005b\\n\\/\\b\",{\"\\\"\":0}]", 4, 1, 1, 12 + 2, 2},
};

static void strings_hide_brackets_and_quotes(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof tricky / sizeof tricky[0]; i++) {
        int rc;
        struct json_scan s = scan_of(tricky[i].text, 2, &rc);
        assert_int_equal(rc, 0);
        assert_int_equal(s.values, tricky[i].values);
        assert_int_equal(s.strings, tricky[i].strings);
        assert_int_equal(s.members, tricky[i].members);
        assert_int_equal(s.text, tricky[i].text_bytes);
        assert_int_equal(s.max_depth, tricky[i].depth);
        assert_int_equal(s.depth, 0);
        assert_int_equal(s.in_string, 0);
        json_t *j = json_loads(tricky[i].text, 0, NULL); /* the texts are JSON */
        assert_non_null(j);
        json_decref(j);
    }
}

static void pieces_split_anywhere(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof tricky / sizeof tricky[0]; i++) {
        const char *t = tricky[i].text;
        size_t n = strlen(t);
        int rc;
        struct json_scan whole = scan_of(t, 2, &rc);
        for (size_t cut = 0; cut <= n; cut++) {
            struct json_scan s;
            json_scan_init(&s, 2);
            assert_int_equal(json_scan_feed(&s, t, cut), 0);
            assert_int_equal(json_scan_feed(&s, t + cut, n - cut), 0);
            assert_memory_equal(&s, &whole, sizeof s);
        }
        struct json_scan s;
        json_scan_init(&s, 2);
        for (size_t k = 0; k < n; k++)
            assert_int_equal(json_scan_feed(&s, t + k, 1), 0);
        assert_memory_equal(&s, &whole, sizeof s);
    }
}

static void depth_at_and_over_the_limit(void **state)
{
    (void)state;
    int rc;
    struct json_scan s = scan_of("[{\"a\":[0]}]", 3, &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(s.max_depth, 3);
    s = scan_of("[{\"a\":[[0]]}]", 3, &rc);
    assert_int_equal(rc, -1);
    assert_int_equal(s.deep_at, 7); /* the fourth bracket */
    assert_int_equal(json_scan_feed(&s, "]", 1), -1); /* over for good */
    /* brackets in a string open nothing */
    s = scan_of("[\"[[[[{{{{\"]", 1, &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(s.max_depth, 1);
    /* closing more than was opened (jansson refuses it) never underflows */
    s = scan_of("]]]}[0]", 1, &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(s.max_depth, 1);
    /* the limit is clamped into what the scanner can follow */
    char deep[2 * JSON_SCAN_DEPTH_MAX + 4];
    memset(deep, '[', JSON_SCAN_DEPTH_MAX + 1);
    deep[JSON_SCAN_DEPTH_MAX + 1] = '\0';
    s = scan_of(deep, 100000, &rc);
    assert_int_equal(rc, -1);
    assert_int_equal(s.deep_at, JSON_SCAN_DEPTH_MAX);
    s = scan_of("[", 0, &rc);
    assert_int_equal(rc, 0);
}

/* ---- the estimate against jansson's allocations ------------------------- */

/* What jansson holds now and at most, counted by its allocator hooks in
 * the chunks of glibc's heap (the size asked for and an 8-byte header,
 * rounded up to 16 bytes, 32 at least): what the scanner bounds. Each
 * block keeps the size asked for in a 16-byte header of its own. */
static size_t held, peak;

static size_t chunk_of(size_t n)
{
    size_t c = (n + 8 + 15) & ~(size_t)15;
    return c < 32 ? 32 : c;
}

static void *counting_malloc(size_t n)
{
    size_t *p = malloc(n + 16);
    if (!p)
        return NULL;
    p[0] = n;
    held += chunk_of(n);
    if (held > peak)
        peak = held;
    return p + 2;
}

static void counting_free(void *q)
{
    if (!q)
        return;
    size_t *p = (size_t *)q - 2;
    held -= chunk_of(p[0]);
    free(p);
}

/* jansson's peak allocation while parsing text, and the scanner's estimate. */
static void measure(const char *text, size_t len, size_t *actual, unsigned long long *estimate)
{
    struct json_scan s;
    json_scan_init(&s, JSON_SCAN_DEPTH_MAX);
    assert_int_equal(json_scan_feed(&s, text, len), 0);
    *estimate = json_scan_cost(&s);
    held = peak = 0;
    json_set_alloc_funcs(counting_malloc, counting_free);
    json_error_t e;
    json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
    if (!j)
        fail_msg("not JSON: %s", e.text);
    *actual = peak;
    json_decref(j);
    json_set_alloc_funcs(malloc, free);
}

/* "[" + n times item joined by "," + "]", or "{" + n members "kI":item + "}" */
static char *repeat(const char *item, size_t n, int object)
{
    size_t each = strlen(item) + 16, len = 0;
    char *t = malloc(n * each + 3);
    assert_non_null(t);
    t[len++] = object ? '{' : '[';
    for (size_t i = 0; i < n; i++) {
        if (i)
            t[len++] = ',';
        if (object)
            len += (size_t)sprintf(t + len, "\"k%zx\":", i);
        len += (size_t)sprintf(t + len, "%s", item);
    }
    t[len++] = object ? '}' : ']';
    t[len] = '\0';
    return t;
}

static void estimate_covers_jansson(void **state)
{
    (void)state;
    static const struct {
        const char *item;
        int object;
    } shapes[] = {
        {"0", 0}, {"1.5", 0}, {"true", 0}, {"null", 0}, {"\"\"", 0}, {"\"abcdefgh\"", 0},
        {"[]", 0}, {"{}", 0}, {"[0]", 0}, {"{\"a\":0}", 0}, {"[[[[0]]]]", 0}, {"0", 1},
        {"{}", 1}, {"\"a string of some length, forty bytes..\"", 0},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        /* just past a growth of jansson's tables (8, 1024, 65536 slots),
         * where the old and the new one are both held */
        static const size_t counts[] = {1, 9, 100, 1025, 65537};
        for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
            size_t n = counts[k];
            char *t = repeat(shapes[i].item, n, shapes[i].object);
            size_t actual;
            unsigned long long est;
            measure(t, strlen(t), &actual, &est);
            if (est < actual)
                fail_msg("%zu x %s%s: estimated %llu bytes, jansson took %zu", n,
                         shapes[i].item, shapes[i].object ? " (members)" : "", est, actual);
            free(t);
        }
    }
    /* one long string, and nesting as deep as the scanner goes */
    char *t = malloc(1 << 20);
    assert_non_null(t);
    memset(t, 'x', 1 << 20);
    t[0] = '[';
    t[1] = t[(1 << 20) - 2] = '"';
    t[(1 << 20) - 1] = ']';
    size_t actual;
    unsigned long long est;
    measure(t, 1 << 20, &actual, &est);
    assert_true(est >= actual);
    memset(t, '[', JSON_SCAN_DEPTH_MAX);
    memset(t + JSON_SCAN_DEPTH_MAX, ']', JSON_SCAN_DEPTH_MAX);
    measure(t, 2 * JSON_SCAN_DEPTH_MAX, &actual, &est);
    assert_true(est >= actual);
    free(t);
}

/* The file's JSON written compact, as a node pushes it: malloc'd, its length in len. */
static char *compact(const char *path, size_t *len)
{
    json_error_t e;
    json_t *j = json_load_file(path, 0, &e);
    if (!j)
        fail_msg("%s: %s", path, e.text);
    char *t = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    assert_non_null(t);
    *len = strlen(t);
    return t;
}

static void real_content_is_inside_the_factor(void **state)
{
    (void)state;
    /* the whole H200 bundle, and the densest real result document */
    static const char *const real[] = {"data/reference/h200.json",
                                       "tests/fixtures/results/latency-h200.json"};
    for (size_t i = 0; i < sizeof real / sizeof real[0]; i++) {
        size_t len, actual;
        unsigned long long est;
        char *t = compact(real[i], &len);
        measure(t, len, &actual, &est);
        assert_true(est >= actual);
        /* as a node sends them, 10.6 and 13.9 times their size (jansson
         * takes 7.8 and 10.2): a body of either at the limit is taken */
        if (est >= JSON_BODY_MEMORY_FACTOR * (unsigned long long)len)
            fail_msg("%s: estimated %llu bytes for %zu bytes of JSON", real[i], est, len);
        free(t);
    }
}

/* ---- json_body ------------------------------------------------------- */

/* json_body on body (in memory, or spooled to a file when spool) with limit;
 * the status it answered (200 when it parsed) and its problem in *problem. */
static int body_status(const char *body, int spool, long long limit, json_t **problem)
{
    struct http_req rq = {.method = "POST", .path = "/test"};
    struct http_resp rs = {0};
    char path[] = "/tmp/gpuprobe-jsonbody-XXXXXX";
    rq.body_len = strlen(body);
    if (spool) {
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, body, rq.body_len), (ssize_t)rq.body_len);
        close(fd);
        rq.body_file = path;
    } else {
        rq.body = body;
    }
    json_t *doc = json_body(&rq, &rs, limit, "some_limit", JSON_REJECT_DUPLICATES);
    if (spool)
        unlink(path);
    *problem = NULL;
    if (doc) {
        assert_null(rs.body);
        json_decref(doc);
        return 200;
    }
    *problem = json_loadb(rs.body, rs.len, 0, NULL);
    assert_non_null(*problem);
    free(rs.body);
    return rs.status;
}

static void json_body_at_and_over_the_limit(void **state)
{
    (void)state;
    /* ["x" * 32, "x" * y]: each x of the second string adds a byte to the
     * estimate; with y chosen so that it is a multiple of the factor, the
     * limit that allows exactly that, and the same with one x more */
    static const char xs[] = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
    char at[96], over[96], want[128];
    unsigned long long cost;
    long long limit;
    for (int y = 0;; y++) {
        assert_true(y < JSON_BODY_MEMORY_FACTOR);
        snprintf(at, sizeof at, "[\"%s\", \"%.*s\"]", xs, y, xs);
        snprintf(over, sizeof over, "[\"%s\", \"%.*s\"]", xs, y + 1, xs);
        int rc;
        struct json_scan s = scan_of(at, 2, &rc);
        cost = json_scan_cost(&s);
        if (cost % JSON_BODY_MEMORY_FACTOR == 0)
            break;
    }
    limit = (long long)(cost / JSON_BODY_MEMORY_FACTOR);
    for (int spool = 0; spool < 2; spool++) {
        json_t *p;
        assert_int_equal(body_status(at, spool, limit, &p), 200);
        assert_int_equal(body_status(over, spool, limit, &p), 413);
        assert_string_equal(json_string_value(json_object_get(p, "type")),
                            "/problems/payload-too-large");
        const char *detail = json_string_value(json_object_get(p, "detail"));
        snprintf(want, sizeof want, "3 JSON values in %zu bytes", strlen(over));
        assert_non_null(strstr(detail, want));
        snprintf(want, sizeof want, "%d times some_limit (%lld bytes)", JSON_BODY_MEMORY_FACTOR,
                 limit);
        assert_non_null(strstr(detail, want));
        assert_non_null(strstr(detail, "Raise some_limit to take it"));
        json_decref(p);

        /* nesting: at the limit parsed, one deeper refused where it is */
        char deep[2 * JSON_BODY_DEPTH_MAX + 3];
        memset(deep, '[', JSON_BODY_DEPTH_MAX);
        memset(deep + JSON_BODY_DEPTH_MAX, ']', JSON_BODY_DEPTH_MAX);
        deep[2 * JSON_BODY_DEPTH_MAX] = '\0';
        assert_int_equal(body_status(deep, spool, 1 << 20, &p), 200);
        memset(deep, '[', JSON_BODY_DEPTH_MAX + 1);
        memset(deep + JSON_BODY_DEPTH_MAX + 1, ']', JSON_BODY_DEPTH_MAX + 1);
        deep[2 * JSON_BODY_DEPTH_MAX + 2] = '\0';
        assert_int_equal(body_status(deep, spool, 1 << 20, &p), 400);
        assert_string_equal(json_string_value(json_object_get(p, "type")),
                            "/problems/invalid-json");
        assert_int_equal(json_integer_value(json_object_get(p, "offset")), JSON_BODY_DEPTH_MAX);
        json_decref(p);

        /* what is not JSON is jansson's to refuse, as before */
        assert_int_equal(body_status("{\"a\":", spool, 1 << 20, &p), 400);
        assert_string_equal(json_string_value(json_object_get(p, "type")),
                            "/problems/invalid-json");
        json_decref(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(counts_values_by_kind),
        cmocka_unit_test(strings_hide_brackets_and_quotes),
        cmocka_unit_test(pieces_split_anywhere),
        cmocka_unit_test(depth_at_and_over_the_limit),
        cmocka_unit_test(estimate_covers_jansson),
        cmocka_unit_test(real_content_is_inside_the_factor),
        cmocka_unit_test(json_body_at_and_over_the_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
