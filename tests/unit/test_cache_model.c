/*
 * Unit tests of the cache model's input and driver (cache/input.c,
 * cache/model.c, cache/report.c): the same sorted stream as CSV and as a
 * binary file gives the same index and the same counts (and the binary
 * file's parameters); streams out of the sorter's order, a requests file,
 * a file with no header are refused with the line or byte offset; the
 * lockstep walk feeds the L2 in the documented interleaving (worked by
 * hand: two SMs reading the same lines); the JSON document carries both
 * engines, their difference and the histogram; the two engines' walks
 * side by side on two threads give the document one thread gives, and
 * each engine's counts are those it has when run alone.
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

#include "cache/input.h"
#include "cache/model.h"
#include "tests/unit/support/tmpfile.h"
#include "trace/binfmt.h"

static int setup(void **state)
{
    return tmp_setup(state, "cache", "t.csv");
}

static int teardown(void **state)
{
    struct tmp *t = *state;
    unlink(tmp_path(t, "t.bin"));
    return tmp_teardown(state);
}

/* SM 0 reads lines A B A; SM 1 reads A C (A = 0x1000, B = 0x2000, C = 0x3000). */
static const char two_sms_csv[] = "sm,seq,tid,pc,addr,width,dep\n"
                                  "0,0,0,0x10,0x1000,4,0\n"
                                  "0,1,0,0x10,0x2000,4,0\n"
                                  "0,2,0,0x10,0x1000,4,0\n"
                                  "1,0,32,0x10,0x1000,4,0\n"
                                  "1,1,32,0x10,0x3000,4,0\n";

/* Writes n sorted records to a binary file whose header says lat_min 7, mshr 3. */
static void write_bin_recs(const char *path, const struct trace_out *o, size_t n)
{
    struct trace_err err = {0};
    struct trace_params p;
    trace_params_default(&p);
    p.lat_min = 7;
    p.mshr = 3;
    trace_params_resolve(&p, 256);
    struct trace_bin_header h;
    trace_bin_header_init(&h, TRACE_BIN_SORTED, &p);
    struct trace_bin_writer *w = trace_bin_writer_open(path, &h, &err);
    assert_non_null(w);
    assert_int_equal(trace_bin_write_out(w, o, n), 0);
    assert_int_equal(trace_bin_writer_close(w, &err), 0);
}

/* The same records as a CSV text, as a binary file. */
static void write_bin(const char *path, const char *csv_text)
{
    struct cache_input in;
    struct trace_err err = {0};
    char tmp[200];
    snprintf(tmp, sizeof tmp, "%s.src.csv", path);
    write_file(tmp, csv_text);
    assert_int_equal(cache_input_open(&in, tmp, &err), 0);
    write_bin_recs(path, in.recs, in.count);
    cache_input_close(&in);
    unlink(tmp);
}

static struct cache_config config(int engines, uint32_t latency)
{
    struct cache_config cfg;
    char msg[256];
    memset(&cfg, 0, sizeof cfg);
    assert_int_equal(cache_arch_geometry("hopper", &cfg.geom[0], &cfg.geom[1], msg, sizeof msg), 0);
    cfg.timing[0] = (struct cache_timing){latency, 0, 8};
    cfg.timing[1] = (struct cache_timing){0, 0, 8};
    cfg.engines = engines;
    cfg.l2 = 1;
    return cfg;
}

