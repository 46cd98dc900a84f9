/*
 * Distributed shared memory: within a thread-block cluster, what a load
 * from another block's shared memory costs against one from the block's
 * own, and how many bytes a clock an SM moves either way, for clusters of
 * 2, 4, 8 and 16 blocks. Part of the memory probe ("distributed_shared" in
 * its document, memory_run.c).
 *
 * DESIGN
 * One module per cluster size, its size fixed in the PTX
 * (.reqnctapercluster); the launch names it again through the Driver API's
 * launch attribute (cuLaunchKernelEx, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
 * a plain cuLaunchKernel where the driver lacks it), and the driver's own
 * reading of it (CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH) and what the
 * blocks see (%cluster_nctarank) are both reported and must agree with the
 * size asked for. 16 is past the portable 8 and is asked for with
 * CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED; whether a cluster of
 * a size fits at all is asked of cuOccupancyMaxActiveClusters; a device
 * that will not launch a size says why in that size's entry. Every block
 * takes more than half an SM's shared memory (dynamic, unused), so no two
 * blocks of a cluster share an SM and "remote" is another SM; the blocks'
 * %smid say whether that held. Every block fills a 4 KiB ring in its
 * shared memory (word i holds the window address of word i x 97 + 1 mod
 * 1024: one cycle through all of them) and the cluster waits on its
 * barrier. Latency: block 0's thread 0 maps the ring of block t into the
 * cluster's window (mapa) and follows it with ld.shared::cluster,
 * DSM_UNROLL loads a loop trip, for t = 0 (its own ring, through the same
 * window: the local figure), 1 (a neighbour) and size - 1 (the farthest
 * rank). Bandwidth: every thread of every block reads 16-byte words of the
 * ring of the block dist ranks on (0: its own) with
 * ld.shared::cluster.v4, DSM_BW_LOADS a trip; each block's thread 0 times
 * its block between barriers. A trip has 16 warps x 8 loads x 512 B = 64
 * KiB in flight an SM before the loads are waited for, enough to cover a
 * few hundred cycles of latency at over 100 bytes a clock; the figure is
 * what this pattern reaches, a floor of what the network can give. The timed regions' machine code is checked
 * (the memory probe's region check, mem_sass_check_kernel) before any time
 * is kept. The figures are made from the timings by dsm_analyze (plain C,
 * tested on made timings); dsmem_run.c times, dsmem_ptx.c writes the PTX.
 */
#ifndef GPUPROBE_PROBES_DSMEM_H
#define GPUPROBE_PROBES_DSMEM_H

#include <jansson.h>
#include <stdint.h>

#define DSM_RING_WORDS 1024      /* 4 KiB of shared memory a block */
#define DSM_UNROLL 8             /* chase loads a loop trip */
#define DSM_CHASE_TRIPS 256      /* timed trips: 2,048 loads */
#define DSM_BW_THREADS 512       /* a block's threads in the bandwidth kernel */
#define DSM_BW_LOADS 8           /* 16-byte loads a thread a trip */
#define DSM_BW_TRIPS 128
#define DSM_SIZES 4              /* cluster sizes measured: 2, 4, 8, 16 */
#define DSM_MAX_CLUSTER 16
#define DSM_TARGETS 3            /* latency targets: own, neighbour, farthest */
#define DSM_DISTS 2              /* bandwidth: own ring (0), the next rank's (1) */
#define DSM_LAT_WORDS (3 + DSM_MAX_CLUSTER)   /* u64 words dsm_lat writes */
#define DSM_BW_WORDS (3 * DSM_MAX_CLUSTER)    /* u64 words dsm_bw writes */

struct gpu;
struct mem_kernel;

/* The two kernels as the memory probe's machine-code check reads them
 * (probes/memory.h: mem_sass_check_kernel): one timed region each, holding
 * DSM_UNROLL (dsm_lat) or DSM_BW_LOADS (dsm_bw) generic LDs and no other
 * load. */
extern const struct mem_kernel dsm_lat_kernel, dsm_bw_kernel;

/* The cluster sizes measured, in order. */
extern const unsigned dsm_sizes[DSM_SIZES];

/* The module for clusters of `cluster` blocks (malloc'd; NULL out of
 * memory): "dsm_lat" (u64 out, u32 target, u32 trips): out[0] the cycles
 * of the second of two passes of trips x DSM_UNROLL dependent loads from
 * rank target's ring, out[1] where the chase ended, out[2] the cluster
 * size block 0 saw, out[3 + r] block r's %smid; "dsm_bw" (u64 out, u32
 * dist, u32 trips): out[3r] block r's cycles, out[3r + 1] its
 * %cluster_nctarank, out[3r + 2] its %smid. */
char *dsm_ptx(int cc_major, int cc_minor, unsigned cluster);

/* Byte offset word i of the ring points to (the chase's next element). */
unsigned dsm_next(unsigned i);

/* What one cluster size gave, the analysis's input. Timings are only read
 * when launched. */
struct dsm_raw {
    unsigned asked;          /* blocks a cluster, 1..DSM_MAX_CLUSTER */
    int driver_width;        /* CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH; -1: not read */
    int max_clusters;        /* cuOccupancyMaxActiveClusters; -1: not asked */
    int launched;            /* every launch of the size ran */
    const char *error;       /* why not (or NULL) */
    int repeats;             /* repeats of each timing, >= 1 when launched */
    unsigned ranks_seen;     /* %cluster_nctarank, the same in every block and
                              * launch; 0 when they differed */
    unsigned distinct_sms;   /* different %smid among the blocks of one cluster */
    const uint64_t *lat;     /* lat[t * repeats + k]: cycles of target t's timed pass */
    const uint64_t *bw;      /* bw[(d * repeats + k) * asked + b]: block b's cycles */
};

/* Loads a timed chase pass holds, and bytes one block's bandwidth pass reads. */
#define DSM_CHASE_LOADS ((unsigned)DSM_CHASE_TRIPS * DSM_UNROLL)
#define DSM_BW_BLOCK_BYTES ((double)DSM_BW_THREADS * DSM_BW_LOADS * 16 * DSM_BW_TRIPS)

/* One size's entry: {"asked", "driver_width" (null: not read), "ranks_seen",
 * "agrees" (width == ranks == asked), "launched", "max_active_clusters"?,
 * "distinct_sms"?, "error"?; when launched: "latency_cycles": {"local",
 * "neighbour", "farthest"} (each {"median","min","max","runs"}, cycles a
 * load), "bytes_per_clk_sm": {"local", "remote"} (likewise), "gb_s_sm":
 * {"local", "remote"} (the medians at clock_mhz; absent when clock_mhz is
 * not > 0)}. NULL only out of memory. */
json_t *dsm_analyze(const struct dsm_raw *r, double clock_mhz);

/* The probe on an open device at SM clock clock_mhz (0: unknown): the
 * memory document's member {"clock_mhz", "chase_loads", "bw_block_bytes",
 * "block_pad_bytes" (the dynamic shared memory that keeps one block an SM),
 * "sizes": [dsm_analyze's entries], "sass": {size: check}, "wall_s"} or
 * {"error": "...", "wall_s"} when nothing could be measured. */
json_t *dsm_probe(struct gpu *g, int repeats, double clock_mhz);

#endif
