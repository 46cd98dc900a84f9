/*
 * The kernel-time model's job kind: "model-validation" (needs a GPU). The
 * worker times the validation kernels and derives their descriptions; the
 * saver predicts them from the device's stored parameters and stores both.
 * Registered in registry.c's builtin list.
 */
#ifndef GPUPROBE_SERVER_JOBS_KIND_MODEL_H
#define GPUPROBE_SERVER_JOBS_KIND_MODEL_H

#include "server/jobs/registry.h"

extern const struct job_kind kind_model_validation;

#endif