static void test_csv_and_binary(void **state)
{
    struct tmp *t = *state;
    const char *csv = tmp_path(t, "t.csv"), *bin = tmp_path(t, "t.bin");
    write_file(csv, two_sms_csv);
    write_bin(bin, two_sms_csv);
    struct cache_input a, b;
    struct trace_err err = {0};
    assert_int_equal(cache_input_open(&a, csv, &err), 0);
    if (cache_input_open(&b, bin, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(a.binary, 0);
    assert_int_equal(b.binary, 1);
    assert_int_equal(a.has_params, 0);
    assert_int_equal(b.has_params, 1);
    assert_int_equal(b.params.lat_min, 7);
    assert_int_equal(a.sms, 2);
    assert_int_equal(b.sms, 2);
    assert_int_equal(a.len[0], 3);
    assert_int_equal(b.len[1], 2);
    assert_int_equal(b.start[1], 3);
    struct trace_out x, y;
    cache_input_get(&a, 1, 1, &x);
    cache_input_get(&b, 1, 1, &y);
    assert_true(x.sm == y.sm && x.seq == y.seq && x.tid == y.tid && x.pc == y.pc && x.addr == y.addr &&
                x.width == y.width && x.dep == y.dep);
    assert_int_equal(x.addr, 0x3000);

    struct cache_config cfg = config(CACHE_ENGINE_BOTH, 0);
    struct cache_result ra, rb;
    char msg[256];
    assert_int_equal(cache_model_run(&a, &cfg, &ra, msg, sizeof msg), 0);
    assert_int_equal(cache_model_run(&b, &cfg, &rb, msg, sizeof msg), 0);
    for (int e = 0; e < 2; e++)
        for (int lv = 0; lv < 2; lv++)
            assert_memory_equal(&ra.r[e][lv].total, &rb.r[e][lv].total, sizeof ra.r[e][lv].total);
    cache_result_free(&ra);
    cache_result_free(&rb);
    cache_input_close(&a);
    cache_input_close(&b);
}

/* Round 0: SM 0 A (L1 and L2 compulsory), SM 1 A (L1 compulsory, L2 hit);
 * round 1: SM 0 B, SM 1 C (compulsory both); round 2: SM 0 A (L1 hit). */
static void test_lockstep_l2(void **state)
{
    struct tmp *t = *state;
    const char *csv = tmp_path(t, "t.csv");
    write_file(csv, two_sms_csv);
    struct cache_input in;
    struct trace_err err = {0};
    assert_int_equal(cache_input_open(&in, csv, &err), 0);
    struct cache_config cfg = config(CACHE_ENGINE_BOTH, 0);
    struct cache_result res;
    char msg[256];
    assert_int_equal(cache_model_run(&in, &cfg, &res, msg, sizeof msg), 0);
    for (int e = 0; e < 2; e++) {
        const struct cache_level_result *l1 = &res.r[e][CACHE_L1], *l2 = &res.r[e][CACHE_L2];
        assert_int_equal(l1->total.requests, 5);
        assert_int_equal(l1->total.hits, 1);
        assert_int_equal(l1->sm[0].hits, 1);
        assert_int_equal(l2->total.requests, 4);
        assert_int_equal(l2->total.hits, 1);
        assert_int_equal(l2->sm[1].hits, 1);
        assert_int_equal(l2->sm[0].hits, 0);
        assert_int_equal(l2->total.miss[CACHE_MISS_COMPULSORY], 3);
        assert_true(l1->est.hits == 1.0);
    }
    /* the reuse histogram: SM 0's A at distance 1; 4 first uses */
    assert_int_equal(res.r[CACHE_REUSE][CACHE_L1].hist.cold, 4);
    assert_int_equal(res.r[CACHE_REUSE][CACHE_L1].hist.bin[1], 1);

    json_t *j = cache_result_to_json(&res, &cfg);
    assert_non_null(j);
    assert_int_equal(json_integer_value(json_object_get(j, "records")), 5);
    json_t *ex = json_object_get(json_object_get(j, "engines"), "exact");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(ex, "l2"), "hits")), 1);
    assert_int_equal(json_array_size(json_object_get(json_object_get(ex, "l1"), "sms")), 2);
    json_t *rd = json_object_get(json_object_get(j, "engines"), "reuse");
    assert_non_null(json_object_get(json_object_get(rd, "l1"), "histogram"));
    assert_non_null(json_object_get(json_object_get(j, "difference"), "l1"));
    json_decref(j);
    cache_result_free(&res);
    cache_input_close(&in);
}

/* A random sorted stream: sms SMs of n records each over a few thousand
 * lines (some shared by all SMs), as CSV. */
static char *random_csv(uint32_t sms, uint32_t n)
{
    size_t cap = (size_t)sms * n * 48 + 64, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    len += (size_t)snprintf(text, cap, "sm,seq,tid,pc,addr,width,dep\n");
    uint64_t x = 99;
    for (uint32_t s = 0; s < sms; s++)
        for (uint32_t q = 0; q < n; q++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            uint64_t line = (x & 3) ? (x >> 8) % 4096 : 8192 + s * 1024 + (x >> 8) % 1024;
            len += (size_t)snprintf(text + len, cap - len, "%u,%u,%u,0x10,0x%llx,%u,0\n", s, q, s * 32,
                                    (unsigned long long)(line * 128 + ((x >> 20) & 3) * 32), 4u << ((x >> 30) & 3));
        }
    return text;
}

/* random_csv(sms, n) written to a file of t and opened into *in. */
static void open_random(struct tmp *t, uint32_t sms, uint32_t n, struct cache_input *in)
{
    const char *csv = tmp_path(t, "t.csv");
    char *text = random_csv(sms, n);
    struct trace_err err = {0};
    write_file(csv, text);
    free(text);
    assert_int_equal(cache_input_open(in, csv, &err), 0);
}

