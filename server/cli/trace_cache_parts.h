/*
 * `trace cache --l2-partitions`: the memory probe's partition search
 * (probes/l2_parts.h, "l2_partitions") as the cache model's L2 partitions
 * (cache/partition.h).
 */
#ifndef GPUPROBE_SERVER_CLI_TRACE_CACHE_PARTS_H
#define GPUPROBE_SERVER_CLI_TRACE_CACHE_PARTS_H

#include <jansson.h>
#include <stddef.h>

#include "cache/partition.h"

/* doc: a memory probe document (its "l2_partitions") or that member. 0 with
 * p filled, or -1 with the reason in msg: no member, a verdict other than
 * "two partitions", no SM map or no home function. */
int cache_parts_from_json(const json_t *doc, struct cache_parts *p, char *msg, size_t msglen);

#endif
