/*
 * The L1-to-L2 spill file (spill.h).
 */
#include "cache/spill.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/tmpfile.h"
#include "util/fdio.h"

#define BUF_RECS ((1u << 20) / sizeof(struct cache_spill_rec)) /* spill records buffered: 1 MiB */

int cache_spill_open(struct cache_spill *s, uint32_t sms, const char *tmpdir)
{
    char path[512];
    int named = 0;
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->sms = sms;
    s->buf = malloc(BUF_RECS * sizeof *s->buf);
    s->start = calloc(sms ? sms : 1, sizeof *s->start);
    s->len = calloc(sms ? sms : 1, sizeof *s->len);
    if (!s->buf || !s->start || !s->len ||
        (s->fd = trace_tmp_open(tmpdir, "cache", path, sizeof path, &named)) < 0) {
        cache_spill_close(s);
        return -1;
    }
    if (named)
        unlink(path);
    return 0;
}

void cache_spill_close(struct cache_spill *s)
{
    if (s->fd >= 0)
        close(s->fd);
    free(s->buf);
    free(s->start);
    free(s->len);
    memset(s, 0, sizeof *s);
    s->fd = -1;
}

static int flush(struct cache_spill *s)
{
    off_t at = (off_t)((s->count - s->used) * sizeof *s->buf);
    if (s->used && fd_write_all(s->fd, s->buf, s->used * sizeof *s->buf, at) < 0)
        return -1;
    s->used = 0;
    return 0;
}

/* Appends one record to SM sm's run. */
static int put(struct cache_spill *s, uint32_t sm, struct cache_spill_rec rec)
{
    if (!s->len[sm])
        s->start[sm] = s->count;
    s->len[sm]++;
    s->buf[s->used++] = rec;
    s->count++;
    return s->used == BUF_RECS ? flush(s) : 0;
}

int cache_spill_add(struct cache_spill *s, uint32_t sm, uint64_t seq, uint32_t line, uint32_t set,
                    uint32_t sectors, int store, unsigned home)
{
    uint64_t d = s->len[sm] ? seq - s->last_seq : seq;
    for (; d > UINT32_MAX; d -= UINT32_MAX) /* a gap of 2^32 requests or more: fillers */
        if (put(s, sm, (struct cache_spill_rec){UINT32_MAX, CACHE_SPILL_FILLER, 0, 0}))
            return -1;
    s->last_seq = seq;
    return put(s, sm, (struct cache_spill_rec){(uint32_t)d, line,
                                               set | (store ? CACHE_SPILL_STORE : 0) | (home ? CACHE_SPILL_HOME1 : 0),
                                               sectors});
}

int cache_spill_finish(struct cache_spill *s)
{
    return flush(s);
}

int cache_spill_read(const struct cache_spill *s, uint32_t sm, uint64_t i, struct cache_spill_rec *out, uint32_t n)
{
    off_t at = (off_t)((s->start[sm] + i) * sizeof *out);
    return n && fd_read_all(s->fd, out, n * sizeof *out, at) != 0 ? -1 : 0;
}
