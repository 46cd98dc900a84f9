/*
 * The L1 the sorter consults while it orders an SM's requests (cache
 * feedback, docs/trace-sort.md): the cache model's engines behind the
 * sorter's L1 interface (trace/order_l1.h).
 *
 * DESIGN
 * The sorter (trace/) cannot call into cache/: cache/ reads the sorter's
 * output through trace/'s readers, so cache/ sits above trace/ and an
 * include the other way would close a cycle (docs/design.md). The loop
 * therefore takes a table of functions (struct trace_l1_ops), and this
 * module fills it; the caller that knows both (the CLI) hands the table to
 * the sort. Each SM's loop opens its own L1 and closes it when the SM is
 * done, so two sorting threads never share one; a closed L1 is emptied
 * and kept for the next SM to open (at most CACHE_FEEDBACK_SPARES, under a
 * lock), so the sort does not allocate, zero and free the engine's tables
 * 132 times over — which left glibc's heap holding ten times the memory
 * of one SM's L1 — and its memory is that of the SMs being ordered.
 * Two kinds of L1, one per option:
 * - keep (--feedback): the exact engine (exact.h: set-associative LRU,
 *   the geometry of `trace cache`), so a line stays after its data arrives
 *   and later requests hit; requests to a line whose fetch is in flight
 *   merge into it up to max_merge (counts.h's rules; max_merge 0: each
 *   fetches again). Bounded, as the cache model's L2 is: its line map
 *   holds the lines of the cache and its shadow, and a compact set the
 *   rest (the miss classes are not used here, only residency) — on the
 *   benchmark's scattered trace 17 MB and 1.3 s against 51 MB and 2.0 s
 *   unbounded.
 * - in flight only (--mshr-merge alone): the line map and counts.h's rules
 *   without a cache: a line is known only while its fetch is in flight;
 *   requests to it merge, every other request fetches. The map is bounded
 *   too: the fetches are kept in the order made, and a line is dropped
 *   once its fetch is seen to be back (oldest first).
 * The engine's time is the loop's clock, and each fetch's latency is the
 * delay the loop drew for it (set per access), so a line is in flight in
 * the engine exactly while its fetch is in the loop's in-flight set. The
 * verdict (fetch, hit, merged; or stall: a fetch with no MSHR free) is
 * read off the line's state before the access — the same rules counts.c
 * applies (a test holds the two together, and an access whose outcome
 * disagrees with the verdict fails the SM) — so a stalled request changes
 * nothing. In-flight state is per line, as in the cache model: a request
 * for a sector the line's fetch did not ask for fetches it, and the line
 * counts as back when its first fetch is.
 * Memory: an L1 per sorting thread until cache_feedback_done: the
 * cache's lines twice over (kept) or the lines in flight (in flight only),
 * and 1-12 bytes a line the SM touched (the bounded map's seen set).
 */
#ifndef GPUPROBE_CACHE_FEEDBACK_H
#define GPUPROBE_CACHE_FEEDBACK_H

#include <pthread.h>
#include <stdint.h>

#include "cache/geometry.h"
#include "trace/order_l1.h"

#define CACHE_FEEDBACK_SPARES 4

struct cache_feedback {
    struct cache_geom geom;   /* each SM's L1 (checked); its line and sectors in both kinds */
    int keep;                 /* 1: lines stay after their data arrives (hits); 0: in flight only */
    uint32_t max_merge;       /* requests that may merge into one fetch in flight; 0: none */
    uint32_t hit_latency;     /* ticks a hit is in flight (order_l1.h) */
    /* set up by cache_feedback_ops: closed L1s kept for the next SM */
    pthread_mutex_t mu;
    void *spare[CACHE_FEEDBACK_SPARES];
    int nspare;
};

/* Fills ops so that the sorter's loop gets an L1 per SM as fb's first four
 * members describe (the rest is set up here). fb must stay where it is
 * until cache_feedback_done, which frees what it kept; the ops may serve
 * any number of sorts in between. */
void cache_feedback_ops(struct cache_feedback *fb, struct trace_l1_ops *ops);
void cache_feedback_done(struct cache_feedback *fb);

/* The default hit latency for a miss latency of lat_min requests:
 * lat_min x 32 / 500 rounded, at least 1 — the H100's L1 hit latency (32
 * cycles, the memory probe's L1 plateau in data/reference/h100.json) over
 * the miss latency the hopper preset's M stands for (~500 cycles,
 * docs/trace-sort.md, "Presets"): the same unit, requests, as M. */
uint32_t cache_feedback_hit_latency(uint32_t lat_min);

#endif
