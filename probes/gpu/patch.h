/*
 * Patch-and-run: compile a probe kernel from PTX, edit chosen fields of
 * chosen instructions of its machine code, load the edited cubin, run and
 * time it, all in the calling (worker) process.
 *
 * DESIGN
 * The pure half works on a cubin held in memory and needs no GPU:
 * patch_find_text() parses the buffer with the bounds-checked reader
 * (probes/gpu/cubin.h) and turns the kernel's text pointer into a file offset;
 * patch_apply() checks every edit first (the kernel exists, the index is
 * inside its text, the value fits the field) and only then writes them all
 * through probes/gpu/sass.h's one field table, so a refused list leaves the
 * buffer untouched. The GPU half, patch_run(), builds the PTX with
 * gpu_module_build() (which keeps the JIT's cubin), patches a copy, loads
 * that copy with gpu_module_load_image(), and launches it; a launch that
 * faults comes back as -1 with the CUDA error's name and text in err.
 * A fault such as CUDA_ERROR_ILLEGAL_INSTRUCTION leaves the context
 * unusable, which is why this runs only in a job's worker process: the
 * daemon and the next job (a new process, a new context) are unaffected.
 *
 * Contracts: what an edit list asks (instruction indices, values) is
 * checked against the cubin and refused with a reason. How it is passed
 * is asserted (kept in every build): buffers, kernel names and out
 * pointers are not NULL, an array is not NULL when its count is not 0,
 * and every edit names a field of enum sass_field.
 */
#ifndef GPUPROBE_PROBES_GPU_PATCH_H
#define GPUPROBE_PROBES_GPU_PATCH_H

#include <stddef.h>

#include "probes/gpu/gpu.h"
#include "probes/gpu/sass.h"

/* Set field `field` of instruction `index` (0 = the kernel's first) to value. */
struct patch_edit {
    size_t index;
    enum sass_field field;
    unsigned value;
};

/* The byte offset of the kernel's machine code inside the cubin buffer and
 * its size. 0, or -1 with the reason (not a cubin, no such kernel). */
int patch_find_text(const void *cubin, size_t size, const char *kernel, size_t *offset,
                    size_t *text_size, char *err, size_t errlen);

/* The index of the nth (0-based) instruction of the kernel whose base
 * mnemonic is `mnemonic` ("STG", "EXIT"...); -1 with the reason if there
 * is none. */
long patch_find_mnemonic(const void *cubin, size_t size, const char *kernel,
                         const char *mnemonic, size_t nth, char *err, size_t errlen);

/* Applies the edits, in order, to the kernel's text inside the buffer.
 * All or nothing: 0, or -1 with the reason and the buffer unchanged.
 * edits may be NULL only when nedits is 0. */
int patch_apply(void *cubin, size_t size, const char *kernel, const struct patch_edit *edits,
                size_t nedits, char *err, size_t errlen);

/* Set the bits of instruction `index` that mask selects to value's, keep
 * the others: a whole-instruction rewrite (e.g. into a NOP, value from
 * sass_make_nop) that keeps chosen fields as the compiler wrote them. */
struct patch_bits {
    size_t index;
    struct sass_insn value, mask;    /* offsets unused */
};

/* Writes the masked instructions, then applies the edits, in order.
 * Everything is checked before any byte is written (each index inside the
 * kernel's text, no value bit outside its mask, every edit's value fits
 * its field): 0, or -1 with the reason and the buffer unchanged.
 * patch_apply is this with no masked writes. bits and edits may be NULL
 * only when their counts are 0. */
int patch_rewrite(void *cubin, size_t size, const char *kernel, const struct patch_bits *bits,
                  size_t nbits, const struct patch_edit *edits, size_t nedits, char *err,
                  size_t errlen);

/* Re-reads an edited copy: patched must equal orig with exactly the edits
 * applied (outside the kernel's text not a byte differs; inside it every
 * instruction is the original with the edited fields set). It replays the
 * list, so it proves the bytes are the list's, not that the list is right:
 * a probe checks its list's intent itself. 0, or -1 with the first
 * instruction that differs. edits may be NULL only when nedits is 0. */
int patch_verify(const void *orig, const void *patched, size_t size, const char *kernel,
                 const struct patch_edit *edits, size_t nedits, char *err, size_t errlen);

#define PATCH_MAX_REPEATS 100

/* How to launch the patched kernel. */
struct patch_launch {
    unsigned grid, block, smem;
    void **params;                   /* as cuLaunchKernel takes them */
    int repeats;                     /* timed launches, 1..PATCH_MAX_REPEATS */
};

struct patch_result {
    double jit_ms;                   /* compiling the PTX */
    double ms[PATCH_MAX_REPEATS];    /* wall time of each launch, synchronised */
    int runs;                        /* launches that completed */
    double min_ms, median_ms;
    size_t text_offset, text_size;   /* where the kernel's code is in the cubin */
};

/* Builds ptx (module `name`, kept under GPUPROBE_CUBIN_DIR like any other),
 * applies the edits to the kernel's code in a copy of its cubin, loads the
 * copy and launches it l->repeats times. 0, or -1 with the reason in err:
 * for a fault, "kernel execution: CUDA_ERROR_...: text" (r->runs says how
 * many launches completed before it). */
int patch_run(struct gpu *g, const char *ptx, const char *name, const char *kernel,
              const struct patch_edit *edits, size_t nedits, const struct patch_launch *l,
              struct patch_result *r, char *err, size_t errlen);

/* Stamped kernels (probes/banks_ptx.c) record, per block, four u64 words
 * at out + PATCH_STAMP_BYTES * block: clock64 and %globaltimer before the
 * timed loop, then both after it. */
#define PATCH_STAMP_BYTES 32

/* What the blocks of one stamped launch saw: medians over the blocks. */
struct patch_timing {
    double cycles;                   /* SM clock cycles between the stamps */
    double mhz;                      /* those cycles over the %globaltimer interval */
};

/* Launches the loaded kernel fn l->repeats times on l's grid and block (the
 * earlier launches pay the instruction-cache and first-touch misses; only
 * the last is timed) and reads the last launch's stamps of l->grid blocks
 * from out. 0, or -1 with the reason. */
int patch_time_stamped(struct gpu *g, CUfunction fn, const struct patch_launch *l,
                       CUdeviceptr out, struct patch_timing *t, char *err, size_t errlen);

#endif
