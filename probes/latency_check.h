/*
 * Before a latency probe reports a number, it reads its own machine code.
 * These take the cubin the JIT linker produced and say, as JSON, whether
 * the timed regions hold what the probe meant to time:
 *   {"verified": bool, "regions": [{"expected": n, "found": m, "size": k}...],
 *    "extra_per_step": {"MNEMONIC": count...}, "fixed_latency": bool|null,
 *    "compiler_stall": n|null, "listing": "..." (only when not verified),
 *    "error": "..." (only when the cubin could not be read)}
 * fixed_latency comes from the code itself: an instruction whose result the
 * hardware tracks has a write scoreboard; one that relies on the compiler's
 * stall count has none.
 */
#ifndef GPUPROBE_PROBES_LATENCY_CHECK_H
#define GPUPROBE_PROBES_LATENCY_CHECK_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "probes/latency.h"
#include "probes/gpu/sass.h"

/* 1 if mnemonic m is one of the '|'-separated alternatives ("HADD2|HFMA2"). */
int lat_is_timed(const char *m, const char *alts);
/* The regions between successive pairs of clock reads, in order; how many
 * (at most max). */
size_t lat_find_regions(const uint8_t *text, size_t size, struct sass_region *r, size_t max);

json_t *lat_check_latency(const struct lat_entry *e, const void *cubin, size_t size);
json_t *lat_check_throughput(const struct lat_entry *e, const void *cubin, size_t size);

#endif
