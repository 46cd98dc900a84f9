/*
 * The latency and throughput probe ("latency").
 *
 * DESIGN
 * Probes as data: every instruction is one catalog entry (a PTX template for
 * one dependent step, the register types it needs, the SASS opcode it must
 * compile to); one generic generator turns an entry into a module and one
 * generic runner times it. The latency kernel is one warp running five timed
 * regions, each between two clock64 reads, inside a loop run twice (the
 * second pass is kept, the first paid the instruction-cache misses):
 *   R0 clock;clock                 the clock reads' own cost
 *   R1 clock;step;clock            issue latency (the first of the two timing
 *                                  styles of the Kepler microbenchmark method)
 *   R2 clock;step;step;clock       execution latency (a dependent use)
 *   R3, R4 chains of N1 and N2 dependent steps
 * Chain latency = (R4 - R3) / (N2 - N1): the clock overhead cancels. Before
 * a number is reported the runner reads the cubin and checks that each
 * region holds exactly the expected count of the expected opcode; if not,
 * the entry reports what the compiler produced and no number.
 * Throughput uses a second kernel: every SM full of warps, each thread
 * running independent chains, timed by %globaltimer and converted to
 * results per clock per SM with the SM clock measured in the same run.
 * Tensor-core entries (lat_mma) chain through their accumulator (D = A x B
 * + D): the latency is one mma.sync's, the throughput counts warp-wide
 * operations per clock per SM, and with the operations each does and the
 * clock, the TFLOP/s (TOP/s for integers) of the whole GPU.
 * Warpgroup entries (lat_mma.warpgroup, wgmma.mma_async, sm_90a) run the
 * same two kernels with a warpgroup (128 threads) where the others run a
 * warp: B (and A, unless A is in registers) is read from zero-filled
 * shared memory through matrix descriptors. A latency step is
 * wgmma + commit_group + wait_group 0, so the chain figure is the time from
 * issue until the result may be read, not the tensor pipe's occupancy; the
 * throughput kernel keeps WG_TPUT_UNROLL wgmmas a commit group and two
 * groups in flight (wait_group 1), all into one accumulator (the ISA orders
 * wgmmas of one shape on one accumulator without a wait), with
 * WG_TPUT_PER_SM warpgroups an SM, and once more with one warpgroup an SM.
 */
#ifndef GPUPROBE_PROBES_LATENCY_H
#define GPUPROBE_PROBES_LATENCY_H

#include <jansson.h>
#include <stddef.h>

#include "probes/gpu/ptx.h"

#define LAT_N1 16
#define LAT_N2 48
#define LAT_REGIONS 5
#define TPUT_CHAINS 8
#define TPUT_UNROLL 8
#define TPUT_THREADS 256
/* warpgroup (wgmma) kernels: threads a block (one warpgroup), wgmmas a
 * commit group, blocks an SM in the throughput run, and the shared bytes
 * the operands read (A 64 rows x 32 bytes, B up to 256 rows x 32 bytes) */
#define WG_THREADS 128
#define WG_TPUT_UNROLL 8
#define WG_TPUT_PER_SM 2
#define WG_SMEM_BYTES 10240
/* the warpgroup latency kernel's chains R3 and R4: a wgmma step takes
 * a hundred cycles or more, so short chains measure it as well and keep
 * the JIT's work (each step names up to 128 accumulator registers) small */
#define WG_N1 4
#define WG_N2 12

/* Register classes a template can ask for. */
enum lat_type { LT_F32, LT_F16X2, LT_F64, LT_U32, LT_U64, LT_S32 };

/* A tensor-core step (mma.sync): the accumulator is d registers of the
 * entry's xt ({d} in the template, a PTX vector whose first register is the
 * chain's {x}), the A and B operands a and b registers of type t ({a},
 * {b}, .b32 or .f64, filled from {y}'s bits); one step is one warp-wide operation of
 * flops operations, so its throughput counts warps, not threads.
 * warpgroup 1: a wgmma.mma_async step of one warpgroup (sm_90a): {b} is B's
 * shared-memory descriptor, {a} A's descriptor (a 0) or a registers of A
 * (a > 0), {c} the scale-d predicate (true: D = A x B + D); b is unused. */
struct lat_mma {
    int d, a, b;
    enum lat_type t;
    double flops;
    int warpgroup;
};

struct lat_entry {
    const char *name;         /* catalog key, e.g. "ffma" */
    const char *group;        /* "fp32", "fp16", "fp64", "int", "logic", "conv", "sfu", "warp", "shared", "atomic" */
    const char *ptx;          /* one step; {x} chain register, {y} {z} operands of x's type,
                                 {u} a u32 operand, {t} scratch of type tt, {s} shared address (u32),
                                 {g} global address (u64) */
    enum lat_type xt;         /* type of {x} {y} {z} */
    enum lat_type tt;         /* type of {t} */
    const char *sass;         /* the opcode the step must compile to ("A|B": either) */
    int per_step;             /* how many of them one step is */
    const char *note;         /* what the figure means where it is not obvious */
    const struct lat_mma *mma; /* a tensor-core step, or NULL */
    const char *ptx_version;  /* the PTX ISA the step needs, when newer than ptx_header's */
};

extern const struct lat_entry lat_catalog[];
extern const size_t lat_catalog_count;
const struct lat_entry *lat_find(const char *name);

/* The latency module for e (kernel "lat"), for a device of cc major.minor. */
char *lat_ptx_latency(const struct lat_entry *e, int cc_major, int cc_minor);
/* The throughput module for e (kernel "tput"). */
char *lat_ptx_throughput(const struct lat_entry *e, int cc_major, int cc_minor);
/* 1 for a warpgroup (wgmma.mma_async) entry. */
int lat_is_warpgroup(const struct lat_entry *e);
/* Threads a block of e's latency (tput 0) or throughput (tput 1) kernel. */
int lat_block_threads(const struct lat_entry *e, int tput);
/* Timed steps one loop iteration of the throughput kernel holds, per
 * thread (per warp for mma.sync, per warpgroup for wgmma). */
int lat_tput_steps(const struct lat_entry *e);
/* The kernels' input buffer for e (both kernels read the same layout):
 * the y and z operands at 8 and 16, a u32 operand at 24, a zero at 28
 * (see latency_ptx.c), chain k's start value at 32 + 8k. */
#define LAT_INPUT_BYTES 128
void lat_fill_inputs(const struct lat_entry *e, unsigned char in[LAT_INPUT_BYTES]);
/* How many of e's opcode each latency region must hold. */
int lat_region_expect(const struct lat_entry *e, int region);
/* Steps R4 holds beyond R3 (LAT_N2 - LAT_N1, or WG_N2 - WG_N1): the chain
 * latency's divisor. */
int lat_chain_span(const struct lat_entry *e);

/* Runs the probe on a device (UUID or index) for the catalog entries named
 * in `only` (comma-separated; NULL or "all" for every entry), each measured
 * `repeats` times. The whole result document, or NULL with the reason. */
json_t *latency_probe_run(const char *device, int repeats, const char *only, char *err,
                          size_t errlen);

#endif
