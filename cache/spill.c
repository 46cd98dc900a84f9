/*
 * The L1-to-L2 spill file (spill.h).
 */
#include "cache/spill.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trace/tmpfile.h"
#include "util/fdio.h"

#define BUF_FETCHES ((1u << 20) / sizeof(struct cache_fetch))
#define PAGE ((uintptr_t)4096)

int cache_spill_open(struct cache_spill *s, uint32_t sms, const char *tmpdir)
{
    char path[512];
    int named = 0;
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->sms = sms;
    s->buf = malloc(BUF_FETCHES * sizeof *s->buf);
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
    if (s->map && s->map_len)
        munmap(s->map, s->map_len);
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

int cache_spill_add(struct cache_spill *s, uint32_t sm, uint64_t seq, uint32_t line, uint32_t set,
                    uint32_t sectors, int store, unsigned home)
{
    if (!s->len[sm])
        s->start[sm] = s->count;
    s->len[sm]++;
    s->buf[s->used++] = (struct cache_fetch){seq, line, set, sectors, (uint16_t)sm, (uint8_t)(store != 0),
                                             (uint8_t)home};
    s->count++;
    return s->used == BUF_FETCHES ? flush(s) : 0;
}

int cache_spill_map(struct cache_spill *s)
{
    if (flush(s))
        return -1;
    s->map_len = s->count * sizeof *s->buf;
    if (!s->map_len)
        return 0;
    void *m = mmap(NULL, s->map_len, PROT_READ, MAP_PRIVATE, s->fd, 0);
    if (m == MAP_FAILED) {
        s->map_len = 0;
        return -1;
    }
    s->map = m;
    return 0;
}

void cache_spill_release(const struct cache_spill *s, uint32_t sm, uint64_t from, uint64_t i)
{
    if (!s->map || i <= from)
        return;
    /* the pages wholly inside the run's used part: the SMs' runs are read
     * side by side, so wider windows would drop pages other SMs are on */
    uintptr_t lo = (uintptr_t)(s->map + s->start[sm] + from), hi = (uintptr_t)(s->map + s->start[sm] + i);
    lo = (lo + PAGE - 1) & ~(PAGE - 1);
    hi &= ~(PAGE - 1);
    if (hi > lo)
        madvise((void *)lo, hi - lo, MADV_DONTNEED);
}
