/*
 * The issue-order experiment of the control-code probe: which ready warp a
 * sub-partition's scheduler issues next after a warp stalls or yields
 * (Huerta et al., 2025, reverse-engineered the issue scheduler's policy on
 * Ampere; the issue that asked for this states it as greedy-then-youngest;
 * see docs/sass.md "The issue scheduler").
 *
 * DESIGN
 * K warps per sub-partition run one straight-line stream of independent
 * FFMAs cut into segments; every segment is bracketed by two clock reads
 * (a start and an end read), kept in registers and stored after the
 * stream. The run (issue_order_run.c) edits the stall count and yield bit
 * of the end reads in the cubin, so a segment's end is where the warp
 * stalls or yields; the kernel's text and the reading of its machine code
 * are in issue_order_ptx.c. Everything the experiment concludes comes from
 * the per-warp timestamps through the plain C below (issue_order_policy.c),
 * unit-tested on traces simulated from each policy:
 *   - the issue order of one sub-partition is its warps' segments sorted
 *     by start clock; two neighbours of that order that overlap in time
 *     mean the issue interleaved inside segments, where the order says
 *     nothing, so too many overlaps make the verdict "not determined";
 *   - each change of owner in the order is a decision: the candidates are
 *     the other warps with a segment left that are ready: not started yet
 *     (a barrier before the stream releases every warp at once, so one
 *     that has not started is waiting to issue) or their own last end
 *     read's stall is over; with two or more candidates each policy names
 *     one, and is scored on whether it named the warp that issued next;
 *   - greediness: where the owner had work and no event (an unedited
 *     segment end, or inside a segment) the issue should stay with it; an
 *     edited end with a ready candidate where the owner issued on is
 *     "held" (the edit did not pass the issue on);
 *   - a policy is the rule when it named the next warp in at least
 *     IO_MATCH of at least IO_MIN_DECISIONS decisions; several such
 *     policies (they named the same warps) are reported together; none, or
 *     too few decisions, is "not determined".
 * Warp age is the warp's index in its block (the order the block's warps
 * are created); the warp id is %warpid, the hardware slot. Where the two
 * orders agree, "oldest" and "lowest-id" name the same warps and the
 * verdict names both (and "youngest" is the highest id).
 */
#ifndef GPUPROBE_PROBES_ISSUE_ORDER_H
#define GPUPROBE_PROBES_ISSUE_ORDER_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "probes/gpu/gpu.h"

#define IO_MAX_WARPS 32              /* warps of one sub-partition in one trace */
#define IO_MAX_SEGS 16               /* segments of each warp's stream */
#define IO_MIN_DECISIONS 8
#define IO_MATCH 0.9                 /* share of decisions a rule must name right */
#define IO_MAX_OVERLAP 0.1           /* share of neighbour pairs that may overlap */

/* One warp's stream: the clock (its low 32 bits: differences survive a
 * wrap) at each segment's start and end read. */
struct io_warp {
    unsigned warpid;                 /* %warpid */
    unsigned index;                  /* warp index in the block: its age */
    uint32_t start[IO_MAX_SEGS], end[IO_MAX_SEGS];
};

/* One sub-partition's warps in one launch. */
struct io_trace {
    size_t nwarps, nseg;             /* 1..IO_MAX_WARPS, 1..IO_MAX_SEGS */
    unsigned blocked;                /* cycles an end read keeps its warp from issuing */
    int event_at_end;                /* 1: the end reads were edited to stall or yield */
    struct io_warp w[IO_MAX_WARPS];
};

enum io_policy { IO_YOUNGEST, IO_OLDEST, IO_ROUND_ROBIN, IO_LOWEST_ID, IO_POLICIES };

/* What traces showed, summed over any number of them (zero it first). */
struct io_counts {
    size_t traces, segments;
    size_t pairs, overlapped;        /* neighbours in the order; those overlapping */
    size_t continued;                /* the owner issued its next segment itself */
    size_t events;                   /* edited ends of a warp with work left, a candidate
                                      * ready: where the edit asked for a switch */
    size_t held;                     /* ... and the owner issued on all the same */
    size_t quiet;                    /* the owner had work left and no event where the
                                      * issue passed on or stayed: an unedited segment
                                      * end, or inside a segment (an overlap) */
    size_t switches;                 /* the owner changed */
    size_t breaks;                   /* the issue left a quiet owner (overlaps included) */
    size_t forced;                   /* switches with one candidate: no policy information */
    size_t decisions;                /* switches with two or more candidates */
    size_t hits[IO_POLICIES];        /* decisions each policy named right */
    size_t age_is_id;                /* decisions where the age order was the id order */
};

const char *io_policy_name(enum io_policy p);

/* Adds every count of c to to. */
void io_counts_add(struct io_counts *to, const struct io_counts *c);

/* Adds one trace to c. Traces whose sizes are out of range are skipped
 * (c->traces counts only those used); 0, or -1 for a skipped one. */
int io_count(const struct io_trace *t, struct io_counts *c);

/* The issue order of t: the warp index of each segment in start order,
 * written to order (room for nwarps * nseg); how many were written. */
size_t io_order(const struct io_trace *t, unsigned *order, size_t room);

/* The verdict: a mask of the policies that named the next warp in at least
 * IO_MATCH of the decisions (bit p for policy p), or 0 ("not determined":
 * too few decisions, too much overlap, or no policy good enough). */
unsigned io_verdict(const struct io_counts *c);

