/*
 * Cubin reader: the ELF64 files that ptxas and the Driver API's JIT linker
 * produce for NVIDIA GPUs, read from a memory buffer, with no CUDA toolkit.
 *
 * DESIGN
 * cubin_parse() checks the whole structure once and refuses anything it
 * cannot trust, with a reason: the ELF header (ELFCLASS64, little-endian,
 * e_machine 190 = EM_CUDA), every section's name and file range (inside the
 * buffer, not overlapping the header, the section header table or another
 * section), the symbol table and its string table. After a successful parse
 * every pointer and size in struct cubin is safe to use as is: names are
 * NUL-terminated inside the buffer, text ranges lie inside it. Nothing is
 * copied: the caller keeps the buffer alive while the cubin is in use.
 *
 * Functions are the STT_FUNC symbols (kernels have `entry` set; a helper
 * such as the rcp.rn slow path lives inside its caller's section); each
 * one's machine code is [st_value, st_value + st_size) of its section
 * (.text.<kernel name>). Attributes
 * come from where the CUDA 13 fixtures (tests/fixtures/cubins/) show them:
 *   registers     EIATTR_REGCOUNT in the global .nv.info (keyed by symbol
 *                 index); older toolkits put it in the text section's
 *                 sh_info bits [31:24], used only when .nv.info has none
 *                 (CUDA 13 leaves those bits 0: sh_info is the symbol index)
 *   frame, stack  EIATTR_FRAME_SIZE, EIATTR_MIN_STACK_SIZE (global .nv.info)
 *   threads       EIATTR_MAX_THREADS (.maxntid), EIATTR_REQNTID (.reqntid),
 *                 EIATTR_MAXREG_COUNT in .nv.info.<name>
 *   shared bytes  the size of .nv.shared.<name> (static shared memory)
 * The SM architecture is in e_flags: bits [15:8] for ELF ABI version 8
 * (CUDA 13: 0x06005a04 is sm_90), bits [7:0] for the older layout.
 */
#ifndef GPUPROBE_PROBES_GPU_CUBIN_H
#define GPUPROBE_PROBES_GPU_CUBIN_H

#include <stddef.h>
#include <stdint.h>

#define CUBIN_EM_CUDA 190

struct cubin_section {
    const char *name;
    uint32_t type;                   /* sh_type */
    uint64_t flags;                  /* sh_flags */
    uint64_t offset, size;           /* file range; NOBITS sections have no bytes */
    uint32_t link, info;
    uint64_t entsize;
    const uint8_t *data;             /* NULL for NOBITS and empty sections */
};

struct cubin_symbol {
    const char *name;
    uint8_t type, bind, other;       /* ELF64_ST_TYPE, ELF64_ST_BIND, st_other */
    uint16_t shndx;
    uint64_t value, size;
};

struct cubin_kernel {
    const char *name;
    uint32_t symbol;                 /* index in .symtab */
    uint16_t section;                /* index of its .text section */
    int entry;                       /* 1 for a __global__ entry (STO_CUDA_ENTRY) */
    const uint8_t *text;             /* machine code, text_size bytes */
    size_t text_size;
    int regs;                        /* registers per thread; -1 if unknown */
    size_t regs_offset;              /* file offset of EIATTR_REGCOUNT's u32 value (for
                                        an experiment that edits it); 0 if none */
    int frame_size;                  /* bytes of local stack frame; -1 if unknown */
    int min_stack_size;              /* -1 if unknown */
    int max_regs;                    /* EIATTR_MAXREG_COUNT; -1 if absent */
    uint64_t shared_bytes;           /* static shared memory; 0 if none */
    uint32_t max_threads[3];         /* .maxntid; all 0 if not given */
    uint32_t req_threads[3];         /* .reqntid; all 0 if not given */
};

struct cubin {
    const uint8_t *data;
    size_t size;
    uint8_t osabi, abi_version;      /* e_ident[EI_OSABI], e_ident[EI_ABIVERSION] */
    uint16_t type;                   /* e_type */
    uint32_t e_flags;
    unsigned sm;                     /* e.g. 90 for sm_90 */
    size_t nsections;
    struct cubin_section *sections;
    size_t nsymbols;
    struct cubin_symbol *symbols;
    size_t nkernels;
    struct cubin_kernel *kernels;
};

/* Parses size bytes at data. Returns 0, or -1 with c zeroed and a reason in
 * err (e.g. "section 12 (.text.k): range 0x580+0x180 is past the end of
 * the 1664-byte file"); an empty buffer (NULL, 0) is refused, "no data".
 * c must be released with cubin_free either way. Asserted: c not NULL,
 * data not NULL unless size is 0, err not NULL unless errlen is 0 (NULL,
 * 0: no reason wanted). */
int cubin_parse(struct cubin *c, const void *data, size_t size, char *err, size_t errlen);
/* Frees what cubin_parse allocated and zeroes c; NULL is a no-op. */
void cubin_free(struct cubin *c);

/* The kernel or section of that name in a parsed cubin, or NULL when it
 * has none. Asserted: c and name not NULL. */
const struct cubin_kernel *cubin_kernel_find(const struct cubin *c, const char *name);
const struct cubin_section *cubin_section_find(const struct cubin *c, const char *name);

#endif
