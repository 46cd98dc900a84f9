/*
 * web/openapi.json and the route table (server/api/routes.c) describe the same
 * API: every documented route is in the document, every operation of the
 * document is a route, and the write routes (and only they) ask for the
 * bearer token. Run from the repository root.
 */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "server/api/routes.h"

#define OPENAPI_PATH "web/openapi.json"

static json_t *doc;

static const char *const http_methods[] = {
    "get", "put", "post", "delete", "options", "head", "patch", "trace", NULL,
};

static void lowercase(const char *in, char *out, size_t len)
{
    size_t i;
    for (i = 0; in[i] && i + 1 < len; i++)
        out[i] = (char)tolower((unsigned char)in[i]);
    out[i] = '\0';
}

static void uppercase(const char *in, char *out, size_t len)
{
    size_t i;
    for (i = 0; in[i] && i + 1 < len; i++)
        out[i] = (char)toupper((unsigned char)in[i]);
    out[i] = '\0';
}

/* The operation object of method (any case) on pattern, or NULL. */
static json_t *operation(const char *pattern, const char *method)
{
    char m[16];
    lowercase(method, m, sizeof m);
    return json_object_get(json_object_get(json_object_get(doc, "paths"), pattern), m);
}

/* The route of the table for method+pattern, or NULL. */
static const struct route *route_of(const char *method, const char *pattern)
{
    for (size_t i = 0; i < route_count; i++)
        if (strcmp(routes[i].method, method) == 0 && strcmp(routes[i].pattern, pattern) == 0)
            return &routes[i];
    return NULL;
}

/* 1 if the operation's security requirements include the bearer scheme. */
static int requires_bearer(const json_t *op)
{
    const json_t *security = json_object_get(op, "security"), *req;
    size_t i;
    if (!security)
        security = json_object_get(doc, "security");
    json_array_foreach(security, i, req) {
        if (json_object_get(req, "bearer"))
            return 1;
    }
    return 0;
}

static int load_document(void **state)
{
    json_error_t e;
    (void)state;
    doc = json_load_file(OPENAPI_PATH, JSON_REJECT_DUPLICATES, &e);
    if (!doc) {
        print_error("%s:%d:%d: %s\n", OPENAPI_PATH, e.line, e.column, e.text);
        return -1;
    }
    return 0;
}

static int free_document(void **state)
{
    (void)state;
    json_decref(doc);
    doc = NULL;
    return 0;
}

static void test_document_is_openapi_3_1(void **state)
{
    const char *version = json_string_value(json_object_get(doc, "openapi"));
    (void)state;
    assert_non_null(version);
    assert_int_equal(strncmp(version, "3.1.", 4), 0);
    assert_true(json_is_object(json_object_get(doc, "info")));
    assert_true(json_is_object(json_object_get(doc, "paths")));
    assert_true(route_count > 0);
}

static void test_every_documented_route_is_in_the_document(void **state)
{
    int missing = 0;
    (void)state;
    for (size_t i = 0; i < route_count; i++) {
        if (!routes[i].documented)
            continue;
        if (!json_is_object(operation(routes[i].pattern, routes[i].method))) {
            print_error("route %s %s is not in %s\n", routes[i].method, routes[i].pattern,
                        OPENAPI_PATH);
            missing++;
        }
    }
    assert_int_equal(missing, 0);
}

static void test_every_operation_is_a_documented_route(void **state)
{
    const char *pattern;
    json_t *item;
    int stray = 0;
    (void)state;
    json_object_foreach(json_object_get(doc, "paths"), pattern, item) {
        for (const char *const *m = http_methods; *m; m++) {
            char method[16];
            const struct route *r;
            if (!json_object_get(item, *m))
                continue;
            uppercase(*m, method, sizeof method);
            r = route_of(method, pattern);
            if (!r) {
                print_error("%s %s is documented but not in the route table\n", method, pattern);
                stray++;
            } else if (!r->documented) {
                print_error("%s %s is documented but marked undocumented in the route table\n",
                            method, pattern);
                stray++;
            }
        }
    }
    assert_int_equal(stray, 0);
}

static void test_bearer_scheme_is_declared(void **state)
{
    json_t *scheme = json_object_get(
        json_object_get(json_object_get(doc, "components"), "securitySchemes"), "bearer");
    (void)state;
    assert_non_null(scheme);
    assert_string_equal(json_string_value(json_object_get(scheme, "type")), "http");
    assert_string_equal(json_string_value(json_object_get(scheme, "scheme")), "bearer");
}

