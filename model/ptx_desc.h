/*
 * A kernel's description for the model (per-warp instruction counts by
 * class, global accesses split coalesced / uncoalesced, barriers), derived
 * from its PTX and its launch shape.
 *
 * DESIGN
 * One pass reads the entry's instructions; loops are found from backward
 * branches and their trip counts from the induction variable; one forward
 * pass tracks, per register, a known constant value (immediates, launch
 * dimensions, kernel parameters whose values the caller gives) and the
 * address's linear coefficients on %tid.x, %tid.y and %tid.z in bytes.
 * Each instruction counts once per warp times the trip counts of the loops
 * around it.
 *
 * Loops. A loop is the code between a label and a later branch back to
 * it. Its trip count is derived only for a counted loop: an induction
 * register stepped inside the loop (add IV, IV, STEP) by an immediate or
 * a register known where it stands, compared (setp.lt/le/gt/ge/ne) with a
 * bound whose value is known (an immediate, or a register computed from
 * immediates, launch dimensions and given parameters), the comparison
 * guarding the branch back; its value before the loop must be known too,
 * or exactly linear in %tid and %ctaid (a grid-stride loop), which is
 * counted per warp (its longest lane) at the mean over the launch's warps,
 * the spread noted. The count is found by stepping the induction variable
 * as the loop would (at most 1e9 iterations), or in closed form per warp.
 * A register written more than once is known where one write reaches the
 * read (not predicated, not passed by a branch, not brought back round a
 * loop); a forward branch comparing two known values is decided, and the
 * code a taken one skips counts for no warp.
 * Anything else is an error naming the loop's label: the description is
 * never guessed. When the bound (or the start) was computed from kernel
 * parameters whose values are not given, the error names them (each
 * value carries the set of such parameters it was computed from).
 *
 * Parameters. The launch gives integer parameters by the entry's name for
 * them or by their index from 0 in its parameter list, as trace capture
 * takes them; a name or index the entry does not have, or a parameter
 * given twice, is refused, listing the entry's parameters.
 *
 * Coalescing. For a global load or store the address register's
 * coefficients give each lane's byte offset from lane 0 in the block's first
 * warp (lanes mapped to (x, y, z) by the block shape). The access is
 * coalesced when it touches no more 32-byte sectors than a unit-stride access
 * of that many lanes and that width would (so a broadcast, base + tid x 4,
 * and a 16 x 2 tile row pair of a 16 x 16 block all are); otherwise
 * uncoalesced, with as many transactions as distinct 32-byte sectors
 * touched (base + tid x 128: 32). A coalesced access moves its sectors'
 * bytes (coal_bytes). An address that is not affine in the thread index
 * (it depends on a loaded value, a remainder, ...) is counted uncoalesced
 * with one transaction per lane, and said so in the notes.
 *
 * A barrier waits on memory (sync_mem) when a global load comes before it in
 * program order since the previous barrier: the warps reaching it first wait
 * for the others' loads, which is what the model charges; a barrier after
 * shared-memory work only (a reduction's tree steps) does not.
 *
 * Limits (each is a note in the description when it applies): code under a
 * forward branch the launch does not decide is counted as executed by every warp (an upper bound, as
 * for a warp where any lane takes it); predicated instructions are counted
 * as executed; generic-space loads and stores count as global; local
 * (spill) accesses count as uncoalesced global ones; the lane mapping is that
 * of a block's first warp. Instruction classes follow model/mwp_cwp.h.
 *
 * Static shared memory. The entry's .shared declarations (".shared .align 4
 * .b8 As[1024]", ".shared .f32 tile[32][33]"), and the module-scope ones
 * its body names, are laid out in declaration order, each at its alignment
 * (declared, else its element's size): static_smem, what the driver
 * reports as the function's static shared size for the kernels here. The
 * driver's own reserve per block (1 KiB from cc 8.0) is not in it: the
 * occupancy rules add it (model/occupancy.h). Variables only a called
 * .func names, and .extern (dynamic) ones, are not counted.
 *
 * Atomics and shuffles. atom and red count as memory accesses of their
 * state space: on global (or generic) memory as global accesses, coalesced
 * or not by their address like a load or store; on shared memory as shared
 * instructions (the model has no cost for contention on an address). The
 * value an atom returns is a loaded value (not affine in the thread index).
 * shfl counts in the shared class: the CUDA programming guide's throughput
 * table gives warp shuffles 32 results a clock an SM (7.x to 9.0), the rate
 * of the shared-memory path, where 32-bit integer adds get 64; so its issue
 * cost is the shared class's, not the integer ALUs'.
 */
