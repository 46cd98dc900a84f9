/*
 * The output's writer thread (see outq.h).
 *
 * DESIGN
 * Buffers [done, filled) are submitted and belong to the thread, buffer
 * filled % BUFS is the producer's while filled - done < BUFS. One mutex and
 * two conditions: `work` wakes the thread (a buffer was submitted, or stop),
 * `room` wakes the producer (a buffer was written).
 */
#include "trace/outq.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/fdio.h"

struct trace_outq {
    int fd;
    size_t cap;
    char *buf[TRACE_OUTQ_BUFS];
    size_t len[TRACE_OUTQ_BUFS];
    unsigned done, filled;  /* buffers written, buffers submitted (counters) */
    int stop, err;          /* err: errno of the first failed write */
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
        int failed = q->err != 0;
        pthread_mutex_unlock(&q->mu);
        int e = failed || fd_write_all(q->fd, q->buf[i], q->len[i], FD_CURRENT) == 0 ? 0 : errno;
        pthread_mutex_lock(&q->mu);
        if (e && !q->err)
            q->err = e;
        q->done++;
        pthread_cond_signal(&q->room);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

struct trace_outq *trace_outq_new(int fd, size_t cap)
{
    struct trace_outq *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->fd = fd;
    q->cap = cap ? cap : TRACE_OUTQ_CAP;
    for (int i = 0; i < TRACE_OUTQ_BUFS; i++)
        if (!(q->buf[i] = malloc(q->cap))) {
            trace_outq_free(q);
            return NULL;
        }
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->work, NULL);
    pthread_cond_init(&q->room, NULL);
    q->threaded = pthread_create(&q->th, NULL, writer, q) == 0;
    return q;
}

/* Hands the producer's buffer to the thread (or writes it, unthreaded). */
static void submit(struct trace_outq *q)
{
    unsigned i = q->filled % TRACE_OUTQ_BUFS;
    if (!q->len[i])
        return;
    if (!q->threaded) {
        if (!q->err && fd_write_all(q->fd, q->buf[i], q->len[i], FD_CURRENT))
            q->err = errno ? errno : EIO;
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

static int failed(struct trace_outq *q)
{
    if (q->threaded)
        pthread_mutex_lock(&q->mu);
    int e = q->err;
    if (q->threaded)
        pthread_mutex_unlock(&q->mu);
    if (e)
        errno = e;
    return e ? -1 : 0;
}

int trace_outq_write(void *ctx, const void *p, size_t n)
{
    struct trace_outq *q = ctx;
    const char *s = p;
    while (n) {
        unsigned i = q->filled % TRACE_OUTQ_BUFS;
        size_t k = q->cap - q->len[i] < n ? q->cap - q->len[i] : n;
        memcpy(q->buf[i] + q->len[i], s, k);
        q->len[i] += k;
        s += k;
        n -= k;
        if (q->len[i] == q->cap)
            submit(q);
    }
    return failed(q);
}

int trace_outq_drain(void *ctx)
{
    struct trace_outq *q = ctx;
    submit(q);
    if (q->threaded) {
        pthread_mutex_lock(&q->mu);
        while (q->done != q->filled)
            pthread_cond_wait(&q->room, &q->mu);
        pthread_mutex_unlock(&q->mu);
    }
    return failed(q);
}

int trace_outq_free(struct trace_outq *q)
{
    if (!q)
        return 0;
    int rc = 0;
    if (q->buf[TRACE_OUTQ_BUFS - 1]) { /* fully set up */
        rc = trace_outq_drain(q);
        int e = errno;
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
        errno = e;
    }
    for (int i = 0; i < TRACE_OUTQ_BUFS; i++)
        free(q->buf[i]);
    free(q);
    return rc;
}
