/*
 * Unit tests of the push backoff and verdicts (server/push/backoff.h): the
 * first wait is between 0.5 and 1 s, each failure doubles the span, the
 * cap holds however many failures came (no overflow), the jitter spans
 * the upper half of the span from its lowest to its highest draw, and each
 * answer of the central gets its verdict.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "server/push/backoff.h"

static void first_wait_is_up_to_a_second(void **state)
{
    (void)state;
    assert_int_equal(push_backoff_ms(1, PUSH_BACKOFF_CAP_MS, 0), 500);
    assert_int_equal(push_backoff_ms(1, PUSH_BACKOFF_CAP_MS, UINT32_MAX), 1000);
    int64_t mid = push_backoff_ms(1, PUSH_BACKOFF_CAP_MS, UINT32_MAX / 2);
    assert_true(mid > 700 && mid < 800);
}

static void doubles_to_the_cap(void **state)
{
    (void)state;
    int64_t want = 1000;
    for (int attempts = 1; attempts <= 10; attempts++, want *= 2) {
        assert_int_equal(push_backoff_ms(attempts, PUSH_BACKOFF_CAP_MS, UINT32_MAX), want);
        assert_int_equal(push_backoff_ms(attempts, PUSH_BACKOFF_CAP_MS, 0), want / 2);
    }
    /* 2^10 s is past ten minutes: from there on the cap */
    assert_int_equal(push_backoff_ms(11, PUSH_BACKOFF_CAP_MS, UINT32_MAX), PUSH_BACKOFF_CAP_MS);
    assert_int_equal(push_backoff_ms(1000000, PUSH_BACKOFF_CAP_MS, UINT32_MAX),
                     PUSH_BACKOFF_CAP_MS);
    assert_int_equal(push_backoff_ms(1000000, PUSH_BACKOFF_CAP_MS, 0), PUSH_BACKOFF_CAP_MS / 2);
    /* a configured cap below the first wait */
    assert_int_equal(push_backoff_ms(1, 300, UINT32_MAX), 300);
    assert_int_equal(push_backoff_ms(5, 2000, 0), 1000);
}

static void verdicts(void **state)
{
    (void)state;
    assert_int_equal(push_verdict_of(200, 1), PUSH_ACKNOWLEDGED);
    /* a 200 that is not an import's answer (a proxy's page) delivered nothing */
    assert_int_equal(push_verdict_of(200, 0), PUSH_RETRY);
    static const int refused[] = {400, 413, 415, 422};
    for (int imported = 0; imported < 2; imported++) {
        for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
            assert_int_equal(push_verdict_of(refused[i], imported), PUSH_REFUSED);
        static const int retried[] = {0, 201, 301, 401, 403, 404, 408, 429, 500, 502, 503, 507};
        for (size_t i = 0; i < sizeof retried / sizeof retried[0]; i++)
            assert_int_equal(push_verdict_of(retried[i], imported), PUSH_RETRY);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(first_wait_is_up_to_a_second),
        cmocka_unit_test(doubles_to_the_cap),
        cmocka_unit_test(verdicts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
