/*
 * The requests the L1s send to the L2, kept between the model's two passes
 * in a private temporary file, SM by SM.
 *
 * DESIGN
 * The model runs each SM's L1 alone, SM after SM (the input is SM-major,
 * and one SM's structures stay in the processor's caches and are freed
 * before the next SM's are built), but the L2 must see the SMs interleaved
 * (model.h). So the L1 pass appends each fetch it sends below — its seq,
 * line id, L2 set and sectors — to a spill file through a 1 MiB buffer,
 * noting where each SM's fetches start (a store written through is one of
 * them, flagged); the L2 pass reads the SMs' runs side by side in windows
 * (cache_spill_read: pread, not a mapping — a fault maps a whole large
 * folio of the file, so a mapping read at 132 places at once soon maps
 * most of it, and each fault costs more than the copy). Memory stays the
 * buffer and the reader's windows, whatever the trace's length; the file
 * is unlinked from the start (trace/tmpfile.h).
 * A fetch is stored in 16 bytes (struct cache_spill_rec), not the 24 of
 * its unpacked form: the file is written once and read once, every byte of
 * it fresh memory (page cache) that the kernel must find and fill — on
 * the development machine the spill's writes were up to 14% of a run. The
 * SM is the run's, so not stored; the seq is stored as the distance from
 * the SM's previous fetch (a run's seqs only grow), with a filler record
 * (no line) for a distance that does not fit 32 bits; the set (below
 * CACHE_MAX_LINES, 2^26), the store flag and the home partition share a
 * word.
 */
#ifndef GPUPROBE_CACHE_SPILL_H
#define GPUPROBE_CACHE_SPILL_H

#include <stdint.h>

/* One fetch sent below (or a store written through), unpacked. The line
 * is named by its dense id (lineid.h) and its L2 set, all the L2 pass
 * needs of it. */
struct cache_fetch {
    uint64_t seq;      /* the L1 request's position in its SM's stream */
    uint32_t line;     /* the line's id */
    uint32_t set;      /* the line's set in the L2 (cache_set_of) */
    uint32_t sectors;
    uint16_t sm;       /* the SM it came from (below CACHE_INPUT_MAX_SMS) */
    uint8_t store;     /* 1: a store, atomic or reduction */
    uint8_t home;      /* the L2 partition the line is homed in (cache/partition.h); 0 with one */
};

/* A fetch as the file holds it. */
struct cache_spill_rec {
    uint32_t dseq;     /* seq less the previous fetch's of its SM (the first's: seq) */
    uint32_t line;     /* the line's id; CACHE_SPILL_FILLER: no fetch, dseq only moves the seq on */
    uint32_t set;      /* the L2 set, | CACHE_SPILL_STORE, | CACHE_SPILL_HOME1 (home partition 1) */
    uint32_t sectors;
};
#define CACHE_SPILL_FILLER UINT32_MAX
#define CACHE_SPILL_STORE (1u << 30)
#define CACHE_SPILL_HOME1 (1u << 31)
#define CACHE_SPILL_SET_MASK (CACHE_SPILL_STORE - 1)

struct cache_spill {
    int fd;
    struct cache_spill_rec *buf;
    uint32_t used;
    uint64_t count;                /* records written */
    uint32_t sms;
    uint64_t *start, *len;         /* per SM: its first record, its records (fillers included) */
    uint64_t last_seq;             /* the seq of the last fetch added */
};

/* An empty spill for sms SMs, its file in tmpdir (NULL: $TMPDIR or /tmp).
 * 0, or -1 (memory, or no temporary file). */
int cache_spill_open(struct cache_spill *s, uint32_t sms, const char *tmpdir);
void cache_spill_close(struct cache_spill *s);

/* Appends a fetch (store: a store) of SM sm (SMs in increasing order, each
 * one's fetches in increasing seq order; sm below 65536) of the line with
 * id `line` (below CACHE_SPILL_FILLER) in L2 set `set` (below 2^26),
 * homed in partition home (0 or 1). 0, or -1 on a write error. */
int cache_spill_add(struct cache_spill *s, uint32_t sm, uint64_t seq, uint32_t line, uint32_t set,
                    uint32_t sectors, int store, unsigned home);

/* Writes out what is buffered: the runs can be read from then on. 0 or -1. */
int cache_spill_finish(struct cache_spill *s);

/* Records [i, i + n) of SM sm's run (within it), into out. 0, or -1 on a
 * read error. */
int cache_spill_read(const struct cache_spill *s, uint32_t sm, uint64_t i, struct cache_spill_rec *out, uint32_t n);

/* The fetch of record r (not a filler) of SM sm, whose seq is seq. */
static inline void cache_spill_unpack(const struct cache_spill_rec *r, uint32_t sm, uint64_t seq,
                                      struct cache_fetch *f)
{
    *f = (struct cache_fetch){seq, r->line, r->set & CACHE_SPILL_SET_MASK, r->sectors, (uint16_t)sm,
                              (uint8_t)((r->set & CACHE_SPILL_STORE) != 0),
                              (uint8_t)((r->set & CACHE_SPILL_HOME1) != 0)};
}

#endif
