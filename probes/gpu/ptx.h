/*
 * Building PTX text in C. Probes describe their kernels as templates with
 * {name} placeholders; this expands them and collects the module text.
 * An allocation failure is remembered and reported once, at ptx_take.
 * Contracts (asserted in every build): p is a builder from ptx_init (or
 * reset by ptx_take/ptx_free) and the text arguments are not NULL.
 */
#ifndef GPUPROBE_PROBES_GPU_PTX_H
#define GPUPROBE_PROBES_GPU_PTX_H

#include <stddef.h>

struct ptx {
    char *buf;
    size_t len, cap;
    int oom;
};

/* An empty builder. */
void ptx_init(struct ptx *p);
/* Appends the printf-formatted text; a text that cannot be formatted fails
 * the module as running out of memory does. */
void ptx_add(struct ptx *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends tmpl with each "{key}" replaced by its value (keys[i] -> vals[i]);
 * an unknown {key}, or one whose value is NULL, is copied as it is. keys
 * and vals hold n entries (NULL only when n is 0), no key NULL. */
void ptx_expand(struct ptx *p, const char *tmpl, const char *const *keys,
                const char *const *vals, size_t n);
/* The text (caller frees), or NULL if memory ran out; p is reset. */
char *ptx_take(struct ptx *p);
/* Drops the text; p is reset, ready to build again. */
void ptx_free(struct ptx *p);

/* The module header for a device of compute capability major.minor. */
void ptx_header(struct ptx *p, int cc_major, int cc_minor);
/* The same with PTX ISA version (e.g. "8.4"; NULL: ptx_header's 8.0), for a
 * module using an instruction an older ISA lacks. */
void ptx_header_version(struct ptx *p, int cc_major, int cc_minor, const char *version);
/* The same for an architecture-specific target when arch_specific is 1
 * (".target sm_90a": wgmma, setmaxnreg), whose code runs only on a device of
 * exactly that compute capability. */
void ptx_header_arch(struct ptx *p, int cc_major, int cc_minor, const char *version,
                     int arch_specific);

#endif
