/*
 * Unit tests of the daemon configuration (server/config.c): the built-in
 * defaults hold the documented values; config_set accepts every key at its
 * bounds and refuses, with a reason naming the key and the value, values out
 * of range, non-numeric text, unknown keys, over-long strings and unknown log
 * level names, leaving the setting as it was; config_load_file applies
 * `key = value` lines around comments, blank lines, spaces, tabs and CRLF,
 * stops at the first bad line with "PATH:LINE: reason", and names a missing
 * file; config_split_listen splits IPv4, bracketed IPv6 and host-name
 * listen addresses and refuses malformed ones without touching its outputs;
 * metrics_devices takes local (the default) or all and nothing else;
 * tls_cert and tls_key are refused one without the other.
 * Files are written to a fresh mkdtemp directory removed by the teardown.
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

#include "tests/unit/support/tmpfile.h"
#include "server/config.h"
#include "server/log.h"

/* ---- temporary files ------------------------------------------------------ */

static int setup_tmp(void **state) { return tmp_setup(state, "config", "gpuprobe.conf"); }
static int teardown_tmp(void **state) { return tmp_teardown(state); }

/* ---- defaults ------------------------------------------------------------- */

static void test_defaults(void **state)
{
    (void)state;
    struct config c;
    memset(&c, 0x5a, sizeof c); /* every field must be written */
    config_defaults(&c);
    assert_string_equal(c.listen, "127.0.0.1:8080");
    assert_string_equal(c.db, "gpuprobe.db");
    assert_string_equal(c.token_file, "");
    assert_int_equal(c.cpu_workers, 2);
    assert_int_equal(c.http_threads, 4);
    assert_int_equal(c.max_connections, 1024);
    assert_int_equal(c.max_connections_per_ip, 256);
    assert_int_equal(c.connection_timeout_s, 30);
    assert_int_equal(c.body_limit, 1048576);
    assert_int_equal(c.job_timeout_s, 0);
    assert_int_equal(c.max_attempts, 3);
    assert_int_equal(c.discovery_timeout_s, 60);
    assert_int_equal(c.log_level, LOG_INFO);
    assert_int_equal(c.request_timeout_s, 20);
    assert_int_equal(c.body_min_rate, 4096);
    assert_string_equal(c.tls_cert, "");
    assert_string_equal(c.tls_key, "");
    assert_string_equal(c.push_ca, "");
    assert_string_equal(c.listen_unix, "");
    assert_string_equal(c.listen_unix_mode, "0660");
    assert_int_equal(config_unix_mode(&c), 0660);
}

/* tls_cert and tls_key come together; body_min_rate takes 0 (no bound);
 * listen_unix must be absolute and its mode octal. */
static void test_tls_pair_and_body_rate(void **state)
{
    (void)state;
    struct config c;
    char err[256];
    config_defaults(&c);
    assert_int_equal(config_set(&c, "tls_cert", "/etc/gpuprobe/tls.pem", err, sizeof err), 0);
    err[0] = '\0';
    assert_int_equal(config_finish(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "tls_key"));
    assert_int_equal(config_set(&c, "tls_key", "/etc/gpuprobe/tls.key", err, sizeof err), 0);
    assert_int_equal(config_finish(&c, err, sizeof err), 0);
    config_defaults(&c);
    assert_int_equal(config_set(&c, "tls_key", "/etc/gpuprobe/tls.key", err, sizeof err), 0);
    assert_int_equal(config_finish(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "tls_cert"));
    assert_int_equal(config_set(&c, "push_ca", "/etc/gpuprobe/ca.pem", err, sizeof err), 0);
    assert_string_equal(c.push_ca, "/etc/gpuprobe/ca.pem");
    assert_int_equal(config_set(&c, "body_min_rate", "0", err, sizeof err), 0);
    assert_int_equal(c.body_min_rate, 0);
    assert_int_equal(config_set(&c, "body_min_rate", "-1", err, sizeof err), -1);
    /* listen_unix: an absolute path; its mode octal, 0 to 0777 */
    config_defaults(&c);
    assert_int_equal(config_set(&c, "listen_unix", "api.sock", err, sizeof err), 0);
    assert_int_equal(config_finish(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "absolute"));
    assert_int_equal(config_set(&c, "listen_unix", "/run/gpuprobe/api.sock", err, sizeof err), 0);
    assert_int_equal(config_finish(&c, err, sizeof err), 0);
    const char *bad[] = {"0999", "1000", "", "rw", "0x1ff"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(config_set(&c, "listen_unix_mode", bad[i], err, sizeof err), 0);
        assert_int_equal(config_finish(&c, err, sizeof err), -1);
    }
    assert_int_equal(config_set(&c, "listen_unix_mode", "0600", err, sizeof err), 0);
    assert_int_equal(config_unix_mode(&c), 0600);
}

