/*
 * The set-index function of a cache level as users and the L1 probe give
 * it: "modulo", "xor", or "mask:M0,M1,..." — address-bit masks, set-index
 * bit j the parity of the address ANDed with Mj ("mask:none": one set).
 *
 * DESIGN
 * The function itself is computed in one place, cache_set_of
 * (cache/geometry.h); this file turns the text into it and back. Masks are
 * written as the memory probe's L1 set search reports them (probes/
 * l1_sets.h: "set_index.option"), on byte addresses, and kept in the
 * geometry on line numbers, so a mask may not name a bit inside the line.
 * A masks function fixes the number of sets (2^count); applying it keeps
 * the level's size and line and makes the ways size / (sets x line), so
 * "--l1 224K,448,128,32 --set-index mask:0x80,0x100" is a 4-set,
 * 448-way L1 whose set is address bits 7 and 8.
 */
#ifndef GPUPROBE_CACHE_SETINDEX_H
#define GPUPROBE_CACHE_SETINDEX_H

#include <stddef.h>
#include <stdint.h>

#include "cache/geometry.h"

struct cache_set_spec {
    enum cache_set_index index;
    uint64_t masks[CACHE_MAX_INDEX_MASKS];   /* address-bit masks, CACHE_SET_MASKS only */
    uint32_t nmasks;
};

/* Parses "modulo", "xor" or "mask:..." (each mask hex after 0x, else
 * decimal; non-zero, distinct; at most CACHE_MAX_INDEX_MASKS). 0, or -1
 * with msg. */
int cache_set_spec_parse(const char *text, struct cache_set_spec *s, char *msg, size_t msglen);

/* Gives the checked geometry g the function s: modulo and xor as they
 * are; masks shifted to line numbers, with the sets and ways they imply
 * (above). 0, or -1 with msg and g unchanged: a mask with bits inside the
 * line, a size that is not a whole number of ways of 2^count sets. */
int cache_geom_set_index(struct cache_geom *g, const struct cache_set_spec *s, char *msg,
                         size_t msglen);

/* g's function as the text cache_set_spec_parse reads ("mask:0x80,0x100"
 * on byte addresses); returns buf. */
const char *cache_set_index_text(const struct cache_geom *g, char *buf, size_t len);

#endif
