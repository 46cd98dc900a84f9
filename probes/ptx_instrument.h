/*
 * PTX instrumentation for `gpuprobe trace capture` (docs/trace-capture.md):
 * reads one kernel (.entry) of a PTX module — nvcc's or hand-written —
 * finds its global loads, stores, atomics and reductions, derives each
 * load's (and value-returning atomic's) dependency flag,
 * and rewrites the module so every such access also records
 * (thread, pc, address) in a device buffer.
 *
 * DESIGN
 * Plain text in, plain text out: no CUDA here (the running is
 * probes/gpu/capture.c). The kernel's body is split into statements
 * (instructions up to ';', labels, scope braces, directives) with comments
 * skipped; only the chosen entry is touched, and the rewrite inserts text
 * at three kinds of places, leaving every original byte as it was:
 *   - two .u64 parameters appended to the entry's list: the record buffer
 *     and a control block {u64 counter, u64 capacity, u64 thread limit};
 *   - after the body's opening brace, the added registers; before the
 *     body's first instruction, the prologue that loads the parameters and
 *     computes the linear thread id once
 *     ((ctaid linear) * threads-per-block + (tid linear), x fastest) and
 *     whether it is below the thread limit;
 *   - BEFORE each access (before, so that a load that overwrites its own
 *     address register, a pointer chase, is still recorded with the
 *     address it used): the address into a register, a slot reserved with
 *     atom.global.add on the counter, and — when the slot is below the
 *     capacity — a 16-byte record {u64 addr, u32 tid, u32 pc}. A thread
 *     at or past the limit branches over all of it; a
 *     predicated access (@%p / @!%p) is skipped over with a branch on the
 *     inverted guard, so a record exists exactly when the access executes
 *     (in a thread below the limit).
 * In counting mode the sequence is only the guard and a red.global.add on
 * the counter (the first pass sizes the buffer).
 * A site's pc is its index, from 0, among the entry's global accesses in
 * text order: stable across rewrites and runs, and what the trace's pc
 * column holds. The width comes from the type and vector qualifiers
 * (.v4.f32: 16 bytes); the record carries no width, the site table does.
 * Covered: ld.global / ldu.global / st.global with any cache, eviction,
 * ordering (.volatile, .relaxed.gpu, ...) or .nc qualifier, scalar and
 * vector, register, register+offset, symbol and absolute addresses; and
 * atom.global / red.global (the address is the operand after atom's
 * destination, red's first). Stores, atomics and reductions all write
 * memory: the trace's store flag (is_store), which the cache model's write
 * policies read (docs/cache-model.md, "Stores").
 * Not covered, and counted in struct ptxi_kernel: atomics and reductions
 * on generic addresses, generic-space ld/st (their space is unknown
 * without pointer analysis), cp.async and bulk copies, and accesses inside
 * called .func functions (calls are counted). A width over 16 bytes
 * (.v4.f64, .v8) or a 32-bit address size is refused.
 * Dependency flag of a load: 1 if one of its destination registers is read
 * (as any source operand, a guard included, or by the next access itself)
 * on some path from the load to the thread's next global access, ret or
 * exit. Paths follow the control flow: an unconditional bra goes to its
 * label, a predicated bra to both, so across branches the flag is "may be
 * used" (any path). No kill analysis: a destination written again before
 * it is read counts as read if read later on that path. An atom's flag is
 * derived the same way (it returns the old value); stores and reductions
 * are 0.
 */
#ifndef GPUPROBE_PROBES_PTX_INSTRUMENT_H
#define GPUPROBE_PROBES_PTX_INSTRUMENT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Each recorded access on the device: 16 bytes {u64 addr, u32 tid, u32 pc}. */
#define PTXI_RECORD_BYTES 16u
/* The control block the second added parameter points to: {u64 counter,
 * u64 capacity, u64 thread limit}; threads whose linear id is at or past
 * the limit neither count nor record (a sample of the launch's first
 * blocks, each doing what it does in the whole launch). */
#define PTXI_CONTROL_BYTES 24u
/* The added parameters' names (appended to the entry's list, in this order). */
#define PTXI_PARAM_RECORDS "gpcap_records"
#define PTXI_PARAM_CONTROL "gpcap_control"

