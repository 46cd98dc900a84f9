/*
 * The kernel-time model: Hong and Kim's MWP/CWP analytical model (ISCA
 * 2009), as a thesis chapter on automatically mapping Fortran loops to GPUs
 * uses it (its equations 14-17 and 26-39), with its three cases, the
 * synchronisation cost, repetitions, and the total time of a program with
 * its host transfers.
 *
 * DESIGN
 * Pure arithmetic on two plain inputs: the kernel (launch shape, resources,
 * per-warp instruction counts) and the hardware (measured parameters, each
 * carried with where it came from; model/params.h fills them from the
 * store). Every intermediate quantity is returned, named as in the paper,
 * so a prediction can be read step by step. Cycles are SM cycles; the
 * clock converts them to seconds only at the end.
 *   warps/block, P (blocks per SM, from model/occupancy.h), active SMs,
 *   N = active warps per SM, #Rep = blocks / (active blocks per SM x active SMs)
 *   Mem_L_Coal = Mem_LD; Mem_L_Uncoal = Mem_LD + (#Uncoal_per_mw - 1) x delay_uncoal
 *   W_uncoal = #uncoal / (#coal + #uncoal); Mem_L = weighted mean
 *   Departure_delay = delay_uncoal x #Uncoal_per_mw x W_uncoal + delay_coal x W_coal
 *   MWP_Without_BW = Mem_L / Departure_delay
 *   BW_per_warp = clock x load_bytes_per_warp / Mem_L
 *   MWP_peak_BW = bandwidth / (BW_per_warp x active SMs)
 *   MWP = min(MWP_Without_BW, MWP_peak_BW, N)
 *   Comp_cycles = sum over instruction classes of issue cycles x count
 *                 (memory instructions included, at the load/store unit's rate)
 *   Mem_cycles = Mem_L_Uncoal x #uncoal + Mem_L_Coal x #coal
 *   CWP = min((Mem_cycles + Comp_cycles) / Comp_cycles, N)
 *   case 1  MWP = N and CWP = N: Mem_cycles + Comp_cycles + Comp_cycles / #mem x (MWP - 1)
 *   case 2  CWP >= MWP or Comp_cycles > Mem_cycles:
 *           Mem_cycles x N / MWP + Comp_cycles / #mem x (MWP - 1)
 *   case 3  otherwise: Mem_L + Comp_cycles x N
 *   (a kernel with no global memory instruction: Comp_cycles x N, "compute")
 *   Exec_cycles = that x #Rep; Sync = Departure_delay x (min(MWP, warps per
 *   block) - 1) x #sync x active blocks per SM x #Rep (a barrier holds one
 *   block's warps: no more than they queue behind its first memory request);
 *   kernel time = (Exec + Sync) / clock;
 *   total = kernel time x launches + transfer bytes / link bandwidth.
 * Not modelled: the thesis's block switch latency (eq. 25; no probe measures
 * it and the thesis calls it small), caches (every global access is priced at
 * the device-memory latency, as in the paper), and spills.
 */
#ifndef GPUPROBE_MODEL_MWP_CWP_H
#define GPUPROBE_MODEL_MWP_CWP_H

#include <stddef.h>
#include <stdint.h>

/* Instruction classes with their own issue rate. */
enum mwp_class {
    MC_FP32,     /* fadd, fmul, fma on f32 */
    MC_FP64,     /* f64 arithmetic */
    MC_INT,      /* integer and logic ALU, compares, moves, branches, barriers */
    MC_SFU,      /* rcp, sqrt, ex2, sin ... (the multi-function unit) */
    MC_CONV,     /* conversions */
    MC_SHARED,   /* shared-memory loads and stores */
    MC_GLOBAL,   /* global loads and stores (issue only; their latency is the model's) */
    MC_COUNT
};

const char *mwp_class_name(enum mwp_class c);
/* The class of a name ("fp32", ...), or -1. */
int mwp_class_parse(const char *name);

/* What a kernel is and does, per warp. */
struct mwp_kernel {
    long long blocks;            /* grid size, all dimensions multiplied */
    int block_threads;
    int blocks_per_sm;           /* P: the occupancy answer */
    double insts[MC_COUNT];      /* per warp, over the whole kernel (MC_GLOBAL is
                                    filled from coal + uncoal by the model) */
    double coal;                 /* global memory instructions per warp, coalesced */
    double uncoal;               /* ... uncoalesced */
    double uncoal_per_access;    /* transactions of one uncoalesced instruction */
    double coal_bytes;           /* bytes one coalesced instruction moves (warp) */
    double sector_bytes;         /* bytes of one transaction of an uncoalesced one */
    double sync;                 /* barriers per warp */
    double sync_mem;             /* of those, barriers with a global load before them since
                                    the previous one (they wait on memory); < 0: all do */
    double stores;               /* of the global memory instructions, stores (they are
                                    counted in coal / uncoal too) */
    double mem_periods;          /* times a warp waits for memory (loads issued together wait
                                    once); <= 0: every memory instruction, as in the paper */
    /* Hit rates from the cache model (cache/, over the kernel's sorted trace), as
     * fractions of sectors; has_hits = 0: none given, every access goes to device
     * memory as in the paper. l1_hit is of global loads (stores do not allocate in
     * the L1); l2_hit of the loads that missed the L1; l2_hit_store of stores. */
    int has_hits;
    double l1_hit, l2_hit, l2_hit_store;
    double launches;             /* R: times the kernel runs */
    double transfer_bytes;       /* V: host <-> device bytes around the launches */
};

