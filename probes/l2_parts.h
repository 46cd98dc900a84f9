/*
 * The L2's partitions: which SMs share one, which lines each is home to, and
 * what a line costs from the near and from the far one. Part of the memory
 * probe ("l2_partitions" in its document, memory_run.c).
 *
 * DESIGN
 * Hopper's L2 is two partitions joined by a fabric; the memory probe's
 * latency curve shows it only as a step inside the L2's capacity. This
 * probe times single loads instead. One thread on one chosen SM reads
 * L2P_LINES lines with ld.global.cg, each load alone between two clock
 * reads and its value used before the second one (the next address adds
 * it: the buffer holds zeros, so loads never overlap). For every SM s, in
 * turn: the L2 is emptied (2 x its size of other data read through it),
 * the warmer SM W reads the lines twice (first: from memory; second: L2
 * hits in W's partition), then s reads them twice. A line lives where W's
 * read put it: in its home partition, plus a copy in W's partition if that
 * is not its home. So s's first read finds every line near when s shares
 * W's partition; when it does not, the lines homed in W's partition are far
 * (they are only there) and the others near: the SMs fall into two groups
 * and the lines into two homes, from one kind of timing. s's second read
 * says whether s's partition kept a copy of what it fetched from the far
 * one. W's own first read says what a miss costs by home (a miss homed
 * away from W crosses the fabric before memory).
 * The lines: L2P_CONSECUTIVE consecutive ones (the granule of the homes),
 * then lines 4 KiB apart spanning several 2 MiB pages. Homes are a function
 * of physical addresses; below the page size (2 MiB for these allocations)
 * those are the virtual address's bits, so the fit of the home function
 * (each home bit a parity of address bits, as for the L1's sets) is over
 * bits 7..20 with one unknown constant per page.
 * The analysis (l2p_analyze) is plain C over the timings, tested with timings
 * captured on an H100 (tests/unit/test_l2_parts.c); the timing is
 * l2_parts_run.c, the kernel l2_parts_ptx.c.
 * Verdicts: "two partitions" when every SM is near to all lines or far
 * from a part of them near one half, the two groups are both present and
 * the lines split cleanly; "one partition" when no SM finds any line far;
 * else "not determined" with the reason. Timings stay in summary form in
 * the document either way.
 */
#ifndef GPUPROBE_PROBES_L2_PARTS_H
#define GPUPROBE_PROBES_L2_PARTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define L2P_LINES 2048           /* lines timed per SM */
#define L2P_CONSECUTIVE 512      /* the first lines are consecutive (64 KiB) */
#define L2P_SPREAD 4096          /* then this many bytes apart */
#define L2P_PAGE_BITS 21         /* 2 MiB pages: address bits below are physical */
#define L2P_REGION ((size_t)8 << 20)
#define L2P_PASSES 4             /* per SM: W first, W second, s first, s second */

struct gpu;

/* Byte offset of line j (0 <= j < L2P_LINES) from the region's base. */
uint64_t l2p_line_offset(unsigned j);

/* The PTX of the timed kernel "l2p_time" (malloc'd; NULL out of memory):
 * (u64 out, u64 base, u64 claim, u32 target, u32 n). Blocks not on SM
 * `target` leave; the first there claims the work (atomic on *claim) and
 * its thread 0 reads lines 0..n-1 at base + l2p_line_offset(j) twice, the
 * cycles of each load into out[pass * n + j] (u32), its %smid into
 * out[2n]. */
char *l2p_ptx(int cc_major, int cc_minor);

/* What the analysis reads: for each SM s (nsm of them), four passes of n
 * load times t[(s * 4 + pass) * n + j] (pass 0, 1: the warmer's first and
 * second read before s; 2, 3: s's first and second read), measured[s]
 * whether s ran; addr[j] the virtual address of line j. */
struct l2p_input {
    int nsm, n;
    unsigned warmer;
    const uint64_t *addr;
    const uint32_t *t;
    const unsigned char *measured;
};

/* The verdict and figures (see DESIGN): {"verdict", "reason"?, "warmer_sm",
 * "lines", "sm_partition" [per SM: 0 the warmer's, 1 the other, null not
 * measured], "sms_per_partition", "threshold_cycles", "cycles" {"near",
 * "far", "far_second_read", "memory_home_near", "memory_home_far"},
 * "far_fraction", "ambiguous_lines", "copies_kept", "home" {"granule_bytes",
 * "mask_bits" (null when no parity of bits 7..20 fits), "page_bits"}}. */
json_t *l2p_analyze(const struct l2p_input *in);

/* The probe on an open device; the memory probe's document member. */
json_t *l2p_probe(struct gpu *g);

#endif
