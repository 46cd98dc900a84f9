/*
 * `gpuprobe trace capture`: a kernel's memory trace, taken by running its
 * PTX instrumented (probes/ptx_instrument.h) through the Driver API, and
 * checked against the original kernel (docs/trace-capture.md).
 *
 * DESIGN
 * The kernel's parameters are given as NAME=VALUE texts (capture_args.c,
 * no CUDA, unit-tested): a pointer parameter names a device buffer with its
 * size and how its bytes start (buf:BYTES[:zero|iota|perm:SEED|rand:SEED|
 * randf:SEED|f32:V]), a scalar its value. Every buffer's first bytes are made once on
 * the host, so each run starts from the same inputs.
 * The run (capture_run.c) compiles three modules through the JIT — the
 * original, the counting rewrite, the recording rewrite — and launches
 * three times, every buffer uploaded afresh before each launch:
 *   1. counting: the control block's counter ends at the number of
 *      accesses N; the record buffer is then N x 16 bytes;
 *   2. recording: each access reserves a slot with an atomic add and
 *      writes {addr, tid, pc} there; the counter must end at N again;
 *   3. the original kernel.
 * Every buffer after (2) and after (1) is compared byte for byte with its
 * bytes after (3): the instrumented kernels must compute what the original
 * does ("same_answer"; a difference fails the capture, naming the buffer
 * and the first differing byte). The one difference let through is the
 * rounding of float atomic adds, whose order the hardware picks
 * (capture_compare.c: within a bound from the number of adds each element
 * took, and reported).
 * A sample: with sample_blocks set, every pass still runs the whole launch,
 * but only the threads of its first sample_blocks blocks (linear block
 * index, x fastest) count and record — each doing what it does in the
 * whole launch, which a smaller grid would not give a kernel that strides
 * by the grid's size. The records are then ordered by thread,
 * keeping each thread's slots in increasing order, which is its program
 * order: a thread's atomic adds on the one counter are ordered as it
 * issued them (same-address coherence), so its later access always holds
 * a later slot. The trace is the binary requests format (trace/binfmt.h),
 * thread-major, each record's width and dependency flag from its site.
 * What is not kept: a kernel recording over 2^32 threads, or over max_records
 * accesses, is refused (the records are not streamed in chunks).
 */
#ifndef GPUPROBE_PROBES_CAPTURE_H
#define GPUPROBE_PROBES_CAPTURE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "probes/ptx_instrument.h"

#define CAPTURE_MAX_RECORDS_DEFAULT (1ull << 27)   /* 2 GiB of device records */
#define CAPTURE_MAX_BUFFER_BYTES (16ull << 30)

enum capture_fill { FILL_ZERO, FILL_IOTA, FILL_RAND, FILL_RANDF, FILL_F32, FILL_PERM };

/* One kernel parameter's value. */
struct capture_value {
    int is_buffer;
    uint64_t bytes;            /* buffers: size; scalars: the parameter's size */
    enum capture_fill fill;
    uint64_t seed;             /* rand, randf */
    float f32;                 /* f32 */
    unsigned char scalar[8];   /* scalars: the bytes passed to the launch */
};

/* Reads text (the part after "NAME=") as the value of parameter p.
 * A .u64/.s64/.b64 parameter takes buf:... (a device pointer) or an
 * integer; 8/16/32-bit integer types an integer in range; .f32/.f64 a
 * number. 0, or -1 with the reason in err. */
int capture_value_parse(const struct ptxi_param *p, const char *text, struct capture_value *v,
                        char *err, size_t errlen);

/* Matches "NAME=VALUE" texts (NAME: the parameter's name or its index
 * from 0) with k's parameters: values[i] for k->params[i]; each parameter
 * must be given exactly once. 0, or -1 with the reason in err. */
int capture_args_bind(const struct ptxi_kernel *k, const char *const *args, size_t nargs,
                      struct capture_value *values, char *err, size_t errlen);

/* A buffer's first bytes, as its fill says (out holds v->bytes). */
void capture_fill_bytes(const struct capture_value *v, unsigned char *out);

/* Reads "X", "X,Y", "X,Y,Z" (or with 'x' between) into d (missing: 1). */
int capture_dims_parse(const char *text, unsigned d[3], char *err, size_t errlen);
/* CUDA's bounds on a launch's dims, what "grid" or "block": a block of at
 * most 1024 threads (x, y <= 1024, z <= 64), a grid of x < 2^31, y, z <=
 * 65535. 0, or -1 with the reason. */
int capture_dims_limit(const char *what, const unsigned d[3], char *err, size_t errlen);
/* What can be checked of one "NAME=VALUE" without the PTX: its shape, and a
 * buf:BYTES[:FILL] value's size and fill. 0, or -1 with the reason. */
int capture_arg_check(const char *item, char *err, size_t errlen);

struct capture_req {
    const char *ptx;             /* the module's text */
    const char *entry;           /* NULL: the module's only kernel */
    unsigned grid[3], block[3];
    unsigned shared_bytes;       /* dynamic shared memory of the launch */
    const char *const *args;     /* "NAME=VALUE" */
    size_t nargs;
    const char *device;          /* index or UUID */
    const char *output;          /* the trace (written as OUTPUT.part, renamed) */
    uint64_t max_records;        /* 0: CAPTURE_MAX_RECORDS_DEFAULT */
    uint64_t sample_blocks;      /* 0: every block records; else the first this many */
};

/* Captures (see DESIGN). The result document: the kernel, its sites, the
 * uncovered accesses, the records, the same-answer check per buffer and
 * the times; NULL with the reason in err. *input_fault is set to 1 when
 * the PTX, the parameters or the launch shape are at fault (not the GPU). */
json_t *capture_run(const struct capture_req *r, char *err, size_t errlen, int *input_fault);

/* The slots of n device records (PTXI_RECORD_BYTES each, as the recording
 * pass left them) in the trace's order: by thread id, each thread's slots
 * increasing. order holds n entries. 0, or -1 when memory runs out or n is
 * over 2^32-1 (capture_order.c). */
int capture_order(const unsigned char *recs, uint64_t n, uint32_t *order);

/* How one buffer compared (capture_compare). */
struct capture_diff {
    uint64_t first;    /* the first byte that differs past any allowance; bytes: none */
    uint64_t rounded;  /* elements let through: float-add rounding within its bound */
    double worst;      /* the largest |a - b| / bound among them (0 when none) */
};

/* Compares x (an instrumented pass's bytes of a buffer at device address
 * base) with y (the original's): equal, or differing only in elements
 * that float atomic adds alone wrote, by no more than their reordering can
 * round (see capture_compare.c). recs are the recording pass's nrecs
 * records, k the kernel they came from. 0 with d filled, -1 when memory
 * runs out. */
int capture_compare(const unsigned char *x, const unsigned char *y, uint64_t bytes, uint64_t base,
                    const struct ptxi_kernel *k, const unsigned char *recs, uint64_t nrecs,
                    struct capture_diff *d);

/* The sites and uncovered accesses of k as JSON (also part of the result). */
json_t *capture_sites_json(const struct ptxi_kernel *k);

#endif
