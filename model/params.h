/*
 * The model's hardware parameters from what the probes measured (the
 * store's "model inputs", db/model_store.h), each with the job that measured it.
 *
 * DESIGN
 * One table maps every parameter to its measurement:
 *   mem_latency    memory probe, device_memory_cycles.cg median (a chase over
 *                  the L2's size after it was evicted: device memory)
 *   delay_coal     memory probe, departure.coalesced_cycles median (cycles
 *                  between consecutive warp loads of one 128-byte line each)
 *   delay_uncoal   memory probe, departure.uncoalesced_cycles median / 32 (the
 *                  probe's uncoalesced load touches 32 lines, one a thread:
 *                  the model wants the delay per transaction)
 *   issue[class]   latency probe throughput (results/clk/SM) of the class's
 *                  catalog entry: issue cycles = warp_size / throughput
 *                  (fp32: ffma, fp64: dfma, int: iadd, sfu: rcp, conv: f2i,
 *                  shared and global: lds, the load/store unit's rate)
 *   clock_mhz      the latency run's SM clock after it (else before; else the
 *                  memory run's)
 *   bandwidth      model-validation run, dram_bandwidth (read-only kernel);
 *                  without one, derived from the device's attributes:
 *                  2 x memory clock x bus width / 8 (double data rate), and
 *                  said to be derived
 *   link_bandwidth model-validation run, link_bandwidth (cuMemcpyHtoD); none:
 *                  unknown (then a prediction with host transfers is refused)
 *   l2_bandwidth   model-validation run, l2_bandwidth (read-only kernel over
 *                  a quarter of the L2); none (a run from before it was
 *                  measured, or none at all): 0 = unknown, said so in its
 *                  source, and no error: the model does not need it yet
 *   sm_count, warp_size  the device's attributes
 * A parameter that has no measurement is an error that names the probe to
 * run, never a default (the link and L2 bandwidths excepted: 0, unknown).
 */
#ifndef GPUPROBE_MODEL_PARAMS_H
#define GPUPROBE_MODEL_PARAMS_H

#include <jansson.h>
#include <stddef.h>

#include "model/mwp_cwp.h"

/* Fills hw from the inputs of device uuid (the store's JSON). 0, or -1 with
 * a reason that names the probe to run (*missing = 1) or says what is wrong
 * with the inputs (*missing = 0). */
int model_hw_from_inputs(const json_t *inputs, const char *uuid, struct mwp_hw *hw,
                         int *missing, char *err, size_t errlen);

/* {"name":{"value","unit","job_id"|null,"source"}, ...} for every parameter. */
json_t *model_hw_json(const struct mwp_hw *hw);

/* The compute capability of the inputs' device (0, or -1 when unknown). */
int model_inputs_cc(const json_t *inputs, int *major, int *minor);

#endif
