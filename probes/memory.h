/*
 * The memory-hierarchy probe ("memory").
 *
 * DESIGN
 * Three measurements, each a small PTX kernel built at run time
 * (memory_ptx.c), timed with clock64 inside a loop run twice (the second
 * pass is kept: the first paid the instruction-cache misses and, for the
 * chases, filled the caches):
 *   chase      one thread follows a random cyclic permutation of pointers
 *              (ld.global.ca and ld.global.cg), footprints from 1 KiB to
 *              4 x the L2 size: the latency curve; and once over the L2
 *              size after other data has evicted it: device memory;
 *   shared     the same chase through a permutation held in shared memory;
 *   departure  one warp issues M independent warp-wide loads, coalesced
 *              (consecutive 4-byte words: one line per load) or
 *              uncoalesced (one line per thread: 32 lines per load); the
 *              slope between two counts M1 < M2 is the cycles between
 *              consecutive loads, the clock reads' own cost cancelled.
 *              Reported for ld.global.cg (every request leaves the SM for
 *              the L2, where the lines are: the departure delay of the
 *              model) and, as "l1_hit", for ld.global.ca (L1 hits);
 *   l1_sets    the L1's line, sets, ways and set-index function, found by
 *              conflicting pointer chases (probes/l1_sets.h);
 *   l2_partitions  which SMs share an L2 partition and which lines each
 *              is home to, from single timed loads (probes/l2_parts.h);
 *   distributed_shared  a thread-block cluster's remote shared-memory
 *              loads against local ones, latency and bandwidth, for
 *              clusters of 2 to 16 blocks (probes/dsmem.h);
 *   async_copy cp.async and the TMA's bulk copies global -> shared: one
 *              copy's latency and the bandwidth by transfer size, against
 *              plain loads (probes/async_copy.h);
 * and the SM clock achieved (probes/gpu/clock.h) before and after the whole.
 * The host side (memory_run.c) builds the permutations, sweeps the
 * footprints, repeats every point, and checks the machine code of each
 * timed region before it trusts a number. memory_analysis.c finds the
 * plateaus of a curve and the footprints where it steps; levels are named by
 * order only (1 = fastest), never by what one architecture is known to have.
 *
 * Chase elements are MEM_STRIDE bytes apart: one element per 128-byte line,
 * so on every cache level (L1 and L2 lines are 128 bytes, in 32-byte
 * sectors) an element is a line of its own: a hit or a miss is one line's,
 * neighbours never arrive for free through sector or line fills, the count
 * of lines in a footprint is its count of elements, and a given number of
 * dependent steps covers four times the footprint a 32-byte stride would.
 *
 * A chase of K steps, where K = max(MEM_K_MIN, elements) up to MEM_K_MAX:
 * while the footprint has at most MEM_K_MAX elements (2 MiB), the first pass
 * visits every element and the second pass repeats the cycle: the classic
 * figure, "latency of a load that follows the same cycle again". Beyond
 * that the passes visit MEM_K_MAX elements each, never the same one twice;
 * the whole footprint was read by every SM just before (a warm kernel), so
 * the figure is "latency of a random load into a footprint of this size that
 * was read once just before": the L2 holds what fits of it. Each point says
 * which of the two it is ("covered").
 */
#ifndef GPUPROBE_PROBES_MEMORY_H
#define GPUPROBE_PROBES_MEMORY_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define MEM_STRIDE 128          /* bytes between chase elements: one per line */
#define MEM_UNROLL 32           /* dependent loads in one chase loop body */
#define MEM_K_MIN 4096          /* fewest chase steps a pass times */
#define MEM_K_MAX 16384         /* most chase steps a pass times */
#define MEM_SHARED_WORDS 1024   /* the shared-memory chase's footprint, 4 KiB */
#define MEM_DEP_M1 32           /* departure: loads in the shorter region */
#define MEM_DEP_M2 96           /* departure: loads in the longer region */
#define MEM_DEP_REGION_BYTES 32768 /* departure: bytes each region reads */
#define MEM_OUT_WORDS 64        /* u64 words of every kernel's output buffer */
#define MEM_SEED 0x6770756d656d3031ull /* permutations are reproducible */

