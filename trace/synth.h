/*
 * Synthetic memory traces: the global-memory requests of a described CUDA
 * kernel (matrix multiply naive / tiled / A x B^T, transpose, a 7-point
 * stencil, a reduction, streaming and strided copies), generated from its
 * index arithmetic rather than captured on a GPU (the tile decomposition of
 * the tile communication operator patent; docs/trace-synth.md).
 *
 * DESIGN
 * A pattern (struct synth_pattern) is a description of one kernel: how the
 * sizes, tile and block become a grid and the arrays it touches (setup), and
 * what one thread does (thread): its global loads and stores in program
 * order, each one a memory instruction of the pattern's table (struct
 * synth_insn: the PC is 16 * the instruction's position in the kernel's
 * source, the flag is the instruction's). synth_run walks the grid block
 * by block (blockIdx x fastest), each block's threads in threadIdx order (x
 * fastest), and hands every request to a trace_sink as it is made: thread
 * ids ascend, so the stream is thread-major as the sorter wants it, and
 * nothing is kept (memory stays flat however large the sizes).
 * Arrays are row-major, each at its own base: the first at SYNTH_BASE, each
 * next one at the first SYNTH_ALIGN boundary after the previous one ends (as
 * a device allocator places large allocations). tests/gpu/kernels/synth/
 * holds each pattern's CUDA C kernel with the same arithmetic.
 * This folder knows nothing of CUDA or HTTP: the kernels are only described.
 */
#ifndef GPUPROBE_TRACE_SYNTH_H
#define GPUPROBE_TRACE_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "trace/record.h"

#define SYNTH_BASE 0x100000000ull   /* the first array's address (4 GiB) */
#define SYNTH_ALIGN 0x200000ull     /* each array starts on a 2 MiB boundary */
#define SYNTH_PC_STEP 16u           /* PC of instruction i: i * SYNTH_PC_STEP */
#define SYNTH_MAX_ARRAYS 3
#define SYNTH_MAX_INSNS 8
#define SYNTH_MAX_THREADS_PER_BLOCK 1024u

/* One memory instruction of a pattern's kernel. */
struct synth_insn {
    const char *text;   /* the access as the kernel writes it, e.g. "ld A[row*K+k]" */
    int array;          /* index into the kernel's arrays */
    uint32_t dep;       /* the PC's dependency flag (docs/trace-synth.md gives the rule) */
    uint8_t store;      /* 1: the kernel writes the element (trace_rec.store) */
};

/* What the user asked for; zero means "the pattern's default". */
struct synth_opts {
    uint64_t size[3];   /* --size N[,M,K]: nsize values, the pattern says which is which */
    int nsize;
    uint64_t tile;      /* --tile T */
    uint64_t block[2];  /* --block BXxBY (block[1] 0: not given, 1 for 1-D patterns) */
    uint32_t elem;      /* --elem-size: bytes per element, 0: 4 */
    uint64_t stride;    /* --stride S (strided only), 0: 32 */
};

struct synth_pattern;

/* A resolved kernel: everything synth_run needs. */
struct synth_kernel {
    const struct synth_pattern *pat;
    uint64_t dim[3];              /* the pattern's sizes (matmul: M, N, K; transpose: rows, cols;
                                     stencil7: X, Y, Z; 1-D patterns: N) */
    uint64_t tile;                /* tiled patterns: T; others 0 */
    uint64_t stride;              /* strided: elements between reads */
    uint32_t elem;                /* bytes per element = every request's width */
    uint32_t block[2];            /* blockDim.x, blockDim.y */
    uint64_t grid[2];             /* gridDim.x, gridDim.y */
    uint32_t threads_per_block;
    int narrays;
    const char *array_name[SYNTH_MAX_ARRAYS];
    uint64_t array_elems[SYNTH_MAX_ARRAYS];
    uint64_t base[SYNTH_MAX_ARRAYS];
};

/* How a pattern reports one request (trace/synth.c). */
struct synth_emit {
    const struct synth_kernel *k;
    trace_sink sink;
    void *ctx;
    uint64_t tid;       /* the thread being generated */
    uint64_t records;   /* requests handed on so far */
    int rc;             /* the sink's non-zero value: later requests are dropped */
};

struct synth_pattern {
    const char *name;
    const char *summary;          /* one line for the help text */
    const char *sizes;            /* what --size takes, e.g. "N or M,N,K" */
    int max_sizes;                /* values --size may have: 1 (all equal) or this many */
    const char *dim_name[3];      /* the sizes' names, e.g. "M", "N", "K" */
    uint64_t default_tile;        /* 0: the pattern takes no --tile */
    uint32_t default_block[2];    /* block[1] 1: a 1-D pattern */
    int takes_stride;
    const struct synth_insn *insns;
    int ninsns;
    /* Fills dim, grid and the arrays (names and element counts) from the
     * already-checked options k->dim/tile/block; 0, or -1 with why. */
    int (*setup)(struct synth_kernel *k, char *why, size_t len);
    /* Emits thread (tx, ty) of block (bx, by) through synth_emit_req. */
    void (*thread)(const struct synth_kernel *k, struct synth_emit *e, uint64_t bx, uint64_t by,
                   uint32_t tx, uint32_t ty);
};

/* The patterns, in the order the help lists them. */
size_t synth_pattern_count(void);
const struct synth_pattern *synth_pattern_at(size_t i);
/* By name; NULL if there is none. */
const struct synth_pattern *synth_pattern_find(const char *name);

/* Parses "N", "N,M" or "N,M,K" (each 1 .. 2^40) into o->size; "BX" or
 * "BXxBY" into o->block. 0, or -1 with why. */
int synth_parse_size(const char *text, struct synth_opts *o, char *why, size_t len);
int synth_parse_block(const char *text, struct synth_opts *o, char *why, size_t len);

/* Checks o against pattern p and resolves the kernel: defaults, the tile
 * grid, the arrays' bases (none may pass 2^64). 0, or -1 with why. */
int synth_resolve(const struct synth_pattern *p, const struct synth_opts *o, struct synth_kernel *k,
                  char *why, size_t len);

/* Hands every request of the kernel to sink, thread by thread in thread-id
 * order, each thread's in program order. *records (may be NULL) gets the
 * number handed on. Returns 0, or the sink's non-zero value (it stops). */
int synth_run(const struct synth_kernel *k, trace_sink sink, void *ctx, uint64_t *records);

/* The number of requests synth_run would hand on, into *records, without
 * making them all: in each grid dimension a block is the first, the last or
 * one between, and every block between makes as many requests as any other
 * (a pattern's thread may tell blocks apart only by where its indices fall
 * against the sizes: past the end, or at the first or last element), so
 * one block of each kind is run, at most nine. 0; 1 when there would be
 * more than limit (*records is then limit): the work stops at the end of
 * the thread that passed it, so a small limit bounds it on a large grid (a
 * single thread's requests are all made, as synth_run makes them).
 * tests/unit/test_trace_synth.c holds every pattern to synth_run's count. */
int synth_count(const struct synth_kernel *k, uint64_t limit, uint64_t *records);

/* For patterns: emits instruction insn of the pattern touching element
 * `index` of the instruction's array (width k->elem, the PC and flag of
 * the instruction). Does nothing once the sink has refused a record. */
void synth_emit_req(struct synth_emit *e, int insn, uint64_t index);

/* The kernel in one line ("matmul-tiled M=64 N=64 K=64 T=16 grid 4x4 block
 * 16x16 ..."), for the command's summary. */
void synth_describe(const struct synth_kernel *k, char *buf, size_t len);

#endif