#ifndef GPUPROBE_MODEL_PTX_DESC_H
#define GPUPROBE_MODEL_PTX_DESC_H

#include <jansson.h>
#include <stddef.h>

#include "model/mwp_cwp.h"

#define PD_MAX_PARAMS 16
#define PD_NOTE_LEN 160
#define PD_MAX_NOTES 8
#define PD_PARAM_LEN 128
#define PD_MAX_MISSING 4

struct pd_launch {
    unsigned grid[3], block[3];
    int nparams;
    struct {
        char name[PD_PARAM_LEN]; /* as long as the PTX's own names may be (nvcc's mangled ones) */
        long long value;
    } params[PD_MAX_PARAMS];   /* integer kernel parameters the trip counts may need: by
                                  the entry's name for it, or its index from 0 ("3") */
};

struct pd_desc {
    double insts[MC_COUNT];    /* per warp; MC_GLOBAL = coal + uncoal */
    double coal, uncoal;       /* global memory instructions per warp */
    double uncoal_per_access;  /* mean transactions of an uncoalesced instruction (1 if none) */
    double coal_bytes;         /* mean bytes of a coalesced instruction (128 if none) */
    double sync;               /* barriers per warp */
    double sync_mem;           /* of those, barriers after a global load (program order since
                                  the previous barrier): the ones that wait on memory */
    double stores;             /* of coal + uncoal, global stores (st, red) */
    double mem_periods;        /* times a warp waits for global memory: loads issued before
                                  any of their values is used wait once; each store once */
    int loops;
    long long static_smem;     /* bytes of the shared variables the entry declares, and
                                  of the module's it names, laid out in order at their
                                  alignment (.extern ones are dynamic: not counted) */
    int shared_vars;           /* how many variables those are */
    char notes[PD_MAX_NOTES][PD_NOTE_LEN];
    int nnotes;
    /* When pd_describe fails over a parameter: the one at fault (a name or
     * index given that the entry does not have, or given twice, as given;
     * or the first one a loop's trip count needs that has no value, by the
     * entry's name), else "". The ones with no value: missing[nmissing],
     * their indexes from 0 missing_index[nmissing]. */
    char param[PD_PARAM_LEN];
    char missing[PD_MAX_MISSING][PD_PARAM_LEN];
    int missing_index[PD_MAX_MISSING];
    int nmissing;
};

/* Describes entry `entry` of the module text ptx (NULL: the first entry).
 * -1 with the reason in err (text that is not a PTX module: it does not
 * begin with .version then .target; a parameter given that the entry does
 * not have, by name or index, or one given twice; a loop whose trip count
 * cannot be derived, naming the parameters with no value it depends on,
 * if any; an entry that is not there, text that does not parse), and
 * out->param, out->missing as they say. */
int pd_describe(const char *ptx, const char *entry, const struct pd_launch *launch,
                struct pd_desc *out, char *err, size_t errlen);

/* {"per_warp":{"fp32":..,...,"coalesced":..,"uncoalesced":..,"sync":..},
 *  "uncoal_per_access":..,"coal_bytes":..,"loops":..,"static_smem":..,"notes":[..]} */
json_t *pd_desc_json(const struct pd_desc *d);

/* The launch of a kernel object ({"grid":[x,y,z],"block":[x,y,z],"params":{name:
 * integer}}; missing dimensions 1, parameters that are not integers skipped). */
void pd_launch_from_json(const json_t *k, struct pd_launch *l);

/* A loop as pd_describe found it, for relating the PTX to the compiled
 * code (model/sass_counts.h): its nesting, its trip count per entry, and
 * what one trip of its own body holds (nested loops excluded), classified
 * as pd_describe classifies (body[MC_GLOBAL]: global accesses). */
struct pd_loop {
    char label[64];
    int parent;                /* the enclosing loop's index, -1 */
    int depth;                 /* 1 = outermost */
    long long trips;           /* per entry into the loop */
    double body[MC_COUNT];
    double sync;               /* barriers of one trip */
};

/* The loops of entry `entry` (NULL: the first), outer before inner, in
 * order of their labels: up to max into loops, how many in *n. 0, or -1
 * with the reason (pd_describe's, or more than max loops). */
int pd_loops(const char *ptx, const char *entry, const struct pd_launch *launch,
             struct pd_loop *loops, int max, int *n, char *err, size_t errlen);

#endif
