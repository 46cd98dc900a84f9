/*
 * The reuse-distance engine: one cache level modelled from the stack
 * distances of its stream, after Nugteren et al., "A detailed GPU cache
 * model based on reuse distance theory" (HPCA 2014), on the order the
 * sorter reconstructs.
 *
 * DESIGN
 * Each request's stack distance d (stackdist.h) decides it for a fully
 * associative LRU cache of the level's lines: d infinite is a compulsory
 * miss, d >= lines a capacity miss, d < lines a resident line, handed to
 * counts.h for the latency (in flight), MSHR and sector rules the exact
 * engine uses too — the method's latency and MSHR corrections, applied
 * exactly over the request times rather than estimated. The
 * distances go into a histogram (log2 bins), and the hits at each d < lines
 * into an exact per-distance count, from which cache_reuse_finish applies
 * the method's associativity correction: with S sets of A ways and lines
 * placed in sets uniformly at random, a line reused at distance d has been
 * evicted when at least A of the d other lines fell into its set, with
 * probability P(d) = P(Binomial(d, 1/S) >= A); that share of the hits at
 * d becomes associativity misses (expected values, so not integers).
 * The correction changes counts (to_next_level included), not the stream:
 * what the L2 is fed is what the fully associative model sends.
 * Capped: an engine made with a track limit D >= the span (the L2's) keeps
 * only the D most recent lines in its stack and line map (bounded,
 * linemap.h) and counts the reuses of deeper lines as beyond D without
 * their distance: they are capacity misses with no correction either way
 * (d >= span), so the counts and the estimate are those of the uncapped
 * engine, and only the histogram's tail past D is folded into one count.
 * Stores (counts.h): at a write-allocate level a store is an access like a
 * load. At a write-through, no-allocate level it takes no position in the
 * stack (the stack is the loads' recency) and adds no line: its distance
 * is looked up (cache_stack_depth), and a line resident by it (d < lines,
 * not discarded before) is discarded — its sectors cleared, so a later
 * load at d < lines is an invalidated miss, and at d >= lines a capacity
 * miss that the correction cannot win back (the set-associative cache
 * lost the line to the store). What the stack does not model: the room a
 * discarded line leaves, which the exact engine gives to the next fill;
 * on a fully associative cache with stores the engines may differ there.
 * The stores' hits and misses at each distance are kept apart as well, so
 * the correction is applied to loads and stores each.
 * Costs: O(log n) per request; memory the line map and the stack (about
 * 50 bytes a tracked line: every distinct line uncapped, D capped), the
 * seen set when capped (1-12 bytes a distinct line) and 16 bytes a
 * distance of the span.
 */
#ifndef GPUPROBE_CACHE_REUSE_H
#define GPUPROBE_CACHE_REUSE_H

#include "cache/counts.h"
#include "cache/geometry.h"
#include "cache/linemap.h"
#include "cache/stackdist.h"

/* Bins of the reuse-distance histogram: bin 0 holds d = 0, bin k >= 1
 * holds 2^(k-1) <= d < 2^k; compulsory accesses are counted apart. */
#define CACHE_RD_BINS 34

struct cache_rdhist {
    uint64_t bin[CACHE_RD_BINS];
    uint64_t cold;                 /* first accesses (infinite distance) */
    uint64_t beyond;               /* reuses at a distance >= beyond_from, not binned */
    uint64_t beyond_from;          /* 0: every distance binned (no cap) */
};

/* Adds b to a. */
void cache_rdhist_add(struct cache_rdhist *a, const struct cache_rdhist *b);
/* The bin of distance d (d finite). */
unsigned cache_rd_bin(uint64_t d);

/* Counts with the associativity correction applied: expected values. */
struct cache_estimate {
    double requests, hits, sectors, sector_hits;
    double miss[CACHE_MISS_CLASSES];
    double below, below_sectors, mshr_full, invalidations, pending_sectors;
    struct {
        double requests, hits, sectors, sector_hits, latency, pending_sectors;
    } stores;                      /* the stores' part, as in cache_counts */
};

struct cache_reuse {
    const struct cache_geom *g;
    struct cache_timing tm;
    struct cache_linemap map;
    struct cache_stack st;
    struct cache_mshr ms;
    struct cache_rdhist hist;
    uint64_t span;                 /* distances with counts below: [0, span) */
    /* [span], per distance: d < lines the hits and their sector hits,
     * d >= lines the capacity misses and the sectors they asked for; side
     * by side, so counting one costs one processor-cache miss, not two */
    struct cache_at {
        uint64_t n, sectors;
    } *at, *st_at;                 /* all requests; the stores among them */
    uint64_t at_end;               /* at and st_at are zero from here on: resetting and
                                      correcting cost the distances a trace reached, not
                                      the span (a large cache of a small trace) */
    /* counts not yet added to at/st_at: a distance is known only when its
     * request is made, and at[d] is anywhere in megabytes (the L2's span),
     * so each count is asked for when made and added CACHE_AT_PENDING
     * counts later, its cache line in by then; cache_reuse_correction adds
     * the rest first. Integer sums: the order of the additions changes
     * nothing. */
    struct cache_at_pending {
        uint64_t d, sectors;
        int store;
    } pend[16];
    uint64_t npend;                /* counts made: pend[npend % 16] is the oldest when >= 16 */
    uint64_t track;                /* lines tracked, 0: all (uncapped) */
    struct cache_ring_pf pf;       /* capped: the stack's coming drops, prefetched up to */
};

