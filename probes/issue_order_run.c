/*
 * Running the issue-order experiment on a GPU (see issue_order.h), inside
 * the control-code probe's worker process.
 *
 * DESIGN
 * One kernel is built (io_ptx) and its machine code read (io_layout)
 * before anything runs; each experiment is that cubin with its edits
 * (io_edits), applied to a copy and re-read (patch_verify) before the
 * copy is loaded. For every warp count K (warps per sub-partition) the
 * block has 4K warps, so each of the four sub-partitions gets K of them if
 * %warpid mod 4 names the sub-partition, as on earlier parts; the run does
 * not assume it: it groups the records by %warpid mod 4 and reports how
 * often segments of one group overlapped in time against segments of
 * different groups ("subpartitions"). A group whose warps truly share an
 * issue slot cannot overlap beyond the odd cycle; groups that do not share
 * one overlap freely. Each launch's accumulators are compared with the
 * unedited kernel's, so an edit that broke the computation is visible
 * ("correct": false) rather than silently timed. Every CUDA failure ends
 * the experiment with {"error": reason}; the control-code probe's other
 * results stand.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/gpu/patch.h"
#include "probes/gpu/stats.h"
#include "probes/issue_order.h"

static const unsigned warp_counts[] = {2, 3, 4, 8};
#define NCOUNTS (sizeof warp_counts / sizeof warp_counts[0])
#define MAX_K 8
#define GROUPS IO_GROUPS
#define MAX_THREADS (32 * GROUPS * MAX_K)
_Static_assert(MAX_THREADS <= IO_MAX_THREADS, "the kernel's .maxntid must admit the largest block");
#define REC_BYTES ((size_t)IO_REC_WORDS * 4)
#define ACC_BYTES ((size_t)MAX_THREADS * IO_ACCS * 4)

struct io_run {
    struct gpu *g;
    int repeats;
    struct gpu_module base;          /* the compiled kernel */
    struct io_layout L;
    CUdeviceptr rec, acc;
    uint32_t words[GROUPS * MAX_K * IO_REC_WORDS];
    unsigned char want[NCOUNTS][ACC_BYTES], got[ACC_BYTES];  /* the unedited answers */
    int have_want[NCOUNTS];
    unsigned char *copy;
    struct io_trace groups[GROUPS];  /* one launch's traces */
    struct patch_edit edits[IO_MAX_EDITS];
    struct io_overlaps ov;           /* segment pairs within a %warpid mod 4 group, across */
    double *seg_cycles;              /* segment durations of one experiment */
    size_t nseg_cycles, seg_room;
};

/* ---- one launch --------------------------------------------------------------- */

static int keep_cycles(struct io_run *R, double v)
{
    if (R->nseg_cycles == R->seg_room) {
        size_t room = R->seg_room ? 2 * R->seg_room : 1024;
        double *p = realloc(R->seg_cycles, room * sizeof *p);
        if (!p)
            return -1;
        R->seg_cycles = p;
        R->seg_room = room;
    }
    R->seg_cycles[R->nseg_cycles++] = v;
    return 0;
}

/* The block's records as one trace per %warpid mod 4 group (io_records),
 * counted into c; each segment's cycles kept; the first launch's group 0
 * order into sample (when not NULL). */
static int count_launch(struct io_run *R, const struct io_experiment *x, unsigned nwarps,
                        struct io_counts *c, json_t *sample, char *err, size_t errlen)
{
    struct io_trace *t = R->groups;
    if (io_records(R->words, nwarps, x, t, &R->ov, err, errlen) < 0)
        return -1;
    for (unsigned k = 0; k < GROUPS; k++) {
        for (size_t i = 0; i < t[k].nwarps; i++)
            for (size_t s = 0; s < IO_SEGS; s++)
                if (keep_cycles(R, (double)(uint32_t)(t[k].w[i].end[s] - t[k].w[i].start[s])) < 0) {
                    snprintf(err, errlen, "out of memory");
                    return -1;
                }
        if (t[k].nwarps)
            io_count(&t[k], c);
    }
    if (sample && t[0].nwarps) {
        unsigned order[IO_MAX_WARPS * IO_SEGS];
        size_t n = io_order(&t[0], order, sizeof order / sizeof order[0]);
        for (size_t i = 0; i < n; i++)
            json_array_append_new(sample, json_integer(order[i]));
    }
    return 0;
}

