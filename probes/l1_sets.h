/*
 * The L1 data cache's set mapping: line size, sets, ways and the function
 * from address bits to set, found by timing pointer chases. Part of the
 * memory probe ("l1_sets" in its document, memory_run.c).
 *
 * DESIGN
 * The experiment is plain C over one operation, "chase this list of
 * addresses with ld.global.ca (or .cg) and say how many cycles a load took"
 * (struct l1s_ops), so the whole search, every decision it takes and the
 * document it writes, runs on a simulated cache in the unit tests
 * (tests/unit/test_l1_sets.c) exactly as on the GPU (l1_sets_run.c, which
 * times the memory probe's own chase kernels). The steps, the method of the
 * microbenchmarking papers on Fermi to Volta (Mei & Chu; Jia et al.):
 *   reference  L1 hits (a few lines, ca) and L2 hits (the same lines, cg):
 *              every later timing is read as a fraction of the way from
 *              one to the other;
 *   fill       a walk over fresh memory at strides 8..256 bytes: the
 *              fraction of loads that miss is stride / fill unit, so the
 *              fill unit (the sector) is the first stride where every load
 *              misses;
 *   strides    for every power-of-two stride S from 32 bytes to 512 KiB,
 *              the most lines K spaced S apart that a repeated chase still
 *              finds in the L1 ("lines that fit"). Lines spaced by a
 *              multiple of the set span land in one set, so the count
 *              falls to the associativity and stays there: the smallest
 *              stride on that floor is the collision stride S*, the floor
 *              the ways A;
 *   controls   the first A lines at S* (must hit) and the first A + 1
 *              (must miss): the two ends every bit test is read between;
 *   bits       for each address bit b, with E the A lines at S* after line
 *              0: chase E + {2^b} ("same set": misses iff flipping b keeps
 *              the set) and {0, 2^b} + E less one ("same line": misses iff
 *              2^b is another line in the same set). Same set and not
 *              another line: an offset bit (below the line size); same set,
 *              another line: a tag bit; neither: an index bit;
 *   index      the index bits' images, assuming a linear (XOR) function:
 *              each index bit is tested against every XOR of the index bits
 *              kept so far; a combination that stays in the set is a
 *              relation, none makes the bit a new set-index bit. The sets
 *              are 2^(bits kept), each set-index bit an address-bit mask;
 *   confirm    random addresses, half predicted to collide with line 0 and
 *              half not, timed against the prediction;
 * and the checks: sets x ways x line against the lines that fit at a
 * stride of one line, and, for a modulo mapping, S* = sets x line. Any
 * step that cannot decide (no floor, controls too close, a bit whose
 * timing lies between the controls, a wrong prediction, a failed check)
 * makes the verdict "not determined" with that reason; the timings stay in
 * the document either way. Address bits are virtual-address bits of one
 * allocation, 3 to L1S_TOP_BIT: the probe's lists live in 2^L1S_REGION_BITS
 * bytes aligned to their size.
 */
#ifndef GPUPROBE_PROBES_L1_SETS_H
#define GPUPROBE_PROBES_L1_SETS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define L1S_REGION_BITS 28      /* the lists' addresses: offsets below 2^28 */
#define L1S_TOP_BIT (L1S_REGION_BITS - 1)
#define L1S_LOW_BIT 3           /* the lowest bit a list can flip (8-byte pointers) */
#define L1S_MAX_LIST 32800      /* the longest list: the fill walk (l1_sets_search.c) */
#define L1S_MAX_RUNS 10         /* most timed chases behind one figure */
#define L1S_MAX_INDEX_BITS 10   /* most set-index bits the search follows (1024 sets) */
#define L1S_CARVEOUT_PERCENT 0  /* shared-memory carve-out asked for: the largest L1 */

/* The one thing the search needs from a GPU: chase offs[0..n) (byte
 * offsets into the region, each a multiple of 8, all distinct, below
 * 2^L1S_REGION_BITS) from offs[0], each element pointing to the next and
 * the last to the first, with ld.global.ca (cached 1) or ld.global.cg
 * (cached 0), in a fresh kernel: mem_chase_steps(n) loads warm the L1, the
 * next as many are timed. *cycles gets the timed loads' mean. 0, or -1
 * with the reason in err (the search then stops and reports it). */
struct l1s_ops {
    int (*chase)(void *ctx, const uint64_t *offs, size_t n, int cached, double *cycles, char *err,
                 size_t errlen);
    void *ctx;
};

/* Runs the whole search through ops, each reported figure the median of
 * `repeats` chases (clamped to 1..L1S_MAX_RUNS / 2: a timing between the
 * two ends is measured again with twice as many). Returns the "l1_sets"
 * document:
 *   {"status":"determined"|"not determined","reason":null|"...",
 *    "line_bytes","fill_bytes","sets","ways","capacity_bytes",
 *    "collision_stride_bytes" (each null when not found),
 *    "set_index":null|{"function":"modulo"|"xor","masks":[address-bit mask
 *      of set-index bit 0, ...],"bits":[[address bits of mask 0], ...],
 *      "option":"mask:0x80,0x100" (gpuprobe trace cache --set-index),
 *      "text":"..."},
 *    "reference":{"hit_cycles":FIG,"miss_cycles":FIG},
 *    "fill":[{"stride_bytes","cycles":FIG,"miss_fraction"}...],
 *    "strides":[{"stride_bytes","lines_fit","censored","probes"}...],
 *    "controls":{"lines","hit_cycles":FIG,"miss_cycles":FIG},
 *    "bits":[{"bit","role":"offset"|"index"|"tag"|"ambiguous"|"untested",
 *             "same_set":TEST?,"same_line":TEST?,"note"?}...],
 *    "relations":[{"bit","equals":[bits]}...],
 *    "confirmation":{"tested","agree","ambiguous","disagree":[..]},
 *    "checks":[{"name","ok","detail"}...],"chases"}
 * where FIG is {"median","min","max","runs"} (cycles per load) and TEST is
 * {"cycles":FIG,"fraction"} (0: like the hit control, 1: like the miss
 * control). NULL when memory ran out; a chase that failed gives
 * {"error":"why","chases"}. */
json_t *l1s_search(const struct l1s_ops *ops, int repeats);

/* The masks of a determined document's set_index as numbers, for the
 * cache model: *n of them in masks[0..max). 0, or -1 with the reason when
 * doc is not a determined result (an error, not determined, malformed). */
int l1s_masks_from_json(const json_t *doc, uint64_t *masks, size_t max, size_t *n,
                        uint32_t *line_bytes, char *err, size_t errlen);

/* The module of the "link" kernel (l1_sets_ptx.c) for compute capability
 * major.minor: link(u64 base, u64 offs, u32 n) writes, for each i < n, at
 * base + offs[i] the global address base + offs[(i + 1) % n]. Malloc'd
 * text, NULL when memory ran out. */
char *l1s_link_ptx(int cc_major, int cc_minor);

struct gpu;
/* The search on an open device: its own copies of the memory probe's
 * chase kernels (machine code checked, carve-out L1S_CARVEOUT_PERCENT),
 * a linking kernel and a 2^(L1S_REGION_BITS + 1)-byte allocation, all
 * released before it returns. The document above plus "carveout_percent",
 * "sass" and "wall_s"; {"error":"why"} when it could not run. */
json_t *l1s_probe(struct gpu *g, int repeats);

#endif