/* config() with small levels: the L2 sees capacity and conflict misses. */
static struct cache_config small_config(int engines)
{
    struct cache_config cfg = config(engines, 20);
    char msg[256];
    assert_int_equal(cache_geom_parse("16K,4,128,32", &cfg.geom[0], msg, sizeof msg), 0);
    assert_int_equal(cache_geom_parse("128K,16,128,32", &cfg.geom[1], msg, sizeof msg), 0);
    return cfg;
}

static void test_side_by_side(void **state)
{
    struct cache_input in;
    char msg[256];
    open_random(*state, 6, 4000, &in);
    struct cache_config cfg = small_config(CACHE_ENGINE_BOTH);
    char *doc[2];
    for (int serial = 0; serial < 2; serial++) {
        struct cache_result res;
        cfg.threads = serial ? 1 : 2;
        assert_int_equal(cache_model_run(&in, &cfg, &res, msg, sizeof msg), 0);
        const struct cache_counts *l2 = &res.r[CACHE_EXACT][CACHE_L2].total;
        assert_true(l2->miss[CACHE_MISS_CAPACITY] > 0 && l2->miss[CACHE_MISS_CONFLICT] > 0 && l2->hits > 0);
        json_t *j = cache_result_to_json(&res, &cfg);
        doc[serial] = json_dumps(j, JSON_SORT_KEYS);
        json_decref(j);
        for (int e = 0; e < 2; e++) { /* each engine alone counts the same */
            struct cache_config one = cfg;
            struct cache_result r1;
            one.engines = 1 << e;
            assert_int_equal(cache_model_run(&in, &one, &r1, msg, sizeof msg), 0);
            for (int lv = 0; lv < 2; lv++)
                assert_memory_equal(&r1.r[e][lv].total, &res.r[e][lv].total, sizeof r1.r[e][lv].total);
            cache_result_free(&r1);
        }
        cache_result_free(&res);
    }
    assert_string_equal(doc[0], doc[1]);
    free(doc[0]);
    free(doc[1]);
    cache_input_close(&in);
}

/* The refusal names the line and the byte offset where it starts. */
static void expect_refused(const char *path, const char *text, uint64_t line, const char *what)
{
    struct cache_input in;
    struct trace_err err = {0};
    write_file(path, text);
    assert_int_equal(cache_input_open(&in, path, &err), TRACE_EINPUT);
    assert_int_equal(err.line, line);
    uint64_t start = 0;
    for (uint64_t l = 1; l < line; l++)
        start += (uint64_t)(strchr(text + start, '\n') - (text + start)) + 1;
    assert_int_equal(err.offset, start);
    if (!strstr(err.msg, what))
        fail_msg("'%s' does not say '%s'", err.msg, what);
}

