/*
 * The requests the L1s send to the L2, kept between the model's two passes
 * in a private temporary file, SM by SM.
 *
 * DESIGN
 * The model runs each SM's L1 alone, SM after SM (the input is SM-major,
 * and one SM's structures stay in the processor's caches and are freed
 * before the next SM's are built), but the L2 must see the SMs interleaved
 * (model.h). So the L1 pass appends each fetch it sends below — its seq,
 * line id, L2 set and sectors, 24 bytes — to a spill file through a 1 MiB buffer,
 * noting where each SM's fetches start (a store written through is one of
 * them, flagged); the L2 pass maps the file and
 * walks the SMs' runs in lockstep, dropping the pages it has read. Memory
 * stays the buffer and a window of the mapping, whatever the trace's
 * length; the file is unlinked from the start (trace/tmpfile.h).
 */
#ifndef GPUPROBE_CACHE_SPILL_H
#define GPUPROBE_CACHE_SPILL_H

#include <stdint.h>

/* One fetch sent below (or a store written through). The line is named
 * by its dense id (lineid.h) and its L2 set, all the L2 pass needs of it. */
struct cache_fetch {
    uint64_t seq;      /* the L1 request's position in its SM's stream */
    uint32_t line;     /* the line's id */
    uint32_t set;      /* the line's set in the L2 (cache_set_of) */
    uint32_t sectors;
    uint16_t sm;       /* the SM it came from (below CACHE_INPUT_MAX_SMS) */
    uint8_t store;     /* 1: a store, atomic or reduction */
    uint8_t home;      /* the L2 partition the line is homed in (cache/partition.h); 0 with one */
};

struct cache_spill {
    int fd;
    struct cache_fetch *buf;
    uint32_t used;
    uint64_t count;                /* fetches written */
    uint32_t sms;
    uint64_t *start, *len;         /* per SM */
    struct cache_fetch *map;       /* after cache_spill_map */
    uint64_t map_len;
};

/* An empty spill for sms SMs, its file in tmpdir (NULL: $TMPDIR or /tmp).
 * 0, or -1 (memory, or no temporary file). */
int cache_spill_open(struct cache_spill *s, uint32_t sms, const char *tmpdir);
void cache_spill_close(struct cache_spill *s);

/* Appends a fetch (store: a store) of SM sm (SMs in increasing order, each
 * one's fetches in seq order; sm below 65536) of the line with id `line`
 * in L2 set `set`, homed in partition home. 0, or -1 on a write error. */
int cache_spill_add(struct cache_spill *s, uint32_t sm, uint64_t seq, uint32_t line, uint32_t set,
                    uint32_t sectors, int store, unsigned home);

/* Flushes and maps the file for reading. 0 or -1. */
int cache_spill_map(struct cache_spill *s);

/* Fetch i of SM sm's run (after cache_spill_map). */
static inline const struct cache_fetch *cache_spill_get(const struct cache_spill *s, uint32_t sm, uint64_t i)
{
    return s->map + s->start[sm] + i;
}

/* Drops the pages wholly inside SM sm's fetches [from, i) from memory. */
void cache_spill_release(const struct cache_spill *s, uint32_t sm, uint64_t from, uint64_t i);

#endif
