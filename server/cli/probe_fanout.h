/*
 * `gpuprobe probe ... --device all`: one worker process per GPU, all at once.
 *
 * DESIGN
 * Each GPU is measured by its own `gpuprobe worker` child (fork+exec through
 * server/jobs/spawn.h, the call and the answer in the worker protocol of
 * server/jobs/protocol.h), so every GPU gets its own process and CUDA
 * context, as the daemon's scheduler gives each of its jobs: probes on
 * neighbouring GPUs run concurrently, and a crash or a GPU fault on one
 * ends only that GPU's child. The parent only waits: it polls every child's
 * pipes and exit, and hands back one outcome per device in the order of the
 * list, whatever order they finished in, so printing and storing (which
 * stay in the parent, one writer) are in device order and serialized.
 * Not done: a deadline (the in-process `probe` has none either) and the
 * children's progress on stderr, of which only the tail is kept for a
 * failure's reason.
 */
#ifndef GPUPROBE_SERVER_CLI_PROBE_FANOUT_H
#define GPUPROBE_SERVER_CLI_PROBE_FANOUT_H

#include <jansson.h>
#include <stddef.h>

#include "server/jobs/registry.h"

/* What one device's child answered. */
struct probe_outcome {
    json_t *result;         /* the kind's result (owned), or NULL when it failed */
    char error[1024];       /* without a result: why ("" never) */
};

/* Runs kind k with the validated params on each of devices[0..n) (UUIDs or
 * indexes) in its own worker child, concurrently, with compiled modules kept
 * in cubin_dir (NULL: not kept), and fills out[0..n) in the order of
 * devices. Returns 0 when every child was started and waited for (each
 * outcome then says how its device fared), -1 when memory ran out before
 * any started (out[] then holds the reason). Free with probe_outcomes_free. */
int probe_fanout(const struct job_kind *k, const json_t *params, const char *cubin_dir,
                 char *const *devices, size_t n, struct probe_outcome *out);
void probe_outcomes_free(struct probe_outcome *out, size_t n);

#endif
