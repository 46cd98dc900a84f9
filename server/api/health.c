/*
 * /healthz (the process serves) and /readyz (it can do its work: store open
 * and able to write, scheduler running, discovery finished). Having no GPU
 * is ready: the daemon then serves everything that needs none, and says why
 * there is no GPU. A store whose last write failed for the disk's sake
 * (full, I/O error) is not ready until a write succeeds again (the
 * scheduler probes it): the answer is then a 503 problem+json that says why,
 * carrying the same members as the usual body.
 */
#include "server/app.h"
#include "server/api/handlers.h"
#include "server/jobs/scheduler.h"

void h_healthz(struct http_req *rq, struct http_resp *rs)
{
    (void)rq;
    http_json(rs, 200, json_pack("{s:s, s:s}", "status", "ok", "version", GPUPROBE_VERSION));
}

static const char *discovery_name(enum discovery_state d)
{
    return d == DISCOVERY_PENDING ? "pending" : d == DISCOVERY_DONE ? "done" : "failed";
}

void h_readyz(struct http_req *rq, struct http_resp *rs)
{
    struct app *app = rq->app;
    int store_ok = store_schema_version(app->db) == store_schema_latest();
    int sched_ok = scheduler_running(app->sched);
    pthread_mutex_lock(&app->inv_lock);
    enum discovery_state d = app->discovery;
    json_t *reason = app->inv.reason[0] ? json_string(app->inv.reason) : json_null();
    size_t count = app->inv.count;
    pthread_mutex_unlock(&app->inv_lock);
    char why[256];
    int64_t since = 0;
    int writable = !store_ok || store_write_health(app->db, why, sizeof why, &since) == 0;
    int ready = store_ok && writable && sched_ok && d != DISCOVERY_PENDING;
    json_t *body = json_pack("{s:b, s:s, s:s, s:s, s:I, s:o}", "ready", ready, "store",
                             !store_ok ? "unavailable" : writable ? "ok" : "cannot-write",
                             "scheduler", sched_ok ? "running" : "stopped", "discovery",
                             discovery_name(d), "devices", (json_int_t)count, "devices_reason",
                             reason);
    if (writable) {
        http_json(rs, ready ? 200 : 503, body);
        return;
    }
    json_object_set_new(body, "store_error", json_string(why));
    json_object_set_new(body, "store_failing_since_ms", json_integer(since));
    problem_members(rq, rs, 503, "unavailable", body,
                    "the store cannot write (%s): jobs cannot be accepted or finished until "
                    "it can", why);
}
