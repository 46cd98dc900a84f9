/*
 * Encoding jobs for the API. Parameters and results are stored as JSON text
 * and embedded as objects; text that does not parse (it cannot, since only
 * validated JSON is stored, but a hand-edited database could hold anything)
 * is served as null rather than failing the whole listing.
 */
#include "server/api/job_json.h"

#include "util/rfc3339.h"
#include "util/utf8.h"

#include <stdio.h>
#include <time.h>

static json_t *embedded(const char *text)
{
    json_t *j = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
    return j ? j : json_null();
}

static json_t *duration(const struct job_row *j)
{
    if (!j->started_ms || !j->finished_ms)
        return json_null();
    return json_real((double)(j->finished_ms - j->started_ms) / 1000.0);
}

json_t *job_to_json(const struct job_row *j, int detail)
{
    json_t *o = json_pack(
        "{s:I, s:o, s:o, s:o, s:s, s:i, s:i, s:i, s:b, s:o, s:o, s:o, s:o, s:o}", "id",
        (json_int_t)j->id, "kind", json_text(j->kind), "device", json_text(j->device),
        "params", embedded(j->params_json), "state", job_state_name(j->state), "attempt",
        j->attempt, "max_attempts", j->max_attempts, "timeout_s", j->timeout_s,
        "cancel_requested", j->cancel_requested, "created_at", time_to_json(j->created_ms),
        "started_at", time_to_json(j->started_ms), "finished_at", time_to_json(j->finished_ms),
        "duration_s", duration(j), "error", json_text(j->error));
    json_t *why = embedded(j->error_detail); /* "error_class", "error_line", ... */
    if (o && json_is_object(why))
        json_object_update_missing(o, why);
    json_decref(why);
    if (o && detail)
        json_object_set_new(o, "result", embedded(j->result_json));
    return o;
}

json_t *job_events_to_json(const struct job_event *ev, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_pack("{s:o, s:s, s:o}", "at", time_to_json(ev[i].at_ms),
                                           "state", job_state_name(ev[i].state), "message",
                                           json_text(ev[i].message ? ev[i].message : "")));
    return a;
}