static void test_write_routes_and_only_they_require_bearer(void **state)
{
    int wrong = 0;
    (void)state;
    for (size_t i = 0; i < route_count; i++) {
        json_t *op = operation(routes[i].pattern, routes[i].method);
        if (!routes[i].documented || !op)
            continue;
        if (routes[i].write && !requires_bearer(op)) {
            print_error("write route %s %s does not require the bearer token\n",
                        routes[i].method, routes[i].pattern);
            wrong++;
        } else if (!routes[i].write && requires_bearer(op)) {
            print_error("read route %s %s requires the bearer token\n", routes[i].method,
                        routes[i].pattern);
            wrong++;
        }
        if (routes[i].write && (!json_object_get(json_object_get(op, "responses"), "401") ||
                                !json_object_get(json_object_get(op, "responses"), "403"))) {
            print_error("write route %s %s does not document 401 and 403\n", routes[i].method,
                        routes[i].pattern);
            wrong++;
        }
    }
    assert_int_equal(wrong, 0);
}

/* 1 if obj[key] is the string value. */
static int member_is(const json_t *obj, const char *key, const char *value)
{
    const char *v = json_string_value(json_object_get(obj, key));
    return v && strcmp(v, value) == 0;
}

/* 1 if a path parameter called name is declared in params (an array). */
static int declares_path_param(const json_t *params, const char *name)
{
    const char *prefix = "#/components/parameters/";
    json_t *p;
    size_t i;
    json_array_foreach(params, i, p) {
        const char *ref = json_string_value(json_object_get(p, "$ref"));
        if (ref && strncmp(ref, prefix, strlen(prefix)) == 0)
            p = json_object_get(json_object_get(json_object_get(doc, "components"), "parameters"),
                                ref + strlen(prefix));
        if (member_is(p, "in", "path") && member_is(p, "name", name))
            return 1;
    }
    return 0;
}

static void test_path_parameters_are_declared(void **state)
{
    int wrong = 0;
    (void)state;
    for (size_t i = 0; i < route_count; i++) {
        const char *s = routes[i].pattern;
        json_t *item = json_object_get(json_object_get(doc, "paths"), routes[i].pattern);
        json_t *op = operation(routes[i].pattern, routes[i].method);
        if (!routes[i].documented || !op)
            continue;
        while ((s = strchr(s, '{')) != NULL) {
            char name[64];
            const char *end = strchr(s, '}');
            size_t n = end ? (size_t)(end - s - 1) : 0;
            if (!end || n == 0 || n >= sizeof name) {
                print_error("bad pattern %s\n", routes[i].pattern);
                wrong++;
                break;
            }
            memcpy(name, s + 1, n);
            name[n] = '\0';
            if (!declares_path_param(json_object_get(item, "parameters"), name) &&
                !declares_path_param(json_object_get(op, "parameters"), name)) {
                print_error("%s %s: path parameter {%s} is not declared\n", routes[i].method,
                            routes[i].pattern, name);
                wrong++;
            }
            s = end + 1;
        }
    }
    assert_int_equal(wrong, 0);
}

/* 1 if the response (or the components/responses entry it refers to) is a problem. */
static int is_problem_response(const json_t *resp)
{
    const char *prefix = "#/components/responses/";
    const char *ref = json_string_value(json_object_get(resp, "$ref"));
    if (ref && strncmp(ref, prefix, strlen(prefix)) == 0)
        resp = json_object_get(json_object_get(json_object_get(doc, "components"), "responses"),
                               ref + strlen(prefix));
    return json_object_get(json_object_get(resp, "content"), "application/problem+json") != NULL;
}

/* Each operation has a 2xx answer, and its 4xx answers are problem documents. */
static void test_every_operation_documents_success_and_problems(void **state)
{
    const char *pattern;
    json_t *item;
    int wrong = 0;
    (void)state;
    json_object_foreach(json_object_get(doc, "paths"), pattern, item) {
        for (const char *const *m = http_methods; *m; m++) {
            json_t *responses = json_object_get(json_object_get(item, *m), "responses");
            const char *code;
            json_t *resp;
            int success = 0;
            if (!json_object_get(item, *m))
                continue;
            json_object_foreach(responses, code, resp) {
                if (code[0] == '2')
                    success = 1;
                if (code[0] == '4' && !is_problem_response(resp)) {
                    print_error("%s %s: answer %s is not application/problem+json\n", *m,
                                pattern, code);
                    wrong++;
                }
            }
            if (!success) {
                print_error("%s %s documents no 2xx answer\n", *m, pattern);
                wrong++;
            }
        }
    }
    assert_int_equal(wrong, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_document_is_openapi_3_1),
        cmocka_unit_test(test_every_documented_route_is_in_the_document),
        cmocka_unit_test(test_every_operation_is_a_documented_route),
        cmocka_unit_test(test_bearer_scheme_is_declared),
        cmocka_unit_test(test_write_routes_and_only_they_require_bearer),
        cmocka_unit_test(test_path_parameters_are_declared),
        cmocka_unit_test(test_every_operation_documents_success_and_problems),
    };
    return cmocka_run_group_tests_name("openapi", tests, load_document, free_document);
}
