/*
 * GET /api/v1/upstream: where this node pushes its results and how that
 * goes (docs/api.md, "Fleet"): the configured upstream, the outbox's
 * counts, the newest success and error, and the rows it holds (oldest
 * first, at most UPSTREAM_ROWS), so a refusal and its reason can be seen.
 */
#include "server/api/handlers.h"
#include "server/app.h"
#include "db/outbox.h"
#include "util/rfc3339.h"

#define UPSTREAM_ROWS 100

static json_t *text_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *time_or_null(int64_t ms)
{
    return ms ? time_to_json(ms) : json_null();
}

static json_t *rows_json(const struct outbox_row *rows, size_t n)
{
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(
            list, json_pack("{s:I, s:s, s:o, s:o, s:i, s:o, s:b, s:o}", "job_id",
                            (json_int_t)rows[i].job_id, "kind", rows[i].kind, "device",
                            text_or_null(rows[i].device), "queued_at",
                            time_to_json(rows[i].created_ms), "attempts", rows[i].attempts,
                            "next_attempt_at",
                            rows[i].refused ? json_null() : time_to_json(rows[i].next_attempt_ms),
                            "refused", rows[i].refused, "last_error",
                            text_or_null(rows[i].last_error)));
    return list;
}

void h_upstream(struct http_req *rq, struct http_resp *rs)
{
    static const char *const known[] = {NULL};
    struct outbox_summary m;
    struct outbox_row *rows = NULL;
    size_t n = 0;
    char err[512];
    if (query_only(rq, rs, known) < 0)
        return;
    if (outbox_summary_get(rq->app->db, &m, err, sizeof err) != 0 ||
        outbox_list(rq->app->db, UPSTREAM_ROWS, &rows, &n, err, sizeof err) != 0) {
        problem(rq, rs, 503, "unavailable", "the outbox could not be read: %s", err);
        return;
    }
    const char *url = rq->app->cfg.upstream;
    json_t *j = json_pack("{s:o, s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:o}", "url",
                          url[0] ? json_string(url) : json_null(), "pending",
                          (json_int_t)m.pending, "refused", (json_int_t)m.refused, "attempts",
                          (json_int_t)m.attempts, "next_attempt_at",
                          time_or_null(m.next_attempt_ms), "last_success_at",
                          time_or_null(m.last_success_ms), "last_error",
                          text_or_null(m.last_error), "last_error_at",
                          time_or_null(m.last_error_ms), "outbox", rows_json(rows, n));
    outbox_rows_free(rows, n);
    outbox_summary_free(&m);
    http_json(rs, 200, j);
}