/* The span's limit, in multiples of the cache's lines. */
#define CACHE_ASSOC_SPAN_MAX 4u

/* The span of g: the first d >= lines where P(Binomial(d, 1/S) < A) < 1e-9,
 * at most CACHE_ASSOC_SPAN_MAX * lines; lines for a fully associative cache. */
uint64_t cache_assoc_span(const struct cache_geom *g);

/* g must be checked and outlive r. track: 0 for every line (the whole
 * histogram), else the lines tracked, raised to the span if below it (the
 * counts are then unchanged; the histogram stops at track). 0, or -1 out
 * of memory. */
int cache_reuse_init(struct cache_reuse *r, const struct cache_geom *g, const struct cache_timing *tm,
                     uint64_t track);
/* The same over dense line ids below `ids` (linemap.h, dense): every line
 * argument is then an id. The counts and the histogram are those of
 * cache_reuse_init's engine on the lines the ids stand for. */
int cache_reuse_init_dense(struct cache_reuse *r, const struct cache_geom *g, const struct cache_timing *tm,
                           uint64_t track, uint32_t ids);
void cache_reuse_free(struct cache_reuse *r);
/* Back to a level that has seen nothing, keeping the memory. */
void cache_reuse_reset(struct cache_reuse *r);

/* Prefetch stages for a request for `line`, as cache_exact_prefetch: 0
 * its buckets, 1 its state, 2 its stack position and the states and line
 * numbers of the lines the capped stack drops next, 3 their buckets (each
 * once: r->pf). */
void cache_reuse_prefetch(struct cache_reuse *r, uint64_t line, int stage);

/* One request, as cache_exact_access (counts before the correction). */
int64_t cache_reuse_access(struct cache_reuse *r, uint64_t line, uint32_t want, uint64_t t, int store,
                           struct cache_counts *c);

/* P(d) for every d in [from, n), into p (p[from - 1] already there when
 * from > 0; n is at most the span). */
void cache_assoc_conflict_prob(const struct cache_geom *g, double *p, uint64_t from, uint64_t n);

/* g's P(d) over its span, computed only as far as a correction asks
 * (cache_reuse_correction): a trace reaches distances up to its distinct
 * lines, so a large cache of a small trace costs what the trace does. */
struct cache_conflict {
    const struct cache_geom *g;
    double *p;                     /* [span] (pages untouched past have) */
    uint64_t have, span;           /* p[0, have) computed */
};
/* g must outlive c. 0, or -1 out of memory. */
int cache_conflict_init(struct cache_conflict *c, const struct cache_geom *g);
void cache_conflict_free(struct cache_conflict *c);

/* The associativity correction of everything r has seen: the expected hits
 * lost to conflicts (at d < lines) and won back (at d >= lines), and their
 * sectors; the stores' part of each apart. c: r's geometry's P(d) (extended
 * here as far as r's counts go). The counts still pending are added to r's
 * tables first (which is all it changes in r). */
struct cache_shift {
    double lost, lost_sectors, won, won_sectors;
};
struct cache_correction {
    struct cache_shift all, stores;
    int through;                   /* stores go below anyway: theirs change no request below */
};
/* Adds b to a (through taken from b). */
void cache_correction_add(struct cache_correction *a, const struct cache_correction *b);
void cache_reuse_correction(struct cache_reuse *r, struct cache_conflict *c, struct cache_correction *k);

/* The part of a correction that falls to a part of the counts it was made
 * from (one SM's requests to a shared L2, or the fabric's), loads and
 * stores apart: the hits lost to conflicts come from hits, so each part
 * takes them in proportion to its hits (their sectors to its sector hits);
 * the misses won back come from capacity misses, so in proportion to its
 * capacity misses (their sectors to its missed sectors). Each term is then
 * at most what the part had, so none of its figures leaves [0, its
 * requests], and the parts' estimates add up to the whole's. */
struct cache_share {
    double hits, sector_hits, won, won_sectors; /* loads */
    double st_hits, st_sector_hits, st_won, st_won_sectors;
};
/* The corrected estimate of counts c: c with its share of the correction k
 * applied (NULL: all of it, for the counts k was made from). */
void cache_estimate_corrected(const struct cache_counts *c, const struct cache_correction *k,
                              const struct cache_share *share, struct cache_estimate *e);

/* An estimate with no correction (exact counts as doubles). */
void cache_estimate_of(const struct cache_counts *c, struct cache_estimate *e);

#endif
