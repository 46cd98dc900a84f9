/*
 * Repeated measurements and their spread: every figure gpuprobe reports is
 * the median of its repeats, with the minimum and maximum beside it.
 */
#ifndef GPUPROBE_PROBES_GPU_STATS_H
#define GPUPROBE_PROBES_GPU_STATS_H

#include <jansson.h>
#include <stddef.h>

/* The most measurements of one figure any probe takes: the job kinds'
 * "repeats" bound (server/jobs/kind_*.c), so a job the daemon accepts is one
 * every probe can run. */
#define PROBE_MAX_REPEATS 50

struct spread {
    double median, min, max;
};

/* Sorts v in place. n must be > 0. */
struct spread spread_of(double *v, size_t n);
/* {"median":..,"min":..,"max":..,"runs":[...]} (runs in measurement order). */
json_t *spread_json(const double *v, size_t n);

#endif
