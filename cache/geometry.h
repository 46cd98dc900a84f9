/*
 * Cache geometry: size, associativity, line and sector size and the
 * set-index function of one cache level, as the cache model (cache/) uses
 * it; the presets of the architectures gpuprobe knows.
 *
 * DESIGN
 * A geometry is given as the four numbers users write ("SIZE,ASSOC,LINE,
 * SECTOR", SIZE with an optional K/KiB/M/MiB suffix, ASSOC "full" or 0 for
 * a fully associative cache) plus the set-index function; cache_geom_check
 * derives the counts every engine needs (lines, sets, sectors per line) and
 * refuses what the engines cannot model, with one message. Lines are
 * addressed by line number (address / line); the set of a line is
 * cache_set_of's, the one place the set-index functions live:
 *   modulo: line % sets;
 *   xor:    (line ^ line >> b ^ line >> 2b) % sets, b = ceil(log2(sets)) —
 *           the upper address bits folded into the index, the classic
 *           conflict-avoiding hash (a bijection of each 2^b-line block when
 *           sets is a power of two);
 *   masks:  set bit j = parity(line & masks[j]), 2^nmasks sets — any XOR of
 *           address bits, such as the mapping the memory probe's L1 set
 *           search found on a device (cache/setindex.h parses and applies
 *           it; probes/l1_sets.h finds it).
 * Presets: docs/cache-model.md, "Geometry", gives each number's source.
 */
#ifndef GPUPROBE_CACHE_GEOMETRY_H
#define GPUPROBE_CACHE_GEOMETRY_H

#include <stddef.h>
#include <stdint.h>

#include "trace/params.h"

enum cache_set_index { CACHE_SET_MODULO = 0, CACHE_SET_XOR = 1, CACHE_SET_MASKS = 2 };

/* The most set-index bits a masks function has (65536 sets). */
#define CACHE_MAX_INDEX_MASKS 16

/* What a level does with a store (docs/cache-model.md, "Stores"). */
enum cache_write {
    /* write-back, write-allocate: a store is looked up, hits, misses and
     * fills exactly as a load does (the L2) */
    CACHE_WRITE_BACK_ALLOCATE = 0,
    /* write-through, no write-allocate: a store is looked up and goes
     * below whatever it finds; it never fills, and it discards the line if
     * resident (Hopper's L1 for global stores) */
    CACHE_WRITE_THROUGH_NO_ALLOCATE = 1,
};

/* Limits of what the engines model: slot numbers are 32-bit, a line's
 * sectors are one 32-bit mask. */
#define CACHE_MAX_LINES (1u << 26)
#define CACHE_MAX_SECTORS 32u

struct cache_geom {
    uint64_t size;                 /* bytes */
    uint32_t assoc;                /* ways; 0 before check: fully associative */
    uint32_t line;                 /* bytes, a power of two */
    uint32_t sector;               /* bytes, a power of two dividing line */
    enum cache_set_index index;
    enum cache_write write;        /* the level's write policy */
    /* derived by cache_geom_check: */
    uint32_t lines, sets, sectors_per_line;
    uint32_t set_bits;             /* ceil(log2(sets)), for xor */
    uint32_t line_shift, sector_shift;
    /* CACHE_SET_MASKS: line-number masks, one per set-index bit (the
     * address masks shifted right by line_shift); sets = 2^nmasks. */
    uint64_t masks[CACHE_MAX_INDEX_MASKS];
    uint32_t nmasks;
};

/* Parses "SIZE,ASSOC,LINE,SECTOR" into g (index and write left as they
 * were) and checks it. 0, or -1 with msg. */
int cache_geom_parse(const char *text, struct cache_geom *g, char *msg, size_t msglen);

/* Checks g and fills its derived fields (assoc 0 becomes lines). 0, or -1
 * with msg: sizes not powers of two, a size that is not a whole number of
 * sets, more than CACHE_MAX_LINES lines or CACHE_MAX_SECTORS sectors, a
 * masks function whose 2^nmasks is not the sets. */
int cache_geom_check(struct cache_geom *g, char *msg, size_t msglen);

/* "modulo", "xor", "masks"; cache_set_index_parse gives -1 for another
 * name (it knows modulo and xor; the masks form is cache/setindex.h's). */