/* Every kernel the probe builds; each is its own module (one golden file). */
enum mem_kernel_id {
    MK_CHASE_CA,        /* ld.global.ca chase */
    MK_CHASE_CG,        /* ld.global.cg chase */
    MK_CHASE_SHARED,    /* ld.shared chase */
    MK_DEP_COAL_CG,     /* departure, coalesced, ld.global.cg */
    MK_DEP_UNCOAL_CG,   /* departure, one line per thread, ld.global.cg */
    MK_DEP_COAL_CA,     /* departure, coalesced, ld.global.ca (L1 hits) */
    MK_DEP_UNCOAL_CA,   /* departure, one line per thread, ld.global.ca */
    MK_SUPPORT,         /* untimed helpers: "build", "warm" */
    MK_COUNT
};

/* What a kernel is and what its timed regions must hold. A timed region is
 * the code between two clock64 reads; region r must hold region_loads[r]
 * instructions of SASS opcode sass_op (compiled from ptx_load) and no other
 * load of any kind. */
struct mem_kernel {
    const char *name;         /* "chase_ca": golden file memory_<name>.ptx */
    const char *entry;        /* kernel name in the module */
    const char *ptx_load;     /* "ld.global.ca.u64", or NULL for MK_SUPPORT */
    const char *sass_op;      /* base mnemonic the load compiles to: "LDG" */
    const char *sass_full;    /* what cuobjdump prints for it on sm_90, e.g.
                                 "LDG.E.64.STRONG.SM" (the modifiers are not
                                 decoded by sass.h, so not checked) */
    int regions;              /* timed regions in one pass */
    int region_loads[3];
};

extern const struct mem_kernel mem_kernels[MK_COUNT];

/* The module of kernel id for a device of compute capability major.minor
 * (malloc'd text, NULL when memory ran out). Kernel parameters:
 *   chase_ca, chase_cg (u64 out, u64 start, u32 iters): iters x MEM_UNROLL
 *     dependent loads from the pointer start; out[0], out[1] the cycles of
 *     pass 0 and 1, out[2] the last pointer;
 *   chase_shared (u64 out, u64 next, u32 iters): copies the MEM_SHARED_WORDS
 *     u32 indices at next into shared memory as addresses, then chases them;
 *     out as above, out[3] the shared address of word 0;
 *   depart_* (u64 out, u64 base): launched as one warp; out[3 * pass + r] the
 *     cycles of region r (0: no load, 1: MEM_DEP_M1, 2: MEM_DEP_M2 loads);
 *     reads 3 x MEM_DEP_REGION_BYTES from base;
 *   build (u64 base, u64 next, u32 n, u32 stride): element i at
 *     base + i * stride gets the pointer base + next[i] * stride, as a
 *     global-space address (what ld.global takes);
 *   warm (u64 out, u64 base, u32 n, u32 stride): reads every element with
 *     ld.global.cg (out is written only if their xor is 1: never). */
char *mem_ptx(enum mem_kernel_id id, int cc_major, int cc_minor);

/* Chase steps for a footprint of `elements` elements (a multiple of
 * MEM_UNROLL), and whether the first pass visits every element. */
unsigned mem_chase_steps(size_t elements);
int mem_chase_covered(size_t elements);

/* Reads kernel id's machine code from its module's cubin (as the JIT linker
 * or ptxas produced it) and checks every timed region of one pass: the
 * region is found between clock reads, holds region_loads[r] instructions
 * of sass_op and no other load (LD, LDG, LDS, LDC, LDL). Returns
 * {"verified":bool, "regions":[{"expect":n,"found":n,"other_loads":n}...]}
 * plus "error" (why it could not be read) or "listing" (the regions'
 * instructions) when not verified. */
