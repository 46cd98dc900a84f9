/*
 * Reader of Accel-Sim kernel traces (the NVBit-based tracer's kernel-N.trace,
 * and the post-processed kernel-N.traceg), into per-thread records.
 *
 * DESIGN
 * A trace is a header of "-key = value" lines (grid dim, block dim, tracer
 * version, lineinfo ...) and one line per executed warp instruction: PC,
 * active mask, destination and source registers, opcode, memory width and,
 * for memory instructions, the active lanes' addresses in one of three
 * modes (0 list, 1 base+stride, 2 base+deltas). In kernel-N.trace every line
 * starts with the thread block and warp ids; in .traceg the lines of a warp
 * are grouped under "#BEGIN_TB / thread block = x,y,z / [cluster lines] /
 * warp = w / insts = n ... #END_TB". Both layouts are read from one memory
 * buffer.
 *
 * Only global memory instructions become records by default (spaces), one per
 * active lane, with tid = cta_linear * threads_per_block + warp * 32 + lane
 * and the width and the store flag (stores, atomics and reductions) from the
 * opcode (trace_sass_classify, trace_op_writes). The dependency flag is
 * derived from the registers (dep = DERIVE, the default): a load is dependent
 * if a later instruction of the same warp reads its destination register
 * before the warp's next memory instruction; a PC is dependent if any of its
 * executions is. That needs the whole trace before the first record, so
 * DERIVE reads the buffer twice: the first pass checks everything and
 * collects the dependent PCs, the second hands records to the sink, so with
 * DERIVE no record is handed on unless the whole trace is valid. The user's
 * per-PC table wins over both derived and default flags.
 * Memory: the set of dependent PCs, plus for kernel-N.trace (whose warps
 * interleave) one map entry per warp during the first pass.
 * docs/trace-formats.md has the full mapping.
 */
#ifndef GPUPROBE_TRACE_ACCELSIM_H
#define GPUPROBE_TRACE_ACCELSIM_H

#include <stddef.h>
#include <stdint.h>

#include "trace/nvbit.h"
#include "trace/pcflags.h"
#include "trace/record.h"

enum trace_accelsim_dep {
    TRACE_ACCELSIM_DEP_DERIVE = 0, /* from the registers (two passes) */
    TRACE_ACCELSIM_DEP_DEFAULT,    /* load_dep for loads and atomics, 0 for stores (one pass) */
};

struct trace_accelsim_opts {
    struct trace_dim3 grid, block; /* zeros: only the header gives them */
    unsigned spaces;               /* TRACE_SPACE_* bits to keep; 0: TRACE_SPACE_GLOBAL */
    enum trace_accelsim_dep dep;
    uint32_t load_dep;                 /* for TRACE_ACCELSIM_DEP_DEFAULT */
    int cluster_ids;                   /* kernel-N.trace lines carry the 7 thread-block-cluster
                                          fields (cluster id x y z, CTA in cluster x y z, rank)
                                          after the warp id (tracers with cluster support) */
    int core_ids;                      /* kernel-N.trace lines carry "sm warp_in_sm" after the
                                          warp id and cluster fields (TOOL_TRACE_CORE=1) */
    const struct trace_pcflags *flags; /* per-PC flags; may be NULL */
    size_t max_warps;                  /* warp map limit; 0: 1 << 22 */
    struct trace_read_stats *stats;    /* may be NULL */
};

/* Defaults: no dims, global only, DERIVE, load_dep 1, no cluster or core
 * ids, no table. */
void trace_accelsim_opts_init(struct trace_accelsim_opts *o);

/* Reads one kernel's trace from buf[0..len) and hands one record per active
 * lane of each kept memory instruction to sink, in line order and lane
 * order. o may be NULL (defaults).
 * Returns 0, TRACE_EINPUT / TRACE_ENOMEM with err filled, or the sink's value. */
int trace_accelsim_read(const char *buf, size_t len, const struct trace_accelsim_opts *o,
                        trace_sink sink, void *ctx, struct trace_err *err);

#endif
