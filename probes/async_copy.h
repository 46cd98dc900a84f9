/*
 * Asynchronous copies, global -> shared: cp.async (Ampere's LDGSTS) and the
 * tensor memory accelerator (cp.async.bulk, cp.async.bulk.tensor with an
 * mbarrier), against plain loads stored to shared memory. Part of the memory
 * probe ("async_copy" in its document, memory_run.c).
 *
 * DESIGN
 * Two measurements, each per method and transfer size:
 *   latency    one copy and its wait between two clock64 reads, repeated
 *              ACP_LAT_ITERS times at fresh addresses of a buffer every SM
 *              read just before (so: L2 hits, level "l2"); a warp for the
 *              per-thread methods (cp.async 4/8/16 B per thread, ld.global
 *              + st.shared), one thread for the bulk ones (one copy of S
 *              bytes). The next copy's address adds a word the previous copy
 *              wrote to shared memory (always 0), read after the closing
 *              clock, so copies never overlap. Median, min, max of the
 *              cycles.
 *   bandwidth  one block per SM streams ACP_CHUNK-byte chunks into two
 *              halves of a shared buffer (one filling while the other is
 *              waited for), with copies of the transfer size: from a buffer
 *              4 x the L2 ("dram") and from one of a quarter of the L2 read
 *              ACP_L2_PASSES times after a warm read ("l2"). Each block
 *              reads clock64 at its start and end: bytes per clock per SM
 *              (the median block's) and GB/s (all bytes over the slowest
 *              block's cycles at the measured SM clock).
 * The tensor form copies boxes of 32 x R u32 (128 B rows, R rows) from the
 * buffer seen as a 2D tensor of 128-byte rows, so a box is R x 128
 * contiguous bytes, the same bytes a bulk copy of that size moves: the two
 * differ only by the engine's address generation. Its CUtensorMap is made on
 * the host with cuTensorMapEncodeTiled (libcuda; a driver without it makes
 * the tensor rows say so).
 * The PTX (async_copy_ptx.c) targets sm_90 (local ptxas 13.0 compiles
 * every form for sm_90; sm_90a is not needed); a device below 9.0 has no
 * bulk copies and those rows say so; below 8.0 nothing here runs.
 * Machine code: each latency kernel's timed region must hold exactly one
 * copy instruction (LDGSTS, UBLKCP, UTMALDG; LDG for the plain loads) and no
 * other load, and the bulk ones a SYNCS (the mbarrier wait) — checked in the
 * JIT's cubin before a figure is kept (probes/async_copy_run.c).
 * The analysis (async_copy_analysis.c) is plain C over timings, unit-tested
 * with made ones (tests/unit/test_async_copy.c).
 */
#ifndef GPUPROBE_PROBES_ASYNC_COPY_H
#define GPUPROBE_PROBES_ASYNC_COPY_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define ACP_LAT_ITERS 64          /* copies timed per latency point */
#define ACP_LAT_STRIDE_MIN 4096   /* bytes between latency copies at least */
#define ACP_CHUNK 16384           /* bytes a bandwidth block moves per step */
#define ACP_SMEM 32768            /* the shared buffer: two chunks */
#define ACP_BW_THREADS 256        /* block of the per-thread bandwidth kernels */
#define ACP_L2_PASSES 8           /* reads of the L2-resident buffer */
#define ACP_ROW 128               /* the tensor's row: 32 u32 */
#define ACP_BULK_MAX 16384        /* largest bulk copy (a chunk) */
#define ACP_SPIN_MAX (1u << 22)   /* failed mbarrier tries before a kernel gives up */
#define ACP_LATE 0xffffffffu      /* a latency timing whose wait gave up */

/* Methods, each with its own kernels. */
enum acp_method {
    ACP_LD,        /* ld.global.v{1,2,4}.u32 + st.shared, per thread */
    ACP_CA,        /* cp.async.ca.shared.global, 4/8/16 B per thread */
    ACP_CG,        /* cp.async.cg.shared.global, 16 B per thread */
    ACP_BULK,      /* cp.async.bulk.shared::cluster.global + mbarrier */
    ACP_TENSOR,    /* cp.async.bulk.tensor.2d + mbarrier */
    ACP_METHODS
};

/* "ld", "ca", "cg", "bulk", "tensor" (NULL past the end). */
const char *acp_method_name(enum acp_method m);
/* Whether the method's size is per thread (4/8/16, a compile-time operand)
 * rather than per copy (a run-time operand, multiple of 16). */
int acp_per_thread(enum acp_method m);
/* The SASS base mnemonic its copy compiles to ("LDG" for ACP_LD). */
const char *acp_sass_op(enum acp_method m);