/* ---- config_set ------------------------------------------------------------ */

/* One integer key: its bounds are accepted, one past each bound refused. */
struct int_key {
    const char *name;
    size_t offset;
    long long min, max;
};

#define IK(n, lo, hi) {#n, offsetof(struct config, n), lo, hi}
static const struct int_key int_keys[] = {
    IK(cpu_workers, 1, 256),
    IK(http_threads, 1, 256),
    IK(max_connections, 1, 100000),
    IK(max_connections_per_ip, 0, 100000),
    IK(connection_timeout_s, 1, 3600),
    IK(job_timeout_s, 0, 7 * 86400),
    IK(max_attempts, 1, 100),
    IK(discovery_timeout_s, 1, 3600),
    IK(request_timeout_s, 1, 3600),
};

static int int_field(const struct config *c, size_t offset)
{
    return *(const int *)((const char *)c + offset);
}

static void test_set_int_keys_in_range(void **state)
{
    (void)state;
    char err[256], v[32];
    for (size_t i = 0; i < sizeof int_keys / sizeof int_keys[0]; i++) {
        const struct int_key *k = &int_keys[i];
        struct config c;
        config_defaults(&c);
        snprintf(v, sizeof v, "%lld", k->min);
        err[0] = '\0';
        if (config_set(&c, k->name, v, err, sizeof err) != 0)
            fail_msg("%s = %s refused: %s", k->name, v, err);
        assert_int_equal(int_field(&c, k->offset), k->min);
        snprintf(v, sizeof v, "%lld", k->max);
        if (config_set(&c, k->name, v, err, sizeof err) != 0)
            fail_msg("%s = %s refused: %s", k->name, v, err);
        assert_int_equal(int_field(&c, k->offset), k->max);
    }
}

static void test_set_int_keys_out_of_range(void **state)
{
    (void)state;
    char err[256], v[32], want[256];
    for (size_t i = 0; i < sizeof int_keys / sizeof int_keys[0]; i++) {
        const struct int_key *k = &int_keys[i];
        long long bad[2] = {k->min - 1, k->max + 1};
        for (int b = 0; b < 2; b++) {
            struct config c;
            config_defaults(&c);
            int before = int_field(&c, k->offset);
            snprintf(v, sizeof v, "%lld", bad[b]);
            err[0] = '\0';
            assert_int_equal(config_set(&c, k->name, v, err, sizeof err), -1);
            snprintf(want, sizeof want, "%s: expected an integer from %lld to %lld, got '%s'",
                     k->name, k->min, k->max, v);
            assert_string_equal(err, want);
            assert_int_equal(int_field(&c, k->offset), before);
        }
    }
}

static void test_set_int_non_numeric(void **state)
{
    (void)state;
    static const char *const bad[] = {"", "abc", "12abc", "4.5", "0x10", "1e3", "four",
                                      "99999999999999999999999"};
    char err[256], want[256];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct config c;
        config_defaults(&c);
        err[0] = '\0';
        assert_int_equal(config_set(&c, "cpu_workers", bad[i], err, sizeof err), -1);
        snprintf(want, sizeof want, "cpu_workers: expected an integer from 1 to 256, got '%s'",
                 bad[i]);
        assert_string_equal(err, want);
        assert_int_equal(c.cpu_workers, 2);
    }
}

static void test_set_body_limit(void **state)
{
    (void)state;
    struct config c;
    char err[256];
    config_defaults(&c);
    assert_int_equal(config_set(&c, "body_limit", "1024", err, sizeof err), 0);
    assert_int_equal(c.body_limit, 1024);
    /* 2^40 does not fit an int: the key is a long long. */
    assert_int_equal(config_set(&c, "body_limit", "1099511627776", err, sizeof err), 0);
    assert_true(c.body_limit == 1099511627776LL);
    assert_int_equal(config_set(&c, "body_limit", "1023", err, sizeof err), -1);
    assert_string_equal(err, "body_limit: expected an integer from 1024 to 1099511627776, "
                             "got '1023'");
    assert_int_equal(config_set(&c, "body_limit", "1099511627777", err, sizeof err), -1);
    assert_int_equal(config_set(&c, "body_limit", "1M", err, sizeof err), -1);
    assert_true(c.body_limit == 1099511627776LL);
}

