/*
 * The route table (see routes.h). Patterns are matched segment by segment;
 * "{name}" captures one segment. The table is small, so a linear scan is
 * both the simplest and fast enough.
 */
#include "server/routes.h"

#include <stdio.h>
#include <string.h>

#include "server/handlers.h"

/* method, pattern, handler, write, documented, spool */
const struct route routes[] = {
    {"GET", "/healthz", h_healthz, 0, 1, 0},
    {"GET", "/readyz", h_readyz, 0, 1, 0},
    {"GET", "/openapi.json", h_static, 0, 1, 0},
    {"GET", "/api/v1/devices", h_devices_list, 0, 1, 0},
    {"GET", "/api/v1/devices/{uuid}", h_device_get, 0, 1, 0},
    {"GET", "/api/v1/devices/{uuid}/latency", h_device_latency, 0, 1, 0},
    {"GET", "/api/v1/devices/{uuid}/memory", h_device_memory, 0, 1, 0},
    {"GET", "/api/v1/devices/{uuid}/banks", h_device_banks, 0, 1, 0},
    {"GET", "/api/v1/devices/{uuid}/control-codes", h_device_control_codes, 0, 1, 0},
    {"GET", "/api/v1/devices/{uuid}/issue", h_device_issue, 0, 1, 0},
    {"GET", "/api/v1/devices/{uuid}/model-validation", h_device_model_validation, 0, 1, 0},
    {"POST", "/api/v1/model/occupancy", h_model_occupancy, 1, 1, 0},
    {"POST", "/api/v1/model/predict", h_model_predict, 1, 1, 0},
    {"GET", "/api/v1/job-kinds", h_job_kinds, 0, 1, 0},
    {"POST", "/api/v1/jobs", h_jobs_submit, 1, 1, 0},
    {"GET", "/api/v1/jobs", h_jobs_list, 0, 1, 0},
    {"GET", "/api/v1/jobs/{id}", h_job_get, 0, 1, 0},
    {"DELETE", "/api/v1/jobs/{id}", h_job_cancel, 1, 1, 0},
    {"GET", "/api/v1/jobs/{id}/output", h_job_output, 0, 1, 0},
    {"POST", "/api/v1/traces/sort", h_traces_sort, 1, 1, 1},
    {"GET", "/", h_static, 0, 0, 0},
    {"GET", "/index.html", h_static, 0, 0, 0},
    {"GET", "/app.js", h_static, 0, 0, 0},
    {"GET", "/style.css", h_static, 0, 0, 0},
};
const size_t route_count = sizeof routes / sizeof routes[0];

/* Matches path against pattern; captured segments go to params. */
static int path_matches(const char *pattern, const char *path, char params[][128], size_t nparams)
{
    size_t np = 0;
    while (*pattern && *path) {
        if (*pattern != '/' || *path != '/')
            return 0;
        pattern++, path++;
        const char *pe = strchr(pattern, '/'), *se = strchr(path, '/');
        size_t pl = pe ? (size_t)(pe - pattern) : strlen(pattern);
        size_t sl = se ? (size_t)(se - path) : strlen(path);
        if (pl > 2 && pattern[0] == '{' && pattern[pl - 1] == '}') {
            if (sl == 0 || sl >= 128)
                return 0;
            if (np < nparams) {
                memcpy(params[np], path, sl);
                params[np][sl] = '\0';
            }
            np++;
        } else if (pl != sl || memcmp(pattern, path, pl) != 0) {
            return 0;
        }
        pattern += pl, path += sl;
    }
    return *pattern == '\0' && *path == '\0';
}

const struct route *route_match(const char *method, const char *path, int *path_known,
                                char params[][128], size_t nparams)
{
    *path_known = 0;
    for (size_t i = 0; i < route_count; i++) {
        if (!path_matches(routes[i].pattern, path, params, nparams))
            continue;
        *path_known = 1;
        if (strcmp(routes[i].method, method) == 0)
            return &routes[i];
    }
    return NULL;
}

void route_allowed_methods(const char *path, char *buf, size_t len)
{
    char scratch[4][128];
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < route_count; i++) {
        if (!path_matches(routes[i].pattern, path, scratch, 4))
            continue;
        if (strstr(buf, routes[i].method))
            continue;
        n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? ", " : "",
                              routes[i].method);
    }
}