static void test_refusals(void **state)
{
    struct tmp *t = *state;
    const char *csv = tmp_path(t, "t.csv");
    const char *h = "sm,seq,tid,pc,addr,width,dep\n";
    char buf[400];
    expect_refused(csv, "tid,pc,addr,width,dep\n0,0x10,0x1000,4,0\n", 1, "trace sort");
    snprintf(buf, sizeof buf, "%s0,0,0,0x10,0x1000,4,0\n0,2,0,0x10,0x1000,4,0\n", h);
    expect_refused(csv, buf, 3, "seq");
    snprintf(buf, sizeof buf, "%s1,0,0,0x10,0x1000,4,0\n0,0,0,0x10,0x1000,4,0\n", h);
    expect_refused(csv, buf, 3, "SM-major");
    snprintf(buf, sizeof buf, "%s0,0,0,0x10,0x1000,4,0\r\n\r\n", h); /* CRLF; a blank line */
    expect_refused(csv, buf, 3, "blank");
    snprintf(buf, sizeof buf, "%s0,0,0,0x10,0x1000,4,0\n0,1,0,0x10,0x1000,4,0\n1,1,0,0x10,0x1000,4,0\n", h);
    expect_refused(csv, buf, 4, "seq");
    snprintf(buf, sizeof buf, "%s0,0,0,0x10,0x1000,3,0\n", h);
    expect_refused(csv, buf, 2, "width");
    snprintf(buf, sizeof buf, "%s%u,0,0,0x10,0x1000,4,0\n", h, TRACE_MAX_SMS); /* no sorter numbers it */
    expect_refused(csv, buf, 2, "sm must be below");
    snprintf(buf, sizeof buf, "%s0,0,0,0x10,0x1000,4,0,9\n", h);
    expect_refused(csv, buf, 2, "unexpected");

    /* a requests file is not a sorted one */
    const char *bin = tmp_path(t, "t.bin");
    struct trace_bin_header hd;
    struct trace_err err = {0};
    trace_bin_header_init(&hd, TRACE_BIN_REQUESTS, NULL);
    struct trace_bin_writer *w = trace_bin_writer_open(bin, &hd, &err);
    struct trace_rec r = {.pc = 0x10, .addr = 0x1000, .width = 4};
    assert_int_equal(trace_bin_write_rec(w, &r), 0);
    assert_int_equal(trace_bin_writer_close(w, &err), 0);
    struct cache_input in;
    assert_int_equal(cache_input_open(&in, bin, &err), TRACE_EINPUT);
    assert_non_null(strstr(err.msg, "trace sort"));

    /* seq out of order in a binary file: the byte offset of the record */
    const struct trace_out bad[2] = {{0, 0, 0, 0x10, 0x1000, 4, 0, 0}, {0, 5, 0, 0x10, 0x1000, 4, 0, 0}};
    write_bin_recs(bin, bad, 2);
    assert_int_equal(cache_input_open(&in, bin, &err), TRACE_EINPUT);
    assert_int_equal(err.offset, TRACE_BIN_HEADER_BYTES + TRACE_BIN_OUT_BYTES);

    assert_int_equal(cache_input_open(&in, tmp_path(t, "absent"), &err), TRACE_ENOMEM);

    /* fields out of range in a binary file, as trace convert refuses them:
     * a width not a power of two, a flag over 1, an SM past the header's */
    const struct trace_out good[2] = {{0, 0, 0, 0x10, 0x1000, 4, 0, 0}, {0, 1, 0, 0x10, 0x1000, 4, 0, 0}};
    struct { size_t at; uint8_t v[4]; size_t n; } patch[] = {
        {36, {3, 0}, 2},      /* width 3 */
        {38, {7}, 1},         /* dep 7 */
        {39, {2}, 1},         /* store 2 */
        {32, {15, 0, 0, 0}, 4}, /* sm 15 of the fermi preset's 15 */
        {24, {0xfe, 0xff, 0xff, 0xff}, 4}, /* with the next: address 2^64 - 2, width 4 */
    };
    for (size_t i = 0; i < sizeof patch / sizeof *patch; i++) {
        write_bin_recs(bin, good, 2);
        FILE *f = fopen(bin, "r+b");
        assert_non_null(f);
        assert_int_equal(fseek(f, (long)(TRACE_BIN_HEADER_BYTES + TRACE_BIN_OUT_BYTES + patch[i].at), SEEK_SET), 0);
        assert_int_equal(fwrite(patch[i].v, 1, patch[i].n, f), patch[i].n);
        if (patch[i].at == 24) /* the address's upper half */
            assert_int_equal(fwrite("\xff\xff\xff\xff", 1, 4, f), 4);
        fclose(f);
        if (cache_input_open(&in, bin, &err) != TRACE_EINPUT ||
            err.offset != TRACE_BIN_HEADER_BYTES + TRACE_BIN_OUT_BYTES || !strstr(err.msg, "out of range"))
            fail_msg("patch %zu: offset %llu '%s'", i, (unsigned long long)err.offset, err.msg);
    }
    snprintf(buf, sizeof buf, "%s0,0,0,0x10,0xfffffffffffffffe,4,0\n", h);
    expect_refused(csv, buf, 2, "passes 2^64");

    /* a width no sort of the header's line gives: twice the line is the
     * most (a misaligned request), four times is damage */
    struct trace_params dp;
    trace_params_default(&dp);
    for (uint32_t times = 2; times <= 4; times += 2) {
        struct trace_out wide[2] = {good[0], good[1]};
        wide[1].width = times * dp.line_bytes;
        wide[1].addr = 0;
        write_bin_recs(bin, wide, 2);
        int rc = cache_input_open(&in, bin, &err);
        if (times == 2) {
            assert_int_equal(rc, 0);
            cache_input_close(&in);
            continue;
        }
        assert_int_equal(rc, TRACE_EINPUT);
        assert_int_equal(err.offset, TRACE_BIN_HEADER_BYTES + TRACE_BIN_OUT_BYTES);
        assert_non_null(strstr(err.msg, "twice the line"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_csv_and_binary, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lockstep_l2, setup, teardown),
        cmocka_unit_test_setup_teardown(test_side_by_side, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
