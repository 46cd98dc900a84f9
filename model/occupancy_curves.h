/*
 * Occupancy curves: the active warps per SM as one input of a launch varies
 * with the others held, as NVIDIA's occupancy calculator draws them.
 *
 * DESIGN
 * Each curve applies occ_compute at every value the hardware tells apart,
 * so the curve is exact rather than sampled: threads per block at each
 * whole warp (warp_size .. max_threads_per_block), registers per thread at
 * each count (1 .. max_regs_per_thread), dynamic shared memory at each
 * allocation unit (0 .. the kernel's dynamic maximum in force for the
 * launch). A configuration the hardware refuses counts 0 warps.
 */
#ifndef GPUPROBE_MODEL_OCCUPANCY_CURVES_H
#define GPUPROBE_MODEL_OCCUPANCY_CURVES_H

#include <jansson.h>

#include "model/occupancy.h"

/* {"block":{"x":[..],"active_warps":[..]},"regs":{..},"smem":{..}}, each
 * keyed by the request member it varies; NULL when in itself is invalid
 * (occ_compute refuses it) or memory ran out. */
json_t *occ_curves_json(const struct occ_rules *r, const struct occ_input *in);

#endif
