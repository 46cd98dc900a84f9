/*
 * Block placement: the order in which the block scheduler deals a launch's
 * blocks to SMs. Part of the memory probe ("block_placement" in its
 * document, memory_run.c): it says which blocks share an SM, and so an L1,
 * which the cache model needs (trace sort --device: placement dealt,
 * trace/deal.h).
 *
 * DESIGN
 * One launch of one-warp blocks, as many as every SM holds at once
 * (sm_count x min(max_blocks_per_sm, max_warps_per_sm)); thread 0 of each
 * block writes its %smid and %globaltimer, spins PL_SPIN_NS, and writes the
 * timer again. The order is kept only when the launch was one wave: every
 * block began before any block ended, so no block was placed on a slot
 * another freed; if not, the spin is made 4x longer, up to PL_TRIES times.
 * The launch runs PL_LAUNCHES times after an untimed one; the order kept
 * is the first's, and the document says how many were the same block for
 * block (the scheduler's state between launches is its own; on an H200 a
 * launch after a larger one began elsewhere in the same order).
 * Then a check of the dealing rule (trace/deal.h) on a launch it did not
 * see: 1024-thread blocks, as many as every SM holds at once, whose SMs the
 * order predicts with full SMs skipped; the document gives the blocks
 * predicted right. The analysis (pl_analyze) is plain C over the records,
 * tested in tests/unit/test_placement.c; the launches are placement_run.c,
 * the kernel placement_ptx.c.
 * Verdicts: "determined" when a launch was one wave, every SM of the device
 * ran blocks and each the same number; else "not determined" with the
 * reason.
 */
#ifndef GPUPROBE_PROBES_PLACEMENT_H
#define GPUPROBE_PROBES_PLACEMENT_H

#include <jansson.h>
#include <stdint.h>

#define PL_SPIN_NS 200000ull     /* first spin of a block: 200 us */
#define PL_TRIES 3               /* spins tried: PL_SPIN_NS x 1, 4, 16 */
#define PL_LAUNCHES 3            /* timed launches of the order */
#define PL_CHECK_THREADS 1024u   /* block size of the check launch */
#define PL_REC 3                 /* u64 per block: smid, start, end (ns) */

struct gpu;

/* The PTX of kernel "pl_place" (malloc'd; NULL out of memory): (u64 out,
 * u64 spin_ns); thread 0 of block b writes out[3b] = %smid, out[3b + 1] =
 * %globaltimer at its start, out[3b + 2] at its end, spin_ns later. */
char *pl_ptx(int cc_major, int cc_minor);

/* What the analysis reads: launches records of blocks blocks each
 * (rec[(l * blocks + b) * PL_REC + k]), of threads-thread blocks, on a
 * device of sms SMs; check: one launch of check_blocks blocks of
 * check_threads threads (NULL when it did not run), check_per_sm blocks
 * per SM. */
struct pl_input {
    uint32_t sms, threads, blocks, launches;
    const uint64_t *rec;
    uint64_t spin_ns;
    uint32_t check_threads, check_blocks, check_per_sm;
    const uint64_t *check;
};

/* 1 when every block of a launch of blocks records (rec: PL_REC u64 a
 * block) began before any ended; the span of their starts into *deal_ns. */
int pl_one_wave(const uint64_t *rec, uint32_t blocks, uint64_t *deal_ns);

/* {"status", "reason"?, "threads_per_block", "blocks", "blocks_per_sm",
 * "sms", "spin_ns", "launches", "same_as_first" (the launches, the first
 * included, that put every block where the first did), "one_wave", "deal_ns" (the
 * first launch's last start after its first), "order" [SM of block b],
 * "check"? {"threads_per_block", "blocks", "blocks_per_sm", "one_wave",
 * "predicted", "order"}}. NULL out of memory. */
json_t *pl_analyze(const struct pl_input *in);

/* The probe on an open device; the memory probe's document member. */
json_t *pl_probe(struct gpu *g);

#endif