static void test_set_strings(void **state)
{
    (void)state;
    struct config c;
    char err[256], v[2048];
    config_defaults(&c);
    assert_int_equal(config_set(&c, "listen", "[::1]:9090", err, sizeof err), 0);
    assert_string_equal(c.listen, "[::1]:9090");
    assert_int_equal(config_set(&c, "db", "/var/lib/gpuprobe/x.db", err, sizeof err), 0);
    assert_string_equal(c.db, "/var/lib/gpuprobe/x.db");
    assert_int_equal(config_set(&c, "token_file", "/etc/gpuprobe/tokens", err, sizeof err), 0);
    assert_string_equal(c.token_file, "/etc/gpuprobe/tokens");
    assert_int_equal(config_set(&c, "token_file", "", err, sizeof err), 0);
    assert_string_equal(c.token_file, "");

    /* listen holds 127 bytes: 127 fit, 128 do not. */
    memset(v, 'a', 127);
    v[127] = '\0';
    assert_int_equal(config_set(&c, "listen", v, err, sizeof err), 0);
    assert_int_equal(strlen(c.listen), 127);
    v[127] = 'b';
    v[128] = '\0';
    err[0] = '\0';
    assert_int_equal(config_set(&c, "listen", v, err, sizeof err), -1);
    assert_string_equal(err, "listen: value longer than 127 bytes");
    assert_int_equal(strlen(c.listen), 127);
    assert_int_equal(c.listen[126], 'a');

    /* db and token_file hold 1023. */
    memset(v, 'd', 1024);
    v[1024] = '\0';
    assert_int_equal(config_set(&c, "db", v, err, sizeof err), -1);
    assert_string_equal(err, "db: value longer than 1023 bytes");
    assert_string_equal(c.db, "/var/lib/gpuprobe/x.db");
    assert_int_equal(config_set(&c, "token_file", v, err, sizeof err), -1);
    assert_string_equal(err, "token_file: value longer than 1023 bytes");
    v[1023] = '\0';
    assert_int_equal(config_set(&c, "db", v, err, sizeof err), 0);
    assert_int_equal(strlen(c.db), 1023);
}

static void test_set_unknown_key(void **state)
{
    (void)state;
    struct config c, before;
    char err[256];
    config_defaults(&c);
    config_defaults(&before);
    static const char *const bad[] = {"cpu_worker", "CPU_WORKERS", "", "listen ", "nope"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char want[128];
        err[0] = '\0';
        assert_int_equal(config_set(&c, bad[i], "1", err, sizeof err), -1);
        snprintf(want, sizeof want, "unknown setting '%s'", bad[i]);
        assert_string_equal(err, want);
    }
    assert_memory_equal(&c, &before, sizeof c);
}

static void test_set_log_level(void **state)
{
    (void)state;
    struct config c;
    char err[256];
    config_defaults(&c);
    static const struct {
        const char *name;
        int level;
    } ok[] = {{"debug", LOG_DEBUG}, {"warn", LOG_WARN}, {"error", LOG_ERROR}, {"info", LOG_INFO}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        assert_int_equal(config_set(&c, "log_level", ok[i].name, err, sizeof err), 0);
        assert_int_equal(c.log_level, ok[i].level);
    }
    static const char *const bad[] = {"warning", "INFO", "", "3", "trace"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char want[128];
        err[0] = '\0';
        assert_int_equal(config_set(&c, "log_level", bad[i], err, sizeof err), -1);
        snprintf(want, sizeof want,
                 "log_level: expected debug, info, warn or error, got '%s'", bad[i]);
        assert_string_equal(err, want);
    }
}

/* A refused log_level leaves the level as it was, as every other key does. */
static void test_set_log_level_refused_keeps_level(void **state)
{
    (void)state;
    struct config c;
    char err[256];
    config_defaults(&c);
    assert_int_equal(config_set(&c, "log_level", "warn", err, sizeof err), 0);
    assert_int_equal(config_set(&c, "log_level", "loud", err, sizeof err), -1);
    assert_int_equal(c.log_level, LOG_WARN);
}

/* metrics_devices: local by default, local or all, nothing else. */
static void test_set_metrics_devices(void **state)
{
    (void)state;
    struct config c;
    char err[256];
    config_defaults(&c);
    assert_int_equal(c.metrics_devices, METRICS_DEVICES_LOCAL);
    assert_int_equal(config_set(&c, "metrics_devices", "all", err, sizeof err), 0);
    assert_int_equal(c.metrics_devices, METRICS_DEVICES_ALL);
    static const char *const bad[] = {"ALL", "", "remote", "all "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char want[128];
        assert_int_equal(config_set(&c, "metrics_devices", bad[i], err, sizeof err), -1);
        snprintf(want, sizeof want, "metrics_devices: expected local or all, got '%s'", bad[i]);
        assert_string_equal(err, want);
        assert_int_equal(c.metrics_devices, METRICS_DEVICES_ALL);
    }
    assert_int_equal(config_set(&c, "metrics_devices", "local", err, sizeof err), 0);
    assert_int_equal(c.metrics_devices, METRICS_DEVICES_LOCAL);
}

