/*
 * Unit tests of the route table and its matcher (server/api/routes.c): every
 * route of the table is found for its method and a concrete path (its {name}
 * segments filled in) and for no other method; the named API paths reach the
 * expected handlers with their {id}/{uuid} captured; a known path under a
 * method it does not take is told apart (path_known = 1, no route -> 405)
 * from an unknown path (path_known = 0 -> 404), including trailing slashes,
 * extra segments, empty segments and "//"; route_allowed_methods lists each
 * method of a path once, in table order, and never writes past a small
 * buffer; every route has a handler, and the write routes are exactly the
 * POST and DELETE ones.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "server/api/handlers.h"
#include "server/api/routes.h"

/* The pattern with each {name} replaced by "seg<i>". */
static void concrete_path(const char *pattern, char *out, size_t len)
{
    size_t o = 0;
    int nseg = 0;
    for (const char *p = pattern; *p && o + 1 < len;) {
        if (*p == '{') {
            const char *close = strchr(p, '}');
            assert_non_null(close);
            o += (size_t)snprintf(out + o, len - o, "seg%d", nseg++);
            p = close + 1;
        } else {
            out[o++] = *p++;
        }
    }
    out[o] = '\0';
}

static const char *const methods[] = {"GET", "POST", "DELETE", "PUT", "PATCH", "HEAD"};
#define NMETHODS (sizeof methods / sizeof methods[0])

static void test_every_route_matches_its_path(void **state)
{
    (void)state;
    assert_true(route_count >= 14);
    for (size_t i = 0; i < route_count; i++) {
        char path[256], params[4][128];
        int known = -1;
        concrete_path(routes[i].pattern, path, sizeof path);
        memset(params, 0, sizeof params);
        const struct route *r = route_match(routes, route_count, routes[i].method, path, &known, params, 4);
        if (r != &routes[i])
            fail_msg("%s %s (as %s) matched %s", routes[i].method, routes[i].pattern, path,
                     r ? r->pattern : "nothing");
        assert_int_equal(known, 1);
        /* each {name} captured in order */
        int nseg = 0;
        for (const char *p = routes[i].pattern; (p = strchr(p, '{')) != NULL; p++) {
            char want[16];
            snprintf(want, sizeof want, "seg%d", nseg);
            assert_string_equal(params[nseg], want);
            nseg++;
        }
    }
}

/* Under a method no route for the path has: NULL, and the path is known. */
static void test_every_route_only_for_its_methods(void **state)
{
    (void)state;
    for (size_t i = 0; i < route_count; i++) {
        char path[256], params[4][128];
        concrete_path(routes[i].pattern, path, sizeof path);
        for (size_t m = 0; m < NMETHODS; m++) {
            int known = -1;
            const struct route *r = route_match(routes, route_count, methods[m], path, &known, params, 4);
            assert_int_equal(known, 1);
            if (r) {
                assert_string_equal(r->method, methods[m]);
            } else {
                for (size_t j = 0; j < route_count; j++) {
                    char other[256];
                    concrete_path(routes[j].pattern, other, sizeof other);
                    if (strcmp(other, path) == 0 && strcmp(routes[j].method, methods[m]) == 0)
                        fail_msg("%s %s not found", methods[m], path);
                }
            }
        }
    }
}

