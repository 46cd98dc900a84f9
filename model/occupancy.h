/*
 * Occupancy: how many blocks of a kernel can be resident on one SM at once
 * (the "outer parallelism" P_i of a thesis chapter on automatically mapping
 * Fortran loops to GPUs, its equations 18-24), generalised to the
 * allocation rules of today's compute capabilities.
 *
 * DESIGN
 * The rules are data: one row per compute capability (struct occ_rules)
 * holding the per-SM limits and allocation granularities, each taken from
 * NVIDIA's published rules (docs/model.md cites the source of every number
 * and says which the GPU capture confirmed). One function applies them to
 * one launch configuration and returns the answer together with every
 * intermediate value, so a caller (API, CLI, the kernel-time model) can show
 * why. The calculation, per resource, for a block of T threads:
 *   warps      W = ceil(T / warp_size); limit = max_warps_per_sm / W      (18, 21)
 *   registers  per warp: ceil(regs * warp_size / reg_alloc_unit) units;
 *              the SM's register file is split over sub_partitions, each
 *              holding floor((regs_per_sm / sub_partitions) / per_warp)
 *              warps; limit = that * sub_partitions / W                  (19, 22)
 *              A block is refused (0) when its registers, with W rounded
 *              up to a multiple of sub_partitions, exceed regs_per_block,
 *              or regs exceeds max_regs_per_thread.
 *   shared     per block: static + dynamic + reserved_per_block, rounded
 *              up to smem_alloc_unit; refused (0) beyond the per-block
 *              limit (smem_per_block, or the opt-in limit once the kernel
 *              has raised its dynamic maximum above it), or when the
 *              dynamic size passes the kernel's dynamic maximum. The SM's
 *              shared memory is the carve-out: the kernel's preference
 *              (percent of smem_per_sm, rounded up to a supported step;
 *              the default is the largest step) unless one block needs
 *              more, in which case the smallest step that holds one block;
 *              limit = carve-out / per block                            (20, 23)
 *   blocks     max_blocks_per_sm                                           (24)
 *   barriers   named barriers per SM = max_blocks_per_sm * barrier_factor;
 *              limit = that / barriers the kernel uses (when it uses any)
 *   answer     the least of the limits; the limiter is the resource that
 *              gave it (the first in the order above on a tie; `limiters`
 *              lists every resource at the minimum).
 * Pure C: no CUDA, no I/O.
 */
#ifndef GPUPROBE_MODEL_OCCUPANCY_H
#define GPUPROBE_MODEL_OCCUPANCY_H

#include <stddef.h>

#define OCC_MAX_STEPS 12

struct occ_rules {
    int cc_major, cc_minor;
    int warp_size;
    int max_threads_per_block;
    int max_warps_per_sm;
    int max_blocks_per_sm;
    int regs_per_sm;
    int regs_per_block;
    int max_regs_per_thread;
    int reg_alloc_unit;          /* registers, allocated per warp */
    int sub_partitions;          /* the register file is split over these */
    int smem_per_sm;             /* bytes: the largest carve-out */
    int smem_per_block;          /* bytes without opt-in */
    int smem_per_block_optin;    /* bytes with opt-in */
    int smem_reserved_per_block; /* bytes the driver keeps per block */
    int smem_alloc_unit;         /* bytes */
    int carveout_kib[OCC_MAX_STEPS]; /* supported shared-memory sizes per SM, ascending */
    int ncarveout;
    int barrier_factor;          /* named barriers per SM = factor x max_blocks_per_sm */
};

/* The rules of compute capability major.minor, or NULL when there are none. */
const struct occ_rules *occ_rules_for(int cc_major, int cc_minor);
/* Every rules row, for listing ("7.0, 7.5, ..."). */
const struct occ_rules *occ_rules_at(size_t i);
size_t occ_rules_count(void);

#define OCC_CARVEOUT_DEFAULT (-1)
#define OCC_MAX_DYNAMIC_DEFAULT (-1)

/* The largest inputs taken: far beyond any device, and small enough that
 * no product of them (registers of a block, static plus dynamic shared
 * memory) passes an int. */
#define OCC_MAX_BLOCK (1 << 20)
#define OCC_MAX_REGS (1 << 10)
#define OCC_MAX_SMEM (1 << 28)

struct occ_input {
    int block_threads;
    int regs_per_thread;
    int static_smem;           /* bytes the kernel declares */
    int dynamic_smem;          /* bytes given at launch */
    int max_dynamic_smem;      /* the kernel's MAX_DYNAMIC_SHARED_SIZE_BYTES;
                                  OCC_MAX_DYNAMIC_DEFAULT: smem_per_block - static */
    int carveout_pct;          /* 0..100, or OCC_CARVEOUT_DEFAULT */
    int barriers;              /* named barriers the kernel uses (bar.sync 0 alone: 1) */
};

/* Fills the defaults: no shared memory, default limits and carve-out, one barrier. */
void occ_input_init(struct occ_input *in, int block_threads, int regs_per_thread);

enum occ_limit {
    OCC_LIMIT_WARPS,
    OCC_LIMIT_REGISTERS,
    OCC_LIMIT_SHARED,
    OCC_LIMIT_BLOCKS,
    OCC_LIMIT_BARRIERS,
    OCC_LIMIT_COUNT
};

const char *occ_limit_name(enum occ_limit l);

struct occ_result {
    int blocks_per_sm;
    enum occ_limit limiter;
    unsigned limiters;            /* bit (1 << l) for every resource at the minimum */
    char refused[256];            /* why a block cannot be resident at all; "" otherwise */
    int limit[OCC_LIMIT_COUNT];   /* blocks each resource allows */
    /* warps */
    int warps_per_block;
    int max_warps_per_sm;
    /* registers */
    int regs_per_warp;            /* allocated: rounded up to reg_alloc_unit */
    int regs_per_block;           /* regs_per_warp x warps_per_block */
    int regs_per_block_checked;   /* with warps rounded up to sub_partitions */
    int regs_per_sub_partition;
    int warps_per_sub_partition;  /* that the register file holds */
    /* shared memory */
    int smem_per_block;           /* allocated: with reserve, rounded to smem_alloc_unit */
    int smem_block_limit;         /* the per-block limit in force (with reserve) */
    int max_dynamic_smem;         /* the kernel's dynamic maximum in force */
    int smem_preference;          /* the carve-out asked for (bytes, on a step) */
    int smem_per_sm;              /* the carve-out used */
    /* the answer's consequences */
    int active_warps;
    double occupancy;             /* active_warps / max_warps_per_sm */
};

/* Applies the rules to one configuration. Returns 0, or -1 with the reason in
 * err when the input itself is invalid (negative sizes, a block of no
 * threads, a carve-out outside 0..100): a configuration the hardware
 * refuses (too many registers or threads, too much shared memory) is not an
 * error but an answer of 0 blocks with the reason in refused. */
int occ_compute(const struct occ_rules *r, const struct occ_input *in, struct occ_result *out,
                char *err, size_t errlen);

#endif