/* {"traces", "segments", "pairs", "overlapped", "continued", "held",
 *  "events", "switches", "breaks", "forced", "decisions", "hits": {policy: n},
 *  "age_is_id", "quiet", "rule": [policy names] or null, "greedy": true/false/null,
 *  "text": one sentence}. greedy: a warp kept the issue wherever it had
 * work and no event (breaks at most IO_MAX_OVERLAP of the quiet places);
 * null without such places. */
json_t *io_counts_json(const struct io_counts *c);

/* Reads io_counts_json's object back (missing members count 0). */
void io_counts_from_json(const json_t *o, struct io_counts *c);

/* The control-code probe's "scheduler" meaning from the experiment's
 * document (issue_order_run's): {"text", "rule": "greedy, then P" or
 * "not determined", "after": {experiment: verdict} for the stall and yield
 * experiments, "greedy", "data": the document}, every verdict recomputed
 * from the stored counts. NULL when sched is not an object. */
json_t *io_meaning(const json_t *sched);

/* ---- the kernel (issue_order_ptx.c) ---- */

#define IO_KERNEL "issue_order"
#define IO_SEGS 8                    /* segments of the stream */
#define IO_FFMA 16                   /* FFMAs per segment */
#define IO_ACCS 8                    /* independent accumulators per thread */
#define IO_REC_WORDS (4 + 4 * IO_SEGS) /* per warp (u32): warpid, smid, index, mark,
                                        * then each segment's start and end clock64 */
#define IO_MARK 0x15500dd1u          /* word 3 of a record a warp wrote */
#define IO_MAX_THREADS 1024          /* the largest block the run launches (.maxntid) */

/* The kernel issue_order(u32 *rec, f32 *acc): every warp of the block
 * waits at a barrier, then runs IO_SEGS segments, each a clock read, IO_FFMA
 * FFMAs over IO_ACCS accumulators (each FFMA depends on the one IO_ACCS
 * before it) and a clock read; lane 0 stores the warp's record at
 * rec + IO_REC_WORDS * (tid / 32) and every thread its accumulators at
 * acc + IO_ACCS * tid. malloc'd text, or NULL when memory ran out. */
char *io_ptx(int cc_major, int cc_minor);

/* Where the compiled kernel's segments are: the instruction index of each
 * start and end clock read and of every FFMA. */
struct io_layout {
    size_t start[IO_SEGS], end[IO_SEGS];
    size_t ffma[IO_SEGS * IO_FFMA];
    unsigned compiled_stall_end, compiled_yield_end;  /* of the first end read */
    unsigned compiled_stall_ffma;    /* the largest stall of a timed FFMA */
    size_t other_reads;              /* clock reads that are not a CS2R (S2R, S2UR: they wait
                                      * on a scoreboard) */
};

/* Reads the kernel's machine code: exactly 2 * IO_SEGS clock reads, and
 * between the start and end read of each segment exactly IO_FFMA FFMAs and
 * nothing else; between an end read and the next start read no FFMA. 0, or
 * -1 with what differs. */
int io_layout(const void *cubin, size_t size, struct io_layout *L, char *err, size_t errlen);

/* The experiments: what each one writes on the segments' instructions. */
struct io_experiment {
    const char *name, *edit;         /* the edit, in words */
    int ffma_stall;                  /* stall of every timed FFMA; -1: as compiled */
    int ffma_yield;                  /* yield of every timed FFMA and start read; -1: as
                                      * compiled */
    int end_stall, end_yield;        /* of every end read; -1: as compiled */
    int event;                       /* 1: the end reads carry the event */
    unsigned blocked;                /* cycles an end read keeps its warp waiting */
};
extern const struct io_experiment io_experiments[];
extern const size_t io_nexperiments;

/* The edits of experiment x on layout L into e (room for IO_MAX_EDITS);
 * how many. */
#define IO_MAX_EDITS (2 * IO_SEGS * IO_FFMA + 3 * IO_SEGS)
struct patch_edit;
size_t io_edits(const struct io_layout *L, const struct io_experiment *x, struct patch_edit *e);

/* ---- the records (issue_order_ptx.c) ---- */

#define IO_GROUPS 4                  /* sub-partitions of an SM on sm_70..sm_90 */

/* Segment pairs of two warps of one block that overlap in time, within a
 * %warpid mod IO_GROUPS group and across groups. */
struct io_overlaps {
    size_t same_pairs, same_overlapping, cross_pairs, cross_overlapping;
};

/* The clock of read c (0..2 * IO_SEGS - 1; even: a start) of one record. */
uint64_t io_record_clock(const uint32_t *rec, size_t c);

/* Reads nwarps records (IO_REC_WORDS each, as the kernel stores them) into
 * one trace per %warpid mod IO_GROUPS group (groups[IO_GROUPS], zeroed
 * here; nseg, blocked and event_at_end from x; a group may stay empty) and
 * adds their segment-pair overlaps to ov. 0, or -1 with the reason when a
 * record is not what the kernel writes (its mark, its index, one SM). */
int io_records(const uint32_t *words, unsigned nwarps, const struct io_experiment *x,
               struct io_trace *groups, struct io_overlaps *ov, char *err, size_t errlen);

/* The GPU experiment (issue_order_run.c): builds the kernel for each warp
 * count, checks its machine code, and runs each edit experiment `repeats`
 * times: {"method", "segments", "ffma_per_segment", "warps_per_subpartition",
 * "experiments": [{"name", "edit", "warps", "counts", "order_sample"}...],
 * "by_experiment": {name: counts over all warp counts}, "subpartitions":
 * {...}}; or {"error": reason}. Runs in the worker process. */
json_t *issue_order_run(struct gpu *g, int repeats);

#endif
