/*
 * The control flow of one kernel's SASS: basic blocks, branch targets,
 * loops with their nesting, the code forward branches jump over, and
 * static instruction counts per model class (probes/gpu/sass_class.h), so
 * the kernel-time model can count what the machine runs instead of what
 * the PTX said (docs/sass.md, "Control flow"; docs/model.md).
 *
 * DESIGN
 * One pass over the text finds the leaders (the first instruction, every
 * branch target, the instruction after a BRA, EXIT or RET) and so the
 * blocks; a block's successors are its fall-through and its branch target
 * (probes/gpu/sass_branch.h). Blocks no path from the entry reaches (the
 * `BRA self` and NOP padding after the last EXIT) are left out of every
 * count and reported as `unreachable`.
 *
 * Loops: every retreating edge of a depth-first walk from the entry (a
 * branch to a block still on the walk's path; a branch back to an earlier
 * block that is no ancestor, an out-of-line block rejoining, is none) is a
 * back edge; the loop is the header plus every block that reaches the
 * branch without passing the header (the natural loop); back edges to one
 * header make one loop. A loop whose body would hold the entry block is
 * irreducible (its header does not dominate the branch back) and refused;
 * the others nest or are disjoint. A loop's parent is the smallest loop
 * holding it; depth 1 is outermost.
 *
 * Skips: a forward branch whose target lies in the same loop region as
 * the branch jumps over [branch + 16, target), unless code at or after the
 * target jumps back into that range: that code runs only when the branch
 * is not taken (for an unconditional BRA, only when something above jumps
 * into it: the else arm of an if/else). ptxas puts the peeled iteration,
 * the unrolled loop and its remainder copies each behind such a branch;
 * the model decides from the trip counts which of them run.
 *
 * Groups: the instructions of one reachable block under one guard (none,
 * @P0, @!P1 ...), with its innermost loop and innermost skip and its
 * count per class. ptxas predicates short remainder copies instead of
 * branching round them, so a guard is a condition of its own. (A guard is
 * told apart by predicate and sense only: a predicate written again inside
 * the block joins two conditions into one group.)
 *
 * Waits on memory: an instruction whose scoreboard wait mask (or a
 * DEPBAR) names a scoreboard a global load set, and no instruction has
 * waited on since, is where the warp waits for global memory: the end of
 * a memory period (docs/model.md). Every load still pending is taken to
 * arrive then (ptxas issues the loads it hoisted back to back), so the
 * next period starts at the next load. The scan follows the text's order,
 * block after block, not the branches: a loop's header sees what the code
 * before the loop left pending (its prologue's loads, when ptxas pipelined
 * the loop), not its own latch. Each group, loop and `straight` counts its
 * `waits`.
 *
 * Everything here is static: one instruction counts once, whatever the
 * trip counts; a loop's `count` is one trip of its own body, nested loops
 * excluded; `straight` is what lies outside every loop.
 *
 * Refused (-1 with the reason): a text whose length is not whole
 * instructions, an architecture without a known branch layout, a branch
 * to outside the text or between instructions, an irreducible loop.
 * Calls (CALL) are followed by the next instruction: the callee's
 * instructions are not counted (reported as `calls`); a guarded EXIT ends
 * the path of some threads only, so what follows it counts (reported as
 * `guarded_exits`).
 */
#ifndef GPUPROBE_PROBES_GPU_SASS_CFG_H
#define GPUPROBE_PROBES_GPU_SASS_CFG_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "probes/gpu/sass_class.h"

struct sass_block {
    uint32_t start, end;             /* byte offsets [start, end) */
    int succ[2];                     /* fall-through, branch target; -1 for none */
    int reachable;
    int loop;                        /* innermost loop holding it, -1 */
    int skip;                        /* innermost skip holding it in its loop's region, -1 */
};

struct sass_loop {
    uint32_t head;                   /* offset of the header block */
    uint32_t latch;                  /* offset of the last branch back to the header */
    uint32_t end;                    /* end offset of its last block */
    int parent, depth;
    int skip;                        /* innermost skip of the parent's region holding the header */
    unsigned count[SASS_CLASS_COUNT];  /* one trip, nested loops excluded */
    unsigned waits;                  /* waits on global loads, the same way */
};

struct sass_skip {
    uint32_t branch;                 /* offset of the forward branch */
    uint32_t from, to;               /* the code it jumps over: [from, to) */
    int conditional;
    int loop;                        /* the loop region it lies in, -1 for none */
    int parent;                      /* the smallest skip of that region holding it, -1 */
};

struct sass_group {
    uint32_t at;                     /* offset of its first instruction */
    int block, loop, skip;
    int guard;                       /* predicate 0..6, or -1 when unguarded */
    int guard_neg;
    unsigned count[SASS_CLASS_COUNT];
    unsigned waits;                  /* its instructions that wait on a global load */
};

struct sass_cfg {
    unsigned sm;
    size_t ninsns;
    struct sass_block *blocks;
    size_t nblocks;
    struct sass_loop *loops;         /* in order of their headers */
    size_t nloops;
    struct sass_skip *skips;         /* in order of their branches */
    size_t nskips;
    struct sass_group *groups;       /* in order of their blocks, then first instruction */
    size_t ngroups;
    unsigned straight[SASS_CLASS_COUNT];
    unsigned straight_waits;
    unsigned unreachable;            /* instructions no path reaches */
    unsigned guarded_exits, calls;
    unsigned unknown;                /* operations outside sass.c's opcode table */
};

/* Reads the control flow of one kernel's text (size bytes; code of SM
 * architecture sm, as struct cubin gives it). 0, or -1 with the reason in
 * err and cfg empty. cfg is released with sass_cfg_free either way.
 * Asserted: cfg not NULL, text not NULL unless size is 0. */
int sass_cfg_build(struct sass_cfg *cfg, const uint8_t *text, size_t size, unsigned sm,
                   char *err, size_t errlen);
void sass_cfg_free(struct sass_cfg *cfg);

/* The plain-data form the model reads (model/sass_counts.h), offsets as
 * integers and counts as {class: n} with zero classes left out:
 * {"sm":90,"instructions":N,"unreachable":n,"guarded_exits":n,"calls":n,
 *  "unknown_ops":n,"straight":{..},"straight_waits":n,
 *  "loops":[{"head":o,"latch":o,"end":o,"parent":i,"depth":d,"skip":i,"counts":{..},
 *            "waits":n}],
 *  "skips":[{"branch":o,"from":o,"to":o,"conditional":b,"loop":i,"parent":i}],
 *  "groups":[{"at":o,"loop":i,"skip":i,"guard":"!P0" or "","counts":{..},"waits":n}]}
 * NULL when memory runs out. */
json_t *sass_cfg_json(const struct sass_cfg *cfg);

/* sass_cfg_build and sass_cfg_json for kernel `name` of a cubin image
 * (size bytes): the object above, or NULL with the reason in err (the
 * cubin does not parse, has no such kernel, its code is refused). */
json_t *sass_cfg_describe_cubin(const void *cubin, size_t size, const char *name, char *err,
                                size_t errlen);

#endif
