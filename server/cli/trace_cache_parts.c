/*
 * The partition search's document as the cache model's partitions
 * (trace_cache_parts.h).
 *
 * DESIGN
 * Only a search that found two partitions is taken: its "sm_partition"
 * (by %smid: 0 or 1, null for an SM it could not reach; at least one SM
 * measured in each partition) and its home function's bits below the page
 * ("home.mask_bits"). Anything else is refused with the search's own
 * reason, or with what is wrong in the map, so the model never runs on a
 * guess.
 */
#include "server/cli/trace_cache_parts.h"

#include <stdio.h>
#include <string.h>

int cache_parts_from_json(const json_t *doc, struct cache_parts *p, char *msg, size_t msglen)
{
    const json_t *lp = json_object_get(doc, "l2_partitions");
    const char *v;
    if (!lp)
        lp = doc;
    memset(p, 0, sizeof *p);
    if (json_object_get(lp, "error")) {
        snprintf(msg, msglen, "the partition search failed: %s",
                 json_string_value(json_object_get(lp, "error")));
        return -1;
    }
    if (!(v = json_string_value(json_object_get(lp, "verdict")))) {
        snprintf(msg, msglen, "no partition search (l2_partitions with a verdict) in the document");
        return -1;
    }
    if (strcmp(v, "two partitions") != 0) {
        const char *why = json_string_value(json_object_get(lp, "reason"));
        snprintf(msg, msglen, "the partition search found %s%s%s", v, why ? ": " : "", why ? why : "");
        return -1;
    }
    const json_t *sm = json_object_get(lp, "sm_partition");
    const json_t *bits = json_object_get(json_object_get(lp, "home"), "mask_bits");
    if (!json_is_array(sm) || json_array_size(sm) == 0 || json_array_size(sm) > CACHE_PART_MAX_SMS ||
        !json_is_array(bits)) {
        snprintf(msg, msglen, "the partition search gave no SM map or no home function");
        return -1;
    }
    p->count = 2;
    p->sms = (uint32_t)json_array_size(sm);
    uint32_t in[2] = {0, 0};
    for (uint32_t s = 0; s < p->sms; s++) {
        const json_t *k = json_array_get(sm, s);
        if (json_is_null(k)) {
            p->sm_part[s] = -1;
            continue;
        }
        if (!json_is_integer(k) || json_integer_value(k) < 0 || json_integer_value(k) > 1) {
            snprintf(msg, msglen, "sm_partition[%u] is not 0, 1 or null (an SM the search did not reach)", s);
            return -1;
        }
        p->sm_part[s] = (signed char)json_integer_value(k);
        in[p->sm_part[s]]++;
    }
    if (!in[0] || !in[1]) {
        snprintf(msg, msglen, "the SM map puts no measured SM in partition %d: not two partitions", in[0] ? 1 : 0);
        return -1;
    }
    for (size_t i = 0; i < json_array_size(bits); i++) {
        json_int_t b = json_integer_value(json_array_get(bits, i));
        if (b < 0 || b >= CACHE_PART_PAGE_BITS) {
            snprintf(msg, msglen, "home bit %lld is not below the page", (long long)b);
            return -1;
        }
        p->home_mask |= (uint64_t)1 << b;
    }
    return 0;
}