json_t *mem_sass_check(enum mem_kernel_id id, const void *cubin, size_t size);
/* The same check for a timed kernel described outside mem_kernels (another
 * probe's, timed the same way: probes/l2_parts_run.c). */
json_t *mem_sass_check_kernel(const struct mem_kernel *k, const void *cubin, size_t size);

/* A uniformly random cyclic permutation of 0..n-1 (Sattolo's algorithm):
 * following i -> a[i] from any element visits all n before it returns.
 * The same seed gives the same permutation on every machine. */
void mem_random_cycle(uint32_t *a, size_t n, uint64_t seed);

/* The whole probe on one device (UUID or index): every measurement repeated
 * `repeats` times (0 = the default, 5; at most 100). Returns the result
 * document (db/results.h: "probe","device","driver_version","clock_mhz",
 * "repeats","stride_bytes","seed","chase_steps","curves","levels",
 * "summary","shared_cycles","departure","device_memory_cycles","l1_sets",
 * "l2_partitions","distributed_shared","async_copy",
 * "sass","wall_s"), or NULL with a reason in err
 * when nothing can be measured (no such device, no clock reading). A figure,
 * curve or level list that cannot be measured, or whose machine code is not
 * what it times, is {"error":"why"} in its own place. */
json_t *memory_probe_run(const char *device, int repeats, char *err, size_t errlen);

/* ---- analysis (memory_analysis.c) ------------------------------------ */

struct mem_point {
    double bytes;             /* footprint */
    double cycles;            /* the median latency there */
};

/* One level of a latency curve: a plateau, or (plateau = 0) the curve's end
 * still rising past the last plateau. */
struct mem_level {
    int level;                /* 1 = fastest */
    double cycles;            /* median of the plateau's points; for a rising
                                 end, the latency at the largest footprint
                                 (a lower bound of that level) */
    double from_bytes;        /* smallest footprint on it */
    double up_to_bytes;       /* largest footprint on it: where the level
                                 still holds (the capacity's lower bound) */
    double next_bytes;        /* the next footprint measured, the first off
                                 the level (the capacity's upper bound); 0
                                 when the curve ends on this level */
    int points;
    int plateau;
};

struct mem_analysis_opts {
    double rel_tol;           /* a point is on a plateau within this fraction */
    double abs_tol;           /* ... or within this many cycles, if larger */
    int min_points;           /* points a plateau needs */
    double max_slope;         /* most relative change per octave on a plateau */
};

/* Defaults (see memory_analysis.c for why these). */
void mem_analysis_defaults(struct mem_analysis_opts *o);

/* Finds the levels of a curve sorted by footprint (n points). Writes at most
 * max levels and returns how many it found (0 for a curve with no plateau),
 * or -1 if the points are not sorted or a value is not a positive number. */
int mem_find_levels(const struct mem_point *pts, size_t n, const struct mem_analysis_opts *o,
                    struct mem_level *out, size_t max);

/* [{"level":1,"cycles":..,"plateau":true,"from_bytes":..,"up_to_bytes":..,
 *   "next_bytes":..,"points":..,"l2_fraction":..}...]; sizes are integers.
 * For a level the curve ends on, up_to_bytes, next_bytes and l2_fraction
 * are null (no step was seen) and last_bytes gives the largest footprint.
 * l2_fraction = up_to_bytes / l2_bytes (null when l2_bytes is unknown): the
 * only tie to what the device says it has. */
json_t *mem_levels_json(const struct mem_level *lv, int n, double l2_bytes);
/* Reads a curve as memory_probe_run writes it ([{"bytes":..,"cycles":
 * {"median":..}}...]) into a malloc'd array; -1 with a reason otherwise. */
int mem_curve_from_json(const json_t *curve, struct mem_point **pts, size_t *n, char *err,
                        size_t errlen);

#endif
