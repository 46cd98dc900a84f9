/*
 * The SM clock actually achieved, measured on the device: one thread spins
 * for a fixed number of clock64 cycles and reads %globaltimer (nanoseconds)
 * at both ends. Recorded before and after every probe, since cycle counts
 * mean little without the clock they were counted at.
 */
#ifndef GPUPROBE_PROBES_GPU_CLOCK_H
#define GPUPROBE_PROBES_GPU_CLOCK_H

#include "probes/gpu/gpu.h"

int gpu_clock_mhz(struct gpu *g, double *mhz, char *err, size_t errlen);

#endif
