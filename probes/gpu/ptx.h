/*
 * Building PTX text in C. Probes describe their kernels as templates with
 * {name} placeholders; this expands them and collects the module text.
 * An allocation failure is remembered and reported once, at ptx_take.
 */
#ifndef GPUPROBE_PROBES_GPU_PTX_H
#define GPUPROBE_PROBES_GPU_PTX_H

#include <stddef.h>

struct ptx {
    char *buf;
    size_t len, cap;
    int oom;
};

void ptx_init(struct ptx *p);
void ptx_add(struct ptx *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends tmpl with each "{key}" replaced by its value (keys[i] -> vals[i]);
 * an unknown {key} is copied as it is. */
void ptx_expand(struct ptx *p, const char *tmpl, const char *const *keys,
                const char *const *vals, size_t n);
/* The text (caller frees), or NULL if memory ran out; p is reset. */
char *ptx_take(struct ptx *p);
void ptx_free(struct ptx *p);

/* The module header for a device of compute capability major.minor. */
void ptx_header(struct ptx *p, int cc_major, int cc_minor);

#endif
