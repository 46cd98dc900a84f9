/*
 * A measured dealing order of blocks to SMs, and the placement it gives
 * (placement=dealt, docs/trace-sort.md, step 1b).
 *
 * DESIGN
 * The hardware's block scheduler deals a launch's blocks to SMs one at a
 * time, in an order of SMs of its own (on an H200: a TPC's two SMs after one
 * another, across the GPCs, one group of SMs coming round more often than
 * the rest; tests/gpu/results/2026-12-02-h200-placement/). The memory probe
 * records that order (probes/placement.h): the SM of each block of one
 * launch of one-warp blocks, as many as every SM holds at once. A kernel
 * that fits fewer blocks on an SM (bps) is dealt the same order with the
 * SMs already full skipped: on an H200 that rule gives the SM of every
 * block of a 264-block launch of 1024-thread blocks (two per SM) from the
 * order of a 1024-block launch of 64-thread blocks
 * (tests/unit/test_trace_deal.c, on those two measurements). The sorter's
 * placement is static, so every later wave is taken to be dealt as the
 * first (blocks finishing in the order they began).
 */
#ifndef GPUPROBE_TRACE_DEAL_H
#define GPUPROBE_TRACE_DEAL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "trace/params.h"

/* The measured order: sm[i] the SM block i of the probe's launch ran on. */
struct trace_deal {
    uint32_t n;
    uint16_t *sm;
};

/* Largest SM id an order may hold, plus one. */
#define TRACE_DEAL_MAX_SMS 4096u

/* 0 when the order deals to exactly SMs 0 .. sms-1 (each present, none
 * beyond), which a sort of sms SMs needs; -1 with why. */
int trace_deal_check(const struct trace_deal *d, uint32_t sms, char *why, size_t whylen);

/* The first wave for a kernel of bps blocks per SM on sms SMs: wave[i]
 * (sms * bps entries) the SM of the wave's block i. 0, or -1 with why:
 * the order names an SM not below sms, or leaves one out. */
int trace_deal_wave(const struct trace_deal *d, uint32_t sms, uint32_t bps, uint32_t *wave,
                    char *why, size_t whylen);

/* The first wave of a sort's placement: NULL in *wave for rr and fill
 * (trace_sched_block_sm needs none); for dealt, trace_deal_wave's table
 * for p->sms and p->blocks_per_sm (malloc'd), or -1 with why when p->deal
 * is missing or does not deal to exactly p->sms SMs. Not part of
 * trace_params_validate, which also checks a sorted file's header (a file
 * sorted with dealt does not carry the order). */
int trace_deal_placement(const struct trace_params *p, uint32_t **wave, char *why, size_t whylen);

/* Reads an order from a JSON list of SM ids (the memory result's
 * block_placement.order); 0, or -1 with why. trace_deal_free releases it. */
int trace_deal_from_json(const json_t *list, struct trace_deal *d, char *why, size_t whylen);
void trace_deal_free(struct trace_deal *d);

#endif