/* Loads the experiment's cubin, launches it once unkept and R->repeats
 * times kept, counting each kept launch. *correct: every kept launch's
 * accumulators equal the unedited kernel's (the compiled experiment, run
 * first, sets them). */
static int run_experiment(struct io_run *R, size_t ki, const struct io_experiment *x,
                          struct io_counts *c, int *correct, json_t *sample, char *err,
                          size_t errlen)
{
    struct patch_edit *e = R->edits;
    struct gpu *g = R->g;
    size_t size = R->base.cubin_size, n = io_edits(&R->L, x, e);
    unsigned nwarps = GROUPS * warp_counts[ki], threads = 32 * nwarps;
    memcpy(R->copy, R->base.cubin, size);
    if (n && (patch_apply(R->copy, size, IO_KERNEL, e, n, err, errlen) < 0 ||
              patch_verify(R->base.cubin, R->copy, size, IO_KERNEL, e, n, err, errlen) < 0))
        return -1;
    struct gpu_module m;
    CUfunction fn;
    void *params[] = {&R->rec, &R->acc};
    if (gpu_module_load_image(g, R->copy, size, &m, err, errlen) < 0)
        return -1;
    int rc = gpu_module_function(g, &m, IO_KERNEL, &fn, err, errlen);
    *correct = 1;
    for (int i = 0; rc == 0 && i <= R->repeats; i++) {
        /* both cleared, so nothing a launch failed to write reads as written */
        rc = gpu_check(g, g->cu->cuMemsetD32(R->rec, 0, REC_BYTES * nwarps / 4), "cuMemsetD32",
                       err, errlen) < 0 ||
                     gpu_check(g, g->cu->cuMemsetD32(R->acc, 0xffffffffu, (size_t)threads * IO_ACCS),
                               "cuMemsetD32", err, errlen) < 0 ||
                     gpu_launch(g, fn, 1, threads, 0, params, err, errlen) < 0 ||
                     gpu_check(g, g->cu->cuMemcpyDtoH(R->words, R->rec, REC_BYTES * nwarps),
                               "cuMemcpyDtoH", err, errlen) < 0 ||
                     gpu_check(g, g->cu->cuMemcpyDtoH(R->got, R->acc, (size_t)threads * IO_ACCS * 4),
                               "cuMemcpyDtoH", err, errlen) < 0
                 ? -1
                 : 0;
        if (rc < 0 || i == 0)
            continue;                /* the first launch pays the cold instruction cache */
        if (!R->have_want[ki]) {
            memcpy(R->want[ki], R->got, (size_t)threads * IO_ACCS * 4);
            R->have_want[ki] = 1;
        }
        *correct = *correct && memcmp(R->want[ki], R->got, (size_t)threads * IO_ACCS * 4) == 0;
        rc = count_launch(R, x, nwarps, c, i == 1 ? sample : NULL, err, errlen);
    }
    gpu_module_free(g, &m);
    return rc;
}

/* ---- the experiment --------------------------------------------------------------- */

static int setup(struct io_run *R, char *err, size_t errlen)
{
    struct gpu *g = R->g;
    if (gpu_module_build_generated(g, io_ptx(g->info.cc_major, g->info.cc_minor), "issue_order",
                                   &R->base, err, errlen) < 0 ||
        io_layout(R->base.cubin, R->base.cubin_size, &R->L, err, errlen) < 0)
        return -1;
    R->copy = malloc(R->base.cubin_size);
    if (!R->copy) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return gpu_check(g, g->cu->cuMemAlloc(&R->rec, REC_BYTES * GROUPS * MAX_K), "cuMemAlloc",
                     err, errlen) < 0 ||
                   gpu_check(g, g->cu->cuMemAlloc(&R->acc, ACC_BYTES), "cuMemAlloc", err,
                             errlen) < 0
               ? -1
               : 0;
}