/* The module of one kernel (malloc'd PTX; NULL when out of memory or for
 * a size the method has no kernel for). Entry "acp" in each module.
 * lat = 1, the latency kernel: (u64 out, u64 src, u32 iters, u32 stride,
 *   u32 bytes[, tmap]); launched as one warp (per-thread methods) or one
 *   thread (bulk); out[i] (u32) the cycles of copy i, copy i reading from
 *   src + i * stride (+ lane * size for the per-thread methods); a copy
 *   whose mbarrier wait gave up (ACP_SPIN_MAX failed tries) is ACP_LATE and
 *   the last one written.
 * lat = 0, the bandwidth kernel: (u64 out, u64 src, u32 chunks, u32
 *   buf_chunks, u32 bytes[, tmap]); block b moves chunks b, b + grid, ...
 *   below `chunks`, chunk c from src + (c % buf_chunks) * ACP_CHUNK, in
 *   copies of `bytes` (per copy: bulk, a multiple of 16 dividing ACP_CHUNK;
 *   per thread: the kernel's size); out[2b], out[2b+1] (u64) its clock64 at
 *   start and end, the end 0 when a wait gave up (the block stops there).
 *   Blocks of ACP_BW_THREADS threads (per thread) or 32.
 * size (acp_size_ok): the per-thread methods' 4, 8 or 16 (ACP_CG: 16
 * only); the bulk forms' bytes per copy, a constant of the kernel (bulk: a
 * multiple of 16, tensor: of ACP_ROW, at most ACP_BULK_MAX, dividing
 * ACP_CHUNK for the bandwidth kernel); the p_bytes parameter is then unused. */
char *acp_ptx(enum acp_method m, unsigned size, int lat, int cc_major, int cc_minor);
/* Whether method m has a kernel (lat: latency, else bandwidth) of that size. */
int acp_size_ok(enum acp_method m, unsigned size, int lat);

/* Checks a kernel of method m in its cubin (what the JIT linker or ptxas
 * made of acp_ptx(m, .., lat, ..)). Latency kernel (lat = 1): the first
 * timed region (between clock reads) must hold exactly one instruction of
 * acp_sass_op(m), the bulk forms at least one SYNCS (the mbarrier wait),
 * and no other load: no LDG (but the plain loads' one), LDC, LDL, nor LDS
 * but the "LDS RZ, [RZ]" ptxas puts before every cp.async (counted apart
 * as "lds_rz"). Bandwidth kernel (lat = 0): the region (the whole stream)
 * must hold the copy instruction (and SYNCS for the bulk forms); its other
 * loads are counted, not refused. Returns {"verified":bool,"opcode",
 * "found","syncs","lds_rz","other_loads"} plus "error" or (not verified)
 * "listing". */
json_t *acp_sass_check(enum acp_method m, int lat, const void *cubin, size_t size);

/* ---- analysis (async_copy_analysis.c) --------------------------------- */

/* One latency point's spread from n copy timings (cycles):
 * {"median","min","max","runs"}. NULL if n is 0 or memory ran out. */
json_t *acp_latency_json(const uint32_t *cycles, size_t n);

/* One bandwidth point's figures from the blocks' start/end clocks
 * (t[2b], t[2b+1], nblocks of them), bytes each block moved
 * (block_bytes[b]) and the SM clock (MHz, > 0, or 0 when unknown):
 * {"bytes_per_clk_per_sm" (the median block's), "gb_s" (all bytes over the
 * slowest block's cycles; null without a clock), "slowest_cycles",
 * "blocks", "total_bytes"}; or {"error"} when a block's clocks do not
 * advance or its end is 0 (a wait gave up). */
json_t *acp_bandwidth_json(const uint64_t *t, const uint64_t *block_bytes, size_t nblocks,
                           double clock_mhz);

/* The summary over the points: for each level, per method its largest
 * bytes_per_clk_per_sm and the size where it was reached, and the ratio
 * of each method's best to plain loads' best: {"l2":{"ld":{"best":..,
 * "at_bytes":..,"vs_ld":..},...},"dram":{...}}. points is the document's
 * "bandwidth" array ([{"method","level","bytes","bytes_per_clk_per_sm"}...],
 * error points skipped). */
json_t *acp_bandwidth_summary(const json_t *points);

/* The latency medians by the bytes one copy moved, each method beside the
 * others that moved as many (a warp's plain loads of 16 B each against one
 * bulk copy of 512 B): {"512":{"ld":..,"ca":..,"cg":..,"bulk":..,
 * "tensor":..},...}, only sizes at least two methods share. points is the
 * document's "latency" array (error points skipped). */
json_t *acp_latency_by_bytes(const json_t *points);

/* The probe's document from its parts (all taken): the latency and
 * bandwidth point lists, the tensor map's state ("ok" or why not), the
 * machine-code checks, the buffers' sizes; the summary is made here: the
 * bandwidth summary plus "latency_by_bytes". What acp_probe returns, less
 * "wall_s". */
json_t *acp_document(json_t *latency, json_t *bandwidth, const char *tensor_map, json_t *sass,
                     size_t dram_bytes, size_t l2_bytes);

/* The probe on an open device; the memory probe's document member:
 * {"latency":[{"method","bytes","bytes_per_copy","level","cycles":{..}}
 *  | {"method","bytes","level","error"}], "bandwidth":[{"method","bytes",
 *  "level", ..acp_bandwidth_json..}], "summary", "tensor_map" ("ok" or why
 *  not), "chunk_bytes", "dram_buffer_bytes", "l2_buffer_bytes",
 *  "l2_passes", "sass":{"<method><size>_<lat|bw>":{..acp_sass_check..}},
 *  "wall_s"} or {"error","wall_s"} when nothing could be set up. */
struct gpu;
json_t *acp_probe(struct gpu *g, double clock_mhz);

#endif
