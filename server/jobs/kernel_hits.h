/*
 * A kernel's L1 and L2 hit rates for the kernel-time model, from the cache
 * model over its own captured trace: the capture (probes/capture.h) of a
 * sample of its blocks, the sorter (trace/pipeline.h) and the cache model
 * (cache/model.h), run one after the other on a GPU machine.
 *
 * DESIGN
 * The sample is the launch's first blocks (linear index, x fastest): as
 * many as a budget of thread records allows (the description's global
 * accesses a warp times the block's warps times 32 estimate a block's
 * records), at most one wave (SM count x blocks per SM). The whole launch
 * runs and only those blocks record (capture_req.sample_blocks), so each
 * does what it does in the whole launch: a kernel that strides by the
 * grid's size (a grid-stride loop) does its share, not all of n as it
 * would in a smaller grid. It is sorted for all the device's
 * SMs with the kernel's blocks per SM, placed round-robin as the GPU places
 * blocks, so each SM holds the blocks it would hold and never neighbours
 * the prefix made. The geometry is the hopper preset with the L2 set to the
 * device's size.
 * L1 hit rate: the share of load sectors the L1s did not send below (a
 * request merged into a fetch in flight is not sent again: Nsight Compute
 * counts those as hits too; stores are written through, never hits).
 * L2 store hit rate: the sample's share of store sectors already in the L2
 * (it writes back and allocates: a sector written again hits). L2 hit rate: the sample covers a fraction f of the
 * blocks. When the kernel's data (the sample's compulsory L2 misses / f,
 * at most the bytes of the buffers it is given) fits the L2 (the device's
 * size: data past the memory probe's latency plateau is still in the L2,
 * in its far half, only slower), only compulsory misses miss over the whole
 * kernel: 1 - footprint / (L1 misses / f); otherwise the sample's own L2
 * sector hit rate. A prefix cannot see reuse between blocks far apart in
 * the grid, which is why the footprint rule comes first. Everything is in
 * the answer's "sample" member.
 */
#ifndef GPUPROBE_SERVER_JOBS_KERNEL_HITS_H
#define GPUPROBE_SERVER_JOBS_KERNEL_HITS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define KERNEL_HITS_BUDGET (1u << 24)   /* thread records a sample may hold */
#define KERNEL_HITS_SECTORS_PER_LINE 4  /* the hopper preset's 128-byte lines of 32-byte sectors */

struct trace_deal;

struct kernel_hits_req {
    const char *ptx, *entry;
    unsigned grid[3], block[3];
    const char *const *args;          /* "NAME=VALUE" as trace capture takes them */
    size_t nargs;
    const char *device;               /* index or UUID */
    int sm_count, blocks_per_sm;      /* the device's SMs; the kernel's occupancy */
    double records_per_block;         /* estimate; <= 0: one wave is sampled */
    uint64_t l2_bytes;                /* the device's L2 (the cache model's size) */
    const struct trace_deal *deal;    /* the device's dealing order (placement dealt,
                                         trace/deal.h); NULL: round-robin */
    uint64_t budget;                  /* records; 0: KERNEL_HITS_BUDGET */
    const char *tmpdir;               /* NULL: $TMPDIR, else /tmp */
};

/* A block's thread records, estimated from a description's "per_warp" (its
 * global accesses a warp, coalesced and uncoalesced) for blocks of `threads`
 * and warps of warp_size threads: every lane of every warp making each. */
double kernel_hits_block_records(const json_t *per_warp, unsigned threads, int warp_size);

/* Blocks in r's sample: the budget's worth (budget / records_per_block,
 * at least 1), at most one wave (sm_count x blocks_per_sm), at most the grid. */
uint64_t kernel_hits_sample_blocks(const struct kernel_hits_req *r);

struct cache_counts;

/* Bytes of the buffers among args ("NAME=buf:BYTES[:FILL]"). */
uint64_t kernel_hits_buffer_bytes(const char *const *args, size_t nargs);

/* The answer from the sample's exact-engine counts of the L1s (all SMs) and
 * the L2, for a sample of `sampled` blocks; cap is the capture's document (its record
 * count) or NULL. */
json_t *kernel_hits_rates(const struct kernel_hits_req *r, const struct cache_counts *l1,
                          const struct cache_counts *l2, uint64_t sampled, const json_t *cap);

/* The order device (index or UUID) deals blocks in, measured now
 * (probes/placement.h: a few launches of a few milliseconds), for
 * kernel_hits_req.deal: 0 when it was determined and d holds it (free it
 * with trace_deal_free), else -1 and d empty. The probe's document,
 * without the orders, into *doc (its error when the device would not open). */
int kernel_hits_deal(const char *device, struct trace_deal *d, json_t **doc);

/* {"l1_hit", "l2_hit", "l2_hit_store", "sample": {...}}, or NULL with the reason in err. */
json_t *kernel_hits(const struct kernel_hits_req *r, char *err, size_t errlen);

#endif
