/*
 * Unit tests of the fleet's configuration keys (server/config.c): their
 * defaults (no upstream, whole results, a 10-minute backoff cap, a 64 MiB
 * import limit),
 * their bounds, and config_finish's checks: an upstream must be an http(s)
 * URL and come with its token file.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "server/config.h"

static void defaults(void **state)
{
    (void)state;
    struct config c;
    memset(&c, 0x5a, sizeof c);
    config_defaults(&c);
    assert_string_equal(c.upstream, "");
    assert_string_equal(c.upstream_token_file, "");
    assert_int_equal(c.upstream_retry_max_s, 600);
    assert_int_equal(c.import_limit, 64LL << 20);
    assert_int_equal(c.upstream_content, UPSTREAM_CONTENT_FULL);
}

static void bounds(void **state)
{
    (void)state;
    struct config c;
    char err[256];
    config_defaults(&c);
    assert_int_equal(config_set(&c, "upstream_retry_max_s", "1", err, sizeof err), 0);
    assert_int_equal(config_set(&c, "upstream_retry_max_s", "86400", err, sizeof err), 0);
    assert_int_equal(config_set(&c, "upstream_retry_max_s", "0", err, sizeof err), -1);
    assert_non_null(strstr(err, "upstream_retry_max_s"));
    assert_int_equal(config_set(&c, "import_limit", "1023", err, sizeof err), -1);
    assert_int_equal(config_set(&c, "import_limit", "100000", err, sizeof err), 0);
    assert_int_equal(c.import_limit, 100000);
    assert_int_equal(config_set(&c, "upstream_content", "figures", err, sizeof err), 0);
    assert_int_equal(c.upstream_content, UPSTREAM_CONTENT_FIGURES);
    assert_int_equal(config_set(&c, "upstream_content", "full", err, sizeof err), 0);
    assert_int_equal(c.upstream_content, UPSTREAM_CONTENT_FULL);
    assert_int_equal(config_set(&c, "upstream_content", "some", err, sizeof err), -1);
    assert_non_null(strstr(err, "expected full or figures, got 'some'"));
}

static void finish(const char *upstream, const char *token_file, int want, const char *says)
{
    struct config c;
    char err[1200] = "";
    config_defaults(&c);
    assert_int_equal(config_set(&c, "upstream", upstream, err, sizeof err), 0);
    assert_int_equal(config_set(&c, "upstream_token_file", token_file, err, sizeof err), 0);
    assert_int_equal(config_finish(&c, err, sizeof err), want);
    if (says)
        assert_non_null(strstr(err, says));
}

static void upstream_checked(void **state)
{
    (void)state;
    finish("", "", 0, NULL);
    finish("http://central:8080", "/etc/gpuprobe/up", 0, NULL);
    finish("https://central.example.org", "/etc/gpuprobe/up", 0, NULL);
    finish("https://central.example.org", "", -1, "upstream_token_file");
    finish("ftp://central", "/etc/gpuprobe/up", -1, "http:// or https://");
    finish("central:8080", "/etc/gpuprobe/up", -1, "central:8080");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults),
        cmocka_unit_test(bounds),
        cmocka_unit_test(upstream_checked),
    };
    return cmocka_run_group_tests_name("config_upstream", tests, NULL, NULL);
}
