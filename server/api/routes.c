/*
 * The route table (see routes.h).
 */
#include "server/api/routes.h"

#include "server/api/handlers.h"

/* method, pattern, handler, write, documented, spool */
const struct route routes[] = {
    {"GET", "/healthz", h_healthz, 0, 1, 0},
    {"GET", "/readyz", h_readyz, 0, 1, 0},
    {"GET", "/metrics", h_metrics, 0, 1, 0},
    {"GET", "/openapi.json", h_static, 0, 1, 0},
    {"GET", "/api/v1/devices", h_devices_list, 0, 1, 0},
    {"GET", "/api/v1/devices/{uuid}", h_device_get, 0, 1, 0},
    {"GET", "/api/v1/devices/{uuid}/latency", h_device_latency, 0, 1, 0},
    {"GET", "/api/v1/devices/{uuid}/memory", h_device_memory, 0, 1, 0},
    {"GET", "/api/v1/devices/{uuid}/banks", h_device_banks, 0, 1, 0},
    {"GET", "/api/v1/devices/{uuid}/control-codes", h_device_control_codes, 0, 1, 0},
    {"GET", "/api/v1/devices/{uuid}/dual-issue", h_device_issue, 0, 1, 0},
    {"GET", "/api/v1/devices/{uuid}/issue", h_device_issue, 0, 1, 0}, /* the old path */
    {"GET", "/api/v1/devices/{uuid}/model-validation", h_device_model_validation, 0, 1, 0},
    {"GET", "/api/v1/devices/{uuid}/export", h_device_export, 0, 1, 0},
    {"GET", "/api/v1/upstream", h_upstream, 0, 1, 0},
    {"POST", "/api/v1/import", h_import, 1, 1, ROUTE_SPOOL_BUNDLE},
    {"GET", "/api/v1/fleet", h_fleet, 0, 1, 0},
    {"GET", "/api/v1/fleet/distribution", h_fleet_distribution, 0, 1, 0},
    /* calculations: nothing is stored or run, so they need no token */
    {"GET", "/api/v1/model/occupancy", h_model_occupancy_rules, 0, 1, 0},
    {"POST", "/api/v1/model/occupancy", h_model_occupancy, 0, 1, 0},
    {"POST", "/api/v1/model/predict", h_model_predict, 0, 1, 0},
    {"GET", "/api/v1/job-kinds", h_job_kinds, 0, 1, 0},
    {"POST", "/api/v1/jobs", h_jobs_submit, 1, 1, 0},
    {"GET", "/api/v1/jobs", h_jobs_list, 0, 1, 0},
    {"GET", "/api/v1/jobs/{id}", h_job_get, 0, 1, 0},
    {"DELETE", "/api/v1/jobs/{id}", h_job_cancel, 1, 1, 0},
    {"GET", "/api/v1/jobs/{id}/output", h_job_output, 0, 1, 0},
    {"POST", "/api/v1/traces/sort", h_traces_sort, 1, 1, ROUTE_SPOOL},
    {"POST", "/api/v1/traces/capture", h_traces_capture, 1, 1, ROUTE_SPOOL},
    {"GET", "/", h_static, 0, 0, 0},
    {"GET", "/index.html", h_static, 0, 0, 0},
    {"GET", "/app.js", h_static, 0, 0, 0},
    {"GET", "/style.css", h_static, 0, 0, 0},
};
const size_t route_count = sizeof routes / sizeof routes[0];
