/*
 * The cache side of a model-validation kernel's description, added by the
 * worker after the run: each kernel's L1 and L2 hit rates from the cache
 * model over a captured sample of it (server/jobs/kernel_hits.h), so the
 * saver predicts with caches (docs/model.md).
 *
 * DESIGN
 * The capture binds each pointer parameter to a buffer of the size the run
 * gave it (probes/validation_data.h), filled with what moves the kernel's
 * addresses as the run's contents do (gather's indices a permutation);
 * integer parameters as the run passed them. Occupancy from the device's
 * rules and the kernel's resources as the run read them; a block's records
 * estimated from the description's global accesses a warp (the SASS's when
 * the worker read them). A kernel whose sample fails keeps its description
 * with "cache": {"error": why}; the saver then predicts it without caches.
 * Blocks are placed on SMs in the order the device deals them, measured
 * once before the samples (probes/placement.h: "block_placement" in the
 * document, without the order); round-robin when it was not determined,
 * and each sample says which ("placement").
 */
#ifndef GPUPROBE_SERVER_JOBS_KIND_MODEL_HITS_H
#define GPUPROBE_SERVER_JOBS_KIND_MODEL_HITS_H

#include <jansson.h>

/* Adds "cache" to the description of every kernel of the validation
 * document doc, run on device (index or UUID). */
void model_hits_attach(json_t *doc, const char *device);

#endif
