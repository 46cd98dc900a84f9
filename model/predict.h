/*
 * A prediction end to end: a kernel described in JSON (or its PTX and
 * launch shape), its occupancy by the device's rules, the MWP/CWP model
 * with the device's measured parameters, and the answer as JSON with every
 * value used and where it came from. The API, the command line and the
 * model-validation saver all predict through here.
 *
 * DESIGN
 * The kernel object (member names are the API's):
 *   grid, block        an integer or [x, y, z] (required)
 *   regs               registers per thread (required: occupancy needs it)
 *   smem, static_smem  dynamic and static shared bytes per block (0; with
 *                      ptx, static_smem defaults to what its .shared
 *                      declarations hold, noted in the description)
 *   per_warp           {"fp32","fp64","int","sfu","conv","shared",
 *                       "coalesced","uncoalesced","sync"}: instructions one
 *                      warp executes over the kernel (absent classes: 0)
 *   uncoal_per_access  transactions of an uncoalesced access (default: the
 *                      warp size, one a lane)
 *   coal_bytes         bytes a coalesced access moves (default 128)
 *   launches           R (1); transfer_bytes: V (0)
 * or, instead of per_warp / uncoal_per_access / coal_bytes:
 *   ptx, entry (optional), params {"name": integer}: the description is
 *   derived by model/ptx_desc.h with the launch shape.
 * Errors name the member (field), like the occupancy request's.
 */
#ifndef GPUPROBE_MODEL_PREDICT_H
#define GPUPROBE_MODEL_PREDICT_H

#include <jansson.h>
#include <stddef.h>

#include "model/mwp_cwp.h"
#include "model/occupancy.h"

/* Predicts kernel (the object above) on a device of rules r with hardware hw.
 * *out: {"kernel":{..as used, with "description" when derived..},
 * "occupancy":{..},"parameters":{..},"prediction":{..every intermediate..,
 * "case","bound","kernel_s","total_s"}}. -1 with err and field (the member
 * at fault, "" for none) when the kernel is malformed or cannot run. */
int model_predict_json(const json_t *kernel, const struct occ_rules *r,
                       const struct mwp_hw *hw, json_t **out, char *err, size_t errlen,
                       char *field, size_t fieldlen);

/* The per-warp counts of a kernel description object ({"per_warp": {..},
 * "uncoal_per_access", "coal_bytes"}) into k; -1 with err and field. */
int model_counts_from_json(const json_t *desc, int warp_size, struct mwp_kernel *k, char *err,
                           size_t errlen, char *field, size_t fieldlen);

#endif
