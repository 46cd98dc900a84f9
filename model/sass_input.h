/*
 * The SASS control-flow object (the JSON probes/gpu/sass_cfg.h writes)
 * read into plain arrays and checked, for model/sass_counts.c: the model
 * never includes probes/, so this reader and that writer share only the
 * documented member names.
 *
 * DESIGN
 * Every member is required and typed; indices must point inside their
 * arrays, a loop's parent must come before it, a skip's parent must hold
 * it, so the counting code can follow any index without checks. A class
 * name outside the model's seven and "sync", "uniform", "other" is an
 * error, never dropped.
 */
#ifndef GPUPROBE_MODEL_SASS_INPUT_H
#define GPUPROBE_MODEL_SASS_INPUT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "model/sass_counts.h"

struct si_group {
    uint32_t at;
    int loop, skip;              /* -1: outside every loop / behind no branch */
    int guarded;
    double n[SC_NCLASS];
    double waits;                /* instructions waiting on a global load */
};

struct si_loop {
    uint32_t head, latch, end;
    int parent, depth, skip;
    double n[SC_NCLASS];         /* one trip of its own body */
};

struct si_skip {
    uint32_t branch, from, to;
    int conditional, loop, parent;
};

struct si_sass {
    struct si_group *groups;
    int ngroups;
    struct si_loop *loops;
    int nloops;
    struct si_skip *skips;
    int nskips;
    int unreachable, guarded_exits, calls, unknown_ops;
    int has_waits;               /* every group says its waits (objects older than them do not) */
};

/* The class index of a name (enum mwp_class, then enum sc_class), or -1. */
int si_class_parse(const char *name);

/* Reads o into s. 0, or -1 with the member at fault in err; s is released
 * with si_free either way. */
int si_read(const json_t *o, struct si_sass *s, char *err, size_t errlen);
void si_free(struct si_sass *s);

#endif