const char *cache_set_index_name(enum cache_set_index i);
int cache_set_index_parse(const char *name);
/* "back-allocate", "through-no-allocate". */
const char *cache_write_name(enum cache_write w);

/* The set of line number `line` (g checked). */
static inline uint32_t cache_set_of(const struct cache_geom *g, uint64_t line)
{
    if (g->sets == 1)
        return 0;
    if (g->index == CACHE_SET_MASKS) {
        uint32_t set = 0;
        for (uint32_t j = 0; j < g->nmasks; j++)
            set |= (uint32_t)__builtin_parityll(line & g->masks[j]) << j;
        return set;
    }
    if (g->index == CACHE_SET_XOR) {
        uint32_t b = g->set_bits;
        line ^= (line >> b) ^ (line >> (2 * b));
    }
    if ((g->sets & (g->sets - 1)) == 0)
        return (uint32_t)(line & (g->sets - 1));
    return (uint32_t)(line % g->sets);
}

/* The sectors of g's line `addr / line` that a request [addr, addr+width)
 * touches, as a mask (bit i: sector i of the line). The sorter's merged
 * request keeps one thread's address and a power-of-two width covering the
 * merged bytes (docs/trace-sort.md), so the bytes taken are the
 * width-aligned block holding addr, clipped to the line. */
static inline uint32_t cache_sectors_of(const struct cache_geom *g, uint64_t addr, uint32_t width)
{
    uint64_t w = width ? width : 1;
    uint64_t first = addr & ~(w - 1), last = first + w - 1;
    uint64_t base = addr & ~((uint64_t)g->line - 1);
    if (first < base)
        first = base;
    if (last > base + g->line - 1)
        last = base + g->line - 1;
    uint32_t s0 = (uint32_t)((first - base) >> g->sector_shift);
    uint32_t s1 = (uint32_t)((last - base) >> g->sector_shift);
    uint32_t n = s1 - s0 + 1;
    return (n >= 32 ? 0xffffffffu : ((1u << n) - 1)) << s0;
}

/* Resizes g to hold at most `bytes`, keeping its sets: whole ways of lines.
 * 0, or -1 with msg when not one way fits or the result does not check. */
int cache_geom_resize(struct cache_geom *g, uint64_t bytes, char *msg, size_t msglen);

/* Fills the L1 and L2 geometry of an architecture ("hopper", "fermi"),
 * write policies included (both: a write-through L1 that does not
 * allocate on stores, a write-back L2 that does); -1 with msg for another
 * name. */
int cache_arch_geometry(const char *arch, struct cache_geom *l1, struct cache_geom *l2, char *msg,
                        size_t msglen);

/* How many requests may merge into one fetch in flight in an
 * architecture's L1 (the model applies the figure to the L2 too):
 * hopper 64, measured (an H200's L1 made one fetch of 64 warps' loads of
 * one sector, every warp an SM holds; more, from several loads of a warp
 * in flight, were not tried: tests/gpu/results/2026-12-02-h200-merge-exp64/);
 * fermi and any other name 8, GPGPU-Sim's and Accel-Sim's limit.
 * docs/cache-model.md, "Geometry". */
uint32_t cache_arch_merge(const char *arch);

/* The names cache_arch_geometry knows, NULL-terminated. */
extern const char *const cache_arch_names[];

/* Whether a sorted trace's parameters (its binary header's: the sort's)
 * are those of the machine whose geometry arch is: the SM count (the SMs
 * the L2 is shared by) of trace sort's preset of the same name
 * (trace/params.h), and the line the sorter coalesced by, which must be
 * l1's line too. 0 when they are; -1 with msg saying what differs ("sorted
 * for 15 SMs, 128-byte lines (trace sort's fermi preset); the hopper
 * geometry is for 132 SMs, 128-byte lines"). sorted_as (len bytes) names
 * the preset the sort's parameters are, SMs, line, coalescing, MSHRs and
 * latency alike, or is "" when none is. */
int cache_arch_fits_sort(const char *arch, const struct cache_geom *l1,
                         const struct trace_params *sort, char *sorted_as, size_t len, char *msg,
                         size_t msglen);

#endif
