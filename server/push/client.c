/*
 * POSTing a bundle upstream with libcurl (see client.h).
 */
#include "server/push/client.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ANSWER_KEEP_BYTES (64u * 1024u)

int push_client_init(char *err, size_t errlen)
{
    CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
    if (rc == CURLE_OK)
        return 0;
    snprintf(err, errlen, "libcurl: %s", curl_easy_strerror(rc));
    return -1;
}

/* The CA file to use: libcurl's own when it exists, else the first of the
 * usual places that does; NULL leaves libcurl's default. */
static const char *ca_file(void)
{
    static const char *const usual[] = {
        "/etc/ssl/certs/ca-certificates.crt",                /* Debian, Ubuntu */
        "/etc/pki/tls/certs/ca-bundle.crt",                  /* RHEL, Fedora */
        "/etc/ssl/ca-bundle.pem",                            /* SUSE */
        "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", /* RHEL 7+ */
        "/etc/ssl/cert.pem",                                 /* Alpine */
    };
    const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
    if (v->cainfo && access(v->cainfo, R_OK) == 0)
        return NULL;
    for (size_t i = 0; i < sizeof usual / sizeof usual[0]; i++)
        if (access(usual[i], R_OK) == 0)
            return usual[i];
    return NULL;
}

struct kept {
    char data[ANSWER_KEEP_BYTES + 1];
    size_t len;
};

/* Keeps the first ANSWER_KEEP_BYTES of the answer; the rest is read and dropped. */
static size_t keep(char *p, size_t size, size_t n, void *ctx)
{
    struct kept *k = ctx;
    size_t bytes = size * n, room = ANSWER_KEEP_BYTES - k->len;
    size_t take = bytes < room ? bytes : room;
    memcpy(k->data + k->len, p, take);
    k->len += take;
    k->data[k->len] = '\0';
    return bytes;
}

static int stop_requested(void *ctx, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    (void)a, (void)b, (void)c, (void)d;
    const volatile int *stop = ctx;
    return stop && *stop;
}

/* What the answer says, shortly: a problem's "type: detail (field F)", an
 * import's counts, or the start of whatever else it is; and whether it is
 * an import's answer at all (a proxy's or a web server's page is not). */
static void describe(const struct kept *k, struct push_answer *a)
{
    char *out = a->detail;
    size_t len = sizeof a->detail;
    int status = a->status;
    json_t *j = json_loads(k->data, 0, NULL);
    const char *type = json_string_value(json_object_get(j, "type"));
    const char *detail = json_string_value(json_object_get(j, "detail"));
    const char *field = json_string_value(json_object_get(j, "field"));
    a->imported = json_is_integer(json_object_get(j, "results_added")) &&
                  json_is_integer(json_object_get(j, "results_held"));
    if (status == 200 && a->imported)
        snprintf(out, len, "results_added=%lld results_held=%lld",
                 (long long)json_integer_value(json_object_get(j, "results_added")),
                 (long long)json_integer_value(json_object_get(j, "results_held")));
    else if (detail)
        snprintf(out, len, "HTTP %d %.60s: %.400s%s%.80s%s", status,
                 type ? type + (strncmp(type, "/problems/", 10) == 0 ? 10 : 0) : "", detail,
                 field ? " (field " : "", field ? field : "", field ? ")" : "");
    else
        snprintf(out, len, "HTTP %d: %.200s", status, k->len ? k->data : "(empty answer)");
    json_decref(j);
}

static void set_options(CURL *c, const char *url, const char *private_ca,
                        struct curl_slist *headers, const char *body, size_t len, struct kept *k,
                        const volatile int *stop)
{
    const char *ca = private_ca && *private_ca ? private_ca : ca_file();
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, k);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, stop_requested);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, (void *)stop);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "gpuprobe-push");
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L); /* libcurl's defaults, said once here */
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
    if (ca)
        curl_easy_setopt(c, CURLOPT_CAINFO, ca);
    if (private_ca && *private_ca)
        curl_easy_setopt(c, CURLOPT_CAPATH, NULL); /* that CA alone, not the system's too */
}

int push_post(const char *upstream, const char *token, const char *ca_file, const char *body,
              size_t len, const volatile int *stop, struct push_answer *a)
{
    char url[1200], auth[600];
    size_t ul = strlen(upstream);
    while (ul && upstream[ul - 1] == '/')
        ul--;
    memset(a, 0, sizeof *a);
    snprintf(url, sizeof url, "%.*s/api/v1/import", (int)(ul < 1100 ? ul : 1100), upstream);
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    struct kept *k = calloc(1, sizeof *k);
    CURL *c = k ? curl_easy_init() : NULL;
    struct curl_slist *h = curl_slist_append(NULL, auth);
    struct curl_slist *h2 = h ? curl_slist_append(h, "Content-Type: application/json") : NULL;
    struct curl_slist *headers = h2 ? curl_slist_append(h2, "Expect: 100-continue") : NULL;
    if (!c || !headers) {
        snprintf(a->detail, sizeof a->detail, "libcurl: out of memory");
        curl_slist_free_all(h2 ? h2 : h);
        curl_easy_cleanup(c);
        free(k);
        return -1;
    }
    set_options(c, url, ca_file, headers, body, len, k, stop);
    char why[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, why);
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    if (rc == CURLE_OK) {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        a->status = (int)status;
        describe(k, a);
    } else {
        snprintf(a->detail, sizeof a->detail, "%.300s: %s%s%.200s", url, curl_easy_strerror(rc),
                 why[0] ? ": " : "", why); /* why: which certificate check failed, say */
    }
    curl_slist_free_all(headers);
    curl_easy_cleanup(c);
    free(k);
    return 0;
}