/* ---- config_load_file -------------------------------------------------------- */

static void test_load_file(void **state)
{
    struct tmp *t = *state;
    write_file(t->path,
               "# gpuprobe configuration\n"
               "\n"
               "   \n"
               "listen = 0.0.0.0:9000   # trailing comment\n"
               "\tcpu_workers=8\n"
               "db   =   /var/lib/gpuprobe/db.sqlite   \n"
               "  # indented comment\n"
               "log_level = debug\r\n"
               "body_limit = 4096\r\n"
               "max_attempts = 5\n"
               "max_attempts = 7\n" /* a later line wins */
               "token_file =\n"
               "job_timeout_s = 120"); /* no final newline */
    struct config c;
    char err[512] = "";
    config_defaults(&c);
    snprintf(c.token_file, sizeof c.token_file, "/was/set/before");
    if (config_load_file(&c, t->path, err, sizeof err) != 0)
        fail_msg("config_load_file: %s", err);
    assert_string_equal(c.listen, "0.0.0.0:9000");
    assert_int_equal(c.cpu_workers, 8);
    assert_string_equal(c.db, "/var/lib/gpuprobe/db.sqlite");
    assert_int_equal(c.log_level, LOG_DEBUG);
    assert_int_equal(c.body_limit, 4096);
    assert_int_equal(c.max_attempts, 7);
    assert_string_equal(c.token_file, "");
    assert_int_equal(c.job_timeout_s, 120);
    /* untouched keys keep their defaults */
    assert_int_equal(c.http_threads, 4);
    assert_int_equal(c.connection_timeout_s, 30);
    assert_int_equal(c.discovery_timeout_s, 60);
}

static void test_load_empty_and_comment_only_files(void **state)
{
    struct tmp *t = *state;
    struct config c, d;
    char err[512] = "";
    config_defaults(&d);

    write_file(t->path, "");
    config_defaults(&c);
    assert_int_equal(config_load_file(&c, t->path, err, sizeof err), 0);
    assert_memory_equal(&c, &d, sizeof c);

    write_file(t->path, "# nothing\n\n#listen = 1.2.3.4:5\n \t \n");
    assert_int_equal(config_load_file(&c, t->path, err, sizeof err), 0);
    assert_memory_equal(&c, &d, sizeof c);
}

