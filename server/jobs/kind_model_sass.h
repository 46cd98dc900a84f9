/*
 * The SASS side of a model-validation kernel's description, added by the
 * worker: the control flow of the cubin the driver's JIT produced for it
 * (probes/gpu/sass_cfg.h) and the per-warp counts the model derives from
 * it with the PTX's trip counts (model/sass_counts.h).
 *
 * DESIGN
 * gpu_module_build keeps each module's cubin as NAME.cubin under
 * GPUPROBE_CUBIN_DIR (the worker's --cubin-dir; the validation run names
 * its modules validation_KERNEL), so the worker reads it back from there
 * after the run and needs nothing from probes/validation*.c. Without that
 * folder, or when a step fails, the description says why under
 * "sass_error" and keeps its PTX counts; nothing else changes. The
 * saver predicts from "sass_counts" when it is there (docs/model.md).
 * model_sass_describe_ptx does the same for any kernel on an attached GPU:
 * it has the driver's JIT build the module and reads the cubin it made.
 */
#ifndef GPUPROBE_SERVER_JOBS_KIND_MODEL_SASS_H
#define GPUPROBE_SERVER_JOBS_KIND_MODEL_SASS_H

#include <jansson.h>

#include "model/ptx_desc.h"

/* Adds "sass" (the control-flow object) and "sass_counts" (sc_describe's
 * description), or "sass_error", to description, for kernel k of the
 * validation document ({"name","entry","ptx",...}) launched as l. */
void model_sass_attach(json_t *description, const json_t *k, const struct pd_launch *l);

/* sc_describe's description of kernel entry of ptx launched as l, from the
 * cubin the driver's JIT makes of it on device (an index or UUID); NULL with
 * the reason in err. */
json_t *model_sass_describe_ptx(const char *device, const char *ptx, const char *entry,
                                const struct pd_launch *l, char *err, size_t errlen);

#endif
