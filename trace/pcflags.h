/*
 * The per-PC dependency flag table, and the u64 -> u64 hash map that it and
 * the text trace readers keep their state in.
 *
 * DESIGN
 * A dependency flag is a property of a PC (docs/trace-formats.md): the user
 * may give it as a table of "pc,dep" lines, which then wins over whatever a
 * reader derives or defaults. The table is an open-addressing hash map (linear
 * probing, power-of-two capacity, at most half full) from the PC to
 * (line << 1 | dep), so a conflict can name the line that set the flag first.
 * The map has an entry limit: memory is bounded by the number of distinct keys
 * (PCs, or warps for the readers' per-warp state), and an input that would
 * exceed the limit is refused rather than allowed to grow without bound.
 * The table's text is read with scan.h like every text trace format. The
 * number scanners lived here before scan.h did; this header still includes
 * it, so code that took them from here builds unchanged.
 */
#ifndef GPUPROBE_TRACE_PCFLAGS_H
#define GPUPROBE_TRACE_PCFLAGS_H

#include <stddef.h>
#include <stdint.h>

#include "trace/record.h"
#include "trace/scan.h"

/* ---- u64 -> u64 hash map ----------------------------------------------- */

/* Fields are private; zero-initialise or call trace_map_init. */
struct trace_map {
    uint64_t *keys;
    uint64_t *vals;
    uint8_t *used;
    size_t cap;   /* slots, a power of two (0 until the first put) */
    size_t count; /* keys held */
    size_t limit; /* most keys allowed; 0: no limit */
};

/* An empty map holding at most limit keys (0: no limit). Allocates nothing. */
void trace_map_init(struct trace_map *m, size_t limit);
void trace_map_free(struct trace_map *m);
/* 1 and *val set if key is present, else 0. */
int trace_map_get(const struct trace_map *m, uint64_t key, uint64_t *val);
/* Inserts or replaces. 0: done; 1: the key is new and the map holds `limit`
 * keys already (nothing changed); TRACE_ENOMEM: out of memory (nothing changed). */
int trace_map_put(struct trace_map *m, uint64_t key, uint64_t val);

/* ---- per-PC dependency flags ------------------------------------------- */

#define TRACE_PCFLAGS_MAX_DEFAULT ((size_t)1 << 20) /* distinct PCs */

struct trace_pcflags {
    struct trace_map map; /* pc -> line << 1 | dep */
};

/* An empty table of at most max_pcs PCs (0: TRACE_PCFLAGS_MAX_DEFAULT). */
void trace_pcflags_init(struct trace_pcflags *t, size_t max_pcs);
void trace_pcflags_free(struct trace_pcflags *t);

/* Sets pc's flag, remembering the line that set it. 0: done (also when pc
 * already holds the same flag); 1: pc holds the other flag (nothing changed;
 * *first_line, if not NULL, is the line that set it); 2: the table is full;
 * TRACE_ENOMEM. */
int trace_pcflags_set(struct trace_pcflags *t, uint64_t pc, uint32_t dep, uint64_t line,
                      uint64_t *first_line);
/* Replaces pc's flag unconditionally (same results, never 1). */
int trace_pcflags_force(struct trace_pcflags *t, uint64_t pc, uint32_t dep, uint64_t line);
/* 1 and *dep (and *line if not NULL) set when pc is in the table, else 0.
 * t may be NULL (an empty table). */
int trace_pcflags_get(const struct trace_pcflags *t, uint64_t pc, uint32_t *dep, uint64_t *line);
size_t trace_pcflags_count(const struct trace_pcflags *t);

/* Reads a table from buf: optional first record "pc,dep" (the header), then
 * one "pc,dep" per line (pc decimal or 0x-hex, dep 0 or 1); blank lines and
 * lines starting with '#' are skipped; LF or CRLF. A PC given twice with
 * the same flag is accepted, with different flags refused. Entries are added
 * to t as they are read, so on error t holds a prefix: free it.
 * Returns 0, TRACE_EINPUT or TRACE_ENOMEM (err filled). */
int trace_pcflags_parse(struct trace_pcflags *t, const char *buf, size_t len,
                        struct trace_err *err);

#endif
