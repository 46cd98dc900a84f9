/*
 * One push, the outbox hook and the CLI's drain (see push.h).
 */
#include "server/push/push.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "db/fleet_store.h"
#include "server/bundles/bundle.h"
#include "server/http/auth.h"
#include "server/jobs/registry.h"
#include "server/log.h"
#include "server/push/client.h"
#include "util/errf.h"

int push_enqueue(struct store_tx *tx, int64_t job_id, char *err, size_t errlen)
{
    struct store_job_brief job;
    if (store_job_brief_tx(tx, job_id, &job, err, errlen) != 0)
        return -1;
    if (!job.device[0] || job.imported || !job_kind_keeps_results(job.kind))
        return 0; /* a CPU job, a result measured elsewhere, or none bundles carry */
    return outbox_add_tx(tx, job_id, err, errlen);
}

uint32_t push_jitter(void)
{
    uint32_t r;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r)
        return r;
    return (uint32_t)time(NULL) * 2654435761u; /* no entropy yet: the clock will do */
}

/* The bundle of row's job as text into *body (its fleet figures alone when
 * figures_only); 1 when the job is no result to push (refused here), 2 when
 * it has no figure to send (nothing to do), -1 when it could not be built now. */
static int bundle_text(store *s, const struct outbox_row *row, int figures_only, char **body,
                       char *why, size_t whylen)
{
    int gone = 0;
    *body = NULL;
    json_t *b = bundle_build_job(s, row->job_id, &gone, why, whylen);
    if (!b)
        return gone ? 1 : -1;
    long kept = figures_only ? bundle_to_figures(b, why, whylen) : 1;
    if (kept > 0 && !(*body = json_dumps(b, JSON_COMPACT)))
        snprintf(why, whylen, "out of memory");
    if (kept == 0)
        snprintf(why, whylen, "a %s result has no fleet figures: nothing sent", row->kind);
    json_decref(b);
    return *body ? 0 : kept == 0 ? 2 : -1;
}

/* Sends row's bundle; the outcome into *o. */
static void send_row(store *s, const struct push_target *t, const struct outbox_row *row,
                     struct push_outcome *o, size_t *bytes)
{
    char token[512], why[600];
    char *body = NULL;
    struct push_answer a;
    *bytes = 0;
    o->verdict = PUSH_RETRY;
    o->status = 0;
    char bad[560];
    int rc = auth_first_token(t->token_file, token, sizeof token, bad, sizeof bad) ? -1 : 0;
    if (rc)
        snprintf(why, sizeof why, "upstream token file %s", bad);
    if (rc == 0)
        rc = bundle_text(s, row, t->figures_only, &body, why, sizeof why);
    if (rc == 1)
        o->verdict = PUSH_REFUSED; /* nothing the upstream could take: not tried again */
    if (rc == 2)
        o->verdict = PUSH_ACKNOWLEDGED; /* nothing it needs: done */
    if (rc != 0) {
        snprintf(o->detail, sizeof o->detail, "%s", why);
        return;
    }
    *bytes = strlen(body);
    push_post(t->upstream, token, t->ca_file, body, *bytes, t->stop, &a);
    free(body);
    o->status = a.status;
    o->verdict = a.status ? push_verdict_of(a.status, a.imported) : PUSH_RETRY;
    snprintf(o->detail, sizeof o->detail, "%s", a.detail);
}

static void log_outcome(const struct outbox_row *row, const struct push_outcome *o, size_t bytes,
                        int64_t next_ms, int64_t now)
{
    char q[800];
    log_quote(q, sizeof q, o->detail);
    if (o->verdict == PUSH_ACKNOWLEDGED)
        log_kv(LOG_INFO, "push", "job=%lld kind=%s device=%s status=%d bytes=%zu answer=%s",
               (long long)row->job_id, row->kind, row->device, o->status, bytes, q);
    else if (o->verdict == PUSH_REFUSED)
        log_kv(LOG_ERROR, "push_refused",
               "job=%lld kind=%s device=%s status=%d bytes=%zu error=%s", (long long)row->job_id,
               row->kind, row->device, o->status, bytes, q);
    else
        log_kv(LOG_WARN, "push_retry",
               "job=%lld kind=%s device=%s status=%d attempts=%d retry_in_ms=%lld error=%s",
               (long long)row->job_id, row->kind, row->device, o->status, row->attempts + 1,
               (long long)(next_ms - now), q);
}

int push_row(store *s, const struct push_target *t, const struct outbox_row *row, int64_t now,
             struct push_outcome *o, char *err, size_t errlen)
{
    size_t bytes = 0;
    send_row(s, t, row, o, &bytes);
    int64_t next_ms = now + push_backoff_ms(row->attempts + 1, t->retry_max_ms, push_jitter());
    log_outcome(row, o, bytes, next_ms, now);
    int rc;
    if (o->verdict == PUSH_ACKNOWLEDGED)
        rc = outbox_ack(s, row->job_id, now, err, errlen);
    else if (o->verdict == PUSH_REFUSED)
        rc = outbox_refuse(s, row->job_id, now, o->detail, err, errlen);
    else
        rc = outbox_retry(s, row->job_id, now, next_ms, o->detail, err, errlen);
    return rc < 0 ? -1 : 0; /* 1: the row went meanwhile (another pusher sent it) */
}

/* ---- the CLI's drain ------------------------------------------------------------ */

#define DRAIN_BATCH 64

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Pushes every row not refused once (in batches: a row pushed is gone or
 * has moved on, so the next batch reads the rest). */
static int drain_round(store *s, const struct push_target *t, struct push_tally *tally,
                       char *err, size_t errlen)
{
    int64_t round_start = store_now_ms();
    for (;;) {
        struct outbox_row *rows = NULL;
        size_t n = 0;
        /* rows tried in this round have a next attempt after its start, or are refused */
        if (outbox_due(s, round_start, DRAIN_BATCH, &rows, &n, err, errlen) != 0)
            return -1;
        if (n == 0)
            return 0;
        int rc = 0;
        for (size_t i = 0; i < n && rc == 0; i++) {
            struct push_outcome o;
            rc = push_row(s, t, &rows[i], store_now_ms(), &o, err, errlen);
            tally->acknowledged += rc == 0 && o.verdict == PUSH_ACKNOWLEDGED;
            tally->refused += rc == 0 && o.verdict == PUSH_REFUSED;
        }
        outbox_rows_free(rows, n);
        if (rc != 0)
            return -1;
    }
}

/* Every row waiting is due for the drain (the daemon's backoff times are
 * not the CLI's, which waits by its own rounds); the outbox's counts into
 * tally. */
static int make_all_due(store *s, int64_t now, struct push_tally *tally, char *err,
                        size_t errlen)
{
    struct outbox_summary m;
    if (outbox_summary_get(s, &m, err, errlen) != 0)
        return -1;
    tally->left = (size_t)m.pending;
    tally->refused_held = (size_t)m.refused;
    outbox_summary_free(&m);
    return tally->left ? outbox_due_all(s, now, err, errlen) : 0;
}

int push_drain(store *s, const struct push_target *t, int tries, struct push_tally *tally,
               char *err, size_t errlen)
{
    memset(tally, 0, sizeof *tally);
    for (int round = 1;; round++) {
        if (make_all_due(s, store_now_ms(), tally, err, errlen) != 0)
            return -1;
        if (tally->left == 0 || round > tries)
            return 0;
        if (round > 1)
            sleep_ms(push_backoff_ms(round - 1, t->retry_max_ms, push_jitter()));
        if (drain_round(s, t, tally, err, errlen) != 0)
            return -1;
    }
}
