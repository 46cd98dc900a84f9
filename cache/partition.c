/*
 * The geometry of one L2 partition (partition.h); the rest of the
 * partitions' rules are inline in the header.
 */
#include "cache/partition.h"

int cache_part_geom(const struct cache_geom *l2, struct cache_geom *half, char *msg, size_t msglen)
{
    *half = *l2;
    half->size /= 2;
    half->assoc = l2->assoc == l2->lines ? 0 : l2->assoc; /* 0: fully associative again */
    return cache_geom_check(half, msg, msglen);
}