/* A measured (or derived) parameter and where it came from. */
struct mwp_param {
    double value;
    int64_t job_id;              /* the job that measured it; 0 when derived or given */
    char source[160];            /* "memory probe, device_memory_cycles.cg median", ... */
};

struct mwp_hw {
    int sm_count;
    int warp_size;
    struct mwp_param clock_mhz;
    struct mwp_param mem_latency;      /* Mem_LD, cycles: device memory */
    struct mwp_param l1_latency;       /* a load served by the L1, cycles; 0 = unknown */
    struct mwp_param l2_latency;       /* a load served by the L2, cycles; 0 = unknown */
    struct mwp_param delay_coal;       /* cycles between coalesced loads */
    struct mwp_param delay_uncoal;     /* cycles between transactions of uncoalesced loads */
    struct mwp_param bandwidth;        /* device memory, bytes/s */
    struct mwp_param l2_bandwidth;     /* the L2's read bandwidth, bytes/s; 0 = unknown */
    struct mwp_param dram_granule;     /* bytes one device-memory access fetches at least (the
                                          L2's fetch granularity); 0 = a sector */
    struct mwp_param link_bandwidth;   /* host <-> device, bytes/s; value 0 = unknown */
    struct mwp_param issue[MC_COUNT];  /* SM cycles per warp instruction of the class's pipe */
    struct mwp_param issue_slot;       /* SM cycles per warp instruction at the dispatch ports,
                                          whatever the pipe; 0 = unknown (the paper's serial
                                          sum of the classes) */
};

enum mwp_case { MWP_CASE_COMPUTE_ONLY = 0, MWP_CASE_1 = 1, MWP_CASE_2 = 2, MWP_CASE_3 = 3 };

struct mwp_result {
    int warps_per_block;
    int blocks_per_sm;           /* P */
    int active_sms;
    int active_blocks_per_sm;
    double n;                    /* active warps per SM */
    double rep;
    double lat_load, lat_store;  /* one access's latency, weighted over the levels serving it */
    double dram_fraction;        /* of a memory instruction's sectors, the share from device memory */
    double l2_fraction;          /* ... the share crossing the L2 (missed or bypassed the L1) */
    double mem_l_coal, mem_l_uncoal, w_coal, w_uncoal, mem_l;
    double departure_delay;
    double mwp_without_bw, load_bytes_per_warp, bw_per_warp, mwp_peak_bw, mwp;
    double dram_bytes_per_warp, l2_bytes_per_warp;   /* per memory instruction of a warp */
    double mwp_peak_dram, mwp_peak_l2;               /* MWP_peak_BW of each level (0: no limit) */
    double sync_barriers;        /* the barriers charged: sync_mem when known, else sync */
    double comp_cycles, mem_cycles, mem_insts, cwp_full, cwp;
    double periods;              /* memory periods per warp the model charged */
    double loads_per_period;     /* global loads a load period waits for (1: the paper's) */
    double lat_period;           /* the longest of them, expected: what the period waits */
    double comp_serial;          /* the paper's Comp: every class's issue cycles summed */
    double comp_dispatch;        /* all instructions at the dispatch ports' rate */
    double comp_pipe;            /* the busiest pipe (load/store: shared and global together) */
    enum mwp_case which;
    double sync_mwp;             /* min(MWP, warps per block): the warps a barrier serialises */
    double case_cycles_per_rep;  /* the case's formula, before the throughput floors */
    double floor_departure;      /* N x memory instructions x departure delay: the SM's
                                    memory pipeline sends one request per delay */
    double floor_dram, floor_l2; /* N x bytes per warp / each level's bytes per SM cycle */
    double exec_cycles_per_rep, exec_cycles, sync_cycles, cycles;
    double kernel_s;             /* one launch */
    double kernels_s;            /* x launches */
    double transfer_s;
    double total_s;
    char bound[16];              /* "latency" (case 1: too few warps), "memory" (case 2
                                    when its memory term is the larger), "compute", or the
                                    floor that set the time: "departure", "dram", "l2" */
};

/* Runs the model. -1 with the reason when an input is out of range (no
 * blocks, P = 0, non-positive clock or latency, negative counts, transfers
 * without a link bandwidth). */
int mwp_predict(const struct mwp_kernel *k, const struct mwp_hw *hw, struct mwp_result *out,
                char *err, size_t errlen);

#endif
