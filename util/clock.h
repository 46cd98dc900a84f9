/*
 * The monotonic clock, the one every duration in gpuprobe is measured on
 * (deadlines, job durations, a probe's wall time): it never jumps when the
 * system's time is set.
 */
#ifndef GPUPROBE_UTIL_CLOCK_H
#define GPUPROBE_UTIL_CLOCK_H

#include <stdint.h>

/* Milliseconds on CLOCK_MONOTONIC. */
int64_t mono_ms(void);
/* Seconds on CLOCK_MONOTONIC, to the nanosecond. */
double mono_s(void);

#endif