static void teardown(struct io_run *R)
{
    CUdeviceptr *bufs[] = {&R->rec, &R->acc};
    gpu_free_buffers(R->g, bufs, sizeof bufs / sizeof bufs[0]);
    if (R->base.cubin || R->base.mod)
        gpu_module_free(R->g, &R->base);
    free(R->copy);
    free(R->seg_cycles);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median, minimum and maximum of the kept segment durations; null if none. */
static json_t *cycles_json(struct io_run *R)
{
    size_t n = R->nseg_cycles;
    if (!n)
        return json_null();
    qsort(R->seg_cycles, n, sizeof *R->seg_cycles, by_value);
    return json_pack("{s:f, s:f, s:f, s:I}", "median", R->seg_cycles[n / 2], "min",
                     R->seg_cycles[0], "max", R->seg_cycles[n - 1], "segments", (json_int_t)n);
}

static json_t *layout_json(const struct io_layout *L)
{
    return json_pack("{s:I, s:I, s:I, s:i, s:i, s:i, s:I}", "first_read", (json_int_t)L->start[0],
                     "last_read", (json_int_t)L->end[IO_SEGS - 1], "ffma",
                     (json_int_t)(IO_SEGS * IO_FFMA), "compiled_end_stall",
                     (int)L->compiled_stall_end, "compiled_end_yield",
                     (int)L->compiled_yield_end, "compiled_ffma_stall_max",
                     (int)L->compiled_stall_ffma, "reads_not_cs2r", (json_int_t)L->other_reads);
}

/* Every experiment at every warp count; by_experiment sums the counts. */
static int experiments(struct io_run *R, json_t *list, json_t *by, char *err, size_t errlen)
{
    for (size_t xi = 0; xi < io_nexperiments; xi++) {
        const struct io_experiment *x = &io_experiments[xi];
        struct io_counts all;
        memset(&all, 0, sizeof all);
        R->nseg_cycles = 0;
        for (size_t ki = 0; ki < NCOUNTS; ki++) {
            struct io_counts c;
            int correct;
            json_t *sample = json_array();
            memset(&c, 0, sizeof c);
            if (run_experiment(R, ki, x, &c, &correct, sample, err, errlen) < 0) {
                json_decref(sample);
                return -1;
            }
            json_array_append_new(list, json_pack("{s:s, s:i, s:o, s:b, s:o}", "name", x->name,
                                                  "warps", (int)warp_counts[ki], "counts",
                                                  io_counts_json(&c), "correct", correct,
                                                  "order_sample", sample));
            io_counts_add(&all, &c);
        }
        json_t *sum = io_counts_json(&all);
        json_object_set_new(sum, "edit", json_string(x->edit));
        json_object_set_new(sum, "segment_cycles", cycles_json(R));
        json_object_set_new(by, x->name, sum);
    }
    return 0;
}

json_t *issue_order_run(struct gpu *g, int repeats)
{
    struct io_run *R = calloc(1, sizeof *R);
    char err[512] = "";
    if (!R)
        return json_pack("{s:s}", "error", "out of memory");
    R->g = g;
    R->repeats = repeats;
    json_t *list = json_array(), *by = json_object(), *res = NULL;
    json_t *counts = json_array();
    for (size_t k = 0; k < NCOUNTS; k++)
        json_array_append_new(counts, json_integer(warp_counts[k]));
    if (setup(R, err, sizeof err) == 0 && experiments(R, list, by, err, sizeof err) == 0) {
        res = json_pack("{s:s, s:i, s:i, s:o, s:o, s:o, s:o}", "method",
                        "4K warps in one block run 8 segments of 16 independent FFMAs, each "
                        "between two clock64 reads; the end reads' stall or yield edited in the "
                        "cubin; per %warpid mod 4 group the segments sorted by start clock give "
                        "the issue order, and each switch after an edited end read is scored "
                        "against youngest, oldest, round-robin and lowest-id",
                        "segments", IO_SEGS, "ffma_per_segment", IO_FFMA,
                        "warps_per_subpartition", json_incref(counts), "layout",
                        layout_json(&R->L), "experiments", json_incref(list), "by_experiment",
                        json_incref(by));
        json_object_set_new(res, "subpartitions",
                            json_pack("{s:s, s:I, s:I, s:I, s:I}", "grouping", "warpid mod 4",
                                      "same_group_pairs", (json_int_t)R->ov.same_pairs,
                                      "same_group_overlapping",
                                      (json_int_t)R->ov.same_overlapping, "cross_group_pairs",
                                      (json_int_t)R->ov.cross_pairs, "cross_group_overlapping",
                                      (json_int_t)R->ov.cross_overlapping));
    } else {
        res = json_pack("{s:s}", "error", err[0] ? err : "failed");
    }
    json_decref(list);
    json_decref(by);
    json_decref(counts);
    teardown(R);
    free(R);
    return res;
}