static void test_named_routes(void **state)
{
    (void)state;
    static const struct {
        const char *method, *path;
        route_handler handler;
        int write;
        const char *param;
    } cases[] = {
        {"GET", "/healthz", h_healthz, 0, NULL},
        {"GET", "/readyz", h_readyz, 0, NULL},
        {"GET", "/openapi.json", h_static, 0, NULL},
        {"GET", "/api/v1/devices", h_devices_list, 0, NULL},
        {"GET", "/api/v1/devices/GPU-8f3a9c2e-1b4d-4e6f-a7b8-9c0d1e2f3a4b", h_device_get, 0,
         "GPU-8f3a9c2e-1b4d-4e6f-a7b8-9c0d1e2f3a4b"},
        {"GET", "/api/v1/job-kinds", h_job_kinds, 0, NULL},
        {"POST", "/api/v1/jobs", h_jobs_submit, 1, NULL},
        {"GET", "/api/v1/jobs", h_jobs_list, 0, NULL},
        {"GET", "/api/v1/jobs/42", h_job_get, 0, "42"},
        {"DELETE", "/api/v1/jobs/42", h_job_cancel, 1, "42"},
        {"GET", "/api/v1/jobs/x", h_job_get, 0, "x"}, /* the handler judges the id */
        {"GET", "/", h_static, 0, NULL},
        {"GET", "/index.html", h_static, 0, NULL},
        {"GET", "/app.js", h_static, 0, NULL},
        {"GET", "/style.css", h_static, 0, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char params[2][128];
        int known = -1;
        strcpy(params[0], "untouched");
        const struct route *r = route_match(routes, route_count, cases[i].method, cases[i].path, &known, params, 2);
        if (!r)
            fail_msg("%s %s: no route", cases[i].method, cases[i].path);
        assert_int_equal(known, 1);
        assert_string_equal(r->method, cases[i].method);
        assert_true(r->handler == cases[i].handler);
        assert_int_equal(r->write, cases[i].write);
        assert_string_equal(params[0], cases[i].param ? cases[i].param : "untouched");
    }
}

static void test_method_not_allowed(void **state)
{
    (void)state;
    static const struct {
        const char *method, *path;
    } cases[] = {
        {"PUT", "/api/v1/jobs"},        {"DELETE", "/api/v1/jobs"},
        {"PATCH", "/api/v1/jobs/42"},   {"POST", "/api/v1/jobs/42"},
        {"POST", "/healthz"},           {"DELETE", "/api/v1/devices/GPU-1"},
        {"POST", "/api/v1/devices"},    {"POST", "/"},
        {"get", "/healthz"},            /* methods are case-sensitive */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char params[2][128];
        int known = 0;
        const struct route *r = route_match(routes, route_count, cases[i].method, cases[i].path, &known, params, 2);
        if (r)
            fail_msg("%s %s matched %s %s", cases[i].method, cases[i].path, r->method,
                     r->pattern);
        if (known != 1)
            fail_msg("%s %s: path not known", cases[i].method, cases[i].path);
    }
}

static void test_not_found(void **state)
{
    (void)state;
    static const char *const paths[] = {
        "/api/v1/jobs/1/x", "/api/v1/jobs/", "/nope", "//", "", "/api/v1/jobs//",
        "/api/v1/devices/", "/api/v1//jobs", "/api/v1/jobs/1/", "/healthz/", "healthz",
        "/HEALTHZ", "/api/v1", "/api/v2/jobs", "/index.htm", "/api/v1/jobs?x=1/",
    };
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        for (size_t m = 0; m < NMETHODS; m++) {
            char params[2][128];
            int known = 1;
            const struct route *r = route_match(routes, route_count, methods[m], paths[i], &known, params, 2);
            if (r)
                fail_msg("%s '%s' matched %s %s", methods[m], paths[i], r->method, r->pattern);
            if (known != 0)
                fail_msg("%s '%s': path reported known", methods[m], paths[i]);
        }
    }
}

/* A captured segment that does not fit params is not a match. */
static void test_overlong_segment(void **state)
{
    (void)state;
    char path[512], params[1][128];
    int known = -1;
    int n = snprintf(path, sizeof path, "/api/v1/jobs/");
    memset(path + n, '9', 127);
    path[n + 127] = '\0';
    assert_non_null(route_match(routes, route_count, "GET", path, &known, params, 1));
    assert_int_equal(strlen(params[0]), 127);
    memset(path + n, '9', 128);
    path[n + 128] = '\0';
    assert_null(route_match(routes, route_count, "GET", path, &known, params, 1));
    assert_int_equal(known, 0);
}