static void test_load_bad_value_names_line(void **state)
{
    struct tmp *t = *state;
    write_file(t->path, "# comment\n"
                        "cpu_workers = 4\n"
                        "http_threads = 0\n"
                        "max_attempts = 9\n");
    struct config c;
    char err[512] = "", want[512];
    config_defaults(&c);
    assert_int_equal(config_load_file(&c, t->path, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:3: http_threads: expected an integer from 1 to 256, got '0'",
             t->path);
    assert_string_equal(err, want);
    /* lines before the bad one were applied, none after it */
    assert_int_equal(c.cpu_workers, 4);
    assert_int_equal(c.http_threads, 4);
    assert_int_equal(c.max_attempts, 3);
}

static void test_load_line_without_equals(void **state)
{
    struct tmp *t = *state;
    write_file(t->path, "listen = 127.0.0.1:1\n\ncpu_workers 4\n");
    struct config c;
    char err[512] = "", want[512];
    config_defaults(&c);
    assert_int_equal(config_load_file(&c, t->path, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:3: expected 'key = value'", t->path);
    assert_string_equal(err, want);
}

static void test_load_unknown_key(void **state)
{
    struct tmp *t = *state;
    write_file(t->path, "# x\ncpu_wrokers = 4\n");
    struct config c;
    char err[512] = "", want[512];
    config_defaults(&c);
    assert_int_equal(config_load_file(&c, t->path, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:2: unknown setting 'cpu_wrokers'", t->path);
    assert_string_equal(err, want);
}

static void test_load_missing_file(void **state)
{
    struct tmp *t = *state;
    char path[192], err[512] = "", want[512];
    snprintf(path, sizeof path, "%s/does-not-exist.conf", t->dir);
    struct config c, d;
    config_defaults(&c);
    config_defaults(&d);
    assert_int_equal(config_load_file(&c, path, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: No such file or directory", path);
    assert_string_equal(err, want);
    assert_memory_equal(&c, &d, sizeof c);
}

/* A comment is a comment whatever its length: a line longer than the
 * reader's buffer must not have its tail parsed as a line of its own. */
static void test_load_long_comment_line(void **state)
{
    struct tmp *t = *state;
    size_t n = 3000;
    char *text = malloc(n + 64);
    assert_non_null(text);
    text[0] = '#';
    memset(text + 1, 'c', n - 1);
    snprintf(text + n, 64, "\ncpu_workers = 5\n");
    write_file(t->path, text);
    free(text);
    struct config c;
    char err[512] = "";
    config_defaults(&c);
    if (config_load_file(&c, t->path, err, sizeof err) != 0)
        fail_msg("a 3000-byte comment line was refused: %s", err);
    assert_int_equal(c.cpu_workers, 5);
}

/* ---- config_split_listen ----------------------------------------------------- */

static void test_split_listen_good(void **state)
{
    (void)state;
    static const struct {
        const char *listen, *host;
        int port;
    } cases[] = {
        {"127.0.0.1:8080", "127.0.0.1", 8080},
        {"[::1]:0", "::1", 0},
        {"localhost:65535", "localhost", 65535},
        {"0.0.0.0:1", "0.0.0.0", 1},
        {"[fe80::1:2]:443", "fe80::1:2", 443},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char host[128];
        int port = -7;
        memset(host, 'Z', sizeof host);
        if (config_split_listen(cases[i].listen, host, sizeof host, &port) != 0)
            fail_msg("'%s' refused", cases[i].listen);
        assert_string_equal(host, cases[i].host);
        assert_int_equal(port, cases[i].port);
    }
}

static void test_split_listen_malformed(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "127.0.0.1",       /* no port */
        "localhost:",      /* empty port */
        "localhost:70000", /* port out of range */
        "localhost:65536",
        "localhost:-1",
        "localhost:80x",
        "localhost:http",
        "[::1",            /* unclosed bracket */
        "[::1]",           /* bracketed, no port */
        "[::1]:",
        "[]:80",           /* empty bracketed host */
        "[::1]x:80",
        ":80",             /* no host */
        "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char host[64] = "untouched";
        int port = -7;
        if (config_split_listen(bad[i], host, sizeof host, &port) != -1)
            fail_msg("'%s' accepted as host '%s' port %d", bad[i], host, port);
        assert_string_equal(host, "untouched");
        assert_int_equal(port, -7);
    }
}

static void test_split_listen_host_buffer(void **state)
{
    (void)state;
    char host[16];
    int port = 0;
    /* "127.0.0.1" is 9 bytes: a 9-byte buffer cannot hold it with its NUL. */
    assert_int_equal(config_split_listen("127.0.0.1:80", host, 9, &port), -1);
    assert_int_equal(config_split_listen("127.0.0.1:80", host, 10, &port), 0);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 80);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_set_int_keys_in_range),
        cmocka_unit_test(test_set_int_keys_out_of_range),
        cmocka_unit_test(test_set_int_non_numeric),
        cmocka_unit_test(test_set_body_limit),
        cmocka_unit_test(test_set_strings),
        cmocka_unit_test(test_tls_pair_and_body_rate),
        cmocka_unit_test(test_set_unknown_key),
        cmocka_unit_test(test_set_log_level),
        cmocka_unit_test(test_set_log_level_refused_keeps_level),
        cmocka_unit_test(test_set_metrics_devices),
        cmocka_unit_test_setup_teardown(test_load_file, setup_tmp, teardown_tmp),
        cmocka_unit_test_setup_teardown(test_load_empty_and_comment_only_files, setup_tmp,
                                        teardown_tmp),
        cmocka_unit_test_setup_teardown(test_load_bad_value_names_line, setup_tmp, teardown_tmp),
        cmocka_unit_test_setup_teardown(test_load_line_without_equals, setup_tmp, teardown_tmp),
        cmocka_unit_test_setup_teardown(test_load_unknown_key, setup_tmp, teardown_tmp),
        cmocka_unit_test_setup_teardown(test_load_missing_file, setup_tmp, teardown_tmp),
        cmocka_unit_test_setup_teardown(test_load_long_comment_line, setup_tmp, teardown_tmp),
        cmocka_unit_test(test_split_listen_good),
        cmocka_unit_test(test_split_listen_malformed),
        cmocka_unit_test(test_split_listen_host_buffer),
    };
    return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
