/*
 * The cache model over the sorter's output: every SM's L1 and the shared
 * L2, simulated by the exact engine and/or modelled by the reuse-distance
 * engine, with the counts per SM and overall and the difference of the
 * two engines.
 *
 * DESIGN
 * Each SM has its own L1 (an engine instance per SM and engine); the L2 is
 * one instance per engine, fed by the requests the L1s send below. The
 * order in which the SMs' L1 misses reach the L2 is not in the trace (the
 * sorter orders each SM alone), so the model defines it: the SMs advance
 * in lockstep, one request each per round — round r takes request seq r of
 * SM 0, 1, 2 ... in turn (SMs whose stream has ended drop out), and each
 * L1 miss goes to the L2 at once. The L2's time is its own request count.
 * This treats every SM as issuing at the same rate, the simplest order
 * that neither favours one SM nor lets one run ahead; docs/cache-model.md
 * discusses it. The L2's share of each SM (its requests and their hits)
 * is counted too.
 * Two passes: the L1 pass runs the SMs one after the other (the input is
 * SM-major; one SM's L1 structures are built, used while they sit in the
 * processor's caches, and freed), spilling what each L1 fetches to a
 * temporary file (spill.h), each line named by a dense id (lineid.h) and
 * its L2 set; the L2 pass walks the spilled fetches in the lockstep order
 * above — the same order as feeding the L2 during a lockstep L1 walk,
 * since an L1 depends only on its own SM — prefetching each fetch's L2
 * state in stages as it nears its turn (the order is known ahead). The
 * L2's engines keep their per-line state in arrays indexed by the ids
 * (linemap.h, dense): no hash lookup, drop or seen-set probe per request,
 * for ~24 bytes a distinct line of the trace (the id map itself lives
 * during the L1 pass only, sized at once for the trace's distinct lines,
 * distinct.h). One thread by default, the two engines' L1s in one pass.
 * With cache_config.threads = 2, both engines and the L2, each engine makes
 * its whole walk (its own L1 pass, ids, spill and L2) on a thread of its
 * own: the same counts, for twice the id table and spill. A pipeline of
 * the L1 pass (the L1s on one thread, naming and spilling on another) and
 * the two L2 passes side by side after one shared L1 pass were measured
 * and dropped: on idle cores they gained 3% (exact) or lost (reuse, both
 * engines) against this (bench/cache/RESULTS.md).
 * Stores: each level applies its write policy (counts.h; the L1 writes
 * through without allocating, the L2 allocates), and a store the L1
 * writes through is spilled flagged, so the L2 counts it as a store.
 * Memory: one SM's L1 state, the L2's, and windows of the two files.
 */
#ifndef GPUPROBE_CACHE_MODEL_H
#define GPUPROBE_CACHE_MODEL_H

#include <jansson.h>
#include <stdint.h>

#include "cache/counts.h"
#include "cache/geometry.h"
#include "cache/input.h"
#include "cache/partition.h"
#include "cache/reuse.h"

enum { CACHE_ENGINE_EXACT = 1, CACHE_ENGINE_REUSE = 2, CACHE_ENGINE_BOTH = 3 };
enum { CACHE_EXACT = 0, CACHE_REUSE = 1 };   /* index of an engine's results */
enum { CACHE_L1 = 0, CACHE_L2 = 1 };

struct cache_config {
    struct cache_geom geom[2];       /* L1, L2 (checked) */
    struct cache_timing timing[2];
    int engines;                     /* CACHE_ENGINE_* bits */
    int l2;                          /* model the L2 too */
    struct cache_parts parts;        /* the L2's partitions (count 2), or one L2 */
    const char *tmpdir;              /* for the L2 pass's spill; NULL: $TMPDIR, else /tmp */
    int threads;                     /* 2: with both engines and the L2, each engine's walk on a
                                        thread of its own (both engines' memory at once); less
                                        wall time on idle cores; else one thread. The counts are
                                        the same */
};

/* One engine's view of one level. */
struct cache_level_result {
    struct cache_counts total;       /* raw counts */
    struct cache_counts *sm;         /* [sms]: per SM (L2: the requests of that SM, in its
                                        own partition) */
    struct cache_counts fabric;      /* L2 in two partitions: the lookups in a line's home
                                        after a miss in the requesting SM's partition */
    struct cache_estimate est;       /* reported: exact counts, or the corrected reuse estimate */
    struct cache_estimate *est_sm;   /* [sms] */
    struct cache_estimate est_fabric; /* the fabric's (reuse: its share of the L2's correction) */
    struct cache_rdhist hist;        /* reuse engine: the distances */
};

struct cache_result {
    uint32_t sms;
    uint64_t records;
    int engines, l2;
    struct cache_level_result r[2][2];   /* [engine][level] */
};

/* Runs the model over in. 0, or -1 with msg (out of memory). res is to be
 * freed with cache_result_free in every case. */
int cache_model_run(const struct cache_input *in, const struct cache_config *cfg,
                    struct cache_result *res, char *msg, size_t msglen);
void cache_result_free(struct cache_result *res);

/* Hit rate h / n, 0 when n is 0. */
double cache_rate(double h, double n);

/* The result as JSON (docs/cache-model.md, "Output"): the geometry and
 * timing used, per engine and level the totals and per-SM counts, the
 * reuse histograms, and the engines' difference. NULL out of memory. */
json_t *cache_result_to_json(const struct cache_result *res, const struct cache_config *cfg);

#endif
