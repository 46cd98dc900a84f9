/*
 * Unit tests of the L1-to-L2 spill (cache/spill.c): fetches come back
 * from the file as they went in — each SM's run apart, seqs rebuilt from
 * the stored distances (gaps of 2^32 requests and more through filler
 * records), set, store flag, home partition and sectors unpacked — and a
 * read past what was written fails.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>

#include "cache/spill.h"

struct want {
    uint32_t sm;
    uint64_t seq;
    uint32_t line, set, sectors;
    int store;
    unsigned home;
};

static void test_spill_round_trip(void **state)
{
    (void)state;
    const uint64_t G = 1ull << 32;
    static const struct want in[] = {
        {0, 0, 7, 0, 1, 0, 0},
        {0, 5, 8, (1u << 26) - 1, 0xf, 1, 1},
        {0, 5 + G + 7, 9, 3, 0x80000000u, 0, 1},  /* one filler */
        {0, 5 + 3 * G + 7, 7, 4, 2, 1, 0},        /* two fillers, then the distance */
        {2, 3 * G, 1, 1, 3, 0, 0},                /* a run that starts past 2^32 */
        {2, 3 * G + 1, 2, 2, 6, 1, 1},
        {3, 0, CACHE_SPILL_FILLER - 1, 9, 1, 0, 0},
    };
    enum { N = sizeof in / sizeof *in };
    struct cache_spill sp;
    assert_int_equal(cache_spill_open(&sp, 4, NULL), 0);
    for (int i = 0; i < N; i++)
        assert_int_equal(cache_spill_add(&sp, in[i].sm, in[i].seq, in[i].line, in[i].set, in[i].sectors,
                                         in[i].store, in[i].home),
                         0);
    assert_int_equal(cache_spill_finish(&sp), 0);
    assert_int_equal(sp.len[1], 0);
    int k = 0;
    for (uint32_t s = 0; s < 4; s++) {
        uint64_t seq = 0;
        for (uint64_t i = 0; i < sp.len[s]; i++) {
            struct cache_spill_rec rec;
            assert_int_equal(cache_spill_read(&sp, s, i, &rec, 1), 0);
            if (rec.line == CACHE_SPILL_FILLER) {
                seq += rec.dseq;
                continue;
            }
            seq += rec.dseq;
            struct cache_fetch f;
            cache_spill_unpack(&rec, s, seq, &f);
            assert_true(k < N);
            assert_int_equal(f.sm, in[k].sm);
            assert_true(f.seq == in[k].seq);
            assert_int_equal(f.line, in[k].line);
            assert_int_equal(f.set, in[k].set);
            assert_int_equal(f.sectors, in[k].sectors);
            assert_int_equal(f.store, in[k].store);
            assert_int_equal(f.home, in[k].home);
            k++;
        }
    }
    assert_int_equal(k, N);
    assert_int_equal(sp.len[0], 4 + 3); /* three fillers in SM 0's run */
    struct cache_spill_rec two[2];
    assert_int_equal(cache_spill_read(&sp, 3, 0, two, 2), -1); /* past the end of the file */
    cache_spill_close(&sp);
}

/* More fetches than the write buffer holds: flushed along the way, read
 * back in windows. */
static void test_spill_many(void **state)
{
    (void)state;
    enum { N = 200000 };
    struct cache_spill sp;
    assert_int_equal(cache_spill_open(&sp, 2, NULL), 0);
    for (uint32_t s = 0; s < 2; s++)
        for (uint32_t i = 0; i < N; i++)
            assert_int_equal(cache_spill_add(&sp, s, 3ull * i + s, i ^ s, i % 1000, i & 0xf, (int)(i & 1), s), 0);
    assert_int_equal(cache_spill_finish(&sp), 0);
    struct cache_spill_rec *buf = malloc(N * sizeof *buf);
    assert_non_null(buf);
    for (uint32_t s = 0; s < 2; s++) {
        assert_int_equal(sp.len[s], N);
        assert_int_equal(cache_spill_read(&sp, s, 0, buf, N), 0);
        uint64_t seq = 0;
        for (uint32_t i = 0; i < N; i++) {
            struct cache_fetch f;
            seq += buf[i].dseq;
            cache_spill_unpack(&buf[i], s, seq, &f);
            assert_true(f.seq == 3ull * i + s);
            assert_int_equal(f.line, i ^ s);
            assert_int_equal(f.set, i % 1000);
            assert_int_equal(f.store, i & 1);
            assert_int_equal(f.home, s);
        }
    }
    free(buf);
    cache_spill_close(&sp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spill_round_trip),
        cmocka_unit_test(test_spill_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