static void test_allowed_methods(void **state)
{
    (void)state;
    static const struct {
        const char *path, *allow;
    } cases[] = {
        {"/api/v1/jobs", "POST, GET"},
        {"/api/v1/jobs/42", "GET, DELETE"},
        {"/healthz", "GET"},
        {"/", "GET"},
        {"/api/v1/devices/GPU-1", "GET"},
        {"/nope", ""},
        {"/api/v1/jobs/", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[128];
        memset(buf, 'Z', sizeof buf);
        route_allowed_methods(routes, route_count, cases[i].path, buf, sizeof buf);
        assert_string_equal(buf, cases[i].allow);
    }
}

/* Every path of the table: each of its methods once, nothing else. */
static void test_allowed_methods_no_duplicates(void **state)
{
    (void)state;
    for (size_t i = 0; i < route_count; i++) {
        char path[256], buf[128], want[128] = "";
        size_t n = 0;
        concrete_path(routes[i].pattern, path, sizeof path);
        for (size_t j = 0; j < route_count; j++) {
            char other[256];
            concrete_path(routes[j].pattern, other, sizeof other);
            if (strcmp(other, path) != 0)
                continue;
            int seen = 0;
            for (size_t k = 0; k < j; k++) {
                char o2[256];
                concrete_path(routes[k].pattern, o2, sizeof o2);
                if (strcmp(o2, path) == 0 && strcmp(routes[k].method, routes[j].method) == 0)
                    seen = 1;
            }
            if (!seen)
                n += (size_t)snprintf(want + n, sizeof want - n, "%s%s", n ? ", " : "",
                                      routes[j].method);
        }
        route_allowed_methods(routes, route_count, path, buf, sizeof buf);
        assert_string_equal(buf, want);
    }
}

/* A short buffer is cut, never overrun. */
static void test_allowed_methods_small_buffer(void **state)
{
    (void)state;
    for (size_t len = 1; len <= 12; len++) {
        char buf[16];
        memset(buf, '#', sizeof buf);
        route_allowed_methods(routes, route_count, "/api/v1/jobs", buf, len);
        assert_true(strlen(buf) < len);
        assert_memory_equal(buf, "POST, GET", strlen(buf));
        for (size_t k = len; k < sizeof buf; k++)
            assert_int_equal(buf[k], '#');
    }
}

static void test_table_properties(void **state)
{
    (void)state;
    size_t writes = 0;
    for (size_t i = 0; i < route_count; i++) {
        const struct route *r = &routes[i];
        assert_non_null(r->handler);
        assert_non_null(r->pattern);
        assert_int_equal(r->pattern[0], '/');
        int mutating = strcmp(r->method, "POST") == 0 || strcmp(r->method, "DELETE") == 0;
        /* the model's calculations are POSTs that store and run nothing */
        int calculation = strncmp(r->pattern, "/api/v1/model/", 14) == 0;
        assert_true(mutating || strcmp(r->method, "GET") == 0);
        if (r->write != (mutating && !calculation))
            fail_msg("%s %s: write=%d", r->method, r->pattern, r->write);
        writes += (size_t)r->write;
        /* only the uploads of a trace, a PTX module to capture or a bundle stream
           their body to a file; a bundle's is capped by import_limit, being parsed
           whole in memory */
        int want = strcmp(r->pattern, "/api/v1/traces/sort") == 0 ||
                           strcmp(r->pattern, "/api/v1/traces/capture") == 0
                       ? ROUTE_SPOOL
                   : strcmp(r->pattern, "/api/v1/import") == 0 ? ROUTE_SPOOL_BUNDLE
                                                                : 0;
        assert_int_equal(r->spool, want);
        /* no two routes share method and pattern */
        for (size_t j = i + 1; j < route_count; j++)
            if (strcmp(r->method, routes[j].method) == 0 &&
                strcmp(r->pattern, routes[j].pattern) == 0)
                fail_msg("%s %s listed twice", r->method, r->pattern);
    }
    assert_int_equal(writes, 5); /* POST /api/v1/jobs, DELETE /api/v1/jobs/{id},
                                    POST /api/v1/traces/sort, POST /api/v1/traces/capture,
                                    POST /api/v1/import */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_route_matches_its_path),
        cmocka_unit_test(test_every_route_only_for_its_methods),
        cmocka_unit_test(test_named_routes),
        cmocka_unit_test(test_method_not_allowed),
        cmocka_unit_test(test_not_found),
        cmocka_unit_test(test_overlong_segment),
        cmocka_unit_test(test_allowed_methods),
        cmocka_unit_test(test_allowed_methods_no_duplicates),
        cmocka_unit_test(test_allowed_methods_small_buffer),
        cmocka_unit_test(test_table_properties),
    };
    return cmocka_run_group_tests_name("routes", tests, NULL, NULL);
}
