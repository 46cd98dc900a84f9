/*
 * Hit rates for the validation kernels (see kind_model_hits.h).
 */
#include "server/jobs/kind_model_hits.h"

#include <stdio.h>
#include <string.h>

#include "model/occupancy.h"
#include "model/ptx_desc.h"
#include "probes/gpu/devices.h"
#include "probes/validation.h"
#include "probes/validation_data.h"
#include "server/jobs/kernel_hits.h"
#include "trace/deal.h"

#define ARG_LEN 96

static int kernel_id(const char *name)
{
    for (int i = 0; i < VK_COUNT; i++)
        if (name && strcmp(val_kernels[i].name, name) == 0)
            return i;
    return -1;
}

/* The device's SM count and L2 size; -1 when it is not attached. */
static int device_sizes(const char *device, int *sms, uint64_t *l2)
{
    struct gpu_inventory inv;
    int found = -1;
    if (gpu_discover(&inv) < 0)
        return -1;
    for (size_t i = 0; i < inv.count; i++) {
        char idx[16];
        snprintf(idx, sizeof idx, "%d", inv.devices[i].index);
        if (strcmp(inv.devices[i].uuid, device) == 0 || strcmp(idx, device) == 0) {
            *sms = inv.devices[i].sm_count;
            *l2 = (uint64_t)inv.devices[i].l2_bytes;
            found = 0;
        }
    }
    gpu_inventory_free(&inv);
    return found;
}

static int blocks_per_sm(const json_t *doc, const json_t *k, unsigned threads)
{
    int major = 0, minor = 0;
    struct occ_input in;
    struct occ_result res;
    char err[256];
    const char *cc = json_string_value(json_object_get(json_object_get(doc, "device"),
                                                       "compute_capability"));
    const struct occ_rules *r = cc && sscanf(cc, "%d.%d", &major, &minor) == 2
                                    ? occ_rules_for(major, minor)
                                    : NULL;
    if (!r)
        return 0;
    occ_input_init(&in, (int)threads, (int)json_integer_value(json_object_get(k, "regs")));
    in.static_smem = (int)json_integer_value(json_object_get(k, "static_smem"));
    in.dynamic_smem = (int)json_integer_value(json_object_get(k, "smem"));
    return occ_compute(r, &in, &res, err, sizeof err) == 0 ? res.blocks_per_sm : 0;
}

/* The counts a warp: the SASS's description when there is one. */
static const json_t *per_warp(const json_t *desc)
{
    const json_t *sc = json_object_get(desc, "sass_counts");
    return json_object_get(json_is_object(sc) ? sc : desc, "per_warp");
}

static json_t *one_kernel(const json_t *doc, const json_t *k, const char *device, int sms,
                          uint64_t l2, const struct trace_deal *deal, char *err, size_t errlen)
{
    int id = kernel_id(json_string_value(json_object_get(k, "name")));
    char text[VAL_MAX_PARAMS + 3][ARG_LEN];
    const char *args[VAL_MAX_PARAMS + 3];
    size_t n = 0;
    const json_t *v;
    const char *key;
    if (id < 0) {
        snprintf(err, errlen, "not a validation kernel");
        return NULL;
    }
    for (int p = 0; p < val_kernels[id].pointers; p++, n++) {
        enum val_buffer b = val_bindings[id][p];
        snprintf(text[n], ARG_LEN, "%d=buf:%llu:%s", p, (unsigned long long)val_buffer_bytes(b),
                 val_buffer_fill(b));
        args[n] = text[n];
    }
    json_object_foreach((json_t *)json_object_get(k, "params"), key, v) {
        if (n < sizeof args / sizeof args[0]) {
            snprintf(text[n], ARG_LEN, "%s=%lld", key, (long long)json_integer_value(v));
            args[n] = text[n];
            n++;
        }
    }
    struct kernel_hits_req r = {.ptx = json_string_value(json_object_get(k, "ptx")),
                                .entry = json_string_value(json_object_get(k, "entry")),
                                .args = args, .nargs = n, .device = device, .sm_count = sms,
                                .l2_bytes = l2, .deal = deal};
    struct pd_launch l;
    pd_launch_from_json(k, &l);
    memcpy(r.grid, l.grid, sizeof r.grid);
    memcpy(r.block, l.block, sizeof r.block);
    unsigned threads = r.block[0] * r.block[1] * r.block[2];
    r.blocks_per_sm = blocks_per_sm(doc, k, threads);
    r.records_per_block =
        kernel_hits_block_records(per_warp(json_object_get(k, "description")), threads, 32);
    return kernel_hits(&r, err, errlen);
}

void model_hits_attach(json_t *doc, const char *device)
{
    int sms = 0;
    uint64_t l2 = 0;
    size_t i;
    json_t *k;
    int known = device_sizes(device, &sms, &l2) == 0;
    struct trace_deal deal = {0};
    json_t *placement = NULL;
    int dealt = known && kernel_hits_deal(device, &deal, &placement) == 0;
    if (placement)
        json_object_set_new(doc, "block_placement", placement);
    json_array_foreach(json_object_get(doc, "kernels"), i, k) {
        json_t *desc = json_object_get(k, "description"), *hits = NULL;
        char err[512] = "the device is not attached";
        if (!json_is_object(desc) || json_object_get(desc, "error"))
            continue;
        if (known)
            hits = one_kernel(doc, k, device, sms, l2, dealt ? &deal : NULL, err, sizeof err);
        json_object_set_new(desc, "cache", hits ? hits : json_pack("{s:s}", "error", err));
    }
    trace_deal_free(&deal);
}
