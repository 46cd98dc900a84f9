/*
 * Per-warp instruction counts from the compiled SASS: a kernel's static
 * SASS control flow (the plain-data object probes/gpu/sass_cfg.h writes,
 * read here as JSON) combined with the trip counts of its PTX loops
 * (model/ptx_desc.h, pd_loops), so the model charges what the machine
 * issues, not what the PTX said (docs/model.md, "Counts from the SASS").
 *
 * DESIGN
 * ptxas rotates, peels and unrolls loops: a PTX loop of T trips becomes a
 * main loop whose body holds u copies of the PTX body, plus remainder
 * code for T mod u trips (copies of 2, 1 ... bodies behind forward
 * branches or guards, or a remainder loop), plus sometimes a peeled trip
 * for an edge case. The counts follow from four rules:
 *   1. Loops are paired by nesting, in order: a SASS loop belongs to a PTX
 *      loop whose parent is its own parent's PTX loop. Its unroll factor
 *      u = SASS body / PTX body of the first marker class (global, sync,
 *      sfu, shared, conv, fp64, fp32) that gives a whole number >= 1;
 *      markers that disagree are noted. A later SASS loop of u = 1 with
 *      the same PTX loop is its remainder loop. A PTX loop without a SASS
 *      loop was unrolled in full: its code counts as it stands.
 *   2. The main loop runs floor(T / u) trips a time its region runs; a
 *      remainder loop T mod u.
 *   3. A copy is a group (one block under one guard) of the loop's region
 *      that runs only under a condition (guarded, or behind a forward
 *      branch) and holds k bodies of the marker, 1 <= k <= u. The
 *      remainder T mod u (0 when there is a remainder loop) is handed to
 *      the copies after the main loop, largest k first, then to those
 *      before it (a peel). A chosen copy runs; one not chosen is not
 *      reached when a branch jumps over it, and is issued with a false
 *      guard when it is only guarded (counted apart, as `predicated_off`).
 *   4. Code behind a forward branch runs when it holds a chosen copy or a
 *      loop that runs, is not reached when it holds only copies or loops
 *      that do not, and otherwise counts as run (an upper bound, noted, as
 *      the PTX side does). Guarded code that is no copy counts as run: it
 *      is issued either way.
 * Global accesses keep the PTX's split into coalesced and uncoalesced (the
 * address analysis is the PTX's), scaled to the SASS's count when the two
 * differ (noted), with the PTX's bytes and transactions per access.
 * Memory periods are the SASS's: its waits on global loads' scoreboards
 * (probes/gpu/sass_cfg.h), counted by the same rules, plus one a store as
 * the paper charges it; ptxas hoists loads above the uses the PTX put
 * between them, so the PTX's first uses overcount the waits. An object
 * without waits (written before they were counted) keeps the PTX's periods.
 * Everything assumed is said in the notes.
 */
#ifndef GPUPROBE_MODEL_SASS_COUNTS_H
#define GPUPROBE_MODEL_SASS_COUNTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "model/mwp_cwp.h"
#include "model/ptx_desc.h"

/* The model's classes, then the three SASS buckets it has no rate for. */
enum sc_class {
    SC_SYNC = MC_COUNT,          /* barriers */
    SC_UNIFORM,                  /* uniform datapath */
    SC_TENSOR,                   /* tensor cores (HMMA, IMMA, DMMA): no model class */
    SC_OTHER,                    /* NOP, EXIT, unknown operations ... */
    SC_NCLASS
};

#define SC_MAX_LOOPS 32
#define SC_MAX_NOTES 12
#define SC_NOTE_LEN 200

/* What became of one SASS loop. */
struct sc_loop {
    uint32_t head;               /* offset of its header */
    int ptx;                     /* index of the PTX loop it came from */
    int remainder;               /* 1 for a remainder loop */
    int unroll;                  /* PTX trips a trip of it stands for */
    double trips;                /* trips per run of its region */
    int marker;                  /* the class u was taken on (enum mwp_class / sc_class) */
};

struct sc_desc {
    double run[SC_NCLASS];       /* per warp: instructions that run (MC_GLOBAL: accesses) */
    double off[SC_NCLASS];       /* per warp: issued with a guard known to be false */
    int nloops;
    struct sc_loop loops[SC_MAX_LOOPS];
    int copies, copies_run;      /* remainder/peel copies found, and chosen */
    double waits;                /* per warp: waits on global loads that run */
    int has_waits;               /* 0: the object predates them, the PTX's periods stand */
    char notes[SC_MAX_NOTES][SC_NOTE_LEN];
    int nnotes;
};

/* The class's name: the model's, then "sync", "uniform", "other". */
const char *sc_class_name(int c);

/* Combines the SASS object with the PTX loops (pd_loops; n of them).
 * 0, or -1 with the reason: the object is malformed, or a SASS loop
 * matches no PTX loop. */
int sc_count(const json_t *sass, const struct pd_loop *ptx_loops, int n, struct sc_desc *out,
             char *err, size_t errlen);

/* The kernel description from the SASS, in pd_desc_json's shape so the
 * model reads it as it reads the PTX's ("per_warp" holds what is issued:
 * run + predicated off; coalesced/uncoalesced what runs; "loops" the
 * number of SASS loops), plus "source":"sass", "run" and "predicated_off"
 * per class, "sass_loops" (each SASS loop with the PTX loop it came from,
 * role, unroll, trips, marker), "copies", "copies_run" and "notes". pd is
 * the PTX's description (its coalescing split), ptx_loops the loops
 * sc_count was given. NULL when memory runs out. */
json_t *sc_desc_json(const struct sc_desc *d, const struct pd_desc *pd,
                     const struct pd_loop *ptx_loops);

/* pd_describe, pd_loops and sc_count on one kernel: its description from
 * the SASS object (sc_desc_json), or NULL with the reason in err. */
json_t *sc_describe(const json_t *sass, const char *ptx, const char *entry,
                    const struct pd_launch *launch, char *err, size_t errlen);

#endif
