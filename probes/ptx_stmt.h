/*
 * The statements of a PTX function body, as the instrumentation reads them
 * (private to probes/ptx_instrument.c and probes/ptx_deps.c).
 *
 * DESIGN
 * A body is cut into statements without building a syntax tree: an
 * instruction runs to its ';', a label is a name and ':', '{' and '}' open
 * and close scopes, '.loc' and '.file' run to the end of their line, other
 * directives (.reg, .shared, .pragma ...) to their ';'. Comments are
 * skipped. Each instruction is then split into its guard, its opcode
 * (dot-separated parts) and its top-level operands (commas inside {...},
 * [...] and (...) do not split), which is all the rewriter and the
 * dependency walk need.
 */
#ifndef GPUPROBE_PROBES_PTX_STMT_H
#define GPUPROBE_PROBES_PTX_STMT_H

#include <stddef.h>

#include "probes/ptx_instrument.h"

enum ptxs_kind { PTXS_INSN, PTXS_LABEL, PTXS_OPEN, PTXS_CLOSE, PTXS_DIRECTIVE };

#define PTXS_MAX_OPS 12

struct ptxs {
    enum ptxs_kind kind;
    size_t start, end;        /* the statement's bytes [start, end), ';' excluded */
    unsigned line;
    /* instructions: */
    char guard[48];           /* without '@': "%p1", "!%p1"; "" if none */
    char op[96];              /* the opcode with its qualifiers: "ld.global.nc.v4.f32" */
    size_t nops;
    size_t op_at[PTXS_MAX_OPS], op_len[PTXS_MAX_OPS]; /* operands: offsets into the text */
    int site;                 /* index into the kernel's sites, or -1 */
    int target;               /* bra: the label's statement, or -1 */
    /* labels: */
    char label[128];
};

/* 1 if the opcode's first part is `base` ("ld" matches "ld.global.u32"). */
int ptxs_op_is(const struct ptxs *s, const char *base);
/* 1 if one of the opcode's dot-separated parts is `part`. */
int ptxs_op_has(const struct ptxs *s, const char *part);

/* Fills k->sites[i].dep for every load, walking the statements. */
void ptxi_dependency_flags(const char *ptx, const struct ptxs *st, size_t n,
                           struct ptxi_kernel *k);

#endif
