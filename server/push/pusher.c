/*
 * The daemon's pusher thread (see pusher.h).
 */
#include "server/push/pusher.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db/outbox.h"
#include "server/log.h"
#include "server/push/push.h"

#define PUSHER_WAKE_MS 1000
#define PUSHER_BATCH 16

struct pusher {
    store *db;
    struct push_target target;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    volatile int stop;           /* read by the transfer under way, too */
};

/* Waits PUSHER_WAKE_MS or until stopped; 1 when stopped. */
static int nap(struct pusher *p)
{
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += (long)PUSHER_WAKE_MS * 1000000L;
    until.tv_sec += until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&p->lock);
    while (!p->stop && pthread_cond_timedwait(&p->wake, &p->lock, &until) != ETIMEDOUT)
        ;
    int stopped = p->stop;
    pthread_mutex_unlock(&p->lock);
    return stopped;
}

/* Pushes the rows due now; a store failure is logged and waits the next wake. */
static void push_due(struct pusher *p)
{
    struct outbox_row *rows = NULL;
    size_t n = 0;
    char err[512], q[600];
    if (outbox_due(p->db, store_now_ms(), PUSHER_BATCH, &rows, &n, err, sizeof err) != 0) {
        log_kv(LOG_ERROR, "store_failed", "op=outbox error=%s", log_quote(q, sizeof q, err));
        return;
    }
    for (size_t i = 0; i < n && !p->stop; i++) {
        struct push_outcome o;
        if (push_row(p->db, &p->target, &rows[i], store_now_ms(), &o, err, sizeof err) != 0)
            log_kv(LOG_ERROR, "store_failed", "op=outbox error=%s", log_quote(q, sizeof q, err));
    }
    outbox_rows_free(rows, n);
}

static void *pusher_main(void *arg)
{
    struct pusher *p = arg;
    do
        push_due(p);
    while (!nap(p));
    return NULL;
}

struct pusher *pusher_start(store *s, const struct config *cfg, char *err, size_t errlen)
{
    err[0] = '\0';
    if (outbox_set_upstream(s, cfg->upstream, err, errlen) != 0)
        return NULL;
    if (!cfg->upstream[0])
        return NULL;
    struct pusher *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->wake, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&p->lock, NULL);
    p->db = s;
    p->target = (struct push_target){cfg->upstream, cfg->upstream_token_file,
                                     (int64_t)cfg->upstream_retry_max_s * 1000,
                                     cfg->upstream_content == UPSTREAM_CONTENT_FIGURES, &p->stop,
                                     cfg->push_ca};
    int rc = pthread_create(&p->thread, NULL, pusher_main, p);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start the pusher thread: %s", strerror(rc));
        pthread_cond_destroy(&p->wake);
        pthread_mutex_destroy(&p->lock);
        free(p);
        return NULL;
    }
    log_kv(LOG_INFO, "pusher_started", "upstream=%s content=%s retry_max_s=%d", cfg->upstream,
           p->target.figures_only ? "figures" : "full", cfg->upstream_retry_max_s);
    return p;
}

void pusher_stop(struct pusher *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_signal(&p->wake);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    free(p);
}
