/*
 * The occupancy capture: asks the driver (cuOccupancyMaxActiveBlocksPerMultiprocessor)
 * how many blocks fit on an SM for thousands of launch configurations, so
 * that model/occupancy.h can be checked against the truth.
 *
 * DESIGN
 * Kernels are generated with a chosen register count: N values live across
 * a loop (each updated from its neighbours every iteration, so none can be
 * retired early) under `.maxnreg R`; the count the driver's JIT actually gave
 * is read back with cuFuncGetAttribute(NUM_REGS) and is what the capture
 * records, never the target. Other kernels add static shared memory or use
 * named barriers. The kernels are only compiled and queried, never launched.
 * For each kernel the sweep varies block size, dynamic shared memory, the
 * kernel's dynamic-shared maximum (default, then raised to the opt-in
 * limit with cuFuncSetAttribute) and the preferred shared-memory carve-out,
 * and records each answer (or the driver's error) as one row.
 */
#ifndef GPUPROBE_PROBES_OCCUPANCY_SWEEP_H
#define GPUPROBE_PROBES_OCCUPANCY_SWEEP_H

#include <jansson.h>
#include <stddef.h>

/* The module of a sweep kernel ("occ"): about `live` values kept live under
 * .maxnreg maxnreg, static_smem bytes of static shared memory (0: none),
 * and, when barrier >= 0, a bar.sync with that barrier id in the loop. */
char *occ_sweep_ptx(int cc_major, int cc_minor, int maxnreg, int live, int static_smem,
                    int barrier);

/* Runs the capture on a device (UUID or index). The document:
 * {"capture":"occupancy","device":{..},"driver_version":..,
 *  "kernels":[{"name","target_regs","num_regs","static_smem","barriers",
 *              "local_bytes","max_threads_per_block"}],
 *  "columns":["kernel","block","dynamic_smem","max_dynamic_smem","carveout",
 *             "blocks","error"],
 *  "rows":[[k, block, dyn, maxdyn, carveout|-1, blocks|null, null|"CUDA_ERROR_.."]],
 *  "wall_s":..}
 * or NULL with the reason. */
json_t *occupancy_sweep_run(const char *device, char *err, size_t errlen);

#endif
