/*
 * The output's writer thread (see outq.h).
 *
 * DESIGN
 * Buffers [done, filled) are submitted and belong to the thread; buffer
 * filled % BUFS is the producer's while filled - done < BUFS. Items are
 * opaque bytes here (the queue's item size); the sink knows their type. One mutex and
 * two conditions: `work` wakes the thread (a buffer was submitted, or
 * stop), `room` wakes the producer (a buffer went through).
 */
#include "trace/outq.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct trace_outq {
    trace_outq_fn sink;
    void *ctx;
    size_t size;           /* bytes per item */
    char *buf[TRACE_OUTQ_BUFS];
    size_t len[TRACE_OUTQ_BUFS]; /* items */
    unsigned done, filled; /* buffers handed on, buffers submitted (counters) */
    int stop, rc;          /* rc: the sink's first non-zero return */
    int threaded;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t work, room;
};

static void *writer(void *arg)
{
    struct trace_outq *q = arg;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (q->done == q->filled && !q->stop)
            pthread_cond_wait(&q->work, &q->mu);
        if (q->done == q->filled)
            break;
        unsigned i = q->done % TRACE_OUTQ_BUFS;
        int failed = q->rc;
        pthread_mutex_unlock(&q->mu);
        int rc = failed ? failed : q->sink(q->ctx, q->buf[i], q->len[i]);
        pthread_mutex_lock(&q->mu);
        if (rc && !q->rc)
            q->rc = rc;
        q->done++;
        pthread_cond_signal(&q->room);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

struct trace_outq *trace_outq_new(size_t item_size, trace_outq_fn sink, void *ctx)
{
    struct trace_outq *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->sink = sink;
    q->ctx = ctx;
    q->size = item_size;
    for (int i = 0; i < TRACE_OUTQ_BUFS; i++)
        if (!(q->buf[i] = malloc(TRACE_OUTQ_ITEMS * item_size))) {
            for (int j = 0; j < i; j++)
                free(q->buf[j]);
            free(q);
            return NULL;
        }
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->work, NULL);
    pthread_cond_init(&q->room, NULL);
    q->threaded = pthread_create(&q->th, NULL, writer, q) == 0;
    return q;
}

/* Hands the producer's buffer on: to the thread, or to the sink directly. */
static void submit(struct trace_outq *q)
{
    unsigned i = q->filled % TRACE_OUTQ_BUFS;
    if (!q->len[i])
        return;
    if (!q->threaded) {
        if (!q->rc)
            q->rc = q->sink(q->ctx, q->buf[i], q->len[i]);
        q->len[i] = 0;
        return;
    }
    pthread_mutex_lock(&q->mu);
    q->filled++;
    pthread_cond_signal(&q->work);
    while (q->filled - q->done == TRACE_OUTQ_BUFS) /* the next buffer is still queued */
        pthread_cond_wait(&q->room, &q->mu);
    pthread_mutex_unlock(&q->mu);
    q->len[q->filled % TRACE_OUTQ_BUFS] = 0;
}

static int result(struct trace_outq *q)
{
    if (!q->threaded)
        return q->rc;
    pthread_mutex_lock(&q->mu);
    int rc = q->rc;
    pthread_mutex_unlock(&q->mu);
    return rc;
}

int trace_outq_put(struct trace_outq *q, const void *items, size_t n)
{
    const char *p = items;
    while (n) {
        unsigned i = q->filled % TRACE_OUTQ_BUFS;
        size_t k = TRACE_OUTQ_ITEMS - q->len[i] < n ? TRACE_OUTQ_ITEMS - q->len[i] : n;
        memcpy(q->buf[i] + q->len[i] * q->size, p, k * q->size);
        q->len[i] += k;
        p += k * q->size;
        n -= k;
        if (q->len[i] == TRACE_OUTQ_ITEMS)
            submit(q);
    }
    return result(q);
}

void *trace_outq_room(struct trace_outq *q, size_t *n)
{
    unsigned i = q->filled % TRACE_OUTQ_BUFS;
    size_t free_items = TRACE_OUTQ_ITEMS - q->len[i]; /* >= 1: a full buffer is submitted at once */
    if (*n > free_items)
        *n = free_items;
    return q->buf[i] + q->len[i] * q->size;
}

int trace_outq_commit(struct trace_outq *q, size_t n)
{
    unsigned i = q->filled % TRACE_OUTQ_BUFS;
    q->len[i] += n;
    if (q->len[i] == TRACE_OUTQ_ITEMS)
        submit(q);
    return result(q);
}

int trace_outq_sink(void *q, const struct trace_out *o, size_t n)
{
    return trace_outq_put(q, o, n);
}

int trace_outq_rec(void *ctx, const struct trace_rec *r)
{
    struct trace_outq *q = ctx;
    unsigned i = q->filled % TRACE_OUTQ_BUFS;
    if (q->len[i] + 1 < TRACE_OUTQ_ITEMS) { /* the buffer does not fill: no lock, no result */
        memcpy(q->buf[i] + q->len[i]++ * q->size, r, sizeof *r);
        return 0;
    }
    return trace_outq_put(q, r, 1); /* submits, and says whether the sink failed */
}

int trace_outq_drain(struct trace_outq *q)
{
    submit(q);
    if (q->threaded) {
        pthread_mutex_lock(&q->mu);
        while (q->done != q->filled)
            pthread_cond_wait(&q->room, &q->mu);
        pthread_mutex_unlock(&q->mu);
    }
    return result(q);
}

int trace_outq_free(struct trace_outq *q)
{
    if (!q)
        return 0;
    int rc = trace_outq_drain(q);
    if (q->threaded) {
        pthread_mutex_lock(&q->mu);
        q->stop = 1;
        pthread_cond_signal(&q->work);
        pthread_mutex_unlock(&q->mu);
        pthread_join(q->th, NULL);
    }
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->work);
    pthread_cond_destroy(&q->room);
    for (int i = 0; i < TRACE_OUTQ_BUFS; i++)
        free(q->buf[i]);
    free(q);
    return rc;
}
