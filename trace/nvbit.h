/*
 * Reader of NVBit mem_trace output, plus what it shares with the Accel-Sim
 * reader: the SASS opcode facts (memory space, load/store, width) and the
 * choice and check of the grid and block dims the thread ids are built from.
 *
 * DESIGN
 * mem_trace prints one "MEMTRACE: CTX ... - grid_launch_id N - CTA x,y,z -
 * warp w - OPCODE - a0 ... a31" line per warp memory instruction, 0 for
 * inactive lanes, and a "MEMTRACE: CTX ... - LAUNCH - ... grid size ... -
 * block size ..." line per kernel launch. The reader walks a memory buffer
 * line by line: other lines (banners, the application's own output, the
 * tool's diagnostics) are skipped; a line that claims to be a MEMTRACE record
 * and does not parse is an error naming its line and byte offset. Each active
 * lane becomes one trace_rec, handed to the sink at once; no records are kept.
 *
 * What the text does not hold is derived (docs/trace-formats.md):
 *   tid   = cta_linear * threads_per_block + warp_in_cta * 32 + lane, with
 *           cta_linear = x + gx * (y + gy * z) and the dims from the LAUNCH
 *           line or the caller;
 *   width = from the opcode's suffix (trace_sass_classify);
 *   pc    = a "pc N" field if the line has one, else synthetic: 16 * the
 *           opcode's rank of first appearance (default), or 16 * the number
 *           of memory instructions the warp executed before this one;
 *   store = 1 for stores, atomics and reductions (trace_op_writes), from the
 *           line's own opcode;
 *   dep   = the per-PC table, else load_dep for loads and value-returning
 *           atomics and 0 for stores and reductions; a PC keeps the first
 *           flag it gets (synthetic "occurrence" PCs can meet several
 *           opcodes), and a PC given in the text must be one kind of access.
 * Memory is bounded by the number of distinct opcodes and PCs, plus, only for
 * the "slot" warp policy or "occurrence" PCs, one map entry per warp.
 */
#ifndef GPUPROBE_TRACE_NVBIT_H
#define GPUPROBE_TRACE_NVBIT_H

#include <stddef.h>
#include <stdint.h>

#include "trace/pcflags.h"
#include "trace/record.h"
#include "trace/scan.h"

/* ---- SASS opcode facts (shared with accelsim.c) ------------------------ */

/* Memory spaces whose instructions become records (bit set). */
#define TRACE_SPACE_GLOBAL 1u /* LDG STG, generic LD ST */
#define TRACE_SPACE_ATOMIC 2u /* ATOM ATOMG RED REDG */
#define TRACE_SPACE_SHARED 4u /* LDS LDSM STS ATOMS */
#define TRACE_SPACE_LOCAL 8u  /* LDL STL */

enum trace_op_kind {
    TRACE_OP_NONE = 0, /* not a data access these readers know (TEX, LDGSTS, LDC ...) */
    TRACE_OP_LOAD,
    TRACE_OP_STORE,
    TRACE_OP_ATOMIC, /* read-modify-write that returns the old value */
    TRACE_OP_REDUCE, /* read-modify-write that returns nothing */
};

/* trace_rec.store of an access of kind k: 1 for stores, atomics and
 * reductions (each writes memory, and the caches treat all three as
 * writes: docs/cache-model.md), 0 for loads. */
static inline uint8_t trace_op_writes(enum trace_op_kind k)
{
    return k == TRACE_OP_STORE || k == TRACE_OP_ATOMIC || k == TRACE_OP_REDUCE;
}

struct trace_sass_op {
    unsigned space; /* one TRACE_SPACE_* bit; 0 with TRACE_OP_NONE */
    enum trace_op_kind kind;
    uint32_t width; /* bytes; 0 when a size suffix names no valid width */
};

/* Classifies the opcode text op[0..len), e.g. "LDG.E.64" -> global load of 8
 * bytes. Width: the first '.'-separated suffix that is a bit count (8, 16,
 * 32, 64, 128), optionally after one of U S F B (U16, F64); none: 4 bytes. */
void trace_sass_classify(const char *op, size_t len, struct trace_sass_op *out);
/* A PC is one static instruction, so all its executions are the same kind
 * of access (and so get the same default flag). Remembers pc's kind and the
 * line that set it in m (values: line << 3 | kind). 0: consistent; 1: pc
 * was another kind (*first_line set); 2: m is full; TRACE_ENOMEM. */