enum ptxi_mode { PTXI_RECORD, PTXI_COUNT };

/* What a site's instruction is. */
enum ptxi_kind { PTXI_LOAD, PTXI_STORE, PTXI_ATOMIC, PTXI_REDUCE };

/* One global access of the kernel. */
struct ptxi_site {
    uint32_t pc;          /* index among the entry's global accesses */
    enum ptxi_kind kind;  /* ld/ldu, st, atom, red */
    int is_store;         /* 1: it writes memory (st, atom, red): the trace's store flag */
    uint32_t width;       /* bytes: 1, 2, 4, 8 or 16 */
    uint32_t dep;         /* loads and atoms: the dependency flag (see DESIGN); else 0 */
    uint32_t float_add;   /* atom/red .add on .f32 or .f64: the element's bytes (4, 8);
                             else 0 (the same-answer check lets their rounding through) */
    unsigned line;        /* 1-based line of the access in the PTX text */
    char text[120];       /* the instruction, whitespace squeezed (truncated) */
    /* private to the rewriter */
    size_t at;            /* offset of the statement's first byte */
    char guard[48];       /* "" or the guard without '@' ("%p1", "!%p1") */
    char base[128];       /* address base: register, symbol, or "" (absolute) */
    int base_bits;        /* 32 or 64 for a register base; 0 otherwise */
    long long offset;     /* added to the base (the absolute address if base "") */
};

/* One parameter of the entry, in declaration order. */
struct ptxi_param {
    char name[128];
    char type[8];         /* "u64", "f32", "b8", ... */
    unsigned bytes;       /* size of the parameter (arrays: the whole array) */
    unsigned align;       /* its alignment (declared .align, else its size) */
    int is_array;         /* .b8 name[N] and the like: by-value aggregates */
};

struct ptxi_kernel {
    char entry[256];
    struct ptxi_param *params;
    size_t nparams;
    struct ptxi_site *sites;
    size_t nsites;
    /* accesses the rewrite does not record (see DESIGN); atomics: on
     * generic addresses (global ones are sites) */
    size_t atomics, generic, async_copies, calls;
    /* private to the rewriter: where text is inserted */
    size_t params_at;     /* offset of the ')' closing the list, or just after the name */
    int params_paren;     /* 1 if the entry has a (...) list */
    size_t decls_at;      /* just after the body's '{' */
    size_t prologue_at;   /* the body's first instruction or label */
};

/* Record i of a recording pass's records (PTXI_RECORD_BYTES each). */
struct ptxi_record {
    uint64_t addr;
    uint32_t tid, pc;
};

static inline struct ptxi_record ptxi_record_at(const unsigned char *recs, uint64_t i)
{
    struct ptxi_record r;
    const unsigned char *p = recs + (size_t)i * PTXI_RECORD_BYTES;
    memcpy(&r.addr, p, 8);
    memcpy(&r.tid, p + 8, 4);
    memcpy(&r.pc, p + 12, 4);
    return r;
}

/* "load", "store", "atomic", "reduction". */
const char *ptxi_kind_name(enum ptxi_kind k);

/* Reads the entry named entry (NULL: the module's only .entry) of the
 * NUL-terminated PTX text. 0 with k filled (free with ptxi_kernel_free),
 * or -1 with the reason in err (naming the line where there is one) and
 * nothing to free. */
int ptxi_analyze(const char *ptx, const char *entry, struct ptxi_kernel *k, char *err,
                 size_t errlen);

/* The module with k's entry instrumented in the given mode (malloc'd,
 * NUL-terminated); ptx must be the text k was analysed from. NULL with the
 * reason in err (out of memory). */
char *ptxi_rewrite(const char *ptx, const struct ptxi_kernel *k, enum ptxi_mode mode, char *err,
                   size_t errlen);

void ptxi_kernel_free(struct ptxi_kernel *k);

/* The names of the module's .entry functions, comma-separated, into buf
 * (for "name one of: ..." messages). */
void ptxi_entries(const char *ptx, char *buf, size_t len);

#endif
