/*
 * The "fleet-figures" job kind: a node's probe result sent to a central as
 * its fleet figures alone (fleet/metrics.h, upstream_content = figures).
 * Nothing runs it: its jobs only arrive, succeeded, by import. Its result
 * keeps no rows of its own; the store's result hook takes its figures, so
 * the central compares the GPU like any other. Registered in registry.c.
 */
#ifndef GPUPROBE_SERVER_JOBS_KIND_FLEET_H
#define GPUPROBE_SERVER_JOBS_KIND_FLEET_H

#include "server/jobs/registry.h"

extern const struct job_kind kind_fleet_figures;

#endif