int trace_pc_kind_check(struct trace_map *m, uint64_t pc, enum trace_op_kind kind, uint64_t line,
                        uint64_t *first_line);
/* 1 if op[0..len) is non-empty and only letters, digits, '.' and '_'. */
int trace_sass_is_opcode(const char *op, size_t len);

/* ---- things both readers take and give ------------------------------- */

struct trace_dim3 {
    uint32_t x, y, z;
};

/* Optional counters a reader fills (all zeroed at its start). */
struct trace_read_stats {
    uint64_t lines;                /* lines read */
    uint64_t instructions;         /* warp memory instructions seen */
    uint64_t skipped;              /* of those, not turned into records (space, launch, opcode) */
    uint64_t records;              /* records handed to the sink */
    struct trace_dim3 grid, block; /* the dims the tids were built from (zeros: none) */
    uint64_t threads_per_block;    /* of those dims: what the sorter's parameters need */
};

/* The geometry a reader builds thread ids from. */
struct trace_geom {
    struct trace_dim3 grid, block;
    uint64_t threads; /* per block */
    uint64_t warps;   /* per block */
};

/* Fixes g's dims: the ones the trace states (traced's grid and block; NULL
 * when it states none), which must equal the caller's if the caller gave
 * any, else the caller's (given's grid and block; zeros: none given). Then
 * checks them (no dim 0, grid x block below 2^64 threads), derives threads
 * and warps per block and copies the dims into st. Errors are reported on
 * t's current line at `at`, the trace's dims called `whose` (e.g. "the
 * header's"). 0; 1 when neither gave dims (nothing reported: the reader
 * names what it missed); TRACE_EINPUT. */
int trace_geom_resolve(struct trace_geom *g, const struct trace_geom *traced,
                       const struct trace_geom *given, const char *whose,
                       const struct trace_text *t, const char *at, struct trace_read_stats *st);

/* Called once per synthetic PC, when it is first given to an opcode. */
typedef void (*trace_opcode_pc_fn)(void *ctx, const char *opcode, size_t len, uint64_t pc);

/* ---- NVBit mem_trace reader ------------------------------------------ */

enum trace_nvbit_warp {
    TRACE_NVBIT_WARP_IN_CTA = 0, /* "warp w" is the warp's index in its CTA */
    TRACE_NVBIT_WARP_SLOT,       /* "warp w" is the hardware slot (%warpid): rank slots per CTA */
};

enum trace_nvbit_pc {
    TRACE_NVBIT_PC_OPCODE = 0, /* synthetic PC per opcode text */
    TRACE_NVBIT_PC_OCCURRENCE, /* synthetic PC per position in the warp's instruction stream */
};

struct trace_nvbit_opts {
    struct trace_dim3 grid, block; /* zeros: only the LAUNCH line gives them */
    int64_t launch;                /* grid_launch_id to read; -1: the trace must hold one */
    enum trace_nvbit_warp warp;
    enum trace_nvbit_pc pc;
    unsigned spaces;                   /* TRACE_SPACE_* bits to keep; 0: TRACE_SPACE_GLOBAL */
    uint32_t load_dep;                 /* flag of loads and atomics the table does not name */
    const struct trace_pcflags *flags; /* per-PC flags; may be NULL */
    size_t max_warps;                  /* warp map limit; 0: 1 << 22 */
    struct trace_read_stats *stats;    /* may be NULL */
    trace_opcode_pc_fn opcode_pc;      /* may be NULL */
    void *opcode_pc_ctx;
};

/* Defaults: no dims, launch -1, WARP_IN_CTA, PC_OPCODE, global only,
 * load_dep 1, no table. */
void trace_nvbit_opts_init(struct trace_nvbit_opts *o);

/* Reads mem_trace text from buf[0..len) and hands one record per active lane
 * to sink, in line order and lane order. o may be NULL (defaults).
 * Returns 0, TRACE_EINPUT / TRACE_ENOMEM with err filled, or the sink's value. */
int trace_nvbit_read(const char *buf, size_t len, const struct trace_nvbit_opts *o, trace_sink sink,
                     void *ctx, struct trace_err *err);

#endif
